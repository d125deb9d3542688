/**
 * The standard interoperability test tree, built through any filesystem-like
 * side (the real fs below a gocryptfs mount, a Vault, or an in-memory model
 * that predicts the result), and a reader that walks a side into a
 * canonical manifest.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';
import type { Vault } from '../../src/index.js';

// ------------------------------------------------------------------ sides

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

export interface SideStat {
  type: EntryType;
  /** Permission bits (mode & 0o7777). */
  mode: number;
  size: number;
  nlink: number;
}

/** What the tree builder and the manifest reader need; paths are relative, '/'-separated, '' is the root. */
export interface Side {
  readonly label: string;
  mkdir(p: string, mode: number): Promise<void>;
  /** Create or replace, with `mode` when created. */
  writeFile(p: string, data: Buffer, mode?: number): Promise<void>;
  /** pwrite through an open r+ handle. */
  writeAt(p: string, data: Buffer, pos: number): Promise<void>;
  /** Write at end of file through an O_APPEND handle. */
  append(p: string, data: Buffer): Promise<void>;
  truncate(p: string, len: number): Promise<void>;
  symlink(target: string, p: string): Promise<void>;
  link(existing: string, p: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(p: string): Promise<void>;
  rmdir(p: string): Promise<void>;
  chmod(p: string, mode: number): Promise<void>;
  setxattr(p: string, name: string, value: Buffer): Promise<void>;
  removexattr(p: string, name: string): Promise<void>;

  readdir(p: string): Promise<string[]>;
  lstat(p: string): Promise<SideStat>;
  readFile(p: string): Promise<Buffer>;
  readlink(p: string): Promise<string>;
  listxattr(p: string): Promise<string[]>;
  getxattr(p: string, name: string): Promise<Buffer>;
}

function typeOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
}

/** The real filesystem below `root` (a gocryptfs mount point) through node:fs and src/vault/xattr-io.ts. */
export function fsSide(root: string, label = `fs:${root}`): Side {
  const abs = (p: string): string => (p === '' ? root : join(root, p));
  return {
    label,
    mkdir: (p, mode) => fsp.mkdir(abs(p), { mode }),
    writeFile: (p, data, mode = 0o644) => fsp.writeFile(abs(p), data, { mode }),
    async writeAt(p, data, pos) {
      const h = await fsp.open(abs(p), 'r+');
      try {
        const { bytesWritten } = await h.write(data, 0, data.length, pos);
        if (bytesWritten !== data.length) throw new Error(`short write on ${p}`);
      } finally {
        await h.close();
      }
    },
    async append(p, data) {
      const h = await fsp.open(abs(p), 'a');
      try {
        await h.write(data, 0, data.length, null);
      } finally {
        await h.close();
      }
    },
    truncate: (p, len) => fsp.truncate(abs(p), len),
    symlink: (target, p) => fsp.symlink(target, abs(p)),
    link: (existing, p) => fsp.link(abs(existing), abs(p)),
    rename: (from, to) => fsp.rename(abs(from), abs(to)),
    unlink: (p) => fsp.unlink(abs(p)),
    rmdir: (p) => fsp.rmdir(abs(p)),
    chmod: (p, mode) => fsp.chmod(abs(p), mode),
    setxattr: (p, name, value) => xattr.setAttribute(abs(p), name, value),
    removexattr: (p, name) => xattr.removeAttribute(abs(p), name),

    readdir: (p) => fsp.readdir(abs(p)),
    async lstat(p) {
      const st = await fsp.lstat(abs(p));
      return { type: typeOf(st), mode: st.mode & 0o7777, size: st.size, nlink: st.nlink };
    },
    readFile: (p) => fsp.readFile(abs(p)),
    readlink: (p) => fsp.readlink(abs(p)),
    listxattr: (p) => xattr.listAttributes(abs(p)),
    getxattr: (p, name) => xattr.getAttribute(abs(p), name),
  };
}

