/**
 * Attributes of an entry: lstat with plaintext sizes, chmod, chown, times,
 * access and statfs. Each works on the entry itself, never through a
 * symlink in the cipher directory.
 */
import { constants as C, promises as fsp, type BigIntStats, type Stats, type StatsFs } from 'node:fs';
import { fsError } from '../util/errors.js';
import { setSizeWords, statsFromWords } from '../util/stat-words.js';
import { procPath, type TimeArg } from '../util/sys-at.js';
import { readlinkEntry } from './node-links.js';
import { setPlainSizeWords } from './stats.js';
import { assertWritable, atNode, plainError, type VaultCore } from './vault-core.js';

/**
 * lstat words of what `path` names, with the plaintext size (files: content; symlinks: target length).
 * Native twin, for a mount's lookups: fp_lookup in native/fastpath/lookup.c.
 */
export async function statWords(core: VaultCore, path: string): Promise<Uint32Array> {
  return atNode(core, path, 'lstat', async (e) => {
    let w: Uint32Array;
    try {
      w = await core.at.fstatat(e.dir.fd, e.diskName);
    } catch (err) {
      throw plainError(err, 'lstat', path);
    }
    const type = w[0]! & C.S_IFMT;
    if (type === C.S_IFREG) setPlainSizeWords(core.ciphers.content.layout, w, 0);
    else if (type === C.S_IFLNK) setSizeWords(w, 0, Buffer.byteLength(await readlinkEntry(core, e, path), 'utf8'));
    return w;
  });
}

export async function stat(core: VaultCore, path: string, bigint: boolean): Promise<Stats | BigIntStats> {
  return statsFromWords(await statWords(core, path), 0, bigint);
}

/** Native twin, for a file open in a mount: fp_attr in native/fastpath/read.c. */
export async function chmod(core: VaultCore, path: string, mode: number): Promise<void> {
  assertWritable(core, 'chmod', path);
  await atNode(core, path, 'chmod', (e) => core.at.chmodat(e.dir.fd, e.diskName, mode)).catch((err) => {
    throw plainError(err, 'chmod', path);
  });
}

/**
 * chown of the entry itself; -1 leaves that id as it is.
 * Native twin, for a file open in a mount: fp_attr in native/fastpath/read.c.
 */
export async function chown(core: VaultCore, path: string, uid: number, gid: number): Promise<void> {
  assertWritable(core, 'lchown', path);
  await atNode(core, path, 'lchown', (e) => core.at.fchownat(e.dir.fd, e.diskName, uid, gid)).catch((err) => {
    throw plainError(err, 'lchown', path);
  });
}

/**
 * Access and modification times of the entry itself, to the nanosecond; null leaves one as it is.
 * Native twin, for a file open in a mount: fp_attr in native/fastpath/read.c.
 */
export async function utimens(core: VaultCore, path: string, atime: TimeArg, mtime: TimeArg): Promise<void> {
  assertWritable(core, 'utimensat', path);
  await atNode(core, path, 'utimensat', (e) => core.at.utimensat(e.dir.fd, e.diskName, atime, mtime)).catch((err) => {
    throw plainError(err, 'utimensat', path);
  });
}

/** A time as fs.utimes takes it (seconds, or a Date) as [seconds, nanoseconds]. */
export function timeArg(t: number | Date): [number, number] {
  const ms = typeof t === 'number' ? t * 1000 : t.getTime();
  const sec = Math.floor(ms / 1000);
  return [sec, Math.round((ms - sec * 1000) * 1e6)];
}

/** Native twin, for a mount's statfs: fp_statfs in native/fastpath/lookup.c. */
export async function statfs(core: VaultCore): Promise<StatsFs> {
  core.assertOpen();
  return fsp.statfs(procPath(core.tree.rootFd, '.'));
}

/**
 * access(2) for this process on the entry (F_OK, R_OK, W_OK, X_OK). The
 * entry is not followed: a symlink exists, and that is all it answers.
 */
export async function access(core: VaultCore, path: string, mode: number): Promise<void> {
  if (core.readOnly && (mode & C.W_OK) !== 0) {
    core.assertOpen();
    throw fsError('EROFS', 'access', path);
  }
  await atNode(core, path, 'access', async (e) => {
    const w = await core.at.fstatat(e.dir.fd, e.diskName);
    if (mode === C.F_OK || (w[0]! & C.S_IFMT) === C.S_IFLNK) return;
    const fd = await core.at.openat(e.dir.fd, e.diskName, 0o10000000 /* O_PATH */, 0);
    try {
      await fsp.access(`/proc/self/fd/${fd}`, mode);
    } finally {
      await core.at.close(fd);
    }
  }).catch((err) => {
    throw plainError(err, 'access', path);
  });
}
