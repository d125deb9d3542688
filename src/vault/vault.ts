/**
 * A gocryptfs cipher directory as an API on plaintext paths, with no FUSE
 * in it: the mount and library users both call this.
 */
import { promises as fsp, constants as C, type BigIntStats, type Stats, type StatsFs } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { notLink as xattr } from './xattr-io.js';
import {
  CONF_NAME,
  confFormat,
  createConf,
  DEFAULT_LONGNAMEMAX,
  parseMasterKeyHex,
  readConfFile,
  unlockConf,
  writeConfFile,
  type ConfFile,
  type FormatOptions,
} from '../config/index.js';
import { BlockError, cipherSizeToPlainSize } from '../content/index.js';
import {
  b64Decode,
  b64Encode,
  createDirIV,
  deleteLongName,
  DIRIV_NAME,
  hashLongName,
  longNameKind,
  NameMemo,
  readLongName,
  writeLongName,
} from '../names/index.js';
import { configError, fsError, hasCode, type CodedError } from '../util/errors.js';
import { stderrLogger, type Logger } from '../util/logger.js';
import { openFd, fstat, closeFd } from '../util/fd-io.js';
import { truncateContent, type ContentFile } from './file-content.js';
import { FileStateTable } from './file-state.js';
import { WriteFences } from './write-fences.js';
import { deriveCiphers, nativeContentKey, type NativeContentKey, type VaultCiphers } from './keys.js';
import type { BackendName } from '../crypto/index.js';
import { backingFlags, isWritable, parseOpenFlags } from './open-flags.js';
import {
  passwordBytes,
  type VaultCommonOptions,
  type VaultFormatOptions,
  type VaultInitOptions,
  type VaultOpenOptions,
} from './options.js';
import { PathMapper, type CipherEntry } from './path-mapper.js';
import { BufferPool } from './buffer-pool.js';
import { Preallocator } from './prealloc.js';
import { VaultFile } from './vault-file.js';
import { fsx } from '../util/fs-ops.js';
import { statListing } from '../util/native-sys.js';
import { modeWord, putStatWords, setSizeWords, sizeWords, STAT_WORDS } from '../util/stat-words.js';
import { setSize } from './stats.js';
import { decryptPathAt, encryptPathAt } from './ctlsock-paths.js';

const execFileP = promisify(execFile);

/** A listing with every entry's attributes (Vault.readdirPacked). */
export interface PackedListing {
  names: string[];
  /**
   * STAT_WORDS words per entry (src/util/stat-words.ts): lstat of the cipher
   * entry, with the plaintext size for files; all zero where lstat failed.
   */
  words: Uint32Array;
  /** Per entry: LISTED_ATTRS and LISTED_NO_XATTRS bits. */
  flags: Uint8Array;
}

/** The entry's words are its attributes as stat() gives them (not so for symlinks: their size is the target's plaintext length). */
export const LISTED_ATTRS = 1;
/** The entry has no extended attributes at all. */
export const LISTED_NO_XATTRS = 2;

/** Read and write in pieces of this size in readFile/writeFile. */
const CHUNK = 1 << 20;

export type XattrSetMode = 'create' | 'replace';

export class Vault {
  /** The cipher directory. */
  readonly cipherdir: string;
  /** Format settings in force. */
  readonly format: FormatOptions;
  /** The loaded config; null when opened with a master key. */
  readonly config: ConfFile | null;
  readonly readOnly: boolean;
  private readonly log: Logger;
  private readonly nativeMknod: VaultCommonOptions['mknod'];
  private readonly ciphers: VaultCiphers;
  private readonly backend: BackendName;
  private readonly mapper: PathMapper;
  /** Decrypted short names of listings, by directory IV (never stale: see NameMemo). */
  private readonly nameMemo = new NameMemo();
  /** Ciphertext buffers, sized for the largest FUSE read or write (128 KiB, unaligned: 33 blocks). */
  private readonly cipherBuffers: BufferPool;
  private readonly files = new FileStateTable();
  private readonly openHandles = new Set<VaultFile>();
  private readonly prealloc: Preallocator;
  private masterKey: Uint8Array;
  private closed = false;

