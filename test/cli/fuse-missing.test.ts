/**
 * What a user sees when mounting cannot work because libfuse2 or /dev/fuse
 * is missing: one line on stderr saying which, exit code 19 (as gocryptfs's
 * failed mount), and -version telling the same before any mount is tried.
 * The machine keeps both; test/helpers/no-fuse.ts hides them from one run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { BIN, cleanup, initVault, lines, tempDir } from './helpers.js';
import { isMounted } from '../helpers/mount.js';
import { runWithoutFuse } from '../helpers/no-fuse.js';
import { needs } from '../helpers/requirements.js';

let tmp: string;
let cipher: string;
let mnt: string;
before(async () => {
  tmp = await tempDir('tscryptfs-nofuse-');
  cipher = await initVault(tmp);
  mnt = join(tmp, 'mnt');
  await fsp.mkdir(mnt);
});
after(async () => {
  await cleanup(tmp);
});

const T = { timeout: 60_000, ...needs('mount') };

test('libfuse2 missing: one line naming libfuse.so.2 and libfuse2, exit 19; -version says "not loadable"', T, async () => {
  for (const fg of [[], ['-fg']]) {
    const r = await runWithoutFuse('libfuse2', process.execPath, [BIN, ...fg, '-q', '-extpass', 'echo pw', cipher, mnt]);
    assert.equal(r.code, 19, r.stderr);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, /^tscryptfs: fuse: fuse-native cannot be loaded: \S*libfuse\.so\.2: .+ \(is libfuse2 installed\?\)\n$/);
    assert.equal(r.stdout, '');
    assert.equal(isMounted(mnt), false);
  }
  const v = await runWithoutFuse('libfuse2', process.execPath, [BIN, '-version']);
  assert.equal(v.code, 0);
  assert.match(v.stdout, /; fuse-native 2\.2\.6-tscryptfs not loadable; libfuse none; /);
});

test('/dev/fuse missing: one line saying so, exit 19', T, async () => {
  for (const fg of [[], ['-fg']]) {
    const r = await runWithoutFuse('/dev/fuse', process.execPath, [BIN, ...fg, '-q', '-extpass', 'echo pw', cipher, mnt]);
    assert.equal(r.code, 19, r.stderr);
    assert.equal(r.stderr, 'tscryptfs: fuse: /dev/fuse does not exist: this kernel or container has no FUSE (modprobe fuse; in a container, pass the device in, e.g. --device /dev/fuse)\n');
    assert.equal(r.stdout, '');
    assert.equal(isMounted(mnt), false);
  }
});
