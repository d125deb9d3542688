/**
 * Mounting a Vault with fuse-native: the mount options gocryptfs uses,
 * and an unmount that always leaves nothing behind.
 */
import { directoryTimesFollowChanges, internalAccess, storeLabel, type Vault } from '../vault/index.js';
import type { ReverseView } from '../reverse/index.js';
import type { Logger } from '../util/logger.js';
import { DIRECT_IO } from '../util/fs-ops.js';
import { batchBinding } from '../crypto/native-batch.js';
import { loadFuse, type FuseInstance } from './fuse-native.js';
import { makeOperations, type FuseOperations } from './operations.js';
import { createNativeFastPath } from './native-fast-path.js';
import { envSwitch, SWITCHES, switchValue } from '../util/switches.js';

export interface MountOptions {
  readOnly?: boolean;
  allowOther?: boolean;
  /** Allow a non-empty mountpoint (libfuse2's `nonempty`). */
  nonempty?: boolean;
  kernelCache?: boolean;
  /** Shown as the source in /proc/mounts (default: the cipher directory). */
  fsname?: string;
  /** Extra raw kernel/libfuse options (-ko). */
  extraOptions?: string[];
  dev?: boolean;
  suid?: boolean;
  exec?: boolean;
  /** libfuse's own debug output (-fusedebug). */
  debug?: boolean;
  /**
   * Answer repeated getattrs from results under a second old, emptied by
   * every change this mount makes, and let the kernel keep the attributes
   * of directories and single-name files for 1 s (default true; off for
   * -sharedstorage: see Documentation/fuse-native.md).
   */
  attrCache?: boolean;
  /**
   * Let the kernel remember for 1 s that a name does not exist (libfuse's
   * negative_timeout=1; gocryptfs asks go-fuse for the same). Exact while
   * only this mount changes the cipher directory: every name it makes goes
   * through the kernel, which replaces the remembered absence. Default true;
   * off for -sharedstorage.
   */
  negativeTimeout?: boolean;
  /** -force_owner: every entry shows this owner (and the mount allows other users). */
  forceOwner?: { uid: number; gid: number };
  /** -serialize_reads: the kernel sends reads one at a time, in order (libfuse's sync_read). */
  serializeReads?: boolean;
  /**
   * -acl: the kernel enforces POSIX ACLs (the binding answers INIT
   * with FUSE_POSIX_ACL, as go-fuse does for gocryptfs); the ACL xattrs are
   * stored unencrypted, and the backing filesystem applies default ACLs to
   * new entries.
   */
  acl?: boolean;
  /** The type shown as fuse.<subtype> (default tscryptfs). */
  subtype?: string;
  /**
   * Answer reads on libfuse's threads where possible (./native-fast-path.ts;
   * default true). Off for -sharedstorage, where another mount may change a
   * file's header under us and every read should take the JS path.
   */
  nativeReads?: boolean;
  /**
   * Let the kernel keep a directory's listing while the cipher directory's
   * attributes are as they were (default true). Off where the store does not
   * change a directory's ctime for every change in it (FUSE and network
   * stores: see directoryTimesFollowChanges).
   */
  keptListings?: boolean;
  /** flock and POSIX locks taken on the cipher files, where another mount sees them (-sharedstorage; see OperationOptions). */
  backingLocks?: boolean;
}

export interface Mounted {
  readonly mountpoint: string;
  readonly operations: FuseOperations;
  /** Resolves when the filesystem is gone, however that happened. */
  readonly closed: Promise<void>;
  /** Unmounts (the kernel refuses while files are open: EBUSY). */
  unmount(): Promise<void>;
  /** Empties the binding's caches, as a fresh mount has them, and gives their memory back, and the Vault forgets its decrypted names and kept directories (for a quiet mount); the bytes the binding gave back. */
  dropCaches(): number;
}

/** libfuse2 writes in 4 KiB pieces unless asked for big writes. */
const MAX_WRITE = 131072;

