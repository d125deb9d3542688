/**
 * The JS event loop keeps polling while requests the binding answers in C
 * come (fuse_native_note_request, option spinNative), so that one vCPU
 * stays awake for them: a second of opens and closes of one file, each
 * answered on the libfuse threads, keeps the daemon's JS thread busy, and
 * with TSCRYPTFS_SPIN_NATIVE=0 leaves it asleep. The spin gate is off in
 * both mounts (TSCRYPTFS_SPIN_GATE=0): the loop making the requests keeps
 * a core busy itself, which would close the gate.
 *
 * In the run with the native paths off every open reaches JS, and the
 * loop polls after each either way: there the test checks only that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonOf } from '../helpers/mixed-load.js';
import { initCipherdir } from '../helpers/mount.js';
import { MOUNT_IMPL, py, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('spin-native');
const T = { timeout: 120_000, ...needs('mount', 'python3') };
const skip = MOUNT_IMPL !== 'tscryptfs' ? 'the binding is tscryptfs\'s' : T.skip;

/** CPU ticks (1/100 s) of one thread of `pid`: user + system. */
function threadTicks(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const OPEN_CLOSE = `
import os, time
end = time.monotonic() + 1.0
n = 0
while time.monotonic() < end:
    os.close(os.open(A[0], os.O_RDONLY))
    n += 1
print(n)
`;

test('requests answered in C keep the JS loop polling while they come, and not with TSCRYPTFS_SPIN_NATIVE=0', { ...T, skip }, async (t) => {
  const cipherdir = join(dir.tmp, 'cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const busy: Record<string, number> = {};
  for (const [label, env] of [
    ['on', { TSCRYPTFS_SPIN_GATE: '0' }],
    ['off', { TSCRYPTFS_SPIN_GATE: '0', TSCRYPTFS_SPIN_NATIVE: '0' }],
  ] as const) {
    const [opens, calls] = await withCallCounts(dir.tmp, label, cipherdir, { env }, async (mnt) => {
      const file = join(mnt, 'f');
      await py(`open(A[0], 'w').write('x' * 5000)\nout(0)`, [file]);
      const pid = daemonOf(mnt);
      const before = threadTicks(pid, pid);
      const n = await py<number>(OPEN_CLOSE, [file]);
      busy[label] = threadTicks(pid, pid) - before;
      return n;
    });
    t.diagnostic(`spinNative ${label}: ${opens} opens and closes in 1 s, JS thread ${busy[label]! * 10} ms of CPU; opens in C ${calls.nativeOpen ?? 0}, in JS ${calls.open ?? 0}`);
    if (!NATIVE.opens) {
      assert.ok((calls.open ?? 0) >= opens, `with the native paths off every open reaches JS (${calls.open} of ${opens})`);
      continue;
    }
    assert.ok((calls.open ?? 0) <= 1, `the opens are answered in C (${calls.open} reached JS)`);
  }
  if (!NATIVE.opens) return;
  assert.ok(busy.on! >= 15, `with requests answered in C coming, the JS loop polls: ${busy.on! * 10} ms of its CPU in 1 s`);
  assert.ok(busy.off! <= 10, `with TSCRYPTFS_SPIN_NATIVE=0 it sleeps: ${busy.off! * 10} ms of its CPU in 1 s`);
});
