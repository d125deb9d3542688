/**
 * The gocryptfs <-> tscryptfs interoperability suite for one format
 * variant. Each test/cross/<variant>.test.ts calls defineCrossSuite once.
 *
 * 1. gocryptfs -init + mount + build the tree -> the Vault (password and
 *    master key) shows the same manifest as the mount did.
 * 2. Vault.init + build the tree -> gocryptfs shows the same manifest, and
 *    gocryptfs -fsck is happy.
 * 3. Mixed writes on the cipher directory from 2: gocryptfs, then the
 *    Vault, then gocryptfs again.
 * 4. The cipher directories from 1 and 2 have the same shape.
 * 5. 1 and 2 again (reading only / writing only) with the pure-TypeScript
 *    'noble' crypto backend instead of node:crypto.
 *
 * An in-memory model (MemSide) replays the same operations and predicts
 * every manifest, so the two real implementations cannot agree on a wrong
 * answer.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault, type VaultMasterKeyOpenOptions, type Logger } from '../../src/index.js';
import {
  cipherJoin,
  dumpMasterKey,
  encryptPath,
  gocryptfsFsck,
  gocryptfsInit,
  guardMountsUnder,
  mountsUnder,
  unmount,
  unguardMountsUnder,
  withGocryptfsMount,
  PASSWORD,
} from './gocryptfs.js';
import { cipherInventory, cipherShapes, type CipherInventory, type CipherShape } from './cipher-shape.js';
import { makeTempDir, removeTempDir } from './tmp.js';
import {
  buildTree,
  diffManifests,
  fileName,
  longName,
  fsSide,
  HOLE,
  MemSide,
  mutateFromGocryptfs,
  mutateFromVault,
  readManifest,
  vaultSide,
  type LongNameLengths,
  type ManifestEntry,
  type Side,
} from './tree.js';
import { needs } from './requirements.js';

export interface CrossVariant {
  name: string;
  /** gocryptfs -init flags. */
  initFlags: string[];
  /** Vault.init options, and the format options for a master-key open. */
  format: Omit<VaultMasterKeyOpenOptions, 'masterkey'>;
  lens: LongNameLengths;
  /** Per-block overhead: 32 (GCM, SIV) or 40 (XChaCha). */
  overhead: number;
  /** Directories carry gocryptfs.diriv. */
  dirIV: boolean;
  /** Long names are hashed into gocryptfs.longname.*. */
  hashesLongNames: boolean;
}

export const VARIANTS = {
  default: {
    name: 'default',
    initFlags: [],
    format: {},
    lens: { kept: [175], hashed: [176, 255], dir: 230 },
    overhead: 32,
    dirIV: true,
    hashesLongNames: true,
  },
  aessiv: {
    name: 'aessiv',
    initFlags: ['-aessiv'],
    format: { cipher: 'aes-siv' },
    lens: { kept: [175], hashed: [176, 255], dir: 230 },
    overhead: 32,
    dirIV: true,
    hashesLongNames: true,
  },
  xchacha: {
    name: 'xchacha',
    initFlags: ['-xchacha'],
    format: { cipher: 'xchacha' },
    lens: { kept: [175], hashed: [176, 255], dir: 230 },
    overhead: 40,
    dirIV: true,
    hashesLongNames: true,
  },
  plaintextnames: {
    name: 'plaintextnames',
    initFlags: ['-plaintextnames'],
    format: { plaintextNames: true },
    lens: { kept: [175], hashed: [176, 255], dir: 230 },
    overhead: 32,
    dirIV: false,
    hashesLongNames: false,
  },
  deterministicNames: {
    name: 'deterministic-names',
    initFlags: ['-deterministic-names'],
    format: { deterministicNames: true },
    lens: { kept: [175], hashed: [176, 255], dir: 230 },
    overhead: 32,
    dirIV: false,
    hashesLongNames: true,
  },
  longnamemax62: {
    name: 'longnamemax62',
    initFlags: ['-longnamemax', '62'],
    format: { longNameMax: 62 },
    lens: { kept: [31], hashed: [32, 40, 255], dir: 40 },
    overhead: 32,
    dirIV: true,
    hashesLongNames: true,
  },
} satisfies Record<string, CrossVariant>;

/** A logger that remembers every warning (a correct run has none). */
function collectingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (m: string) => void warnings.push(m) };
}

/** Cipher path of every manifest entry, as gocryptfs's control socket computes it. */
async function gocryptfsCipherPaths(sock: string, manifest: ManifestEntry[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of manifest) out.set(e.path, await encryptPath(sock, e.path));
  return out;
}