/** A Vault's plaintext view. */
export function vaultSide(v: Vault, label = 'vault'): Side {
  const abs = (p: string): string => '/' + p;
  return {
    label,
    mkdir: (p, mode) => v.mkdir(abs(p), mode),
    writeFile: (p, data, mode = 0o644) => v.writeFile(abs(p), data, { mode }),
    async writeAt(p, data, pos) {
      const h = await v.open(abs(p), 'r+');
      try {
        await h.write(data, pos);
      } finally {
        await h.close();
      }
    },
    async append(p, data) {
      const h = await v.open(abs(p), 'a');
      try {
        await h.write(data);
      } finally {
        await h.close();
      }
    },
    async truncate(p, len) {
      const h = await v.open(abs(p), 'r+');
      try {
        await h.truncate(len);
      } finally {
        await h.close();
      }
    },
    symlink: (target, p) => v.symlink(target, abs(p)),
    link: (existing, p) => v.link(abs(existing), abs(p)),
    rename: (from, to) => v.rename(abs(from), abs(to)),
    unlink: (p) => v.unlink(abs(p)),
    rmdir: (p) => v.rmdir(abs(p)),
    chmod: (p, mode) => v.chmod(abs(p), mode),
    setxattr: (p, name, value) => v.setxattr(abs(p), name, value),
    removexattr: (p, name) => v.removexattr(abs(p), name),

    readdir: (p) => v.readdir(abs(p)),
    async lstat(p) {
      const st = await v.stat(abs(p));
      return { type: typeOf(st), mode: st.mode & 0o7777, size: st.size, nlink: st.nlink };
    },
    readFile: (p) => v.readFile(abs(p)),
    readlink: (p) => v.readlink(abs(p)),
    listxattr: (p) => v.listxattr(abs(p)),
    getxattr: (p, name) => v.getxattr(abs(p), name),
  };
}

// ------------------------------------------------------------ the model

interface MemInode {
  kind: 'file' | 'dir' | 'symlink';
  mode: number;
  data: Buffer;
  target: string;
  xattrs: Map<string, Buffer>;
  nlink: number;
  children: Map<string, MemInode>;
}

function enoent(p: string): Error {
  return Object.assign(new Error(`ENOENT: model has no '${p}'`), { code: 'ENOENT' });
}

/**
 * An in-memory filesystem that predicts what the tree should look like
 * (POSIX semantics for the operations the tree uses, umask applied to
 * creation modes). Deliberately simple and independent of both
 * implementations under test.
 */
export class MemSide implements Side {
  readonly label = 'model';
  private readonly root: MemInode = MemSide.node('dir', 0o755);

  constructor(private readonly umask = 0o022) {}

  private static node(kind: MemInode['kind'], mode: number): MemInode {
    return { kind, mode, data: Buffer.alloc(0), target: '', xattrs: new Map(), nlink: 1, children: new Map() };
  }

  private split(p: string): { parent: MemInode; name: string } {
    const parts = p.split('/');
    const name = parts.pop()!;
    let dir = this.root;
    for (const c of parts) {
      const n = dir.children.get(c);
      if (!n || n.kind !== 'dir') throw enoent(p);
      dir = n;
    }
    return { parent: dir, name };
  }

  private get(p: string): MemInode {
    if (p === '') return this.root;
    const { parent, name } = this.split(p);
    const n = parent.children.get(name);
    if (!n) throw enoent(p);
    return n;
  }

  private file(p: string): MemInode {
    const n = this.get(p);
    if (n.kind !== 'file') throw new Error(`model: ${p} is not a file`);
    return n;
  }

  private add(p: string, n: MemInode): void {
    const { parent, name } = this.split(p);
    if (parent.children.has(name)) throw new Error(`model: ${p} exists`);
    parent.children.set(name, n);
  }

