/**
 * The backing-store matrix: the mount suite's core operations with the
 * cipher directory on real backing stores (ext4, xfs, btrfs on loop
 * devices; sshfs to this machine's own sshd; rclone mount of a local
 * directory; exFAT through exfat-fuse), side by side with gocryptfs on the
 * same stores. The plaintext mount points are on local disk.
 *
 * Each store gets three columns:
 *
 *   bare       the steps run directly in a directory on the store: the oracle
 *              of what the store itself can do;
 *   gocryptfs  the steps through a gocryptfs mount of a cipher directory on it;
 *   tscryptfs  the same through a tscryptfs mount.
 *
 * A step records 'ok', what it observed instead (e.g. 'no effect (...)'),
 * or the errno it failed with. tscryptfs must give 'ok' exactly where the
 * bare store does; where the store cannot do a step, it must give what the
 * store gives (or what gocryptfs gives). Which steps a store cannot do is
 * listed, with the reason, in STORE_LIMITS; the bare column is checked
 * against it, so a store that changes its behaviour shows up too.
 *
 * Through the encrypted mounts a few steps are added: remount and re-read
 * everything left, the other implementation mounting the same cipher
 * directory and reading the same tree byte for byte, `gocryptfs -fsck`
 * clean, and a short run of the random-operation tester (test/helpers/fsx)
 * whose reference side is a directory on the bare store, so that it
 * compares the mount with the store's own semantics; on stores whose bare
 * listings cannot serve (FSX_AGAINST_GOCRYPTFS) it is a gocryptfs mount on
 * the same store instead.
 *
 * The whole matrix is printed at the end (console.log); each store's test
 * adds its time and the random tester's summary as diagnostics, and a
 * failing store's assertion message carries its part of the matrix.
 *
 * TSCRYPTFS_BACKING_FLAGS="-noprealloc ..." adds mount flags to every
 * tscryptfs mount (to tell a preallocation problem from anything else);
 * TSCRYPTFS_BACKING_STORES=ext4,sshfs runs only those stores;
 * TSCRYPTFS_BACKING_FSX_OPS sets the random tester's operations (300).
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { liveStores, setUpStore, STORE_KINDS, storeUnmet, tearDownLiveStores, type BackingStore, type StoreKind } from '../helpers/backing-stores.js';
import { describeMismatch, runFsx, type FsxResult } from '../helpers/fsx/engine.js';
import { patternBytes } from '../helpers/fsx/rng.js';
import { gocryptfsFsck } from '../helpers/gocryptfs.js';
import { cleanupMountsUnder, guardMountsUnder, initCipherdir, mountImpl, mountsUnder, run, unguardMountsUnder, unmountAndReap, type MountImpl } from '../helpers/mount.js';
import { py } from '../helpers/mount-suite.js';
import { unmet } from '../helpers/requirements.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

// ------------------------------------------------------------------ steps

const STEPS = [
  'mount',
  'create',
  'write+read',
  'mkdir',
  'rename file',
  'rename over',
  'rename dir',
  'hard link',
  'symlink',
  'truncate',
  'chmod',
  'xattr',
  'untar+diff',
  'remove',
  'relist',
  'unlink open',
  'rename noreplace',
  'remount+reread',
  'other impl reads',
  'fsck',
  'fsx',
] as const;
type Step = (typeof STEPS)[number];

/** Steps that only exist through an encrypted mount ('-' in the bare column). */
const MOUNT_ONLY: ReadonlySet<Step> = new Set(['mount', 'remount+reread', 'other impl reads', 'fsck', 'fsx']);
const NA = '-';

type Column = 'bare' | MountImpl;
const COLUMNS: Column[] = ['bare', 'gocryptfs', 'tscryptfs'];

/** What `gocryptfs -fsck` says when it cannot list xattrs on the store (it counts every such file as corrupt), and nothing else is wrong. */
const FSCK_NO_XATTRS = (errnos: string): string => `clean but for xattr listing (${errnos})`;

/** In STORE_LIMITS' `through`: tscryptfs must give what gocryptfs gives on that store. */
const AS_GOCRYPTFS = '(as gocryptfs)';

/**
 * What each store cannot do, and why: `bare` is what the bare column shows
 * (every step not listed must be 'ok' there), `through` what both encrypted
 * mounts must show when that differs from the bare store. Otherwise
 * tscryptfs must give 'ok' where the bare store does, and where it does
 * not, what the bare store (or gocryptfs) gives.
 */