async function assertFsckClean(cipherdir: string): Promise<void> {
  const r = await gocryptfsFsck(cipherdir);
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 0, `gocryptfs -fsck exit ${r.code}:\n${out}`);
  assert.match(out, /no problems found/, out);
}

/** No orphaned .name files or hashed objects, no rmdir leftovers, diriv everywhere or nowhere. */
function assertCleanInventory(inv: CipherInventory, v: CrossVariant, label: string): void {
  assert.deepEqual(inv.orphans, [], `${label}: orphaned long-name files`);
  assert.deepEqual(inv.leftovers, [], `${label}: leftover gocryptfs.* files`);
  assert.equal(inv.confMode, '400', `${label}: gocryptfs.conf mode`);
  if (v.dirIV) {
    assert.deepEqual(inv.dirsWithoutDiriv, [], `${label}: directories without diriv`);
    assert.deepEqual(Object.keys(inv.dirivModes), ['444'], `${label}: diriv modes`);
  } else {
    assert.equal(inv.dirivs, 0, `${label}: no diriv files expected`);
  }
  if (v.hashesLongNames) {
    assert.ok(inv.nameFiles > 0, `${label}: expected long names`);
    assert.deepEqual(Object.keys(inv.nameFileModes), ['444'], `${label}: .name modes`);
  } else {
    assert.equal(inv.nameFiles, 0, `${label}: no .name files expected`);
  }
}

/** Manifest equality with a readable diff. */
function assertManifest(actual: ManifestEntry[], expected: ManifestEntry[], what: string): void {
  const d = diffManifests(actual, expected);
  assert.equal(d, '', `${what}:\n${d}`);
  assert.deepEqual(actual, expected, what);
}

/** Every name of a hard-linked file shows the same content and a link count of 2. */
function assertHardLinks(m: ManifestEntry[], lens: LongNameLengths): void {
  const get = (p: string): ManifestEntry => {
    const e = m.find((x) => x.path === p);
    assert.ok(e, `no ${p}`);
    return e;
  };
  for (const [a, b] of [
    [fileName(5000), 'a/hardlink_5000.bin'],
    [fileName(4096), longName(lens, 'h')],
  ] as const) {
    const x = get(a);
    const y = get(b);
    assert.equal(x.sha256, y.sha256, `hard links ${a} and ${b} show the same content`);
    assert.equal(x.nlink, 2, `${a} link count`);
    assert.equal(y.nlink, 2, `${b} link count`);
  }
}

async function withVault<T>(v: Vault, fn: (side: Side, v: Vault) => Promise<T>): Promise<T> {
  try {
    return await fn(vaultSide(v), v);
  } finally {
    await v.close();
  }
}

