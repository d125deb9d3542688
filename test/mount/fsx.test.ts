/**
 * The random-operation tester (test/helpers/fsx) on a real mount of
 * MOUNT_IMPL, short: a few hundred operations per cipher flavour from
 * fixed seeds, compared with a plain directory after every step. The long
 * run is `npm run fsx -- --ops 20000 --cipher all --seed N` (README.md).
 * A failure prints the seed and the shortest failing sequence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_FSX_CIPHERS, cipherSupported } from '../helpers/fsx/ciphers.js';
import { describeMismatch } from '../helpers/fsx/engine.js';
import { fsxSession } from '../helpers/fsx/session.js';
import { MOUNT_IMPL, useMountTmp } from '../helpers/mount-suite.js';
import { unmet } from '../helpers/requirements.js';

/** Operations per cipher in CI (TSCRYPTFS_FSX_OPS overrides). */
const OPS = Number(process.env.TSCRYPTFS_FSX_OPS ?? 400);
const SEED = 20261130;
const dir = useMountTmp('fsx');

for (const [i, cipher] of ALL_FSX_CIPHERS.entries()) {
  test(`fsx, ${cipher}: ${OPS} random operations on the mount match a plain directory`, { timeout: 120_000, skip: unmet('mount') ?? (!cipherSupported(MOUNT_IMPL, cipher) && `${MOUNT_IMPL} cannot mount ${cipher}`) }, async () => {
    const [res] = await fsxSession({ impl: MOUNT_IMPL, cipher, work: dir.tmp, seeds: [SEED + i], ops: OPS });
    assert.ok(res);
    assert.equal(res.mismatch, undefined, describeMismatch(`${MOUNT_IMPL} ${cipher}`, res));
    assert.equal(res.opsRun, OPS);
  });
}