  private constructor(cipherdir: string, format: FormatOptions, config: ConfFile | null, masterKey: Uint8Array, opts: VaultCommonOptions) {
    this.cipherdir = cipherdir;
    this.format = format;
    this.config = config;
    this.masterKey = masterKey;
    this.readOnly = opts.readOnly ?? false;
    this.log = opts.logger ?? stderrLogger;
    this.nativeMknod = opts.mknod;
    this.prealloc = new Preallocator(!(opts.noPrealloc ?? false), this.log);
    this.backend = opts.backend ?? 'node';
    this.ciphers = deriveCiphers(masterKey, format, this.backend);
    this.mapper = new PathMapper(cipherdir, format, this.ciphers.names, this.log);
    this.cipherBuffers = new BufferPool(33 * this.ciphers.content.layout.cipherBlockSize);
  }

  // ---------------------------------------------------------------- creation

  /**
   * Creates a new cipher directory in the existing empty directory
   * `cipherdir` (gocryptfs -init) and opens it.
   */
  static async init(cipherdir: string, opts: VaultInitOptions): Promise<Vault> {
    await assertEmptyDir(cipherdir);
    const format = formatFromInitOptions(opts);
    const { conf, masterKey } = await createConf({
      format,
      password: passwordBytes(opts.password),
      ...(opts.scryptLogN !== undefined && { scryptLogN: opts.scryptLogN }),
      ...(opts.creator !== undefined && { creator: opts.creator }),
    });
    await writeConfFile(opts.configPath ?? join(cipherdir, CONF_NAME), conf);
    if (format.dirIV) await createDirIV(cipherdir);
    return new Vault(cipherdir, format, conf, masterKey, opts);
  }

  /** Opens an existing cipher directory with its password or master key. */
  static async open(cipherdir: string, opts: VaultOpenOptions): Promise<Vault> {
    await assertDir(cipherdir);
    if ('masterkey' in opts) {
      const key = typeof opts.masterkey === 'string' ? parseMasterKeyHex(opts.masterkey) : Buffer.from(opts.masterkey);
      if (key.length !== 32) throw configError('EMASTERKEY', `master key must be 32 bytes, got ${key.length}`);
      return new Vault(cipherdir, formatFromInitOptions(opts), null, key, opts);
    }
    const conf = await readConfFile(opts.configPath ?? join(cipherdir, CONF_NAME));
    const masterKey = await unlockConf(conf, passwordBytes(opts.password));
    return new Vault(cipherdir, confFormat(conf), conf, masterKey, opts);
  }

  /**
   * A vault from an already unlocked master key and known format settings
   * (the mount uses this after the CLI has read the config and password).
   * The key is copied; the caller may wipe its own copy.
   */
  static async fromKey(cipherdir: string, masterKey: Uint8Array, format: FormatOptions, config: ConfFile | null, opts: VaultCommonOptions = {}): Promise<Vault> {
    await assertDir(cipherdir);
    if (masterKey.length !== 32) throw configError('EMASTERKEY', `master key must be 32 bytes, got ${masterKey.length}`);
    return new Vault(cipherdir, { ...format }, config, Buffer.from(masterKey), opts);
  }

  /** The master key (a copy). Handle with care. */
  getMasterKey(): Uint8Array {
    this.assertOpen();
    return Buffer.from(this.masterKey);
  }

  /** Closes every open handle and forgets the key material. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.openHandles].map((h) => h.close()));
    this.closed = true;
    this.masterKey.fill(0);
    this.masterKey = new Uint8Array(0);
    this.mapper.clear();
  }

  /**
   * For a mount's native read path (src/fuse/native-reads.ts): the content
   * cipher and a fresh copy of its key when that path can read this
   * filesystem, else null. The caller wipes the key once handed over.
   */
  nativeReadKey(): NativeContentKey | null {
    this.assertOpen();
    return nativeContentKey(this.masterKey, this.format, this.backend);
  }

  /** Write fences (./write-fences.ts) for the files opened from now on; `buffer` holds the counters. */
  useWriteFences(buffer: ArrayBuffer): void {
    this.files.useFences(new WriteFences(buffer));
  }

  // ------------------------------------------------------------ path helpers

  /** The backing path of a plaintext path (for tools and tests). */
  async cipherPath(path: string): Promise<string> {
    this.assertOpen();
    return this.mapper.cipherPath(path, 'lstat');
  }

  /**
   * The control socket's EncryptPath (gocryptfs semantics): the cipher path,
   * relative to the cipher directory, of a relative plaintext path.
   */
  async encryptPath(plainPath: string): Promise<string> {
    this.assertOpen();
    return encryptPathAt({ root: this.cipherdir, format: this.format, codec: this.ciphers.names }, plainPath);
  }

