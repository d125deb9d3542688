/**
 * The mount with an -aegis cipher directory: real programs and
 * the awkward write patterns through tscryptfs, checked against a plain copy
 * and through the Vault, plus the cipher-side sizes of Documentation/format.md §6.6.
 * gocryptfs 2.3 cannot mount AEGIS, so this runs on tscryptfs only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { run, withMount } from '../helpers/mount.js';
import { useCipherdir } from '../helpers/mount-suite.js';
import { prng } from '../helpers/tree.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 120_000, ...needs('mount') };
const SIZES = [0, 1, 4095, 4096, 4097, (1 << 20) + 13];
/** AEGIS-256X2: nonce 32 + tag 16 per block, 18-byte header. */
const cipherSize = (p: number): number => (p === 0 ? 0 : 18 + p + Math.ceil(p / 4096) * 48);

const fx = useCipherdir('aegis', 'tscryptfs', ['-aegis']);

test('-aegis mount: cp -a / diff -r, tar round trip, sizes on disk as format.md §6.6', T, async () => {
  const src = join(fx.tmp, 'src');
  await fsp.mkdir(join(src, 'sub'), { recursive: true });
  for (const size of SIZES) await fsp.writeFile(join(src, `f_${size}.bin`), prng(`aegis-${size}`, size));
  await fsp.symlink('../f_1.bin', join(src, 'sub', 'link'));
  await withMount('tscryptfs', fx.cipherdir, join(fx.tmp, 'mnt'), {}, async (mnt) => {
    const cp = await run('cp', ['-a', src, join(mnt, 'copy')]);
    assert.equal(cp.code, 0, cp.stderr);
    const diff = await run('diff', ['-r', src, join(mnt, 'copy')]);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const tarball = join(fx.tmp, 'copy.tar');
    assert.equal((await run('tar', ['-C', mnt, '-cf', tarball, 'copy'])).code, 0);
    await fsp.mkdir(join(mnt, 'x'));
    assert.equal((await run('tar', ['-C', join(mnt, 'x'), '-xf', tarball])).code, 0);
    assert.equal((await run('diff', ['-r', src, join(mnt, 'x', 'copy')])).code, 0);
  });
  const v = await Vault.open(fx.cipherdir, { password: 'test' });
  try {
    for (const size of SIZES) {
      const p = `/copy/f_${size}.bin`;
      assert.equal((await fsp.stat(await v.cipherPath(p))).size, cipherSize(size), `cipher size of ${size}`);
      assert.deepEqual(await v.readFile(p), prng(`aegis-${size}`, size));
    }
  } finally {
    await v.close();
  }
});

test('-aegis mount: partial writes, holes, truncate, append and sqlite3 integrity', T, async () => {
  await withMount('tscryptfs', fx.cipherdir, join(fx.tmp, 'mnt2'), {}, async (mnt) => {
    const f = join(mnt, 'rmw.bin');
    const model = Buffer.alloc(20000);
    const fh = await fsp.open(f, 'w+');
    for (const [off, len] of [[0, 5000], [4090, 20], [12000, 3000], [8191, 2], [100, 1]] as const) {
      const data = prng(`w${off}`, len);
      await fh.write(data, 0, len, off);
      data.copy(model, off);
    }
    await fh.truncate(19000);
    await fh.truncate(20000);
    model.fill(0, 19000);
    await fh.close();
    assert.deepEqual(await fsp.readFile(f), model);
    await fsp.appendFile(f, 'tail');
    assert.equal((await fsp.stat(f)).size, 20004);
    const db = join(mnt, 'db.sqlite');
    const sql = 'CREATE TABLE t(a INTEGER, b TEXT);' +
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<3000) INSERT INTO t SELECT x, hex(randomblob(40)) FROM c;' +
      'DELETE FROM t WHERE a % 7 = 0; VACUUM;';
    assert.equal((await run('sqlite3', [db, sql])).code, 0);
    const check = await run('sqlite3', [db, 'PRAGMA integrity_check; SELECT count(*) FROM t;']);
    assert.equal(check.stdout.trim(), 'ok\n2572');
  });
});
