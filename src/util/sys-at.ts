/**
 * The *at() system calls: every operation names one entry of a directory
 * given by its descriptor, never a path from the root, and none follows a
 * symlink in that entry (readlinkat reads it). The cipher directory is
 * untrusted, so this is the only way the Vault touches it
 * (src/vault/backing/ walks to the directory descriptors).
 *
 * Two implementations behind one interface, chosen once per process:
 *
 *  - native (native/sys/at_calls.c): the system calls themselves, made on
 *    the event loop like src/util/fs-ops.ts's direct style. Creating calls
 *    can run as another user (a credential), as a root daemon must for the
 *    files its users create.
 *  - proc: node:fs on `/proc/self/fd/DIRFD/NAME`, for when the addon is not
 *    built (no compiler) or TSCRYPTFS_FS_IO=async asks for the thread pool.
 *    The kernel resolves /proc/self/fd/DIRFD to the directory the
 *    descriptor holds, so this walks nothing either. It cannot make device
 *    nodes (EOPNOTSUPP), renameat2's flags (EINVAL) or create as another
 *    user: a credential becomes a chown after the creation.
 *
 * Failures are Node-style errors (code, errno, syscall), without a path:
 * the caller adds the plaintext path.
 */
import * as fs from 'node:fs';
import { constants as C, promises as fsp } from 'node:fs';
import { errnoName, fsError } from './errors.js';
import { DIRECT_IO } from './fs-ops.js';
import { loadNativeAddon } from './native-addon.js';
import { putStatWords, STAT_WORDS } from './stat-words.js';
import { notLink as xattrAt } from './xattr-io.js';
import { switchValue } from './switches.js';

/** Who a new entry belongs to: a file system uid, gid and the supplementary groups. */
export interface Credential {
  uid: number;
  gid: number;
  groups: readonly number[];
}

/** A time to set: [seconds, nanoseconds]; 'now'; null leaves it as it is. */
export type TimeArg = [number, number] | 'now' | null;

/** The current directory as a dirfd: `name` is then a path (only for opening the cipher directory itself). */
export const AT_FDCWD = -100;
export const AT_REMOVEDIR = 0x200;
export const RENAME_NOREPLACE = 1;
export const RENAME_EXCHANGE = 2;
/** renameat2(2): leave a whiteout (a 0:0 character device, for overlayfs) where the source was. */
export const RENAME_WHITEOUT = 4;
export const XATTR_CREATE = 1;
export const XATTR_REPLACE = 2;
export { XATTR_NAME_MAX } from './xattr-io.js';
/** open(2)'s O_PATH: a descriptor that only names an inode (Linux). */
export const O_PATH = 0o10000000;

export interface AtCalls {
  readonly kind: 'native' | 'proc';
  /** openat with O_NOFOLLOW (and O_CLOEXEC); the new descriptor. */
  openat(dirfd: number, name: string, flags: number, mode: number, cred?: Credential): Promise<number>;
  /** An O_PATH descriptor of the directory `name` in `dirfd` ("." for dirfd itself), refusing symlinks (ELOOP) and non-directories (ENOTDIR). */
  openDir(dirfd: number, name: string): Promise<number>;
  close(fd: number): Promise<void>;
  mkdirat(dirfd: number, name: string, mode: number, cred?: Credential): Promise<void>;
  mknodat(dirfd: number, name: string, mode: number, dev: number, cred?: Credential): Promise<void>;
  symlinkat(target: string, dirfd: number, name: string, cred?: Credential): Promise<void>;
  readlinkat(dirfd: number, name: string): Promise<Buffer>;
  unlinkat(dirfd: number, name: string, flags: number): Promise<void>;
  renameat2(olddirfd: number, oldname: string, newdirfd: number, newname: string, flags: number): Promise<void>;
  linkat(olddirfd: number, oldname: string, newdirfd: number, newname: string): Promise<void>;
  /** chown of the entry itself; -1 leaves that id as it is. */
  fchownat(dirfd: number, name: string, uid: number, gid: number): Promise<void>;
  /** chmod of the entry itself; a symlink is EOPNOTSUPP (as fchmodat2 with AT_SYMLINK_NOFOLLOW). */
  chmodat(dirfd: number, name: string, mode: number): Promise<void>;
  /** Times of the entry itself; an empty `name`: of the open file `dirfd` (futimens). */
  utimensat(dirfd: number, name: string, atime: TimeArg, mtime: TimeArg): Promise<void>;
  /** lstat of the entry as STAT_WORDS words (src/util/stat-words.ts). */
  fstatat(dirfd: number, name: string): Promise<Uint32Array>;
  fstat(fd: number): Promise<Uint32Array>;
  /** The names in directory `name` of `dirfd` ("." for itself), without . and .. */
  readdirat(dirfd: number, name: string): Promise<string[]>;
  /** lstat and the xattr name list size of each entry (see ListingStats); null when only the per-entry calls can do it. */
  statListingAt(dirfd: number, names: string[]): { words: Uint32Array; xattrSizes: Int32Array } | null;
  /** Extended attributes of the entry itself; a symlink has none (ENODATA, an empty list, EPERM to set). */
  getxattrat(dirfd: number, name: string, attr: string): Promise<Buffer>;
  listxattrat(dirfd: number, name: string): Promise<string[]>;
  setxattrat(dirfd: number, name: string, attr: string, value: Uint8Array, flags: number): Promise<void>;
  removexattrat(dirfd: number, name: string, attr: string): Promise<void>;
}