  /** The control socket's DecryptPath: the plaintext path of a relative cipher path. */
  async decryptPath(cipherPath: string): Promise<string> {
    this.assertOpen();
    return decryptPathAt({ root: this.cipherdir, format: this.format, codec: this.ciphers.names }, cipherPath);
  }

  private assertOpen(): void {
    if (this.closed) throw fsError('EBADF', undefined, undefined, 'vault is closed');
  }

  private assertWritable(syscall: string, path: string): void {
    this.assertOpen();
    if (this.readOnly) throw fsError('EROFS', syscall, path);
  }

  /** Rewrites a backing error so that it names the plaintext path, never the cipher path. */
  private plainError(err: unknown, syscall: string, path: string): unknown {
    if (hasCode(err) && err.syscall !== undefined) {
      return fsError(err.code, syscall, path);
    }
    return err;
  }

  private async entry(path: string, syscall: string): Promise<CipherEntry> {
    this.assertOpen();
    return this.mapper.entry(path, syscall);
  }

  private async resolve(path: string, syscall: string): Promise<string> {
    this.assertOpen();
    return this.mapper.cipherPath(path, syscall);
  }

  private async lexists(p: string): Promise<boolean> {
    try {
      await fsx.lstat(p);
      return true;
    } catch (err) {
      if (hasCode(err, 'ENOENT')) return false;
      throw err;
    }
  }

  /**
   * Runs `create` for a new entry, writing its long-name file first and
   * removing that again if the creation fails (Documentation/format.md §7.8).
   */
  private async withLongName<T>(e: CipherEntry, create: () => Promise<T>): Promise<T> {
    if (!e.long) return create();
    const existed = await this.lexists(join(e.dir, e.diskName + '.name'));
    await writeLongName(e.dir, e.diskName, e.cname);
    try {
      return await create();
    } catch (err) {
      if (!existed) await deleteLongName(e.dir, e.diskName);
      throw err;
    }
  }

  // ------------------------------------------------------------- metadata

