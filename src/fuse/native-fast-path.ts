/**
 * The native fast path of a forward mount (native/fastpath, through
 * fast-path-addon.ts; the binding calls it through setFastPath). Each hook
 * answers the plain case of one request on the libfuse thread that
 * received it, with no trip to the JS thread, and in parallel when the
 * kernel has several requests in flight; anything out of the ordinary goes
 * to JS as before, which answers and logs it. What each part does, and its
 * twin in src/vault:
 *
 * - reads (native/fastpath/read.c; twin readContentInto): pread of the
 *   cipher blocks of a handle registered here and their decryption. A
 *   block that does not open, a hole, a write to the same file under way
 *   go to JS.
 * - attributes (read.c; twins chmod, chown, utimens in node-attrs.ts): a
 *   chmod, chown or utimens of a file a handle has open goes to the
 *   handle's cipher file descriptor, and the attributes after it go back as
 *   the binding's carried ones. Off with -force_owner (JS shows another
 *   owner than the cipher file's) and on read-only mounts.
 * - writes (write.c; twin writeContent): header of an empty file,
 *   read-modify-write of partly covered blocks, sealing, preallocation and
 *   one pwrite, a write past the end padding the last block and leaving
 *   holes; a block that does not open, a failed preallocation and (with
 *   -noprealloc) a write that grows the file go to JS. JS and the fast path share each file's owner word
 *   (src/vault/write-fences.ts), so they never change one file at once.
 *   Off on read-only mounts.
 * - unlinks (remove.c; twin unlink in node-links.ts): the binding's
 *   attribute cache keeps each listed entry's cipher path, and an UNLINK of
 *   a name it knows so is an unlinkat(2) after a walk from the cipher
 *   directory (plus the long name's .name file). Off on read-only mounts.
 * - rmdirs (remove.c; twin rmdirEntry in node-dir-ops.ts) of listed
 *   directories that hold nothing but their IV, with unlinks: the vault
 *   keeps descriptors of the directories it walked, so it must forget a
 *   removed one before it makes anything at that path again:
 *   `syncRemovedDirs`, which the mount calls before every request it answers.
 * - lookups (lookup.c; twin statWords in node-attrs.ts) where the names
 *   allow, and opens (open.c; twin open in node-open-create.ts; for writing
 *   only with writes) with them: the libfuse thread opens the cipher file and registers the
 *   handle, numbered from NATIVE_FH_BASE up, and closes it at its release;
 *   JS adopts such a handle (`adopt`) only when a request for it reaches JS
 *   after all. Each file's fence slot then comes from the fast path, by
 *   device and inode, so that JS's handles of the file and the native ones
 *   share it.
 * - creates (open.c; twin open with O_CREAT in node-open-create.ts) with
 *   opens and writes: a new file with a short name, made as the daemon's
 *   own user, is made and opened on the libfuse thread, its handle a native
 *   one as above. A root mount's create for another user (its credentials),
 *   a long name and a name that exists go to JS.
 * - fsyncs (open.c; twins sync and datasync in vault-file.ts): fsync(2)
 *   or fdatasync(2) of any registered handle's descriptor, so that an
 *   fsync neither waits for the JS thread nor makes JS adopt a native
 *   handle (after which its fstats and release would reach JS too).
 * - lists (list.c; twin readdirPacked in node-dir-ops.ts) with lookups: a
 *   READDIR of a directory whose every name decrypts is read, decrypted
 *   and stat'ed on the libfuse thread and handed to the binding as JS's
 *   packed listing would be (attribute cache, kept listings); any other
 *   goes to JS, which shows sync conflict copies and -badname names and
 *   logs hidden ones. Off with -force_owner (JS shows another owner).
 * - renames (rename.c; twin rename in node-links.ts) with lookups: a
 *   RENAME without flags of anything but a directory, both names short,
 *   found by the same walk; a directory (whose cached descendants the vault
 *   and the walk must forget), a long name and any error go to JS. Off on
 *   read-only mounts.
 * - Lookups, opens, creates and renames naming a path JS holds (`hold`:
 *   libfuse hid an open file from it) go to JS.
 * - The same walk tells the binding whether a listing the kernel keeps
 *   still holds (the hook's dir_stat; mount.ts, keptListings), and the
 *   cipher root answers statfs.
 *
 * Available for AES-256-GCM and XChaCha20-Poly1305 on the OpenSSL backend
 * when the addon is built, and for AEGIS-256X2 when the AEGIS addon is in
 * use too (its functions are handed over; the TypeScript AEGIS goes through
 * JS). -sharedstorage mounts do not use it (see mount.ts). Which parts the
 * environment leaves on is nativeFastPathSwitches below.
 */
