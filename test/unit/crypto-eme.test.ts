/** EME name encryption (Documentation/format.md §7.4, github.com/rfjakob/eme), on both backends. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Eme, dblLittleEndian, randomBytes, type BackendName } from '../../src/crypto/index.js';
import { EXAMPLES_DIR } from '../helpers/paths.js';

const hex = (s: string): Uint8Array => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const BACKENDS: BackendName[] = ['node', 'noble'];
const ZERO_KEY = new Uint8Array(32);
const ZERO_TWEAK = new Uint8Array(16);

test('EME little-endian doubling (rfjakob/eme multByTwo)', () => {
  // Bit 7 of byte j moves into bit 0 of byte j+1; the top bit of byte 15 folds back as 0x87 into byte 0.
  assert.equal(toHex(dblLittleEndian(hex('80000000000000000000000000000000'))), '00010000000000000000000000000000');
  assert.equal(toHex(dblLittleEndian(hex('00000000000000000000000000000080'))), '87000000000000000000000000000000');
  assert.equal(toHex(dblLittleEndian(hex('01000000000000000000000000000080'))), '85000000000000000000000000000000');
});

for (const backend of BACKENDS) {
  test(`EME check values, zero key and tweak (format.md §7.4, rfjakob/eme TestEnc16) [${backend}]`, () => {
    const eme = new Eme(ZERO_KEY, backend);
    assert.equal(toHex(eme.encrypt(ZERO_TWEAK, new Uint8Array(16))), 'f1b9ce8ca15a4ba9fb476905434b9fd3');
    assert.equal(
      toHex(eme.encrypt(ZERO_TWEAK, new Uint8Array(32))),
      'c2bc29440e7205411fcf36c608f5bfa2856b564a455e725d9bae55b16c04bb05',
    );
  });

  // rfjakob/eme eme32_test.go (EME-32 vectors from IEEE P1619.2, 512 zero bytes)
  // and eme_test.go TestEnc2048; compared by SHA-256 of the expected bytes.
  test(`EME upstream 512- and 2048-byte vectors [${backend}]`, () => {
    const eme = new Eme(ZERO_KEY, backend);
    const enc512 = eme.encrypt(ZERO_TWEAK, new Uint8Array(512));
    assert.equal(toHex(enc512.subarray(0, 16)), '9f2e6c3daecae79e8839b0588ff378cd');
    assert.equal(sha256(enc512), '7db861e039925bcce41a7dd1d8c3af62a4c114a0d906904929f6f2aadf11898f');
    const dec512 = eme.decrypt(ZERO_TWEAK, new Uint8Array(512));
    assert.equal(toHex(dec512.subarray(0, 16)), '080905dee8ebcc89f68bd1af635db3f5');
    assert.equal(sha256(dec512), '2cf26c1331659aa00d5b8ea6b1d1111ee9d07eed733d858c6edbb512d1a5d4be');
    const enc2048 = eme.encrypt(ZERO_TWEAK, new Uint8Array(2048));
    assert.equal(toHex(enc2048.subarray(0, 16)), '630500884158a8d41216aaa6351e92ea');
    assert.equal(sha256(enc2048), '44ea4ab31f9e4c83420f1bfe7782ded2e2421c92ac416a830cf46f3ea4cb5ff1');
  });

  test(`EME of one_byte.txt with the worked example's key and root IV (format.md §7.3, §14.3) [${backend}]`, () => {
    const eme = new Eme(hex('2f6cc8103fc24afd6124daceb8d9f3f548b4c8b4e8dc1206f3a50dd28f218e93'), backend);
    const iv = hex('eff65cad160953cda98c6e4c94332873');
    const padded = hex('6f6e655f627974652e74787404040404');
    const ct = eme.encrypt(iv, padded);
    assert.equal(toHex(ct), 'f2b158a2e51dde092c97fc2052d42111');
    assert.equal(Buffer.from(ct).toString('base64url'), '8rFYouUd3gksl_wgUtQhEQ');
    assert.equal(toHex(eme.decrypt(iv, ct)), toHex(padded));
    // dir1 -> mRIRrXZ3fOzZSslFbbQjJg (padded input 6469723 1 0c x12)
    const dir1 = eme.encrypt(iv, hex('646972310c0c0c0c0c0c0c0c0c0c0c0c'));
    assert.equal(Buffer.from(dir1).toString('base64url'), 'mRIRrXZ3fOzZSslFbbQjJg');
  });

  test(`EME decrypts the v0.9 example filesystem's names (EME key = master key, no HKDF) [${backend}]`, () => {
    const dir = join(EXAMPLES_DIR, 'v0.9');
    const eme = new Eme(hex('1cafe3f4bc3164662214c47cecd89bf34e078fe4f5faeea78b7cab02884f5e1c'), backend);
    const iv = readFileSync(join(dir, 'gocryptfs.diriv'));
    const names = readdirSync(dir)
      .filter((n) => !n.startsWith('gocryptfs.'))
      .map((n) => {
        const padded = eme.decrypt(iv, Buffer.from(n, 'base64url'));
        const pad = padded[padded.length - 1];
        return Buffer.from(padded.subarray(0, padded.length - pad)).toString();
      });
    assert.deepEqual(names.sort(), ['abs', 'rel', 'status.txt']);
  });

  test(`EME decrypt(encrypt(x)) = x for every length 16..2048 [${backend}]`, () => {
    const eme = new Eme(randomBytes(32), backend);
    const tweak = randomBytes(16);
    for (let len = 16; len <= 2048; len += 16) {
      const p = randomBytes(len);
      const c = eme.encrypt(tweak, p);
      assert.equal(c.length, len);
      assert.notEqual(toHex(c), toHex(p));
      assert.equal(toHex(eme.decrypt(tweak, c)), toHex(p), `length ${len}`);
    }
  });

  test(`EME rejects bad sizes with EINVAL [${backend}]`, () => {
    assert.throws(() => new Eme(new Uint8Array(16), backend), { code: 'EINVAL' });
    const eme = new Eme(ZERO_KEY, backend);
    for (const len of [0, 1, 15, 17, 2047, 2064, 4096]) {
      assert.throws(() => eme.encrypt(ZERO_TWEAK, new Uint8Array(len)), { code: 'EINVAL' }, `length ${len}`);
      assert.throws(() => eme.decrypt(ZERO_TWEAK, new Uint8Array(len)), { code: 'EINVAL' }, `length ${len}`);
    }
    assert.throws(() => eme.encrypt(new Uint8Array(15), new Uint8Array(16)), { code: 'EINVAL' });
  });
}

test('EME: both backends give identical bytes, each inverts the other', () => {
  for (let i = 0; i < 20; i++) {
    const key = randomBytes(32);
    const tweak = randomBytes(16);
    const p = randomBytes(16 * (1 + Math.floor(Math.random() * 128)));
    const viaNode = new Eme(key, 'node');
    const viaNoble = new Eme(key, 'noble');
    const c = viaNode.encrypt(tweak, p);
    assert.equal(toHex(viaNoble.encrypt(tweak, p)), toHex(c));
    assert.equal(toHex(viaNoble.decrypt(tweak, c)), toHex(p));
    assert.equal(toHex(viaNode.decrypt(tweak, viaNoble.encrypt(tweak, p))), toHex(p));
  }
});

test('EME: the tweak and every input block influence every output block', () => {
  const eme = new Eme(randomBytes(32));
  const tweak = randomBytes(16);
  const p = randomBytes(64);
  const c = eme.encrypt(tweak, p);
  const t2 = Uint8Array.from(tweak);
  t2[0] ^= 1;
  const p2 = Uint8Array.from(p);
  p2[63] ^= 1;
  for (const other of [eme.encrypt(t2, p), eme.encrypt(tweak, p2)]) {
    for (let b = 0; b < 4; b++) assert.notEqual(toHex(other.subarray(b * 16, b * 16 + 16)), toHex(c.subarray(b * 16, b * 16 + 16)));
  }
});