const STORE_LIMITS: { store: StoreKind; step: Step; bare?: string; through?: string; judged?: false; reason: string }[] = [
  { store: 'sshfs', step: 'hard link', bare: 'ok, nlink 1', reason: 'SFTP attributes carry no link count; sshfs reports 1 for every file' },
  {
    store: 'sshfs',
    step: 'symlink',
    bare: 'EPERM',
    through: 'ok',
    reason: "sshfs's contain_symlinks (on by default in Debian) refuses to read a target with '..' (EPERM); an encrypted target has none",
  },
  { store: 'sshfs', step: 'rename noreplace', bare: 'EEXIST then EINVAL', reason: 'sshfs (libfuse, protocol below 7.23 or no RENAME2) refuses renameat2 flags; the kernel answers EEXIST for an existing target before asking it' },
  { store: 'sshfs', step: 'xattr', bare: 'EOPNOTSUPP', reason: 'SFTP has no extended attributes' },
  {
    store: 'sshfs',
    step: 'unlink open',
    bare: 'listed while open: .fuse_hidden*',
    through: 'ok',
    reason: "sshfs (libfuse) keeps a file unlinked while open under a hidden name until it is closed; through an encrypted mount that name does not decrypt and is not listed",
  },
  { store: 'sshfs', step: 'fsck', through: FSCK_NO_XATTRS('EOPNOTSUPP'), reason: 'SFTP has no extended attributes to list' },
  {
    store: 'sshfs',
    step: 'fsx',
    judged: false,
    reason:
      'no oracle: sshfs gives each name of a hard link its own inode number and cached size, so gocryptfs (the reference here) reads a stale size and fails with EIO, and the tester reuses file contents whose inode, size and whole-second times did not change',
  },
  {
    store: 'rclone',
    step: 'rename dir',
    bare: 'EIO',
    reason: 'rclone VFS (writes cache): a file still waiting for write-back (5 s) reads as EIO once its directory is renamed, until written back',
  },
  { store: 'rclone', step: 'hard link', bare: 'EIO', reason: 'rclone mount has no hard links and answers link() with EIO' },
  { store: 'rclone', step: 'symlink', bare: 'EIO', reason: 'rclone mount without --links has no symlinks and answers symlink() with EIO' },
  { store: 'rclone', step: 'chmod', bare: 'no effect (file 0644, dir 0755)', reason: 'rclone mount accepts chmod and keeps its fixed --file-perms/--dir-perms' },
  { store: 'rclone', step: 'rename noreplace', bare: 'EEXIST then EINVAL', reason: 'rclone mount does not take renameat2 flags (EINVAL); the kernel answers EEXIST for an existing target before asking it' },
  { store: 'rclone', step: 'xattr', bare: 'EIO', reason: 'rclone mount has no extended attributes and answers setxattr with EIO' },
  { store: 'rclone', step: 'fsck', through: FSCK_NO_XATTRS('EIO, EOPNOTSUPP'), reason: 'rclone mount answers listxattr with EOPNOTSUPP on directories and EIO on files' },
  {
    store: 'rclone',
    step: 'fsx',
    judged: false,
    reason:
      'rclone VFS: a name whose file was unlinked while awaiting write-back cannot hold files of a new directory of that name (EIO), and both encrypted mounts write gocryptfs.diriv into every new directory; ' +
      'and its VFS cache makes the tester\'s timing decide where the two mounts first differ from the bare store',
  },
  { store: 'exfat', step: 'hard link', bare: 'EPERM', reason: 'exFAT has no hard links' },
  { store: 'exfat', step: 'symlink', bare: 'ENOSYS', reason: 'exFAT has no symlinks; exfat-fuse has no symlink operation' },
  { store: 'exfat', step: 'chmod', bare: 'no effect (file 0777, dir 0777)', reason: 'exFAT has no permission bits; exfat-fuse accepts chmod and keeps 0777' },
  { store: 'exfat', step: 'rename noreplace', bare: 'EEXIST then EINVAL', reason: 'exfat-fuse (libfuse2) refuses renameat2 flags; the kernel answers EEXIST for an existing target before asking it' },
  { store: 'exfat', step: 'xattr', bare: 'EOPNOTSUPP', reason: 'exFAT has no extended attributes' },
  {
    store: 'exfat',
    step: 'unlink open',
    bare: 'listed while open: .fuse_hidden*',
    through: 'ok',
    reason: "exfat-fuse (libfuse) keeps a file unlinked while open under a hidden name until it is closed; through an encrypted mount that name does not decrypt and is not listed",
  },
  { store: 'exfat', step: 'fsck', through: FSCK_NO_XATTRS('EOPNOTSUPP'), reason: 'exFAT has no extended attributes to list' },
];

/** Mount flags added to every tscryptfs mount (TSCRYPTFS_BACKING_FLAGS, space-separated). */
const TSC_FLAGS = (process.env.TSCRYPTFS_BACKING_FLAGS ?? '').split(/\s+/).filter((f) => f !== '');
const flagsFor = (impl: MountImpl): string[] => (impl === 'tscryptfs' ? TSC_FLAGS : []);

/**
 * Stores whose bare listings cannot be the random tester's reference, and
 * why; there tscryptfs's run is compared with a gocryptfs mount of another
 * cipher directory on the same store (and gocryptfs's own run is left out).
 */
const FSX_AGAINST_GOCRYPTFS: Partial<Record<StoreKind, string>> = {
  sshfs:
    'sshfs (libfuse high-level) renames a file unlinked while open to .fuse_hiddenNNN: the bare store lists it, an encrypted mount cannot decrypt the name and does not; libfuse 3 has no -o hard_remove',
  exfat: 'exfat-fuse (libfuse 2 high-level) renames a file unlinked while open to .fuse_hiddenNNN, as sshfs does; it ignores -o hard_remove',
};

/** Operations of the random tester per mount. */
const FSX_OPS = Number(process.env.TSCRYPTFS_BACKING_FSX_OPS ?? 300);
const FSX_SEED = 20261205;

/** Sizes around block edges (4096-byte blocks), the last two spanning many blocks. */
const SIZES = [0, 1, 4095, 4096, 4097, 65536 + 1, 1024 * 1024 + 13];
const XATTR = 'user.tscryptfs-backing';
const XATTR_VALUE = 'value-\u00e9-1';

// ------------------------------------------------------------ recording

/** glibc's strerror texts by errno name (for the messages of tar, rm, diff). */
let strerrors: [string, string][] = [];

/** The errno a failure names (ENOTSUP, 95, is written EOPNOTSUPP as in the kernel), else a one-line description. */
function outcomeOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return code === 'ENOTSUP' ? 'EOPNOTSUPP' : code;
  return ((err as Error).message ?? String(err)).split('\n')[0]!.slice(0, 100);
}

/** The errno whose strerror text (any case: Go writes it in lower case) appears in `text`, or null. */
function errnoNamed(text: string): string | null {
  const lower = text.toLowerCase();
  const hit = strerrors.find(([msg]) => lower.includes(msg.toLowerCase()));
  return hit ? (hit[1] === 'ENOTSUP' ? 'EOPNOTSUPP' : hit[1]) : null;
}

