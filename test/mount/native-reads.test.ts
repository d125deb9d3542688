/**
 * The native read path (src/fuse/native-fast-path.ts, native/fastpath/read.c):
 * reads answered on libfuse's threads give the bytes written, for the three
 * ciphers it serves (AEGIS-256X2 through the AEGIS addon's function, and a
 * tampered AEGIS block still fails alone); a read racing writes of the same blocks returns one
 * whole write, never a mix and never EIO (it falls back to the JS path under
 * the file's lock); -sharedstorage and AES-SIV mounts read through JS only.
 * The fallbacks for damaged blocks and holes are covered by errno.test.ts
 * ("a tampered block") and files.test.ts ("writes past EOF leave holes").
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served the reads:
 * `read` counts the reads that reached JS, `nativeRead` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { cipherPathOf, MOUNT_IMPL, py, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { aegisNativeAvailable } from '../../src/crypto/aegis/backend.js';
import { prng } from '../helpers/tree.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-reads');
const T = { timeout: 120_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
/** AEGIS reads go native only with the AEGIS addon (AES-NI); without it they stay in JS, which files.test.ts covers. */
const aegisNative = { ...tsOnly, skip: tsOnly.skip || (aegisNativeAvailable() ? false : 'the AEGIS addon is not in use here (no AES-NI, or not built)') };

/** Mounts a fresh cipher directory made with `initFlags`, runs `fn`, and returns the call counts of the mount (none from gocryptfs). */
async function counted(label: string, initFlags: string[], flags: string[], fn: (mnt: string) => Promise<void>): Promise<Record<string, number>> {
  const cipherdir = join(dir.tmp, `${label}-cipher`);
  await initCipherdir(MOUNT_IMPL, cipherdir, initFlags);
  return (await withCallCounts(dir.tmp, label, cipherdir, { flags }, fn))[1];
}

/** Writes `data`, drops the file's cached pages, and checks 300 random preads (some past the end) against it. */
async function writeAndCheckReads(file: string, data: Buffer): Promise<void> {
  await fsp.writeFile(file, data);
  const src = `${file}.expected`;
  await fsp.writeFile(src, data);
  const bad = await py<string[]>(
    `
import random
want = open(A[1], 'rb').read()
fd = os.open(A[0], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
rnd = random.Random(7)
bad = []
for i in range(300):
    off = rnd.randrange(0, len(want) + 9000)
    n = rnd.choice([1, 17, 4096, 4097, 65536, 131072, rnd.randrange(1, 200000)])
    if os.pread(fd, n, off) != want[off:off + n]:
        bad.append('%d+%d' % (off, n))
    if i % 50 == 0:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)
out(bad)`,
    [file, src],
  );
  await fsp.rm(src);
  assert.deepEqual(bad, [], 'reads that differ from what was written');
}

for (const [cipher, flags] of [['AES-GCM', []], ['XChaCha20-Poly1305', ['-xchacha']], ['AEGIS-256X2', ['-aegis']]] as const) {
  const opts = cipher === 'AEGIS-256X2' ? aegisNative : tsOnly;
  test(`${cipher}: reads are answered natively and give the bytes written (whole, partial and unaligned ranges, end of file)`, opts, async () => {
    const calls = await counted(cipher, [...flags], [], async (m) => {
      await writeAndCheckReads(join(m, 'f.bin'), prng(cipher, 1_048_576 + 13));
      await writeAndCheckReads(join(m, 'small.bin'), prng(`${cipher}-small`, 100));
      await fsp.writeFile(join(m, 'empty'), '');
      assert.equal((await fsp.readFile(join(m, 'empty'))).length, 0);
    });
    if (NATIVE.reads) {
      assert.ok((calls['nativeRead'] ?? 0) > 0, `native reads: ${JSON.stringify(calls)}`);
      assert.equal(calls['read'] ?? 0, 0, `every read of an undamaged file is native: ${JSON.stringify(calls)}`);
    } else {
      assert.equal(calls['nativeRead'], undefined, `native reads are off in this run: ${JSON.stringify(calls)}`);
    }
  });
}