export function defineCrossSuite(v: CrossVariant): void {
  // gocryptfs mounts every tree here; only root mounts with the options used.
  describe(`gocryptfs interop: ${v.name}`, needs('mount', 'gocryptfs'), () => {
    let tmp = '';
    const model = new MemSide(0o022);
    let expected: ManifestEntry[] = [];
    // Results handed from one test to the next.
    let goShapes: CipherShape[] | undefined;
    let goInventory: CipherInventory | undefined;
    let tsShapes: CipherShape[] | undefined;
    let tsInventory: CipherInventory | undefined;
    let tsCipherdir: string | undefined;
    let goCipherdir: string | undefined;

    before(async () => {
      process.umask(0o022);
      tmp = makeTempDir(`tscryptfs-cross-${v.name}-`);
      guardMountsUnder(tmp);
      await buildTree(model, v.lens);
      expected = await readManifest(model);
    });

    after(async () => {
      if (!tmp) return;
      // Never leave a mount behind, whatever happened; then remove the files.
      for (const m of mountsUnder(tmp)) await unmount(m);
      removeTempDir(tmp);
      unguardMountsUnder(tmp);
    });

    test('gocryptfs-made tree reads identically through the Vault (password and master key)', async () => {
      const cdir = join(tmp, 'go-cipher');
      await fsp.mkdir(cdir);
      await gocryptfsInit(cdir, v.initFlags);
      const sock = join(tmp, 'go.sock');

      let mountManifest: ManifestEntry[] = [];
      let paths = new Map<string, string>();
      await withGocryptfsMount(cdir, join(tmp, 'go-mnt'), { ctlsock: sock }, async (mnt) => {
        const side = fsSide(mnt, 'gocryptfs mount');
        await buildTree(side, v.lens);
        mountManifest = await readManifest(side);
        paths = await gocryptfsCipherPaths(sock, mountManifest);
      });
      // Sanity of the test itself: gocryptfs did what the model predicts.
      assertManifest(mountManifest, expected, 'gocryptfs mount vs model');

      const log = collectingLogger();
      await withVault(await Vault.open(cdir, { password: PASSWORD, logger: log }), async (side, vault) => {
        assertManifest(await readManifest(side), mountManifest, 'Vault (password) vs gocryptfs mount');
        for (const [plain, rel] of paths) {
          assert.equal(await vault.cipherPath('/' + plain), cipherJoin(cdir, rel), `cipher path of ${plain}`);
        }
      });

      const masterkey = await dumpMasterKey(join(cdir, 'gocryptfs.conf'));
      await withVault(await Vault.open(cdir, { masterkey, ...v.format, logger: log }), async (side) => {
        assertManifest(await readManifest(side), mountManifest, 'Vault (master key) vs gocryptfs mount');
      });
      assert.deepEqual(log.warnings, [], 'Vault warnings');

      assertHardLinks(mountManifest, v.lens);
      goCipherdir = cdir;
      goShapes = await cipherShapes(cdir, paths, v.overhead);
      goInventory = await cipherInventory(cdir);
      assertCleanInventory(goInventory, v, 'gocryptfs-made');
    });

    test('tscryptfs-made tree reads identically through gocryptfs, and -fsck finds no problems', async () => {
      const cdir = join(tmp, 'ts-cipher');
      await fsp.mkdir(cdir);
      const log = collectingLogger();
      let vaultManifest: ManifestEntry[] = [];
      await withVault(await Vault.init(cdir, { password: PASSWORD, ...v.format, scryptLogN: 10, logger: log }), async (side) => {
        await buildTree(side, v.lens);
        vaultManifest = await readManifest(side);
      });
      assertManifest(vaultManifest, expected, 'Vault vs model');
      assertHardLinks(vaultManifest, v.lens);
      assert.deepEqual(log.warnings, [], 'Vault warnings');

      const sock = join(tmp, 'ts.sock');
      let paths = new Map<string, string>();
      await withGocryptfsMount(cdir, join(tmp, 'ts-mnt'), { ctlsock: sock }, async (mnt) => {
        const mountManifest = await readManifest(fsSide(mnt, 'gocryptfs mount'));
        assertManifest(mountManifest, vaultManifest, 'gocryptfs mount vs Vault');
        paths = await gocryptfsCipherPaths(sock, mountManifest);
      });
      await assertFsckClean(cdir);

      // Our name encryption agrees with gocryptfs's on our own directory.
      await withVault(await Vault.open(cdir, { password: PASSWORD, logger: log, readOnly: true }), async (_side, vault) => {
        for (const [plain, rel] of paths) {
          assert.equal(await vault.cipherPath('/' + plain), cipherJoin(cdir, rel), `cipher path of ${plain}`);
        }
      });
      tsShapes = await cipherShapes(cdir, paths, v.overhead);
      tsInventory = await cipherInventory(cdir);
      assertCleanInventory(tsInventory, v, 'tscryptfs-made');
      tsCipherdir = cdir;
    });

    test('mixed writes: gocryptfs, then the Vault, then gocryptfs again', async () => {
      assert.ok(tsCipherdir, 'needs the cipher directory of the previous test');
      const cdir = tsCipherdir;
      const mnt = join(tmp, 'mixed-mnt');

      // 1. gocryptfs changes the tscryptfs-made directory.
      let afterGo: ManifestEntry[] = [];
      await withGocryptfsMount(cdir, mnt, {}, async (m) => {
        const side = fsSide(m, 'gocryptfs mount');
        await mutateFromGocryptfs(side, v.lens);
        afterGo = await readManifest(side);
      });
      await mutateFromGocryptfs(model, v.lens);
      const expectedGo = await readManifest(model);
      assertManifest(afterGo, expectedGo, 'gocryptfs mount vs model after gocryptfs writes');

      // 2. The Vault sees exactly that, then changes more.
      const log = collectingLogger();
      let afterVault: ManifestEntry[] = [];
      await withVault(await Vault.open(cdir, { password: PASSWORD, logger: log }), async (side) => {
        assertManifest(await readManifest(side), afterGo, 'Vault vs gocryptfs after gocryptfs writes');
        await mutateFromVault(side, v.lens);
        afterVault = await readManifest(side);
      });
      assert.deepEqual(log.warnings, [], 'Vault warnings');
      await mutateFromVault(model, v.lens);
      assertManifest(afterVault, await readManifest(model), 'Vault vs model after Vault writes');

      // 3. gocryptfs sees exactly what the Vault wrote.
      await withGocryptfsMount(cdir, mnt, {}, async (m) => {
        assertManifest(await readManifest(fsSide(m, 'gocryptfs mount')), afterVault, 'gocryptfs vs Vault after Vault writes');
      });
      await assertFsckClean(cdir);
      assertCleanInventory(await cipherInventory(cdir), v, 'after mixed writes');
    });

    test('cipher-side shapes match gocryptfs (sizes, holes, diriv and .name files)', () => {
      assert.ok(goShapes && tsShapes && goInventory && tsInventory, 'needs the results of the first two tests');
      // Same plaintext operations -> same observable cipher-side shape.
      assert.deepEqual(tsShapes, goShapes, 'shapes: tscryptfs vs gocryptfs');
      const { dirsWithoutDiriv: _a, ...tsInv } = tsInventory;
      const { dirsWithoutDiriv: _b, ...goInv } = goInventory;
      assert.deepEqual(tsInv, goInv, 'inventory: tscryptfs vs gocryptfs');
      assert.equal(tsInventory.dirsWithoutDiriv.length, goInventory.dirsWithoutDiriv.length);

      // And the shapes are the documented ones (Documentation/format.md §6.4, §7.7, §7.8), on both sides.
      const cbs = 4096 + v.overhead;
      const cipherSize = (p: number): number => (p === 0 ? 0 : 18 + p + Math.ceil(p / 4096) * v.overhead);
      for (const [label, shapes] of [['tscryptfs', tsShapes], ['gocryptfs', goShapes]] as const) {
        const get = (p: string): CipherShape => {
          const s = shapes.find((x) => x.path === p);
          assert.ok(s, `${label}: no shape for ${p}`);
          return s;
        };
        const hole = get(HOLE);
        assert.equal(hole.size, cipherSize(12392), `${label}: hole file cipher size`);
        assert.deepEqual(hole.zeroBlocks, [1, 2], `${label}: hole file blocks 1..2 are ${cbs}-byte zero ranges`);
        assert.deepEqual(get('grown_8192.bin').zeroBlocks, [0, 1], `${label}: aligned growth leaves holes`);
        assert.equal(get('grown_8192.bin').size, cipherSize(8192));
        assert.deepEqual(get('grown_10000.bin').zeroBlocks, [0, 1], `${label}: unaligned growth: holes, then a real block`);
        assert.deepEqual(get('grown_from_100.bin').zeroBlocks, [1], `${label}: growth from a partial block pads it, then holes`);
        assert.equal(get('file_0.bin').size, 0, `${label}: empty file has no header`);
        for (const s of shapes) {
          if (s.type === 'file' && s.size! > 0) assert.equal(s.headerVersion, '0002', `${label}: ${s.path} header`);
          if (s.type === 'dir') {
            if (v.dirIV) assert.deepEqual(s.diriv, { mode: '444', size: 16 }, `${label}: ${s.path} diriv`);
            else assert.equal(s.diriv, null, `${label}: ${s.path} has no diriv`);
          }
          if (s.long) {
            assert.ok(v.hashesLongNames);
            assert.equal(s.nameFile?.mode, '444', `${label}: ${s.path} .name mode`);
            assert.equal(s.diskNameLength, 62, `${label}: ${s.path} hashed name length`);
          }
          const base = s.path.split('/').pop()!;
          const plainLen = Buffer.byteLength(base);
          if (v.hashesLongNames && v.lens.kept.includes(plainLen)) assert.equal(s.long, false, `${label}: ${s.path} stays unhashed`);
          if (v.hashesLongNames && v.lens.hashed.includes(plainLen)) assert.equal(s.long, true, `${label}: ${s.path} is hashed`);
          if (!v.hashesLongNames) assert.equal(s.long, false);
        }
      }
    });

    test("pure-TypeScript crypto backend ('noble') reads gocryptfs's tree and writes one gocryptfs reads", async () => {
      assert.ok(goCipherdir, 'needs the gocryptfs-made cipher directory of the first test');
      const log = collectingLogger();
      await withVault(await Vault.open(goCipherdir, { password: PASSWORD, backend: 'noble', logger: log, readOnly: true }), async (side) => {
        assertManifest(await readManifest(side), expected, 'noble Vault on the gocryptfs-made tree vs model');
      });

      const cdir = join(tmp, 'noble-cipher');
      await fsp.mkdir(cdir);
      await withVault(await Vault.init(cdir, { password: PASSWORD, ...v.format, scryptLogN: 10, backend: 'noble', logger: log }), async (side) => {
        await buildTree(side, v.lens);
      });
      assert.deepEqual(log.warnings, [], 'Vault warnings');
      await withGocryptfsMount(cdir, join(tmp, 'noble-mnt'), {}, async (mnt) => {
        assertManifest(await readManifest(fsSide(mnt, 'gocryptfs mount')), expected, 'gocryptfs on the noble-made tree vs model');
      });
      await assertFsckClean(cdir);
    });
  });
}
