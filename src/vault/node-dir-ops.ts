/**
 * Directories: listings (names decrypted, what must stay hidden left out),
 * listings with every entry's attributes for a mount, mkdir with the new
 * directory's IV, rmdir (Documentation/format.md §7.7), fsync of a directory.
 */
import { constants as C } from 'node:fs';
import { posix } from 'node:path';
import { CONF_NAME } from '../config/conf-name.js';
import { badDisplayName, createDirIV, doubtfulName, deleteLongName, DIRIV_NAME, hashLongName, LONGNAME_SUFFIX, longNameKind, matchesAny, NameMemo, readLongName, resolveDirConflicts, type ConflictEntry } from '../names/index.js';
import { fsError } from '../util/errors.js';
import { fdatasync, fsync } from '../util/fd-io.js';
import { modeWord, putWords, STAT_WORDS } from '../util/stat-words.js';
import { AT_REMOVEDIR } from '../util/sys-at.js';
import { randomBytes } from 'node:crypto';
import type { DirSlot, Located } from './backing/index.js';
import { keepableState } from './listing-state.js';
import { setPlainSizeWords } from './stats.js';
import { assertWritable, atEntry, credentialOf, plainError, withLongName, type Owner, type VaultCore } from './vault-core.js';

/** A listing with every entry's attributes (Vault.readdirPacked). */
export interface PackedListing {
  names: string[];
  /**
   * STAT_WORDS words per entry (src/util/stat-words.ts): lstat of the cipher
   * entry, with the plaintext size for files; all zero where lstat failed.
   */
  words: Uint32Array;
  /** Per entry: LISTED_ATTRS, LISTED_NO_XATTRS and LISTED_LONG_NAME bits. */
  flags: Uint8Array;
  /** The directory's cipher path from the cipher directory ("" for the root), for the mount's native unlink. */
  cipherDir: string;
  /** Each entry's name on disk. */
  diskNames: string[];
  /**
   * The attributes of the directory itself (read before its names) and of
   * its parent on disk, STAT_WORDS words each ("." and ".." for a mount's
   * listing; all zero where lstat failed).
   */
  dots: Uint32Array;
  /**
   * The directory's own attributes, when a mount's kernel may keep this
   * listing until they change (src/vault/listing-state.ts); null otherwise.
   */
  dirState: Uint32Array | null;
}

/** The entry's words are its attributes as stat() gives them (not so for symlinks: their size is the target's plaintext length). */
export const LISTED_ATTRS = 1;
/** The entry has no extended attributes at all. */
export const LISTED_NO_XATTRS = 2;
/** The entry's name on disk is a long name's: a .name file goes with it (format.md §7.8). */
export const LISTED_LONG_NAME = 4;

interface Listed {
  name: string;
  diskName: string;
  long?: boolean;
  /** Set for a sync conflict copy shown under a name of its own (src/names/conflict-dir.ts). */
  conflict?: ConflictEntry;
}

/**
 * Runs `fn` with the visible entries of a directory (plaintext name and name
 * on disk), the directory held meanwhile; with `stateFirst`, also with its
 * own attributes as they were before its names were read (null if that
 * fstat failed).
 */
async function withListing<T>(
  core: VaultCore,
  path: string,
  fn: (dir: DirSlot, entries: Listed[], before: Uint32Array | null) => Promise<T>,
  stateFirst = false,
): Promise<T> {
  core.assertOpen();
  const dir = await core.tree.dir(path, 'scandir');
  try {
    let names: string[];
    let before: Uint32Array | null = null;
    try {
      if (stateFirst) before = await core.at.fstat(dir.fd).catch(() => null);
      names = await core.at.readdirat(dir.fd, '.');
    } catch (err) {
      throw plainError(err, 'scandir', path);
    }
    return await fn(dir, await visible(core, dir, names), before);
  } finally {
    dir.release();
  }
}

