/**
 * The native write path (native/fastpath/write.c, src/fuse/native-fast-path.ts):
 * writes answered on libfuse's threads leave the bytes a reference file
 * gets from the same writes (unaligned, partly covered blocks, overwrites,
 * growth, a fresh header, writes past the end, which pad the last block and
 * leave holes, and writes into those holes), for the three ciphers it serves; gocryptfs (for AEGIS, which gocryptfs 2.3 lacks:
 * the TypeScript AEGIS) reads the result back. Two processes
 * writing into the same blocks through two names of one file (two kernel
 * inodes, so the kernel does not order them) lose nothing: the file's owner
 * word lets one writer at a time change it. A block that does not open
 * fails the write that needs it with EIO, through JS, as before. With
 * -noprealloc, writes that grow a file go to JS; TSCRYPTFS_NATIVE_WRITE=0
 * sends them all there.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served the
 * writes: `write` counts the writes that reached JS, `nativeWrite` the
 * others. The kernel splits a write that starts inside a page it does not
 * hold whole into two WRITEs, so the writes here are page-aligned where a
 * count must be exact.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { assertFsckClean, cipherPathOf, MOUNT_IMPL, py, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { aegisNativeAvailable } from '../../src/crypto/aegis/backend.js';
import { needs } from '../helpers/requirements.js';
import { flipBits } from '../helpers/tamper.js';

const dir = useMountTmp('native-writes');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };
/** AEGIS writes go native only with the AEGIS addon (AES-NI); without it they stay in JS, which files.test.ts covers. */
const aegisNative = { ...tsOnly, skip: tsOnly.skip || (aegisNativeAvailable() ? false : 'the AEGIS addon is not in use here (no AES-NI, or not built)') };

/** Mounts `cipherdir` with `env` set, runs `fn`, and returns the call counts of the mount. */
async function counted(label: string, cipherdir: string, flags: string[], env: Record<string, string>, fn: (mnt: string) => Promise<void>): Promise<Record<string, number>> {
  return (await withCallCounts(dir.tmp, label, cipherdir, { flags, env }, fn))[1];
}

/**
 * The same 1,500 pwrites into A[0] (through the mount) and A[1] (a reference
 * file): mostly inside the file or at its end, some past it; sizes around
 * the block boundaries; the mount's file reopened now and then. Returns
 * how many went past the end.
 */
const RANDOM_WRITES = `
import random
rnd = random.Random(int(A[2]))
m = os.open(A[0], os.O_RDWR | os.O_CREAT, 0o644)
ref = os.open(A[1], os.O_RDWR | os.O_CREAT, 0o644)
size = gaps = 0
for i in range(1500):
    if rnd.random() < 0.05:
        off = size + rnd.randrange(1, 20000)
        gaps += 1
    elif rnd.random() < 0.3:
        off = size
    else:
        off = rnd.randrange(0, size + 1)
    n = rnd.choice([1, 7, 100, 4095, 4096, 4097, 8192, 10240, 65536, 131072, rnd.randrange(1, 140000)])
    d = os.urandom(n)
    assert os.pwrite(m, d, off) == n
    os.pwrite(ref, d, off)
    size = max(size, off + n)
    if i % 300 == 299:
        os.close(m)
        m = os.open(A[0], os.O_RDWR)
os.close(m)
os.close(ref)
out(gaps)`;

/** Whether files A[0] and A[1] hold the same bytes (compared in chunks), with both sizes. */
const SAME_FILES = `
a, b = open(A[0], 'rb'), open(A[1], 'rb')
same = True
while True:
    x, y = a.read(1 << 20), b.read(1 << 20)
    if x != y:
        same = False
        break
    if not x:
        break
out([same, os.path.getsize(A[0]), os.path.getsize(A[1])])`;

/**
 * Writes past the end, each into A[0] (through the mount) and A[1] (a
 * reference file): new files written first from an offset in block 0 and
 * past it (the header on its own), a short last block padded before a
 * write two blocks on, a whole last block, a write past the end inside
 * the last block, and writes into the holes those left.
 */
