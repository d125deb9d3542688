/**
 * Linux gives some errno numbers two names (95: EOPNOTSUPP and ENOTSUP; 11:
 * EAGAIN and EWOULDBLOCK; 35: EDEADLK and EDEADLOCK) and each source picks
 * one: node:fs says ENOTSUP, the kernel headers and Python EOPNOTSUPP. Every
 * errno comparison in src/ goes through hasCode/sameCode (by number); this
 * checks each alias pair there, in the FUSE answer, in the preallocation
 * fallback, and that no comparison of a code string is left elsewhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errnoName, errnoOf, fsError, hasCode, sameCode } from '../../src/util/errors.js';
import { toErrno } from '../../src/fuse/errno.js';
import { Preallocator } from '../../src/vault/prealloc.js';
import type { BackingStore } from '../../src/vault/backing/store.js';
import { BTRFS_SUPER_MAGIC } from '../../src/vault/backing/store.js';
import { REPO_ROOT } from '../helpers/paths.js';

const ALIASES: [string, string, number][] = [
  ['EOPNOTSUPP', 'ENOTSUP', 95],
  ['EAGAIN', 'EWOULDBLOCK', 11],
  ['EDEADLK', 'EDEADLOCK', 35],
];

const silent = { warn: (): void => undefined };

for (const [a, b, n] of ALIASES) {
  test(`${a} and ${b} are one errno (${n}) everywhere`, () => {
    assert.equal(errnoOf(a), n);
    assert.equal(errnoOf(b), n);
    assert.ok(sameCode(a, b) && sameCode(b, a));
    assert.ok(hasCode(fsError(a), b), `hasCode(${a} error, ${b})`);
    assert.ok(hasCode(fsError(b), a), `hasCode(${b} error, ${a})`);
    assert.ok(hasCode({ code: b }, 'EINVAL', a), 'among several codes');
    assert.equal(fsError(b).errno, n);
    assert.equal(toErrno(fsError(a), 'op', '/p', silent), -n);
    assert.equal(toErrno({ code: b }, 'op', '/p', silent), -n);
    assert.ok([a, b].includes(errnoName(n)), `errnoName(${n}) = ${errnoName(n)}`);
    assert.equal(errnoName(-n), errnoName(n));
  });
}

test('codes that are not aliases stay apart; non-POSIX codes compare as strings', () => {
  assert.ok(!sameCode('ENOENT', 'ENOTDIR'));
  assert.ok(!hasCode(fsError('EOPNOTSUPP'), 'ENOSYS'));
  assert.ok(hasCode({ code: 'ECONFIGINVALID' }, 'ECONFIGINVALID'));
  assert.ok(!hasCode({ code: 'ECONFIGINVALID' }, 'ECONFIGPARSE'));
  assert.ok(!hasCode({ code: 95 }, 'EOPNOTSUPP'), 'a numeric code is not a name');
  assert.equal(errnoName(100_000), 'EIO');
});

test('errnoName names errors as node:fs does', () => {
  let code = '';
  try {
    readFileSync(join(REPO_ROOT, 'no such file here'));
  } catch (err) {
    code = (err as NodeJS.ErrnoException).code!;
  }
  assert.equal(errnoName(2), code);
});

const store: BackingStore = { magic: 0x65735546, type: 'fuse.sshfs', source: 'root@127.0.0.1:/vault', mountPoint: '/mnt/remote' };

for (const name of ['ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']) {
  test(`preallocation: fallocate failing with ${name} turns it off with one warning naming the store`, () => {
    const warnings: string[] = [];
    let calls = 0;
    const p = new Preallocator(true, { warn: (m) => warnings.push(m) }, store, () => {
      calls++;
      return name;
    });
    assert.ok(p.active);
    p.reserve(3, 0, 4096);
    p.reserve(3, 4096, 4096);
    assert.equal(calls, 1, 'no further attempts');
    assert.ok(!p.active);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /\(fuse\.sshfs root@127\.0\.0\.1:\/vault on \/mnt\/remote\) does not support fallocate\(2\)/);
  });
}

test('preallocation: ENOSPC (and any other errno) reaches the writer', () => {
  const p = new Preallocator(true, silent, store, () => 'ENOSPC');
  assert.throws(() => p.reserve(3, 0, 4096), { code: 'ENOSPC' });
  assert.ok(p.active);
});

test('preallocation: off on btrfs from the start, said once', () => {
  const lines: string[] = [];
  const btrfs: BackingStore = { magic: BTRFS_SUPER_MAGIC, type: 'btrfs', source: '/dev/loop7', mountPoint: '/srv' };
  const p = new Preallocator(true, { warn: (m) => lines.push(`warn ${m}`), info: (m) => lines.push(`info ${m}`) }, btrfs, () => assert.fail('no fallocate on btrfs'));
  p.reserve(3, 0, 4096);
  assert.ok(!p.active);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^info Btrfs detected \(btrfs \/dev\/loop7 on \/srv\), forcing -noprealloc/);
  assert.ok(!new Preallocator(false, silent, btrfs, () => 'ok').active);
});

/** Every .ts file below dir. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith('.ts') ? [p] : [];
  });
}

test('src/ compares errno codes only through hasCode/sameCode', () => {
  const bad: string[] = [];
  const patterns = [/\bcode\s*[!=]==?\s*'E[A-Z0-9]+'/, /'E[A-Z0-9]+'\s*[!=]==?\s*\w*code\b/i, /\[('E[A-Z0-9]+',\s*)+'E[A-Z0-9]+'\]\.includes\(/, /case 'E[A-Z0-9]+':/];
  for (const file of tsFiles(join(REPO_ROOT, 'src'))) {
    if (file.endsWith(join('util', 'errors.ts'))) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (patterns.some((re) => re.test(line))) bad.push(`${file.slice(REPO_ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(bad, [], 'compare codes with hasCode()/sameCode(), which treat aliases as one errno');
});
