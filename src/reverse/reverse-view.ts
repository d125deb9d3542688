/**
 * Reverse mode (Documentation/format.md §9) as an API with no FUSE in it: a read-only
 * encrypted view of a plaintext directory, addressed by encrypted paths,
 * byte for byte what `gocryptfs -reverse` 2.3 shows.
 *
 * Every value forward mode draws at random is derived from the encrypted
 * path (pathiv.ts): directory IVs, file IDs, block nonces, symlink nonces.
 * Besides the encrypted entries, the view has virtual files: a
 * `gocryptfs.diriv` in every directory (unless plaintext or deterministic
 * names), a `gocryptfs.longname.<hash>.name` next to every hashed name, and
 * in the root `gocryptfs.conf`, which is the source's
 * `.gocryptfs.reverse.conf` (unless -config put the config elsewhere).
 *
 * Plaintext names are handled as bytes (Buffers), so names that are not
 * UTF-8 come through unchanged; encrypted names are ASCII.
 */
import * as fs from 'node:fs';
import { promises as fsp, constants as C, type BigIntStats, type StatsFs } from 'node:fs';
import { join } from 'node:path';
import type { BackendName } from '../crypto/index.js';
import type { FormatOptions } from '../config/index.js';
import { CONF_NAME, confFormat, readConfFile, unlockConf } from '../config/index.js';
import { plainSizeToCipherSize, type ContentCipher } from '../content/index.js';
import { b64Encode, DIRIV_NAME, invalidNameCode, joinPathBytes, LONGNAME_SUFFIX, longNameKind, ZERO_IV, type NameCodec } from '../names/index.js';
import { deriveCiphers, type VaultCiphers } from '../vault/keys.js';
import { fsError, hasCode } from '../util/errors.js';
import { stderrLogger, type Logger } from '../util/logger.js';
import type { Excluder } from './excluder.js';
import { fileIVs, pathIV, type FileIVs } from './pathiv.js';
import { ReverseFile } from './reverse-file.js';
import { InoMap } from './ino-map.js';
import { LongNameIndex, type LongNameEntry } from './long-name-index.js';
import { REVERSE_CONF_NAME } from './conf-name.js';

export { REVERSE_CONF_NAME };
/** Longest encoded symlink target the kernel accepts (gocryptfs: ENAMETOOLONG above). */
const PATH_MAX = 4096;
/** Virtual files: a regular file, read-only for everybody. */
const VIRTUAL_MODE = C.S_IFREG | 0o444;
/** Tags that keep the inode numbers of virtual files apart from real ones (ino-map.ts). */
const INO_TAG = { real: 0n, diriv: 1n, name: 2n } as const;

export interface ReverseViewOptions {
  /** Format settings from the config (the cipher must be AES-SIV). */
  format: FormatOptions;
  /** The config file; shown as the root's gocryptfs.conf unless `configCustom`. */
  configPath: string;
  /** True with -config: the config lives elsewhere and no gocryptfs.conf is shown. */
  configCustom: boolean;
  /** Hidden plaintext paths (-exclude ...); null for none. */
  excluder?: Excluder | null;
  /** -one-file-system: directories on another filesystem (mount points) look empty but for their gocryptfs.diriv. */
  oneFileSystem?: boolean;
  backend?: BackendName;
  logger?: Logger;
}

/** ReverseView.open: the password, and optionally where the config is. */
export interface ReverseViewOpenOptions extends Omit<ReverseViewOptions, 'format' | 'configPath' | 'configCustom'> {
  password: string | Uint8Array;
  /** Default PLAINDIR/.gocryptfs.reverse.conf; another path hides gocryptfs.conf from the view (like -config). */
  configPath?: string;
}

/** What an encrypted path names. */
type Node =
  | { kind: 'real'; abs: Buffer; plainRel: Buffer; cpath: string }
  | { kind: 'diriv'; dirAbs: Buffer; cdir: string }
  | { kind: 'name'; ownerAbs: Buffer; content: string }
  | { kind: 'conf' };

function splitPath(cpath: string): string[] {
  return cpath.split('/').filter((p) => p !== '');
}