import type { Vault, VaultFile } from '../vault/index.js';
import { fileDescriptor, internalAccess, type FileKey } from '../vault/index.js';
import { FAST_AEGIS, FAST_GCM, FAST_XCHACHA, HANDLE_READABLE, HANDLE_WRITABLE, NATIVE_FH_BASE, fastPathBinding } from './fast-path-addon.js';
import { aegisNativeBinding } from '../crypto/aegis/native.js';
import { AEGIS_VARIANTS } from '../crypto/aegis/variants.js';
import { envSwitch } from '../util/switches.js';

/** Files open at once whose reads can go the native way (more just stay in JS). */
const SLOTS = 65536;

const CIPHER = { 'aes-gcm': FAST_GCM, xchacha: FAST_XCHACHA, aegis: FAST_AEGIS } as const;

export interface NativeFastPath {
  /** What the binding's setFastPath takes. */
  readonly hook: object;
  /** After a handle is opened: its reads may be answered natively. */
  open(fh: number, file: VaultFile): void;
  /** Before the handle's descriptor is closed. */
  close(fh: number): void;
  /** Whether `fh` is a handle the native path opened (JS may not know it yet). */
  isNative(fh: number): boolean;
  /** A duplicate of native handle `fh`'s descriptor for JS, which gets its release from now on (-1 when there is no such handle), and the access mode it was opened with. */
  adopt(fh: number): { fd: number; access: number };
  /** How many native handles JS has not adopted are open. */
  openCount(): number;
  /** The native handles JS has not adopted that are open on this file. */
  opensOn(dev: number | bigint, ino: bigint): number[];
  /**
   * Whether the lookups, opens, creates and renames naming `path` go to JS
   * (on) or may be answered natively again: JS holds a path libfuse hid an
   * open file from until it sees what comes next there, the second half of
   * libfuse's rename over that file or a lookup (src/fuse/hidden-files.ts).
   */
  hold(path: string, on: boolean): void;
  /** Makes the vault forget the directories the libfuse threads removed since the last call (see above). */
  syncRemovedDirs(): void;
  /** Reads answered natively, reads it passed on to JS, attribute changes answered natively, writes, unlinks and lookups answered natively and passed on. */
  stats(): {
    served: number;
    passed: number;
    attrs: number;
    written: number;
    writesPassed: number;
    unlinked: number;
    unlinksPassed: number;
    lookedUp: number;
    lookupsPassed: number;
    opened: number;
    opensPassed: number;
    created: number;
    createsPassed: number;
    rmdired: number;
    rmdirsPassed: number;
    /** getxattr and listxattr of entries without extended attributes, answered natively. */
    xattrsNone: number;
    xattrsNonePassed: number;
    /** FGETATTRs of handles it opened, answered natively (an fstat of the handle's descriptor). */
    fstated: number;
    fstatsPassed: number;
    /** FSYNCs of registered handles answered natively (an fsync of the handle's descriptor). */
    synced: number;
    syncsPassed: number;
    /** READDIRs answered natively (the whole listing read and decrypted there). */
    listed: number;
    listsPassed: number;
    /** RENAMEs answered natively (a renameat of a file). */
    renamed: number;
    renamesPassed: number;
  };
}

