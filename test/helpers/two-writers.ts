/**
 * Two writers on one cipher directory: two mounts of it (-sharedstorage),
 * and workers that each act through both mounts in turn (operation i
 * through mount i % 2, so every file is created through one mount and
 * changed, read and listed through the other). Each worker owns its files
 * (its name prefix) inside directories all workers share, and keeps a model
 * of them: name -> content, with link groups. What the format cannot make
 * safe, two mounts writing one block at the same moment, is left out by
 * construction: a file has one writer at a time.
 *
 * One more operation makes a worker's own directory again under its name
 * through one mount while the other saw the old one last.
 *
 * Each operation is checked as it goes (a read gives what the model says;
 * a listing shows exactly the worker's own names); at the end both mounts
 * must show the same tree, every file what its last writer wrote.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { patternBytes, Rng } from './fsx/rng.js';

export interface TwoWriterOptions {
  /** The two mount points of one cipher directory. */
  mounts: [string, string];
  /** Workers at once (each on both mounts). */
  workers: number;
  /** Stop after this many operations per worker... */
  opsPerWorker: number;
  /** ...or after this long, whichever comes first. */
  maxMs: number;
  seed: number;
  /** Make hard links (default true; not on a store whose names of one file are not one file to its clients). */
  links?: boolean;
}

export interface TwoWriterResult {
  ops: number;
  byKind: Record<string, number>;
  files: number;
  ms: number;
}

/** Directories every worker uses (made first, through mount 0). */
export const SHARED_DIRS = ['', 'shared', 'shared/deep'];

interface FileModel {
  dir: string;
  /** Content, shared by every name of one link group. */
  group: { data: Buffer };
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex').slice(0, 16);

/** Sizes around block edges, and some large ones. */
const SIZES = [0, 1, 100, 4095, 4096, 4097, 8192, 12_289, 65_537, 200_000];

class Worker {
  readonly files = new Map<string, FileModel>();
  ops = 0;
  private serial = 0;

  constructor(
    private readonly id: number,
    private readonly rng: Rng,
    private readonly mounts: [string, string],
    private readonly byKind: Record<string, number>,
    private readonly links: boolean,
  ) {}

  private newName(): string {
    return `w${this.id}-${this.serial++}${this.rng.int(4) === 0 ? '-' + 'x'.repeat(180) : ''}`;
  }

  private pick(): [string, FileModel] | null {
    if (this.files.size === 0) return null;
    const names = [...this.files.keys()];
    const name = names[this.rng.int(names.length)]!;
    return [name, this.files.get(name)!];
  }

  private bytes(n: number): Buffer {
    return patternBytes(this.rng.int(2 ** 31), n);
  }

