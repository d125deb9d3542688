/** FUSE file handles (small integers) for open VaultFiles. */
import type { VaultFile } from '../vault/index.js';

export class HandleTable {
  private readonly handles = new Map<number, VaultFile>();
  private next = 1;

  add(f: VaultFile): number {
    while (this.handles.has(this.next)) this.next = (this.next % 0x7fffffff) + 1;
    const fh = this.next;
    this.handles.set(fh, f);
    this.next = (this.next % 0x7fffffff) + 1;
    return fh;
  }

  get(fh: number): VaultFile | undefined {
    return this.handles.get(fh);
  }

  remove(fh: number): VaultFile | undefined {
    const f = this.handles.get(fh);
    this.handles.delete(fh);
    return f;
  }

  get size(): number {
    return this.handles.size;
  }

  all(): VaultFile[] {
    return [...this.handles.values()];
  }
}
