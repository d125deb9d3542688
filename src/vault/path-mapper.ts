/**
 * Plaintext paths to cipher paths (FORMAT.md §5): one component at a time,
 * each encrypted with the IV of the cipher directory it lives in, hashed
 * when too long. Plaintext names mode maps paths verbatim.
 */
import { join, posix } from 'node:path';
import type { FormatOptions } from '../config/format.js';
import { CONF_NAME } from '../config/conf-file.js';
import { readDirIV, ZERO_IV, type NameCodec, invalidNameCode } from '../names/index.js';
import { fsError, hasCode } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { DirIVCache } from './dir-iv-cache.js';
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
  constructor(
    readonly root: string,
    private readonly format: FormatOptions,
    private readonly codec: NameCodec | null,
    private readonly ivCache: DirIVCache,
    private readonly log?: Logger,
  ) {}

  /** Validated plaintext components of a path; "/" and "" are the root. */
  components(plainPath: string, syscall: string): Buffer[] {
    const norm = posix.normalize('/' + plainPath);
    const parts = norm.split('/').filter((p) => p.length > 0);
    return parts.map((p) => {
      const name = Buffer.from(p, 'utf8');
      const bad = invalidNameCode(name);
      if (bad) throw fsError(bad, syscall, plainPath);
      return name;
    });
  }

  /** The name IV of a cipher directory. */
  async dirIV(cipherDir: string): Promise<Buffer> {
    if (!this.format.dirIV) return ZERO_IV;
    const hit = this.ivCache.get(cipherDir);
    if (hit) return hit;
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
    this.ivCache.set(cipherDir, iv);
    return iv;
  }

  /** Where plaintext name `name` lives inside cipher directory `dir`. */
  async child(dir: string, name: Buffer, isRoot: boolean, syscall: string, plainPath: string): Promise<CipherEntry> {
    if (!this.codec) {
      const plain = name.toString('utf8');
      if (isRoot && plain === CONF_NAME) throw fsError('EPERM', syscall, plainPath, 'reserved name');
      return { dir, cname: plain, diskName: plain, long: false, path: join(dir, plain) };
    }
    const cname = this.codec.encryptName(name, await this.dirIV(dir));
    const diskName = this.codec.diskName(cname);
    if (!this.codec.opts.longNames && cname.length > 255) throw fsError('ENAMETOOLONG', syscall, plainPath);
    return { dir, cname, diskName, long: diskName !== cname, path: join(dir, diskName) };
  }

  /** Cipher path of a whole plaintext path. */
  async cipherPath(plainPath: string, syscall = 'lstat'): Promise<string> {
    const parts = this.components(plainPath, syscall);
    let dir = this.root;
    for (let i = 0; i < parts.length; i++) {
      dir = (await this.withPlainErrors(this.child(dir, parts[i]!, i === 0, syscall, plainPath), syscall, plainPath)).path;
    }
    return dir;
  }

  /** The entry for the last component of a path (which must not be the root). */
  async entry(plainPath: string, syscall: string): Promise<CipherEntry> {
    const parts = this.components(plainPath, syscall);
    if (parts.length === 0) throw fsError('EBUSY', syscall, plainPath, 'the root directory');
    let dir = this.root;
    for (let i = 0; i < parts.length - 1; i++) {
      dir = (await this.withPlainErrors(this.child(dir, parts[i]!, i === 0, syscall, plainPath), syscall, plainPath)).path;
    }
    return this.withPlainErrors(this.child(dir, parts[parts.length - 1]!, parts.length === 1, syscall, plainPath), syscall, plainPath);
  }

  /** Reading a parent's diriv fails with the cipher path; report the plaintext path instead (the log line has the cipher path). */
  private async withPlainErrors<T>(p: Promise<T>, syscall: string, plainPath: string): Promise<T> {
    try {
      return await p;
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
