/**
 * Concurrency on a real mount of MOUNT_IMPL: several processes writing,
 * reading and renaming in one mount at once; two processes (and two
 * handles) interleaving writes into the same blocks of one file; two
 * mounts of one cipher directory with -sharedstorage seeing each other's
 * changes. Content is a function of the file's name, so any reader can
 * check what it sees.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { mountImpl, unmountAndReap } from '../helpers/mount.js';
import { assertBytes, MOUNT_IMPL, useCipherdir } from '../helpers/mount-suite.js';
import { BYTES_SOURCE, stormBytes } from '../helpers/write-storm.js';
import { needs } from '../helpers/requirements.js';

const fx = useCipherdir('concurrency', MOUNT_IMPL);
const T = { timeout: 120_000, ...needs('mount') };
const mntA = (): string => join(fx.tmp, 'mntA');
const mntB = (): string => join(fx.tmp, 'mntB');

/** Runs `source` as a node ES module with `args`; resolves with its exit code and output. */
function runNode(source: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Shared by the worker sources: content of a file is a function of its base name (before '@'). */
const PRELUDE = `${BYTES_SOURCE}
import * as fs from 'node:fs';
const sizeOf = (base) => 1000 + (createHash('sha256').update(base).digest().readUInt32BE(0) % 60000);
const contentOf = (base) => bytes(base, sizeOf(base));
const fail = (m) => { console.error(m); process.exit(1); };
`;

/**
 * A worker: in its own directory it creates files, rewrites them in
 * unaligned chunks, renames them (own names, and into the shared directory
 * and back), reads everything it owns back and checks it.
 */
const WORKER = `${PRELUDE}
const [root, id, roundsArg] = process.argv.slice(1);
const own = root + '/w' + id;
const shared = root + '/shared';
fs.mkdirSync(own, { recursive: true });
const live = new Map(); // base -> current path
for (let r = 0; r < Number(roundsArg); r++) {
  const base = 'w' + id + '_f' + (r % 6);
  const data = contentOf(base);
  if (!live.has(base)) {
    const p = own + '/' + base;
    const fd = fs.openSync(p, 'w');
    for (let off = 0; off < data.length; ) { const n = Math.min(777 + (r * 131) % 5000, data.length - off); fs.writeSync(fd, data, off, n, off); off += n; }
    fs.closeSync(fd);
    live.set(base, p);
  } else {
    const p = live.get(base);
    const got = fs.readFileSync(p);
    if (!got.equals(data)) fail('worker ' + id + ': ' + p + ' reads back wrong (' + got.length + ' vs ' + data.length + ' bytes)');
    const to = r % 3 === 0 ? shared + '/' + base + '@' + r : own + '/' + base + '@' + r;
    fs.renameSync(p, to);
    live.set(base, to);
    if (r % 5 === 0) {
      // rewrite a middle range in place with the same bytes, unaligned
      const fd = fs.openSync(to, 'r+');
      const off = Math.min(data.length - 1, 4000 + r);
      fs.writeSync(fd, data, off, Math.min(9000, data.length - off), off);
      fs.closeSync(fd);
    }
  }
}
for (const [base, p] of live) {
  const got = fs.readFileSync(p);
  if (!got.equals(contentOf(base))) fail('worker ' + id + ': final ' + p + ' wrong');
  fs.renameSync(p, own + '/' + base);
}
console.log('worker ' + id + ' done');
`;

/** A reader: lists the shared directory over and over and checks every file it manages to read. */
const READER = `${PRELUDE}
const [root, msArg] = process.argv.slice(1);
const end = Date.now() + Number(msArg);
let checked = 0;
while (Date.now() < end) {
  let names = [];
  try { names = fs.readdirSync(root + '/shared'); } catch (e) { if (e.code !== 'ENOENT') throw e; }
  for (const n of names) {
    let got;
    try { got = fs.readFileSync(root + '/shared/' + n); } catch (e) { if (e.code === 'ENOENT') continue; fail('reader: ' + n + ': ' + e.code); }
    const want = contentOf(n.split('@')[0]);
    // A file being rewritten in place holds the same bytes; a reader may only see them whole.
    if (!got.equals(want)) fail('reader: ' + n + ' has wrong content (' + got.length + ' vs ' + want.length + ')');
    checked++;
  }
}
console.log('reader checked ' + checked + ' files');
`;

test('several processes write, read and rename in one mount at once; a reader sees only whole, correct files', T, async () => {
  await mountImpl(MOUNT_IMPL, fx.cipherdir, mntA());
  try {
    const root = join(mntA(), 'many');
    fs.mkdirSync(join(root, 'shared'), { recursive: true });
    const workers = [0, 1, 2, 3].map((id) => runNode(WORKER, [root, String(id), '60']));
    const reader = runNode(READER, [root, '3000']);
    const results = await Promise.all([...workers, reader]);
    for (const r of results) assert.equal(r.code, 0, r.out);
    const checked = Number(/reader checked (\d+)/.exec((await reader).out)?.[1] ?? 0);
    assert.ok(checked > 0, 'the reader read files while the workers ran');
    for (const id of [0, 1, 2, 3]) {
      const names = fs.readdirSync(join(root, `w${id}`)).sort();
      assert.deepEqual(names, [0, 1, 2, 3, 4, 5].map((k) => `w${id}_f${k}`), `worker ${id}'s files, back home`);
    }
    assert.deepEqual(fs.readdirSync(join(root, 'shared')), [], 'nothing left in the shared directory');
  } finally {
    await unmountAndReap(mntA());
  }
});

/** Writes stripes [i*STRIPE + lane*HALF, +HALF) of a file, in a scrambled order. */
const STRIPER = `${PRELUDE}
const [path, lane, stripes, half] = process.argv.slice(1).map((x, i) => (i === 0 ? x : Number(x)));
const fd = fs.openSync(path, 'r+');
const data = bytes('stripe-' + lane, stripes * half * 2);
for (let k = 0; k < stripes; k++) {
  const i = (k * 7919) % stripes;
  const off = i * half * 2 + lane * half;
  fs.writeSync(fd, data, off, half, off);
}
fs.closeSync(fd);
`;

test('two processes interleave writes into the same blocks of one file (disjoint unaligned stripes): nothing lost', T, async () => {
  await mountImpl(MOUNT_IMPL, fx.cipherdir, mntA());
  try {
    const stripes = 600;
    const half = 333; // a stripe pair is 666 bytes: most blocks are shared by both writers
    const path = join(mntA(), 'striped.bin');
    fs.writeFileSync(path, Buffer.alloc(0));
    const rs = await Promise.all([0, 1].map((lane) => runNode(STRIPER, [path, String(lane), String(stripes), String(half)])));
    for (const r of rs) assert.equal(r.code, 0, r.out);
    const model = Buffer.alloc(stripes * half * 2);
    for (const lane of [0, 1]) {
      const d = stormBytes(`stripe-${lane}`, model.length);
      for (let i = 0; i < stripes; i++) d.copy(model, i * half * 2 + lane * half, i * half * 2 + lane * half, i * half * 2 + lane * half + half);
    }
    assertBytes(fs.readFileSync(path), model, 'both writers\' stripes');

    // Two handles in this process, writes interleaved one by one, overlapping: last write wins.
    const h1 = fs.openSync(path, 'r+');
    const h2 = fs.openSync(path, 'r+');
    try {
      for (let i = 0; i < 200; i++) {
        const off = (i * 2909) % (model.length - 5000);
        const len = 1 + ((i * 613) % 5000);
        const d = stormBytes(`interleave-${i}`, len);
        fs.writeSync(i % 2 === 0 ? h1 : h2, d, 0, len, off);
        d.copy(model, off);
        if (i % 17 === 0) fs.ftruncateSync(i % 2 === 0 ? h2 : h1, model.length);
      }
      const back = Buffer.alloc(model.length);
      fs.readSync(h2, back, 0, model.length, 0);
      assertBytes(back, model, 'read back through the other handle');
    } finally {
      fs.closeSync(h1);
      fs.closeSync(h2);
    }
    assertBytes(fs.readFileSync(path), model, 'after close');
  } finally {
    await unmountAndReap(mntA());
  }
});

test('two mounts of one cipher directory with -sharedstorage see each other\'s files, writes, renames and removals', T, async () => {
  await mountImpl(MOUNT_IMPL, fx.cipherdir, mntA(), { flags: ['-sharedstorage'] });
  try {
    await mountImpl(MOUNT_IMPL, fx.cipherdir, mntB(), { flags: ['-sharedstorage'] });
    try {
      const a = (...p: string[]): string => join(mntA(), 'shared2', ...p);
      const b = (...p: string[]): string => join(mntB(), 'shared2', ...p);
      fs.mkdirSync(a());
      const data = stormBytes('shared-a', 10_000);
      fs.writeFileSync(a('from-a.bin'), data);
      assertBytes(fs.readFileSync(b('from-a.bin')), data, 'B reads what A wrote');
      fs.appendFileSync(b('from-a.bin'), 'appended by B');
      assert.equal(fs.statSync(a('from-a.bin')).size, 10_013, 'A sees the size B made');
      assertBytes(fs.readFileSync(a('from-a.bin')), Buffer.concat([data, Buffer.from('appended by B')]), 'A reads what B appended');
      fs.renameSync(b('from-a.bin'), b('renamed-by-b.bin'));
      assert.deepEqual(fs.readdirSync(a()), ['renamed-by-b.bin'], 'A lists B\'s rename');
      assert.throws(() => fs.statSync(a('from-a.bin')), { code: 'ENOENT' }, 'the old name is gone in A too');
      fs.mkdirSync(a('sub'));
      fs.writeFileSync(b('sub', 'x'), 'x');
      assert.deepEqual(fs.readdirSync(a('sub')), ['x']);
      fs.unlinkSync(a('sub', 'x'));
      fs.rmdirSync(b('sub'));
      assert.throws(() => fs.statSync(a('sub')), { code: 'ENOENT' }, 'A sees B\'s rmdir');
      fs.truncateSync(a('renamed-by-b.bin'), 5000);
      assertBytes(fs.readFileSync(b('renamed-by-b.bin')), data.subarray(0, 5000), 'B sees A\'s truncate');

      // A handle open in A while B replaces the file's content (O_TRUNC: a new header and file ID).
      // Like gocryptfs, the handle keeps the file ID it read: its next partial-block write fails
      // with EIO instead of corrupting B's file; a fresh open sees the new file.
      const h = fs.openSync(a('renamed-by-b.bin'), 'r+');
      try {
        fs.writeSync(h, Buffer.from('Z'), 0, 1, 0); // A has read (and cached) the old file ID
        fs.writeFileSync(b('renamed-by-b.bin'), 'new content from B');
        assert.throws(() => fs.writeSync(h, Buffer.from('A'), 0, 1, 0), { code: 'EIO' }, 'stale handle: EIO, as gocryptfs');
        assert.equal(fs.readFileSync(b('renamed-by-b.bin'), 'utf8'), 'new content from B', 'B\'s file is intact');
      } finally {
        fs.closeSync(h);
      }
      const h2 = fs.openSync(a('renamed-by-b.bin'), 'r+');
      fs.writeSync(h2, Buffer.from('A'), 0, 1, 0);
      fs.closeSync(h2);
      assert.equal(fs.readFileSync(b('renamed-by-b.bin'), 'utf8'), 'Aew content from B', 'a fresh handle in A writes into B\'s new file');

      // Both mounts write their own files at once.
      const writeMany = async (mnt: string, tag: string): Promise<void> => {
        for (let i = 0; i < 20; i++) await fs.promises.writeFile(join(mnt, 'shared2', `${tag}_${i}.bin`), stormBytes(`${tag}-${i}`, 3000 + i * 997));
      };
      await Promise.all([writeMany(mntA(), 'a'), writeMany(mntB(), 'b')]);
      for (const [mnt, other] of [[mntA(), 'b'], [mntB(), 'a']] as const) {
        for (let i = 0; i < 20; i++) assertBytes(fs.readFileSync(join(mnt, 'shared2', `${other}_${i}.bin`)), stormBytes(`${other}-${i}`, 3000 + i * 997), `${other}_${i}.bin through the other mount`);
      }
    } finally {
      await unmountAndReap(mntB());
    }
  } finally {
    await unmountAndReap(mntA());
  }
});
