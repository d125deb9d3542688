/**
 * fuse-native callbacks → Vault calls. Each operation is a thin wrapper:
 * run the Vault method, answer with 0/value or a negative errno. Nothing
 * here knows about encryption.
 *
 * Not implemented on purpose, to save a trip to JS per call: flush (writes
 * reach the cipher file before write() returns, so close has nothing to
 * push; libfuse answers ENOSYS once and the kernel stops asking), opendir
 * and releasedir (directories hold no handle here; the kernel only opens
 * what getattr called a directory, and readdir reports a directory that
 * has gone since).
 */
import { constants as C, type BigIntStats } from 'node:fs';
import { constants as OS } from 'node:os';
import type { PackedListing, Vault, VaultFile } from '../vault/index.js';
import { STAT_WORDS, wordsOf } from '../util/stat-words.js';
import type { Logger } from '../util/logger.js';
import { toErrno } from './errno.js';
import { CallCounter, makeAnswer, statfsReply } from './answer.js';
import type { FuseCallback, FuseTime } from './fuse-native.js';
import { HandleTable, type Closable } from './handle-table.js';
import { ownerOf, type FuseCaller } from './caller.js';
import { HiddenFiles, isHiddenPath } from './hidden-files.js';
import type { NativeFastPath } from './native-fast-path.js';
import { batchBinding } from '../crypto/native-batch.js';
import { RENAME_WHITEOUT } from '../util/sys-at.js';
import { withDots, withDotsPacked } from './dot-entries.js';

export interface OperationOptions {
  /** Answer security.capability lookups (-suid); otherwise EOPNOTSUPP, as gocryptfs does. */
  suid: boolean;
  /** The native read path, when the mount has one: open handles are registered with it. */
  reads?: NativeFastPath | null;
  /** -force_owner: every entry is shown as owned by this uid and gid. */
  forceOwner?: { uid: number; gid: number };
  /**
   * Take flock(2) and POSIX record locks on the cipher files (for
   * -sharedstorage: another mount then sees them), instead of leaving them
   * to the kernel, which keeps them per mount. It costs a request per close
   * (the kernel's FLUSH, which releases a process's locks).
   */
  backingLocks?: boolean;
}

const XATTR_CREATE = 1;
const XATTR_REPLACE = 2;

/** Flags the Vault must not see from FUSE: the kernel already placed appends and handled O_TRUNC/O_CREAT. */
const KERNEL_HANDLED = C.O_APPEND | C.O_TRUNC | C.O_CREAT | C.O_EXCL;

export interface FuseOperations {
  ops: Record<string, (...args: never[]) => void>;
  handles: HandleTable<Closable>;
  /** How many files are open through the mount: JS's handles and those the native path opened (for -idle). */
  openFiles(): number;
  /** Milliseconds since the epoch of the last operation (for -idle). */
  lastActivity(): number;
  /**
   * How many times each operation came to JS (what the binding
   * answers itself is not counted), plus `nativeRead`: the reads the native
   * read path answered, when there is one, and `nativeAttr`: the chmod,
   * chown and utimens of open files it answered, `nativeWrite`: the
   * writes it answered, `nativeUnlink`: the unlinks, `nativeLookup`: the
   * lookups, `nativeOpen`: the opens, `nativeCreate`: the creates,
   * `nativeFgetattr`: the fstats of files it opened, and `nativeRmdir`:
   * the rmdirs, each once there are any.
   */
  calls(): Record<string, number>;
  /** Connects the binding's attribute cache, once mounted: readdir then fills it for the entries it lists. */
  useAttrCache(cache: AttrCacheHook): void;
  /** Whether readdir hands the binding each entry's attributes (packed listings): only then can a listing carry entries to the kernel (READDIRPLUS). */
  listsAttributes: boolean;
  /** Whether write and truncate drop set-id bits when the kernel asks (then the kernel leaves them to us: killPriv). */
  dropsSetIdBits: boolean;
}

/** The binding's attribute cache, as readdir feeds it (see Documentation/fuse-native.md). */
export interface AttrCacheHook {
  /** Its generation now (taken before a listing is read); 0 when the cache is off. */
  gen(): number;
}

