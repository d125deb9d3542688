/**
 * What the differential tester compares after every operation: the tree
 * below a side's root (names, types, sizes, link counts, file contents,
 * symlink targets), read back with ordinary system calls.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { TreeView } from './ops.js';

export interface SnapEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size?: number;
  nlink?: number;
  content?: Buffer;
  target?: string;
  /** An error met while reading this entry (then compared as is). */
  error?: string;
}

function code(err: unknown): string {
  return String((err as { code?: unknown }).code ?? (err as Error).message);
}

/**
 * File contents read by an earlier snapshot, by path, with the stat they
 * were read under. A snapshot reuses one only when the caller does not ask
 * for that file to be read again and its inode, size, mtime and ctime are
 * unchanged: this keeps long runs fast (most operations touch one file).
 */
export type ContentCache = Map<string, { key: string; content: Buffer }>;

export interface SnapshotOptions {
  cache?: ContentCache;
  /** Files that must be read again whatever the cache says. */
  mustRead?: (path: string, st: fs.Stats) => boolean;
}

/** The tree below `root`, sorted by path. */
export function snapshot(root: string, opts: SnapshotOptions = {}): SnapEntry[] {
  const { cache, mustRead } = opts;
  const seen = new Set<string>();
  const out: SnapEntry[] = [];
  const walk = (rel: string): void => {
    let names: string[];
    try {
      names = fs.readdirSync(join(root, rel)).sort();
    } catch (err) {
      out.push({ path: rel + '/', type: 'dir', error: `readdir ${code(err)}` });
      return;
    }
    for (const n of names) {
      const path = rel === '' ? n : `${rel}/${n}`;
      const abs = join(root, path);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(abs);
      } catch (err) {
        out.push({ path, type: 'other', error: `lstat ${code(err)}` });
        continue;
      }
      if (st.isDirectory()) {
        out.push({ path, type: 'dir' });
        walk(path);
      } else if (st.isSymbolicLink()) {
        out.push({ path, type: 'symlink', target: fs.readlinkSync(abs), size: st.size });
      } else if (st.isFile()) {
        const e: SnapEntry = { path, type: 'file', size: st.size, nlink: st.nlink };
        const key = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
        const cached = cache?.get(path);
        seen.add(path);
        if (cached && cached.key === key && !mustRead?.(path, st)) {
          e.content = cached.content;
        } else {
          try {
            e.content = fs.readFileSync(abs);
            cache?.set(path, { key, content: e.content });
          } catch (err) {
            e.error = `read ${code(err)}`;
            cache?.delete(path);
          }
        }
        out.push(e);
      } else {
        out.push({ path, type: 'other' });
      }
    }
  };
  walk('');
  if (cache) for (const p of cache.keys()) if (!seen.has(p)) cache.delete(p);
  return out;
}

/** Where two byte strings first differ, for messages. */
export function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (x: Buffer): string => x.subarray(i, i + 8).toString('hex') || '(end)';
  return `${a.length} vs ${b.length} bytes, first difference at offset ${i}: ${show(a)} vs ${show(b)}`;
}

function describeEntry(e: SnapEntry): string {
  const parts: string[] = [e.type];
  if (e.size !== undefined) parts.push(`size=${e.size}`);
  if (e.nlink !== undefined) parts.push(`nlink=${e.nlink}`);
  if (e.target !== undefined) parts.push(`-> ${e.target}`);
  if (e.error) parts.push(e.error);
  return parts.join(' ');
}

/** The first difference between the tested side `a` and the reference `b`, or null. */
export function diffSnapshots(a: SnapEntry[], b: SnapEntry[]): string | null {
  const names = (s: SnapEntry[]): string => s.map((e) => e.path).join(', ');
  const pa = a.map((e) => e.path).join('\0');
  const pb = b.map((e) => e.path).join('\0');
  if (pa !== pb) return `listings differ:\n  tested:    ${names(a)}\n  reference: ${names(b)}`;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (describeEntry(x) !== describeEntry(y)) return `${x.path}: ${describeEntry(x)} (tested) vs ${describeEntry(y)} (reference)`;
    if (x.content && y.content && !x.content.equals(y.content)) return `${x.path}: contents differ: ${firstDifference(x.content, y.content)}`;
  }
  return null;
}

export function treeView(s: SnapEntry[], openSlots: boolean[]): TreeView {
  return {
    files: s.filter((e) => e.type === 'file').map((e) => e.path),
    dirs: s.filter((e) => e.type === 'dir').map((e) => e.path),
    openSlots,
  };
}