export interface NativeFastPathOptions {
  /** Answer chmod, chown and utimens of open files natively too (unless TSCRYPTFS_NATIVE_ATTRS=0). */
  attrs: boolean;
  /** Answer writes natively too (unless TSCRYPTFS_NATIVE_WRITE=0). */
  writes: boolean;
  /** Answer unlinks of listed names natively too (unless TSCRYPTFS_NATIVE_UNLINK=0). */
  unlinks: boolean;
  /** Answer lookups natively too (unless TSCRYPTFS_NATIVE_LOOKUP=0), where the vault's names allow (InternalAccess.nameKey). */
  lookups: boolean;
  /** And opens (unless TSCRYPTFS_NATIVE_OPEN=0), where lookups are native; for writing where writes are too. */
  opens: boolean;
  /** And creates (unless TSCRYPTFS_NATIVE_CREATE=0), where opens and writes are native. */
  creates: boolean;
  /** And listings (unless TSCRYPTFS_NATIVE_LIST=0), where lookups are native. */
  lists: boolean;
  /** And renames of files (unless TSCRYPTFS_NATIVE_RENAME=0), where lookups are native. */
  renames: boolean;
}

const halves = (ino: bigint): [number, number] => [Number(ino & 0xffffffffn), Number(ino >> 32n)];
/** A device number as the binding keeps it (its low 32 bits, as C's (uint32_t)st_dev). */
const dev32 = (dev: number | bigint): number => Number(BigInt(dev) & 0xffffffffn);

/** Which parts of the native fast path the environment leaves on: the registry's NATIVE_* switches with what each one needs. */
export function nativeFastPathSwitches(env: NodeJS.ProcessEnv = process.env): Record<'reads' | keyof NativeFastPathOptions | 'rmdirs' | 'fsyncs', boolean> {
  const reads = envSwitch('TSCRYPTFS_NATIVE_BATCH', env) && envSwitch('TSCRYPTFS_NATIVE_READ', env);
  const lookups = reads && envSwitch('TSCRYPTFS_NATIVE_LOOKUP', env);
  const unlinks = reads && envSwitch('TSCRYPTFS_NATIVE_UNLINK', env);
  const writes = reads && envSwitch('TSCRYPTFS_NATIVE_WRITE', env);
  const opens = lookups && envSwitch('TSCRYPTFS_NATIVE_OPEN', env);
  return {
    reads,
    attrs: reads && envSwitch('TSCRYPTFS_NATIVE_ATTRS', env),
    writes,
    unlinks,
    rmdirs: unlinks && envSwitch('TSCRYPTFS_NATIVE_RMDIR', env),
    lookups,
    opens,
    creates: opens && writes && envSwitch('TSCRYPTFS_NATIVE_CREATE', env),
    fsyncs: reads && envSwitch('TSCRYPTFS_NATIVE_FSYNC', env),
    lists: lookups && envSwitch('TSCRYPTFS_NATIVE_LIST', env),
    renames: lookups && envSwitch('TSCRYPTFS_NATIVE_RENAME', env),
  };
}

