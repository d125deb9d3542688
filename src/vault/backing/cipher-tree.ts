/**
 * The walk: plaintext paths to (directory descriptor, name on disk), one
 * component at a time (Documentation/format.md §7.3, §7.8, §7.9). Each
 * directory is opened with openat(O_PATH|O_DIRECTORY|O_NOFOLLOW) from its
 * parent's descriptor, starting at the cipher directory itself, and its IV
 * read through that descriptor; the last component is handed to an *at()
 * call with the name only. No full backing path is built, so depth is
 * bounded by the plaintext's PATH_MAX, not the longer cipher path's, and a
 * symlink planted anywhere in the cipher directory is never followed: a
 * component that is not a real directory is ENOTDIR.
 *
 * This is the one place that knows the walk; the Vault asks it for a
 * directory (`dir`), the entry of a path's last component (`entry`) or the
 * node a path names, the root included (`node`). Every answer holds its
 * directory's descriptor until `release()`.
 */
import { realpathSync } from 'node:fs';
import { posix } from 'node:path';
import type { FormatOptions } from '../../config/format.js';
import { CONF_NAME } from '../../config/conf-name.js';
import { BADNAME_SUFFIX, badNameCandidates, mayBeConflictName, readDirIV, ZERO_IV, type ConflictEntry, type NameCodec, invalidNameCode, NAME_MAX } from '../../names/index.js';
import { fsError, hasCode } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { AT_FDCWD, type AtCalls } from '../../util/sys-at.js';
import { DIR_LIFETIME_MS, DirCache, DirSlot, type CipherName } from './dir-cache.js';

/** One entry's place in the cipher tree; `dir` is held until release(). */
export interface Located extends CipherName {
  readonly dir: DirSlot;
  /** The entry's cipher path, for log lines only. */
  readonly logPath: string;
  release(): void;
}

const ROOT_KEY = '';

/** A Located for an entry of a directory slot; the log path is only built when a log line asks for it. */
class SlotEntry implements Located {
  readonly cname: string;
  readonly diskName: string;
  readonly long: boolean;

  constructor(
    readonly dir: DirSlot,
    e: CipherName,
  ) {
    this.cname = e.cname;
    this.diskName = e.diskName;
    this.long = e.long;
  }

  get logPath(): string {
    return posix.join(this.dir.cipherDir, this.diskName);
  }

  release(): void {
    this.dir.release();
  }
}

/**
 * An O_PATH descriptor of the cipher directory itself. Its path is the
 * user's: symlinks on it are followed, as the user meant them (gocryptfs
 * too); nothing below it is ever reached by path.
 */
export async function openCipherRoot(at: AtCalls, rootPath: string): Promise<number> {
  try {
    return await at.openDir(AT_FDCWD, realpathSync(rootPath));
  } catch (err) {
    if (hasCode(err)) throw fsError(err.code, 'open', rootPath);
    throw err;
  }
}

/** The conflict copy shown as `shown` in the directory of `dir`, or null (see CipherTree.showConflictsWith). */
export type ConflictLookup = (dir: DirSlot, shown: string) => Promise<ConflictEntry | null>;

export class CipherTree {
  private readonly cache: DirCache;
  private root: DirSlot;
  /** Finds the entry a shown sync conflict name stands for (the Vault's listing rule); null: conflicts are not shown. */
  private conflictEntry: ConflictLookup | null = null;

  private constructor(
    /** The cipher directory as the user named it (log lines, cipherPath()). */
    readonly rootPath: string,
    /** Its descriptor, opened once; everything else is reached from it. */
    readonly rootFd: number,
    rootIv: Buffer,
    readonly at: AtCalls,
    private readonly format: FormatOptions,
    private readonly codec: NameCodec | null,
    private readonly log?: Logger,
    /** -badname patterns: names that do not decrypt but match one are shown (see names/badname.ts). */
    readonly badname: readonly RegExp[] = [],
    private readonly ttlMs = DIR_LIFETIME_MS,
  ) {
    this.cache = new DirCache(at, ttlMs);
    this.root = new DirSlot(rootPath, rootFd, rootIv, Date.now() + ttlMs, at, true);
  }