/** A failure of a program: the errno its message names, else its first line. */
function programFailure(what: string, out: string): Error {
  const code = errnoNamed(out);
  if (code) return Object.assign(new Error(`${what}: ${code}`), { code });
  return new Error(`${what}: ${out.trim().split('\n')[0] ?? ''}`);
}

async function program(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args, { timeoutMs: 60_000 });
  if (r.code !== 0) throw programFailure(cmd, r.stderr + r.stdout);
  return r.stdout;
}

function mismatch(what: string, actual: Buffer, expected: Buffer): Error {
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  return new Error(`${what}: content differs (${actual.length} bytes, expected ${expected.length}, first difference at ${i})`);
}

async function readExpect(p: string, expected: Buffer, what: string): Promise<void> {
  const back = await fsp.readFile(p);
  if (!back.equals(expected)) throw mismatch(what, back, expected);
}

async function expectGone(p: string): Promise<void> {
  try {
    await fsp.lstat(p);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return;
    throw err;
  }
  throw new Error(`${p.split('/').pop()} still exists`);
}

const octal = (m: number): string => '0' + (m & 0o7777).toString(8).padStart(3, '0');

// ---------------------------------------------------------------- the tree

interface Shared {
  /** A generated tree (~300 small files in nested directories) and its tarball. */
  treeSrc: string;
  tarball: string;
}

/** Makes TMP/tree-src/tree: 300 files of 0..6000 PRNG bytes in 31 directories, two with names long enough for gocryptfs's long-name files. */
async function makeTree(tmp: string): Promise<Shared> {
  const root = join(tmp, 'tree-src');
  const tree = join(root, 'tree');
  const dirs = [''];
  for (let a = 0; a < 6; a++) {
    dirs.push(`dir-${a}`);
    for (let b = 0; b < 4; b++) dirs.push(`dir-${a}/sub-${b}`);
  }
  for (const d of dirs) await fsp.mkdir(join(tree, d), { recursive: true });
  for (let i = 0; i < 300; i++) {
    const d = dirs[(i * 7) % dirs.length]!;
    const name = i % 150 === 149 ? `long-${'n'.repeat(190)}-${i}` : `file-${String(i).padStart(3, '0')}.dat`;
    const size = i % 10 === 0 ? 0 : (i * 2654435761) % 6000;
    await fsp.writeFile(join(tree, d, name), patternBytes(7000 + i, size));
  }
  const tarball = join(tmp, 'tree.tar');
  await program('tar', ['-cf', tarball, '-C', root, 'tree']);
  return { treeSrc: tree, tarball };
}

// ---------------------------------------------------------------- steps

/** Per column: the directory `relist` checks, made before the other steps so that its times lie in the past by then. */
interface ColumnState {
  relistMade: number;
  /** Its times have whole seconds only. */
  relistCoarse: boolean;
  relistProblem: unknown;
}

/**
 * How long the directory `relist` reads must have been unchanged first:
 * src/vault/listing-state.ts lets the kernel keep a listing only when the
 * directory's ctime lies 20 ms in the past, or 2 s where times have whole
 * seconds only (sshfs); a little more than that.
 */
const RELIST_AGE_MS = 100;
const RELIST_AGE_COARSE_MS = 2100;

async function prepareRelist(dir: string, state: ColumnState): Promise<void> {
  try {
    await fsp.mkdir(join(dir, 'kl'));
    await fsp.writeFile(join(dir, 'kl', 'a'), 'a');
    await fsp.readdir(join(dir, 'kl'));
    const st = await fsp.stat(join(dir, 'kl'), { bigint: true });
    state.relistCoarse = st.ctimeNs % 1_000_000_000n === 0n && st.mtimeNs % 1_000_000_000n === 0n;
  } catch (err) {
    state.relistProblem = err;
  }
  state.relistMade = Date.now();
}

type StepFn = (dir: string, shared: Shared, state: ColumnState) => Promise<string | void>;

