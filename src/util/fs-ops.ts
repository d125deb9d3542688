/**
 * The filesystem calls the Vault makes on the cipher directory, in one of
 * two styles chosen once per process: through libuv's thread pool
 * (node:fs/promises), or as direct system calls on the event loop.
 *
 * A FUSE request makes several such calls in a row, and each trip through
 * the thread pool costs tens of microseconds of latency; on a local disk,
 * tmpfs or the page cache the system call itself costs a few. Direct calls
 * are therefore the default (measured in Documentation/performance.txt);
 * on a slow network filesystem, where one call can block for milliseconds,
 * TSCRYPTFS_FS_IO=async keeps the event loop free instead.
 */
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';

type Ops = Pick<
  typeof fsp,
  'lstat' | 'stat' | 'readdir' | 'readlink' | 'mkdir' | 'rmdir' | 'rm' | 'chmod' | 'rename' | 'unlink' | 'symlink' | 'link' | 'lchown' | 'lutimes' | 'access' | 'readFile'
>;

const direct = {
  lstat: async (p: fs.PathLike, o?: fs.StatOptions) => fs.lstatSync(p, o),
  stat: async (p: fs.PathLike, o?: fs.StatOptions) => fs.statSync(p, o),
  readdir: async (p: fs.PathLike, o?: unknown) => fs.readdirSync(p, o as undefined),
  readlink: async (p: fs.PathLike, o?: unknown) => fs.readlinkSync(p, o as undefined),
  mkdir: async (p: fs.PathLike, o?: fs.MakeDirectoryOptions) => fs.mkdirSync(p, o),
  rmdir: async (p: fs.PathLike) => fs.rmdirSync(p),
  rm: async (p: fs.PathLike, o?: fs.RmOptions) => fs.rmSync(p, o),
  chmod: async (p: fs.PathLike, m: fs.Mode) => fs.chmodSync(p, m),
  rename: async (a: fs.PathLike, b: fs.PathLike) => fs.renameSync(a, b),
  unlink: async (p: fs.PathLike) => fs.unlinkSync(p),
  symlink: async (t: fs.PathLike, p: fs.PathLike) => fs.symlinkSync(t, p),
  link: async (a: fs.PathLike, b: fs.PathLike) => fs.linkSync(a, b),
  lchown: async (p: fs.PathLike, u: number, g: number) => fs.lchownSync(p, u, g),
  lutimes: async (p: fs.PathLike, a: fs.TimeLike, m: fs.TimeLike) => fs.lutimesSync(p, a, m),
  access: async (p: fs.PathLike, m?: number) => fs.accessSync(p, m),
  readFile: async (p: fs.PathLike, o?: unknown) => fs.readFileSync(p, o as undefined),
} as unknown as Ops;

/** True when the cipher directory is accessed with direct system calls (the default). */
export const DIRECT_IO = process.env.TSCRYPTFS_FS_IO !== 'async';

/** The calls, in the style chosen for this process (the environment cannot change under us). */
export const fsx: Ops = DIRECT_IO ? direct : fsp;
