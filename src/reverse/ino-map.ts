/**
 * Inode numbers for the reverse view, unique across the filesystems below
 * PLAINDIR and the virtual files (gocryptfs's internal/inomap): each
 * (device, tag) pair gets a namespace number in the top 16 bits, the
 * plaintext root's device with tag 0 being namespace 0, so ordinary entries
 * keep their own inode numbers. Inode numbers that do not fit in 48 bits,
 * or namespaces beyond 2^15, spill into a counter with the top bit set.
 * Without this, a FIFO on a tmpfs inside PLAINDIR and a file on the root
 * filesystem could share an inode number, and tools that find hard links by
 * inode (rsync -H, du, tar) would merge them.
 *
 * The maps only grow, for the life of the view (one entry per device and
 * tag, plus one per spilled inode).
 */
const MAX_NAMESPACE = (1 << 15) - 1;
const MAX_PASSTHRU = (1n << 48n) - 1n;
const SPILL_BIT = 1n << 63n;

export class InoMap {
  private readonly namespaces = new Map<string, bigint>();
  private readonly spills = new Map<string, bigint>();
  private nextSpill = 0n;

  constructor(rootDev: bigint) {
    this.namespaces.set(`${rootDev}:0`, 0n);
  }

  translate(dev: bigint, tag: bigint, ino: bigint): bigint {
    if (ino > MAX_PASSTHRU) return this.spill(dev, tag, ino);
    const key = `${dev}:${tag}`;
    let ns = this.namespaces.get(key);
    if (ns === undefined) {
      if (this.namespaces.size > MAX_NAMESPACE) return this.spill(dev, tag, ino);
      ns = BigInt(this.namespaces.size);
      this.namespaces.set(key, ns);
    }
    return (ns << 48n) | ino;
  }

  private spill(dev: bigint, tag: bigint, ino: bigint): bigint {
    const key = `${dev}:${tag}:${ino}`;
    let n = this.spills.get(key);
    if (n === undefined) {
      n = this.nextSpill++;
      this.spills.set(key, n);
    }
    return n | SPILL_BIT;
  }
}
