/**
 * A gocryptfs cipher directory as an API on plaintext paths, with no FUSE
 * in it: the mount and library users both call this. The operations live
 * in node-*.ts by concern (attributes, directories, opening and creating,
 * names and links, xattrs); every one reaches the cipher directory through
 * ./backing (directory descriptors and *at() calls, never a full path).
 */
import { constants as C, type BigIntStats, type Stats, type StatsFs } from 'node:fs';
import { join, posix } from 'node:path';
import { CONF_NAME } from '../config/conf-name.js';
import { DEFAULT_LONGNAMEMAX } from '../config/format.js';
import type { ConfFile, FormatOptions } from '../config/index.js';
import { compileGlob, createDirIV, NameMemo, type ConflictEntry } from '../names/index.js';
import { configError, fsError, hasCode, sameCode } from '../util/errors.js';
import { stderrLogger } from '../util/logger.js';
import { atCalls, type AtCalls, type TimeArg } from '../util/sys-at.js';
import { FileStateTable } from './file-state.js';
import { WriteFences } from './write-fences.js';
import { registerInternalAccess } from './internal-access.js';
import { deriveCiphers, nativeContentKey, nativeNameKey, type VaultCiphers } from './keys.js';
import type { BackendName } from '../crypto/index.js';
import { arithmeticInJs } from '../crypto/aead.js';
import {
  passwordBytes,
  type VaultCommonOptions,
  type VaultFormatOptions,
  type VaultInitOptions,
  type VaultOpenOptions,
} from './options.js';
import { CipherTree, DIR_LIFETIME_MS, openCipherRoot } from './backing/index.js';
import { BufferPool } from './buffer-pool.js';
import { Preallocator } from './prealloc.js';
import { describeStore, type BackingStore } from './backing/store.js';
import type { VaultFile } from './vault-file.js';
import { decryptPathAt, encryptPathAt } from './ctlsock-paths.js';
import type { Owner, VaultCore } from './vault-core.js';
import * as attrs from './node-attrs.js';
import * as dirs from './node-dir-ops.js';
import * as files from './node-open-create.js';
import * as links from './node-links.js';
import * as xattrs from './node-xattr.js';

export { LISTED_ATTRS, LISTED_NO_XATTRS, type PackedListing } from './node-dir-ops.js';
export type { RenameMode } from './node-links.js';
export type { XattrSetMode } from './node-xattr.js';
export type { Owner } from './vault-core.js';

/** Read and write in pieces of this size in readFile/writeFile. */
const CHUNK = 1 << 20;

/**
 * The config file's reading, writing and unlocking, loaded by the calls that
 * need them: a mount's background process gets its key and format from
 * the command and never loads them.
 */
function configModule(): Promise<typeof import('../config/index.js')> {
  return import('../config/index.js');
}

export class Vault {
  /** The cipher directory. */
  readonly cipherdir: string;
  /** Format settings in force. */
  readonly format: FormatOptions;
  /** The loaded config; null when opened with a master key. */
  readonly config: ConfFile | null;
  readonly readOnly: boolean;
  /** The filesystem that holds the cipher directory (type, source, mount point), as found at open. */
  readonly store: BackingStore;
  private readonly core: VaultCore;
  private readonly ciphers: VaultCiphers;
  private readonly backend: BackendName;
  private readonly tree: CipherTree;
  private readonly files: FileStateTable;
  private readonly openHandles: Set<VaultFile>;
  private masterKey: Uint8Array;
  private closed = false;

