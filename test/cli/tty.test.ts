/**
 * The terminal path of password reading, through a real pseudo-terminal
 * made by script(1): no-echo prompts, "Repeat:", and the master key box.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/vault/index.js';
import { BIN, cleanup, tempDir } from './helpers.js';
import { internalAccess } from '../../src/vault/internal-access.js';

if (spawnSync('script', ['--version']).status !== 0) throw new Error('script(1) from util-linux is required by the terminal tests');

let tmp: string;
before(async () => {
  tmp = await tempDir();
});
after(async () => {
  await cleanup(tmp);
});

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs the CLI on a pty. `answers` are typed one by one, each after the
 * output has grown to contain the matching prompt (counting occurrences).
 */
function onPty(args: string[], answers: Array<[prompt: string, typed: string]>): Promise<{ code: number | null; output: string }> {
  const cmd = [process.execPath, BIN, ...args].map(shQuote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let next = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const count = (s: string, sub: string): number => s.split(sub).length - 1;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      output += d;
      // Type the next answer once its prompt has appeared (as often as asked so far).
      while (next < answers.length) {
        const [prompt, typed] = answers[next]!;
        const needed = answers.slice(0, next + 1).filter(([p]) => p === prompt).length;
        if (count(output, prompt) < needed) break;
        child.stdin.write(typed);
        next++;
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.replace(/\r/g, '') });
    });
  });
}

test('-init on a terminal: Password/Repeat without echo, master key shown once', async () => {
  const dir = join(tmp, 'tty1');
  await fsp.mkdir(dir);
  const r = await onPty(['-init', '-scryptn', '10', dir], [
    ['Password: ', 'tty-secret\r'],
    ['Repeat: ', 'tty-secret\r'],
  ]);
  assert.equal(r.code, 0, r.output);
  assert.doesNotMatch(r.output, /tty-secret/, 'the password is not echoed');
  const m = /Your master key is:\n\n {4}([0-9a-f]{8}(?:-[0-9a-f]{8}){3})-\n {4}([0-9a-f]{8}(?:-[0-9a-f]{8}){3})\n\nIf the gocryptfs.conf file/.exec(r.output);
  assert.ok(m, r.output);
  const shown = (m[1]! + m[2]!).replace(/-/g, '');
  const vault = await Vault.open(dir, { password: 'tty-secret' });
  assert.equal(Buffer.from(internalAccess(vault).masterKey()).toString('hex'), shown);
  await vault.close();
  assert.match(r.output, /The gocryptfs filesystem has been created successfully\./);
});

test('-init on a terminal: mismatching Repeat → 9, nothing written; backspace edits', async () => {
  const dir = join(tmp, 'tty2');
  await fsp.mkdir(dir);
  const r = await onPty(['-init', '-scryptn', '10', dir], [
    ['Password: ', 'abc\r'],
    ['Repeat: ', 'abd\r'],
  ]);
  assert.equal(r.code, 9, r.output);
  assert.match(r.output, /tscryptfs: Passwords do not match/);
  assert.deepEqual(await fsp.readdir(dir), []);
  // "abX<backspace>c" is "abc"; both answers typed in one go are split at the line end.
  const r2 = await onPty(['-init', '-q', '-scryptn', '10', dir], [['Password: ', 'abX\x7fc\rabc\r']]);
  assert.equal(r2.code, 0, r2.output);
  await (await Vault.open(dir, { password: 'abc' })).close();
  // -passwd: old password once, the new one twice.
  const r3 = await onPty(['-passwd', dir], [
    ['Password: ', 'abc\r'],
    ['Password: ', 'newpw\r'],
    ['Repeat: ', 'newpw\r'],
  ]);
  assert.equal(r3.code, 0, r3.output);
  assert.match(r3.output, /Please enter your new password\.\nPassword: \nRepeat: \nPassword changed\./);
  await (await Vault.open(dir, { password: 'newpw' })).close();
});