  /**
   * lstat with plaintext sizes (files: content size; symlinks: target
   * length). With `{ bigint: true }` the times keep their nanoseconds.
   */
  async stat(path: string, opts?: { bigint?: false }): Promise<Stats>;
  async stat(path: string, opts: { bigint: true }): Promise<BigIntStats>;
  async stat(path: string, opts: { bigint?: boolean } = {}): Promise<Stats | BigIntStats> {
    const p = await this.resolve(path, 'lstat');
    let st: Stats | BigIntStats;
    try {
      st = opts.bigint ? await fsx.lstat(p, { bigint: true }) : await fsx.lstat(p);
    } catch (err) {
      throw this.plainError(err, 'lstat', path);
    }
    let size: number | null = null;
    if (st.isFile()) size = cipherSizeToPlainSize(this.ciphers.content.layout, Number(st.size));
    else if (st.isSymbolicLink()) size = Buffer.byteLength(await this.readlinkAt(p, path), 'utf8');
    if (size !== null) setSize(st, size);
    return st;
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.listing(path)).entries.map((e) => e.name);
  }

  /**
   * readdir with each entry's attributes, packed for a mount to hand to the
   * kernel with the listing (d_type, d_ino) and to its attribute cache:
   * one native call for the whole listing where the addon is built (an
   * lstat by full path per entry was a fifth of dbench's time), else lstat
   * and listxattr per entry.
   */
  async readdirPacked(path: string): Promise<PackedListing> {
    const { dir, entries } = await this.listing(path);
    const n = entries.length;
    const disk = entries.map((e) => e.diskName);
    const native = statListing(dir, disk);
    const words = native?.words ?? new Uint32Array(n * STAT_WORDS);
    const flags = new Uint8Array(n);
    const layout = this.ciphers.content.layout;
    for (let i = 0; i < n; i++) {
      if (!native) {
        const st = await fsx.lstat(join(dir, disk[i]!), { bigint: true }).catch(() => null);
        if (st === null) continue;
        putStatWords(words, i, st);
      }
      const type = modeWord(words, i) & C.S_IFMT;
      if (type === 0 || type === C.S_IFLNK) continue;
      if (type === C.S_IFREG) setSizeWords(words, i, cipherSizeToPlainSize(layout, sizeWords(words, i)));
      const none = native ? native.xattrSizes[i] === 0 : await xattr.listAttributes(join(dir, disk[i]!)).then((names) => names.length === 0, () => false);
      flags[i] = LISTED_ATTRS | (none ? LISTED_NO_XATTRS : 0);
    }
    return { names: entries.map((e) => e.name), words, flags };
  }

  /** The visible entries of a directory: plaintext name and name on disk. */
  private async listing(path: string): Promise<{ dir: string; entries: { name: string; diskName: string }[] }> {
    this.assertOpen();
    const { cipherDir: dir, iv } = await this.mapper.dir(path, 'scandir');
    let names: string[];
    try {
      names = await fsx.readdir(dir);
    } catch (err) {
      throw this.plainError(err, 'scandir', path);
    }
    const isRoot = dir === this.cipherdir;
    const codec = this.ciphers.names;
    if (!codec) {
      const visible = names.filter((n) => !(isRoot && (n === CONF_NAME || n === CONF_NAME + '.tmp')));
      return { dir, entries: visible.map((n) => ({ name: n, diskName: n })) };
    }
    const entries: { name: string; diskName: string }[] = [];
    const ivKey = NameMemo.ivKey(iv);
    for (const n of names) {
      if (isRoot && (n === CONF_NAME || n === CONF_NAME + '.tmp')) continue;
      if (this.format.dirIV && n === DIRIV_NAME) continue;
      let cname = n;
      const kind = longNameKind(n);
      if (kind === 'name-file') continue;
      if (kind !== 'content') {
        // Short names are remembered; a long name's .name file is read each time.
        const known = this.nameMemo.get(ivKey, n);
        if (known !== undefined) {
          if (known !== null) entries.push({ name: known, diskName: n });
          else this.log.warn(`${join(dir, n)}: name does not decrypt, hidden`);
          continue;
        }
      }
      if (kind === 'content') {
        const full = await readLongName(dir, n);
        if (full === null || hashLongName(full, this.format.raw64) !== n) {
          this.log.warn(`${join(dir, n)}: long name without a valid .name file, hidden`);
          continue;
        }
        cname = full;
      }
      const plain = codec.decryptName(cname, iv);
      const name = plain === null ? null : plain.toString('utf8');
      if (kind !== 'content') this.nameMemo.set(ivKey, n, name);
      if (name === null) {
        this.log.warn(`${join(dir, n)}: name does not decrypt, hidden`);
        continue;
      }
      entries.push({ name, diskName: n });
    }
    return { dir, entries };
  }

  async chmod(path: string, mode: number): Promise<void> {
    this.assertWritable('chmod', path);
    const p = await this.resolve(path, 'chmod');
    await fsx.chmod(p, mode).catch((err) => {
      throw this.plainError(err, 'chmod', path);
    });
  }

  async chown(path: string, uid: number, gid: number): Promise<void> {
    this.assertWritable('lchown', path);
    const p = await this.resolve(path, 'lchown');
    await fsx.lchown(p, uid, gid).catch((err) => {
      throw this.plainError(err, 'lchown', path);
    });
  }

  /** Sets access and modification times (of a symlink itself, not its target). */
  async utimes(path: string, atime: number | Date, mtime: number | Date): Promise<void> {
    this.assertWritable('lutimes', path);
    const p = await this.resolve(path, 'lutimes');
    await fsx.lutimes(p, atime, mtime).catch((err) => {
      throw this.plainError(err, 'lutimes', path);
    });
  }

  async statfs(): Promise<StatsFs> {
    this.assertOpen();
    return fsp.statfs(this.cipherdir);
  }

  /** Checks access permissions (fs.constants.R_OK/W_OK/X_OK/F_OK) on the entry. */
  async access(path: string, mode: number = C.F_OK): Promise<void> {
    const p = await this.resolve(path, 'access');
    if (this.readOnly && (mode & C.W_OK) !== 0) throw fsError('EROFS', 'access', path);
    await fsx.access(p, mode).catch((err) => {
      throw this.plainError(err, 'access', path);
    });
  }

  /**
   * Creates a FIFO, socket, character or block device (Documentation/format.md §2.3: the
   * same node type on disk, name encrypted, no content). Node has no
   * mknod(2): with the `mknod` option this uses the native one, otherwise
   * coreutils' mknod(1), which cannot make sockets (EOPNOTSUPP).
   */
  async mknod(path: string, mode: number, dev = 0): Promise<void> {
    this.assertWritable('mknod', path);
    const type = mode & C.S_IFMT;
    if (type === C.S_IFREG || type === 0) {
      await (await this.open(path, C.O_WRONLY | C.O_CREAT | C.O_EXCL, mode & 0o7777)).close();
      return;
    }
    if (![C.S_IFIFO, C.S_IFSOCK, C.S_IFCHR, C.S_IFBLK].includes(type)) throw fsError('EINVAL', 'mknod', path);
    const e = await this.entry(path, 'mknod');
    const make = async (): Promise<void> => {
      if (this.nativeMknod) {
        const rc = this.nativeMknod(e.path, mode, dev);
        if (rc !== 0) throw Object.assign(fsError(errnoName(-rc), 'mknod'), { errno: -rc });
        await fsx.chmod(e.path, mode & 0o7777); // mknod(2) applies the umask
      } else {
        await runMknod(e.path, mode, dev);
      }
    };
    try {
      await this.withLongName(e, make);
    } catch (err) {
      throw this.plainError(err, 'mknod', path);
    }
  }

  // ---------------------------------------------------------------- files

  /**
   * Opens a regular file. `flags` as for fs.open ('r', 'w+', 'a', ...) or
   * O_* numbers; `mode` applies when the file is created.
   */
  async open(path: string, flags: string | number = 'r', mode = 0o666): Promise<VaultFile> {
    const f = parseOpenFlags(flags);
    if (isWritable(f) || (f & (C.O_CREAT | C.O_TRUNC)) !== 0) this.assertWritable('open', path);
    else this.assertOpen();
    const e = await this.entry(path, 'open');
    const create = (f & C.O_CREAT) !== 0 && e.long && !(await this.lexists(e.path));
    let fd: number;
    try {
      const doOpen = (): Promise<number> => openFd(e.path, backingFlags(f), mode);
      fd = create ? await this.withLongName(e, doOpen) : await doOpen();
    } catch (err) {
      throw this.plainError(err, 'open', path);
    }
    let st: Stats;
    try {
      st = await fstat(fd);
      if (st.isDirectory()) throw fsError('EISDIR', 'open', path);
      if (!st.isFile()) throw fsError('EINVAL', 'open', path, 'not a regular file');
    } catch (err) {
      await closeFd(fd);
      throw err;
    }
    const state = this.files.acquire(st.dev, st.ino);
    const content: ContentFile = { fd, state, cipher: this.ciphers.content, cipherPath: e.path, log: this.log, buffers: this.cipherBuffers, prealloc: this.prealloc };
    const handle: VaultFile = new VaultFile(content, f, path, () => {
      this.files.release(st.dev, st.ino);
      this.openHandles.delete(handle);
    });
    this.openHandles.add(handle);
    if ((f & C.O_TRUNC) !== 0 && isWritable(f)) {
      try {
        await state.exclusive(() => truncateContent(content, 0));
      } catch (err) {
        await handle.close();
        throw err;
      }
    }
    return handle;
  }

  /** The whole content of a file. */
  async readFile(path: string): Promise<Buffer> {
    const h = await this.open(path, 'r');
    try {
      const parts: Buffer[] = [];
      for (let pos = 0; ; ) {
        const chunk = await h.read(CHUNK, pos);
        if (chunk.length === 0) break;
        parts.push(Buffer.from(chunk));
        pos += chunk.length;
        if (chunk.length < CHUNK) break;
      }
      return Buffer.concat(parts);
    } finally {
      await h.close();
    }
  }

  /** Creates or replaces a file with `data`. */
  async writeFile(path: string, data: Uint8Array | string, opts: { mode?: number; flag?: string | number } = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const h = await this.open(path, opts.flag ?? 'w', opts.mode ?? 0o666);
    try {
      for (let pos = 0; pos < bytes.length; pos += CHUNK) {
        await h.write(bytes.subarray(pos, Math.min(pos + CHUNK, bytes.length)), pos);
      }
    } finally {
      await h.close();
    }
  }

  async truncate(path: string, length = 0): Promise<void> {
    const h = await this.open(path, 'r+');
    try {
      await h.truncate(length);
    } finally {
      await h.close();
    }
  }

  async unlink(path: string): Promise<void> {
    this.assertWritable('unlink', path);
    const e = await this.entry(path, 'unlink');
    try {
      await fsx.unlink(e.path);
    } catch (err) {
      throw this.plainError(err, 'unlink', path);
    }
    if (e.long) await deleteLongName(e.dir, e.diskName);
  }

  // ---------------------------------------------------------- directories

  async mkdir(path: string, mode = 0o777): Promise<void> {
    this.assertWritable('mkdir', path);
    const e = await this.entry(path, 'mkdir');
    try {
      await this.withLongName(e, () => fsx.mkdir(e.path, { mode }));
    } catch (err) {
      throw this.plainError(err, 'mkdir', path);
    }
    if (!this.format.dirIV) return;
    try {
      // The diriv must be written before anything else goes in; make the
      // directory writable for that moment if its mode says otherwise (format.md §2.4).
      const st = await fsx.lstat(e.path);
      const m = st.mode & 0o7777;
      const lacksWrite = (m & 0o300) !== 0o300;
      if (lacksWrite) await fsx.chmod(e.path, m | 0o700);
      await createDirIV(e.path);
      if (lacksWrite) await fsx.chmod(e.path, m);
    } catch (err) {
      await fsx.rm(join(e.path, DIRIV_NAME), { force: true }).catch(() => undefined);
      await fsx.rmdir(e.path).catch(() => undefined);
      if (e.long) await deleteLongName(e.dir, e.diskName);
      throw this.plainError(err, 'mkdir', path);
    }
  }

  /** Removes an empty directory (ENOTEMPTY otherwise), as gocryptfs does (format.md §7.7). */
  async rmdir(path: string): Promise<void> {
    this.assertWritable('rmdir', path);
    const e = await this.entry(path, 'rmdir');
    try {
      await this.rmdirEntry(e);
    } catch (err) {
      throw this.plainError(err, 'rmdir', path);
    }
  }

  private async rmdirEntry(e: CipherEntry): Promise<void> {
    if (this.format.dirIV) {
      const names = await fsx.readdir(e.path);
      if (names.some((n) => n !== DIRIV_NAME)) throw fsError('ENOTEMPTY', 'rmdir');
      if (names.includes(DIRIV_NAME)) {
        const parked = join(e.dir, `${DIRIV_NAME}.rmdir.${randomBytes(8).readBigUInt64BE()}`);
        await fsx.rename(join(e.path, DIRIV_NAME), parked);
        try {
          await fsx.rmdir(e.path);
        } catch (err) {
          await fsx.rename(parked, join(e.path, DIRIV_NAME)).catch(() => undefined);
          throw err;
        }
        await fsx.unlink(parked);
      } else {
        await fsx.rmdir(e.path);
      }
    } else {
      await fsx.rmdir(e.path);
    }
    this.mapper.forgetTree(e.path);
    if (e.long) await deleteLongName(e.dir, e.diskName);
  }

  // -------------------------------------------------------------- renames

  /** Renames a file or directory, replacing the target as rename(2) does. */
  async rename(from: string, to: string): Promise<void> {
    this.assertWritable('rename', from);
    const src = await this.entry(from, 'rename');
    const dst = await this.entry(to, 'rename');
    if (src.path === dst.path) return;
    const doRename = (): Promise<void> => this.withLongName(dst, () => fsx.rename(src.path, dst.path));
    try {
      try {
        await doRename();
      } catch (err) {
        // A plaintext-empty directory is not empty on disk (its diriv): remove it and retry.
        if (!hasCode(err, 'ENOTEMPTY', 'EEXIST') || !(await this.isEmptyCipherDir(dst.path))) throw err;
        await this.rmdirEntry(dst);
        await doRename();
      }
    } catch (err) {
      throw this.plainError(err, 'rename', from);
    }
    if (src.long) await deleteLongName(src.dir, src.diskName);
    this.mapper.forgetTree(src.path);
    this.mapper.forgetTree(dst.path);
  }

  private async isEmptyCipherDir(p: string): Promise<boolean> {
    try {
      const names = await fsx.readdir(p);
      return names.every((n) => this.format.dirIV && n === DIRIV_NAME);
    } catch {
      return false;
    }
  }

  async link(existing: string, newPath: string): Promise<void> {
    this.assertWritable('link', newPath);
    const src = await this.resolve(existing, 'link');
    const dst = await this.entry(newPath, 'link');
    try {
      await this.withLongName(dst, () => fsx.link(src, dst.path));
    } catch (err) {
      throw this.plainError(err, 'link', newPath);
    }
  }

  // ------------------------------------------------------------- symlinks

  /** Creates `path` as a symlink pointing to `target` (Documentation/format.md §8.1). */
  async symlink(target: string, path: string): Promise<void> {
    this.assertWritable('symlink', path);
    const e = await this.entry(path, 'symlink');
    const stored = this.encryptSymlinkTarget(target);
    try {
      await this.withLongName(e, () => fsx.symlink(stored, e.path));
    } catch (err) {
      throw this.plainError(err, 'symlink', path);
    }
  }

  async readlink(path: string): Promise<string> {
    const p = await this.resolve(path, 'readlink');
    return this.readlinkAt(p, path);
  }

  private encryptSymlinkTarget(target: string): string {
    if (this.format.plaintextNames) return target;
    return b64Encode(this.ciphers.content.sealMessage(Buffer.from(target, 'utf8')), this.format.raw64);
  }

  private async readlinkAt(cipherPath: string, path: string): Promise<string> {
    let stored: string;
    try {
      stored = await fsx.readlink(cipherPath);
    } catch (err) {
      throw this.plainError(err, 'readlink', path);
    }
    if (this.format.plaintextNames) return stored;
    const sealed = b64Decode(stored, this.format.raw64);
    try {
      if (sealed === null) throw new BlockError('target is not valid base64', -1);
      return this.ciphers.content.openMessage(sealed).toString('utf8');
    } catch (err) {
      this.log.warn(`${cipherPath}: symlink target does not decrypt: ${(err as Error).message}`);
      throw fsError('EIO', 'readlink', path);
    }
  }

  // --------------------------------------------------------------- xattrs

  /**
   * The cipher path to read or write xattrs on, or null for a symlink: the
   * xattr library follows links (the cipher link points nowhere), and Linux
   * keeps no user xattrs on symlinks anyway.
   */
  private async xattrTarget(path: string, syscall: string): Promise<string | null> {
    const p = await this.resolve(path, syscall);
    try {
      return (await fsx.lstat(p)).isSymbolicLink() ? null : p;
    } catch (err) {
      throw this.plainError(err, syscall, path);
    }
  }

  private checkXattrName(name: string, syscall: string, path: string): void {
    if (name.length === 0 || name.includes('\0')) throw fsError('EINVAL', syscall, path, 'bad xattr name');
  }

  /** The value of an extended attribute (ENODATA when absent). */
  async getxattr(path: string, name: string): Promise<Buffer> {
    this.checkXattrName(name, 'getxattr', path);
    const p = await this.xattrTarget(path, 'getxattr');
    if (p === null) throw fsError('ENODATA', 'getxattr', path);
    const stored = this.ciphers.xattrNames.encryptXattrName(name);
    let value: Buffer;
    try {
      value = await xattr.getAttribute(p, stored);
    } catch (err) {
      throw this.plainError(xattrError(err, 'getxattr'), 'getxattr', path);
    }
    if (stored === name) return value; // ACLs are stored in clear
    try {
      return this.ciphers.content.openMessage(value);
    } catch (err) {
      this.log.warn(`${p}: xattr ${stored} does not decrypt: ${(err as Error).message}`);
      throw fsError('EIO', 'getxattr', path);
    }
  }

  async setxattr(path: string, name: string, value: Uint8Array, mode?: XattrSetMode): Promise<void> {
    this.assertWritable('setxattr', path);
    this.checkXattrName(name, 'setxattr', path);
    const p = await this.xattrTarget(path, 'setxattr');
    if (p === null) throw fsError('EPERM', 'setxattr', path, 'no user xattrs on symlinks');
    const stored = this.ciphers.xattrNames.encryptXattrName(name);
    try {
      if (mode !== undefined) {
        const exists = (await xattr.listAttributes(p)).includes(stored);
        if (mode === 'create' && exists) throw fsError('EEXIST', 'setxattr');
        if (mode === 'replace' && !exists) throw fsError('ENODATA', 'setxattr');
      }
      const v = stored === name ? Buffer.from(value) : this.ciphers.content.sealMessage(value);
      await xattr.setAttribute(p, stored, v);
    } catch (err) {
      throw this.plainError(xattrError(err, 'setxattr'), 'setxattr', path);
    }
  }

  async listxattr(path: string): Promise<string[]> {
    const p = await this.xattrTarget(path, 'listxattr');
    if (p === null) return [];
    let names: string[];
    try {
      names = await xattr.listAttributes(p);
    } catch (err) {
      throw this.plainError(xattrError(err, 'listxattr'), 'listxattr', path);
    }
    const out: string[] = [];
    for (const n of names) {
      const plain = this.ciphers.xattrNames.decryptXattrName(n);
      if (plain !== null) out.push(plain);
      else if (n.startsWith('user.gocryptfs.')) this.log.warn(`${p}: xattr name ${n} does not decrypt, hidden`);
    }
    return out;
  }

  async removexattr(path: string, name: string): Promise<void> {
    this.assertWritable('removexattr', path);
    this.checkXattrName(name, 'removexattr', path);
    const p = await this.xattrTarget(path, 'removexattr');
    if (p === null) throw fsError('ENODATA', 'removexattr', path);
    try {
      await xattr.removeAttribute(p, this.ciphers.xattrNames.encryptXattrName(name));
    } catch (err) {
      throw this.plainError(xattrError(err, 'removexattr'), 'removexattr', path);
    }
  }
}

