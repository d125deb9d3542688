/**
 * Set-id bits an unprivileged write or truncate drops (Linux's
 * should_remove_suid): the rule as a pure function, and the Vault calls a
 * mount with FUSE_HANDLE_KILLPRIV_V2 makes (the mount itself is tested in
 * test/mount/multiuser.test.ts against ext4).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Vault } from '../../src/index.js';
import { withoutSetIdBits } from '../../src/vault/stats.js';
import { silentLogger } from '../../src/util/logger.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

test('withoutSetIdBits: S_ISUID always goes, S_ISGID only with group execute, the rest stays', () => {
  const cases: [number, number][] = [
    [0o4755, 0o755],
    [0o2755, 0o755],
    [0o2745, 0o2745], // no group execute: the bit marks mandatory locking
    [0o6755, 0o755],
    [0o6745, 0o2745],
    [0o1777, 0o1777], // sticky stays
    [0o644, 0o644],
    [0o100000 | 0o4755, 0o755], // the file type is not part of the answer
  ];
  for (const [mode, want] of cases) assert.equal(withoutSetIdBits(mode).toString(8), want.toString(8), `mode ${mode.toString(8)}`);
});

let tmp: string;
let v: Vault;
before(async () => {
  tmp = makeTempDir();
  v = await Vault.init(tmp, { password: 'pw', scryptLogN: 10, logger: silentLogger });
});
after(async () => {
  await v.close();
  removeTempDir(tmp);
});

test('VaultFile.dropSetIdBits and truncate(..., { dropSetIdBits }) change the mode and nothing else', async () => {
  await v.writeFile('/w', 'abc', { mode: 0o6755 });
  await v.chmod('/w', 0o6755);
  const h = await v.open('/w', 'r+');
  try {
    await h.dropSetIdBits();
    assert.equal((await h.stat()).mode & 0o7777, 0o755);
    await h.dropSetIdBits(); // nothing left to drop
    assert.equal((await h.stat()).mode & 0o7777, 0o755);
  } finally {
    await h.close();
  }
  assert.equal((await v.readFile('/w')).toString(), 'abc');

  await v.writeFile('/t', 'abcdef');
  await v.chmod('/t', 0o2775);
  await v.truncate('/t', 2);
  assert.equal((await v.stat('/t')).mode & 0o7777, 0o2775, 'a plain truncate keeps the bits');
  await v.truncate('/t', 1, { dropSetIdBits: true });
  const st = await v.stat('/t');
  assert.deepEqual([st.mode & 0o7777, st.size], [0o775, 1]);
});
