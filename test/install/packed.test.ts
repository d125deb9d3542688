/**
 * tscryptfs as a user installs it: `npm pack` in a scratch copy of the
 * checkout, then `npm install -g --prefix TMP ./tscryptfs-*.tgz` (which
 * fetches the dependencies from the registry and runs our install scripts:
 * the native addons and the fuse-native patch). From TMP/bin, as root: the
 * version line, -init, a mount, a write and a read, the unmount, -fsck;
 * the man pages under TMP/share/man; and the one line a user gets when
 * libfuse2 or /dev/fuse is missing. Every mount is undone in every outcome.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, promises as fsp, readdirSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { cleanupMountsUnder, daemonPids, FUSERMOUNT, guardMountsUnder, isMounted, MOUNT_MARKER, run, unguardMountsUnder, waitFor, type RunResult } from '../helpers/mount.js';
import { runWithoutFuse } from '../helpers/no-fuse.js';
import { needs, unmet } from '../helpers/requirements.js';

const NEEDS = needs('mount', 'native');
/** What a clone has and an install or a build adds: left out of the scratch copy. */
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', '.git', 'native/build']);

let tmp = '';
let prefix = '';
let installed = '';
let cipher = '';
let mnt = '';

/** The environment without the npm_* variables of the `npm test` around us (they would steer the inner npm). */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_')) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

