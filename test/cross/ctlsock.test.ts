/**
 * -ctlsock against gocryptfs 2.3: the same answers, byte for byte, to the
 * same requests. Forward mode replays the transcripts recorded from
 * gocryptfs on its fixtures (Documentation/format.md §11) and asks both programs live
 * on one cipher directory; reverse mode asks `tscryptfs -reverse` and
 * `gocryptfs -reverse` on the same plaintext directory. Also: the socket
 * is the owner's only (0600), a too-big request closes the connection,
 * several requests on one connection are answered in order, an existing
 * path is refused (exit 20), and the socket is gone after unmount. The
 * trees hold names that are not UTF-8, so the answers show how each
 * program escapes them.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { initCipherdir, mountImpl, tryMount, unmountAndReap, withMount } from '../helpers/mount.js';
import { useMountTmp } from '../helpers/mount-suite.js';
import { fixtureCipherPath, materializeVector } from '../helpers/fixtures.js';
import { VECTORS_DIR } from '../helpers/paths.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 120_000, ...needs('mount', 'gocryptfs') };
const dir = useMountTmp('ctlsock');
let tmp = '';
before(() => {
  tmp = dir.tmp;
});

/** Sends `requests` on one connection, one write each (waiting for each answer); null where the server closed instead. */
function converse(sock: string, requests: string[]): Promise<(string | null)[]> {
  return new Promise((resolve, reject) => {
    const c = createConnection(sock);
    const answers: (string | null)[] = [];
    let buf = '';
    const next = (): void => {
      if (answers.length === requests.length) {
        c.end();
        resolve(answers);
        return;
      }
      c.write(requests[answers.length]!);
    };
    c.setEncoding('utf8');
    c.setTimeout(10_000, () => c.destroy(new Error('ctlsock timeout')));
    c.on('connect', next);
    c.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        answers.push(buf.slice(0, nl + 1));
        buf = buf.slice(nl + 1);
        next();
      }
    });
    c.on('close', () => {
      if (answers.length < requests.length) {
        answers.push(null);
        resolve(answers);
      }
    });
    c.on('error', reject);
  });
}

const FORWARD = ['aesgcm', 'plaintextnames', 'deterministic-names', 'longnamemax62', 'hkdf-false', 'raw64-false'];

test('forward: answers equal the transcripts recorded from gocryptfs', T, async () => {
  for (const v of FORWARD) {
    const cdir = join(tmp, `fwd-${v}`);
    await materializeVector(v, cdir);
    const sock = join(tmp, `fwd-${v}.sock`);
    const transcript = JSON.parse(readFileSync(join(VECTORS_DIR, v, 'ctlsock_transcript.json'), 'utf8')) as { request: string; response: string }[];
    await withMount('tscryptfs', cdir, join(tmp, `fwd-${v}-mnt`), { ctlsock: sock, flags: ['-ro'] }, async () => {
      const st = await fsp.stat(sock);
      assert.ok(st.isSocket());
      assert.equal(st.mode & 0o777, 0o600, 'owner only');
      assert.equal(st.uid, process.getuid!());
      const answers = await converse(sock, transcript.map((t) => t.request));
      for (const [i, t] of transcript.entries()) assert.equal(answers[i], t.response, `${v}: ${t.request}`);
    });
    assert.equal(existsSync(sock), false, 'the socket goes away with the mount');
  }
});

