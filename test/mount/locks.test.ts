/**
 * Locks on -sharedstorage mounts reach the cipher file: a POSIX record lock
 * (fcntl F_SETLK), a flock(2) lock and an open file description lock taken
 * by a process through mount A are seen by processes using mount B of the
 * same cipher directory and by a process locking the cipher file itself
 * (F_SETLK refused with EAGAIN, F_GETLK reports the lock, flock with
 * LOCK_NB refused); a blocked F_SETLKW ends with EINTR when its caller
 * gets a signal; the locks go when the holder closes the file, and when
 * the daemon that holds them ends. Without -sharedstorage the kernel keeps
 * locks per mount, as with gocryptfs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { daemonPids, isMounted, mountImpl, MOUNT_IMPL, run, sleep, unmount, unmountAndReap, waitFor } from '../helpers/mount.js';
import { cipherEntries, useCipherdir } from '../helpers/mount-suite.js';
import { needs, PYTHON3_BIN } from '../helpers/requirements.js';

const fx = useCipherdir('locks', MOUNT_IMPL);
const T = { timeout: 120_000, ...needs('mount', 'python3') };

/** One lock action per run: prints its outcome (OK or the errno name), or, for a holder, "held" and waits for a line on stdin. */
const LOCKER = `
import fcntl, os, sys, struct, errno, signal, time
what, path = sys.argv[1], sys.argv[2]
F_OFD_SETLK = 37
def lk(t, start=0, length=100):
    return struct.pack('hhqqi', t, 0, start, length, 0)
def outcome(f):
    try:
        r = f()
        return r if isinstance(r, str) else 'OK'
    except OSError as e:
        return errno.errorcode[e.errno]
fd = os.open(path, os.O_RDWR)
if what.startswith('hold-'):
    kind = what[5:]
    if kind == 'posix': fcntl.fcntl(fd, fcntl.F_SETLK, lk(fcntl.F_WRLCK))
    elif kind == 'flock': fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    elif kind == 'ofd': fcntl.fcntl(fd, F_OFD_SETLK, lk(fcntl.F_WRLCK))
    print('held', flush=True)
    sys.stdin.readline()
    os.close(fd)
    sys.exit(0)
if what == 'setlk': r = outcome(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lk(fcntl.F_WRLCK)))
elif what == 'getlk': r = {0: 'F_RDLCK', 1: 'F_WRLCK', 2: 'F_UNLCK'}[struct.unpack('hhqqi', fcntl.fcntl(fd, fcntl.F_GETLK, lk(fcntl.F_WRLCK)))[0]]
elif what == 'ofd': r = outcome(lambda: fcntl.fcntl(fd, F_OFD_SETLK, lk(fcntl.F_WRLCK)))
elif what == 'flock': r = outcome(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
elif what == 'setlkw-interrupted':
    def interrupt(*a):
        raise InterruptedError(errno.EINTR, 'interrupted')
    signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    r = outcome(lambda: fcntl.fcntl(fd, fcntl.F_SETLKW, lk(fcntl.F_WRLCK)))
print(r)
`;

/** Polls an asynchronous condition every 50 ms until it holds or `ms` pass. */
async function until(cond: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await sleep(50);
  }
}

