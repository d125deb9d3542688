/**
 * Plaintext paths to cipher paths (Documentation/format.md §7.3, §7.8, §7.9): one component at a time,
 * each encrypted with the IV of the cipher directory it lives in, hashed
 * when too long. Plaintext names mode maps paths verbatim.
 */
import { join, posix } from 'node:path';
import type { FormatOptions } from '../config/format.js';
import { CONF_NAME } from '../config/conf-file.js';
import { readDirIV, ZERO_IV, type NameCodec, invalidNameCode, NAME_MAX } from '../names/index.js';
import { fsError, hasCode } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { PathCache, type DirSlot } from './path-cache.js';
import { fsx } from '../util/fs-ops.js';

/** One entry's place in the cipher tree. */
export interface CipherEntry {
  /** Cipher path of the directory holding the entry. */
  dir: string;
  /** Full encrypted name (before hashing); equals the plaintext name in plaintext-names mode. */
  cname: string;
  /** Name on disk: cname, or its gocryptfs.longname.* hash. */
  diskName: string;
  /** True when diskName is a hash with a .name file beside it. */
  long: boolean;
  /** dir + diskName. */
  path: string;
}

export class PathMapper {
  private readonly paths = new PathCache();

  constructor(
    readonly root: string,
    private readonly format: FormatOptions,
    private readonly codec: NameCodec | null,
    private readonly log?: Logger,
  ) {}

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

  /** The name IV of a cipher directory, read from disk (the path cache keeps it). */
  async dirIV(cipherDir: string): Promise<Buffer> {
    if (!this.format.dirIV) return ZERO_IV;
    let iv: Buffer;
    try {
      iv = await readDirIV(cipherDir);
    } catch (err) {
      // A damaged or missing diriv makes the whole directory EIO (as in
      // gocryptfs), with a log line saying why. ENOENT stays ENOENT only
      // when the directory itself does not exist.
      const missing = hasCode(err, 'ENOENT') && (await isDirectory(cipherDir));
      if (!missing && !hasCode(err, 'EIO')) throw err;
      const e = missing ? fsError('EIO', 'open', join(cipherDir, 'gocryptfs.diriv'), 'diriv is missing') : (err as Error);
      this.log?.warn(`${cipherDir}: ${e.message}`);
      throw e;
    }
    return iv;
  }

  /** Where plaintext name `name` lives inside cipher directory `dir`, whose IV is `iv`. */
  private child(dir: string, iv: Buffer, name: string, isRoot: boolean, syscall: string, plainPath: string): CipherEntry {
    if (!this.codec) {
      if (isRoot && name === CONF_NAME) throw fsError('EPERM', syscall, plainPath, 'reserved name');
      return { dir, cname: name, diskName: name, long: false, path: join(dir, name) };
    }
    const cname = this.codec.encryptName(Buffer.from(name, 'utf8'), iv);
    const diskName = this.codec.diskName(cname);
    if (!this.codec.opts.longNames && cname.length > 255) throw fsError('ENAMETOOLONG', syscall, plainPath);
    return { dir, cname, diskName, long: diskName !== cname, path: join(dir, diskName) };
  }

  /** The entry for `name` in the directory of `slot`, from the cache when it can. */
  private entryIn(slot: DirSlot, name: string, isRoot: boolean, syscall: string, plainPath: string): CipherEntry {
    let e = slot.names.get(name);
    if (e === undefined) {
      e = this.child(slot.cipherDir, slot.iv, name, isRoot, syscall, plainPath);
      this.paths.remember(slot, name, e);
    }
    return e;
  }

  /** The cache slot of the plaintext directory made of the first `n` components. */
  private async dirSlot(parts: string[], n: number, syscall: string, plainPath: string): Promise<DirSlot> {
    let key = '';
    let slot = this.paths.get(key) ?? this.paths.set(key, this.root, await this.ivOf(this.root, syscall, plainPath));
    for (let i = 0; i < n; i++) {
      key += '/' + parts[i]!;
      let next = this.paths.get(key);
      if (next === undefined) {
        const e = this.entryIn(slot, parts[i]!, i === 0, syscall, plainPath);
        next = this.paths.set(key, e.path, await this.ivOf(e.path, syscall, plainPath));
      }
      slot = next;
    }
    return slot;
  }

  /** Cipher path and name IV of a plaintext directory. */
  async dir(plainPath: string, syscall: string): Promise<{ cipherDir: string; iv: Buffer }> {
    const parts = this.components(plainPath, syscall);
    return this.dirSlot(parts, parts.length, syscall, plainPath);
  }

  /** Cipher path of a whole plaintext path. */
  async cipherPath(plainPath: string, syscall = 'lstat'): Promise<string> {
    const parts = this.components(plainPath, syscall);
    if (parts.length === 0) return this.root;
    const slot = await this.dirSlot(parts, parts.length - 1, syscall, plainPath);
    return this.entryIn(slot, parts[parts.length - 1]!, parts.length === 1, syscall, plainPath).path;
  }

  /** The entry for the last component of a path (which must not be the root). */
  async entry(plainPath: string, syscall: string): Promise<CipherEntry> {
    const parts = this.components(plainPath, syscall);
    if (parts.length === 0) throw fsError('EBUSY', syscall, plainPath, 'the root directory');
    const slot = await this.dirSlot(parts, parts.length - 1, syscall, plainPath);
    return this.entryIn(slot, parts[parts.length - 1]!, parts.length === 1, syscall, plainPath);
  }

  /** Forgets what is cached for a cipher directory and everything below it (it was removed or renamed). */
  forgetTree(cipherDir: string): void {
    this.paths.forgetTree(cipherDir);
  }

  clear(): void {
    this.paths.clear();
  }

  /** A directory's IV; reading it fails with the cipher path, so report the plaintext path instead (the log line has the cipher path). */
  private async ivOf(cipherDir: string, syscall: string, plainPath: string): Promise<Buffer> {
    try {
      return await this.dirIV(cipherDir);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EIO') throw fsError(code, syscall, plainPath);
      throw err;
    }
  }
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await fsx.lstat(p)).isDirectory();
  } catch {
    return false;
  }
}