const PAST_END = `
cases = [
    ('from100', [(100, 50)]),
    ('from10000', [(10000, 5000)]),
    ('padded', [(0, 5000), (20000, 100), (9000, 10), (13000, 4096)]),
    ('whole', [(0, 8192), (16389, 7)]),
    ('sameblock', [(0, 100), (3000, 10)]),
    ('many', [(0, 1), (70000, 1), (200000, 4097), (135000, 300), (4095, 2)]),
]
for name, writes in cases:
    for root in A[:2]:
        fd = os.open(os.path.join(root, name), os.O_RDWR | os.O_CREAT, 0o644)
        for (off, n) in writes:
            assert os.pwrite(fd, bytes((off + i) % 251 + 1 for i in range(n)), off) == n
        os.close(fd)
out([name for name, _ in cases])`;

test('writes past the end pad the last block and leave holes, natively, as JS does; gocryptfs reads them back', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'past-cipher');
  const ref = join(dir.tmp, 'past-ref');
  await fsp.mkdir(ref);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  let names: string[] = [];
  const compare = async (root: string): Promise<void> => {
    for (const n of names) {
      const [same, size, refSize] = await py<[boolean, number, number]>(SAME_FILES, [join(root, n), join(ref, n)]);
      assert.ok(same && size === refSize, `${n}: ${size} bytes against ${refSize}, ${same ? 'same' : 'other'} bytes`);
    }
  };
  const calls = await counted('past', cipherdir, [], {}, async (m) => {
    names = await py<string[]>(PAST_END, [m, ref]);
    await compare(m);
  });
  if (NATIVE.writes) {
    assert.equal(calls['write'], undefined, `none went to JS: ${JSON.stringify(calls)}`);
    assert.ok((calls['nativeWrite'] ?? 0) >= 16, JSON.stringify(calls));
  }
  // 20,100 bytes: four whole blocks (block 1 padded, 2 and 3 written later) and 3,716 bytes of block 4.
  assert.equal((await fsp.stat(await cipherPathOf(cipherdir, 'padded'))).size, 18 + 4 * (4096 + 32) + 3716 + 32);
  await withMount('gocryptfs', cipherdir, join(dir.tmp, 'past-go'), {}, compare);
  await assertFsckClean(cipherdir);
});

for (const [cipher, flags] of [['AES-GCM', []], ['XChaCha20-Poly1305', ['-xchacha']], ['AEGIS-256X2', ['-aegis']]] as const) {
  const opts = cipher === 'AEGIS-256X2' ? aegisNative : withGocryptfs;
  test(`${cipher}: native writes leave the bytes the same writes give a plain file, and gocryptfs (for AEGIS: the TypeScript AEGIS) reads them back`, opts, async () => {
    const label = `rnd-${flags.join('') || 'gcm'}`;
    const cipherdir = join(dir.tmp, `${label}-cipher`);
    const ref = join(dir.tmp, `${label}-ref`);
    await initCipherdir(MOUNT_IMPL, cipherdir, [...flags]);
    let gaps = 0;
    const calls = await counted(label, cipherdir, [], {}, async (m) => {
      gaps = await py<number>(RANDOM_WRITES, [join(m, 'f'), ref, '11']);
      const [same, size] = await py<[boolean, number, number]>(SAME_FILES, [join(m, 'f'), ref]);
      assert.ok(same, 'the file through the mount differs from the reference');
      assert.equal(size, (await fsp.stat(ref)).size);
    });
    if (NATIVE.writes) {
      assert.ok((calls['nativeWrite'] ?? 0) > 1000, `most writes were native: ${JSON.stringify(calls)}`);
      // None to JS: not the writes past the end (${gaps}), nor those merging into the holes they left (all-zero blocks).
      assert.equal(calls['write'], undefined, `writes past the end (${gaps}) and into holes were native too: ${JSON.stringify(calls)}`);
    }
    // Every sealed block's nonce is its own (the native path cuts them from a per-thread pool); holes are all zero.
    const sealed = await fsp.readFile(await cipherPathOf(cipherdir, 'f'));
    const nonceLen = cipher === 'AES-GCM' ? 16 : 32;
    const nonces = new Set<string>();
    let blocks = 0;
    for (let o = 18; o < sealed.length; o += 4096 + nonceLen + 16) {
      const nonce = sealed.subarray(o, o + nonceLen);
      if (nonce.every((x) => x === 0)) continue;
      nonces.add(nonce.toString('hex'));
      blocks++;
    }
    assert.ok(blocks > 100, `the file has ${blocks} sealed blocks`);
    assert.equal(nonces.size, blocks, 'two blocks of the file share a nonce');
    const readBack = async (g: string): Promise<void> => {
      const [same] = await py<[boolean, number, number]>(SAME_FILES, [join(g, 'f'), ref]);
      assert.ok(same, 'the other implementation reads other bytes than were written');
    };
    // gocryptfs 2.3 has no AEGIS: those blocks are opened by our TypeScript AEGIS, through JS.
    if (cipher !== 'AEGIS-256X2') await withMount('gocryptfs', cipherdir, join(dir.tmp, `${label}-go`), {}, readBack);
    else await counted(`${label}-ts`, cipherdir, [], { TSCRYPTFS_AEGIS: 'ts', TSCRYPTFS_NATIVE_READ: '0' }, readBack);
  });
}