async function attempt(what: string, path: string): Promise<string> {
  const r = await run(PYTHON3_BIN, ['-c', LOCKER, what, path], { timeoutMs: 20_000 });
  assert.equal(r.code, 0, `${what} ${path}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A process holding a lock of `kind` on `path` until release(). */
async function holder(kind: string, path: string): Promise<{ child: ChildProcess; release: () => Promise<void> }> {
  const child = spawn(PYTHON3_BIN, ['-c', LOCKER, `hold-${kind}`, path], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((res) => child.on('exit', () => res()));
  assert.ok(await waitFor(() => out.includes('held') || child.exitCode !== null, 10_000), `holder ${kind}: ${err}`);
  assert.match(out, /held/, `holder ${kind}: ${err}`);
  return {
    child,
    release: async () => {
      child.stdin!.end('\n');
      await exited;
    },
  };
}

/** Every probe from one side, as a record. */
async function probes(path: string): Promise<Record<string, string>> {
  return {
    'F_SETLK': await attempt('setlk', path),
    'F_GETLK': await attempt('getlk', path),
    'OFD F_SETLK': await attempt('ofd', path),
    'flock LOCK_NB': await attempt('flock', path),
  };
}

const FREE = { F_SETLK: 'OK', F_GETLK: 'F_UNLCK', 'OFD F_SETLK': 'OK', 'flock LOCK_NB': 'OK' };
const RECORD_HELD = { F_SETLK: 'EAGAIN', F_GETLK: 'F_WRLCK', 'OFD F_SETLK': 'EAGAIN', 'flock LOCK_NB': 'OK' };
const FLOCK_HELD = { F_SETLK: 'OK', F_GETLK: 'F_UNLCK', 'OFD F_SETLK': 'OK', 'flock LOCK_NB': 'EAGAIN' }; // 11, which Python names EAGAIN (EWOULDBLOCK is the same number)

test('locks taken through one -sharedstorage mount are seen through another and on the cipher file; released on close', T, async (t) => {
  if (MOUNT_IMPL !== 'tscryptfs') return t.skip('gocryptfs keeps locks per mount');
  const [a, b] = [join(fx.tmp, 'a'), join(fx.tmp, 'b')];
  for (const m of [a, b]) await mountImpl(MOUNT_IMPL, fx.cipherdir, m, { flags: ['-sharedstorage'] });
  try {
    await fsp.writeFile(join(a, 'db'), 'shared database');
    const cipherFile = join(fx.cipherdir, (await cipherEntries(fx.cipherdir))[0]!);
    assert.deepEqual(await probes(join(b, 'db')), FREE, 'nothing held');
    const matrix: string[] = [];
    for (const [kind, expected] of [['posix', RECORD_HELD], ['ofd', RECORD_HELD], ['flock', FLOCK_HELD]] as const) {
      const h = await holder(kind, join(a, 'db'));
      try {
        assert.deepEqual(await probes(join(a, 'db')), expected, `${kind} lock through A, seen by another process through A`);
        const throughB = await probes(join(b, 'db'));
        const onCipher = await probes(cipherFile);
        matrix.push(`${kind} lock through A -> mount B ${JSON.stringify(throughB)}; cipher file ${JSON.stringify(onCipher)}`);
        assert.deepEqual(throughB, expected, `${kind} lock through A, seen through B`);
        assert.deepEqual(onCipher, expected, `${kind} lock through A, seen on the cipher file`);
        assert.equal(await attempt('setlkw-interrupted', join(b, 'db')), kind === 'flock' ? 'OK' : 'EINTR', 'a blocked F_SETLKW ends with EINTR on a signal (flock and record locks do not conflict)');
      } finally {
        await h.release();
      }
      // A closed file's record locks go with the close (FLUSH); flock and OFD locks with the release after it.
      assert.ok(await until(async () => JSON.stringify(await probes(join(b, 'db'))) === JSON.stringify(FREE), 5000), `${kind}: released after close`);
    }
    for (const line of matrix) t.diagnostic(line);
  } finally {
    for (const m of [a, b]) await unmountAndReap(m);
  }
});

test('locks held by a daemon that ends are released', T, async (t) => {
  if (MOUNT_IMPL !== 'tscryptfs') return t.skip('gocryptfs keeps locks per mount');
  const [a, b] = [join(fx.tmp, 'a2'), join(fx.tmp, 'b2')];
  for (const m of [a, b]) await mountImpl(MOUNT_IMPL, fx.cipherdir, m, { flags: ['-sharedstorage'] });
  let h: Awaited<ReturnType<typeof holder>> | null = null;
  try {
    await fsp.writeFile(join(a, 'mail'), 'box');
    h = await holder('posix', join(a, 'mail'));
    assert.equal(await attempt('setlk', join(b, 'mail')), 'EAGAIN');
    const [daemon] = daemonPids(a);
    assert.ok(daemon, 'the daemon of mount A');
    process.kill(daemon, 'SIGKILL');
    assert.ok(await until(async () => (await attempt('setlk', join(b, 'mail'))) === 'OK', 5000), 'the lock went with the daemon');
  } finally {
    if (h) {
      h.child.kill('SIGKILL');
      await sleep(100);
    }
    if (isMounted(a)) await unmount(a).catch(() => undefined);
    for (const m of [a, b]) await unmountAndReap(m);
  }
});
