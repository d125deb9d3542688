/**
 * The background daemon's loggers: the file used where there is no syslog
 * (named after the mount point, appended to, 0600), and the syslog logger
 * handing everything to that file once logger(1) stops taking messages,
 * the lines it may have lost first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileLogger, logDir, logFileFor } from '../../src/cli/log-file.js';
import { SyslogLogger } from '../../src/cli/syslog.js';
import { sleep, waitFor } from '../helpers/mount.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

test('log files: one per mount point under $XDG_STATE_HOME/tscryptfs, lines with time and PID, mode 0600', () => {
  const tmp = makeTempDir('tscryptfs-logfile-');
  const saved = process.env.XDG_STATE_HOME;
  try {
    process.env.XDG_STATE_HOME = tmp;
    assert.equal(logDir(), join(tmp, 'tscryptfs'));
    assert.equal(logFileFor('/mnt/my vault/'), join(tmp, 'tscryptfs', 'mnt-my_vault.log'));
    const f = new FileLogger(logFileFor('/srv/private'));
    f.info('one');
    f.warn('two\nlines');
    const text = readFileSync(f.path, 'utf8');
    assert.match(text, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z tscryptfs\\[${process.pid}\\]: one\\n.* WARNING: two lines\\n$`));
    assert.equal(statSync(f.path).mode & 0o777, 0o600);
  } finally {
    if (saved === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved;
    removeTempDir(tmp);
  }
});

test('syslog logger: when logger(1) fails, the lines it took and every later one go to the fallback, with one warning', async () => {
  const tmp = makeTempDir('tscryptfs-syslog-');
  const savedPath = process.env.PATH;
  try {
    // A logger that fails as util-linux's does with --socket-errors=on and no /dev/log.
    writeFileSync(join(tmp, 'logger'), '#!/bin/sh\ncat >/dev/null & sleep 0.2; exit 1\n');
    chmodSync(join(tmp, 'logger'), 0o755);
    process.env.PATH = `${tmp}:${savedPath}`;
    const got: string[] = [];
    const s = new SyslogLogger('tscryptfs-test', { warn: (m) => got.push(`W ${m}`), info: (m) => got.push(`I ${m}`) });
    s.warn('block 3 failed authentication');
    s.info('second');
    assert.ok(await waitFor(() => got.length >= 3, 5000), got.join('\n'));
    s.info('after');
    await sleep(50);
    assert.match(got[0]!, /^W syslog does not take messages \(logger exited \(1\)\); they go here from now on, starting with the last 2 sent to syslog$/);
    assert.deepEqual(got.slice(1), ['I WARNING: block 3 failed authentication', 'I second', 'I after']);
    s.close();
  } finally {
    process.env.PATH = savedPath;
    removeTempDir(tmp);
  }
});
