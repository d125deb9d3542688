/** FUSE file handles (small integers) for open files (VaultFiles, or reverse-mode files). */
import type { VaultFile } from '../vault/index.js';

/** What a handle table holds: anything that can be closed. */
export interface Closable {
  close(): Promise<void>;
}

export class HandleTable<F extends Closable = VaultFile> {
  private readonly handles = new Map<number, F>();
  private next = 1;

  add(f: F): number {
    while (this.handles.has(this.next)) this.next = (this.next % 0x7fffffff) + 1;
    const fh = this.next;
    this.handles.set(fh, f);
    this.next = (this.next % 0x7fffffff) + 1;
    return fh;
  }

  /** Takes `f` under a number someone else gave out (a native open's, above the ones add gives). */
  put(fh: number, f: F): void {
    if (this.handles.has(fh)) throw Object.assign(new Error(`file handle ${fh} is taken`), { code: 'EIO' });
    this.handles.set(fh, f);
  }

  get(fh: number): F | undefined {
    return this.handles.get(fh);
  }

  /** The file of `fh`; EBADF when there is none. */
  need(fh: number): F {
    const f = this.handles.get(fh);
    if (!f) throw Object.assign(new Error('bad file handle'), { code: 'EBADF' });
    return f;
  }

  remove(fh: number): F | undefined {
    const f = this.handles.get(fh);
    this.handles.delete(fh);
    return f;
  }

  get size(): number {
    return this.handles.size;
  }

  all(): F[] {
    return [...this.handles.values()];
  }
}
