/**
 * The registry of environment variables (src/util/switches.ts): every
 * `TSCRYPTFS_*` name in src/ is registered, only the registry reads them
 * from the environment, off switches are off only at `0`, the native fast
 * path's parts follow the switches they need, the man page describes
 * exactly the user and measurement switches, and every switch is set by a
 * test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envSwitch, SWITCHES, switchNumber, switchValue, switchWarnings, type SwitchInfo, type SwitchName } from '../../src/util/switches.js';
import { spinSettings } from '../../src/fuse/mount.js';
import { nativeFastPathSwitches } from '../../src/fuse/native-fast-path.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** The .ts files below `dir` (symlinks and the fixtures left out). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : sources(p);
    return e.isFile() && p.endsWith('.ts') ? [p] : [];
  });
}

const SRC = sources(join(REPO_ROOT, 'src'));
const NAMES = Object.keys(SWITCHES) as SwitchName[];

test('every TSCRYPTFS_ name in src/ is in the registry', () => {
  const unknown = new Set<string>();
  for (const f of SRC) {
    for (const m of readFileSync(f, 'utf8').matchAll(/\bTSCRYPTFS_[A-Z0-9_]+/g)) if (!NAMES.includes(m[0] as SwitchName)) unknown.add(`${m[0]} (${f.slice(REPO_ROOT.length + 1)})`);
  }
  assert.deepEqual([...unknown], []);
});

test('no module but the registry reads a TSCRYPTFS_ variable straight from process.env', () => {
  const direct = SRC.filter((f) => !f.endsWith(join('util', 'switches.ts')) && /process\.env\.TSCRYPTFS_|process\.env\[['"]TSCRYPTFS_/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(direct, []);
});

test('an off switch is off at exactly 0, and on when unset, empty or anything else', () => {
  for (const name of NAMES) {
    const info: SwitchInfo = SWITCHES[name];
    if (!info.offSwitch) continue;
    const n = name as Parameters<typeof envSwitch>[0];
    assert.equal(envSwitch(n, { [name]: '0' }), false, name);
    for (const v of [undefined, '', '1', 'off', ' 0']) assert.equal(envSwitch(n, v === undefined ? {} : { [name]: v }), true, `${name}=${v}`);
  }
  assert.equal(switchValue('TSCRYPTFS_SPIN', { TSCRYPTFS_SPIN: '0,0' }), '0,0');
});

test('a numeric switch: its number when its pattern takes it, else its default', () => {
  const n = (v: string | undefined): number => switchNumber('TSCRYPTFS_QUIET_MS', v === undefined ? {} : { TSCRYPTFS_QUIET_MS: v });
  assert.equal(n('1000'), 1000);
  assert.equal(n(' 20 '), 20);
  for (const v of [undefined, '', ' ', '0', 'soon', '-5', '1e3', 'Infinity']) assert.equal(n(v), 5000, String(v));
  assert.equal(switchNumber('TSCRYPTFS_PROGRESS_MS', { TSCRYPTFS_PROGRESS_MS: '0' }), 0);
});

test('a value a switch does not take gets one warning line, which names the default that applies; unset and empty get none', () => {
  assert.deepEqual(switchWarnings({}), []);
  const good = { TSCRYPTFS_SPIN: '0,0', TSCRYPTFS_NATIVE_BATCH: '0', TSCRYPTFS_ASSIST: '1', TSCRYPTFS_FS_IO: 'async', TSCRYPTFS_AT_CALLS: 'proc', TSCRYPTFS_QUIET_MS: '200', TSCRYPTFS_OPSTATS: '/tmp/x', TSCRYPTFS_AEGIS: 'ts', TSCRYPTFS_READDIRPLUS: '' };
  assert.deepEqual(switchWarnings(good), []);
  const bad = { TSCRYPTFS_SPIN: '0', TSCRYPTFS_NATIVE_BATCH: 'off', TSCRYPTFS_FS_IO: 'Async', TSCRYPTFS_QUIET_MS: '0', HOME: '/root' };
  assert.deepEqual(switchWarnings(bad), [
    'TSCRYPTFS_NATIVE_BATCH="off" is not 0: the default (on) applies',
    'TSCRYPTFS_SPIN="0" is not ANSWER,LOOP: the default (40,200) applies',
    'TSCRYPTFS_FS_IO="Async" is not direct|async: the default (direct) applies',
    'TSCRYPTFS_QUIET_MS="0" is not MILLISECONDS: the default (5000) applies',
  ]);
  // each reader does what the warning says: the default
  assert.equal(envSwitch('TSCRYPTFS_NATIVE_BATCH', bad), true);
  assert.deepEqual(spinSettings(bad.TSCRYPTFS_SPIN, true), spinSettings(undefined, true));
  assert.equal(switchNumber('TSCRYPTFS_QUIET_MS', bad), 5000);
});

test('the native fast path: READ and BATCH turn every part off, LOOKUP opens, creates, listings and renames, OPEN creates, UNLINK rmdirs, WRITE creates', () => {
  const all = nativeFastPathSwitches({});
  assert.ok(Object.values(all).every((v) => v), JSON.stringify(all));
  for (const off of ['TSCRYPTFS_NATIVE_READ', 'TSCRYPTFS_NATIVE_BATCH']) {
    const parts = nativeFastPathSwitches({ [off]: '0' });
    assert.ok(Object.values(parts).every((v) => !v), `${off}=0: ${JSON.stringify(parts)}`);
  }
  assert.deepEqual(nativeFastPathSwitches({ TSCRYPTFS_NATIVE_LOOKUP: '0' }), { ...all, lookups: false, opens: false, creates: false, lists: false, renames: false });
  assert.deepEqual(nativeFastPathSwitches({ TSCRYPTFS_NATIVE_UNLINK: '0' }), { ...all, unlinks: false, rmdirs: false });
  assert.deepEqual(nativeFastPathSwitches({ TSCRYPTFS_NATIVE_OPEN: '0' }), { ...all, opens: false, creates: false });
  assert.deepEqual(nativeFastPathSwitches({ TSCRYPTFS_NATIVE_WRITE: '0' }), { ...all, writes: false, creates: false });
  for (const [name, part] of [['CREATE', 'creates'], ['RMDIR', 'rmdirs'], ['ATTRS', 'attrs'], ['FSYNC', 'fsyncs'], ['LIST', 'lists'], ['RENAME', 'renames']] as const) {
    assert.deepEqual(nativeFastPathSwitches({ [`TSCRYPTFS_NATIVE_${name}`]: '0' }), { ...all, [part]: false }, name);
  }
});

test('the man page describes every user and measurement switch, and no other TSCRYPTFS_ variable', () => {
  const md = readFileSync(join(REPO_ROOT, 'Documentation', 'tscryptfs.1.md'), 'utf8');
  const section = md.slice(md.indexOf('\n# ENVIRONMENT\n'), md.indexOf('\n# FILES\n'));
  const described = [...section.matchAll(/^### (TSCRYPTFS_[A-Z0-9_]+)$/gm)].map((m) => m[1]).sort();
  const expected = NAMES.filter((n) => SWITCHES[n].kind === 'user' || SWITCHES[n].kind === 'measurement').sort();
  assert.deepEqual(described, expected);
});

test('every switch but the internal one is set by some test (or, for the native ones, by the suite\'s second run)', () => {
  const testFiles = sources(join(REPO_ROOT, 'test')).map((f) => readFileSync(f, 'utf8'));
  const secondRun = readFileSync(join(REPO_ROOT, 'scripts', 'run-tests.mjs'), 'utf8');
  const unset = NAMES.filter((name) => {
    if (SWITCHES[name].kind === 'internal') return false;
    if (name.startsWith('TSCRYPTFS_NATIVE_') && secondRun.includes("startsWith('TSCRYPTFS_NATIVE_')")) return false;
    return !testFiles.some((text) => new RegExp(`\\b${name}\\b['"]?\\s*[:=\\]]`).test(text));
  });
  assert.deepEqual(unset, []);
});

test('the spins: TSCRYPTFS_SPIN sets both times, they poll only while a core is free unless TSCRYPTFS_SPIN_GATE=0, and requests answered in C keep the loop polling unless TSCRYPTFS_SPIN_NATIVE=0', () => {
  assert.deepEqual(spinSettings(undefined, true, true), { answer: 40, loop: 200, gate: true, native: true });
  assert.deepEqual(spinSettings('10,300', true, true), { answer: 10, loop: 300, gate: true, native: true });
  assert.deepEqual(spinSettings('0,0', false, false), { answer: 0, loop: 0, gate: false, native: false });
  assert.deepEqual(spinSettings('soon', false, true), { answer: 40, loop: 200, gate: false, native: true });
  assert.equal(envSwitch('TSCRYPTFS_SPIN_GATE', {}), true);
  assert.equal(envSwitch('TSCRYPTFS_SPIN_GATE', { TSCRYPTFS_SPIN_GATE: '0' }), false);
  assert.equal(envSwitch('TSCRYPTFS_SPIN_NATIVE', {}), true);
  assert.equal(envSwitch('TSCRYPTFS_SPIN_NATIVE', { TSCRYPTFS_SPIN_NATIVE: '0' }), false);
});