  private constructor(cipherdir: string, format: FormatOptions, config: ConfFile | null, masterKey: Uint8Array, ciphers: VaultCiphers, tree: CipherTree, opts: VaultCommonOptions) {
    this.cipherdir = cipherdir;
    this.format = format;
    this.config = config;
    this.masterKey = masterKey;
    this.readOnly = opts.readOnly ?? false;
    this.backend = opts.backend ?? 'node';
    this.ciphers = ciphers;
    this.tree = tree;
    this.files = new FileStateTable();
    this.openHandles = new Set<VaultFile>();
    this.store = describeStore(cipherdir);
    const log = opts.logger ?? stderrLogger;
    this.core = {
      tree,
      at: tree.at,
      format,
      ciphers,
      log,
      readOnly: this.readOnly,
      files: this.files,
      openHandles: this.openHandles,
      prealloc: new Preallocator(!(opts.noPrealloc ?? false), log, this.store),
      // Ciphertext buffers, sized for the largest FUSE read or write (128 KiB, unaligned: 33 blocks).
      cipherBuffers: new BufferPool(33 * ciphers.content.layout.cipherBlockSize),
      // Decrypted short names of listings, by directory IV (never stale: see NameMemo).
      nameMemo: new NameMemo(),
      assertOpen: () => this.assertOpen(),
    };
    if (ciphers.names !== null && !(opts.noConflicts ?? false)) tree.showConflictsWith((dir, shown) => dirs.findConflictEntry(this.core, dir, shown));
    registerInternalAccess(this, {
      masterKey: () => {
        this.assertOpen();
        return Buffer.from(this.masterKey);
      },
      contentKey: () => {
        this.assertOpen();
        return nativeContentKey(this.masterKey, this.format, this.backend);
      },
      nameKey: () => {
        this.assertOpen();
        return this.tree.badname.length > 0 ? null : nativeNameKey(this.masterKey, this.format, this.backend);
      },
      rootFd: () => {
        this.assertOpen();
        return this.tree.rootFd;
      },
      forgetCipherDirs: (cipherPath) => {
        if (cipherPath === undefined) this.tree.clear();
        else this.tree.forgetTree(posix.join(this.tree.rootPath, cipherPath));
      },
      forgetCaches: () => {
        this.tree.clear();
        this.core.nameMemo.clear();
      },
      useWriteFences: (buffer, slots) => this.files.useFences(new WriteFences(buffer, slots)),
    });
  }

  /** Opens the cipher tree and builds the Vault around it. */
  private static async make(cipherdir: string, format: FormatOptions, config: ConfFile | null, masterKey: Uint8Array, opts: VaultCommonOptions): Promise<Vault> {
    const ciphers = await deriveCiphers(masterKey, format, opts.backend ?? 'node');
    const badname = (opts.badname ?? []).map(compileGlob);
    const tree = await CipherTree.open(cipherdir, atCalls(), format, ciphers.names, opts.logger ?? stderrLogger, badname, opts.sharedStorage ? 0 : DIR_LIFETIME_MS);
    return new Vault(cipherdir, format, config, masterKey, ciphers, tree, opts);
  }

  // ---------------------------------------------------------------- creation

  /**
   * Creates a new cipher directory in the existing empty directory
   * `cipherdir` (gocryptfs -init) and opens it.
   */
  static async init(cipherdir: string, opts: VaultInitOptions): Promise<Vault> {
    await assertEmptyDir(cipherdir);
    const format = formatFromInitOptions(opts);
    const { createConf, writeConfFile } = await configModule();
    const { conf, masterKey } = await createConf({
      format,
      password: passwordBytes(opts.password),
      ...(opts.scryptLogN !== undefined && { scryptLogN: opts.scryptLogN }),
      ...(opts.creator !== undefined && { creator: opts.creator }),
    });
    await writeConfFile(opts.configPath ?? join(cipherdir, CONF_NAME), conf);
    if (format.dirIV) await atCipherdir(cipherdir, (at, fd) => createDirIV(at, fd));
    return Vault.make(cipherdir, format, conf, masterKey, opts);
  }