function failure(errno: number, syscall: string): Error {
  return fsError(errnoName(errno), syscall);
}

/** A native result: a value >= 0, or -errno thrown as a coded error. */
function check(r: number, syscall: string): number {
  if (r < 0) throw failure(-r, syscall);
  return r;
}

function packCred(cred?: Credential): Uint32Array | undefined {
  if (!cred) return undefined;
  return Uint32Array.from([cred.uid, cred.gid, ...cred.groups]);
}

function packTime(t: TimeArg, out: Float64Array, at: number): void {
  if (t === null) [out[at], out[at + 1]] = [0, -1];
  else if (t === 'now') [out[at], out[at + 1]] = [0, -2];
  else [out[at], out[at + 1]] = t;
}

/** Splits llistxattr's NUL-separated name list. */
function splitNames(buf: Buffer): string[] {
  return buf.length === 0 ? [] : buf.toString('utf8').split('\0').filter((n) => n.length > 0);
}

interface SysAtBinding {
  openat(dirfd: number, name: string, flags: number, mode: number, cred?: Uint32Array): number;
  mkdirat(dirfd: number, name: string, mode: number, cred?: Uint32Array): number;
  mknodat(dirfd: number, name: string, mode: number, dev: number, cred?: Uint32Array): number;
  symlinkat(target: string, dirfd: number, name: string, cred?: Uint32Array): number;
  readlinkat(dirfd: number, name: string): Buffer | number;
  unlinkat(dirfd: number, name: string, flags: number): number;
  renameat2(olddirfd: number, oldname: string, newdirfd: number, newname: string, flags: number): number;
  linkat(olddirfd: number, oldname: string, newdirfd: number, newname: string): number;
  fchownat(dirfd: number, name: string, uid: number, gid: number): number;
  chmodat(dirfd: number, name: string, mode: number): number;
  utimensat(dirfd: number, name: string, times: Float64Array): number;
  fstatat(dirfd: number, name: string, out: Uint32Array): number;
  fstat(fd: number, out: Uint32Array): number;
  readdirat(dirfd: number, name: string): string[] | number;
  statListingAt(dirfd: number, names: string[]): ArrayBuffer;
  getxattrat(dirfd: number, name: string, attr: string): Buffer | number;
  listxattrat(dirfd: number, name: string): Buffer | number;
  setxattrat(dirfd: number, name: string, attr: string, value: Uint8Array, flags: number): number;
  removexattrat(dirfd: number, name: string, attr: string): number;
  close(fd: number): number;
}

/**
 * Fresh STAT_WORDS-word arrays carved one after another from 4 KiB slabs.
 * A typed array of 88 bytes gets a backing store of its own off V8's heap
 * (an fstatat took 4.6 us with a new one, 4.0 us with a slab view here); a
 * view into a slab is one small object. No view is ever handed out twice: a slab
 * is dropped when full and freed with the last view into it.
 */
function wordSlab(): () => Uint32Array {
  const perSlab = Math.floor(4096 / (STAT_WORDS * 4));
  let slab = new ArrayBuffer(0);
  let next = perSlab;
  return () => {
    if (next === perSlab) {
      slab = new ArrayBuffer(perSlab * STAT_WORDS * 4);
      next = 0;
    }
    return new Uint32Array(slab, STAT_WORDS * 4 * next++, STAT_WORDS);
  };
}