export function makeOperations(vault: Vault, opts: OperationOptions, log: Logger): FuseOperations {
  const handles = new HandleTable();
  const reads = opts.reads ?? null;
  const hidden = new HiddenFiles(
    vault,
    handles,
    (path, on) => reads?.hold(path, on),
    (path, st, openFh) => adoptOpenOn(path, st, openFh),
  );
  const calls = new CallCounter();
  const answer = makeAnswer(calls, log, reads ? () => reads.syncRemovedDirs() : undefined);
  let attrCache: AttrCacheHook | null = null;
  const forced = opts.forceOwner;
  /** The words of entry `i` as the kernel gets them: with -force_owner, that owner. */
  const own = (w: Uint32Array, i: number): void => {
    if (forced) [w[i * STAT_WORDS + 1], w[i * STAT_WORDS + 2]] = [forced.uid, forced.gid];
  };
  /** An entry's attributes as the binding takes them (src/util/stat-words.ts), shown as the kernel gets them. */
  const shown = (st: Uint32Array | BigIntStats | undefined): Uint32Array | undefined => {
    if (st === undefined) return undefined;
    const w = wordsOf(st);
    own(w, 0);
    return w;
  };
  /** The same for a listing's packed attributes. */
  const shownWords = (l: PackedListing): PackedListing => {
    for (let i = 0; i < l.names.length; i++) own(l.words, i);
    return l;
  };
  /**
   * Like `answer`, for the operations libfuse2 follows with a getattr of the
   * same path (chmod, chown, utimens, truncate, mkdir, mknod, symlink, link):
   * the attributes go back with the result, and the binding answers
   * that getattr without another trip here. A failing stat only means the
   * getattr comes here after all.
   */
  const answerWithStat = (op: string, path: string, cb: FuseCallback, work: () => Promise<unknown>, stat: () => Promise<Uint32Array | BigIntStats> = () => vault.statWords(path)): void => {
    answer(op, path, cb, async () => {
      await work();
      return stat().catch(() => undefined);
    }, (st) => [shown(st)]);
  };
  const fail = (cb: FuseCallback, code: 'EPERM' | 'EOPNOTSUPP'): void => cb(-OS.errno[code]);
  const adopting = new Map<number, Promise<VaultFile>>();
  /**
   * The file of handle `fh`. A handle the native path opened (native-fast-path.ts)
   * is adopted the first time a request for it reaches JS: JS gets a
   * duplicate of its descriptor, by `path`, and its release from then on.
   */
  const handle = async (fh: number, path: string): Promise<VaultFile> => {
    const known = handles.get(fh);
    if (known || !reads?.isNative(fh)) return known ?? handles.need(fh);
    let p = adopting.get(fh);
    if (!p) {
      p = (async () => {
        const { fd, access } = reads.adopt(fh);
        if (fd < 0) return handles.need(fh);
        const f = await vault.adopt(fd, path, access);
        handles.put(fh, f);
        return f;
      })().finally(() => adopting.delete(fh));
      adopting.set(fh, p);
    }
    return p;
  };
  /**
   * Before libfuse hides `path` (file `st`, unlinked while open): JS adopts
   * the native handles open on it, and `openFh` when it is a native one
   * (where the store numbers a renamed file anew), which the hidden name is
   * then served from.
   */
  const adoptOpenOn = async (path: string, st: BigIntStats, openFh: number): Promise<void> => {
    const native = reads?.opensOn(st.dev, st.ino) ?? [];
    if (openFh >= 0 && reads?.isNative(openFh) && !native.includes(openFh)) native.push(openFh);
    for (const fh of native) {
      await handle(fh, path).catch((err: unknown) => log.warn(`${path}: an open handle could not be adopted: ${(err as Error).message}`));
    }
  };
  /** A new handle, registered with the native read path. */
  const addHandle = (f: VaultFile): number => {
    const fh = handles.add(f);
    reads?.open(fh, f);
    return fh;
  };
  let nativeSeen = 0;
  /** -idle: reads and attribute changes answered natively count as activity too. */
  const lastActivity = (): number => {
    const st = reads?.stats();
    const served = st ? st.served + st.attrs + st.written + st.unlinked + st.lookedUp + st.opened + st.created + st.fstated + st.synced + st.rmdired + st.xattrsNone + st.listed + st.renamed : 0; // what the libfuse threads answered is activity too
    if (served !== nativeSeen) {
      nativeSeen = served;
      calls.last = Date.now();
    }
    return calls.last;
  };

  const ops = {
    init(cb: FuseCallback): void {
      cb(0);
    },

    statfs(path: string, cb: FuseCallback): void {
      answer('statfs', path, cb, () => vault.statfs(), (s) => [statfsReply(s)]);
    },

    getattr(path: string, cb: FuseCallback): void {
      hidden.forgetHiding(path);
      answer('getattr', path, cb, () => (hidden.has(path) ? hidden.stat(path) : vault.statWords(path)), (st: Uint32Array | BigIntStats) => [shown(st)]);
    },

    fgetattr(path: string, fh: number, cb: FuseCallback): void {
      answer(
        'fgetattr',
        path,
        cb,
        async () => {
          if (hidden.has(path)) return hidden.stat(path);
          // The binding's channel lends a GETATTR any handle open on the node,
          // which may be released before the request gets here: one JS does not
          // know is stat by path, and a native one adopted only when there is no
          // path to stat (its directory removed meanwhile).
          const h = handles.get(fh) ?? (path === '' && reads?.isNative(fh) ? await handle(fh, path) : undefined);
          if (!h) return vault.statWords(path);
          if (path === '') {
            const st = await hidden.statOfHandle(h);
            if (st) return st;
          }
          return h.statWords();
        },
        (st: Uint32Array | BigIntStats) => [shown(st)],
      );
    },

    access(path: string, mode: number, cb: FuseCallback): void {
      answer('access', path, cb, () => vault.access(path, mode));
    },

    readdir(path: string, cb: FuseCallback): void {
      const cache = attrCache;
      const gen = cache?.gen() ?? 0; // before the listing: a change made meanwhile voids what it read
      if (cache === null || gen === 0) return answer('readdir', path, cb, () => vault.readdir(path), (names) => [withDots(names)]);
      // The attributes go with the listing: the kernel gets each entry's type
      // and inode number (d_type, d_ino), so rm -r, find and ls need no stat
      // to learn what it is, and the binding keeps them (unless something
      // changed since `gen`) for the LOOKUP and GETATTR of each that usually
      // follow, and for ls -l's ACL queries of entries with no xattrs; with
      // each entry's cipher path, for the native unlink (native-fast-path.ts);
      // with the directory's state, the kernel may keep the listing (mount.ts, keptListings).
      // "." and ".." go in front, as ext4 and gocryptfs list them (dot-entries.ts).
      answer('readdir', path, cb, () => vault.readdirPacked(path).then((l) => withDotsPacked(shownWords(l))), (l) => [l.names, l.words, l.flags, gen, l.cipherDir, l.diskNames, l.dirState]);
    },

    readlink(path: string, cb: FuseCallback): void {
      answer('readlink', path, cb, () => vault.readlink(path), (t) => [t]);
    },

    open(path: string, flags: number, cb: FuseCallback): void {
      answer('open', path, cb, async () => addHandle(await vault.open(path, flags & ~KERNEL_HANDLED)), (fh) => [fh]);
    },

    /** Creating operations get the request's caller (the binding): a root mount creates as that user. */
    create(path: string, mode: number, flags: number, caller: FuseCaller, cb: FuseCallback): void {
      answer('create', path, cb, async () => {
        const f = await vault.open(path, (flags & ~(C.O_APPEND | C.O_TRUNC)) | C.O_CREAT, mode & 0o7777, ownerOf(caller));
        const fh = addHandle(f);
        // The attributes for the fgetattr libfuse makes next (see answerWithStat).
        return { fh, st: await f.statWords().catch(() => undefined) };
      }, ({ fh, st }) => [fh, shown(st)]);
    },

    read(path: string, fh: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void): void {
      calls.arrived('read');
      (async () => (await handle(fh, path)).readInto(buf, len, pos))().then(
        (n) => cb(n),
        (err: unknown) => cb(toErrno(err, 'read', path, log)),
      );
    },

    /** `dropSetId`: an unprivileged writer, on a mount that drops set-id bits itself (killPriv). */
    write(path: string, fh: number, buf: Buffer, len: number, pos: number, dropSetId: boolean, cb: (n: number) => void): void {
      calls.arrived('write');
      (async () => {
        const f = await handle(fh, path);
        if (dropSetId) await f.dropSetIdBits();
        return f.write(buf.subarray(0, len), pos);
      })().then(
        (n) => cb(n),
        (err: unknown) => cb(toErrno(err, 'write', path, log)),
      );
    },

    fsync(path: string, datasync: number, fh: number, cb: FuseCallback): void {
      answer('fsync', path, cb, async () => {
        const f = await handle(fh, path);
        return datasync ? f.datasync() : f.sync();
      });
    },

    fsyncdir(path: string, datasync: number, _fh: number, cb: FuseCallback): void {
      answer('fsyncdir', path, cb, () => vault.fsyncDir(path, { datasync: datasync !== 0 }));
    },

    release(path: string, fh: number, cb: FuseCallback): void {
      answer('release', path, cb, async () => {
        reads?.close(fh);
        await handles.remove(fh)?.close();
      });
    },

    truncate(path: string, size: number, dropSetId: boolean, cb: FuseCallback): void {
      answerWithStat('truncate', path, cb, () => vault.truncate(path, size, { dropSetIdBits: dropSetId }));
    },

    ftruncate(path: string, fh: number, size: number, dropSetId: boolean, cb: FuseCallback): void {
      const f = handles.get(fh);
      if (!f) return answerWithStat('ftruncate', path, cb, () => vault.truncate(path, size, { dropSetIdBits: dropSetId }));
      answerWithStat('ftruncate', path, cb, async () => {
        if (dropSetId) await f.dropSetIdBits();
        await f.truncate(size);
      }, () => f.statWords());
    },

    unlink(path: string, cb: FuseCallback): void {
      answer('unlink', path, cb, async () => (hidden.has(path) ? hidden.forget(path) : vault.unlink(path)));
    },

    /**
     * `flags`: renameat2(2)'s (0 for rename(2)); the binding refuses to hide
     * an open target under RENAME_NOREPLACE. A whiteout belongs to the caller.
     */
    rename(from: string, to: string, flags: number, caller: FuseCaller & { hiddenFh?: number }, cb: FuseCallback): void {
      answer('rename', from, cb, async () => {
        if (isHiddenPath(to)) return hidden.hide(from, to, caller.hiddenFh ?? -1);
        if (flags !== 0) return vault.rename(from, to, flags, (flags & RENAME_WHITEOUT) !== 0 ? ownerOf(caller) : undefined);
        return (await hidden.renamesOntoItself(from, to)) ? vault.link(from, to) : vault.rename(from, to);
      });
    },

    link(existing: string, newPath: string, cb: FuseCallback): void {
      answerWithStat('link', newPath, cb, () => vault.link(existing, newPath));
    },

    symlink(target: string, path: string, caller: FuseCaller, cb: FuseCallback): void {
      answerWithStat('symlink', path, cb, () => vault.symlink(target, path, ownerOf(caller)));
    },

    mkdir(path: string, mode: number, caller: FuseCaller, cb: FuseCallback): void {
      answerWithStat('mkdir', path, cb, () => vault.mkdir(path, mode & 0o7777, ownerOf(caller)));
    },

    rmdir(path: string, cb: FuseCallback): void {
      answer('rmdir', path, cb, () => vault.rmdir(path));
    },

    /** Device nodes are made as any node, as gocryptfs 2.3 does: without -dev the mount's nodev keeps them unusable. */
    mknod(path: string, mode: number, dev: number, caller: FuseCaller, cb: FuseCallback): void {
      answerWithStat('mknod', path, cb, () => vault.mknod(path, mode, dev, ownerOf(caller)));
    },

    /** fallocate(2): modes 0 and KEEP_SIZE, as gocryptfs (other modes EOPNOTSUPP, from the VaultFile). */
    fallocate(path: string, mode: number, offset: number, length: number, fh: number, cb: FuseCallback): void {
      answer('fallocate', path, cb, async () => (await handle(fh, path)).fallocate(mode, offset, length));
    },

    chmod(path: string, mode: number, cb: FuseCallback): void {
      if (hidden.has(path)) return answerWithStat('chmod', path, cb, () => hidden.change(path, (h) => h.chmod(mode & 0o7777)), () => hidden.rawStat(path));
      answerWithStat('chmod', path, cb, () => vault.chmod(path, mode & 0o7777));
    },

    chown(path: string, uid: number, gid: number, cb: FuseCallback): void {
      if (hidden.has(path)) return answerWithStat('chown', path, cb, () => hidden.change(path, (h) => h.chown(uid, gid)), () => hidden.rawStat(path));
      answerWithStat('chown', path, cb, () => vault.chown(path, uid, gid));
    },

    /** Times as [seconds, nanoseconds]; null leaves that time as it is. Exact, unlike fs.utimes. */
    utimens(path: string, atime: FuseTime, mtime: FuseTime, cb: FuseCallback): void {
      if (hidden.has(path)) return answerWithStat('utimens', path, cb, () => hidden.change(path, (h) => h.utimens(atime, mtime)), () => hidden.rawStat(path));
      answerWithStat('utimens', path, cb, () => vault.utimens(path, atime, mtime));
    },

    setxattr(path: string, name: string, value: Buffer, _position: number, flags: number, cb: FuseCallback): void {
      const mode = flags & XATTR_CREATE ? 'create' : flags & XATTR_REPLACE ? 'replace' : undefined;
      answer('setxattr', path, cb, () => vault.setxattr(path, name, value, mode));
    },

    getxattr(path: string, name: string, _position: number, cb: FuseCallback): void {
      if (name === 'security.capability' && !opts.suid) return fail(cb, 'EOPNOTSUPP');
      answer('getxattr', path, cb, () => vault.getxattr(path, name), (v) => [v]);
    },

    listxattr(path: string, cb: FuseCallback): void {
      answer('listxattr', path, cb, () => vault.listxattr(path), (names) => [names]);
    },

    removexattr(path: string, name: string, cb: FuseCallback): void {
      answer('removexattr', path, cb, () => vault.removexattr(path, name));
    },
  };

  /** With backingLocks: locks on the cipher files (VaultFile.recordLock, flock); the binding waits for them (F_SETLKW, blocking flock). */
  const lockOps = {
    lock(path: string, fh: number, set: number, lock: { type: number; start: number; len: number }, owner: string, cb: FuseCallback): void {
      answer('lock', path, cb, async () => (await handle(fh, path)).recordLock(owner, set !== 0, lock), (found) => [found]);
    },

    flock(path: string, fh: number, op: number, cb: FuseCallback): void {
      answer('flock', path, cb, async () => (await handle(fh, path)).flock(op));
    },
  };
  if (opts.backingLocks) Object.assign(ops, lockOps);

  /** What the native read path answered: reads, chmod, chown and utimens of open files, writes, unlinks, lookups, opens, creates, rmdirs and getxattr/listxattr of entries without any (each once there are any). */
  const nativeCalls = (r: NativeFastPath): Record<string, number> => {
    const st = r.stats();
    return {
      nativeRead: st.served,
      ...(st.attrs > 0 && { nativeAttr: st.attrs }),
      ...(st.written > 0 && { nativeWrite: st.written }),
      ...(st.unlinked > 0 && { nativeUnlink: st.unlinked }),
      ...(st.lookedUp > 0 && { nativeLookup: st.lookedUp }),
      ...(st.opened > 0 && { nativeOpen: st.opened }),
      ...(st.created > 0 && { nativeCreate: st.created }),
      ...(st.fstated > 0 && { nativeFgetattr: st.fstated }),
      ...(st.synced > 0 && { nativeFsync: st.synced }),
      ...(st.listed > 0 && { nativeList: st.listed }),
      ...(st.renamed > 0 && { nativeRename: st.renamed }),
      ...(st.rmdired > 0 && { nativeRmdir: st.rmdired }),
      ...(st.xattrsNone > 0 && { nativeXattrNone: st.xattrsNone }),
    };
  };

  /** Chunks of blocks sealed by libfuse threads while they waited (mount.ts, setAssistHook); this process's count, shown once there are any. */
  const assistedChunks = (): Record<string, number> => {
    const n = batchBinding()?.sharedJobStats()[1] ?? 0;
    return n > 0 ? { assistedChunks: n } : {};
  };

  const openFiles = (): number => handles.size + (reads?.openCount() ?? 0);
  return { ops: ops as unknown as FuseOperations['ops'], handles, openFiles, lastActivity, calls: () => ({ ...calls.snapshot(), ...(reads && nativeCalls(reads)), ...assistedChunks() }), useAttrCache: (c) => void (attrCache = c), listsAttributes: true, dropsSetIdBits: true };
}
