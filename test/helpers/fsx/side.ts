/**
 * One side of the differential tester: a directory (in the mount, or a
 * plain one) that operations are applied to with ordinary system calls,
 * plus the handles kept open in slots. Every operation reports an Outcome
 * (success with what it returned, or the errno code), which is compared
 * with the other side's.
 */
import * as fs from 'node:fs';
import { constants as C } from 'node:fs';
import { join } from 'node:path';
import { patternBytes } from './rng.js';
import { SLOTS, type Op, type OpenMode } from './ops.js';

export interface Outcome {
  /** 'ok' or an errno code ('ENOENT', ...); 'NOHANDLE' for a slot with nothing open. */
  code: string;
  /** Bytes returned by a read. */
  data?: Buffer;
  /** Other results worth comparing (sizes). */
  value?: string;
}

const MODE_FLAGS: Record<OpenMode, number> = {
  r: C.O_RDONLY,
  'r+': C.O_RDWR,
  'w+': C.O_RDWR | C.O_CREAT | C.O_TRUNC,
  'a+': C.O_RDWR | C.O_CREAT | C.O_APPEND,
  wx: C.O_WRONLY | C.O_CREAT | C.O_EXCL,
};

function errCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  throw err;
}

function pread(fd: number, off: number, len: number): Buffer {
  const buf = Buffer.alloc(len);
  let done = 0;
  while (done < len) {
    const n = fs.readSync(fd, buf, done, len - done, off + done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

function pwrite(fd: number, data: Buffer, off: number | null): void {
  let done = 0;
  while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done, off === null ? null : off + done);
}

export class FsxSide {
  readonly slots: (number | null)[] = new Array<number | null>(SLOTS).fill(null);

  constructor(readonly root: string) {}

  private p(rel: string): string {
    return join(this.root, rel);
  }

  /** Applies `op`; never throws for an errno (that is the outcome). */
  apply(op: Op): Outcome {
    try {
      return this.run(op);
    } catch (err) {
      return { code: errCode(err) };
    }
  }

  private withFd<T>(path: string, flags: number, fn: (fd: number) => T): T {
    const fd = fs.openSync(this.p(path), flags, 0o644);
    try {
      return fn(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  private slot(n: number): number | null {
    return this.slots[n] ?? null;
  }

  private run(op: Op): Outcome {
    const ok: Outcome = { code: 'ok' };
    switch (op.k) {
      case 'write':
        this.withFd(op.path, C.O_WRONLY | C.O_CREAT, (fd) => pwrite(fd, patternBytes(op.seed, op.len), op.off));
        return ok;
      case 'append':
        this.withFd(op.path, C.O_WRONLY | C.O_CREAT | C.O_APPEND, (fd) => pwrite(fd, patternBytes(op.seed, op.len), null));
        return ok;
      case 'truncate':
        fs.truncateSync(this.p(op.path), op.size);
        return ok;
      case 'read':
        return { code: 'ok', data: this.withFd(op.path, C.O_RDONLY, (fd) => pread(fd, op.off, op.len)) };
      case 'open': {
        this.closeSlot(op.slot);
        this.slots[op.slot] = fs.openSync(this.p(op.path), MODE_FLAGS[op.mode], 0o644);
        return ok;
      }
      case 'close':
        if (this.slot(op.slot) === null) return { code: 'NOHANDLE' };
        this.closeSlot(op.slot);
        return ok;
      default:
        break;
    }
    if ('slot' in op) {
      const fd = this.slot(op.slot);
      if (fd === null) return { code: 'NOHANDLE' };
      switch (op.k) {
        case 'hwrite':
          pwrite(fd, patternBytes(op.seed, op.len), op.off);
          return { code: 'ok', value: `size=${fs.fstatSync(fd).size}` };
        case 'hread':
          return { code: 'ok', data: pread(fd, op.off, op.len) };
        case 'ftruncate':
          fs.ftruncateSync(fd, op.size);
          return { code: 'ok', value: `size=${fs.fstatSync(fd).size}` };
        case 'fsync':
          (op.data ? fs.fdatasyncSync : fs.fsyncSync)(fd);
          return ok;
      }
    }
    switch (op.k) {
      case 'rename':
        fs.renameSync(this.p(op.from), this.p(op.to));
        return ok;
      case 'link':
        fs.linkSync(this.p(op.from), this.p(op.to));
        return ok;
      case 'unlink':
        fs.unlinkSync(this.p(op.path));
        return ok;
      case 'mkdir':
        fs.mkdirSync(this.p(op.path), 0o755);
        return ok;
      case 'rmdir':
        fs.rmdirSync(this.p(op.path));
        return ok;
      case 'symlink':
        fs.symlinkSync(op.target, this.p(op.path));
        return ok;
      case 'list': {
        if (op.probe) {
          const d = fs.opendirSync(this.p(op.path));
          try {
            d.readSync();
          } finally {
            d.closeSync();
          }
        }
        const type = (e: fs.Dirent): string => (e.isDirectory() ? 'd' : e.isSymbolicLink() ? 'l' : e.isFile() ? 'f' : '?');
        const names = fs.readdirSync(this.p(op.path), { withFileTypes: true }).map((e) => `${e.name}:${type(e)}`);
        return { code: 'ok', value: names.sort().join(' ') };
      }
      default:
        throw new Error(`unhandled operation ${JSON.stringify(op)}`);
    }
  }

  private closeSlot(n: number): void {
    const fd = this.slot(n);
    if (fd === null) return;
    this.slots[n] = null;
    fs.closeSync(fd);
  }

  /** fstat of every open slot (size and link count), for the state comparison. */
  slotStates(): string[] {
    return this.slots.map((fd, i) => {
      if (fd === null) return `#${i} closed`;
      try {
        const st = fs.fstatSync(fd);
        return `#${i} size=${st.size} nlink=${st.nlink}`;
      } catch (err) {
        return `#${i} fstat ${errCode(err)}`;
      }
    });
  }

  /** Closes every slot (errors ignored: the side is being thrown away). */
  closeAll(): void {
    for (let i = 0; i < SLOTS; i++) {
      try {
        this.closeSlot(i);
      } catch {
        this.slots[i] = null;
      }
    }
  }
}
