/**
 * Every entry of the CFRG draft's AEGIS test vectors
 * (test/fixtures/aegis-vectors, draft-irtf-cfrg-aegis-aead) on the
 * TypeScript and the native implementation: encryption with 128- and
 * 256-bit tags, decryption, the entries that must fail verification, the
 * AESRound vector, and (TypeScript engine) the Update and initial-state entries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aegisDecrypt, aegisEncrypt, aesRound, AEGIS_VARIANTS, type AegisVariant } from '../../src/crypto/aegis/index.js';
import { AegisEngine } from '../../src/crypto/aegis/aegis-ts.js';
import { aegisNativeBinding } from '../../src/crypto/aegis/native.js';
import { backendOptions, hex, readVectors, toHex } from './crypto-aegis-support.js';

/** 'ts', then one run per native code path this CPU has ('native:aesni', 'native:vaes-avx2'), or plain 'native' if the addon is missing. */
const RUNS: { label: string; backend: 'ts' | 'native'; impl?: string }[] = [
  { label: 'ts', backend: 'ts' },
  ...(aegisNativeBinding()?.implementations() ?? [undefined]).map((impl) => ({
    label: impl === undefined ? 'native' : `native:${impl}`,
    backend: 'native' as const,
    impl,
  })),
];

function withImpl(impl: string | undefined, f: () => void): void {
  const b = aegisNativeBinding();
  if (impl === undefined || b === null) return f();
  const def = b.implementation();
  assert.ok(b.useImplementation(impl), impl);
  try {
    f();
  } finally {
    b.useImplementation(def);
  }
}

const FILES: Record<AegisVariant, string> = {
  aegis128l: 'aegis-128l-test-vectors.json',
  aegis128x2: 'aegis-128x2-test-vectors.json',
  aegis128x4: 'aegis-128x4-test-vectors.json',
  aegis256: 'aegis-256-test-vectors.json',
  aegis256x2: 'aegis-256x2-test-vectors.json',
  aegis256x4: 'aegis-256x4-test-vectors.json',
};

test('AESRound test vector (table-based TS round)', () => {
  const [v] = readVectors('aesround-test-vector.json');
  assert.equal(toHex(aesRound(hex(v.in!), hex(v.rk!))), v.out);
});

for (const variant of Object.keys(FILES) as AegisVariant[]) {
  const info = AEGIS_VARIANTS[variant];
  const entries = readVectors(FILES[variant]);
  const aeadEntries = entries.filter((e) => e.name.startsWith('Test Vector'));

  test(`${info.title}: the fixture file has its AEAD vectors`, () => {
    assert.ok(aeadEntries.length >= 2, `${FILES[variant]} has ${aeadEntries.length} AEAD vectors`);
  });

  for (const { label, backend, impl } of RUNS) {
    for (const e of aeadEntries) {
      test(`${info.title} ${e.name} [${label}]`, backendOptions(backend), () => withImpl(impl, () => {
        const key = hex(e.key!);
        const nonce = hex(e.nonce!);
        const ad = hex(e.ad!);
        const ct = hex(e.ct!);
        if (e.error !== undefined) {
          for (const tag of [e.tag128!, e.tag256!]) {
            assert.throws(() => aegisDecrypt(variant, key, nonce, ct, hex(tag), ad, backend), { code: 'EAUTH' }, `${tag.length * 4}-bit tag`);
          }
          return;
        }
        const msg = hex(e.msg!);
        for (const [tagLen, tag] of [
          [16, e.tag128!],
          [32, e.tag256!],
        ] as const) {
          const sealed = aegisEncrypt(variant, key, nonce, msg, ad, tagLen, backend);
          assert.equal(toHex(sealed.ciphertext), e.ct, `ciphertext (${tagLen * 8}-bit tag run)`);
          assert.equal(toHex(sealed.tag), tag, `${tagLen * 8}-bit tag`);
          assert.equal(toHex(aegisDecrypt(variant, key, nonce, ct, hex(tag), ad, backend)), e.msg, `decrypt, ${tagLen * 8}-bit tag`);
        }
      }));
    }
  }

  const initial = entries.find((e) => e.name === 'Initial State');
  const after = entries.find((e) => e.name === 'Initial State (after initialization)');
  if (initial !== undefined && after !== undefined) {
    test(`${info.title} initial state: contexts and V[j,i] after Init [ts engine]`, () => {
      for (let i = 0; i < info.lanes; i++) {
        const ctx = new Uint8Array(16);
        ctx[0] = i;
        ctx[1] = info.lanes - 1;
        assert.equal(initial[`ctx[${i}]`], toHex(ctx), `ctx[${i}]`);
      }
      const state = new AegisEngine(info.family, info.lanes).debugInit(hex(initial.key!), hex(initial.nonce!));
      const blocks = info.family === '128' ? 8 : 6;
      for (let j = 0; j < blocks; j++) {
        for (let i = 0; i < info.lanes; i++) {
          const at = (j * info.lanes + i) * 16;
          assert.equal(toHex(state.subarray(at, at + 16)), after[`V[${j},${i}]`], `V[${j},${i}]`);
        }
      }
    });
  }

  const upd = entries.find((e) => e.name === 'Update Test Vector');
  if (upd !== undefined) {
    test(`${info.title} Update test vector [ts engine]`, () => {
      const blocks = info.family === '128' ? 8 : 6;
      const state = hex(Array.from({ length: blocks }, (_, j) => upd[`S${j}`]!).join(''));
      const msg = hex(info.family === '128' ? upd.M0! + upd.M1! : upd.M!);
      const next = new AegisEngine(info.family, 1).debugUpdate(state, msg);
      for (let j = 0; j < blocks; j++) assert.equal(toHex(next.subarray(16 * j, 16 * j + 16)), upd[`S${j}_2`], `S${j}'`);
    });
  }
}