  async mkdir(p: string, mode: number): Promise<void> {
    this.add(p, MemSide.node('dir', mode & ~this.umask));
  }
  async writeFile(p: string, data: Buffer, mode = 0o644): Promise<void> {
    const { parent, name } = this.split(p);
    let n = parent.children.get(name);
    if (!n) {
      n = MemSide.node('file', mode & ~this.umask);
      parent.children.set(name, n);
    }
    n.data = Buffer.from(data);
  }
  async writeAt(p: string, data: Buffer, pos: number): Promise<void> {
    const n = this.file(p);
    const end = Math.max(n.data.length, pos + data.length);
    const out = Buffer.alloc(end);
    n.data.copy(out);
    data.copy(out, pos);
    n.data = out;
  }
  async append(p: string, data: Buffer): Promise<void> {
    const n = this.file(p);
    n.data = Buffer.concat([n.data, data]);
  }
  async truncate(p: string, len: number): Promise<void> {
    const n = this.file(p);
    const out = Buffer.alloc(len);
    n.data.copy(out, 0, 0, Math.min(len, n.data.length));
    n.data = out;
  }
  async symlink(target: string, p: string): Promise<void> {
    const n = MemSide.node('symlink', 0o777);
    n.target = target;
    this.add(p, n);
  }
  async link(existing: string, p: string): Promise<void> {
    const n = this.file(existing);
    this.add(p, n);
    n.nlink++;
  }
  async rename(from: string, to: string): Promise<void> {
    const a = this.split(from);
    const n = a.parent.children.get(a.name);
    if (!n) throw enoent(from);
    const b = this.split(to);
    const old = b.parent.children.get(b.name);
    if (old && old.kind === 'dir' && old.children.size > 0) throw new Error(`model: ${to} not empty`);
    if (old) old.nlink--;
    a.parent.children.delete(a.name);
    b.parent.children.set(b.name, n);
  }
  async unlink(p: string): Promise<void> {
    const { parent, name } = this.split(p);
    const n = parent.children.get(name);
    if (!n || n.kind === 'dir') throw enoent(p);
    n.nlink--;
    parent.children.delete(name);
  }
  async rmdir(p: string): Promise<void> {
    const { parent, name } = this.split(p);
    const n = parent.children.get(name);
    if (!n || n.kind !== 'dir') throw enoent(p);
    if (n.children.size > 0) throw new Error(`model: ${p} not empty`);
    parent.children.delete(name);
  }
  async chmod(p: string, mode: number): Promise<void> {
    this.get(p).mode = mode;
  }
  async setxattr(p: string, name: string, value: Buffer): Promise<void> {
    this.get(p).xattrs.set(name, Buffer.from(value));
  }
  async removexattr(p: string, name: string): Promise<void> {
    if (!this.get(p).xattrs.delete(name)) throw Object.assign(new Error('ENODATA'), { code: 'ENODATA' });
  }

  async readdir(p: string): Promise<string[]> {
    return [...this.get(p).children.keys()];
  }
  async lstat(p: string): Promise<SideStat> {
    const n = this.get(p);
    const size = n.kind === 'file' ? n.data.length : n.kind === 'symlink' ? Buffer.byteLength(n.target) : 0;
    return { type: n.kind, mode: n.mode, size, nlink: n.nlink };
  }
  async readFile(p: string): Promise<Buffer> {
    return this.file(p).data;
  }
  async readlink(p: string): Promise<string> {
    return this.get(p).target;
  }
  async listxattr(p: string): Promise<string[]> {
    return [...this.get(p).xattrs.keys()];
  }
  async getxattr(p: string, name: string): Promise<Buffer> {
    const v = this.get(p).xattrs.get(name);
    if (!v) throw Object.assign(new Error('ENODATA'), { code: 'ENODATA' });
    return v;
  }
}

// ------------------------------------------------------------ manifests

export interface ManifestEntry {
  path: string;
  type: EntryType;
  /** Permission bits in octal, e.g. "644". */
  mode: string;
  /** Files: content size; symlinks: target length. Not for directories. */
  size?: number;
  /** Files only: link count. */
  nlink?: number;
  sha256?: string;
  target?: string;
  /** user.* xattrs, sorted by name: [name, value as text, value as hex]. */
  xattrs?: [string, string, string][];
}

