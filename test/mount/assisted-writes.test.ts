/**
 * Large writes sealed by two threads (native/crypto/shared_job.c): while JS
 * seals a 128 KiB WRITE, the libfuse thread waiting for its answer takes
 * chunks of the same batch. The bytes must not depend on who sealed which
 * block: a file written so, in whole and in unaligned 128 KiB pieces, reads
 * back the same through this mount and through gocryptfs, and gocryptfs
 * -fsck finds nothing wrong. TSCRYPTFS_OPSTATS shows the libfuse threads
 * did seal some chunks (`assistedChunks`), where the assist hook is on.
 *
 * The mounts run with -noprealloc: there the writes that grow a file are
 * answered in JS (the native write path, native/fastpath/write.c, takes only
 * those it can reserve space for first), and those are the writes the
 * helping threads serve. And with TSCRYPTFS_SPIN_GATE=0: a libfuse thread
 * helps only while it spins for its answer, which the gate stops while the
 * machine's other processes (another test suite) keep the cores busy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { describeRun, initCipherdir, runImpl, withMount, EXTPASS } from '../helpers/mount.js';
import { MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { prng } from '../helpers/tree.js';
import { needs } from '../helpers/requirements.js';
import { NATIVE } from '../helpers/native-paths.js';

const dir = useMountTmp('assisted-writes');
const T = { timeout: 120_000, ...needs('mount', 'gocryptfs', 'python3') };

/** Writes `data` in 128 KiB pwrites from `start` on (the first piece shorter when start is unaligned), then the head before it. */
async function writeInPieces(file: string, src: string, start: number): Promise<void> {
  await py<null>(
    `
data = open(A[1], 'rb').read()
start = int(A[2])
fd = os.open(A[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
off = start
while off < len(data):
    n = 131072 - off % 131072 if off == start else 131072
    os.pwrite(fd, data[off:off + n], off)
    off += n
if start:
    os.pwrite(fd, data[:start], 0)
os.close(fd)
out(None)`,
    [file, src, String(start)],
  );
}

for (const [cipher, flags] of [['AES-GCM', []], ['XChaCha20-Poly1305', ['-xchacha']]] as const) {
  test(`${cipher}: 128 KiB writes sealed by two threads read back byte for byte, here and through gocryptfs`, T, async () => {
    const cipherdir = join(dir.tmp, `${cipher}-cipher`);
    const stats = join(dir.tmp, `${cipher}-ops.json`);
    const data = prng(cipher, 8 * 1_048_576 + 4097);
    const src = join(dir.tmp, `${cipher}.src`);
    await fsp.writeFile(src, data);
    await initCipherdir(MOUNT_IMPL, cipherdir, [...flags]);
    process.env.TSCRYPTFS_OPSTATS = stats;
    process.env.TSCRYPTFS_SPIN_GATE = '0';
    try {
      await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, `${cipher}-mnt`), { flags: ['-noprealloc'] }, async (m) => {
        await writeInPieces(join(m, 'aligned.bin'), src, 0);
        await writeInPieces(join(m, 'unaligned.bin'), src, 1000);
        for (const f of ['aligned.bin', 'unaligned.bin']) assert.ok((await fsp.readFile(join(m, f))).equals(data), `${f} through this mount`);
      });
    } finally {
      delete process.env.TSCRYPTFS_OPSTATS;
      delete process.env.TSCRYPTFS_SPIN_GATE;
    }
    await withMount('gocryptfs', cipherdir, join(dir.tmp, `${cipher}-go`), {}, async (m) => {
      for (const f of ['aligned.bin', 'unaligned.bin']) assert.ok((await fsp.readFile(join(m, f))).equals(data), `${f} through gocryptfs`);
    });
    const fsck = await runImpl('gocryptfs', ['-fsck', ...EXTPASS, cipherdir]);
    assert.equal(fsck.code, 0, describeRun('gocryptfs -fsck', fsck));
    if (MOUNT_IMPL === 'tscryptfs' && NATIVE.assist) {
      const calls = JSON.parse(await fsp.readFile(stats, 'utf8')) as Record<string, number>;
      assert.ok((calls['assistedChunks'] ?? 0) > 0, `libfuse threads sealed some chunks: ${JSON.stringify(calls)}`);
    }
  });
}