/** Linux's dev_t encoding (glibc gnu_dev_major/minor). */
function devMajor(dev: number): number {
  return ((dev >>> 8) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
}
function devMinor(dev: number): number {
  return (dev & 0xff) | ((dev >>> 12) & ~0xff);
}

/** The errno name of a number (EEXIST for 17, ...). */
function errnoName(errno: number): string {
  const table = osConstants.errno as Record<string, number>;
  return Object.keys(table).find((k) => table[k] === errno) ?? 'EIO';
}

/** mknod(1) for FIFOs and devices; its failure becomes a coded error (EEXIST, EPERM, ...). */
async function runMknod(path: string, mode: number, dev: number): Promise<void> {
  const type = mode & C.S_IFMT;
  if (type === C.S_IFSOCK) throw fsError('EOPNOTSUPP', 'mknod', undefined, 'sockets need the native mknod');
  const kind = type === C.S_IFIFO ? ['p'] : [type === C.S_IFCHR ? 'c' : 'b', String(devMajor(dev)), String(devMinor(dev))];
  try {
    await execFileP('mknod', ['-m', (mode & 0o7777).toString(8), path, ...kind]);
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? '');
    const code = /File exists/.test(stderr) ? 'EEXIST' : /not permitted/.test(stderr) ? 'EPERM' : /No such file/.test(stderr) ? 'ENOENT' : /Permission denied/.test(stderr) ? 'EACCES' : 'EIO';
    throw fsError(code, 'mknod', undefined, stderr.trim());
  }
}