/**
 * Which of the binding's mechanisms the environment leaves on for a mount
 * with (or without) a native fast path: kept listings are checked through
 * the fast path's walks, kept copies ride on kept listings, and the
 * assist hook comes from the batch addon. The tests ask the same function.
 */
export function bindingSwitches(hasFastPath: boolean, env: NodeJS.ProcessEnv = process.env): { keptListings: boolean; keptCopies: boolean; assist: boolean } {
  const keptListings = hasFastPath && envSwitch('TSCRYPTFS_KEPT_LISTINGS', env);
  return {
    keptListings,
    keptCopies: keptListings && envSwitch('TSCRYPTFS_KEPT_COPIES', env),
    assist: envSwitch('TSCRYPTFS_NATIVE_BATCH', env) && envSwitch('TSCRYPTFS_ASSIST', env),
  };
}

/**
 * How long, in microseconds, the two threads of a request stay awake waiting
 * for each other (the binding, Documentation/fuse-native.md): the libfuse
 * thread for its answer, the JS event loop for the next request. Waking a
 * sleeping thread costs more than most requests take in JS, so both poll
 * for a while before they sleep. The libfuse thread polls only when no
 * other request is waiting for JS (behind a queue its answer comes late,
 * and a polling thread takes the CPU the JS thread needs), for `answer` us,
 * long enough for the small requests of an untar, and the binding scales
 * it to 3 ns per byte for a 128 KiB write. Documentation/performance.md
 * ("Spinning instead of sleeping", "Spinning only when alone") has the
 * measurements behind these numbers.
 * Either polls only while the machine's other processes leave a core free
 * (`gate`; "Spinning only while a core is free"): with the cores taken, the
 * polling thread delays the very processes whose requests it waits for.
 * The loop also polls while requests the binding answers in C come
 * (`native`; "Spinning while C answers"): it keeps a vCPU awake for them.
 * TSCRYPTFS_SPIN=ANSWER,LOOP overrides the times ("0,0": off),
 * TSCRYPTFS_SPIN_GATE=0 polls whatever the load and TSCRYPTFS_SPIN_NATIVE=0
 * only after requests JS answers, for measurements.
 */
export function spinSettings(
  env: string | undefined = switchValue('TSCRYPTFS_SPIN'),
  gate = envSwitch('TSCRYPTFS_SPIN_GATE'),
  native = envSwitch('TSCRYPTFS_SPIN_NATIVE'),
): { answer: number; loop: number; gate: boolean; native: boolean } {
  const spin = SWITCHES.TSCRYPTFS_SPIN;
  const m = spin.accepts.exec(env ?? '') ?? spin.accepts.exec(spin.default)!;
  return { answer: Number(m[1]), loop: Number(m[2]), gate, native };
}

export function fuseOptionList(o: MountOptions): string[] {
  // attr_timeout=0: libfuse2's path API gives every hard-link name its own
  // kernel inode, so a cached size or link count could be stale under the
  // other names (reads there would stop at the old size). The binding
  // raises it to 1 s, reply by reply, for directories and files
  // with one name (option singleNameAttrTimeout).
  const list = [`subtype=${o.subtype ?? 'tscryptfs'}`, 'attr_timeout=0'];
  if (o.negativeTimeout ?? true) list.push('negative_timeout=1');
  if (o.readOnly) list.push('ro');
  if (o.allowOther) list.push('default_permissions'); // let the kernel check permissions for other users
  if (o.nonempty) list.push('nonempty');
  list.push(o.dev ? 'dev' : 'nodev', o.suid ? 'suid' : 'nosuid');
  if (o.exec === false) list.push('noexec');
  if (o.serializeReads) list.push('sync_read');
  list.push(...(o.extraOptions ?? []));
  return list;
}