export class ReverseView {
  readonly plaindir: string;
  readonly format: FormatOptions;
  readonly readOnly = true;
  private readonly root: Buffer;
  private readonly content: ContentCipher;
  private readonly names: NameCodec | null;
  private readonly opts: ReverseViewOptions;
  private readonly log: Logger;
  /**
   * File IVs of files with more than one link, by device and inode: the
   * first path that opens such a file decides its bytes for the lifetime of
   * the view, as in gocryptfs, so all its names read the same. Never
   * invalidated (an inode number reused after deletion keeps the old IVs,
   * which is harmless: they are still unique per path).
   */
  private readonly hardLinkIVs = new Map<string, FileIVs>();
  /** Longer plaintext names than this may need hashing (gocryptfs's shortNameMax). */
  private readonly shortNameMax: number;
  /** The device of the plaintext root, with -one-file-system. */
  private readonly rootDev: bigint | null;
  private readonly inoMap: InoMap;
  private readonly longNames = new LongNameIndex();

  /**
   * Opens the view of `plaindir` with the password of its config
   * (`.gocryptfs.reverse.conf`, or `configPath`). Fails with the config
   * errors of Vault.open (EPASSWORD, ECONFIGMISSING, ...) and EINVAL for a
   * config without AES-SIV.
   */
  static async open(plaindir: string, opts: ReverseViewOpenOptions): Promise<ReverseView> {
    const configPath = opts.configPath ?? join(plaindir, REVERSE_CONF_NAME);
    const conf = await readConfFile(configPath);
    const key = await unlockConf(conf, typeof opts.password === 'string' ? Buffer.from(opts.password, 'utf8') : opts.password);
    try {
      const o: ReverseViewOptions = { format: confFormat(conf), configPath, configCustom: opts.configPath !== undefined };
      if (opts.excluder !== undefined) o.excluder = opts.excluder;
      if (opts.oneFileSystem !== undefined) o.oneFileSystem = opts.oneFileSystem;
      if (opts.backend !== undefined) o.backend = opts.backend;
      if (opts.logger !== undefined) o.logger = opts.logger;
      return await ReverseView.fromKey(plaindir, key, o);
    } finally {
      key.fill(0);
    }
  }

  /**
   * The view of `plaindir` under `masterKey`, with the format of its config
   * (the ciphers keep their own keys; the caller wipes `masterKey`). Fails
   * with EINVAL for a format without AES-SIV.
   */
  static async fromKey(plaindir: string, masterKey: Uint8Array, opts: ReverseViewOptions): Promise<ReverseView> {
    if (opts.format.cipher !== 'aes-siv') throw fsError('EINVAL', undefined, undefined, 'reverse mode needs AES-SIV');
    const ciphers = await deriveCiphers(masterKey, opts.format, opts.backend);
    return new ReverseView(plaindir, ciphers, opts);
  }

  private constructor(plaindir: string, ciphers: VaultCiphers, opts: ReverseViewOptions) {
    this.plaindir = plaindir;
    this.root = Buffer.from(plaindir);
    this.format = { ...opts.format };
    this.opts = opts;
    this.log = opts.logger ?? stderrLogger;
    this.content = ciphers.content;
    this.names = ciphers.names;
    const s = Math.floor((this.format.longNameMax * 3) / 4);
    this.shortNameMax = s - (s % 16) - 1;
    const rootDev = fs.statSync(plaindir, { bigint: true }).dev;
    this.rootDev = opts.oneFileSystem ? rootDev : null;
    this.inoMap = new InoMap(rootDev);
  }

  /** With -one-file-system: true when the plaintext directory is on another filesystem than the root (then it shows empty). */
  private foreign(dirAbs: Buffer): boolean {
    if (this.rootDev === null) return false;
    try {
      return fs.lstatSync(dirAbs, { bigint: true }).dev !== this.rootDev;
    } catch {
      return false; // the caller's own lookup reports the error
    }
  }

  // ------------------------------------------------------------ names

  /** The directory IV of the directory at encrypted path `cdir`. */
  dirIV(cdir: string): Buffer {
    return this.format.dirIV ? pathIV(cdir, 'DIRIV') : ZERO_IV;
  }

  /** The name a plaintext entry has in the view (hashed if long). */
  private encryptComponent(name: Buffer, cdir: string): string {
    if (!this.names) return name.toString('latin1');
    return this.names.diskName(this.names.encryptName(name, this.dirIV(cdir)));
  }

  /**
   * The plaintext entry in plaintext directory `dirAbs` whose hashed
   * encrypted name is `hashed`, and its full encrypted name.
   */
  private findLongName(dirAbs: Buffer, cdir: string, hashed: string): LongNameEntry {
    const found = this.longNames.find(`${cdir}\0${dirAbs.toString('latin1')}`, hashed, () => {
      let names: Buffer[];
      try {
        names = fs.readdirSync(dirAbs, { encoding: 'buffer' });
      } catch (err) {
        throw hasCode(err) ? fsError(err.code, 'lookup', hashed) : err;
      }
      return this.longNameMap(names, cdir);
    });
    if (!found) throw fsError('ENOENT', 'lookup', hashed);
    return found;
  }