  /**
   * A directory of the worker's own removed through one mount and made again
   * under its name through the other (a new IV on disk), then a file made in
   * it through the first mount, which saw the old one last: what a mount
   * keeps of a directory must not outlive it.
   */
  private async dirAgain(): Promise<void> {
    const [a, b] = this.ops % 2 === 0 ? this.mounts : [this.mounts[1], this.mounts[0]];
    const dir = `w${this.id}-dir`;
    const inDir = [...this.files].filter(([, v]) => v.dir === dir);
    await fsp.mkdir(join(a, dir)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await fsp.readdir(join(a, dir));
    for (const [name] of inDir) {
      await fsp.unlink(join(b, dir, name));
      this.files.delete(name);
    }
    await fsp.rmdir(join(b, dir));
    await fsp.mkdir(join(b, dir));
    const name = this.newName();
    const data = this.bytes(1 + this.rng.int(9000));
    await fsp.writeFile(join(a, dir, name), data, { flag: 'wx' });
    this.files.set(name, { dir, group: { data } });
    assert.deepEqual(await fsp.readdir(join(b, dir)), [name], `worker ${this.id}: /${dir} made again, listed through ${b}`);
  }

  async step(): Promise<void> {
    const m = this.mounts[this.ops % 2]!;
    const p = (name: string): string => join(m, this.files.get(name)?.dir ?? '', name);
    const r = this.rng.int(100);
    const target = this.pick();
    let kind: string;
    if (target === null || r < 20) {
      kind = 'create';
      const dir = SHARED_DIRS[this.rng.int(SHARED_DIRS.length)]!;
      const name = this.newName();
      const data = this.bytes(SIZES[this.rng.int(SIZES.length)]!);
      await fsp.writeFile(join(m, dir, name), data, { flag: 'wx' });
      this.files.set(name, { dir, group: { data } });
    } else {
      const [name, f] = target;
      if (r < 40) {
        kind = 'write';
        const off = this.rng.int(f.group.data.length + 5000);
        const piece = this.bytes(1 + this.rng.int(9000));
        const h = await fsp.open(p(name), 'r+');
        try {
          await h.write(piece, 0, piece.length, off);
        } finally {
          await h.close();
        }
        const grown = Buffer.alloc(Math.max(f.group.data.length, off + piece.length));
        f.group.data.copy(grown);
        piece.copy(grown, off);
        f.group.data = grown;
      } else if (r < 50) {
        kind = 'truncate';
        const size = this.rng.int(2) === 0 ? this.rng.int(f.group.data.length + 1) : f.group.data.length + this.rng.int(10_000);
        await fsp.truncate(p(name), size);
        const next = Buffer.alloc(size);
        f.group.data.copy(next, 0, 0, Math.min(size, f.group.data.length));
        f.group.data = next;
      } else if (r < 60) {
        kind = 'rename';
        const dir = SHARED_DIRS[this.rng.int(SHARED_DIRS.length)]!;
        const to = this.newName();
        await fsp.rename(p(name), join(m, dir, to));
        this.files.delete(name);
        this.files.set(to, { dir, group: f.group });
      } else if (r < 67 && this.links) {
        kind = 'link';
        const dir = SHARED_DIRS[this.rng.int(SHARED_DIRS.length)]!;
        const to = this.newName();
        await fsp.link(p(name), join(m, dir, to));
        this.files.set(to, { dir, group: f.group });
      } else if (r < 75) {
        // (without links, their share goes to unlink)
        kind = 'unlink';
        await fsp.unlink(p(name));
        this.files.delete(name);
      } else if (r < 88) {
        kind = 'read';
        const got = await fsp.readFile(p(name));
        assert.equal(sha(got), sha(f.group.data), `worker ${this.id}: ${name} through ${m}: ${got.length} bytes, expected ${f.group.data.length}`);
      } else if (r < 92) {
        kind = 'dir-again';
        await this.dirAgain();
      } else {
        kind = 'list';
        const dir = SHARED_DIRS[this.rng.int(SHARED_DIRS.length)]!;
        const mine = (await fsp.readdir(join(m, dir))).filter((n) => n.startsWith(`w${this.id}-`) && n !== `w${this.id}-dir`).sort();
        const want = [...this.files].filter(([, v]) => v.dir === dir).map(([k]) => k).sort();
        assert.deepEqual(mine, want, `worker ${this.id}: listing of /${dir} through ${m}`);
      }
    }
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
    this.ops++;
  }
}

/** Runs the workers to their bound, then checks the tree through both mounts. */
export async function twoWriters(o: TwoWriterOptions): Promise<TwoWriterResult> {
  const start = Date.now();
  for (const d of SHARED_DIRS.slice(1)) await fsp.mkdir(join(o.mounts[0], d), { recursive: true });
  const byKind: Record<string, number> = {};
  const workers = Array.from({ length: o.workers }, (_, i) => new Worker(i, new Rng(o.seed * 100 + i), i % 2 === 0 ? o.mounts : [o.mounts[1], o.mounts[0]], byKind, o.links ?? true));
  await Promise.all(
    workers.map(async (w) => {
      while (w.ops < o.opsPerWorker && Date.now() - start < o.maxMs) await w.step();
    }),
  );
  let files = 0;
  for (const m of o.mounts) {
    const dirs = [...SHARED_DIRS, ...workers.map((_, i) => `w${i}-dir`)];
    for (const d of dirs) {
      const listed = (await fsp.readdir(join(m, d)).catch(() => [] as string[])).filter((n) => /^w\d+-/.test(n) && !/^w\d+-dir$/.test(n)).sort();
      const want = workers.flatMap((w) => [...w.files].filter(([, v]) => v.dir === d).map(([k]) => k)).sort();
      assert.deepEqual(listed, want, `final listing of /${d} through ${m}`);
    }
    for (const w of workers) {
      for (const [name, f] of w.files) {
        const got = await fsp.readFile(join(m, f.dir, name));
        assert.equal(sha(got), sha(f.group.data), `final content of /${join(f.dir, name)} through ${m}`);
        files++;
      }
    }
  }
  return { ops: workers.reduce((n, w) => n + w.ops, 0), byKind, files: files / 2, ms: Date.now() - start };
}
