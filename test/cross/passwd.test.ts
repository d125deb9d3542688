/**
 * -passwd on either side leaves a config the other accepts: tscryptfs
 * -passwd, then a gocryptfs mount with the new password; gocryptfs -passwd,
 * then the Vault with the new password. The content is untouched.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { gocryptfsInit, run, withGocryptfsMount, GOCRYPTFS, guardMountsUnder, unguardMountsUnder } from '../helpers/gocryptfs.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { tscryptfs } from '../cli/helpers.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 60_000, ...needs('mount', 'gocryptfs') };

let tmp: string;
before(() => {
  tmp = makeTempDir();
  guardMountsUnder(tmp);
});
after(() => {
  unguardMountsUnder(tmp);
  removeTempDir(tmp);
});

for (const variant of [[], ['-xchacha'], ['-aessiv'], ['-plaintextnames']]) {
  const label = variant.join(' ') || 'default';

  test(`tscryptfs -passwd, then gocryptfs mounts with the new password (${label})`, T, async () => {
    const dir = join(tmp, `ours-${label}`);
    await fsp.mkdir(dir);
    const init = await tscryptfs(['-init', '-q', '-scryptn', '10', '-extpass', 'echo test', ...variant, dir]);
    assert.equal(init.code, 0, init.stderr);
    const v = await Vault.open(dir, { password: 'test' });
    await v.mkdir('/d');
    await v.writeFile('/d/f.txt', 'kept across -passwd\n');
    await v.close();
    const r = await tscryptfs(['-passwd', '-q', dir], { input: 'test\nnew-pw\n' });
    assert.equal(r.code, 0, r.stderr);
    await withGocryptfsMount(dir, join(tmp, `mnt-ours-${label}`), { password: false, flags: ['-extpass', 'echo new-pw'] }, async (mnt) => {
      assert.equal(await fsp.readFile(join(mnt, 'd', 'f.txt'), 'utf8'), 'kept across -passwd\n');
    });
    const old = await run(GOCRYPTFS, ['-q', '-extpass', 'echo test', dir, join(tmp, `mnt-ours-${label}`)]);
    assert.equal(old.code, 12, 'gocryptfs refuses the old password');
  });

  test(`gocryptfs -passwd, then the Vault opens with the new password (${label})`, T, async () => {
    const dir = join(tmp, `theirs-${label}`);
    await fsp.mkdir(dir);
    await gocryptfsInit(dir, variant);
    await withGocryptfsMount(dir, join(tmp, `mnt-theirs-${label}`), {}, async (mnt) => {
      await fsp.writeFile(join(mnt, 'g.txt'), 'written by gocryptfs\n');
    });
    const r = await run(GOCRYPTFS, ['-passwd', '-q', dir], { input: 'test\nnew-pw\n' });
    assert.equal(r.code, 0, r.stderr);
    await assert.rejects(Vault.open(dir, { password: 'test' }), { code: 'EPASSWORD' });
    const v = await Vault.open(dir, { password: 'new-pw' });
    assert.equal((await v.readFile('/g.txt')).toString(), 'written by gocryptfs\n');
    await v.close();
    // And our -passwd accepts gocryptfs's rewritten config in turn.
    const back = await tscryptfs(['-passwd', '-q', dir], { input: 'new-pw\nthird\n' });
    assert.equal(back.code, 0, back.stderr);
    const v2 = await Vault.open(dir, { password: 'third' });
    assert.equal((await v2.readFile('/g.txt')).toString(), 'written by gocryptfs\n');
    await v2.close();
  });
}
