/**
 * tscryptfs as a user installs it: `npm run build` and `npm pack` in a
 * scratch copy of the checkout (the pack changes nothing in it), then
 * `npm install -g --prefix TMP ./tscryptfs-*.tgz` (which fetches the
 * dependencies from the registry and runs our install script: the native
 * addons and the FUSE binding). From TMP/bin, as root: the version line,
 * -init, a mount, a write and a read, the unmount, -fsck; the man pages
 * under TMP/share/man; the one line a user gets when libfuse2 or /dev/fuse
 * is missing. And the library: the README's example run in a project that
 * installed the tarball, import and require alike. Every mount is undone in
 * every outcome.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, lstatSync, mkdirSync, promises as fsp, readdirSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
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
let tarballPath = '';
/** What `npm pack` changed in the checkout it packed (nothing, it should be). */
let packChanged: string[] = [];

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

/** Every file below `dir` (not through node_modules) with its size and modification time. */
function treeState(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.name === 'node_modules') continue;
      if (e.isDirectory()) walk(p);
      else {
        const st = lstatSync(p);
        out.set(relative(dir, p), `${st.size} ${st.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out;
}

/** The paths added, removed or changed between two tree states. */
function diffStates(a: Map<string, string>, b: Map<string, string>): string[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => a.get(k) !== b.get(k)).sort();
}

/** The installed command. */
const tscryptfs = (args: string[], env?: NodeJS.ProcessEnv): Promise<RunResult> => run(join(prefix, 'bin', 'tscryptfs'), args, { env: cleanEnv({ [MOUNT_MARKER]: mnt, ...env }) });

before(async () => {
  if (unmet('mount', 'native')) return;
  tmp = makeTempDir('tscryptfs-packed-');
  guardMountsUnder(tmp);
  const scratch = join(tmp, 'clone');
  cpSync(REPO_ROOT, scratch, { recursive: true, filter: (src) => !NOT_IN_A_CLONE.has(relative(REPO_ROOT, src)) });
  // The build needs the dev dependencies: borrow ours. `npm pack` only checks that dist/ is up to date.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(scratch, 'node_modules'));
  const unbuilt = await run('npm', ['pack', '--pack-destination', tmp], { cwd: scratch, env: cleanEnv(), timeoutMs: 240_000 });
  assert.notEqual(unbuilt.code, 0, 'npm pack refuses an unbuilt checkout');
  assert.match(unbuilt.stderr, /tscryptfs: dist\/ is not built; run `npm run build` before packing/);
  ok('npm run build', await run('npm', ['run', 'build'], { cwd: scratch, env: cleanEnv(), timeoutMs: 240_000 }));
  const before = treeState(scratch);
  ok('npm pack', await run('npm', ['pack', '--pack-destination', tmp], { cwd: scratch, env: cleanEnv(), timeoutMs: 240_000 }));
  packChanged = diffStates(before, treeState(scratch));
  const tarball = readdirSync(tmp).find((f) => /^tscryptfs-.*\.tgz$/.test(f));
  assert.ok(tarball, 'npm pack made a tarball');
  tarballPath = join(tmp, tarball);
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
  test('npm pack refuses an unbuilt checkout and changes nothing in a built one', () => {
    assert.deepEqual(packChanged, []);
  });

  test('the package holds what a user needs, and no tests or sources of the build', () => {
    for (const f of ['LICENSE', 'bin/tscryptfs', 'bin/tscryptfs-xray', 'dist/src/cli/main.js', 'Documentation/tscryptfs.1', 'Documentation/tscryptfs-xray.1', 'Documentation/schemas/fsck.schema.json', 'Documentation/examples/tscryptfs-data.service', 'native/build/Release/tscryptfs_aegis.node', 'node_modules/fuse-native/LICENSE', 'node_modules/fuse-native/README.md', 'node_modules/fuse-native/build/Release/fuse.node']) {
      assert.ok(existsSync(join(installed, f)), `${f} is installed`);
    }
    for (const f of ['dist/test', 'test', 'src', 'Documentation/tscryptfs.1.md', 'patches', 'node_modules/fuse-native/prebuilds']) assert.equal(existsSync(join(installed, f)), false, `${f} is not in the package`);
  });

  test('the background process loads its modules from the installed bundle', async () => {
    const cli = join(installed, 'dist', 'src', 'cli');
    const r = ok('daemonModuleUrl', await run(process.execPath, ['--input-type=module', '-e', `console.log((await import(${JSON.stringify(pathToFileURL(join(cli, 'daemon-module.js')).href)})).daemonModuleUrl())`], { env: cleanEnv() }));
    assert.equal(r.stdout.trim(), pathToFileURL(join(cli, 'daemon.bundle.js')).href);
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

  test('the library: the README\'s example runs as written in a project that installed the tarball, and require() gives the same names', { timeout: 300_000 }, async () => {
    const project = join(tmp, 'project');
    mkdirSync(project);
    await fsp.writeFile(join(project, 'package.json'), JSON.stringify({ name: 'uses-tscryptfs', private: true }));
    // --ignore-scripts: the library needs no build (without the addons it takes the TypeScript paths, same bytes).
    ok('npm install TARBALL', await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', tarballPath], { cwd: project, env: cleanEnv(), timeoutMs: 240_000 }));
    const readme = await fsp.readFile(join(REPO_ROOT, 'README.md'), 'utf8');
    const example = /## Library\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(example, 'README.md has a js block under "## Library"');
    await fsp.writeFile(join(project, 'example.mjs'), example);
    const r = ok('node example.mjs', await run(process.execPath, ['example.mjs'], { cwd: project, env: cleanEnv() }));
    const out = r.stdout.split('\n');
    assert.equal(out[0], "[ 'plan.txt' ]");
    assert.equal(out[1], 'STEP 1: encrypt everything');
    assert.match(out[3]!, /^\/.*\/cipher-[^/]+\/[\w-]{22}\/[\w-]{22,}$/, 'the cipher path: two encrypted names below the cipher directory');
    const names = (code: string): Promise<RunResult> => run(process.execPath, ['--input-type=' + (code.includes('require') ? 'commonjs' : 'module'), '-e', code], { cwd: project, env: cleanEnv() });
    const required = ok('require', await names("console.log(JSON.stringify(Object.keys(require('tscryptfs')).sort()))"));
    const imported = ok('import', await names("console.log(JSON.stringify(Object.keys(await import('tscryptfs')).sort()))"));
    assert.equal(required.stdout, imported.stdout);
    assert.ok((JSON.parse(required.stdout) as string[]).includes('Vault'));
    assert.ok(existsSync(join(project, 'node_modules', 'tscryptfs', 'dist', 'src', 'index.d.ts')), 'the types are installed');
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
