/**
 * Shared helpers for the CLI tests: run the built binary (and the real
 * gocryptfs) in a child process without a terminal, make temp dirs, and
 * snapshot a directory tree to prove that a failure changed nothing.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, REPO_ROOT } from '../helpers/paths.js';
export { BIN, REPO_ROOT as ROOT, VECTORS_DIR as FIXTURES } from '../helpers/paths.js';
import { GOCRYPTFS_BIN as GOCRYPTFS, GOCRYPTFS_XRAY_BIN as XRAY } from '../helpers/requirements.js';
import { validate, type Schema } from '../helpers/json-schema.js';
import { Output } from '../../src/cli/output.js';
import { runSpeed } from '../../src/cli/speed.js';
export { GOCRYPTFS, XRAY };

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to stdin, then stdin is closed (default: closed at once). */
  input?: string;
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

function runProgram(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined); // the program may exit before reading
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs `node bin/tscryptfs ARGS`. */
export function tscryptfs(args: readonly string[], opts?: RunOptions): Promise<RunResult> {
  return runProgram(process.execPath, [BIN, ...args], opts);
}

/** Runs the real gocryptfs. */
export function gocryptfs(args: readonly string[], opts?: RunOptions): Promise<RunResult> {
  return runProgram(GOCRYPTFS, args, opts);
}

/** gocryptfs-xray -dumpmasterkey CONF with the password on stdin → 64 hex digits. */
export function xrayMasterKey(conf: string, password: string): string {
  const r = spawnSync(XRAY, ['-dumpmasterkey', conf], { input: `${password}\n`, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gocryptfs-xray failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

/** A fresh directory under os.tmpdir(); remove with cleanup(). */
export async function tempDir(prefix = 'tscryptfs-cli-'): Promise<string> {
  return fsp.mkdtemp(join(tmpdir(), prefix));
}

/** Removes a temp dir, making read-only entries deletable first. */
export async function cleanup(dir: string): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
}

/** Lines of a text, without the trailing empty one. */
export function lines(text: string): string[] {
  const l = text.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

/** Path → "type mode size sha256" for every entry under dir (sorted). */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(rel: string): Promise<void> {
    const abs = join(dir, rel);
    const st = await fsp.lstat(abs);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isDirectory()) {
      out[rel || '.'] = `dir ${mode}`;
      for (const name of (await fsp.readdir(abs)).sort()) await walk(rel ? `${rel}/${name}` : name);
    } else if (st.isSymbolicLink()) {
      out[rel] = `link ${await fsp.readlink(abs)}`;
    } else {
      const hash = createHash('sha256').update(await fsp.readFile(abs)).digest('hex');
      out[rel] = `file ${mode} ${st.size} ${hash} ${st.mtimeMs}`;
    }
  }
  await walk('');
  return out;
}

/** The JSON of a gocryptfs.conf. */
export async function readConfJson(path: string): Promise<{
  Creator?: string;
  FeatureFlags: string[];
  LongNameMax?: number;
  ScryptObject: { N: number; R: number; P: number; KeyLen: number; Salt: string };
  EncryptedKey: string;
  Version: number;
}> {
  return JSON.parse(await fsp.readFile(path, 'utf8'));
}

/** Permission bits of a path. */
export async function modeOf(path: string): Promise<number> {
  return (await fsp.stat(path)).mode & 0o777;
}

/** Creates a cipher dir with our -init (password "pw", N=2^10) and returns its path. */
export async function initVault(parent: string, name = 'cipher', extra: string[] = [], password = 'pw'): Promise<string> {
  const dir = join(parent, name);
  await fsp.mkdir(dir);
  const r = await tscryptfs(['-init', '-q', '-scryptn', '10', ...extra, dir], { input: `${password}\n` });
  if (r.code !== 0) throw new Error(`init failed (${r.code}): ${r.stderr}`);
  return dir;
}

/** A -json schema of Documentation/schemas/ ("info", "fsck", "speed", "version"). */
export function jsonSchema(name: string): Schema {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'Documentation', 'schemas', `${name}.schema.json`), 'utf8')) as Schema;
}

/** A run's stdout as one JSON document valid against the schema: the whole of stdout, nothing before or after. */
export function jsonOf(r: RunResult, schemaName: string): Record<string, unknown> {
  assert.ok(r.stdout.endsWith('}\n'), `stdout is not one JSON object: ${r.stdout}`);
  const doc = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.deepEqual(validate(jsonSchema(schemaName), doc), [], r.stdout);
  return doc;
}

/** -speed in this process with TSCRYPTFS_AEGIS=off and 2 ms rows (text, or with -json); returns stdout. */
export async function speedWithoutAegis(json: boolean): Promise<string> {
  let stdout = '';
  const out = new Output({ stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => true } });
  out.json = json;
  const saved = process.env.TSCRYPTFS_AEGIS;
  process.env.TSCRYPTFS_AEGIS = 'off';
  try {
    await runSpeed(out, 2);
  } finally {
    if (saved === undefined) delete process.env.TSCRYPTFS_AEGIS;
    else process.env.TSCRYPTFS_AEGIS = saved;
  }
  return stdout;
}
