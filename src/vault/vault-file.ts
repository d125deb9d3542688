/**
 * An open plaintext file of a Vault: positional read/write/truncate over
 * the cipher file, with the file's shared lock (Documentation/format.md §6.3–§6.4).
 */
import type { BigIntStats, Stats } from 'node:fs';
import { closeSync, constants as C, openSync } from 'node:fs';
import { flockFd, ofdLock, type RecordLock } from '../util/native-sys.js';
import { fsError } from '../util/errors.js';
import { closeFd, fchmod, fchown, fdatasync, fstat, fstatBig, fsync } from '../util/fd-io.js';
import type { AtCalls, TimeArg } from '../util/sys-at.js';
import { allocateContent, plainSize, readContent, readContentInto, truncateContent, writeContent, type ContentFile } from './file-content.js';
import { accessMode } from './open-flags.js';
import { setPlainSizeWords, setSize, withoutSetIdBits } from './stats.js';

/** What a handle needs of its vault to change the file's attributes. */
export interface FileAttrAccess {
  at: AtCalls;
  /** Throws when the vault takes no changes (closed; EROFS when read-only). */
  assertWritable(syscall: string, path: string): void;
}

/** fcntl(2)'s lock types. */
export const F_RDLCK = 0;
export const F_WRLCK = 1;
export const F_UNLCK = 2;

/** Another open file description of the file `fd` is open on, for reading and writing where allowed. */
function reopen(fd: number): number {
  try {
    return openSync(`/proc/self/fd/${fd}`, C.O_RDWR);
  } catch {
    return openSync(`/proc/self/fd/${fd}`, C.O_RDONLY);
  }
}

/** The backing descriptor of an open file (set by VaultFile's static block; internal-access.ts hands it to the mount, src/index.ts does not export it). */
export let backingDescriptor: (file: VaultFile) => number;

export class VaultFile {
  private position = 0;
  private closed = false;

  static {
    backingDescriptor = (file) => file.f.fd;
  }

  /** @internal Made by Vault.open. */
  constructor(
    private readonly f: ContentFile,
    /** The open flags as given (O_* numbers). */
    readonly flags: number,
    /** The plaintext path this handle was opened with. */
    readonly path: string,
    private readonly onClose: () => void,
    private readonly attrs: FileAttrAccess,
  ) {}

  /** The file's write fence slot (./write-fences.ts) in the counters of `buffer`; -1 for none. */
  fenceIn(buffer: ArrayBuffer): number {
    return this.f.state.fenceIn(buffer);
  }

  /** Whether this handle writes at the offsets it is given: open for writing, and not O_APPEND (a native writer may then write for it). */
  get writable(): boolean {
    return accessMode(this.flags) !== C.O_RDONLY && (this.flags & C.O_APPEND) === 0;
  }

  /** Whether this handle may read (not O_WRONLY). */
  get readable(): boolean {
    return accessMode(this.flags) !== C.O_WRONLY;
  }

  private check(syscall: string, need: 'read' | 'write' | 'any'): void {
    if (this.closed) throw fsError('EBADF', syscall, this.path, 'handle is closed');
    const mode = accessMode(this.flags);
    if (need === 'read' && !this.readable) throw fsError('EBADF', syscall, this.path, 'not open for reading');
    if (need === 'write' && mode === C.O_RDONLY) throw fsError('EBADF', syscall, this.path, 'not open for writing');
  }

  /**
   * Reads up to `length` bytes at `position` (or at the handle's own
   * position, which then advances). Fewer bytes only at end of file.
   */
  async read(length: number, position?: number | null): Promise<Buffer> {
    this.check('read', 'read');
    const pos = position ?? this.position;
    const data = await this.f.state.shared(() => readContent(this.f, pos, length));
    if (position === undefined || position === null) this.position = pos + data.length;
    return data;
  }

  /**
   * Reads up to `length` bytes at `position` into `dst` and returns how
   * many; fewer only at end of file. (The FUSE read path: no copy.)
   */
  async readInto(dst: Uint8Array, length: number, position: number): Promise<number> {
    this.check('read', 'read');
    const n = Math.min(length, dst.length);
    return this.f.state.shared(() => readContentInto(this.f, position, n, dst));
  }

  /**
   * Writes all of `data` at `position` (or at the handle's position; at the
   * end of file when opened with O_APPEND). Returns the bytes written.
   */
  async write(data: Uint8Array, position?: number | null): Promise<number> {
    this.check('write', 'write');
    const append = (this.flags & C.O_APPEND) !== 0;
    await this.f.state.exclusive(async () => {
      const pos = append ? await plainSize(this.f) : (position ?? this.position);
      await writeContent(this.f, pos, data);
      if (append || position === undefined || position === null) this.position = pos + data.length;
    });
    return data.length;
  }

  async truncate(length = 0): Promise<void> {
    this.check('ftruncate', 'write');
    await this.f.state.exclusive(() => truncateContent(this.f, length));
  }

  /**
   * fallocate(2) on the plaintext range: mode 0 reserves the space and
   * grows the file to offset+length if it is shorter; 1 (FALLOC_FL_KEEP_SIZE)
   * only reserves. Other modes are EOPNOTSUPP, as in gocryptfs.
   */
  async fallocate(mode: number, offset: number, length: number): Promise<void> {
    this.check('fallocate', 'write');
    await this.f.state.exclusive(() => allocateContent(this.f, mode, offset, length));
  }

