/**
 * A background mount's messages are never dropped: with no syslog (no
 * /dev/log, as in containers, where logger(1) loses every line without a
 * word) the mounting command says on stderr which file gets them, and a
 * block that fails authentication is reported there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMounted, MOUNT_MARKER, PASSWORD, runImpl, unmountAndReap } from '../helpers/mount.js';
import { initCipherdir } from '../helpers/mount.js';
import { cipherEntries, useMountTmp } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';
import { flipBits } from '../helpers/tamper.js';
import { logFileFor } from '../../src/cli/log-file.js';

const dir = useMountTmp('logging');
const T = { timeout: 60_000, ...needs('mount'), ...(existsSync('/dev/log') ? { skip: 'this machine has /dev/log: messages go to syslog' } : {}) };

test('without /dev/log the background daemon names its log file before detaching, and a tampered block is reported there', T, async () => {
  const cipherdir = join(dir.tmp, 'cipher');
  const mnt = join(dir.tmp, 'mnt');
  const state = join(dir.tmp, 'state');
  await initCipherdir('tscryptfs', cipherdir);
  await fsp.mkdir(mnt);
  const env = { ...process.env, [MOUNT_MARKER]: mnt, XDG_STATE_HOME: state };
  const mount = (): ReturnType<typeof runImpl> => runImpl('tscryptfs', ['-extpass', `echo ${PASSWORD}`, cipherdir, mnt], { env });
  const logFile = join(state, 'tscryptfs', logFileFor(mnt).split('/').pop()!);
  try {
    let r = await mount();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`no syslog \\(/dev/log is missing\\): the background process writes its messages to ${logFile.replace(/[.]/g, '\\.')}\\n`));
    await fsp.writeFile(join(mnt, 'report.txt'), Buffer.alloc(10_000, 'r'));
    await unmountAndReap(mnt);

    const [name] = await cipherEntries(cipherdir);
    await flipBits(join(cipherdir, name!), 60, 0xff); // inside block 0's ciphertext

    r = await mount();
    assert.equal(r.code, 0, r.stderr);
    await assert.rejects(fsp.readFile(join(mnt, 'report.txt')), { code: 'EIO' });
    await unmountAndReap(mnt);
    const log = readFileSync(logFile, 'utf8');
    assert.match(log, new RegExp(`tscryptfs\\[\\d+\\]: serving ${cipherdir} at ${mnt}\\n`));
    assert.match(log, new RegExp(`WARNING: ${cipherdir}/${name}: block 0 failed authentication`));
  } finally {
    if (isMounted(mnt)) await unmountAndReap(mnt);
  }
});