test('AEGIS-256X2: a tampered block fails alone (EIO) while the blocks around it are read natively', aegisNative, async () => {
  const cipherdir = join(dir.tmp, 'aegis-tamper-cipher');
  const data = prng('aegis-tamper', 3 * 4096);
  await initCipherdir(MOUNT_IMPL, cipherdir, ['-aegis']);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'aegis-tamper-mnt'), {}, async (m) => {
    await fsp.writeFile(join(m, 'f'), data);
  });
  const cp = await cipherPathOf(cipherdir, 'f');
  const sealed = await fsp.readFile(cp);
  assert.equal(sealed.length, 18 + 3 * (4096 + 48), 'AEGIS blocks carry a 32-byte nonce and a 16-byte tag');
  sealed[18 + (4096 + 48) + 32 + 100]! ^= 1; // block 1's ciphertext
  await fsp.writeFile(cp, sealed);
  const stats = join(dir.tmp, 'aegis-tamper-ops.json');
  process.env.TSCRYPTFS_OPSTATS = stats;
  try {
    await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'aegis-tamper-mnt'), {}, async (m) => {
      const r = await py<[string, string, string, string]>(
        `
fd = os.open(A[0], os.O_RDONLY)
want = bytes.fromhex(A[1])
def rd(off, expect):
    if os.pread(fd, 4096, off) != expect:
        raise OSError(0, 'wrong bytes')
res = [t(lambda: rd(0, want[:4096])), t(lambda: rd(4096, b'')), t(lambda: rd(8192, want[8192:])), t(lambda: rd(0, want[:4096]))]
os.close(fd)
out(res)`,
        [join(m, 'f'), data.toString('hex')],
      );
      assert.deepEqual(r, ['OK', 'EIO', 'OK', 'OK']);
    });
  } finally {
    delete process.env.TSCRYPTFS_OPSTATS;
  }
  const calls = JSON.parse(await fsp.readFile(stats, 'utf8')) as Record<string, number>;
  if (NATIVE.reads) assert.ok((calls['nativeRead'] ?? 0) > 0, `good blocks were read natively: ${JSON.stringify(calls)}`);
  assert.ok((calls['read'] ?? 0) >= 1, `the bad block went to JS, which answered EIO: ${JSON.stringify(calls)}`);
});

test('-sharedstorage and AES-SIV mounts read through JS only', tsOnly, async () => {
  for (const [label, init, mount] of [['shared', [], ['-sharedstorage']], ['siv', ['-aessiv'], []]] as const) {
    const calls = await counted(label, [...init], [...mount], (m) => writeAndCheckReads(join(m, 'f.bin'), prng(label, 300_000)));
    assert.equal(calls['nativeRead'], undefined, `${label}: ${JSON.stringify(calls)}`);
    assert.ok((calls['read'] ?? 0) > 0, `${label}: ${JSON.stringify(calls)}`);
  }
});

test('a read racing writes of the same blocks returns one whole write: never a mix, never EIO (O_DIRECT, two processes)', T, async () => {
  const calls = await counted('race', [], [], async (m) => {
    const [reads, mixed, errors, writes] = await py<[number, number, number, number]>(
      `
import mmap
p = A[0]
fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, 131072)
buf.write(bytes([1]) * 131072)
os.pwritev(fd, [buf], 0)
pid = os.fork()
if pid == 0:
    w = mmap.mmap(-1, 131072)
    for i in range(400):
        w.seek(0)
        w.write(bytes([2 + i % 250]) * 131072)
        os.pwritev(fd, [w], 0)
    os._exit(0)
r = mmap.mmap(-1, 131072)
reads = mixed = errors = 0
while True:
    done = os.waitpid(pid, os.WNOHANG)[0] == pid
    try:
        n = os.preadv(fd, [r], 0)
        reads += 1
        if n != 131072 or r[:].count(r[0:1]) != 131072:
            mixed += 1
    except OSError:
        errors += 1
    if done:
        break
os.close(fd)
out([reads, mixed, errors, 400])`,
      [join(m, 'race.bin')],
    );
    assert.ok(reads > 10, `reads made: ${reads}`);
    assert.equal(mixed, 0, 'reads that returned parts of two writes');
    assert.equal(errors, 0, 'reads that failed');
    assert.equal(writes, 400);
  });
  if (MOUNT_IMPL === 'tscryptfs' && NATIVE.reads) assert.ok((calls['nativeRead'] ?? 0) > 0, `some reads were native: ${JSON.stringify(calls)}`);
});