/** Requests whose answers both programs must agree on, for the tree below. */
function questions(encrypted: string[]): string[] {
  const plain = ['a.txt', 'sub', 'sub/b.txt', `sub/${'L'.repeat(200)}`, 'sub/missing', 'missing/x', '/sub//b.txt', 'sub/../a.txt', 'sub/./', '..', '/', 'a\u0000b', 'x'.repeat(256)];
  const reqs = plain.map((p) => JSON.stringify({ EncryptPath: p }));
  for (const c of encrypted) reqs.push(JSON.stringify({ DecryptPath: c }));
  reqs.push(
    JSON.stringify({ DecryptPath: 'AAAAAAAAAAAAAAAAAAAAAA' }),
    JSON.stringify({ DecryptPath: 'does-not-exist-AAAAAAAAAAAAAAAAAAAAAA' }),
    JSON.stringify({ DecryptPath: 'has space' }),
    JSON.stringify({ DecryptPath: 'gocryptfs.longname.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
    JSON.stringify({ DecryptPath: 'gocryptfs.diriv' }),
    JSON.stringify({ encryptpath: 'a.txt' }),
    '{"EncryptPath": 5}',
    '[1]',
    'null',
    '',
    'nope',
    '{"EncryptPath": "<&>"}',
  );
  return reqs.filter((r) => r !== '');
}

async function makePlainTree(root: string): Promise<void> {
  await fsp.mkdir(join(root, 'sub'), { recursive: true });
  await fsp.writeFile(join(root, 'a.txt'), 'a');
  await fsp.writeFile(join(root, 'sub', 'b.txt'), 'b');
  await fsp.writeFile(join(root, 'sub', 'L'.repeat(200)), 'long');
  // Names Go's JSON encoder escapes: bytes that are not UTF-8 (a stray byte, an overlong form, a surrogate, a code
  // point above U+10FFFF), a real U+FFFD, U+2028/9, control bytes, quotes and HTML characters.
  const odd = ['61ff62', 'c0af', 'eda080', 'f4908080', 'efbfbd', 'e280a8e280a9', '0108090c0a0d1f7f', '223c263e5c', 'f09f9880'];
  for (const hex of odd) await fsp.writeFile(Buffer.concat([Buffer.from(join(root, 'sub') + '/'), Buffer.from(hex, 'hex')]), hex);
}

/** The encrypted paths (relative) of everything in a mounted view, for DecryptPath questions. */
async function encryptedPaths(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(join(root, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    out.push(p);
    if (e.isDirectory()) out.push(...(await encryptedPaths(root, p)));
  }
  return out.sort();
}

/** Mounts `dir` with each program in turn (mount `flags`, a control socket) and asks `reqs` one connection each; the answers must be equal. */
async function assertSameAnswers(label: string, dir: string, flags: string[], reqs: string[]): Promise<void> {
  const ask = (impl: 'gocryptfs' | 'tscryptfs'): Promise<(string | null)[]> => {
    const sock = join(tmp, `${label}-${impl}.sock`);
    return withMount(impl, dir, join(tmp, `${label}-${impl}`), { ctlsock: sock, flags }, async () => {
      const answers: (string | null)[] = [];
      for (const r of reqs) answers.push(...(await converse(sock, [r])));
      return answers;
    });
  };
  const theirs = await ask('gocryptfs');
  const ours = await ask('tscryptfs');
  for (const [i, r] of reqs.entries()) assert.equal(ours[i], theirs[i], `request ${r}`);
}

test('forward: tscryptfs answers as gocryptfs does on the same cipher directory', T, async () => {
  const cdir = join(tmp, 'live-cipher');
  await initCipherdir('gocryptfs', cdir);
  await withMount('gocryptfs', cdir, join(tmp, 'live-fill'), {}, (m) => makePlainTree(m));
  const cipherPaths = await encryptedPaths(cdir);
  await assertSameAnswers('live', cdir, ['-ro'], questions(cipherPaths));
});

test('reverse: tscryptfs -reverse answers as gocryptfs -reverse does', T, async () => {
  const plain = join(tmp, 'rev-plain');
  await makePlainTree(plain);
  await initCipherdir('gocryptfs', plain, ['-reverse']);
  const view = join(tmp, 'rev-view');
  await mountImpl('gocryptfs', plain, view, { flags: ['-reverse'] });
  let cipherPaths: string[];
  try {
    cipherPaths = await encryptedPaths(view);
  } finally {
    await unmountAndReap(view);
  }
  await assertSameAnswers('rev', plain, ['-reverse'], questions(cipherPaths));
});

test('a request of 5000 bytes closes the connection; several requests on one connection are answered in order', T, async () => {
  const cdir = join(tmp, 'misc-cipher');
  await materializeVector('aesgcm', cdir);
  const sock = join(tmp, 'misc.sock');
  await withMount('tscryptfs', cdir, join(tmp, 'misc-mnt'), { ctlsock: sock, flags: ['-ro'] }, async () => {
    const [big] = await converse(sock, [JSON.stringify({ EncryptPath: 'x'.repeat(5000) })]);
    assert.equal(big, null, 'no answer, connection closed');
    const dir1 = fixtureCipherPath('aesgcm', 'dir1');
    const answers = await converse(sock, [JSON.stringify({ EncryptPath: 'dir1' }), JSON.stringify({ DecryptPath: dir1 })]);
    assert.deepEqual(answers, [`{"Result":"${dir1}","ErrNo":0,"ErrText":"","WarnText":""}\n`, '{"Result":"dir1","ErrNo":0,"ErrText":"","WarnText":""}\n']);
  });
});

test('-ctlsock on an existing path → 20 before the password is asked, and the file is left alone', T, async () => {
  const cdir = join(tmp, 'exists-cipher');
  await materializeVector('aesgcm', cdir);
  const sock = join(tmp, 'exists.sock');
  await fsp.writeFile(sock, 'mine');
  const a = await tryMount('tscryptfs', cdir, join(tmp, 'exists-mnt'), { ctlsock: sock, password: 'wrong-password-never-read' });
  assert.equal(a.code, 20, a.output);
  assert.equal(a.mounted, false);
  assert.match(a.output, /ctlsock: listen unix .*exists\.sock: bind: address already in use/);
  assert.equal(readFileSync(sock, 'utf8'), 'mine');
});
