/**
 * Facts the C code and TypeScript both use have one home on the C side
 * (native/common/format.h, native/fuse-native/stat_words.h); this checks that
 * TypeScript states the same ones: the content format's constants, and the
 * 22-word stat layout, compared word for word between the native fstatat
 * and putStatWords over a bigint lstat of the same entries.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BLOCK_SIZE, HEADER_LEN } from '../../src/content/layout.js';
import { FILE_ID_LEN, HEADER_VERSION } from '../../src/content/header.js';
import { ContentCipher } from '../../src/content/content-cipher.js';
import { AES_GCM_KEY_SIZE, createAesGcm } from '../../src/crypto/index.js';
import { AEGIS_VARIANTS } from '../../src/crypto/aegis/variants.js';
import { STAT_WORDS, putStatWords } from '../../src/util/stat-words.js';
import { AT_FDCWD } from '../../src/util/sys-at.js';
import { loadNativeAddon } from '../../src/util/native-addon.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { needs } from '../helpers/requirements.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

/** The #define NAME VALUE lines of a header under native/, with simple arithmetic of earlier names evaluated. */
function defines(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of readFileSync(join(REPO_ROOT, 'native', file), 'utf8').matchAll(/^#define (\w+) (.+?)\s*(?:\/\*.*)?$/gm)) {
    const expr = m[2]!.replace(/\b[A-Z_][A-Z0-9_]*\b/g, (name) => {
      const v = out.get(name);
      if (v === undefined) throw new Error(`${file}: ${m[1]} uses unknown ${name}`);
      return String(v);
    });
    if (!/^[\d\s+*()]+$/.test(expr)) continue; // not a number (include guards and the like)
    out.set(m[1]!, Function(`return (${expr});`)() as number);
  }
  return out;
}

test('native/common/format.h and the TypeScript content layer state the same format constants', () => {
  const h = defines('common/format.h');
  assert.equal(h.get('TSCRYPTFS_BLOCK_SIZE'), BLOCK_SIZE);
  assert.equal(h.get('TSCRYPTFS_HEADER_LEN'), HEADER_LEN);
  assert.equal(h.get('TSCRYPTFS_HEADER_VERSION'), HEADER_VERSION);
  assert.equal(h.get('TSCRYPTFS_FILE_ID_LEN'), FILE_ID_LEN);
  // The block AAD as the TypeScript side builds it: BE64(block number) || file ID.
  const cipher = new ContentCipher(createAesGcm(new Uint8Array(AES_GCM_KEY_SIZE)));
  assert.equal(h.get('TSCRYPTFS_BLOCK_AAD_LEN'), cipher.blockAad(1, new Uint8Array(FILE_ID_LEN)).length);
});

test('native/crypto/aegis_export.h numbers AEGIS-256X2 as src/crypto/aegis/variants.ts does', () => {
  assert.equal(defines('crypto/aegis_export.h').get('TSCRYPTFS_AEGIS_256X2'), AEGIS_VARIANTS.aegis256x2.nativeId);
});

test('native/fuse-native/stat_words.h and src/util/stat-words.ts agree on the word count', () => {
  assert.equal(defines('fuse-native/stat_words.h').get('STAT_WORDS'), STAT_WORDS);
});

interface StatBinding {
  fstatat(dirfd: number, name: string, out: Uint32Array): number;
}

let tmp = '';
before(() => {
  tmp = makeTempDir('tscryptfs-stat-words-');
});
after(() => removeTempDir(tmp));

test('the native stat words equal putStatWords of a bigint lstat, field by field', needs('native'), () => {
  const b = loadNativeAddon<StatBinding>('tscryptfs_sys.node')!;
  const entries: string[] = [];
  // A sparse file over 4 GiB (size and blocks need both words), a directory, a symlink, a file with times before 1970 and nanoseconds.
  const big = join(tmp, 'big');
  writeFileSync(big, 'x');
  truncateSync(big, 5 * 2 ** 32 + 12345);
  entries.push(big);
  mkdirSync(join(tmp, 'dir'));
  entries.push(join(tmp, 'dir'));
  symlinkSync('target-of-the-link', join(tmp, 'link'));
  entries.push(join(tmp, 'link'));
  const old = join(tmp, 'old');
  writeFileSync(old, 'old');
  utimesSync(old, -86_400.25, 1_700_000_000.123456);
  entries.push(old);
  const names = ['mode', 'uid', 'gid', 'size lo', 'size hi', 'dev', 'nlink', 'ino lo', 'ino hi', 'rdev', 'blksize', 'blocks lo', 'blocks hi', 'atime s lo', 'atime s hi', 'atime ns', 'mtime s lo', 'mtime s hi', 'mtime ns', 'ctime s lo', 'ctime s hi', 'ctime ns'];
  assert.equal(names.length, STAT_WORDS);
  for (const path of entries) {
    const native = new Uint32Array(STAT_WORDS);
    assert.equal(b.fstatat(AT_FDCWD, path, native), 0, `fstatat ${path}`);
    const ts = new Uint32Array(STAT_WORDS);
    putStatWords(ts, 0, lstatSync(path, { bigint: true }));
    const byName = (w: Uint32Array) => Object.fromEntries(names.map((n, i) => [n, w[i]]));
    assert.deepEqual(byName(native), byName(ts), path);
  }
  const st = lstatSync(big, { bigint: true });
  assert.ok(st.size > 2n ** 32n, 'the sparse file needs the high size word');
});
