/**
 * Mount-level interop between MOUNT_IMPL and the real gocryptfs 2.3, for
 * the default format, -aessiv, -xchacha, -plaintextnames and
 * -deterministic-names: the standard tree (test/helpers/tree.ts) written
 * through one implementation's mount reads identically (modes, sizes,
 * sha256, symlink targets, xattrs, link counts) through the other's mount
 * of the same cipher directory, both ways, with changes made on the second
 * side read back on the first; gocryptfs -fsck is clean afterwards.
 *
 * An in-memory model predicts every manifest, so the two implementations
 * cannot agree on a wrong answer. With TSCRYPTFS_MOUNT_IMPL=gocryptfs both
 * sides are gocryptfs (which validates the test itself).
 */
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  buildTree,
  diffManifests,
  fsSide,
  MemSide,
  mutateFromGocryptfs,
  mutateFromVault,
  readManifest,
  type LongNameLengths,
  type ManifestEntry,
} from '../helpers/tree.js';
import { cleanupMountsUnder, initCipherdir, MOUNT_IMPL, withMount, type MountImpl } from '../helpers/mount.js';
import { assertFsckClean, useMountTmp } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const LENS: LongNameLengths = { kept: [175], hashed: [176, 255], dir: 230 };
const VARIANTS: { name: string; flags: string[] }[] = [
  { name: 'default', flags: [] },
  { name: 'aessiv', flags: ['-aessiv'] },
  { name: 'xchacha', flags: ['-xchacha'] },
  { name: 'plaintextnames', flags: ['-plaintextnames'] },
  { name: 'deterministic-names', flags: ['-deterministic-names'] },
];
const T = { timeout: 120_000, ...needs('mount', 'gocryptfs') };

function assertManifest(actual: ManifestEntry[], expected: ManifestEntry[], what: string): void {
  const d = diffManifests(actual, expected);
  assert.equal(d, '', `${what}:\n${d}`);
  assert.deepEqual(actual, expected, what);
}

let tmp = '';
const dir = useMountTmp('interop');
before(() => {
  tmp = dir.tmp;
});

/**
 * `writer` initialises and fills a cipher directory through its mount; `reader` mounts it and
 * must see the same, then changes it; `writer` mounts it again and must see those changes.
 */
async function roundTrip(v: (typeof VARIANTS)[number], writer: MountImpl, reader: MountImpl, label: string): Promise<void> {
  const cdir = join(tmp, `${v.name}-${label}-cipher`);
  const mntW = join(tmp, `${v.name}-${label}-mnt-${writer}`);
  const mntR = join(tmp, `${v.name}-${label}-mnt-${reader}`);
  await initCipherdir(writer, cdir, v.flags);

  const model = new MemSide(0o022);
  await buildTree(model, LENS);
  const expected = await readManifest(model);

  const written = await withMount(writer, cdir, mntW, {}, async (m) => {
    const side = fsSide(m, `${writer} mount`);
    await buildTree(side, LENS);
    return readManifest(side);
  });
  assertManifest(written, expected, `${writer} mount vs model`);

  await mutateFromVault(model, LENS);
  const expected2 = await readManifest(model);
  const changed = await withMount(reader, cdir, mntR, {}, async (m) => {
    const side = fsSide(m, `${reader} mount`);
    assertManifest(await readManifest(side), written, `${reader} mount of ${writer}'s tree`);
    await mutateFromVault(side, LENS);
    return readManifest(side);
  });
  assertManifest(changed, expected2, `${reader} mount after its changes vs model`);

  await mutateFromGocryptfs(model, LENS);
  const expected3 = await readManifest(model);
  const final = await withMount(writer, cdir, mntW, {}, async (m) => {
    const side = fsSide(m, `${writer} mount`);
    assertManifest(await readManifest(side), changed, `${writer} mount of ${reader}'s changes`);
    await mutateFromGocryptfs(side, LENS);
    return readManifest(side);
  });
  assertManifest(final, expected3, `${writer} mount after more changes vs model`);

  await assertFsckClean(cdir);
  // And the reader sees the last state too.
  await withMount(reader, cdir, mntR, { flags: ['-ro'] }, async (m) => {
    assertManifest(await readManifest(fsSide(m, `${reader} mount`)), final, `${reader} mount, final state`);
  });
}

for (const v of VARIANTS) {
  describe(`mount interop: ${v.name}`, () => {
    test(`a tree written through a ${MOUNT_IMPL} mount reads identically through gocryptfs (and back); -fsck clean`, T, async () => {
      await roundTrip(v, MOUNT_IMPL, 'gocryptfs', 'ours-first');
    });
    test(`a tree written through a gocryptfs mount reads identically through ${MOUNT_IMPL} (and back); -fsck clean`, T, async () => {
      await roundTrip(v, 'gocryptfs', MOUNT_IMPL, 'theirs-first');
    });
  });
}

test('nothing left mounted or running', async () => {
  assert.deepEqual(await cleanupMountsUnder(tmp), []);
});
