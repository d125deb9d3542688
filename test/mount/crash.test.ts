/**
 * Crash safety on a real mount of MOUNT_IMPL: kill -9 the daemon in the
 * middle of a write storm (appends and overwrites in 4 KiB-unaligned
 * chunks, known content), clean up the dead mount, remount, and check:
 *
 * - files not being written are intact (byte for byte), including the
 *   storm files of earlier runs;
 * - a file being appended to reads back as a prefix of what was written,
 *   at least as long as what the file system had acknowledged;
 * - the file being overwritten has, at every byte, the generation written
 *   there last or the one before (acknowledged bytes: the last);
 * - a block that does not decrypt (a torn block) gives EIO through the
 *   mount, exactly the blocks the Vault API finds undecryptable; gocryptfs
 *   -fsck agrees (clean when there are none).
 *
 * - tscryptfs -fsck reports exactly those blocks (file and block number),
 *   and exits 26 when there are any, 0 when there are none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { gocryptfsFsck } from '../helpers/gocryptfs.js';
import { daemonPids, EXTPASS, isAlive, mountImpl, PASSWORD, runImpl, unmount, unmountAndReap, waitFor } from '../helpers/mount.js';
import { assertBytes, MOUNT_IMPL, useCipherdir } from '../helpers/mount-suite.js';
import { startStorm, stormBytes, type StormSpec } from '../helpers/write-storm.js';
import { prng } from '../helpers/tree.js';
import { needs } from '../helpers/requirements.js';

const BS = 4096;
/** Storm rounds before the kill, one crash run each (TSCRYPTFS_CRASH_RUNS=n repeats the list). */
const KILL_AFTER_ROUNDS = [3, 40, 150];
const RUNS = Number(process.env.TSCRYPTFS_CRASH_RUNS ?? KILL_AFTER_ROUNDS.length);
const OVERWRITE_SIZE = 50_000;
const UNTOUCHED: Record<string, Buffer> = Object.fromEntries([0, 1, 4095, 4096, 4097, 100_000].map((n) => [`untouched_${n}.bin`, prng(`untouched-${n}`, n)]));

const fx = useCipherdir('crash', MOUNT_IMPL);
const T = { timeout: 120_000, ...needs('mount', 'gocryptfs') };
/** Everything that must read back unchanged from now on (name → bytes). */
const settled = new Map<string, Buffer>(Object.entries(UNTOUCHED));
/** Torn blocks found so far (cipher-side check by the Vault), as "name#block". */
const tornSoFar: string[] = [];
let survived = 0;

const mnt = (): string => join(fx.tmp, 'mnt');