function nativeCalls(b: SysAtBinding): AtCalls {
  const data = <T>(r: T | number, syscall: string): T => {
    if (typeof r === 'number') throw failure(-r, syscall);
    return r;
  };
  const nextWords = wordSlab();
  const words = (fn: (out: Uint32Array) => number, syscall: string): Uint32Array => {
    const out = nextWords();
    check(fn(out), syscall);
    return out;
  };
  return {
    kind: 'native',
    openat: async (d, n, flags, mode, cred) => check(b.openat(d, n, flags, mode, packCred(cred)), 'open'),
    openDir: async (d, n) => check(b.openat(d, n, O_PATH | C.O_DIRECTORY, 0), 'open'),
    close: async (fd) => void check(b.close(fd), 'close'),
    mkdirat: async (d, n, mode, cred) => void check(b.mkdirat(d, n, mode, packCred(cred)), 'mkdir'),
    mknodat: async (d, n, mode, dev, cred) => void check(b.mknodat(d, n, mode, dev, packCred(cred)), 'mknod'),
    symlinkat: async (t, d, n, cred) => void check(b.symlinkat(t, d, n, packCred(cred)), 'symlink'),
    readlinkat: async (d, n) => data(b.readlinkat(d, n), 'readlink'),
    unlinkat: async (d, n, flags) => void check(b.unlinkat(d, n, flags), flags & AT_REMOVEDIR ? 'rmdir' : 'unlink'),
    renameat2: async (od, on, nd, nn, flags) => void check(b.renameat2(od, on, nd, nn, flags), 'rename'),
    linkat: async (od, on, nd, nn) => void check(b.linkat(od, on, nd, nn), 'link'),
    fchownat: async (d, n, uid, gid) => void check(b.fchownat(d, n, uid, gid), 'lchown'),
    chmodat: async (d, n, mode) => void check(b.chmodat(d, n, mode), 'chmod'),
    utimensat: async (d, n, atime, mtime) => {
      const t = new Float64Array(4);
      packTime(atime, t, 0);
      packTime(mtime, t, 2);
      check(b.utimensat(d, n, t), 'utimensat');
    },
    fstatat: async (d, n) => words((out) => b.fstatat(d, n, out), 'lstat'),
    fstat: async (fd) => words((out) => b.fstat(fd, out), 'fstat'),
    readdirat: async (d, n) => data(b.readdirat(d, n), 'scandir'),
    statListingAt: (d, names) => {
      const buf = b.statListingAt(d, names);
      const k = names.length;
      return { words: new Uint32Array(buf, 0, k * STAT_WORDS), xattrSizes: new Int32Array(buf, k * STAT_WORDS * 4, k) };
    },
    getxattrat: async (d, n, attr) => data(b.getxattrat(d, n, attr), 'getxattr'),
    listxattrat: async (d, n) => splitNames(data(b.listxattrat(d, n), 'listxattr')),
    setxattrat: async (d, n, attr, value, flags) => void check(b.setxattrat(d, n, attr, value, flags), 'setxattr'),
    removexattrat: async (d, n, attr) => void check(b.removexattrat(d, n, attr), 'removexattr'),
  };
}

/** A path that reaches entry `name` of directory descriptor `dirfd` without walking any other directory. */
export function procPath(dirfd: number, name: string): string {
  // "/proc/self/fd/N/." for the directory itself: "/proc/self/fd/N" alone is
  // a (magic) symlink, which O_NOFOLLOW and lstat would take as such.
  return dirfd === AT_FDCWD ? name : `/proc/self/fd/${dirfd}/${name}`;
}