/** Make sure an xattr error names its syscall, so plainError rewrites its path. */
function xattrError(err: unknown, syscall: string): unknown {
  if (hasCode(err) && (err as CodedError).syscall === undefined) (err as CodedError).syscall = syscall;
  return err;
}

async function assertDir(dir: string): Promise<void> {
  let st: Stats;
  try {
    st = await fsx.stat(dir);
  } catch (err) {
    throw fsError(hasCode(err) ? err.code : 'ENOENT', 'stat', dir, 'cipher directory is not accessible');
  }
  if (!st.isDirectory()) throw fsError('ENOTDIR', 'stat', dir, 'cipher directory is not a directory');
}

async function assertEmptyDir(dir: string): Promise<void> {
  await assertDir(dir);
  const entries = await fsx.readdir(dir);
  if (entries.length > 0) throw fsError('ENOTEMPTY', 'init', dir, 'cipher directory is not empty');
}

/** Format settings from init options or -masterkey flags, with gocryptfs's defaults. */
export function formatFromInitOptions(o: VaultFormatOptions): FormatOptions {
  const cipher = o.cipher ?? 'aes-gcm';
  const hkdf = o.hkdf ?? true;
  const plaintextNames = o.plaintextNames ?? false;
  const longNameMax = o.longNameMax ?? DEFAULT_LONGNAMEMAX;
  if (!Number.isInteger(longNameMax) || longNameMax < 62 || longNameMax > 255) {
    throw fsError('EINVAL', undefined, undefined, `longnamemax must be between 62 and 255, got ${longNameMax}`);
  }
  if (cipher === 'xchacha' && !hkdf) throw fsError('EINVAL', undefined, undefined, 'XChaCha20-Poly1305 requires HKDF');
  return {
    cipher,
    hkdf,
    plaintextNames,
    dirIV: !plaintextNames && !(o.deterministicNames ?? false),
    raw64: !plaintextNames && (o.raw64 ?? true),
    longNameMax: plaintextNames ? DEFAULT_LONGNAMEMAX : longNameMax,
    longNames: !plaintextNames,
  };
}
