/**
 * Known-answer decryption of data written by the real gocryptfs: file
 * blocks (AAD = BE64(blockNo) || fileID), symlink targets and xattr values
 * (AAD = BE64(0)) of the aesgcm, aessiv, xchacha and hkdf-false fixtures, plus two
 * upstream example filesystems, through createAead on both backends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAead, hkdfSha256, HKDF_INFO, type Aead, type BackendName, type CipherName } from '../../src/crypto/index.js';
import { EXAMPLES_DIR, VECTORS_DIR } from '../helpers/paths.js';

const BACKENDS: BackendName[] = ['node', 'noble'];
const HEADER_LEN = 18;
const PLAIN_BS = 4096;

interface PathEntry { plain: string; cipher: string; type: string }
interface ManifestEntry { path: string; type: string; target?: string; xattrs?: Record<string, { hex: string; text?: string }> }

/** `info` null: a filesystem without HKDF, whose AES-GCM content key is the master key itself. */
const FIXTURES: { dir: string; cipher: CipherName; info: string | null; keyLen: number }[] = [
  { dir: 'aesgcm', cipher: 'aes-gcm', info: HKDF_INFO.gcm, keyLen: 32 },
  { dir: 'aessiv', cipher: 'aes-siv', info: HKDF_INFO.siv, keyLen: 64 },
  { dir: 'xchacha', cipher: 'xchacha', info: HKDF_INFO.xchacha, keyLen: 32 },
  { dir: 'hkdf-false', cipher: 'aes-gcm', info: null, keyLen: 32 },
];

const readJson = <T>(...parts: string[]): T => JSON.parse(readFileSync(join(...parts), 'utf8')) as T;

/** Decrypts a whole gocryptfs content file (Documentation/format.md §5.7, §6.1-§6.2). */
function decryptFile(aead: Aead, file: Uint8Array): Buffer {
  if (file.length === 0) return Buffer.alloc(0);
  assert.equal(file[0] * 256 + file[1], 2, 'header version');
  const fileId = file.subarray(2, HEADER_LEN);
  const cipherBs = aead.nonceSize + PLAIN_BS + aead.tagSize;
  const parts: Uint8Array[] = [];
  for (let blockNo = 0, off = HEADER_LEN; off < file.length; blockNo++, off += cipherBs) {
    const block = file.subarray(off, Math.min(off + cipherBs, file.length));
    const aad = Buffer.alloc(24);
    aad.writeBigUInt64BE(BigInt(blockNo), 0);
    aad.set(fileId, 8);
    parts.push(aead.open(block.subarray(0, aead.nonceSize), block.subarray(aead.nonceSize), aad));
  }
  return Buffer.concat(parts);
}

/** Opens `nonce || sealed` with AAD = BE64(0), as for symlinks and xattr values. */
function openBlock0(aead: Aead, data: Uint8Array): Buffer {
  return Buffer.from(aead.open(data.subarray(0, aead.nonceSize), data.subarray(aead.nonceSize), new Uint8Array(8)));
}

const EXPECTED_FILES: Record<string, Buffer> = {
  'one_byte.txt': Buffer.from('x'),
  'block_4096.bin': Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256)),
  'file_5000.bin': Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 251)),
  'dir1/dir2/nested.txt': Buffer.from('nested\n'),
  'empty.txt': Buffer.alloc(0),
};

for (const fx of FIXTURES) {
  const base = join(VECTORS_DIR, fx.dir);
  const masterKey = Buffer.from(readFileSync(join(base, 'masterkey.txt'), 'utf8').trim(), 'hex');
  const key = fx.info === null ? masterKey : hkdfSha256(masterKey, fx.info, fx.keyLen);
  const paths = readJson<PathEntry[]>(base, 'paths.json');
  const cipherPath = (plain: string): string => {
    const e = paths.find((p) => p.plain === plain);
    assert.ok(e, `paths.json has ${plain}`);
    return e.cipher;
  };

  for (const backend of BACKENDS) {
    test(`${fx.dir}: gocryptfs-written files decrypt [${backend}]`, async () => {
      const aead = await createAead(fx.cipher, key, { backend });
      for (const [plain, expected] of Object.entries(EXPECTED_FILES)) {
        const got = decryptFile(aead, readFileSync(join(base, 'cipher', cipherPath(plain))));
        assert.equal(got.toString('hex'), expected.toString('hex'), plain);
      }
    });

    test(`${fx.dir}: symlink targets and xattr values (AAD = BE64(0)) decrypt [${backend}]`, async () => {
      const aead = await createAead(fx.cipher, key, { backend });
      const plainManifest = readJson<ManifestEntry[]>(base, 'plain_manifest.json');
      const cipherManifest = readJson<ManifestEntry[]>(base, 'cipher_manifest.json');
      let symlinks = 0;
      for (const link of plainManifest.filter((e) => e.type === 'symlink')) {
        const c = cipherManifest.find((e) => e.path === cipherPath(link.path));
        assert.ok(c?.target, link.path);
        assert.equal(openBlock0(aead, Buffer.from(c.target, 'base64url')).toString(), link.target, link.path);
        symlinks++;
      }
      assert.equal(symlinks, 3);
      const values = cipherManifest
        .flatMap((e) => Object.values(e.xattrs ?? {}))
        .filter((v) => v.hex.length > 0) // gocryptfs stores an empty value unencrypted (empty)
        .map((v) => openBlock0(aead, Buffer.from(v.hex, 'hex')).toString())
        .sort();
      assert.deepEqual(values, ['hello xattr', 'on a directory']);
    });
  }
}

/** Regular files of an upstream example directory that hold "It works!\n" (status.txt and the long-named copy). */
function exampleFiles(dir: string, size: number): string[] {
  return readdirSync(dir)
    .filter((n) => !n.startsWith('gocryptfs.') || (n.startsWith('gocryptfs.longname.') && !n.endsWith('.name')))
    .filter((n) => lstatSync(join(dir, n)).isFile() && lstatSync(join(dir, n)).size === size)
    .map((n) => join(dir, n));
}

for (const backend of BACKENDS) {
  test(`v1.1-aessiv example (pre-HKDF: SIV key = SHA-512(master key)) decrypts [${backend}]`, async () => {
    const mk = Buffer.from('eaf371c3f9a553368819f22b7bccd7c2a738cf617261c65814c28a039428992b', 'hex');
    const aead = await createAead('aes-siv', createHash('sha512').update(mk).digest(), { backend });
    const files = exampleFiles(join(EXAMPLES_DIR, 'v1.1-aessiv'), HEADER_LEN + 32 + 10);
    assert.equal(files.length, 2);
    for (const f of files) assert.equal(decryptFile(aead, readFileSync(f)).toString(), 'It works!\n');
  });

  test(`v2.2-xchacha example decrypts [${backend}]`, async () => {
    const mk = Buffer.from('44670e7e32475bfcbdfb8a8cbe17a7670679cac0be705d8caf41c41128c40f26', 'hex');
    const aead = await createAead('xchacha', hkdfSha256(mk, HKDF_INFO.xchacha, 32), { backend });
    const files = exampleFiles(join(EXAMPLES_DIR, 'v2.2-xchacha'), HEADER_LEN + 40 + 10);
    assert.equal(files.length, 2);
    for (const f of files) assert.equal(decryptFile(aead, readFileSync(f)).toString(), 'It works!\n');
  });
}