/** A native fast path for `vault`'s files, or null when it cannot be had (cipher, backend, addon, environment). */
export function createNativeFastPath(vault: Vault, o: NativeFastPathOptions, env: NodeJS.ProcessEnv = process.env): NativeFastPath | null {
  const on = nativeFastPathSwitches(env);
  if (!on.reads) return null;
  const binding = fastPathBinding();
  if (!binding) return null;
  const access = internalAccess(vault);
  const spec = access.contentKey();
  if (!spec) return null;
  let created: [object, ArrayBuffer];
  try {
    let aegis: object | undefined;
    if (spec.cipher === 'aegis') {
      const native = aegisNativeBinding(); // null when not built, no AES-NI, or TSCRYPTFS_AEGIS refuses it
      if (!native) return null;
      aegis = native.decryptHandle(AEGIS_VARIANTS.aegis256x2.nativeId);
    }
    created = binding.create(CIPHER[spec.cipher], spec.key, SLOTS, aegis); // the fast path keeps its own copy
  } finally {
    spec.key.fill(0);
  }
  const [fastPath, fences] = created;
  const names = o.lookups && on.lookups ? access.nameKey() : null;
  const opens = names !== null && o.opens && on.opens;
  const writes = o.writes && on.writes;
  const creates = opens && writes && o.creates && on.creates;
  const lists = names !== null && o.lists && on.lists;
  const renames = names !== null && o.renames && on.renames;
  const unlinks = o.unlinks && on.unlinks;
  const rmdirs = unlinks && on.rmdirs;
  try {
    // With native opens the fast path hands out the slots, by file (see above).
    const slots = opens
      ? {
          claim: ({ dev, ino }: FileKey) => binding.claimSlot(fastPath, dev32(dev), ...halves(BigInt(ino))),
          release: ({ dev, ino }: FileKey) => binding.releaseSlot(fastPath, dev32(dev), ...halves(BigInt(ino))),
        }
      : undefined;
    access.useWriteFences(fences, slots);
    if (o.attrs && on.attrs) binding.answerAttrs(fastPath, 1);
    if (writes) binding.answerWrites(fastPath, 1, vault.preallocates ? 1 : 0);
    // The binding checks kept listings through the fast path's walks (Documentation/fuse-native.md), so it gets the root on read-only mounts too.
    binding.useCipherRoot(fastPath, access.rootFd(), unlinks);
    if (rmdirs) binding.answerRmdirs(fastPath, true, vault.format.dirIV);
    if (on.fsyncs) binding.answerFsyncs(fastPath, true);
    if (names) {
      binding.useNames(fastPath, names.key, names.longNameMax, names.raw64);
      if (opens) binding.answerOpens(fastPath, true);
      if (creates) binding.answerCreates(fastPath, true);
      if (lists) binding.answerLists(fastPath, true);
      if (renames) binding.answerRenames(fastPath, true);
    }
  } finally {
    names?.key.fill(0);
  }
  return {
    hook: fastPath,
    open(fh, file) {
      // A file opened before these fences were attached (or under another
      // mount's) has no slot here: its reads stay in JS.
      const slot = file.fenceIn(fences);
      if (slot >= 0) binding.handleOpened(fastPath, fh, fileDescriptor(file), slot, (file.readable ? HANDLE_READABLE : 0) | (writes && file.writable ? HANDLE_WRITABLE : 0));
    },
    close(fh) {
      binding.handleClosing(fastPath, fh); // nothing to do for a handle it never saw
    },
    isNative(fh) {
      return opens && fh >= NATIVE_FH_BASE;
    },
    adopt(fh) {
      const [fd, access] = binding.adopt(fastPath, fh);
      return { fd, access };
    },
    openCount() {
      return opens ? binding.nativeHandles(fastPath) : 0;
    },
    opensOn(dev, ino) {
      return opens ? binding.opensOn(fastPath, dev32(dev), ...halves(ino)) : [];
    },
    hold(path, on) {
      binding.holdPath(fastPath, path, on);
    },
    syncRemovedDirs() {
      if (!rmdirs) return; // nothing to take: no call into the addon for every request
      const removed = binding.takeRemovedDirs(fastPath);
      if (removed === false) access.forgetCipherDirs();
      else if (removed !== undefined) for (const c of removed) access.forgetCipherDirs(c);
    },
    stats() {
      const [served, passed, attrs, written, writesPassed, unlinked, unlinksPassed, lookedUp, lookupsPassed, opened, opensPassed, rmdired, rmdirsPassed, xattrsNone, xattrsNonePassed, created, createsPassed, fstated, fstatsPassed, synced, syncsPassed, listed, listsPassed, renamed, renamesPassed] = binding.stats(fastPath);
      return { served, passed, attrs, written, writesPassed, unlinked, unlinksPassed, lookedUp, lookupsPassed, opened, opensPassed, created, createsPassed, rmdired, rmdirsPassed, xattrsNone, xattrsNonePassed, fstated, fstatsPassed, synced, syncsPassed, listed, listsPassed, renamed, renamesPassed };
    },
  };
}