const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** Walks a side (root excluded) into a canonical, path-sorted manifest. */
export async function readManifest(side: Side): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  const walk = async (dir: string): Promise<void> => {
    const names = (await side.readdir(dir)).sort();
    for (const name of names) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const st = await side.lstat(path);
      const e: ManifestEntry = { path, type: st.type, mode: st.mode.toString(8) };
      if (st.type === 'file') {
        const data = await side.readFile(path);
        if (data.length !== st.size) throw new Error(`${side.label}: ${path}: stat size ${st.size} but read ${data.length} bytes`);
        e.size = st.size;
        e.nlink = st.nlink;
        e.sha256 = createHash('sha256').update(data).digest('hex');
      } else if (st.type === 'symlink') {
        e.target = await side.readlink(path);
        e.size = st.size;
      }
      if (st.type === 'file' || st.type === 'dir') {
        const xs = (await side.listxattr(path)).filter((n) => n.startsWith('user.')).sort();
        if (xs.length > 0) {
          e.xattrs = [];
          for (const n of xs) {
            const v = await side.getxattr(path, n);
            e.xattrs.push([n, v.toString('utf8'), v.toString('hex')]);
          }
        }
      }
      out.push(e);
      if (st.type === 'dir') await walk(path);
    }
  };
  await walk('');
  return out.sort(byPath);
}

// ----------------------------------------------------------- test content

/** Deterministic pseudo-random bytes (AES-128-CTR keystream keyed by the seed). */
export function prng(seed: string, len: number): Buffer {
  const key = createHash('sha256').update(seed).digest().subarray(0, 16);
  const c = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  return Buffer.concat([c.update(Buffer.alloc(len)), c.final()]);
}

/** An ASCII name of exactly `len` bytes starting with `tag`. */
export function nameOfLength(tag: string, len: number): string {
  const head = `${tag}_${len}_`;
  if (head.length > len) throw new Error(`name tag ${tag} too long for ${len} bytes`);
  return head + 'n'.repeat(len - head.length);
}

/** Plaintext name lengths around the long-name threshold (Documentation/format.md §7.8). */
export interface LongNameLengths {
  /** Longest names still stored unhashed. */
  kept: number[];
  /** Names that get hashed (with .name files). */
  hashed: number[];
  /** Length of the long-named directory. */
  dir: number;
}

/** Default longNameMax 255: 175 kept, 176 hashed, 255 the maximum. */
export const LONG_NAMES_DEFAULT: LongNameLengths = { kept: [175], hashed: [176, 255], dir: 230 };
/** longNameMax 62: 31 kept, 32 hashed (format.md §7.8). */
export const LONG_NAMES_62: LongNameLengths = { kept: [31], hashed: [32, 40, 255], dir: 40 };

/** A hashed-length name for extra long-name cases (first hashed length). */
export function longName(lens: LongNameLengths, tag: string): string {
  return nameOfLength(tag, lens.hashed[0]!);
}

export const FILE_SIZES = [0, 1, 4095, 4096, 4097, 5000, (1 << 20) + 13];
export const fileName = (size: number): string => `file_${size}.bin`;
export const BIG = fileName((1 << 20) + 13);
export const UNICODE_NAME = 'ünïcødé_名前.txt';
export const ABS_TARGET = '/absolute/target/of/a/symlink';
export const HOLE = 'hole.bin';

/**
 * Builds the standard tree through `side`. Paths that must exist afterwards
 * are exactly what the model (MemSide) ends up with.
 */