  /** The hashed names among a directory's entries. */
  private longNameMap(names: Buffer[], cdir: string): Map<string, LongNameEntry> {
    const codec = this.names!;
    const iv = this.dirIV(cdir);
    const map = new Map<string, LongNameEntry>();
    for (const name of names) {
      if (name.length <= this.shortNameMax) continue;
      const full = codec.encryptName(name, iv);
      if (codec.needsHash(full)) map.set(codec.diskName(full), { name, full });
    }
    return map;
  }

  private excluded(plainRel: Buffer): boolean {
    return this.opts.excluder?.matches(plainRel.toString('utf8')) ?? false;
  }

  /** Maps an encrypted path (as FUSE gives it: "/a/b") to what it names. Throws ENOENT, EPERM, ENOTDIR. */
  private resolve(cpath: string, syscall: string): Node {
    const parts = splitPath(cpath);
    let plainRel: Buffer = Buffer.alloc(0);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const last = i === parts.length - 1;
      const cdir = parts.slice(0, i).join('/');
      const dirAbs = joinPathBytes(this.root, plainRel);
      if (this.names && this.format.dirIV && part === DIRIV_NAME) {
        if (!last) throw fsError('ENOTDIR', syscall, cpath);
        return { kind: 'diriv', dirAbs, cdir };
      }
      if (this.foreign(dirAbs)) throw fsError('ENOENT', syscall, cpath);
      if (this.names && longNameKind(part) === 'name-file') {
        if (!last) throw fsError('ENOTDIR', syscall, cpath);
        const { name, full } = this.findLongName(dirAbs, cdir, part.slice(0, -LONGNAME_SUFFIX.length));
        if (this.excluded(joinPathBytes(plainRel, name))) throw fsError('EPERM', syscall, cpath);
        return { kind: 'name', ownerAbs: joinPathBytes(dirAbs, name), content: full };
      }
      if (i === 0 && !this.opts.configCustom && part === CONF_NAME) {
        if (!last) throw fsError('ENOTDIR', syscall, cpath);
        return { kind: 'conf' };
      }
      let name: Buffer;
      if (!this.names) {
        name = Buffer.from(part, 'utf8');
      } else if (longNameKind(part) === 'content') {
        name = this.findLongName(dirAbs, cdir, part).name;
      } else {
        const plain = this.names.decryptName(part, this.dirIV(cdir));
        if (plain === null) throw fsError('ENOENT', syscall, cpath);
        name = plain;
      }
      // The source config is shown only as gocryptfs.conf.
      if (i === 0 && !this.opts.configCustom && name.equals(Buffer.from(REVERSE_CONF_NAME))) throw fsError('ENOENT', syscall, cpath);
      plainRel = joinPathBytes(plainRel, name);
      if (this.excluded(plainRel)) throw fsError('EPERM', syscall, cpath);
    }
    return { kind: 'real', abs: joinPathBytes(this.root, plainRel), plainRel, cpath: parts.join('/') };
  }

  // ------------------------------------------------------------ metadata

  private lstatBacking(p: Buffer, syscall: string, cpath: string): BigIntStats {
    try {
      return fs.lstatSync(p, { bigint: true });
    } catch (err) {
      throw hasCode(err) ? fsError(err.code, syscall, cpath) : err;
    }
  }

  /** A virtual file's stats: owner and times of `from`, its own inode number, mode 0444, the content's size. */
  private virtualStat(from: BigIntStats, tag: bigint, size: number): BigIntStats {
    const st = Object.assign(Object.create(Object.getPrototypeOf(from) as object) as BigIntStats, from);
    st.ino = this.inoMap.translate(from.dev, tag, from.ino);
    st.mode = BigInt(VIRTUAL_MODE);
    st.nlink = 1n;
    st.size = BigInt(size);
    st.rdev = 0n;
    return st;
  }

  /** lstat of an encrypted path, with the sizes the view shows (BigInt stats, nanosecond times). */
  async stat(cpath: string): Promise<BigIntStats> {
    const n = this.resolve(cpath, 'lstat');
    switch (n.kind) {
      case 'diriv':
        return this.virtualStat(this.lstatBacking(n.dirAbs, 'lstat', cpath), INO_TAG.diriv, 16);
      case 'name':
        return this.virtualStat(this.lstatBacking(n.ownerAbs, 'lstat', cpath), INO_TAG.name, n.content.length);
      case 'conf': {
        let st: BigIntStats;
        try {
          st = fs.statSync(this.opts.configPath, { bigint: true });
        } catch (err) {
          throw hasCode(err) ? fsError(err.code, 'stat', cpath) : err;
        }
        st.ino = this.inoMap.translate(st.dev, INO_TAG.real, st.ino);
        return st;
      }
      case 'real': {
        const st = this.lstatBacking(n.abs, 'lstat', cpath);
        st.ino = this.inoMap.translate(st.dev, INO_TAG.real, st.ino);
        if (st.isFile()) st.size = BigInt(plainSizeToCipherSize(this.content.layout, Number(st.size)));
        else if (st.isSymbolicLink()) st.size = BigInt(this.encryptLink(n).length);
        return st;
      }
    }
  }

  /** The encrypted names in a directory, virtual files last (as gocryptfs lists them). */
  async readdir(cpath: string): Promise<string[]> {
    const n = this.resolve(cpath, 'scandir');
    if (n.kind !== 'real') throw fsError('ENOTDIR', 'scandir', cpath);
    const virtual: string[] = [];
    if (this.names && this.format.dirIV) virtual.push(DIRIV_NAME);
    if (this.foreign(n.abs)) return virtual;
    let entries: Buffer[];
    try {
      entries = fs.readdirSync(n.abs, { encoding: 'buffer' });
    } catch (err) {
      throw hasCode(err) ? fsError(err.code, 'scandir', cpath) : err;
    }
    // The lookups that follow a listing (ls -l) find the hashed names here.
    if (this.names) this.longNames.remember(`${n.cpath}\0${n.abs.toString('latin1')}`, this.longNameMap(entries, n.cpath));
    entries = entries.filter((e) => !this.excluded(joinPathBytes(n.plainRel, e)));
    const isRoot = n.cpath === '';
    const confInRoot = isRoot && !this.opts.configCustom;
    const out: string[] = [];
    for (const e of entries) {
      if (confInRoot && e.equals(Buffer.from(REVERSE_CONF_NAME))) {
        out.push(CONF_NAME);
        continue;
      }
      if (!this.names) {
        if (confInRoot && e.equals(Buffer.from(CONF_NAME))) {
          this.log.warn(`${REVERSE_CONF_NAME} is shown as ${CONF_NAME} and hides the real ${CONF_NAME} in ${this.plaindir}; rename it`);
          continue;
        }
        out.push(e.toString('utf8'));
        continue;
      }
      const cname = this.encryptComponent(e, n.cpath);
      if (longNameKind(cname) === 'content') virtual.push(cname + LONGNAME_SUFFIX);
      out.push(cname);
    }
    return [...out, ...virtual];
  }

  /** The encrypted target of a symlink. */
  async readlink(cpath: string): Promise<string> {
    const n = this.resolve(cpath, 'readlink');
    if (n.kind !== 'real') throw fsError('EINVAL', 'readlink', cpath);
    return this.encryptLink(n);
  }

  /**
   * Symlink targets are sealed with a nonce from the link's encrypted path
   * followed by "/" and its own encrypted name again (`dir/link/link`):
   * that is what gocryptfs 2.3 does (Documentation/format.md §9.2), so we do it too.
   */
  private encryptLink(n: { abs: Buffer; cpath: string }): string {
    let target: Buffer;
    try {
      target = fs.readlinkSync(n.abs, { encoding: 'buffer' });
    } catch (err) {
      throw hasCode(err) ? fsError(err.code, 'readlink', n.cpath) : err;
    }
    if (!this.names) return target.toString('utf8');
    const base = n.cpath.slice(n.cpath.lastIndexOf('/') + 1);
    const nonce = pathIV(`${n.cpath}/${base}`, 'SYMLINKIV');
    const sealed = Buffer.concat([nonce, this.content.aead.seal(nonce, target, new Uint8Array(8))]);
    const enc = b64Encode(sealed, this.format.raw64);
    if (enc.length > PATH_MAX) throw fsError('ENAMETOOLONG', 'readlink', n.cpath);
    return enc;
  }

  async access(cpath: string, mode: number = C.F_OK): Promise<void> {
    const n = this.resolve(cpath, 'access');
    if ((mode & C.W_OK) !== 0) throw fsError('EROFS', 'access', cpath);
    const p = n.kind === 'real' ? n.abs : n.kind === 'diriv' ? n.dirAbs : n.kind === 'name' ? n.ownerAbs : this.opts.configPath;
    // Virtual files are readable by everybody; only their existence counts.
    const m = n.kind === 'real' ? mode : C.F_OK;
    try {
      fs.accessSync(p, m);
    } catch (err) {
      throw hasCode(err) ? fsError(err.code, 'access', cpath) : err;
    }
  }

  async statfs(): Promise<StatsFs> {
    return fsp.statfs(this.plaindir);
  }

  // ------------------------------------------------------------ content

  /** Opens a file of the view for reading. */
  async open(cpath: string, flags = C.O_RDONLY): Promise<ReverseFile> {
    if ((flags & 3) !== C.O_RDONLY || (flags & (C.O_TRUNC | C.O_CREAT)) !== 0) throw fsError('EROFS', 'open', cpath);
    const n = this.resolve(cpath, 'open');
    switch (n.kind) {
      case 'diriv':
        this.lstatBacking(n.dirAbs, 'open', cpath);
        return ReverseFile.fromBytes(this.dirIV(n.cdir));
      case 'name':
        this.lstatBacking(n.ownerAbs, 'open', cpath);
        return ReverseFile.fromBytes(Buffer.from(n.content, 'latin1'));
      case 'conf':
        return ReverseFile.passThrough(this.opts.configPath, cpath);
      case 'real':
        return ReverseFile.encrypting(n.abs, cpath, this.content, (st) => this.ivsFor(n.cpath, st));
    }
  }

  /** The whole content of a file of the view (encrypted file, virtual file or the config). */
  async readFile(cpath: string): Promise<Buffer> {
    const size = Number((await this.stat(cpath)).size);
    const f = await this.open(cpath);
    try {
      return await f.read(size, 0);
    } finally {
      await f.close();
    }
  }

  private ivsFor(cpath: string, st: fs.BigIntStats): FileIVs {
    const key = `${st.dev}:${st.ino}`;
    const known = this.hardLinkIVs.get(key);
    if (known) return known;
    const ivs = fileIVs(cpath);
    if (st.nlink > 1n) this.hardLinkIVs.set(key, ivs);
    return ivs;
  }

  // ------------------------------------------------------------ control socket

  /**
   * Encrypted path of a relative plaintext path (no leading slash): pure
   * computation, the entries need not exist.
   */
  encryptPath(plainPath: string): string {
    if (!this.names || plainPath === '') return plainPath;
    const out: string[] = [];
    for (const part of plainPath.split('/')) {
      const name = Buffer.from(part, 'utf8');
      if (invalidNameCode(name) !== null) throw fsError('EBADMSG', 'encrypt', plainPath);
      out.push(this.encryptComponent(name, out.join('/')));
    }
    return out.join('/');
  }

  /** Plaintext path of a relative encrypted path (lossy for names that are not UTF-8; see decryptPathBytes). */
  decryptPath(cipherPath: string): string {
    return this.decryptPathBytes(cipherPath).toString('utf8');
  }

  /** Plaintext path of a relative encrypted path, as bytes; hashed names are found by scanning the plaintext directory. */
  decryptPathBytes(cipherPath: string): Buffer {
    if (!this.names || cipherPath === '') return Buffer.from(cipherPath, 'utf8');
    const parts = cipherPath.split('/');
    let plainRel: Buffer = Buffer.alloc(0);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const cdir = parts.slice(0, i).join('/');
      let name: Buffer;
      if (longNameKind(part) === 'content') {
        name = this.findLongName(joinPathBytes(this.root, plainRel), cdir, part).name;
      } else if (longNameKind(part) === 'name-file') {
        throw fsError('EINVAL', 'decrypt', cipherPath);
      } else {
        const plain = this.names.decryptName(part, this.dirIV(cdir));
        if (plain === null) throw fsError('ENOENT', 'decrypt', cipherPath);
        name = plain;
      }
      plainRel = joinPathBytes(plainRel, name);
    }
    return plainRel;
  }

  /** Where the plaintext of an encrypted path is (for tests and tools). */
  plainPath(cpath: string): string {
    const n = this.resolve(cpath, 'lstat');
    if (n.kind !== 'real') throw fsError('EINVAL', 'lstat', cpath, 'a virtual file');
    return join(this.plaindir, n.plainRel.toString('utf8'));
  }
}