  /** Opens an existing cipher directory with its password or master key. */
  static async open(cipherdir: string, opts: VaultOpenOptions): Promise<Vault> {
    await assertDir(cipherdir);
    const { confFormat, parseMasterKeyHex, readConfFile, unlockConf } = await configModule();
    if ('masterkey' in opts) {
      const key = typeof opts.masterkey === 'string' ? parseMasterKeyHex(opts.masterkey) : Buffer.from(opts.masterkey);
      if (key.length !== 32) throw configError('EMASTERKEY', `master key must be 32 bytes, got ${key.length}`);
      return Vault.make(cipherdir, formatFromInitOptions(opts), null, key, opts);
    }
    const conf = await readConfFile(opts.configPath ?? join(cipherdir, CONF_NAME));
    const masterKey = await unlockConf(conf, passwordBytes(opts.password));
    return Vault.make(cipherdir, confFormat(conf), conf, masterKey, opts);
  }

  /**
   * A vault from an already unlocked master key and known format settings
   * (the mount uses this after the CLI has read the config and password).
   * The key is copied; the caller may wipe its own copy.
   */
  static async fromKey(cipherdir: string, masterKey: Uint8Array, format: FormatOptions, config: ConfFile | null, opts: VaultCommonOptions = {}): Promise<Vault> {
    await assertDir(cipherdir);
    if (masterKey.length !== 32) throw configError('EMASTERKEY', `master key must be 32 bytes, got ${masterKey.length}`);
    return Vault.make(cipherdir, { ...format }, config, Buffer.from(masterKey), opts);
  }

  /** Closes every open handle and forgets the key material. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.openHandles].map((h) => h.close()));
    this.closed = true;
    this.masterKey.fill(0);
    this.masterKey = new Uint8Array(0);
    await this.tree.close();
  }

  /** Whether the content cipher's arithmetic runs in JavaScript (crypto/aead.ts arithmeticInJs). */
  get cipherInJs(): boolean {
    return arithmeticInJs(this.ciphers.content.aead);
  }

  /** Whether writes reserve their space first (for a native write path, which must do as the vault does). */
  get preallocates(): boolean {
    return this.core.prealloc.active;
  }

  /** Which system calls reach the cipher directory: 'native' (*at() calls) or 'proc' (/proc/self/fd paths). */
  get backingCalls(): AtCalls['kind'] {
    return this.tree.at.kind;
  }

  // ------------------------------------------------------------ path helpers

  /** The backing path of a plaintext path (for tools and tests; the Vault itself never uses it). */
  async cipherPath(path: string): Promise<string> {
    this.assertOpen();
    return this.tree.cipherPath(path);
  }

  /**
   * The control socket's EncryptPath (gocryptfs semantics): the cipher path,
   * relative to the cipher directory, of a relative plaintext path.
   */
  async encryptPath(plainPath: string): Promise<string> {
    this.assertOpen();
    return encryptPathAt(this.pathContext(), plainPath);
  }

  /** The control socket's DecryptPath: the plaintext path of a relative cipher path (names that are not UTF-8 come out lossy; see decryptPathBytes). */
  async decryptPath(cipherPath: string): Promise<string> {
    return (await this.decryptPathBytes(cipherPath)).toString('utf8');
  }

  /** decryptPath's bytes, exact for names that are not UTF-8. */
  async decryptPathBytes(cipherPath: string): Promise<Buffer> {
    this.assertOpen();
    return decryptPathAt(this.pathContext(), cipherPath);
  }

  private pathContext(): Parameters<typeof encryptPathAt>[0] {
    return { at: this.tree.at, rootFd: this.tree.rootFd, format: this.format, codec: this.ciphers.names };
  }

  private assertOpen(): void {
    if (this.closed) throw fsError('EBADF', undefined, undefined, 'vault is closed');
  }

  // ------------------------------------------------------------- metadata

  /**
   * lstat with plaintext sizes (files: content size; symlinks: target
   * length). With `{ bigint: true }` the times keep their nanoseconds.
   */
  async stat(path: string, opts?: { bigint?: false }): Promise<Stats>;
  async stat(path: string, opts: { bigint: true }): Promise<BigIntStats>;
  async stat(path: string, opts: { bigint?: boolean } = {}): Promise<Stats | BigIntStats> {
    return attrs.stat(this.core, path, opts.bigint ?? false);
  }