export async function buildTree(side: Side, lens: LongNameLengths): Promise<void> {
  // Plain files of the interesting sizes (block boundaries at 4096).
  for (const size of FILE_SIZES) await side.writeFile(fileName(size), prng(`file-${size}`, size));

  // Nested directories, 3 deep.
  await side.mkdir('a', 0o755);
  await side.mkdir('a/b', 0o755);
  await side.mkdir('a/b/c', 0o755);
  await side.writeFile('a/b/c/deep.txt', Buffer.from('three levels down\n'));
  await side.writeFile('a/b/mid.bin', prng('mid', 9000));

  // Holes (Documentation/format.md §6.4): a sparse write, growth with truncate (unaligned, aligned, from a partial block), a shrink.
  await side.writeFile(HOLE, Buffer.alloc(0));
  await side.writeAt(HOLE, Buffer.from('start'), 0);
  await side.writeAt(HOLE, Buffer.from('end\n'), 12388);
  await side.writeFile('grown_10000.bin', Buffer.alloc(0));
  await side.truncate('grown_10000.bin', 10000);
  await side.writeFile('grown_8192.bin', Buffer.alloc(0));
  await side.truncate('grown_8192.bin', 8192);
  await side.writeFile('grown_from_100.bin', prng('g100', 100));
  await side.truncate('grown_from_100.bin', 9000);
  await side.writeFile('shrunk.bin', prng('shrunk', 10000));
  await side.truncate('shrunk.bin', 5000);

  // Symlinks: relative (same dir and upwards), absolute, long-named.
  await side.symlink('a/b/c/deep.txt', 'link_rel');
  await side.symlink('../../file_1.bin', 'a/b/link_up');
  await side.symlink(ABS_TARGET, 'link_abs');
  await side.symlink(fileName(4097), longName(lens, 'y'));

  // UTF-8 name.
  await side.writeFile(UNICODE_NAME, Buffer.from('ünïcødé content\n'));

  // Long names around the threshold, a long-named directory with files in it.
  for (const n of [...lens.kept, ...lens.hashed]) await side.writeFile(nameOfLength('f', n), prng(`long-${n}`, 100 + n));
  const ldir = nameOfLength('d', lens.dir);
  await side.mkdir(ldir, 0o755);
  await side.writeFile(`${ldir}/inner.txt`, Buffer.from('inside the long-named directory\n'));
  await side.writeFile(`${ldir}/${longName(lens, 'i')}`, prng('inner-long', 5000));
  await side.mkdir(`${ldir}/sub`, 0o755);
  await side.symlink('../inner.txt', `${ldir}/sub/up`);

  // Xattrs on a file and a directory.
  await side.setxattr(fileName(4097), 'user.test', Buffer.from('hello xattr'));
  await side.setxattr(fileName(4097), 'user.empty', Buffer.alloc(0));
  await side.setxattr('a', 'user.dirattr', Buffer.from('on a directory'));
  await side.setxattr(ldir, 'user.test', Buffer.from('xattr on a long-named dir'));

  // Hard links: across directories, and with a long name.
  await side.link(fileName(5000), 'a/hardlink_5000.bin');
  await side.link(fileName(4096), longName(lens, 'h'));

  // Modes: created restrictive, and changed afterwards.
  await side.writeFile('private.txt', Buffer.from('secret\n'), 0o600);
  await side.mkdir('privdir', 0o700);
  await side.writeFile('privdir/inside.txt', Buffer.from('in a 0700 dir\n'), 0o600);
  await side.writeFile('chmodded.txt', Buffer.from('mode changes\n'));
  await side.chmod('chmodded.txt', 0o640);
  await side.mkdir('chmodded_dir', 0o755);
  await side.chmod('chmodded_dir', 0o750);

  // Renames: file across directories, directory with contents, short <-> long names, replacing a file.
  await side.writeFile('to_rename.txt', Buffer.from('rename me\n'));
  await side.rename('to_rename.txt', 'a/renamed.txt');
  await side.mkdir('dir_to_rename', 0o755);
  await side.writeFile('dir_to_rename/child.txt', Buffer.from('child of a renamed dir\n'));
  await side.mkdir('dir_to_rename/grandchild_dir', 0o755);
  await side.writeFile('dir_to_rename/grandchild_dir/g.txt', Buffer.from('grandchild\n'));
  await side.rename('dir_to_rename', 'a/b/renamed_dir');
  await side.writeFile('short.txt', Buffer.from('was short\n'));
  await side.rename('short.txt', longName(lens, 'r'));
  await side.writeFile(longName(lens, 's'), Buffer.from('was long\n'));
  await side.rename(longName(lens, 's'), 'was_long.txt');
  await side.mkdir(longName(lens, 'm'), 0o755);
  await side.writeFile(`${longName(lens, 'm')}/x.txt`, Buffer.from('in a moved long dir\n'));
  await side.rename(longName(lens, 'm'), `a/${longName(lens, 'n')}`);
  await side.writeFile('replaced.txt', Buffer.from('old content\n'));
  await side.writeFile('replacement.txt', Buffer.from('new content\n'));
  await side.rename('replacement.txt', 'replaced.txt');

  // Deletions: a file, a directory (emptied first), and long-named ones.
  await side.writeFile('deleted.txt', Buffer.from('gone\n'));
  await side.unlink('deleted.txt');
  await side.mkdir('removed_dir', 0o755);
  await side.writeFile('removed_dir/f.txt', Buffer.from('gone too\n'));
  await side.unlink('removed_dir/f.txt');
  await side.rmdir('removed_dir');
  await side.writeFile(longName(lens, 'x'), Buffer.from('gone\n'));
  await side.unlink(longName(lens, 'x'));
  await side.mkdir(longName(lens, 'z'), 0o755);
  await side.rmdir(longName(lens, 'z'));
}

