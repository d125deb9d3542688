/**
 * A mount of a cipher directory whose gocryptfs.conf is broken in one way
 * fails before anything is mounted, with gocryptfs's exit code for that
 * way: each case is run through both programs (with a wrong password, so
 * that a config that loads ends in exit 12, never in a mount).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { cleanup, gocryptfs, initVault, tempDir, tscryptfs, type RunResult } from './helpers.js';
import { needs } from '../helpers/requirements.js';

type Conf = { Version: number; FeatureFlags: string[]; ScryptObject?: Record<string, unknown> };

/** Each case: its name, what it does to the config, the exit code gocryptfs 2.3 gives. */
const CASES: ReadonlyArray<readonly [string, (text: string) => string, number]> = [
  ['the config as made (wrong password)', (t) => t, 12],
  ['no config file', () => '', 11],
  ['not JSON', () => '{bad', 11],
  ['an unknown feature flag', edit((c) => c.FeatureFlags.push('FutureFlag')), 27],
  ['Version 3', edit((c) => (c.Version = 3)), 27],
  ['weak scrypt N=512', edit((c) => (c.ScryptObject!.N = 512)), 27],
  ['scrypt R=4', edit((c) => (c.ScryptObject!.R = 4)), 27],
  ['no ScryptObject', edit((c) => delete c.ScryptObject), 27],
];

function edit(fn: (c: Conf) => unknown): (text: string) => string {
  return (text) => {
    const c = JSON.parse(text) as Conf;
    fn(c);
    return JSON.stringify(c, null, '\t');
  };
}

let tmp = '';
let made = '';

before(async () => {
  tmp = await tempDir('tscryptfs-confexit-');
  made = await fsp.readFile(join(await initVault(tmp, 'source'), 'gocryptfs.conf'), 'utf8');
});
after(() => cleanup(tmp));

for (const [name, change, code] of CASES) {
  test(`${name}: exit ${code}, as gocryptfs`, needs('gocryptfs'), async () => {
    const results: Record<string, RunResult> = {};
    for (const [prog, run] of [['tscryptfs', tscryptfs], ['gocryptfs', gocryptfs]] as const) {
      const dir = join(tmp, `${prog}-${name.replace(/\W+/g, '_')}`);
      const mnt = `${dir}-mnt`;
      await fsp.mkdir(dir);
      await fsp.mkdir(mnt);
      const text = change(made);
      if (name !== 'no config file') await fsp.writeFile(join(dir, 'gocryptfs.conf'), text, { mode: 0o400 });
      results[prog] = await run(['-q', '-extpass', 'echo wrong', dir, mnt]);
      assert.deepEqual(await fsp.readdir(mnt), [], `${prog} mounted nothing`);
    }
    assert.equal(results.gocryptfs!.code, code, `gocryptfs: ${results.gocryptfs!.stderr}`);
    assert.equal(results.tscryptfs!.code, code, `tscryptfs: ${results.tscryptfs!.stderr}`);
    assert.match(results.tscryptfs!.stderr, /^tscryptfs: .+\n$/, 'one line');
  });
}