/** node:fs in the chosen style: direct system calls or the thread pool. */
const io = DIRECT_IO
  ? {
      open: async (p: string, f: number, m?: number) => fs.openSync(p, f, m),
      close: async (fd: number) => fs.closeSync(fd),
      fstat: async (fd: number) => fs.fstatSync(fd, { bigint: true }),
      lstat: async (p: string) => fs.lstatSync(p, { bigint: true }),
      mkdir: async (p: string, m: number) => void fs.mkdirSync(p, { mode: m }),
      symlink: async (t: string, p: string) => fs.symlinkSync(t, p),
      readlink: async (p: string) => fs.readlinkSync(p, { encoding: 'buffer' }),
      unlink: async (p: string) => fs.unlinkSync(p),
      rmdir: async (p: string) => fs.rmdirSync(p),
      rename: async (a: string, b: string) => fs.renameSync(a, b),
      link: async (a: string, b: string) => fs.linkSync(a, b),
      lchown: async (p: string, u: number, g: number) => fs.lchownSync(p, u, g),
      chmod: async (p: string, m: number) => fs.chmodSync(p, m),
      lutimes: async (p: string, a: number, m: number) => fs.lutimesSync(p, a, m),
      utimes: async (p: string, a: number, m: number) => fs.utimesSync(p, a, m),
      readdir: async (p: string) => fs.readdirSync(p),
    }
  : {
      // fs.open, not fsp.open: a FileHandle would close the descriptor again when collected.
      open: (p: string, f: number, m?: number) => new Promise<number>((res, rej) => fs.open(p, f, m, (e, fd) => (e ? rej(e) : res(fd)))),
      close: (fd: number) => new Promise<void>((res, rej) => fs.close(fd, (e) => (e ? rej(e) : res()))),
      fstat: (fd: number) => new Promise<fs.BigIntStats>((res, rej) => fs.fstat(fd, { bigint: true }, (e, st) => (e ? rej(e) : res(st)))),
      lstat: (p: string) => fsp.lstat(p, { bigint: true }),
      mkdir: (p: string, m: number) => fsp.mkdir(p, { mode: m }).then(() => undefined),
      symlink: (t: string, p: string) => fsp.symlink(t, p),
      readlink: (p: string) => fsp.readlink(p, { encoding: 'buffer' }),
      unlink: (p: string) => fsp.unlink(p),
      rmdir: (p: string) => fsp.rmdir(p),
      rename: (a: string, b: string) => fsp.rename(a, b),
      link: (a: string, b: string) => fsp.link(a, b),
      lchown: (p: string, u: number, g: number) => fsp.lchown(p, u, g),
      chmod: (p: string, m: number) => fsp.chmod(p, m),
      lutimes: (p: string, a: number, m: number) => fsp.lutimes(p, a, m),
      utimes: (p: string, a: number, m: number) => fsp.utimes(p, a, m),
      readdir: (p: string) => fsp.readdir(p),
    };

/** Errors from node:fs, without the /proc path in them. */
async function bare<T>(syscall: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw typeof code === 'string' ? fsError(code, syscall) : err;
  }
}

function bigWords(st: fs.BigIntStats): Uint32Array {
  const w = new Uint32Array(STAT_WORDS);
  putStatWords(w, 0, st);
  return w;
}