  /** stat as the 22 words of src/util/stat-words.ts (what a mount hands to the kernel). */
  async statWords(path: string): Promise<Uint32Array> {
    return attrs.statWords(this.core, path);
  }

  async readdir(path: string): Promise<string[]> {
    return dirs.readdir(this.core, path);
  }

  /**
   * The sync conflict copies in directory `path`, each as its listing shows
   * it (none when opened with noConflicts): which tool made it, the
   * plaintext name it is a version of, and its name on disk
   * (Documentation/format.md §7.12). Resolve one by renaming it to a clean
   * name, or by unlinking it.
   */
  async conflicts(path: string): Promise<ConflictEntry[]> {
    return dirs.conflicts(this.core, path);
  }

  /** readdir with each entry's attributes, packed for a mount (see node-dir-ops.ts). */
  async readdirPacked(path: string): Promise<dirs.PackedListing> {
    return dirs.readdirPacked(this.core, path);
  }

  async chmod(path: string, mode: number): Promise<void> {
    return attrs.chmod(this.core, path, mode);
  }

  /** chown of the entry itself (a symlink's own owner); -1 leaves that id as it is. */
  async chown(path: string, uid: number, gid: number): Promise<void> {
    return attrs.chown(this.core, path, uid, gid);
  }

  /** Sets access and modification times (of a symlink itself, not its target), in seconds or as Dates. */
  async utimes(path: string, atime: number | Date, mtime: number | Date): Promise<void> {
    return attrs.utimens(this.core, path, attrs.timeArg(atime), attrs.timeArg(mtime));
  }

  /** utimes to the nanosecond: [seconds, nanoseconds], 'now', or null to leave a time as it is. */
  async utimens(path: string, atime: TimeArg, mtime: TimeArg): Promise<void> {
    return attrs.utimens(this.core, path, atime, mtime);
  }

  async statfs(): Promise<StatsFs> {
    return attrs.statfs(this.core);
  }

  /** Checks access permissions (fs.constants.R_OK/W_OK/X_OK/F_OK) on the entry. */
  async access(path: string, mode: number = C.F_OK): Promise<void> {
    return attrs.access(this.core, path, mode);
  }

  /** Creates a FIFO, socket, character or block device (owned by `owner`, see Owner). */
  async mknod(path: string, mode: number, dev = 0, owner?: Owner): Promise<void> {
    return files.mknod(this.core, path, mode, dev, owner);
  }

  // ---------------------------------------------------------------- files

  /**
   * Opens a regular file. `flags` as for fs.open ('r', 'w+', 'a', ...) or
   * O_* numbers; `mode` and `owner` apply when the file is created.
   */
  async open(path: string, flags: string | number = 'r', mode = 0o666, owner?: Owner): Promise<VaultFile> {
    return files.open(this.core, path, flags, mode, owner);
  }

