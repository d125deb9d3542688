/**
 * AEGIS-256X2 / AEGIS-128X2 as tscryptfs AEADs: shape, argument checks,
 * authentication failures, native ⇄ TypeScript agreement over many lengths
 * (on every native code path the CPU has), the batched block calls, and the
 * silent fallback to TypeScript when the addon is missing or disabled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Aegis128X2Aead,
  Aegis256X2Aead,
  aegisDecrypt,
  aegisEncrypt,
  aegisNativeAvailable,
  aegisNativeStatus,
  createAegisAead,
  type AegisAead,
  type AegisBackend,
  type AegisVariant,
} from '../../src/crypto/aegis/index.js';
import { aegisNativeBinding } from '../../src/crypto/aegis/native.js';
import { randomBytes } from '../../src/crypto/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { backendOptions, BACKENDS, cpuHasAesNi, hex, nativeRequired, nativeTestOptions, toHex, underCi } from './crypto-aegis-support.js';

const CLASSES = [
  { name: 'AEGIS-256X2', make: (k: Uint8Array, b?: AegisBackend) => new Aegis256X2Aead(k, b), keyLen: 32, nonceSize: 32, cipher: 'aegis', variant: 'aegis256x2' },
  { name: 'AEGIS-128X2', make: (k: Uint8Array, b?: AegisBackend) => new Aegis128X2Aead(k, b), keyLen: 16, nonceSize: 16, cipher: 'aegis128x2', variant: 'aegis128x2' },
] as const;

test('native AEGIS addon is available (required under CI on x86-64 Linux with AES-NI)', nativeRequired() || aegisNativeAvailable() ? {} : { skip: `not required here (CI=${process.env.CI ?? 'unset'}, AES-NI=${cpuHasAesNi()}): ${aegisNativeStatus().reason}` }, () => {
  const status = aegisNativeStatus();
  assert.ok(status.available, `native AEGIS addon unusable: ${status.reason} (path ${status.path}); run \`node scripts/build-native.mjs\``);
  assert.ok(status.implementation === 'aesni' || status.implementation === 'vaes-avx2', `implementation ${status.implementation}`);
  if (underCi()) assert.ok(aegisNativeAvailable());
});

test('default backend is native exactly when the addon is available', () => {
  const aead = new Aegis256X2Aead(new Uint8Array(32));
  assert.equal(aead.backend, aegisNativeAvailable() ? 'native' : 'ts');
});

for (const c of CLASSES) {
  for (const backend of BACKENDS) {
    test(`${c.name} reports its shape and validates arguments with EINVAL [${backend}]`, backendOptions(backend), () => {
      const aead = c.make(randomBytes(c.keyLen), backend);
      assert.equal(aead.cipher, c.cipher);
      assert.equal(aead.variant, c.variant);
      assert.equal(aead.backend, backend);
      assert.equal(aead.nonceSize, c.nonceSize);
      assert.equal(aead.tagSize, 16);
      for (const bad of [0, 15, c.keyLen - 1, c.keyLen + 1, 64]) {
        assert.throws(() => c.make(new Uint8Array(bad), backend), { code: 'EINVAL' }, `key ${bad}`);
      }
      assert.throws(() => c.make('k'.repeat(c.keyLen) as unknown as Uint8Array, backend), { code: 'EINVAL' });
      for (const bad of [0, 12, 24, c.nonceSize - 1, c.nonceSize + 1]) {
        assert.throws(() => aead.seal(new Uint8Array(bad), new Uint8Array(4), new Uint8Array(0)), { code: 'EINVAL' }, `nonce ${bad}`);
        assert.throws(() => aead.open(new Uint8Array(bad), new Uint8Array(20), new Uint8Array(0)), { code: 'EINVAL' }, `nonce ${bad}`);
      }
      const nonce = new Uint8Array(c.nonceSize);
      assert.throws(() => aead.seal(nonce, [1, 2] as unknown as Uint8Array, new Uint8Array(0)), { code: 'EINVAL' });
      assert.throws(() => aead.seal(nonce, new Uint8Array(1), 'ad' as unknown as Uint8Array), { code: 'EINVAL' });
      assert.throws(() => aead.open(nonce, 'x' as unknown as Uint8Array, new Uint8Array(0)), { code: 'EINVAL' });
      assert.throws(() => c.make(new Uint8Array(c.keyLen), 'noble' as AegisBackend), { code: 'EINVAL' });
    });

    test(`${c.name} round trip and EAUTH on every kind of tampering [${backend}]`, backendOptions(backend), () => {
      const aead = c.make(randomBytes(c.keyLen), backend);
      const nonce = randomBytes(c.nonceSize);
      const aad = randomBytes(24);
      const pt = randomBytes(4096);
      const sealed = aead.seal(nonce, pt, aad);
      assert.equal(sealed.length, pt.length + 16);
      assert.equal(toHex(aead.open(nonce, sealed, aad)), toHex(pt));
      for (const pos of [0, 1, 31, 32, 4095, 4096, 4111]) {
        const t = Uint8Array.from(sealed);
        t[pos] ^= 0x01;
        assert.throws(() => aead.open(nonce, t, aad), { code: 'EAUTH' }, `flip byte ${pos}`);
      }
      const badAad = Uint8Array.from(aad);
      badAad[23] ^= 0x80;
      assert.throws(() => aead.open(nonce, sealed, badAad), { code: 'EAUTH' });
      assert.throws(() => aead.open(nonce, sealed, aad.subarray(0, 23)), { code: 'EAUTH' });
      const badNonce = Uint8Array.from(nonce);
      badNonce[c.nonceSize - 1] ^= 1;
      assert.throws(() => aead.open(badNonce, sealed, aad), { code: 'EAUTH' });
      assert.throws(() => aead.open(nonce, sealed.subarray(0, sealed.length - 1), aad), { code: 'EAUTH' });
      assert.throws(() => aead.open(nonce, sealed.subarray(1), aad), { code: 'EAUTH' });
      assert.throws(() => aead.open(nonce, new Uint8Array(15), aad), { code: 'EAUTH' });
      assert.throws(() => c.make(randomBytes(c.keyLen), backend).open(nonce, sealed, aad), { code: 'EAUTH' });
      // Empty plaintext: just the tag.
      const empty = aead.seal(nonce, new Uint8Array(0), aad);
      assert.equal(empty.length, 16);
      assert.equal(aead.open(nonce, empty, aad).length, 0);
    });

    test(`${c.name} results are independent arrays [${backend}]`, backendOptions(backend), () => {
      const aead = c.make(randomBytes(c.keyLen), backend);
      const nonce = randomBytes(c.nonceSize);
      const a = aead.seal(nonce, new Uint8Array(100), new Uint8Array(0));
      const b = aead.seal(nonce, new Uint8Array(100), new Uint8Array(0));
      assert.deepEqual(a, b);
      a.fill(0xee);
      assert.notDeepEqual(a, b);
      assert.equal(toHex(aead.open(nonce, b, new Uint8Array(0))), '00'.repeat(100));
    });
  }
}

/** Lengths 0..3*4096+17: every length up to 300, the rate and block boundaries, and a stride through the rest. */
function lengths(): number[] {
  const set = new Set<number>();
  for (let n = 0; n <= 300; n++) set.add(n);
  for (const b of [511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193, 12287, 12288, 12289, 12305, 3 * 4096 + 17]) set.add(b);
  for (let n = 301; n <= 3 * 4096 + 17; n += 97) set.add(n);
  return [...set].sort((x, y) => x - y);
}

