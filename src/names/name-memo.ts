/**
 * Memo of decrypted names. Decrypting a name is a pure function of the
 * directory IV and the encrypted name (Documentation/format.md §7.6), so an entry never
 * goes stale and nothing has to invalidate it; the memo only bounds its
 * size (it empties itself when full). Listings of the same directories
 * repeat all the time (ls, find, Samba-like workloads), and each name would
 * otherwise cost an EME decryption.
 */
export class NameMemo {
  private readonly map = new Map<string, string | null>();

  /** About 150 bytes an entry: at most a few MB. */
  constructor(private readonly max = 16384) {}

  /** A key prefix for one directory IV; join it with the encrypted name. */
  static ivKey(iv: Uint8Array): string {
    return Buffer.from(iv.buffer, iv.byteOffset, iv.byteLength).toString('latin1');
  }

  /** The remembered plaintext (null: does not decrypt), or undefined when unknown. */
  get(ivKey: string, cname: string): string | null | undefined {
    return this.map.get(ivKey + cname);
  }

  set(ivKey: string, cname: string, plain: string | null): void {
    if (this.map.size >= this.max) this.map.clear();
    this.map.set(ivKey + cname, plain);
  }

  /** Forgets every name (a quiet mount gives its memory back). */
  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