test('two processes writing into the same blocks through two names of one file lose nothing', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'links-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const calls = await counted('links', cipherdir, [], {}, async (m) => {
    const [ok, bad] = await py<[boolean, number[]]>(
      `
a, b = A[0], A[1]
N = 20000
fd = os.open(a, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, bytes(N * 1000), 0)
os.close(fd)
os.link(a, b)
# Each process owns every other 1000-byte stripe and writes each once, both
# from the start on: 1000 is no multiple of a block, so the two keep
# merging into the blocks they share, at about the same time.
pids = []
for who, name in ((1, a), (2, b)):
    pid = os.fork()
    if pid == 0:
        fd = os.open(name, os.O_RDWR)
        for k in range(who - 1, N, 2):
            os.pwrite(fd, bytes([who]) * 1000, k * 1000)
        os.close(fd)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
got = open(a, 'rb').read()
bad = [k for k in range(N) if got[k * 1000:(k + 1) * 1000] != bytes([k % 2 + 1]) * 1000]
out([len(got) == N * 1000, bad[:20]])`,
      [join(m, 'a'), join(m, 'b')],
    );
    assert.ok(ok, 'the size is 20,000,000');
    assert.deepEqual(bad, [], 'stripes that lost their last write');
  });
  if (NATIVE.writes) assert.ok((calls['nativeWrite'] ?? 0) > 0, `some writes were native: ${JSON.stringify(calls)}`);
});

test('a write that needs a block that does not open fails with EIO (through JS) and leaves the rest', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'bad-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await counted('bad-1', cipherdir, [], {}, async (m) => {
    await fsp.writeFile(join(m, 'f'), Buffer.alloc(3 * 4096, 5));
  });
  const cfile = await cipherPathOf(cipherdir, 'f');
  await flipBits(cfile, 18 + 4096 + 32 + 100, 0xff); // inside block 1's ciphertext
  const calls = await counted('bad-2', cipherdir, [], {}, async (m) => {
    const r = await py<string[]>(
      `
fd = os.open(A[0], os.O_RDWR)
out([t(lambda: os.pwrite(fd, b'x', 4096 + 10)), t(lambda: os.pwrite(fd, b'y', 10)), t(lambda: os.pwrite(fd, b'z' * 4096, 4096))])`,
      [join(m, 'f')],
    );
    assert.deepEqual(r, ['EIO', 'OK', 'OK'], 'partial write into the bad block; into a good one; the bad block overwritten whole');
    const back = await fsp.readFile(join(m, 'f'));
    const want = Buffer.alloc(3 * 4096, 5);
    want[10] = 0x79;
    want.fill(0x7a, 4096, 8192);
    assert.ok(back.equals(want), 'the file after the writes');
  });
  assert.equal(calls['write'], NATIVE.writes ? 1 : 3, `the write that needed the bad block went to JS: ${JSON.stringify(calls)}`);
});