/** Reads `name` through the mount block by block: the bytes (zeros for blocks that gave EIO) and the EIO block numbers. */
function readBlocks(path: string): { data: Buffer; eio: number[] } {
  const size = fs.statSync(path).size;
  const data = Buffer.alloc(size);
  const eio: number[] = [];
  const fd = fs.openSync(path, 'r');
  try {
    for (let b = 0; b * BS < size; b++) {
      try {
        fs.readSync(fd, data, b * BS, Math.min(BS, size - b * BS), b * BS);
      } catch (err) {
        if ((err as { code?: string }).code !== 'EIO') throw err;
        eio.push(b);
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return { data, eio };
}

/** The blocks of `name` that do not decrypt, by the Vault API on the (unmounted) cipher directory. */
async function vaultTornBlocks(names: string[]): Promise<string[]> {
  const v = await Vault.open(fx.cipherdir, { password: PASSWORD, readOnly: true, logger: { warn: () => undefined, info: () => undefined } });
  const torn: string[] = [];
  try {
    for (const name of names) {
      const h = await v.open('/' + name, 'r');
      try {
        const size = await h.size();
        for (let b = 0; b * BS < size; b++) {
          await h.read(BS, b * BS).catch((err: unknown) => {
            if ((err as { code?: string }).code !== 'EIO') throw err;
            torn.push(`${name}#${b}`);
          });
        }
      } finally {
        await h.close();
      }
    }
  } finally {
    await v.close();
  }
  return torn;
}

test('set-up: files that no storm touches', T, async () => {
  await mountImpl(MOUNT_IMPL, fx.cipherdir, mnt());
  for (const [name, data] of Object.entries(UNTOUCHED)) fs.writeFileSync(join(mnt(), name), data);
  await unmountAndReap(mnt());
});

for (let run = 0; run < RUNS; run++) {
  const killAfter = KILL_AFTER_ROUNDS[run % KILL_AFTER_ROUNDS.length]!;
  test(`crash run ${run + 1}: kill -9 of the daemon after ${killAfter} storm rounds loses nothing acknowledged, tears nothing else`, T, async () => {
    const spec: StormSpec = { append: [0, 1, 2].map((k) => `run${run}_append${k}.bin`), overwrite: `run${run}_over.bin`, overwriteSize: OVERWRITE_SIZE, maxSize: 4 << 20 };
    await mountImpl(MOUNT_IMPL, fx.cipherdir, mnt());
    fs.writeFileSync(join(mnt(), spec.overwrite), stormBytes(`${spec.overwrite}#0`, OVERWRITE_SIZE));
    const storm = startStorm(mnt(), join(fx.tmp, `progress-${run}.json`), spec);
    let daemons: number[] = [];
    try {
      assert.ok(await waitFor(() => (storm.progress()?.rounds ?? 0) >= killAfter, 30_000, 5), 'the storm got going');
      daemons = daemonPids(mnt()).filter((pid) => pid !== storm.child.pid); // the writer names the mount point too
      assert.equal(daemons.length, 1, `one daemon serves the mount: ${daemons.join(', ')}`);
      process.kill(daemons[0]!, 'SIGKILL'); // the daemon of our own mount (found by its mount point in our temp dir)
      await Promise.race([storm.exited, new Promise((r) => setTimeout(r, 10_000))]);
    } finally {
      if (storm.child.exitCode === null && storm.child.signalCode === null) storm.child.kill('SIGKILL');
      await storm.exited;
    }
    assert.ok(await waitFor(() => daemons.every((p) => !isAlive(p)), 5000), 'the daemon is dead');
    await unmount(mnt()); // the dead mount: fusermount -u, umount -l if need be
    const p = storm.progress();
    assert.ok(p, 'the storm reported progress');

    await mountImpl(MOUNT_IMPL, fx.cipherdir, mnt());
    const eio: string[] = [];
    try {
      for (const [name, data] of settled) assertBytes(fs.readFileSync(join(mnt(), name)), data, `${name} (not being written)`);
      for (const name of spec.append) {
        const { data, eio: bad } = readBlocks(join(mnt(), name));
        eio.push(...bad.map((b) => `${name}#${b}`));
        const acked = p.appended[name]!;
        assert.ok(data.length >= acked, `${name}: ${data.length} bytes, but ${acked} were acknowledged`);
        assert.ok(data.length <= acked + 8000, `${name}: ${data.length} bytes, more than acknowledged (${acked}) plus one write in flight`);
        const expected = stormBytes(name, spec.maxSize).subarray(0, data.length);
        for (const b of bad) expected.fill(0, b * BS, Math.min((b + 1) * BS, expected.length));
        assertBytes(data, expected, `${name}: a prefix of what was written`);
        settled.set(name, data);
      }
      const { data, eio: bad } = readBlocks(join(mnt(), spec.overwrite));
      eio.push(...bad.map((b) => `${spec.overwrite}#${b}`));
      assert.equal(data.length, OVERWRITE_SIZE);
      const cur = stormBytes(`${spec.overwrite}#${p.gen}`, OVERWRITE_SIZE);
      const prev = stormBytes(`${spec.overwrite}#${p.gen - 1}`, OVERWRITE_SIZE);
      for (let i = 0; i < OVERWRITE_SIZE; i++) {
        if (bad.includes(Math.floor(i / BS))) continue;
        const ok = i < p.cursor ? data[i] === cur[i] : data[i] === cur[i] || data[i] === prev[i];
        if (!ok) {
          const b = Math.floor(i / BS);
          const blk = (x: Buffer): Buffer => x.subarray(b * BS, (b + 1) * BS);
          const what: string = blk(data).equals(blk(prev)) ? `generation ${p.gen - 1}` : blk(data).every((x) => x === 0) ? 'zeros' : 'mixed/other';
          assert.fail(`${spec.overwrite}: byte ${i} is not from generation ${p.gen}${i < p.cursor ? ' (acknowledged)' : ` or ${p.gen - 1}`}; its block ${b} reads as ${what} (acknowledged up to ${p.cursor} of generation ${p.gen}, ${p.rounds} rounds)`);
        }
      }
      settled.set(spec.overwrite, data);
    } finally {
      await unmountAndReap(mnt());
    }
    const torn = await vaultTornBlocks([...spec.append, spec.overwrite]);
    assert.deepEqual(eio.sort(), torn.sort(), 'EIO through the mount exactly for the blocks that do not decrypt');
    tornSoFar.push(...torn);
    survived++;
  });
}

test('after the crashes: tscryptfs -fsck reports exactly the torn blocks found, and gocryptfs -fsck agrees', T, async (t) => {
  t.diagnostic(`${survived} crash runs survived; torn blocks (EIO): ${tornSoFar.join(', ') || 'none'}`);
  const r = await gocryptfsFsck(fx.cipherdir);
  const out = r.stdout + r.stderr;
  if (tornSoFar.length === 0) {
    assert.equal(r.code, 0, `gocryptfs -fsck exit ${r.code}:\n${out}`);
    assert.match(out, /no problems found/, out);
  } else {
    assert.notEqual(r.code, 0, `gocryptfs -fsck should report the torn blocks ${tornSoFar.join(', ')}:\n${out}`);
  }
  const ours = await runImpl('tscryptfs', ['-fsck', '-q', ...EXTPASS, fx.cipherdir]);
  const report = ours.stdout + ours.stderr;
  assert.equal(ours.code, tornSoFar.length === 0 ? 0 : 26, `tscryptfs -fsck exit ${ours.code}:\n${report}`);
  const reported = [...report.matchAll(/corrupt file "([^"]+)": block (\d+) /g)].map((m) => `${m[1]!.replace(/^\//, '')}#${m[2]}`);
  assert.deepEqual([...new Set(reported)].sort(), [...tornSoFar].sort(), `tscryptfs -fsck names exactly the torn blocks:\n${report}`);
  assert.equal(survived, RUNS, 'every crash run passed');
});