/** Changes made through the gocryptfs mount after the tree was built by tscryptfs. */
export async function mutateFromGocryptfs(side: Side, lens: LongNameLengths): Promise<void> {
  await side.writeAt(BIG, prng('overwrite-middle', 10000), 500_000);
  await side.append(fileName(4097), prng('append', 3000));
  await side.truncate(fileName(5000), 100); // also seen through its hard link
  await side.writeFile(nameOfLength('new', lens.hashed[0]!), prng('new-long', 7000));
}

/** Changes made through the Vault afterwards, to be checked with gocryptfs. */
export async function mutateFromVault(side: Side, lens: LongNameLengths): Promise<void> {
  await side.writeAt(HOLE, prng('fill-hole', 5000), 3000); // across blocks 0..1 of a hole
  await side.truncate(BIG, 300_001);
  await side.writeAt('grown_8192.bin', Buffer.from('far'), 40_000); // new holes after padding
  await side.append(fileName(4095), Buffer.from('x')); // exactly one block now
  await side.unlink(nameOfLength('f', lens.kept[0]!));
  await side.rename(nameOfLength('d', lens.dir), `a/b/c/${nameOfLength('e', lens.dir)}`);
  await side.mkdir(nameOfLength('v', lens.hashed[0]!), 0o711);
  await side.writeFile(`${nameOfLength('v', lens.hashed[0]!)}/${nameOfLength('w', lens.hashed[0]!)}`, prng('vault-new', 4097), 0o600);
  await side.setxattr('a/b/c/deep.txt', 'user.added', Buffer.from('by the vault'));
  await side.removexattr(fileName(4097), 'user.empty');
  await side.chmod(fileName(1), 0o604);
  await side.symlink('🔗 target with spaces', 'a/new_link');
}

/** A short, readable description of how two manifests differ ('' when equal). */
export function diffManifests(actual: ManifestEntry[], expected: ManifestEntry[]): string {
  const short = (p: string): string => (p.length > 60 ? `${p.slice(0, 28)}…${p.slice(-28)} (${p.length})` : p);
  const a = new Map(actual.map((e) => [e.path, e]));
  const b = new Map(expected.map((e) => [e.path, e]));
  const lines: string[] = [];
  for (const p of b.keys()) if (!a.has(p)) lines.push(`missing: ${short(p)}`);
  for (const p of a.keys()) if (!b.has(p)) lines.push(`unexpected: ${short(p)}`);
  for (const [p, e] of a) {
    const x = b.get(p);
    if (!x) continue;
    const keys = new Set([...Object.keys(e), ...Object.keys(x)] as (keyof ManifestEntry)[]);
    for (const k of keys) {
      const va = JSON.stringify(e[k]);
      const vb = JSON.stringify(x[k]);
      if (va !== vb) lines.push(`${short(p)}: ${k} is ${va}, expected ${vb}`);
    }
  }
  return lines.join('\n');
}