  /** Opens the cipher directory `rootPath` (following symlinks in that path, which is the user's) and reads its IV. */
  /** `ttlMs`: how long a directory's descriptor and IV are kept (0: walked again by every call, for -sharedstorage). */
  static async open(rootPath: string, at: AtCalls, format: FormatOptions, codec: NameCodec | null, log?: Logger, badname: readonly RegExp[] = [], ttlMs = DIR_LIFETIME_MS): Promise<CipherTree> {
    const fd = await openCipherRoot(at, rootPath);
    try {
      const iv = format.dirIV ? await readDirIV(at, fd, rootPath) : ZERO_IV;
      return new CipherTree(rootPath, fd, iv, at, format, codec, log, badname, ttlMs);
    } catch (err) {
      await at.close(fd).catch(() => undefined);
      throw err;
    }
  }

  /** Shows sync conflict copies (src/names/conflict-dir.ts), finding the entry of a shown name with `lookup`. */
  showConflictsWith(lookup: ConflictLookup): void {
    this.conflictEntry = lookup;
  }

  /** True when listings show sync conflict copies under names of their own. */
  get showConflicts(): boolean {
    return this.conflictEntry !== null;
  }

  /** Validated plaintext components of a path; "/" and "" are the root. */
  components(plainPath: string, syscall: string): string[] {
    const norm = posix.normalize('/' + plainPath);
    const parts = norm.split('/').filter((p) => p.length > 0);
    for (const p of parts) {
      // Short names without NUL are fine as they are (UTF-8 takes at most 3 bytes per UTF-16 unit;
      // split() removed '/', normalize() "." and ".."): no buffer per component on every request.
      if (p.length * 3 <= NAME_MAX && !p.includes('\0')) continue;
      const bad = invalidNameCode(Buffer.from(p, 'utf8'));
      if (bad) throw fsError(bad, syscall, plainPath);
    }
    return parts;
  }

  /** The directory `plainPath` names, held until its release(). */
  async dir(plainPath: string, syscall: string): Promise<DirSlot> {
    const parts = this.components(plainPath, syscall);
    return this.dirSlot(parts, parts.length, syscall, plainPath);
  }

  /** The entry of the last component of `plainPath` (which must not be the root: EBUSY). */
  async entry(plainPath: string, syscall: string): Promise<Located> {
    const parts = this.components(plainPath, syscall);
    if (parts.length === 0) throw fsError('EBUSY', syscall, plainPath, 'the root directory');
    return this.lastOf(parts, syscall, plainPath);
  }

  /** What `plainPath` names, the root included (as "." of itself). */
  async node(plainPath: string, syscall: string): Promise<Located> {
    const parts = this.components(plainPath, syscall);
    if (parts.length > 0) return this.lastOf(parts, syscall, plainPath);
    const dir = (await this.rootSlot(syscall, plainPath)).acquire();
    return { dir, cname: '.', diskName: '.', long: false, logPath: this.rootPath, release: () => dir.release() };
  }

  /** Where the directory of `slot` is, from the cipher directory: its names on disk joined by "/" ("" for the root). */
  relativePath(slot: DirSlot): string {
    return slot.fd === this.rootFd ? '' : posix.relative(this.rootPath, slot.cipherDir);
  }

  /** The cipher path of a plaintext path (for tools and tests; the Vault never opens it). */
  async cipherPath(plainPath: string): Promise<string> {
    const e = await this.node(plainPath, 'lstat');
    e.release();
    return e.logPath;
  }

  /** Forgets the cipher directory at `cipherDir` (a log path) and everything below it: it was removed or renamed. */
  forgetTree(cipherDir: string): void {
    this.cache.forgetTree(cipherDir);
  }