/**
 * The entries of a directory as a listing shows them: names that decrypt;
 * then, among the rest, sync conflict copies under names of their own
 * (unless the Vault was opened with noConflicts); then names that match a
 * -badname pattern, as gocryptfs shows them (such a name is never taken
 * for a conflict copy). Anything else is hidden, with a log line.
 */
async function visible(core: VaultCore, dir: DirSlot, names: string[]): Promise<Listed[]> {
  const isRoot = dir.fd === core.tree.rootFd;
  const codec = core.ciphers.names;
  const hiddenAtRoot = (n: string): boolean => isRoot && (n === CONF_NAME || n === CONF_NAME + '.tmp');
  if (!codec) return names.filter((n) => !hiddenAtRoot(n)).map((n) => ({ name: n, diskName: n }));
  let out: Listed[] = [];
  const ivKey = NameMemo.ivKey(dir.iv);
  const where = (n: string): string => posix.join(dir.cipherDir, n);
  /** Names that do not decrypt, by name on disk, with the full encrypted name (a long one's from its .name file). */
  const leftovers = new Map<string, string>();
  let nameFiles = false;
  for (const n of names) {
    if (hiddenAtRoot(n)) continue;
    if (core.format.dirIV && n === DIRIV_NAME) continue;
    let cname = n;
    const kind = longNameKind(n);
    if (kind === 'name-file') {
      nameFiles = true;
      continue;
    }
    if (kind !== 'content') {
      // Short names are remembered; a long name's .name file is read each time.
      const known = core.nameMemo.get(ivKey, n);
      if (known !== undefined) {
        if (known !== null) out.push({ name: known, diskName: n });
        else leftovers.set(n, n);
        continue;
      }
    }
    if (kind === 'content') {
      const full = await readLongName(core.at, dir.fd, n);
      if (full === null || hashLongName(full, core.format.raw64) !== n) {
        leftovers.set(n, '');
        continue;
      }
      cname = full;
    }
    const plain = codec.decryptName(cname, dir.iv);
    const name = plain === null ? null : plain.toString('utf8');
    if (kind !== 'content') core.nameMemo.set(ivKey, n, name);
    if (name === null) {
      leftovers.set(n, cname);
      continue;
    }
    out.push({ name, diskName: n, long: kind === 'content' });
  }
  if (leftovers.size === 0) return out;

  // -badname shows names that do not decrypt (not long names without their .name file, which stay hidden).
  const badnames = [...leftovers].filter(([n, c]) => c !== '' && matchesAny(core.tree.badname, n));
  for (const [n] of badnames) leftovers.delete(n);
  let unexplained = [...leftovers.keys()];
  if (core.tree.showConflicts && leftovers.size > 0) {
    const present = new Set(names);
    const extra = nameFiles ? names.filter((n) => longNameKind(n) === 'name-file' && !present.has(n.slice(0, -LONGNAME_SUFFIX.length))) : [];
    const found = await resolveDirConflicts({
      at: core.at,
      dirfd: dir.fd,
      codec,
      iv: dir.iv,
      raw64: core.format.raw64,
      leftovers: [...leftovers.keys(), ...extra],
      present,
      shown: new Set(out.map((e) => e.name)),
      doubtful: out.filter((e) => doubtfulName(e.name)).map((e) => e.diskName),
      isRoot,
    });
    if (found.conflicts.length > 0) {
      const moved = new Set(found.conflicts.map((c) => c.diskName));
      out = out.filter((e) => !moved.has(e.diskName));
    }
    for (const r of found.restored) out.push({ name: r.name, diskName: r.diskName, long: longNameKind(r.diskName) === 'content' });
    for (const c of found.conflicts) out.push({ name: c.shown, diskName: c.diskName, conflict: c });
    unexplained = found.unexplained;
  }
  for (const [n, cname] of badnames) {
    core.log.warn(`${where(n)}: name does not decrypt, shown as a bad name (-badname)`);
    out.push({ name: badDisplayName(codec, cname, dir.iv), diskName: n });
  }
  for (const n of unexplained) {
    core.log.warn(leftovers.get(n) === '' ? `${where(n)}: long name without a valid .name file, hidden` : `${where(n)}: name does not decrypt, hidden`);
  }
  return out;
}

