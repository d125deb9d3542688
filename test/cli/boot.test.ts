/**
 * Mounting at boot as the documentation shows it, tried for real: the
 * README's /etc/fstab line through `mount -a -T FILE` (mount.fuse runs
 * tscryptfs with -o), and the systemd unit
 * Documentation/examples/tscryptfs-data.service, whose ExecStart and
 * ExecStop lines are run as systemd would run them (no shell), since no
 * systemd runs here; `systemd-analyze verify` checks the unit itself. The
 * paths of the examples are replaced by a temporary cipher directory,
 * mount point and password file, and /usr/local/bin/tscryptfs by a
 * symlink to this checkout's bin/tscryptfs in the temporary directory;
 * nothing else changes. (The symlink, because mount(8) looks for the helper
 * of type "fuse.PROGRAM" by cutting the type at its last dot: a checkout
 * below a directory with a dot in its name, as CI's mktemp makes, would
 * send it to mount(2) with "wrong fs type".)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, initVault, ROOT, tempDir } from './helpers.js';
import { cleanupMountsUnder, daemonPids, guardMountsUnder, isMounted, mountEntries, MOUNT_MARKER, run, unguardMountsUnder, waitFor } from '../helpers/mount.js';
import { removeTempDir } from '../helpers/tmp.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 60_000, ...needs('mount') };
const UNIT_FILE = join(ROOT, 'Documentation', 'examples', 'tscryptfs-data.service');

let tmp: string;
let cipher: string;
let passfile: string;
let program: string;
before(async () => {
  tmp = await tempDir('tscryptfs-boot-');
  guardMountsUnder(tmp);
  program = join(tmp, 'tscryptfs');
  assert.doesNotMatch(program, /\./, 'the fstab type fuse.PROGRAM needs a path without dots');
  await fsp.symlink(BIN, program);
  cipher = await initVault(tmp, 'cipher', [], 'boot password');
  passfile = join(tmp, 'pw');
  await fsp.writeFile(passfile, 'boot password\n', { mode: 0o400 });
});
after(async () => {
  const problems = await cleanupMountsUnder(tmp);
  unguardMountsUnder(tmp);
  removeTempDir(tmp);
  assert.deepEqual(problems, []);
});

/** The example's paths replaced by this test's. */
function localize(text: string, mnt: string): string {
  return text
    .replaceAll('/usr/local/bin/tscryptfs', program)
    .replaceAll('/data/cipher', cipher)
    .replaceAll('/data/plain', mnt)
    .replaceAll('/root/pw', passfile);
}