/** Runs `f` once per native code path (aesni, vaes-avx2 where present), restoring the default afterwards. */
function onEveryNativePath(f: (impl: string) => void): void {
  const b = aegisNativeBinding();
  assert.ok(b, `native addon unavailable: ${aegisNativeStatus().reason}`);
  const def = b.implementation();
  try {
    for (const impl of b.implementations()) {
      assert.ok(b.useImplementation(impl), impl);
      f(impl);
    }
  } finally {
    b.useImplementation(def);
  }
}

const CROSS_VARIANTS: AegisVariant[] = ['aegis256x2', 'aegis128x2', 'aegis256', 'aegis128l', 'aegis256x4', 'aegis128x4'];

for (const variant of CROSS_VARIANTS) {
  const keyLen = variant.startsWith('aegis128') ? 16 : 32;
  test(`${variant}: native and TypeScript agree on random inputs, lengths 0..12305, both tag sizes`, nativeTestOptions(), () => {
    const full = variant === 'aegis256x2' || variant === 'aegis128x2';
    const lens = full ? lengths() : lengths().filter((_, i) => i % 5 === 0);
    onEveryNativePath((impl) => {
      for (const [i, n] of lens.entries()) {
        const key = randomBytes(keyLen);
        const nonce = randomBytes(keyLen);
        const msg = randomBytes(n);
        const ad = randomBytes(i % 97); // AD lengths across the 16/32/64/128-byte rate boundaries
        const tagLen = i % 3 === 0 ? 32 : 16;
        const ts = aegisEncrypt(variant, key, nonce, msg, ad, tagLen, 'ts');
        const nat = aegisEncrypt(variant, key, nonce, msg, ad, tagLen, 'native');
        assert.equal(toHex(nat.ciphertext), toHex(ts.ciphertext), `${impl} ct, length ${n}`);
        assert.equal(toHex(nat.tag), toHex(ts.tag), `${impl} tag, length ${n}`);
        // Each opens the other's output.
        assert.equal(toHex(aegisDecrypt(variant, key, nonce, ts.ciphertext, ts.tag, ad, 'native')), toHex(msg));
        assert.equal(toHex(aegisDecrypt(variant, key, nonce, nat.ciphertext, nat.tag, ad, 'ts')), toHex(msg));
        if (n > 0 && i % 4 === 0) {
          const bad = Uint8Array.from(nat.ciphertext);
          bad[(i * 7919) % n] ^= 1 << (i % 8);
          assert.throws(() => aegisDecrypt(variant, key, nonce, bad, nat.tag, ad, 'native'), { code: 'EAUTH' });
          assert.throws(() => aegisDecrypt(variant, key, nonce, bad, nat.tag, ad, 'ts'), { code: 'EAUTH' });
        }
      }
    });
  });
}