  clear(): void {
    this.cache.clear();
  }

  /** Drops every slot and closes the root. */
  async close(): Promise<void> {
    this.cache.clear();
    await this.at.close(this.rootFd).catch(() => undefined);
  }

  /** Open directories and remembered entries (for tests). */
  get size(): { dirs: number; names: number } {
    return this.cache.size;
  }

  private async lastOf(parts: string[], syscall: string, plainPath: string): Promise<Located> {
    const dir = await this.dirSlot(parts, parts.length - 1, syscall, plainPath);
    try {
      const last = parts[parts.length - 1]!;
      const e =
        this.badname.length > 0 && last.endsWith(BADNAME_SUFFIX)
          ? await this.badNameIn(dir, last, parts.length === 1, syscall, plainPath)
          : this.mayBeConflict(last)
            ? await this.conflictIn(dir, last, parts.length === 1, syscall, plainPath)
            : this.nameIn(dir, last, parts.length === 1, syscall, plainPath);
      return new SlotEntry(dir, e);
    } catch (err) {
      dir.release();
      throw err;
    }
  }

  /** The root's slot; its IV is read again once it is a second old, as any directory's. */
  private async rootSlot(syscall: string, plainPath: string): Promise<DirSlot> {
    if (this.root.expires >= Date.now()) return this.root;
    const iv = await this.ivOf(this.rootFd, this.rootPath, syscall, plainPath);
    this.root = new DirSlot(this.rootPath, this.rootFd, iv, Date.now() + this.ttlMs, this.at, true);
    return this.root;
  }

  /** Where plaintext name `name` lives in the directory of `slot`, from the slot's memory when it can. */
  private nameIn(slot: DirSlot, name: string, isRoot: boolean, syscall: string, plainPath: string): CipherName {
    let e = slot.names.get(name);
    if (e === undefined) {
      e = this.child(slot.iv, name, isRoot, syscall, plainPath);
      this.cache.remember(slot, name, e);
    }
    return e;
  }

  /**
   * A name shown for an undecryptable entry (-badname): the entry its
   * ordinary encryption names if that exists, else the one existing entry
   * it can stand for; ENOENT when none or several do (gocryptfs 2.3's
   * EncryptAndHashBadName). Not remembered: it depends on what exists.
   */
  private async badNameIn(slot: DirSlot, name: string, isRoot: boolean, syscall: string, plainPath: string): Promise<CipherName> {
    const exists = (disk: string): Promise<boolean> => this.at.fstatat(slot.fd, disk).then(() => true, () => false);
    const plain = this.child(slot.iv, name, isRoot, syscall, plainPath);
    if (await exists(plain.diskName)) return plain;
    const found: string[] = [];
    for (const c of new Set(badNameCandidates(this.codec!, name, slot.iv))) {
      if (await exists(c)) found.push(c);
    }
    if (found.length !== 1) throw fsError('ENOENT', syscall, plainPath); // none, or ambiguous: even a create gets ENOENT there
    return { cname: found[0]!, diskName: found[0]!, long: false };
  }

  private mayBeConflict(name: string): boolean {
    return this.conflictEntry !== null && mayBeConflictName(name);
  }

  /**
   * A name that may be shown for a sync conflict copy: the entry its
   * ordinary encryption names if that exists (a real name always wins), else
   * the conflict copy shown under it, else the ordinary entry (to be
   * created). Not remembered: it depends on what exists.
   */
  private async conflictIn(slot: DirSlot, name: string, isRoot: boolean, syscall: string, plainPath: string): Promise<CipherName> {
    const plain = this.child(slot.iv, name, isRoot, syscall, plainPath);
    if (await this.at.fstatat(slot.fd, plain.diskName).then(() => true, () => false)) return plain;
    let c: ConflictEntry | null;
    try {
      c = await this.conflictEntry!(slot, name);
    } catch (err) {
      if (hasCode(err)) throw fsError(err.code, syscall, plainPath);
      throw err;
    }
    return c === null ? plain : { cname: c.diskName, diskName: c.diskName, long: false };
  }