/** The steps that run in every column, in order; each works on its own names. */
const FS_STEPS: [Step, StepFn][] = [
  [
    'create',
    async (dir) => {
      const p = join(dir, 'created');
      await (await fsp.open(p, 'wx', 0o644)).close();
      const st = await fsp.stat(p);
      if (!st.isFile() || st.size !== 0) throw new Error(`created: a ${st.isFile() ? 'file' : 'non-file'} of ${st.size} bytes`);
      if (!(await fsp.readdir(dir)).includes('created')) throw new Error('created: not listed');
    },
  ],
  [
    'write+read',
    async (dir) => {
      for (const [i, size] of SIZES.entries()) {
        const data = patternBytes(1000 + i, size);
        const p = join(dir, `w-${size}`);
        await fsp.writeFile(p, data);
        await readExpect(p, data, `w-${size}`);
        const st = await fsp.stat(p);
        if (st.size !== size) throw new Error(`w-${size}: size ${st.size}`);
      }
      // An overwrite across a block edge inside a file (read-modify-write of two blocks).
      const p = join(dir, `w-${65536 + 1}`);
      const data = patternBytes(1005, 65536 + 1);
      const patch = patternBytes(1100, 21);
      const fh = await fsp.open(p, 'r+');
      try {
        await fh.write(patch, 0, patch.length, 4090);
      } finally {
        await fh.close();
      }
      patch.copy(data, 4090);
      await readExpect(p, data, 'overwrite at 4090');
    },
  ],
  [
    'mkdir',
    async (dir) => {
      await fsp.mkdir(join(dir, 'd1'));
      await fsp.mkdir(join(dir, 'd1', 'd2'));
      if (!(await fsp.stat(join(dir, 'd1', 'd2'))).isDirectory()) throw new Error('d1/d2: not a directory');
      const names = await fsp.readdir(join(dir, 'd1'));
      if (names.join() !== 'd2') throw new Error(`d1 lists ${names.join(', ')}`);
    },
  ],
  [
    'rename file',
    async (dir) => {
      const data = patternBytes(2000, 5000);
      await fsp.mkdir(join(dir, 'rf-dir'));
      await fsp.writeFile(join(dir, 'rf-a'), data);
      await fsp.rename(join(dir, 'rf-a'), join(dir, 'rf-dir', 'rf-b'));
      await expectGone(join(dir, 'rf-a'));
      await readExpect(join(dir, 'rf-dir', 'rf-b'), data, 'rf-dir/rf-b');
    },
  ],
  [
    'rename over',
    async (dir) => {
      const newer = patternBytes(2101, 7000);
      await fsp.writeFile(join(dir, 'ro-old'), patternBytes(2100, 3000));
      await fsp.writeFile(join(dir, 'ro-new'), newer);
      await fsp.rename(join(dir, 'ro-new'), join(dir, 'ro-old'));
      await expectGone(join(dir, 'ro-new'));
      await readExpect(join(dir, 'ro-old'), newer, 'ro-old');
    },
  ],
  [
    'rename dir',
    async (dir) => {
      const inner = patternBytes(2200, 100);
      const deep = patternBytes(2201, 4097);
      await fsp.mkdir(join(dir, 'rd-a', 'sub'), { recursive: true });
      await fsp.writeFile(join(dir, 'rd-a', 'inner'), inner);
      await fsp.writeFile(join(dir, 'rd-a', 'sub', 'deep'), deep);
      await fsp.mkdir(join(dir, 'rd-parent'));
      await fsp.rename(join(dir, 'rd-a'), join(dir, 'rd-parent', 'rd-b'));
      await expectGone(join(dir, 'rd-a'));
      await readExpect(join(dir, 'rd-parent', 'rd-b', 'inner'), inner, 'rd-b/inner');
      await readExpect(join(dir, 'rd-parent', 'rd-b', 'sub', 'deep'), deep, 'rd-b/sub/deep');
    },
  ],
  [
    'hard link',
    async (dir) => {
      const data = patternBytes(2300, 6000);
      const more = patternBytes(2301, 100);
      await fsp.writeFile(join(dir, 'hl-a'), data);
      await fsp.link(join(dir, 'hl-a'), join(dir, 'hl-b'));
      await readExpect(join(dir, 'hl-b'), data, 'hl-b');
      // A write through one name is read through the other.
      await fsp.appendFile(join(dir, 'hl-a'), more);
      await readExpect(join(dir, 'hl-b'), Buffer.concat([data, more]), 'hl-b after appending to hl-a');
      const nlink = (await fsp.stat(join(dir, 'hl-b'))).nlink;
      return nlink === 2 ? 'ok' : `ok, nlink ${nlink}`;
    },
  ],
  [
    'symlink',
    async (dir) => {
      const target = 'some/target/../with/a/path';
      await fsp.symlink(target, join(dir, 'sl'));
      const st = await fsp.lstat(join(dir, 'sl'));
      if (!st.isSymbolicLink()) throw new Error('sl: not a symlink');
      const back = await fsp.readlink(join(dir, 'sl'));
      if (back !== target) throw new Error(`sl -> ${back}`);
      if (st.size !== target.length) throw new Error(`sl: size ${st.size}`);
    },
  ],
  [
    'truncate',
    async (dir) => {
      const p = join(dir, 'tr');
      const data = patternBytes(2400, 10_000);
      await fsp.writeFile(p, data);
      // Up (a hole reads as zeros), down, up again (no old bytes come back), down to a block edge.
      const expect = async (size: number, what: string): Promise<void> => {
        const want = Buffer.alloc(size);
        data.copy(want, 0, 0, Math.min(size, shortest));
        if ((await fsp.stat(p)).size !== size) throw new Error(`${what}: size ${(await fsp.stat(p)).size}, expected ${size}`);
        await readExpect(p, want, what);
      };
      let shortest = data.length;
      await fsp.truncate(p, 20_000);
      await expect(20_000, 'truncate up to 20000');
      await fsp.truncate(p, 5000);
      shortest = 5000;
      await expect(5000, 'truncate down to 5000');
      await fsp.truncate(p, 9000);
      await expect(9000, 'truncate up to 9000');
      await fsp.truncate(p, 4096);
      shortest = 4096;
      await expect(4096, 'truncate down to 4096');
    },
  ],
  [
    'chmod',
    async (dir) => {
      await fsp.writeFile(join(dir, 'ch'), 'chmod me');
      await fsp.mkdir(join(dir, 'chd'));
      await fsp.chmod(join(dir, 'ch'), 0o600);
      await fsp.chmod(join(dir, 'chd'), 0o700);
      const f = (await fsp.stat(join(dir, 'ch'))).mode & 0o7777;
      const d = (await fsp.stat(join(dir, 'chd'))).mode & 0o7777;
      if (f === 0o600 && d === 0o700) return 'ok';
      return `no effect (file ${octal(f)}, dir ${octal(d)})`;
    },
  ],
  [
    'xattr',
    async (dir) => {
      const p = join(dir, 'xa');
      await fsp.writeFile(p, 'has an attribute');
      const r = await py<string>(
        [
          'n, v = A[1], A[2].encode()',
          's = t(lambda: os.setxattr(A[0], n, v))',
          'if s != "OK":',
          '    out(s)',
          'elif os.getxattr(A[0], n) != v:',
          '    out("value differs")',
          'elif n not in os.listxattr(A[0]):',
          '    out("not listed")',
          'else:',
          '    out("ok")',
        ].join('\n'),
        [p, XATTR, XATTR_VALUE],
      );
      if (r !== 'ok') throw Object.assign(new Error(r), /^E[A-Z0-9]+$/.test(r) ? { code: r } : {});
    },
  ],
  [
    'untar+diff',
    async (dir, shared) => {
      const into = join(dir, 'untar');
      await fsp.mkdir(into);
      // Ownership is not the subject here (root's tar would chown every file).
      await program('tar', ['--no-same-owner', '-xf', shared.tarball, '-C', into]);
      await program('diff', ['-r', '--no-dereference', shared.treeSrc, join(into, 'tree')]);
    },
  ],
  [
    'remove',
    async (dir) => {
      await fsp.mkdir(join(dir, 'rmt', 'x', 'y'), { recursive: true });
      for (const [i, d] of ['rmt', 'rmt/x', 'rmt/x/y'].entries()) await fsp.writeFile(join(dir, d, 'f'), patternBytes(2500 + i, 5000));
      const untarred = await fsp.lstat(join(dir, 'untar')).then(() => [join(dir, 'untar')], () => []);
      await program('rm', ['-r', ...untarred, join(dir, 'rmt')]);
      await expectGone(join(dir, 'untar'));
      await expectGone(join(dir, 'rmt'));
    },
  ],
  [
    'relist',
    // A directory listed, then left alone for a while, then changed: every listing shows the change.
    async (dir, _shared, state) => {
      if (state.relistProblem) throw state.relistProblem;
      const kl = join(dir, 'kl');
      const wait = state.relistMade + (state.relistCoarse ? RELIST_AGE_COARSE_MS : RELIST_AGE_MS) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const names = async (): Promise<string> => (await fsp.readdir(kl)).sort().join(',');
      const expectNames = async (want: string, after: string): Promise<void> => {
        const got = await names();
        if (got !== want) throw new Error(`stale listing after ${after}: [${got}], expected [${want}]`);
      };
      await expectNames('a', 'a pause');
      await expectNames('a', 'a pause');
      await fsp.writeFile(join(kl, 'b'), 'b');
      await expectNames('a,b', 'create');
      await fsp.unlink(join(kl, 'a'));
      await expectNames('b', 'unlink');
      await fsp.rename(join(kl, 'b'), join(kl, 'c'));
      await expectNames('c', 'rename');
      await fsp.mkdir(join(kl, 'd'));
      await expectNames('c,d', 'mkdir');
    },
  ],
  [
    'unlink open',
    // A file renamed while open, then unlinked: its name is gone at once (a libfuse store's own hidden name shown as .fuse_hidden*).
    // Written first, and left empty: rclone gives an empty file renamed while open another inode number, so it is found by the handle libfuse names.
    async (dir) => {
      const uo = join(dir, 'uo');
      await fsp.mkdir(uo);
      for (const [name, data] of [['f', 'open'], ['e', '']]) {
        const h = await fsp.open(join(uo, name), 'a+');
        try {
          if (data !== '') await h.write(data);
          await fsp.rename(join(uo, name), join(uo, `${name}2`));
          await fsp.unlink(join(uo, `${name}2`));
          const left = (await fsp.readdir(uo)).map((n) => n.replace(/^\.fuse_hidden[0-9a-f]+$/, '.fuse_hidden*'));
          if (left.length > 0) throw new Error(`listed while open: ${left.join(' ')}`);
        } finally {
          await h.close();
        }
      }
    },
  ],
  [
    'rename noreplace',
    // renameat2(RENAME_NOREPLACE) onto an existing name (EEXIST) and onto a new one: made with the flag on the store, so a store that refuses it gives its own EINVAL.
    async (dir) => {
      const r = await py<string>(
        [
          'import ctypes',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'def r2(a, b):',
          '    if libc.renameat2(-100, a.encode(), -100, b.encode(), 1) != 0:',
          '        e = ctypes.get_errno()',
          '        raise OSError(e, os.strerror(e))',
          'for n in ("nr1", "nr2"):',
          '    with open(os.path.join(A[0], n), "w") as f: f.write(n)',
          'onto = t(lambda: r2(os.path.join(A[0], "nr1"), os.path.join(A[0], "nr2")))',
          'new = t(lambda: r2(os.path.join(A[0], "nr1"), os.path.join(A[0], "nr3")))',
          'out("ok" if (onto, new) == ("EEXIST", "OK") else new if onto == new else onto + " then " + new)',
        ].join('\n'),
        [dir],
      );
      if (r !== 'ok') throw Object.assign(new Error(r), /^E[A-Z0-9]+$/.test(r) ? { code: r } : {});
    },
  ],
];