for (const c of CLASSES) {
  test(`${c.name} Aead objects: native and TypeScript seal identically and open each other`, nativeTestOptions(), () => {
    const key = randomBytes(c.keyLen);
    const nat = c.make(key, 'native');
    const ts = c.make(key, 'ts');
    onEveryNativePath(() => {
      for (const n of [0, 1, 17, 100, 4095, 4096, 4097, 3 * 4096 + 17]) {
        const nonce = randomBytes(c.nonceSize);
        const aad = randomBytes(24);
        const pt = randomBytes(n);
        const a = nat.seal(nonce, pt, aad);
        const b = ts.seal(nonce, pt, aad);
        assert.equal(toHex(a), toHex(b), `length ${n}`);
        assert.equal(toHex(ts.open(nonce, a, aad)), toHex(pt));
        assert.equal(toHex(nat.open(nonce, b, aad)), toHex(pt));
        if (n > 0) {
          const t = Uint8Array.from(a);
          t[n >> 1] ^= 4;
          assert.throws(() => nat.open(nonce, t, aad), { code: 'EAUTH' });
          assert.throws(() => ts.open(nonce, t, aad), { code: 'EAUTH' });
        }
      }
    });
  });
}

/** AAD for block k of a file, as in gocryptfs (Documentation/format.md §5.7): BE64(k) || fileID. */
function blockAads(n: number, fileId: Uint8Array): Uint8Array {
  const aads = new Uint8Array(24 * n);
  for (let k = 0; k < n; k++) {
    new DataView(aads.buffer).setBigUint64(24 * k, BigInt(k));
    aads.set(fileId, 24 * k + 8);
  }
  return aads;
}