export async function mountVault(vault: Vault, mountpoint: string, o: MountOptions, log: Logger): Promise<Mounted> {
  const reads = (o.nativeReads ?? true) ? createNativeFastPath(vault, { attrs: !o.forceOwner && !o.readOnly, writes: !o.readOnly, unlinks: !o.readOnly, lookups: !o.forceOwner, opens: !o.forceOwner, creates: !o.forceOwner && !o.readOnly, lists: !o.forceOwner, renames: !o.readOnly }) : null;
  const operations = makeOperations(vault, { suid: o.suid ?? false, reads, backingLocks: o.backingLocks ?? false, ...(o.forceOwner && { forceOwner: o.forceOwner }) }, log);
  let opts = o;
  if ((o.keptListings ?? true) && !directoryTimesFollowChanges(vault.store)) {
    log.info?.(`${storeLabel(vault.store)} may not change a directory's times for every change in it: listings are read from it each time`);
    opts = { ...o, keptListings: false };
  }
  const mounted = await mountOperations(operations, mountpoint, opts, vault.cipherdir, reads?.hook);
  const forget = internalAccess(vault);
  return { ...mounted, dropCaches: () => (forget.forgetCaches(), mounted.dropCaches()) };
}

/**
 * Mounts a reverse view (-reverse): always read-only, type
 * fuse.tscryptfs-reverse. Its operations load here, not with a forward mount's.
 */
export async function mountReverse(view: ReverseView, mountpoint: string, o: MountOptions, log: Logger): Promise<Mounted> {
  const { makeReverseOperations } = await import('./reverse-operations.js');
  const operations = makeReverseOperations(view, log, o.forceOwner);
  return mountOperations(operations, mountpoint, { subtype: 'tscryptfs-reverse', ...o, readOnly: true }, view.plaindir);
}