/** A command line as systemd splits ExecStart= (words on spaces); anything that would need its quoting rules is refused. */
function execWords(line: string): string[] {
  assert.doesNotMatch(line, /["'\\%$;]|^[-@:+!]/, `"${line}" needs more of systemd's syntax than this test splits`);
  return line.split(/\s+/).filter((w) => w !== '');
}

/** The environment a mount gets here: MOUNT_MARKER lets the cleanup find its daemon. */
const envFor = (mnt: string): NodeJS.ProcessEnv => ({ ...process.env, [MOUNT_MARKER]: mnt });

/** Writes through the mount and reads back; the cipher directory gets one more entry. */
async function assertUsable(mnt: string): Promise<void> {
  const before = (await fsp.readdir(cipher)).length;
  await fsp.writeFile(join(mnt, 'hello.txt'), 'mounted at boot\n');
  assert.equal(await fsp.readFile(join(mnt, 'hello.txt'), 'utf8'), 'mounted at boot\n');
  assert.equal((await fsp.readdir(cipher)).length, before + 1);
  await fsp.rm(join(mnt, 'hello.txt'));
}

test('the README\'s fstab line, through mount -a -T with a temporary fstab', T, async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const line = readme.split('\n').find((l) => /^\S+\s+\S+\s+fuse\.\/usr\/local\/bin\/tscryptfs\s/.test(l));
  assert.ok(line, 'the README shows an fstab line');
  assert.ok(readFileSync(join(ROOT, 'Documentation', 'tscryptfs.1.md'), 'utf8').includes(`\n${line}\n`), 'the man page shows the same line');
  const mnt = join(tmp, 'fstab-mnt');
  await fsp.mkdir(mnt);
  const fstab = join(tmp, 'fstab');
  await fsp.writeFile(fstab, `${localize(line, mnt)}\n`);
  try {
    const r = await run('mount', ['-a', '-T', fstab], { env: envFor(mnt) });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(isMounted(mnt), 'mounted when mount -a returns');
    assert.equal(daemonPids(mnt).length, 1, 'one tscryptfs process serves it');
    const [entry] = mountEntries(mnt);
    assert.equal(entry!.source, cipher);
    assert.equal(entry!.fstype, 'fuse.tscryptfs');
    assert.match(entry!.options, /(^|,)noatime(,|$)/);
    await assertUsable(mnt);
    // At boot mount -a may run again: an fstab entry already mounted is left alone.
    const again = await run('mount', ['-a', '-T', fstab], { env: envFor(mnt) });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(mountEntries(mnt).length, 1);
    // Shutdown unmounts with umount(8); the daemon then exits.
    const u = await run('umount', [mnt]);
    assert.equal(u.code, 0, u.stderr);
    assert.ok(await waitFor(() => daemonPids(mnt).length === 0, 5000), 'the daemon exits after umount');
  } finally {
    assert.deepEqual(await cleanupMountsUnder(mnt), []);
  }
});

test('the systemd unit: Type=forking, ExecStart mounts and returns, ExecStop unmounts, as written', T, async () => {
  const unit = readFileSync(UNIT_FILE, 'utf8');
  const body = unit.split('\n').filter((l) => !l.startsWith('#'));
  const manPage = readFileSync(join(ROOT, 'Documentation', 'tscryptfs.1.md'), 'utf8');
  assert.ok(manPage.includes(`\`\`\`\n${body.join('\n').trim()}\n\`\`\``), 'the man page shows the same unit');
  const key = (k: string): string => {
    const found = body.filter((l) => l.startsWith(`${k}=`));
    assert.equal(found.length, 1, `one ${k}=`);
    return found[0]!.slice(k.length + 1);
  };
  assert.equal(key('Type'), 'forking');
  const mnt = join(tmp, 'unit-mnt');
  await fsp.mkdir(mnt);
  const [startCmd, ...startArgs] = execWords(localize(key('ExecStart'), mnt));
  const [stopCmd, ...stopArgs] = execWords(localize(key('ExecStop'), mnt));
  try {
    // systemd: stdin /dev/null, no terminal; with Type=forking the service is up when this process exits.
    const start = await run(startCmd!, startArgs, { env: envFor(mnt) });
    assert.equal(start.code, 0, start.stdout + start.stderr);
    assert.ok(isMounted(mnt), 'mounted when ExecStart returns');
    assert.equal(daemonPids(mnt).length, 1, 'one process left behind: the main PID systemd finds');
    await assertUsable(mnt);
    const stop = await run(stopCmd!, stopArgs);
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(isMounted(mnt), false);
    // Nothing left for systemd to kill after ExecStop.
    assert.ok(await waitFor(() => daemonPids(mnt).length === 0, 5000), 'the daemon exits after ExecStop');
  } finally {
    assert.deepEqual(await cleanupMountsUnder(mnt), []);
  }
});

test('the systemd unit passes systemd-analyze verify', { ...needs('root'), ...needsSystemdAnalyze() }, async () => {
  const mnt = join(tmp, 'verify-mnt');
  await fsp.mkdir(mnt, { recursive: true });
  const copy = join(tmp, 'tscryptfs-data.service');
  await fsp.writeFile(copy, localize(readFileSync(UNIT_FILE, 'utf8'), mnt));
  const r = await run('systemd-analyze', ['verify', copy], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, '');
});

/** systemd-analyze, from the systemd package (setup.bash installs it). */
function needsSystemdAnalyze(): { skip?: string } {
  return spawnSync('systemd-analyze', ['--version']).status === 0 ? {} : { skip: 'systemd-analyze is not installed (Debian package systemd)' };
}