for (const c of CLASSES) {
  for (const backend of BACKENDS) {
    test(`${c.name} sealBlocks/openBlocks match per-block seal/open [${backend}]`, backendOptions(backend), () => {
      const key = randomBytes(c.keyLen);
      const aead: AegisAead = c.make(key, backend);
      const ref = c.make(key, 'ts');
      const fileId = randomBytes(16);
      for (const size of [0, 1, 4095, 4096, 4097, 32 * 4096, 32 * 4096 - 5, 10 * 4096 + 123]) {
        const n = Math.ceil(size / 4096);
        const nonces = randomBytes(n * c.nonceSize);
        const pt = randomBytes(size);
        const aads = blockAads(n, fileId);
        const sealed = aead.sealBlocks(nonces, pt, aads);
        assert.equal(sealed.length, size + n * (c.nonceSize + 16));
        const parts: string[] = [];
        for (let k = 0; k < n; k++) {
          const nonce = nonces.subarray(k * c.nonceSize, (k + 1) * c.nonceSize);
          const blk = pt.subarray(k * 4096, Math.min(size, (k + 1) * 4096));
          parts.push(toHex(nonce) + toHex(ref.seal(nonce, blk, aads.subarray(24 * k, 24 * k + 24))));
        }
        assert.equal(toHex(sealed), parts.join(''), `size ${size}`);
        assert.equal(toHex(aead.openBlocks(sealed, aads)), toHex(pt), `size ${size}`);
        // Caller-supplied output buffers.
        const outSealed = new Uint8Array(sealed.length).fill(0xaa);
        assert.equal(aead.sealBlocks(nonces, pt, aads, 4096, outSealed), outSealed);
        assert.equal(toHex(outSealed), toHex(sealed));
        const outPt = new Uint8Array(size).fill(0xaa);
        assert.equal(aead.openBlocks(sealed, aads, 4096, outPt), outPt);
        assert.equal(toHex(outPt), toHex(pt));
        assert.throws(() => aead.sealBlocks(nonces, pt, aads, 4096, new Uint8Array(sealed.length + 1)), { code: 'EINVAL' });
        assert.throws(() => aead.openBlocks(sealed, aads, 4096, new Uint8Array(size + 1)), { code: 'EINVAL' });
        if (n >= 2) {
          // Tamper with the last block: EAUTH naming that block, no plaintext returned.
          const bad = Uint8Array.from(sealed);
          bad[bad.length - 1] ^= 1;
          assert.throws(() => aead.openBlocks(bad, aads), (e: Error & { code?: string; blockIndex?: number }) => e.code === 'EAUTH' && e.blockIndex === n - 1);
          const partial = new Uint8Array(size).fill(0xaa);
          assert.throws(() => aead.openBlocks(bad, aads, 4096, partial), { code: 'EAUTH' });
          assert.ok(partial.every((b) => b === 0), 'no plaintext left in the caller buffer after a failure');
        }
        if (n >= 3) {
          // Swapping two full blocks breaks their position binding (AAD = block number).
          const cbs = 4096 + c.nonceSize + 16;
          const swapped = Uint8Array.from(sealed);
          swapped.set(sealed.subarray(cbs, 2 * cbs), 0);
          swapped.set(sealed.subarray(0, cbs), cbs);
          assert.throws(() => aead.openBlocks(swapped, aads), (e: Error & { code?: string; blockIndex?: number }) => e.code === 'EAUTH' && e.blockIndex === 0);
        }
      }
      // Shape errors.
      assert.throws(() => aead.sealBlocks(new Uint8Array(c.nonceSize), new Uint8Array(4097), new Uint8Array(48)), { code: 'EINVAL' });
      assert.throws(() => aead.sealBlocks(new Uint8Array(2 * c.nonceSize), new Uint8Array(4097), new Uint8Array(47)), { code: 'EINVAL' });
      assert.throws(() => aead.sealBlocks(new Uint8Array(0), new Uint8Array(0), new Uint8Array(0), 0), { code: 'EINVAL' });
      assert.throws(() => aead.openBlocks(new Uint8Array(c.nonceSize + 15), new Uint8Array(24)), { code: 'EAUTH' });
      assert.equal(aead.openBlocks(new Uint8Array(0), new Uint8Array(0)).length, 0);
    });
  }
}