test('-noprealloc: writes that grow a file go to JS, overwrites stay native; TSCRYPTFS_NATIVE_WRITE=0: all go to JS', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'noprealloc-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const WRITES = `
fd = os.open(A[0], os.O_RDWR | os.O_CREAT, 0o644)
for i in range(10):
    os.pwrite(fd, bytes([i]) * 8192, i * 8192)
for i in range(10):
    os.pwrite(fd, bytes([100 + i]) * 3000, i * 8192 + 100)
os.close(fd)
out(len(open(A[0], 'rb').read()))`;
  const grown = await counted('noprealloc', cipherdir, ['-noprealloc'], {}, async (m) => {
    assert.equal(await py<number>(WRITES, [join(m, 'f')]), 81_920);
  });
  assert.deepEqual([grown['write'], grown['nativeWrite']], NATIVE.writes ? [10, 10] : [20, undefined], `growing writes to JS, overwrites native: ${JSON.stringify(grown)}`);
  const off = await counted('native-write-0', cipherdir, [], { TSCRYPTFS_NATIVE_WRITE: '0' }, async (m) => {
    assert.equal(await py<number>(WRITES, [join(m, 'g')]), 81_920);
  });
  assert.deepEqual([off['write'], off['nativeWrite']], [20, undefined], JSON.stringify(off));
});

test('a stat racing native writes never brings back the size from before a write (the attribute cache forgets it), answered by JS or natively', tsOnly, async () => {
  // With native opens the file's stats are the fast path's fstat of the
  // native handle; without, JS answers them while native writes (through
  // JS's registered handle) grow the file.
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_OPEN: '0' }]] as const) {
    const cipherdir = join(dir.tmp, `race-${label}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    const calls = await counted(`race-${label}`, cipherdir, [], env, async (m) => {
      // Two threads stat the file by name all the time, so that JS is often
      // answering a getattr of it (with the size it read before) while a
      // native write on another libfuse thread grows it. After each write
      // returns, the writer's own stat must show the new size: a getattr
      // result from before the write, stored in the cache after it, would
      // show the old one (and the kernel would take that size).
      const bad = await py<[number, number][]>(
        `
import threading
path = A[0]
done = threading.Event()
def stat_loop():
    while not done.is_set():
        os.stat(path)
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
threads = [threading.Thread(target=stat_loop) for _ in range(2)]
for th in threads:
    th.start()
bad = []
for i in range(3000):
    os.pwrite(fd, b'x' * 1000, i * 1000)
    n = os.stat(path).st_size
    if n != (i + 1) * 1000:
        bad.append((i, n))
done.set()
for th in threads:
    th.join()
os.close(fd)
out(bad[:10])`,
        [join(m, 'f')],
      );
      assert.deepEqual(bad, [], 'stats after a write that showed another size (write number, size seen)');
    });
    if (NATIVE.writes) assert.ok((calls['nativeWrite'] ?? 0) > 2900, `the writes were native: ${JSON.stringify(calls)}`);
    // A stat of an open file reaches the daemon as fgetattr (libfuse passes the handle on).
    const inJs = (calls['getattr'] ?? 0) + (calls['fgetattr'] ?? 0);
    if (label === 'native' && NATIVE.opens && NATIVE.writes) assert.ok((calls['nativeFgetattr'] ?? 0) > 1000, `stats answered natively meanwhile: ${JSON.stringify(calls)}`);
    else assert.ok(inJs > 1000, `stats reached JS meanwhile: ${JSON.stringify(calls)}`);
  }
});

test('new files get distinct file IDs, on the native write path as through JS', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'file-ids-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const CREATES = `
for i in range(200):
    fd = os.open(os.path.join(A[0], 'n%d' % i), os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, bytes([i % 256]) * 4096, 0)
    os.close(fd)
out(sorted(os.listdir(A[0]))[:1])`;
  const calls = await counted('file-ids', cipherdir, [], {}, async (m) => {
    await py<string[]>(CREATES, [m]);
    for (const i of [0, 99, 199]) assert.deepEqual(await fsp.readFile(join(m, `n${i}`)), Buffer.alloc(4096, i % 256));
  });
  if (NATIVE.writes) assert.ok((calls['nativeWrite'] ?? 0) >= 190, `the first writes of new files were native: ${JSON.stringify(calls)}`);
  const ids = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const head = (await fsp.readFile(await cipherPathOf(cipherdir, `n${i}`))).subarray(0, 18);
    assert.deepEqual([head[0], head[1]], [0, 2], `n${i}: header version 2`);
    const id = head.subarray(2);
    assert.ok(!id.every((x) => x === 0), `n${i}: an all-zero file ID`);
    ids.add(id.toString('hex'));
  }
  assert.equal(ids.size, 200, 'two new files share a file ID');
});