function procCalls(): AtCalls {
  const p = procPath;
  /** A root-made entry handed to the credential's owner (the group of a setgid parent, as the kernel would choose). */
  const own = async (dirfd: number, name: string, cred: Credential | undefined): Promise<void> => {
    if (!cred) return;
    const parent = await io.lstat(p(dirfd, '.'));
    const gid = (Number(parent.mode) & 0o2000) !== 0 ? Number(parent.gid) : cred.gid;
    await io.lchown(p(dirfd, name), cred.uid, gid);
  };
  const timeOf = (t: TimeArg, current: bigint): number => (t === null ? Number(current) / 1e9 : t === 'now' ? Date.now() / 1000 : t[0] + t[1] / 1e9);
  /** The entry as an O_PATH descriptor (never a symlink's target) and whether it is a symlink. */
  const entry = async (dirfd: number, name: string): Promise<{ fd: number; link: boolean }> => {
    const fd = await io.open(p(dirfd, name), O_PATH | C.O_NOFOLLOW);
    const st = await io.fstat(fd);
    return { fd, link: (Number(st.mode) & C.S_IFMT) === C.S_IFLNK };
  };
  /** Whether the entry is a symlink (which has no user xattrs on Linux). */
  const isLink = async (dirfd: number, name: string): Promise<boolean> => {
    const e = await entry(dirfd, name);
    await io.close(e.fd);
    return e.link;
  };
  return {
    kind: 'proc',
    openat: (d, n, flags, mode, cred) =>
      bare('open', async () => {
        const creating = cred !== undefined && (flags & C.O_CREAT) !== 0 && (await io.lstat(p(d, n)).then(() => false, () => true));
        const fd = await io.open(p(d, n), flags | C.O_NOFOLLOW, mode);
        if (creating) await own(d, n, cred);
        return fd;
      }),
    openDir: (d, n) =>
      bare('open', async () => {
        const fd = await io.open(p(d, n), O_PATH | C.O_DIRECTORY | C.O_NOFOLLOW);
        return fd;
      }),
    close: (fd) => bare('close', () => io.close(fd)),
    mkdirat: (d, n, mode, cred) => bare('mkdir', async () => (await io.mkdir(p(d, n), mode), await own(d, n, cred))),
    mknodat: async () => {
      throw fsError('EOPNOTSUPP', 'mknod', undefined, 'device nodes, FIFOs and sockets need the native addon');
    },
    symlinkat: (t, d, n, cred) => bare('symlink', async () => (await io.symlink(t, p(d, n)), await own(d, n, cred))),
    readlinkat: (d, n) => bare('readlink', () => io.readlink(p(d, n))),
    unlinkat: (d, n, flags) => (flags & AT_REMOVEDIR ? bare('rmdir', () => io.rmdir(p(d, n))) : bare('unlink', () => io.unlink(p(d, n)))),
    renameat2: (od, on, nd, nn, flags) =>
      bare('rename', async () => {
        if (flags !== 0) throw fsError('EINVAL', 'rename', undefined, 'rename flags need the native addon');
        await io.rename(p(od, on), p(nd, nn));
      }),
    linkat: (od, on, nd, nn) => bare('link', () => io.link(p(od, on), p(nd, nn))),
    fchownat: (d, n, uid, gid) => bare('lchown', () => io.lchown(p(d, n), uid, gid)),
    chmodat: (d, n, mode) =>
      bare('chmod', async () => {
        const e = await entry(d, n);
        try {
          if (e.link) throw fsError('EOPNOTSUPP', 'chmod');
          await io.chmod(`/proc/self/fd/${e.fd}`, mode);
        } finally {
          await io.close(e.fd);
        }
      }),
    utimensat: (d, n, atime, mtime) =>
      bare('utimensat', async () => {
        if (n === '') {
          // The open file itself: its /proc link is followed, to the file.
          const st = await io.fstat(d);
          await io.utimes(`/proc/self/fd/${d}`, timeOf(atime, st.atimeNs), timeOf(mtime, st.mtimeNs));
          return;
        }
        const st = await io.lstat(p(d, n));
        await io.lutimes(p(d, n), timeOf(atime, st.atimeNs), timeOf(mtime, st.mtimeNs));
      }),
    fstatat: (d, n) => bare('lstat', async () => bigWords(await io.lstat(p(d, n)))),
    fstat: (fd) => bare('fstat', async () => bigWords(await io.fstat(fd))),
    readdirat: (d, n) =>
      bare('scandir', async () => {
        const fd = await io.open(p(d, n), C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
        try {
          return await io.readdir(`/proc/self/fd/${fd}`);
        } finally {
          await io.close(fd);
        }
      }),
    statListingAt: () => null,
    getxattrat: (d, n, attr) =>
      bare('getxattr', async () => {
        if (await isLink(d, n)) throw fsError('ENODATA', 'getxattr');
        return xattrAt.getAttribute(p(d, n), attr);
      }),
    listxattrat: (d, n) => bare('listxattr', async () => ((await isLink(d, n)) ? [] : xattrAt.listAttributes(p(d, n)))),
    setxattrat: (d, n, attr, value, flags) =>
      bare('setxattr', async () => {
        if (await isLink(d, n)) throw fsError('EPERM', 'setxattr');
        if (flags !== 0) {
          const exists = (await xattrAt.listAttributes(p(d, n))).includes(attr);
          if (flags & XATTR_CREATE && exists) throw fsError('EEXIST', 'setxattr');
          if (flags & XATTR_REPLACE && !exists) throw fsError('ENODATA', 'setxattr');
        }
        await xattrAt.setAttribute(p(d, n), attr, value);
      }),
    removexattrat: (d, n, attr) =>
      bare('removexattr', async () => {
        if (await isLink(d, n)) throw fsError('ENODATA', 'removexattr');
        await xattrAt.removeAttribute(p(d, n), attr);
      }),
  };
}

let chosen: AtCalls | undefined;

/**
 * The implementation for this process: native when the sys addon has the
 * calls and the direct style is in use, else /proc paths.
 * TSCRYPTFS_AT_CALLS=proc forces the fallback (for tests).
 */
export function atCalls(): AtCalls {
  if (chosen) return chosen;
  const b = switchValue('TSCRYPTFS_AT_CALLS') === 'proc' || !DIRECT_IO ? null : loadNativeAddon<Partial<SysAtBinding>>('tscryptfs_sys.node');
  chosen = b && typeof b.openat === 'function' ? nativeCalls(b as SysAtBinding) : procCalls();
  return chosen;
}