test('createAegisAead serves every variant with 16-byte tags', () => {
  for (const v of CROSS_VARIANTS) {
    const keyLen = v.startsWith('aegis128') ? 16 : 32;
    const a = createAegisAead(v, randomBytes(keyLen), 'ts');
    assert.equal(a.variant, v);
    const nonce = randomBytes(a.nonceSize);
    assert.equal(toHex(a.open(nonce, a.seal(nonce, hex('00ff'), new Uint8Array(3)), new Uint8Array(3))), '00ff');
  }
});

/** Runs `code` (an ES module) in a child with TSCRYPTFS_AEGIS set; returns its JSON output. */
function inChild<T>(code: string, mode: string | undefined): T {
  const env = { ...process.env };
  if (mode === undefined) delete env.TSCRYPTFS_AEGIS;
  else env.TSCRYPTFS_AEGIS = mode;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', code], { env, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  return JSON.parse(res.stdout) as T;
}

const PROBE = (dir: string): string => `
  import { Aegis256X2Aead, aegisAvailability, aegisNativeAvailable, aegisNativeStatus } from ${JSON.stringify(join(dir, 'dist/src/crypto/aegis/index.js'))};
  const tryMake = (b) => { try { return new Aegis256X2Aead(new Uint8Array(32), b).backend; } catch (e) { return e.code; } };
  console.log(JSON.stringify({ avail: aegisNativeAvailable(), reason: aegisNativeStatus().reason ?? '', a: aegisAvailability(),
    dflt: tryMake(undefined), native: tryMake('native'), ts: tryMake('ts') }));
`;
interface Probe {
  avail: boolean;
  reason: string;
  a: { usable: boolean; backend?: string; reason?: string };
  dflt: string;
  native: string;
  ts: string;
}

test('TSCRYPTFS_AEGIS=ts: the addon is not loaded, native requests are ENOTSUP, the default is TypeScript', () => {
  const p = inChild<Probe>(PROBE(REPO_ROOT), 'ts');
  assert.equal(p.avail, false);
  assert.match(p.reason, /disabled by TSCRYPTFS_AEGIS=ts/);
  assert.deepEqual([p.a.usable, p.a.backend, p.dflt, p.native, p.ts], [true, 'ts', 'ts', 'ENOTSUP', 'ts']);
});

test('TSCRYPTFS_AEGIS=off or an unknown value: AEGIS is unavailable, every request is ENOTSUP', () => {
  for (const [mode, why] of [
    ['off', /disabled by TSCRYPTFS_AEGIS=off/],
    ['maybe', /TSCRYPTFS_AEGIS=maybe is not one of auto, native, ts, off/],
  ] as const) {
    const p = inChild<Probe>(PROBE(REPO_ROOT), mode);
    assert.equal(p.a.usable, false, mode);
    assert.match(p.a.reason!, why);
    assert.deepEqual([p.avail, p.dflt, p.native, p.ts], [false, 'ENOTSUP', 'ENOTSUP', 'ENOTSUP'], mode);
  }
});

test('TSCRYPTFS_AEGIS=native with the addon: native only (TypeScript requests are ENOTSUP)', nativeTestOptions(), () => {
  const p = inChild<Probe>(PROBE(REPO_ROOT), 'native');
  assert.deepEqual([p.avail, p.a.usable, p.a.backend, p.dflt, p.native, p.ts], [true, true, 'native', 'native', 'native', 'ENOTSUP']);
});