// ------------------------------------------------------------- manifests

interface Manifest {
  entries: string[];
  /** Entries that could not be read, with the errno. */
  errors: string[];
  /** The test attribute of `xa`, or why it cannot be read. */
  xattr: string;
}

/** Everything below `root`: path, type, permission bits, size, link count, sha256 of the content, symlink target; and what could not be read. */
async function manifest(root: string): Promise<Manifest> {
  const entries: string[] = [];
  const errors: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let names: string[];
    try {
      names = (await fsp.readdir(join(root, rel))).sort();
    } catch (err) {
      errors.push(`${rel || '.'}/ ${outcomeOf(err)}`);
      return;
    }
    for (const n of names) {
      const path = rel === '' ? n : `${rel}/${n}`;
      const abs = join(root, path);
      try {
        const st = await fsp.lstat(abs);
        if (st.isDirectory()) {
          entries.push(`${path}/ dir ${octal(st.mode)}`);
          await walk(path);
        } else if (st.isSymbolicLink()) {
          entries.push(`${path} -> ${await fsp.readlink(abs)}`);
        } else {
          const sha = createHash('sha256').update(await fsp.readFile(abs)).digest('hex').slice(0, 16);
          entries.push(`${path} file ${octal(st.mode)} size=${st.size} nlink=${st.nlink} sha=${sha}`);
        }
      } catch (err) {
        errors.push(`${path} ${outcomeOf(err)}`);
      }
    }
  };
  await walk('');
  const xattr = await py<string>('r = []\ndef g(): r.append(os.getxattr(A[0], A[1]).decode())\ne = t(g)\nout(r[0] if e == "OK" else e)', [join(root, 'xa'), XATTR]);
  return { entries, errors, xattr };
}