  private child(iv: Buffer, name: string, isRoot: boolean, syscall: string, plainPath: string): CipherName {
    if (!this.codec) {
      if (isRoot && name === CONF_NAME) throw fsError('EPERM', syscall, plainPath, 'reserved name');
      return { cname: name, diskName: name, long: false };
    }
    const cname = this.codec.encryptName(Buffer.from(name, 'utf8'), iv);
    const diskName = this.codec.diskName(cname);
    if (!this.codec.opts.longNames && cname.length > 255) throw fsError('ENAMETOOLONG', syscall, plainPath);
    return { cname, diskName, long: diskName !== cname };
  }

  /** The slot of the plaintext directory made of the first `n` components, held until its release(). */
  private async dirSlot(parts: string[], n: number, syscall: string, plainPath: string): Promise<DirSlot> {
    if (n > 0) {
      // Most requests land in a directory that is still open: one lookup instead of one per level.
      const held = this.cache.get('/' + parts.slice(0, n).join('/'));
      if (held !== undefined) return held.acquire();
    }
    let slot = (await this.rootSlot(syscall, plainPath)).acquire();
    let key = ROOT_KEY;
    try {
      for (let i = 0; i < n; i++) {
        key += '/' + parts[i]!;
        let next = this.cache.get(key);
        if (next === undefined) {
          const e = this.mayBeConflict(parts[i]!) ? await this.conflictIn(slot, parts[i]!, i === 0, syscall, plainPath) : this.nameIn(slot, parts[i]!, i === 0, syscall, plainPath);
          const cipherDir = posix.join(slot.cipherDir, e.diskName);
          const fd = await this.openChild(slot, e.diskName, syscall, plainPath);
          let iv: Buffer;
          try {
            iv = await this.ivOf(fd, cipherDir, syscall, plainPath);
          } catch (err) {
            await this.at.close(fd).catch(() => undefined);
            throw err;
          }
          next = this.cache.set(key, cipherDir, fd, iv);
        }
        next.acquire();
        slot.release();
        slot = next;
      }
      return slot;
    } catch (err) {
      slot.release();
      throw err;
    }
  }

  /** openat(O_PATH|O_DIRECTORY|O_NOFOLLOW) of a child directory; a symlink or anything else is ENOTDIR. */
  private async openChild(parent: DirSlot, diskName: string, syscall: string, plainPath: string): Promise<number> {
    try {
      return await this.at.openDir(parent.fd, diskName);
    } catch (err) {
      if (hasCode(err, 'ELOOP')) {
        this.log?.warn(`${posix.join(parent.cipherDir, diskName)}: a symlink where a directory should be, not followed`);
        throw fsError('ENOTDIR', syscall, plainPath);
      }
      if (hasCode(err)) throw fsError(err.code, syscall, plainPath);
      throw err;
    }
  }

  /**
   * A directory's IV. A damaged or missing diriv makes the whole directory
   * EIO (as in gocryptfs), with a log line saying why; errors name the
   * plaintext path, the log line the cipher path.
   */
  private async ivOf(fd: number, cipherDir: string, syscall: string, plainPath: string): Promise<Buffer> {
    if (!this.format.dirIV) return ZERO_IV;
    try {
      return await readDirIV(this.at, fd, cipherDir);
    } catch (err) {
      if (hasCode(err, 'EACCES')) throw fsError('EACCES', syscall, plainPath);
      const why = hasCode(err, 'ENOENT') ? 'EIO: diriv is missing' : hasCode(err, 'ELOOP') ? 'EIO: diriv is a symlink' : (err as Error).message;
      this.log?.warn(`${cipherDir}: ${why}`);
      throw fsError('EIO', syscall, plainPath);
    }
  }
}
