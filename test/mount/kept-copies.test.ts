/**
 * Copies of kept listings (the binding's kept_copy_fill, Documentation/fuse-native.md):
 * rm -r reads one getdents of a directory to see whether it is empty, then
 * opens it again and reads it all. The kernel lists again from memory only
 * a listing it read to the end, so the second pass is a READDIR again; the
 * binding answers it from its copy of the first, while the cipher directory
 * is as it was when that listing was read. What a user sees must be what
 * JS gives:
 * - names, file types (d_type) and inode numbers of a listing read again
 *   after a partial one are those JS lists (TSCRYPTFS_KEPT_COPIES=0), for
 *   a directory whose listing spans several READDIRs (300 names, a long
 *   name, UTF-8 names, a directory, a symlink, a hard link), a small one
 *   and the root;
 * - a change between the partial listing and the full one, made through
 *   the mount or through a second (-sharedstorage) mount of the same cipher
 *   directory, shows in the full one;
 * - rm -r of a tree removes everything (gocryptfs -fsck clean), reading
 *   each directory's listing once.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) counts the listings read from the
 * cipher directory: in JS (`readdir`) and by the native fast path
 * (`nativeList`, Documentation/fuse-native.md §30).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, mountImpl, run, sleep, unmountAndReap, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('kept-copies');
const T = { timeout: 180_000, ...needs('mount', 'python3'), skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : undefined };
const withGocryptfs = { ...T, ...needs('mount', 'python3', 'gocryptfs') };

const counted = callCounter(dir);

/** The listings read from the cipher directory, by JS or natively (neither counts one answered from a copy). */
const listings = (c: Record<string, number>): number => (c['readdir'] ?? 0) + (c['nativeList'] ?? 0);

const LONG = 'l'.repeat(220);
const MAKE_TREE = `
top = A[0]
d = os.path.join(top, 'd')
os.makedirs(os.path.join(d, 'sub', 'deeper'))
for i in range(300):
    with open(os.path.join(d, 'f%03d' % i), 'w') as f:
        f.write(str(i))
for n in ['${LONG}', 'é€😀', '日本語']:
    with open(os.path.join(d, n), 'w') as f:
        f.write(n)
os.symlink('f000', os.path.join(d, 'link'))
os.link(os.path.join(d, 'f001'), os.path.join(d, 'hard'))
with open(os.path.join(d, 'sub', 'x'), 'w') as f:
    f.write('x')
out(0)`;

/** Python: probe(p) reads one getdents of p, as rm -r does first; full(p) lists p with each name's type and inode from the listing alone. */
const LISTERS = `
def probe(p):
    with os.scandir(p) as it:
        next(it, None)
def full(p):
    with os.scandir(p) as it:
        return sorted([e.name, e.inode(), e.is_dir(follow_symlinks=False), e.is_symlink(), e.is_file(follow_symlinks=False)] for e in it)
`;