test('without a built addon the compiled modules fall back to TypeScript silently; TSCRYPTFS_AEGIS=native then has no AEGIS', () => {
  // A copy of dist/src with no native/ beside it: what a machine without a compiler has.
  const dir = mkdtempSync(join(tmpdir(), 'tscryptfs-aegis-nonative-'));
  try {
    cpSync(join(REPO_ROOT, 'dist', 'src'), join(dir, 'dist', 'src'), { recursive: true });
    cpSync(join(REPO_ROOT, 'node_modules', '@noble'), join(dir, 'node_modules', '@noble'), { recursive: true });
    const code = `
      import { Aegis256X2Aead, aegisNativeAvailable, aegisNativeStatus } from ${JSON.stringify(join(dir, 'dist/src/crypto/aegis/index.js'))};
      const k = new Uint8Array(32).map((_, i) => i), n = new Uint8Array(32).map((_, i) => 16 + i);
      const a = new Aegis256X2Aead(k);
      console.log(JSON.stringify({ avail: aegisNativeAvailable(), status: aegisNativeStatus(), backend: a.backend,
        tag: Buffer.from(a.seal(n, new Uint8Array(0), new Uint8Array(0))).toString('hex') }));
    `;
    const env = { ...process.env };
    delete env.TSCRYPTFS_AEGIS;
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', env });
    assert.equal(res.status, 0, res.stderr);
    assert.equal(res.stderr, '');
    const out = JSON.parse(res.stdout) as { avail: boolean; status: { reason: string; path: string }; backend: string; tag: string };
    assert.equal(out.avail, false);
    assert.equal(out.status.reason, 'native addon not built');
    assert.equal(out.status.path, join(dir, 'native/build/Release/tscryptfs_aegis.node'));
    assert.equal(out.backend, 'ts');
    assert.equal(out.tag, '62cdbab084c83dacdb945bb446f049c8'); // AEGIS-256X2 Test Vector 1 (format.md §5.6)

    const p = inChild<Probe>(PROBE(dir), 'native');
    assert.equal(p.a.usable, false);
    assert.match(p.a.reason!, /native AEGIS addon is unavailable \(native addon not built\) and TSCRYPTFS_AEGIS=native disables the TypeScript fallback/);
    assert.deepEqual([p.dflt, p.native, p.ts], ['ENOTSUP', 'ENOTSUP', 'ENOTSUP']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('native binding rejects malformed arguments with EINVAL (bounds are checked in C too)', nativeTestOptions(), () => {
  const b = aegisNativeBinding();
  assert.ok(b, `native addon unavailable: ${aegisNativeStatus().reason}`);
  const z = (n: number): Uint8Array => new Uint8Array(n);
  const calls: (() => unknown)[] = [
    () => b.seal(9, z(32), z(32), z(0), z(0), z(16)), // unknown variant
    () => b.seal(4, z(31), z(32), z(0), z(0), z(16)), // key length
    () => b.seal(4, z(32), z(16), z(0), z(0), z(16)), // nonce length
    () => b.seal(4, z(32), z(32), z(10), z(0), z(17)), // tag length 7
    () => b.seal(4, z(32), z(32), z(10), z(0), z(5)), // out shorter than msg
    () => b.seal(4, z(32), z(32), new Uint16Array(10) as unknown as Uint8Array, z(0), z(26)), // not bytes
    () => b.open(4, z(32), z(32), z(10), z(0), z(11)), // sealed shorter than out + 16
    () => b.sealBlocks(4, z(32), z(32), z(10), 4096, z(24), 2 ** 52, z(58)), // aadLen overflow
    () => b.sealBlocks(4, z(32), z(32), z(10), 0, z(24), 24, z(58)), // block size 0
    () => b.sealBlocks(4, z(32), z(32), z(10), 4096.5, z(24), 24, z(58)), // fractional block size
    () => b.openBlocks(4, z(32), z(40), 4144, z(24), 24, z(0)), // last block shorter than nonce + tag
    () => b.openBlocks(4, z(32), z(60), 4144, z(24), 2 ** 60, z(12)), // aadLen overflow
    () => b.openBlocks(4, z(32), z(60), 48, z(24), 24, z(12)), // cipher block size without payload
    () => (b.seal as unknown as (v: number) => void)(4), // missing arguments
  ];
  for (const [i, f] of calls.entries()) assert.throws(f, { code: 'EINVAL' }, `call ${i}`);
});