/**
 * The entry a name shown for a sync conflict copy stands for in the
 * directory of `dir`, or null: the directory is listed as a listing
 * shows it, so a name means the same to a lookup as to readdir.
 */
export async function findConflictEntry(core: VaultCore, dir: DirSlot, shown: string): Promise<ConflictEntry | null> {
  const names = await core.at.readdirat(dir.fd, '.');
  return (await visible(core, dir, names)).find((e) => e.name === shown)?.conflict ?? null;
}

/** The sync conflict copies of a directory, as a listing shows them (Vault.conflicts). */
export async function conflicts(core: VaultCore, path: string): Promise<ConflictEntry[]> {
  return withListing(core, path, async (_dir, entries) => entries.flatMap((e) => (e.conflict ? [e.conflict] : [])));
}

export async function readdir(core: VaultCore, path: string): Promise<string[]> {
  return withListing(core, path, async (_dir, entries) => entries.map((e) => e.name));
}

/**
 * readdir with each entry's attributes, packed for a mount to hand to the
 * kernel with the listing (d_type, d_ino) and to its attribute cache: one
 * native call for the whole listing where the addon is built, else lstat
 * and listxattr per entry. Native twin, for a mount's listings of
 * directories whose names all decrypt: fp_list in native/fastpath/list.c
 * (which also mirrors visible()'s hidden names).
 */
export async function readdirPacked(core: VaultCore, path: string): Promise<PackedListing> {
  return withListing(core, path, async (dir, entries, before) => {
    const n = entries.length;
    const disk = entries.map((e) => e.diskName);
    const native = core.at.statListingAt(dir.fd, disk);
    const words = native?.words ?? new Uint32Array(n * STAT_WORDS);
    const flags = new Uint8Array(n);
    const layout = core.ciphers.content.layout;
    for (let i = 0; i < n; i++) {
      if (!native) {
        const w = await core.at.fstatat(dir.fd, disk[i]!).catch(() => null);
        if (w === null) continue;
        putWords(words, i, w);
      }
      const type = modeWord(words, i) & C.S_IFMT;
      if (type === 0 || type === C.S_IFLNK) continue;
      if (type === C.S_IFREG) setPlainSizeWords(layout, words, i);
      const none = native ? native.xattrSizes[i] === 0 : await core.at.listxattrat(dir.fd, disk[i]!).then((names) => names.length === 0, () => false);
      flags[i] = LISTED_ATTRS | (none ? LISTED_NO_XATTRS : 0) | (entries[i]!.long ? LISTED_LONG_NAME : 0);
    }
    const dots = new Uint32Array(2 * STAT_WORDS);
    if (before !== null) putWords(dots, 0, before);
    const parent = await core.at.fstatat(dir.fd, '..').catch(() => null);
    if (parent !== null) putWords(dots, 1, parent);
    const dirState = before === null ? null : keepableState(before, Date.now());
    return { names: entries.map((e) => e.name), words, flags, cipherDir: core.tree.relativePath(dir), diskNames: disk, dots, dirState };
  }, true);
}

/**
 * Creates a directory and its IV file. The directory is made writable for
 * that moment if its mode says otherwise (format.md §2.4), as gocryptfs
 * does, keeping a setgid bit the kernel gave it from its parent.
 */
export async function mkdir(core: VaultCore, path: string, mode: number, owner?: Owner): Promise<void> {
  assertWritable(core, 'mkdir', path);
  await atEntry(core, path, 'mkdir', async (e) => {
    const wanted = mode & 0o7777;
    const needsWrite = core.format.dirIV && (wanted & 0o700) !== 0o700;
    try {
      await withLongName(core, e, () => core.at.mkdirat(e.dir.fd, e.diskName, needsWrite ? wanted | 0o700 : wanted, credentialOf(owner)));
    } catch (err) {
      throw plainError(err, 'mkdir', path);
    }
    if (!core.format.dirIV) return;
    try {
      const fd = await core.at.openDir(e.dir.fd, e.diskName);
      try {
        await createDirIV(core.at, fd);
      } finally {
        await core.at.close(fd);
      }
      if (needsWrite) {
        const setgid = (await core.at.fstatat(e.dir.fd, e.diskName))[0]! & 0o2000;
        await core.at.chmodat(e.dir.fd, e.diskName, wanted | setgid);
      }
    } catch (err) {
      await removeNew(core, e);
      throw plainError(err, 'mkdir', path);
    }
  });
}