test('a listing read again right after a partial one gives the names, types and inode numbers JS gives, and is read from the cipher directory once', T, async () => {
  const cipherdir = join(dir.tmp, 'same-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'same-make-mnt'), {}, (m) => py(MAKE_TREE, [m]));
  await sleep(50); // a listing is kept only of a directory whose ctime lies 20 ms in the past (src/vault/listing-state.ts)
  const PASSES = `${LISTERS}
res = []
for p in ['d', 'd/sub', '']:
    probe(os.path.join(A[0], p))
    res.append(full(os.path.join(A[0], p)))
out(res)`;
  const [copied, copiedCalls] = await counted('same-copies', cipherdir, {}, (m) => py<unknown[][][]>(PASSES, [m]));
  const [js, jsCalls] = await counted('same-js', cipherdir, { TSCRYPTFS_KEPT_COPIES: '0' }, (m) => py<unknown[][][]>(PASSES, [m]));
  assert.deepEqual(copied, js);
  const names = copied[0]!.map((e) => e[0]);
  assert.equal(names.length, 300 + 3 + 3);
  for (const n of [LONG, 'é€😀', '日本語', 'link', 'hard', 'sub', 'f299']) assert.ok(names.includes(n), n);
  const byName = new Map(copied[0]!.map((e) => [e[0], e.slice(1)]));
  assert.deepEqual(byName.get('sub')!.slice(1), [true, false, false], 'sub is a directory');
  assert.deepEqual(byName.get('link')!.slice(1), [false, true, false], 'link is a symlink');
  assert.deepEqual(byName.get('f000')!.slice(1), [false, false, true], 'f000 is a file');
  assert.equal(byName.get('hard')![0], byName.get('f001')![0], 'a hard link lists its file’s inode number');
  assert.deepEqual(copied[1]!.map((e) => e[0]), ['deeper', 'x']);
  assert.deepEqual(copied[2]!.map((e) => e[0]), ['d']);
  if (NATIVE.keptCopies) assert.equal(listings(copiedCalls), 3, `one listing per directory read: ${JSON.stringify(copiedCalls)}`);
  else assert.equal(listings(copiedCalls), 6, `kept copies are off in this run: two listings per directory: ${JSON.stringify(copiedCalls)}`);
  assert.equal(listings(jsCalls), 6, `without copies, two: ${JSON.stringify(jsCalls)}`);
});

test('a change between the partial listing and the full one shows, made through the mount or through a second mount', T, async () => {
  const cipherdir = join(dir.tmp, 'change-cipher');
  const other = join(dir.tmp, 'change-other');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'change-make-mnt'), {}, async (m) => {
    await fsp.mkdir(join(m, 'd'));
    for (const n of ['a', 'b']) await fsp.writeFile(join(m, 'd', n), n);
  });
  let unchanged = 0;
  let changed = 0;
  const [, calls] = await counted('change', cipherdir, {}, async (mnt) => {
    await mountImpl(MOUNT_IMPL, cipherdir, other, { flags: ['-sharedstorage'] });
    try {
      const d = join(mnt, 'd');
      const od = join(other, 'd');
      const steps: [string, () => Promise<unknown>, string[]][] = [
        ['nothing', async () => undefined, ['a', 'b']],
        ['create through the other mount', () => fsp.writeFile(join(od, 'c'), 'c'), ['a', 'b', 'c']],
        ['nothing', async () => undefined, ['a', 'b', 'c']],
        ['unlink through the other mount', () => fsp.rm(join(od, 'a')), ['b', 'c']],
        ['rename through the other mount', () => fsp.rename(join(od, 'b'), join(od, 'e')), ['c', 'e']],
        ['mkdir through the other mount', () => fsp.mkdir(join(od, 'sub')), ['c', 'e', 'sub']],
        ['nothing', async () => undefined, ['c', 'e', 'sub']],
        ['create here', () => fsp.writeFile(join(d, 'f'), 'f'), ['c', 'e', 'f', 'sub']],
        ['unlink here', () => fsp.rm(join(d, 'c')), ['e', 'f', 'sub']],
        ['rename here', () => fsp.rename(join(d, 'e'), join(d, 'g')), ['f', 'g', 'sub']],
        ['rmdir here', () => fsp.rmdir(join(d, 'sub')), ['f', 'g']],
        ['nothing', async () => undefined, ['f', 'g']],
      ];
      for (const [what, change, after] of steps) {
        // The kernel lists from memory a listing it read to the end while it
        // holds; a change through the other mount makes it read again, so
        // the partial listing is read from the cipher directory and leaves a copy.
        await fsp.writeFile(join(od, 'reset'), '');
        await fsp.rm(join(od, 'reset'));
        await sleep(50); // keepable again (see above)
        await py(`${LISTERS}\nprobe(A[0])\nout(0)`, [d]);
        await change();
        const listed = await py<string[][]>(`${LISTERS}\nout(full(A[0]))`, [d]);
        assert.deepEqual(listed.map((e) => e[0]), after, `${what}: the full listing`);
        if (what === 'nothing') unchanged++;
        else changed++;
      }
    } finally {
      await unmountAndReap(other);
    }
  });
  // The partial listing is read in every step, the full one only after a change.
  const expected = NATIVE.keptCopies ? unchanged + 2 * changed : 2 * (unchanged + changed);
  assert.equal(listings(calls), expected, `${unchanged} unchanged and ${changed} changed steps: ${JSON.stringify(calls)}`);
});

test('rm -r of a tree removes everything and reads each directory\'s listing once', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'rm-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'rm-make-mnt'), {}, (m) => py(MAKE_TREE, [m]));
  await sleep(50);
  const [left, calls] = await counted('rm', cipherdir, {}, async (m) => {
    const r = await run('rm', ['-r', join(m, 'd')]);
    assert.equal(r.code, 0, r.stderr);
    return fsp.readdir(m);
  });
  assert.deepEqual(left, []);
  assert.deepEqual((await fsp.readdir(cipherdir)).sort(), ['gocryptfs.conf', 'gocryptfs.diriv']);
  if (NATIVE.keptCopies) assert.equal(listings(calls), 4, `d, d/sub, d/sub/deeper, then the root: ${JSON.stringify(calls)}`);
  else assert.equal(listings(calls), 6, `kept copies are off in this run: d, d/sub and d/sub/deeper twice each: ${JSON.stringify(calls)}`);
  await assertFsckClean(cipherdir);
});