  /** Plaintext size as every handle of this file sees it. */
  async size(): Promise<number> {
    this.check('fstat', 'any');
    return this.f.state.shared(() => plainSize(this.f));
  }

  /** fstat of the backing file with the plaintext size (nanosecond times with `{ bigint: true }`). */
  async stat(opts?: { bigint?: false }): Promise<Stats>;
  async stat(opts: { bigint: true }): Promise<BigIntStats>;
  async stat(opts: { bigint?: boolean } = {}): Promise<Stats | BigIntStats> {
    this.check('fstat', 'any');
    const st = opts.bigint ? await fstatBig(this.f.fd) : await fstat(this.f.fd);
    setSize(st, await this.size());
    return st;
  }

  /**
   * The attributes as stat words (src/util/stat-words.ts) with the
   * plaintext size: one fstat, where stat() makes two and builds a Stats.
   */
  async statWords(): Promise<Uint32Array> {
    this.check('fstat', 'any');
    return this.f.state.shared(async () => {
      const w = await this.attrs.at.fstat(this.f.fd);
      setPlainSizeWords(this.f.cipher.layout, w, 0);
      return w;
    });
  }

  private checkChange(syscall: string): void {
    this.check(syscall, 'any');
    this.attrs.assertWritable(syscall, this.path);
  }

  /**
   * fchmod(2): the mode bits of the file, through this handle (also when
   * the file has no name any more, as after unlink while open).
   */
  async chmod(mode: number): Promise<void> {
    this.checkChange('fchmod');
    await fchmod(this.f.fd, mode & 0o7777);
  }

  /**
   * Drops the set-id bits (see withoutSetIdBits) before a write or truncate
   * by an unprivileged user, where the kernel leaves that to the file
   * system (a mount with FUSE_HANDLE_KILLPRIV_V2). No change, no fchmod.
   */
  async dropSetIdBits(): Promise<void> {
    this.checkChange('fchmod');
    const mode = (await fstat(this.f.fd)).mode & 0o7777;
    const kept = withoutSetIdBits(mode);
    if (kept !== mode) await fchmod(this.f.fd, kept);
  }

  /** fchown(2); -1 leaves that id as it is. */
  async chown(uid: number, gid: number): Promise<void> {
    this.checkChange('fchown');
    await fchown(this.f.fd, uid, gid);
  }

  /** futimens(2): [seconds, nanoseconds], 'now', or null to leave that time. */
  async utimens(atime: TimeArg, mtime: TimeArg): Promise<void> {
    this.checkChange('futimens');
    await this.attrs.at.utimensat(this.f.fd, '', atime, mtime);
  }

  async sync(): Promise<void> {
    this.check('fsync', 'any');
    await fsync(this.f.fd);
  }

  async datasync(): Promise<void> {
    this.check('fdatasync', 'any');
    await fdatasync(this.f.fd);
  }

  /**
   * A POSIX record lock (fcntl(2) F_SETLK, or F_GETLK without `set`) of
   * lock owner `owner` (the kernel's name for one process's locks), taken
   * on the cipher file itself, so that another mount of the cipher directory
   * and programs locking the cipher file see it: as an open file
   * description lock on a description of the cipher file that this owner
   * alone uses (opened again through /proc/self/fd), so that one owner's
   * locks merge and split as POSIX locks do and never conflict with each
   * other. Offsets are the plaintext's, used on the cipher file as they are,
   * the same on every mount. Never waits: EAGAIN when another holder
   * conflicts. A get gives the conflicting lock (type F_UNLCK: none);
   * unlocking the whole file closes the owner's description, and so does
   * closing the handle the owner's locks last came through: a process's
   * locks have gone with the close of any of its descriptors by then (the
   * kernel's FLUSH unlocks them), so what is left is an open file
   * description lock, which goes with its file. Needs the native addon
   * (ENOSYS without it).
   */
  recordLock(owner: string, set: boolean, lock: { type: number; start: number; len: number }): RecordLock | null {
    this.check(set ? 'fcntl(F_SETLK)' : 'fcntl(F_GETLK)', 'any');
    const owners = this.f.state.lockOwners;
    let entry = owners.get(owner);
    if (entry === undefined) {
      if (!set) {
        const found = ofdLock(this.f.fd, false, lock);
        if (typeof found === 'string') throw fsError(found, 'fcntl', this.path);
        return found;
      }
      if (lock.type === F_UNLCK) return null;
      entry = { fd: reopen(this.f.fd), via: this };
      owners.set(owner, entry);
    }
    entry.via = this;
    const fd = entry.fd;
    const r = ofdLock(fd, set, lock);
    if (typeof r === 'string' && r !== 'ok') throw fsError(r, 'fcntl', this.path);
    if (set && lock.type === F_UNLCK && lock.start === 0 && lock.len === 0) {
      owners.delete(owner);
      closeSync(fd);
    }
    return typeof r === 'string' ? null : r;
  }

  /** flock(2) on this handle's own description of the cipher file (op: LOCK_SH, LOCK_EX or LOCK_UN, with LOCK_NB). */
  flock(op: number): void {
    this.check('flock', 'any');
    const r = flockFd(this.f.fd, op);
    if (r !== 'ok') throw fsError(r, 'flock', this.path);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [owner, e] of this.f.state.lockOwners) {
      if (e.via !== this) continue;
      this.f.state.lockOwners.delete(owner);
      closeSync(e.fd);
    }
    this.onClose();
    await closeFd(this.f.fd);
  }
}