  /**
   * @internal A handle over `fd`, a cipher file a mount's native open or
   * create opened (src/fuse/native-fast-path.ts) for `access` (O_RDONLY,
   * O_WRONLY or O_RDWR); the handle closes it.
   */
  async adopt(fd: number, path: string, access?: number): Promise<VaultFile> {
    return files.adopt(this.core, fd, path, access);
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
  async writeFile(path: string, data: Uint8Array | string, opts: { mode?: number; flag?: string | number; owner?: Owner } = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const h = await this.open(path, opts.flag ?? 'w', opts.mode ?? 0o666, opts.owner);
    try {
      for (let pos = 0; pos < bytes.length; pos += CHUNK) {
        await h.write(bytes.subarray(pos, Math.min(pos + CHUNK, bytes.length)), pos);
      }
    } finally {
      await h.close();
    }
  }

  /** truncate(2); with `dropSetIdBits`, as an unprivileged caller's (VaultFile.dropSetIdBits). */
  async truncate(path: string, length = 0, opts: { dropSetIdBits?: boolean } = {}): Promise<void> {
    const h = await this.open(path, 'r+');
    try {
      if (opts.dropSetIdBits) await h.dropSetIdBits();
      await h.truncate(length);
    } finally {
      await h.close();
    }
  }

  async unlink(path: string): Promise<void> {
    return links.unlink(this.core, path);
  }

  // ---------------------------------------------------------- directories

  async mkdir(path: string, mode = 0o777, owner?: Owner): Promise<void> {
    return dirs.mkdir(this.core, path, mode, owner);
  }

  /** Removes an empty directory (ENOTEMPTY otherwise), as gocryptfs does (format.md §7.7). */
  async rmdir(path: string): Promise<void> {
    return dirs.rmdir(this.core, path);
  }

  /** Flushes a directory's cipher directory (fsync(2), or fdatasync with `datasync`): the names made, renamed or removed in it are on disk. */
  async fsyncDir(path: string, opts: { datasync?: boolean } = {}): Promise<void> {
    return dirs.fsyncDir(this.core, path, opts.datasync ?? false);
  }

  // -------------------------------------------------------------- renames

  /**
   * Renames a file or directory, replacing the target as rename(2) does;
   * 'noreplace' and 'exchange' as renameat2(2)'s RENAME_NOREPLACE and
   * RENAME_EXCHANGE, or renameat2's flags as a number (RENAME_WHITEOUT 4
   * too), passed to the backing store's renameat2 as they are. `owner`:
   * whose a whiteout is (as for creations; honoured when running as root).
   */
  async rename(from: string, to: string, mode: links.RenameMode | number = 'replace', owner?: Owner): Promise<void> {
    return links.rename(this.core, from, to, mode, owner);
  }

  async link(existing: string, newPath: string): Promise<void> {
    return links.link(this.core, existing, newPath);
  }

  // ------------------------------------------------------------- symlinks

  /** Creates `path` as a symlink pointing to `target` (Documentation/format.md §8.1). */
  async symlink(target: string, path: string, owner?: Owner): Promise<void> {
    return links.symlink(this.core, target, path, owner);
  }

  async readlink(path: string): Promise<string> {
    return links.readlink(this.core, path);
  }

  // --------------------------------------------------------------- xattrs

  /** The value of an extended attribute (ENODATA when absent). */
  async getxattr(path: string, name: string): Promise<Buffer> {
    return xattrs.getxattr(this.core, path, name);
  }

  async setxattr(path: string, name: string, value: Uint8Array, mode?: xattrs.XattrSetMode): Promise<void> {
    return xattrs.setxattr(this.core, path, name, value, mode);
  }

  async listxattr(path: string): Promise<string[]> {
    return xattrs.listxattr(this.core, path);
  }

  async removexattr(path: string, name: string): Promise<void> {
    return xattrs.removexattr(this.core, path, name);
  }
}

/** Runs `fn` on a descriptor of the cipher directory; a missing or non-directory one fails with the path given. */
async function atCipherdir<T>(dir: string, fn: (at: AtCalls, fd: number) => Promise<T>): Promise<T> {
  const at = atCalls();
  let fd: number;
  try {
    fd = await openCipherRoot(at, dir);
  } catch (err) {
    const code = hasCode(err) ? err.code : 'ENOENT';
    throw fsError(code, 'stat', dir, sameCode(code, 'ENOTDIR') ? 'cipher directory is not a directory' : 'cipher directory is not accessible');
  }
  try {
    return await fn(at, fd);
  } finally {
    await at.close(fd);
  }
}

async function assertDir(dir: string): Promise<void> {
  await atCipherdir(dir, async () => undefined);
}

async function assertEmptyDir(dir: string): Promise<void> {
  const entries = await atCipherdir(dir, (at, fd) => at.readdirat(fd, '.'));
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
    longNames: !plaintextNames && (o.longNames ?? true),
  };
}