async function mountOperations(operations: FuseOperations, mountpoint: string, o: MountOptions, source: string, fastPath?: object): Promise<Mounted> {
  const Fuse = loadFuse();
  const on = bindingSwitches(fastPath !== undefined);
  const fuse: FuseInstance = new Fuse(mountpoint, operations.ops, {
    timeout: false,
    bigWrites: true,
    maxWrite: MAX_WRITE,
    useIno: true,
    // The kernel asks for security.capability before every write; without
    // -suid the answer is EOPNOTSUPP (gocryptfs's), given in C so that no
    // write costs a second trip to JS.
    rejectCapability: !(o.suid ?? false),
    attrCache: o.attrCache ?? true,
    // The kernel keeps attributes for 1 s (as gocryptfs) where that is
    // exact: directories and files with one name (see fuseOptionList), so
    // a stat after a lookup needs no second request.
    singleNameAttrTimeout: o.attrCache ?? true,
    // With direct system calls each request is answered in one go on the
    // JS thread, which lets unlink/rmdir forget only their own cache entries.
    attrCacheAtomicHandlers: DIRECT_IO,
    // A chmod, chown, utimens, truncate or creation leaves the attributes it
    // hands back in that cache: the kernel asks for them next (a GETATTR
    // before every chown, one per file of an untar). TSCRYPTFS_CARRIED_ATTRS=0
    // turns that off, for measurements.
    attrCacheCarried: envSwitch('TSCRYPTFS_CARRIED_ATTRS'),
    // A listing carries each name's entry (READDIRPLUS, which libfuse2 does
    // not speak; the wrapping channel does), with the attributes readdir put
    // in the cache: ls -l, rm -r and find then look up no name they just
    // listed. Only where entries may be kept (not with -sharedstorage) and
    // listings bring attributes (not -reverse); TSCRYPTFS_READDIRPLUS=0
    // turns it off, for measurements.
    readdirPlus: (o.attrCache ?? true) && operations.listsAttributes && envSwitch('TSCRYPTFS_READDIRPLUS'),
    // The kernel keeps a directory's listing and lists it again from memory
    // while the cipher directory is as it was when that listing was read
    // (checked at each opendir by the read hook's walk, for a second after
    // the listing; this mount's own changes drop it in the kernel). Not with
    // -sharedstorage; TSCRYPTFS_KEPT_LISTINGS=0 turns it off, for measurements.
    keptListings: (o.attrCache ?? true) && (o.keptListings ?? true) && on.keptListings,
    // The kernel lists again from memory only a listing it read to the end;
    // rm -r reads one getdents of a directory (is it empty?), then opens it
    // again and reads it all. The binding keeps a copy of each listing it
    // records for keeping and answers a new listing of that directory from
    // it, on the same checks. TSCRYPTFS_KEPT_COPIES=0 turns it off, for
    // measurements.
    keptListingCopies: on.keptCopies,
    // The kernel asks for security.capability before each write to learn
    // whether privileges must go, and for the attributes before each chown.
    // With FUSE_HANDLE_KILLPRIV_V2 it asks once per file and leaves the
    // dropping to us: a write or truncate by an unprivileged caller comes
    // flagged and drops set-id bits first (VaultFile.dropSetIdBits); a chown,
    // and the bare SETATTR the kernel sends before a write or fallocate when
    // the mode it keeps has set-id bits (the binding makes it chown(-1, -1)),
    // drop them in the cipher directory's own chown. TSCRYPTFS_KILLPRIV=0
    // turns it off, for measurements.
    killPriv: operations.dropsSetIdBits && envSwitch('TSCRYPTFS_KILLPRIV'),
    spin: spinSettings(),
    // RELEASE is answered by the binding at once and closed here later: the
    // kernel never waits for it, so neither need libfuse's thread (saves a
    // thread wake-up per closed file). TSCRYPTFS_RELEASE_LATER=0: it waits.
    releaseLater: envSwitch('TSCRYPTFS_RELEASE_LATER'),
    allowOther: o.allowOther ?? false,
    posixAcl: o.acl ?? false,
    kernelCache: o.kernelCache ?? false,
    fsname: o.fsname ?? source,
    debug: o.debug ?? false,
    options: fuseOptionList(o),
  });
  operations.useAttrCache({ gen: () => fuse.attrGen() });
  let resolveClosed!: () => void;
  // Until the binding reports the end of its loop, this process must not end:
  // between an unmount and that report nothing else need keep the event
  // loop alive (an in-process mount awaiting `closed` would see it empty).
  const alive = setInterval(() => undefined, 2 ** 31 - 1);
  const closed = new Promise<void>((r) => (resolveClosed = r));
  fuse.once('unmount', () => {
    clearInterval(alive);
    resolveClosed();
  });
  await new Promise<void>((resolve, reject) => {
    fuse.mount((err) => {
      if (!err) return resolve();
      clearInterval(alive);
      reject(Object.assign(new Error(`fuse mount failed: ${err.message}`), { code: 'EFUSEMOUNT' }));
    });
  });
  // Every create, mkdir, mknod and symlink carries the mode the caller's
  // umask already shaped (the kernel applies it): ours must not apply
  // another, as gocryptfs sets umask 0 once mounted.
  process.umask(0);
  // The fast path stays referenced (by `operations`) until the mount is gone, so the hook never dangles.
  if (fastPath) fuse.setFastPath(fastPath);
  // A libfuse thread waiting for the answer to a large WRITE seals some of
  // its blocks (native/crypto/shared_job.h); TSCRYPTFS_ASSIST=0 turns that off.
  const assist = on.assist ? batchBinding()?.assistHook() : undefined;
  if (assist) fuse.setAssistHook(assist);
  return {
    mountpoint,
    operations,
    closed,
    dropCaches: () => fuse.dropCaches(),
    unmount: () =>
      new Promise<void>((resolve, reject) => {
        if (fuse.exited) return resolve();
        fuse.unmount((err) => (err ? reject(Object.assign(new Error(`unmount failed: ${err.message}`), { code: 'EBUSY' })) : resolve()));
      }),
  };
}
