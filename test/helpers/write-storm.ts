/**
 * A write storm for the crash tests: a separate node process appending to
 * some files and overwriting another in 4 KiB-unaligned chunks with known
 * content, reporting after every round what the file system acknowledged.
 * It runs until a write fails (the mount died under it).
 *
 * Content is a pure function of (seed, offset), so a reader can check that
 * what survived is a prefix of what was written.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { prng } from './tree.js';

/** Deterministic bytes [0, len) of stream `seed`: tree.ts's prng, which BYTES_SOURCE computes in a child process. */
export const stormBytes = prng;

/** tree.ts's prng as `bytes(seed, len)` for the node programs the tests run as child processes. */
export const BYTES_SOURCE = `
import { createCipheriv, createHash } from 'node:crypto';
const bytes = (seed, len) => {
  const key = createHash('sha256').update(seed).digest().subarray(0, 16);
  const c = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  return Buffer.concat([c.update(Buffer.alloc(len)), c.final()]);
};
`;

export interface StormSpec {
  /** Files appended to, from empty (created by the storm). */
  append: string[];
  /** A file of `overwriteSize` bytes rewritten in passes, generation g with stream `${name}#g`; generation 0 must exist before. */
  overwrite: string;
  overwriteSize: number;
  /** Largest append file (the storm stops appending there). */
  maxSize: number;
}

export interface StormProgress {
  /** Bytes of each append file the file system acknowledged. */
  appended: Record<string, number>;
  /** The overwrite pass in progress and how far it got. */
  gen: number;
  cursor: number;
  rounds: number;
}

/** The writer (runs as `node --input-type=module -e SOURCE mnt progressFile specJSON`). */
const WRITER_SOURCE = `${BYTES_SOURCE}
import * as fs from 'node:fs';
const [mnt, progressFile, specJson] = process.argv.slice(1);
const spec = JSON.parse(specJson);
const patterns = Object.fromEntries(spec.append.map((n) => [n, bytes(n, spec.maxSize)]));
const gens = new Map();
const gen = (g) => { if (!gens.has(g)) { gens.clear(); gens.set(g, bytes(spec.overwrite + '#' + g, spec.overwriteSize)); } return gens.get(g); };
const p = { appended: Object.fromEntries(spec.append.map((n) => [n, 0])), gen: 1, cursor: 0, rounds: 0 };
const report = () => { fs.writeFileSync(progressFile + '.tmp', JSON.stringify(p)); fs.renameSync(progressFile + '.tmp', progressFile); };
let step = 0;
const chunk = () => 1000 + ((++step * 2654435761) >>> 0) % 7000; // never a multiple of 4096 on purpose
try {
  const fds = Object.fromEntries(spec.append.map((n) => [n, fs.openSync(mnt + '/' + n, 'w')]));
  const ofd = fs.openSync(mnt + '/' + spec.overwrite, 'r+');
  report();
  for (;;) {
    for (const n of spec.append) {
      const at = p.appended[n];
      const len = Math.min(chunk(), spec.maxSize - at);
      if (len > 0) p.appended[n] = at + fs.writeSync(fds[n], patterns[n], at, len, at); // a short write counts as what it says
    }
    const len = Math.min(chunk(), spec.overwriteSize - p.cursor);
    p.cursor += fs.writeSync(ofd, gen(p.gen), p.cursor, len, p.cursor);
    if (p.cursor >= spec.overwriteSize) { p.gen++; p.cursor = 0; }
    p.rounds++;
    report();
  }
} catch (err) {
  process.stderr.write('storm stopped: ' + err.code + '\\n');
}
`;

export interface Storm {
  child: ChildProcess;
  exited: Promise<void>;
  progress(): StormProgress | null;
}

export function startStorm(mnt: string, progressFile: string, spec: StormSpec): Storm {
  const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER_SOURCE, mnt, progressFile, JSON.stringify(spec)], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.resume();
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return {
    child,
    exited,
    progress: () => {
      try {
        return JSON.parse(readFileSync(progressFile, 'utf8')) as StormProgress;
      } catch {
        return null;
      }
    },
  };
}