/**
 * The manifest of a tree just written. On rclone, files waiting for
 * write-back below a renamed directory read as EIO until written back
 * (STORE_LIMITS), so there it is read again until it reads whole (or 15 s).
 */
async function settledManifest(store: StoreKind, root: string): Promise<Manifest> {
  const end = Date.now() + (store === 'rclone' ? 15_000 : 0);
  for (;;) {
    const m = await manifest(root);
    if (m.errors.length === 0 || Date.now() >= end) return m;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** How `now` (a mount of the same tree later) differs from `before`; everything must read in both. */
function diffManifest(before: Manifest, now: Manifest): string | null {
  if (before.errors.length > 0) return `unreadable before unmounting: ${before.errors[0]}`;
  if (now.errors.length > 0) return `unreadable: ${now.errors[0]}`;
  const sa = new Set(before.entries);
  const sb = new Set(now.entries);
  const missing = before.entries.find((e) => !sb.has(e));
  const extra = now.entries.find((e) => !sa.has(e));
  if (missing || extra) return `differs: ${missing ? `had ${missing}` : ''}${missing && extra ? '; ' : ''}${extra ? `now ${extra}` : ''}`;
  if (before.xattr !== now.xattr) return `differs: xattr ${before.xattr} then ${now.xattr}`;
  return null;
}

/**
 * `gocryptfs -fsck`: 'ok' when clean; when the only problems are files
 * whose xattrs cannot be listed (a store without xattrs), says so with the
 * errno; else the first other problem.
 */
async function fsck(cipherdir: string): Promise<string> {
  const f = await gocryptfsFsck(cipherdir);
  const out = f.stdout + f.stderr;
  if (f.code === 0 && /no problems found/.test(out)) return 'ok';
  const problems = out.split('\n').filter((l) => l.startsWith('fsck: '));
  const xattrs = problems.map((l) => /^fsck: error listing xattrs on ".*": (.+)$/.exec(l)?.[1]);
  const summary = /fsck summary: (\d+) corrupt files/.exec(out);
  if (summary && xattrs.length === Number(summary[1]) && xattrs.every((m) => m !== undefined)) {
    return FSCK_NO_XATTRS([...new Set(xattrs.map((m) => errnoNamed(m!) ?? m!))].sort().join(', '));
  }
  return `fsck exit ${f.code}: ${problems.find((l) => !l.startsWith('fsck: error listing xattrs')) ?? out.trim().split('\n').slice(-1)[0] ?? ''}`;
}

// ------------------------------------------------------------- columns

type Results = Record<Step, string>;

function emptyResults(): Results {
  return Object.fromEntries(STEPS.map((s) => [s, NA])) as Results;
}

/** The whole messages of the failures in the current store that are not a bare errno (a mount's output, a program's), for the notes. */
let failureDetails: string[] = [];

/** Runs one step of one column: 'ok', what the step returned, or the failure's errno or first line. */
async function attempt(label: string, fn: () => Promise<string | void>): Promise<string> {
  try {
    return (await fn()) ?? 'ok';
  } catch (err) {
    const outcome = outcomeOf(err);
    const message = String((err as Error).message ?? err);
    if (!/^E[A-Z0-9]+$/.test(outcome) && message.includes('\n')) failureDetails.push(`${label}: ${message.trim().slice(0, 1500)}`);
    return outcome;
  }
}

async function runFsSteps(column: Column, dir: string, shared: Shared, r: Results): Promise<void> {
  const state: ColumnState = { relistMade: 0, relistCoarse: false, relistProblem: null };
  await prepareRelist(dir, state);
  for (const [step, fn] of FS_STEPS) r[step] = await attempt(`${column} ${step}`, () => fn(dir, shared, state));
}

/** The bare store: the steps in a directory on it. */
async function bareColumn(store: BackingStore, shared: Shared): Promise<Results> {
  const r = emptyResults();
  const dir = join(store.mountpoint, 'bare');
  await fsp.mkdir(dir);
  await runFsSteps('bare', dir, shared, r);
  return r;
}

const other = (impl: MountImpl): MountImpl => (impl === 'tscryptfs' ? 'gocryptfs' : 'tscryptfs');

/** Mounts `cipherdir` with `impl` at `mnt`, runs `fn`, and unmounts whatever happens. */
async function mounted<T>(impl: MountImpl, cipherdir: string, mnt: string, fn: (mnt: string) => Promise<T>): Promise<T> {
  await mountImpl(impl, cipherdir, mnt, { flags: flagsFor(impl) });
  try {
    return await fn(mnt);
  } finally {
    await unmountAndReap(mnt);
  }
}

/** One implementation: a cipher directory on the store, the steps through its mount, then the checks after unmounting. */
async function implColumn(impl: MountImpl, store: BackingStore, base: string, shared: Shared): Promise<{ results: Results; fsxNote: string }> {
  const r = emptyResults();
  const cipherdir = join(store.mountpoint, `cipher-${impl}`);
  const mnt = join(base, `mnt-${impl}`);
  let before: Manifest | null = null;
  r.mount = await attempt(`${impl} mount`, async () => {
    await initCipherdir(impl, cipherdir);
    await mountImpl(impl, cipherdir, mnt, { flags: flagsFor(impl) });
  });
  if (r.mount !== 'ok') {
    for (const step of STEPS) if (step !== 'mount') r[step] = 'not run';
    return { results: r, fsxNote: '' };
  }
  try {
    await runFsSteps(impl, mnt, shared, r);
    before = await settledManifest(store.kind, mnt);
  } finally {
    await unmountAndReap(mnt);
  }
  r['remount+reread'] = await attempt(`${impl} remount+reread`, () =>
    mounted(impl, cipherdir, join(base, `mnt-${impl}-again`), async (m) => diffManifest(before!, await manifest(m)) ?? 'ok'),
  );
  r['other impl reads'] = await attempt(`${impl} other impl reads`, () =>
    mounted(other(impl), cipherdir, join(base, `mnt-${impl}-by-${other(impl)}`), async (m) => diffManifest(before!, await manifest(m)) ?? 'ok'),
  );
  r.fsck = await attempt(`${impl} fsck`, () => fsck(cipherdir));
  // The random tester: its reference side is a directory on the bare store, or a gocryptfs mount on it (FSX_AGAINST_GOCRYPTFS).
  let fsxNote = '';
  const viaGocryptfs = FSX_AGAINST_GOCRYPTFS[store.kind] !== undefined;
  if (viaGocryptfs && impl === 'gocryptfs') return { results: r, fsxNote };
  const fsxRun = async (tested: string, reference: string, referenceImpl: MountImpl): Promise<string> => {
    const against = referenceImpl === impl ? 'the bare store' : `gocryptfs on ${store.kind}`;
    let res: FsxResult;
    try {
      res = await runFsx({ testedRoot: tested, referenceRoot: reference, seed: FSX_SEED, ops: FSX_OPS, impl: referenceImpl, maxReplays: 60 });
    } catch (err) {
      // The tester removes its directories in a finally: an error there (rm -r failing) replaces whatever ended the run.
      const e = err as NodeJS.ErrnoException;
      throw new Error(`aborted: ${e.code ?? e.message}${e.syscall ? ` (${e.syscall})` : ''}`);
    }
    if (res.mismatch) {
      fsxNote = describeMismatch(`${impl} on ${store.kind} against ${against}`, res);
      return `mismatch: ${res.mismatch.message.split('\n')[0]!.slice(0, 90)}`;
    }
    const failed = Object.values(res.counts).reduce((n, c) => n + c.errors, 0);
    fsxNote = `${impl} on ${store.kind} against ${against}: ${res.opsRun} operations alike (${failed} failing alike), seed ${FSX_SEED}`;
    return res.opsRun === FSX_OPS ? 'ok' : `ran ${res.opsRun} of ${FSX_OPS}`;
  };
  r.fsx = await attempt(`${impl} fsx`, () =>
    mounted(impl, cipherdir, join(base, `mnt-${impl}-fsx`), async (m) => {
      if (!viaGocryptfs) {
        const reference = join(store.mountpoint, `fsx-reference-${impl}`);
        await fsp.mkdir(reference);
        return fsxRun(m, reference, impl);
      }
      // gocryptfs in the reference role: the tester then steps around its known gocryptfs divergences (known.ts).
      const refCipher = join(store.mountpoint, 'fsx-reference-cipher');
      await initCipherdir('gocryptfs', refCipher);
      return mounted('gocryptfs', refCipher, join(base, 'mnt-fsx-reference'), (ref) => fsxRun(m, ref, 'gocryptfs'));
    }),
  );
  return { results: r, fsxNote };
}

// ------------------------------------------------------------ judging

function limitOf(store: StoreKind, step: Step): (typeof STORE_LIMITS)[number] | undefined {
  return STORE_LIMITS.find((l) => l.store === store && l.step === step);
}

/** What tscryptfs (or gocryptfs) must give in a step on a store, given the bare store's answer; null: the bare store's or gocryptfs's answer. */
function expectedThrough(store: StoreKind, step: Step, bare: string, go: string): string | null {
  const limit = limitOf(store, step);
  if (limit?.through === AS_GOCRYPTFS) return go;
  return limit?.through ?? (bare === 'ok' || bare === NA ? 'ok' : null);
}

/** What is wrong with a store's row, by the rules in the header. */
function judge(store: StoreKind, cols: Record<Column, Results>): string[] {
  const problems: string[] = [];
  for (const step of STEPS) {
    const bare = cols.bare[step];
    const go = cols.gocryptfs[step];
    const ts = cols.tscryptfs[step];
    const limit = limitOf(store, step);
    const expectedBare = MOUNT_ONLY.has(step) ? NA : (limit?.bare ?? 'ok');
    if (bare !== expectedBare) problems.push(`${step}: the bare store gives ${JSON.stringify(bare)}, STORE_LIMITS expects ${JSON.stringify(expectedBare)}`);
    if (limit?.judged === false) continue;
    const want = expectedThrough(store, step, bare, go);
    if (want !== null ? ts !== want : ts !== bare && ts !== go) {
      problems.push(`${step}: tscryptfs gives ${JSON.stringify(ts)}, expected ${JSON.stringify(want ?? bare)}; the bare store gives ${JSON.stringify(bare)}, gocryptfs ${JSON.stringify(go)}`);
    }
  }
  return problems;
}

const LEGEND = '! tscryptfs rejected by the rules, * gocryptfs unlike what the rules ask of tscryptfs, ~ not judged (STORE_LIMITS)';

const MAX_CELL = 64;
const clip = (x: string, n: number): string => (x.length > n ? x.slice(0, n - 1) + '\u2026' : x);

/** A store's rows: one per step, one column per implementation, with the marks of LEGEND. */
function table(store: StoreKind, fstype: string, cols: Record<Column, Results>): string[] {
  const bad = new Set(judge(store, cols).map((p) => p.slice(0, p.indexOf(':'))));
  const rows = STEPS.map((step) => {
    const bare = cols.bare[step];
    const go = cols.gocryptfs[step];
    const ts = cols.tscryptfs[step];
    const unjudged = limitOf(store, step)?.judged === false;
    const want = expectedThrough(store, step, bare, go);
    const goOff = go !== NA && (want !== null ? go !== want : go !== bare);
    const mark = (x: string, m: string): string => (x === NA || m === '' ? x : `${clip(x, MAX_CELL - 2)} ${m}`);
    return [step, bare, mark(go, unjudged ? '~' : goOff ? '*' : ''), mark(ts, unjudged ? '~' : bad.has(step) ? '!' : '')];
  });
  const header = ['step', ...COLUMNS];
  const width = header.map((h, i) => Math.min(MAX_CELL, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (r: string[]): string => `  ${r.map((x, i) => clip(x, width[i]!).padEnd(width[i]!)).join('  ')}`.trimEnd();
  return [`${store} (${fstype})`, line(header), ...rows.map(line)];
}

// ---------------------------------------------------------------- tests

let tmp = '';
let shared: Shared | null = null;
const matrix: string[] = [];
const NEEDS = unmet('mount', 'gocryptfs', 'python3');

before(async () => {
  if (NEEDS) return;
  process.umask(0o022);
  tmp = makeTempDir('tscryptfs-mount-backing-');
  guardMountsUnder(tmp);
  shared = await makeTree(tmp);
  strerrors = Object.entries(
    await py<Record<string, string>>('out({os.strerror(n): name for n, name in errno.errorcode.items()})'),
  ).sort((a, b) => b[0].length - a[0].length);
});

after(async () => {
  if (matrix.length > 0) {
    const head = `backing-store matrix (columns: bare store, gocryptfs, tscryptfs${TSC_FLAGS.length ? ` with ${TSC_FLAGS.join(' ')}` : ''}; ${LEGEND}):`;
    console.log([head, ...matrix].join('\n'));
  }
  if (!tmp) return;
  // Stores are torn down by their tests; one still set up (its test ended by its timeout) goes here, after the mounts that use it.
  const problems: string[] = [];
  const stores = liveStores();
  if (stores.length > 0) {
    problems.push(`stores still set up at the end: ${stores.join(', ')}`);
    for (const m of mountsUnder(tmp).filter((m) => !stores.includes(m))) await unmountAndReap(m).catch((e: Error) => problems.push(e.message));
    problems.push(...(await tearDownLiveStores()));
  }
  problems.push(...(await cleanupMountsUnder(tmp)));
  removeTempDir(tmp);
  unguardMountsUnder(tmp);
  const serious = problems.filter((m) => !m.startsWith('still mounted at the end'));
  if (serious.length > 0) throw new Error(`cleanup found: ${serious.join('; ')}`);
});

/** TSCRYPTFS_BACKING_STORES=ext4,sshfs runs only those stores (all by default). */
const ONLY = (process.env.TSCRYPTFS_BACKING_STORES ?? '').split(',').filter((k) => k !== '');

for (const kind of STORE_KINDS.filter((k) => ONLY.length === 0 || ONLY.includes(k))) {
  const skip = NEEDS ?? storeUnmet(kind);
  test(`backing store ${kind}: bare, gocryptfs and tscryptfs agree on every step`, { timeout: 150_000, ...(skip ? { skip } : {}) }, async (t: TestContext) => {
    const base = join(tmp, kind);
    const started = Date.now();
    failureDetails = [];
    const store = await setUpStore(kind, base);
    const cols = {} as Record<Column, Results>;
    const fsxNotes: string[] = [];
    const teardownProblems: string[] = [];
    let failure: unknown = null;
    try {
      if (store.fstype !== expectedFstype(kind)) throw new Error(`the ${kind} store is mounted as ${store.fstype}, expected ${expectedFstype(kind)}`);
      cols.bare = await bareColumn(store, shared!);
      for (const impl of ['gocryptfs', 'tscryptfs'] as const) {
        const { results, fsxNote } = await implColumn(impl, store, base, shared!);
        cols[impl] = results;
        if (fsxNote) fsxNotes.push(fsxNote);
      }
    } catch (err) {
      failure = err;
    } finally {
      // Encrypted mounts first (they use the store), then the store.
      for (const m of mountsUnder(base).filter((m) => m !== store.mountpoint)) {
        teardownProblems.push(`left mounted: ${m}`);
        await unmountAndReap(m).catch((e: Error) => teardownProblems.push(e.message));
      }
      teardownProblems.push(...(await store.teardown()));
    }
    for (const c of COLUMNS) cols[c] ??= emptyResults();
    const lines = table(kind, store.fstype, cols);
    const notes = [
      `${kind}: ${((Date.now() - started) / 1000).toFixed(1)} s`,
      ...fsxNotes.flatMap((n) => n.split('\n').map((l) => `fsx: ${l}`)),
      ...failureDetails.flatMap((d) => d.split('\n').map((l) => `failure: ${l}`)),
    ];
    matrix.push(...lines, ...notes.map((n) => `  ${n}`));
    for (const n of notes) t.diagnostic(n);
    if (failure) throw failure;
    assert.deepEqual(teardownProblems, [], `tearing down the ${kind} store`);
    const problems = judge(kind, cols);
    assert.deepEqual(problems, [], `${kind}:\n${lines.join('\n')}`);
  });
}

function expectedFstype(kind: StoreKind): string {
  return kind === 'sshfs' ? 'fuse.sshfs' : kind === 'rclone' ? 'fuse.rclone' : kind === 'exfat' ? 'fuseblk' : kind;
}
