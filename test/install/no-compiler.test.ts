/**
 * `npm ci` on a machine without a C compiler: the install still
 * succeeds, AEGIS falls back to TypeScript (same bytes), the library works,
 * and mounting says clearly why it cannot (the FUSE binding, our fork of
 * fuse-native, is built from source at install). Simulated with a PATH that holds every program of
 * this machine except the compilers and make.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const COMPILERS = new Set(['cc', 'gcc', 'g++', 'c++', 'cpp', 'clang', 'clang++', 'make', 'gmake', 'x86_64-linux-gnu-gcc', 'x86_64-linux-gnu-g++', 'x86_64-linux-gnu-gcc-12', 'x86_64-linux-gnu-g++-12', 'gcc-12', 'g++-12', 'cpp-12', 'x86_64-linux-gnu-cpp', 'x86_64-linux-gnu-cpp-12']);

let tmp = '';
let proj = '';
let bin = '';
before(() => {
  tmp = makeTempDir('tscryptfs-nocc-');
  proj = join(tmp, 'proj');
  bin = join(tmp, 'bin');
  mkdirSync(bin);
  // Every program on PATH except the compilers (first one of a name wins, as in a shell).
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir || !existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (COMPILERS.has(name) || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  for (const p of ['package.json', 'package-lock.json', 'tsconfig.json', 'src', 'bin', 'scripts', 'native/binding.gyp', 'native/common', 'native/crypto', 'native/fastpath', 'native/sys', 'native/fuse-native']) {
    cpSync(join(REPO_ROOT, p), join(proj, p), { recursive: true });
  }
});
after(() => removeTempDir(tmp));

test('npm ci without a compiler succeeds; AEGIS uses TypeScript, mounting explains itself', { timeout: 300_000 }, () => {
  const env = { ...process.env, PATH: bin, CI: 'true' };
  assert.equal(spawnSync('sh', ['-c', 'command -v cc gcc make'], { env }).stdout.length, 0, 'no compiler on the simulated PATH');
  const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: proj, env, encoding: 'utf8', timeout: 280_000 });
  assert.equal(ci.status, 0, `npm ci failed:\n${ci.stdout}\n${ci.stderr}`);
  const out = ci.stdout + ci.stderr;
  assert.match(out, /native AEGIS not built/);
  assert.match(out, /the FUSE binding is not built \(.*\): mounting is unavailable/);
  const build = spawnSync('npm', ['run', 'build'], { cwd: proj, env, encoding: 'utf8', timeout: 120_000 });
  assert.equal(build.status, 0, `npm run build failed:\n${build.stdout}\n${build.stderr}`);
  // The library works, and AEGIS runs in TypeScript with the draft's vector 1 (256X2, empty message).
  const probe = `
    import { Vault } from './dist/src/index.js';
    import { aegisNativeAvailable, aegisEncrypt } from './dist/src/crypto/aegis/index.js';
    import { mkdtempSync, rmSync } from 'node:fs';
    const key = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
    const nonce = Buffer.from('101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f', 'hex');
    const { tag } = aegisEncrypt('aegis256x2', key, nonce, new Uint8Array(0), new Uint8Array(0), 16);
    const dir = mkdtempSync('/tmp/tscryptfs-nocc-vault-');
    const v = await Vault.init(dir, { password: 'pw', cipher: 'aegis', scryptLogN: 10 });
    await v.writeFile('/f', 'works');
    console.log(JSON.stringify({ native: aegisNativeAvailable(), tag: Buffer.from(tag).toString('hex'), read: (await v.readFile('/f')).toString() }));
    await v.close();
    rmSync(dir, { recursive: true, force: true });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: proj, env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { native: false, tag: '62cdbab084c83dacdb945bb446f049c8', read: 'works' });
  const mnt = join(tmp, 'mnt');
  const cdir = join(tmp, 'c');
  mkdirSync(mnt);
  mkdirSync(cdir);
  const init = spawnSync(process.execPath, ['bin/tscryptfs', '-init', '-q', '-scryptn', '10', '-extpass', 'echo pw', cdir], { cwd: proj, env, encoding: 'utf8' });
  assert.equal(init.status, 0, init.stderr);
  const m = spawnSync(process.execPath, ['bin/tscryptfs', '-fg', '-extpass', 'echo pw', cdir, mnt], { cwd: proj, env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(m.status, 19, m.stderr);
  assert.match(m.stderr, /fuse-native/);
});
