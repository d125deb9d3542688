/**
 * The random-operation tester's seeded PRNG (mulberry32): the same seed
 * gives the same operation sequence on every machine, so a printed seed
 * reproduces a run.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Picks a key of `weights` with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const keys = Object.keys(weights) as K[];
    let x = this.next() * keys.reduce((s, k) => s + weights[k], 0);
    for (const k of keys) {
      x -= weights[k];
      if (x < 0) return k;
    }
    return keys[keys.length - 1]!;
  }
}

/**
 * `len` bytes of content derived from `seed`, never all zero in a block
 * (so a hole or a lost write is never mistaken for written data).
 */
export function patternBytes(seed: number, len: number): Buffer {
  const out = Buffer.allocUnsafe(len);
  const r = new Rng(seed);
  for (let i = 0; i < len; i += 4) {
    const v = Math.floor(r.next() * 4294967296) | 0x01010101;
    if (i + 4 <= len) out.writeUInt32LE(v >>> 0, i);
    else for (let j = i; j < len; j++) out[j] = (v >>> ((j - i) * 8)) & 0xff;
  }
  return out;
}