/** Undoes a mkdir whose IV could not be written. */
async function removeNew(core: VaultCore, e: Located): Promise<void> {
  const fd = await core.at.openDir(e.dir.fd, e.diskName).catch(() => null);
  if (fd !== null) {
    await core.at.unlinkat(fd, DIRIV_NAME, 0).catch(() => undefined);
    await core.at.close(fd);
  }
  await core.at.unlinkat(e.dir.fd, e.diskName, AT_REMOVEDIR).catch(() => undefined);
  if (e.long) await deleteLongName(core.at, e.dir.fd, e.diskName);
}

/**
 * fsync(2) (or fdatasync) of a directory: its cipher directory, reopened for
 * reading from the descriptor the walk holds (no path is followed), is
 * flushed, so what was created, renamed or removed in it is on the backing
 * store; the store's error (EIO, ...) is the caller's.
 */
export async function fsyncDir(core: VaultCore, path: string, datasync: boolean): Promise<void> {
  const slot = await core.tree.dir(path, 'fsync');
  try {
    const fd = await core.at.openat(slot.fd, '.', C.O_RDONLY | C.O_DIRECTORY, 0);
    try {
      await (datasync ? fdatasync(fd) : fsync(fd));
    } finally {
      await core.at.close(fd);
    }
  } catch (err) {
    throw plainError(err, 'fsync', path);
  } finally {
    slot.release();
  }
}

/** Removes an empty directory (ENOTEMPTY otherwise), as gocryptfs does (format.md §7.7). */
export async function rmdir(core: VaultCore, path: string): Promise<void> {
  assertWritable(core, 'rmdir', path);
  await atEntry(core, path, 'rmdir', async (e) => {
    try {
      await rmdirEntry(core, e);
    } catch (err) {
      throw plainError(err, 'rmdir', path);
    }
  });
}

/**
 * Removes the directory entry `e` if it holds nothing but its IV: the IV
 * is moved out beside it first (a directory is never empty on disk), put
 * back if the removal fails, and deleted after. Native twin, for a mount's
 * rmdirs: fp_rmdir in native/fastpath/remove.c.
 */
export async function rmdirEntry(core: VaultCore, e: Located): Promise<void> {
  if (core.format.dirIV) {
    const fd = await core.at.openDir(e.dir.fd, e.diskName);
    try {
      const names = await core.at.readdirat(fd, '.');
      if (names.some((n) => n !== DIRIV_NAME)) throw fsError('ENOTEMPTY', 'rmdir');
      if (names.includes(DIRIV_NAME)) {
        const parked = `${DIRIV_NAME}.rmdir.${randomBytes(8).readBigUInt64BE()}`;
        await core.at.renameat2(fd, DIRIV_NAME, e.dir.fd, parked, 0);
        try {
          await core.at.unlinkat(e.dir.fd, e.diskName, AT_REMOVEDIR);
        } catch (err) {
          await core.at.renameat2(e.dir.fd, parked, fd, DIRIV_NAME, 0).catch(() => undefined);
          throw err;
        }
        await core.at.unlinkat(e.dir.fd, parked, 0);
      } else {
        await core.at.unlinkat(e.dir.fd, e.diskName, AT_REMOVEDIR);
      }
    } finally {
      await core.at.close(fd);
    }
  } else {
    await core.at.unlinkat(e.dir.fd, e.diskName, AT_REMOVEDIR);
  }
  core.tree.forgetTree(e.logPath);
  if (e.long) await deleteLongName(core.at, e.dir.fd, e.diskName);
}