function ok(what: string, r: RunResult): RunResult {
  assert.equal(r.code, 0, `${what} failed (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** The installed command. */
const tscryptfs = (args: string[], env?: NodeJS.ProcessEnv): Promise<RunResult> => run(join(prefix, 'bin', 'tscryptfs'), args, { env: cleanEnv({ [MOUNT_MARKER]: mnt, ...env }) });

before(async () => {
  if (unmet('mount', 'native')) return;
  tmp = makeTempDir('tscryptfs-packed-');
  guardMountsUnder(tmp);
  const scratch = join(tmp, 'clone');
  cpSync(REPO_ROOT, scratch, { recursive: true, filter: (src) => !NOT_IN_A_CLONE.has(relative(REPO_ROOT, src)) });
  // `npm pack` runs the prepare script (tsc), which needs the dev dependencies: borrow ours.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(scratch, 'node_modules'));
  ok('npm pack', await run('npm', ['pack', '--pack-destination', tmp], { cwd: scratch, env: cleanEnv(), timeoutMs: 240_000 }));
  const tarball = readdirSync(tmp).find((f) => /^tscryptfs-.*\.tgz$/.test(f));
  assert.ok(tarball, 'npm pack made a tarball');
  prefix = join(tmp, 'prefix');
  ok('npm install -g', await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', join(tmp, tarball)], { cwd: tmp, env: cleanEnv(), timeoutMs: 420_000 }));
  installed = join(prefix, 'lib', 'node_modules', 'tscryptfs');
  mkdirSync(join(tmp, 'cipher'));
  cipher = join(tmp, 'cipher');
  mnt = join(tmp, 'mnt');
  mkdirSync(mnt);
}, { timeout: 600_000 });

after(async () => {
  if (tmp === '') return;
  const problems = await cleanupMountsUnder(tmp);
  unguardMountsUnder(tmp);
  removeTempDir(tmp);
  assert.deepEqual(problems, []);
});

describe('installed from the packed tarball', NEEDS, () => {
  test('the package holds what a user needs, and no tests or sources of the build', () => {
    for (const f of ['bin/tscryptfs', 'bin/tscryptfs-xray', 'dist/src/cli/main.js', 'Documentation/tscryptfs.1', 'Documentation/tscryptfs-xray.1', 'Documentation/schemas/fsck.schema.json', 'Documentation/examples/tscryptfs-data.service', 'native/build/Release/tscryptfs_aegis.node', 'node_modules/fuse-native/LICENSE', 'node_modules/fuse-native/README.md', 'node_modules/fuse-native/build/Release/fuse.node']) {
      assert.ok(existsSync(join(installed, f)), `${f} is installed`);
    }
    for (const f of ['dist/test', 'test', 'src', 'Documentation/tscryptfs.1.md', 'patches', 'node_modules/fuse-native/prebuilds']) assert.equal(existsSync(join(installed, f)), false, `${f} is not in the package`);
  });

  test('-version: the fuse-native fork, libfuse, the native addons', async () => {
    const r = ok('-version', await tscryptfs(['-version']));
    assert.match(r.stdout, new RegExp(`^tscryptfs \\S+; node ${process.version}; ${process.platform}/${process.arch}; fuse-native 2\\.2\\.6-tscryptfs sources [0-9a-f]{12}; libfuse 2\\.\\d+\\.\\d+; OpenSSL \\S+; AEGIS native \\S+; batched AEAD native\\n$`));
    ok('tscryptfs-xray -version', await run(join(prefix, 'bin', 'tscryptfs-xray'), ['-version'], { env: cleanEnv() }));
  });

  test('man tscryptfs and man tscryptfs-xray find the installed pages', async () => {
    for (const page of ['tscryptfs', 'tscryptfs-xray']) {
      const where = ok(`man -w ${page}`, await run('man', ['-w', page], { env: cleanEnv({ MANPATH: join(prefix, 'share', 'man') }) }));
      assert.equal(await fsp.realpath(where.stdout.trim()), join(installed, 'Documentation', `${page}.1`));
      const shown = ok(`man ${page}`, await run('man', [page], { env: cleanEnv({ MANPATH: join(prefix, 'share', 'man'), MANWIDTH: '80' }) }));
      assert.match(shown.stdout, new RegExp(`^${page.toUpperCase()}\\(1\\)`));
    }
  });

  test('-init, mount, write and read, unmount, -fsck', { timeout: 120_000 }, async () => {
    ok('-init', await tscryptfs(['-init', '-q', '-scryptn', '10', '-extpass', 'echo packed pw', cipher]));
    try {
      ok('mount', await tscryptfs(['-extpass', 'echo packed pw', cipher, mnt]));
      assert.ok(isMounted(mnt));
      await fsp.mkdir(join(mnt, 'dir'));
      const data = Buffer.alloc(300_000, 'installed ');
      await fsp.writeFile(join(mnt, 'dir', 'file'), data);
      assert.ok((await fsp.readFile(join(mnt, 'dir', 'file'))).equals(data));
      ok('fusermount -u', await run(FUSERMOUNT!, ['-u', mnt]));
      assert.ok(await waitFor(() => daemonPids(mnt).length === 0, 5000), 'the daemon exits after the unmount');
    } finally {
      assert.deepEqual(await cleanupMountsUnder(mnt), []);
    }
    const fsck = ok('-fsck', await tscryptfs(['-fsck', '-extpass', 'echo packed pw', cipher]));
    assert.match(fsck.stdout, /fsck summary: no problems found\n$/);
  });

  test('libfuse2 missing: one line, exit 19', async () => {
    const r = await runWithoutFuse('libfuse2', join(prefix, 'bin', 'tscryptfs'), ['-q', '-extpass', 'echo packed pw', cipher, mnt], cleanEnv({ [MOUNT_MARKER]: mnt }));
    assert.equal(r.code, 19, r.stdout + r.stderr);
    assert.match(r.stderr, /^tscryptfs: fuse: fuse-native cannot be loaded: \S*libfuse\.so\.2: .+ \(is libfuse2 installed\?\)\n$/);
    assert.equal(isMounted(mnt), false);
  });

  test('/dev/fuse missing: one line, exit 19', async () => {
    const r = await runWithoutFuse('/dev/fuse', join(prefix, 'bin', 'tscryptfs'), ['-q', '-extpass', 'echo packed pw', cipher, mnt], cleanEnv({ [MOUNT_MARKER]: mnt }));
    assert.equal(r.code, 19, r.stdout + r.stderr);
    assert.match(r.stderr, /^tscryptfs: fuse: \/dev\/fuse does not exist: [^\n]*\n$/);
    assert.equal(isMounted(mnt), false);
  });
});
