/**
 * Reading passwords the way gocryptfs's internal/readpassword does:
 *
 *   -passfile FILE...  the first line of each file, concatenated;
 *   -extpass CMD...    the first output line of a program (no shell: a
 *                      single -extpass is split on spaces, several are used
 *                      as program + literal arguments);
 *   a terminal         a no-echo prompt "Password: " on stderr (and
 *                      "Repeat: " when a new password is chosen);
 *   anything else      one line from stdin, read byte by byte so that the
 *                      next line stays there for the next question.
 *
 * The line end ("\n") is stripped, nothing else; an empty password or one
 * longer than 2048 bytes is an error (exit code 9).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { isatty } from 'node:tty';
import { hasCode } from '../util/errors.js';
import { CliError, EXIT } from './exit-codes.js';
import { describeError, goQuote, goQuoteList, type Output } from './output.js';

export const MAX_PASSWORD_LEN = 2048;

export interface PasswordSources {
  extpass: readonly string[];
  passfile: readonly string[];
}

function pwError(message: string): CliError {
  return new CliError(EXIT.ReadPassword, message);
}

/** Overwrites a buffer that held a secret. */
export function wipe(buf: Uint8Array | number[] | null | undefined): void {
  if (buf) buf.fill(0);
}

/** One password (unlocking): passfile, extpass, terminal prompt or stdin line. */
export async function readPasswordOnce(src: PasswordSources, out: Output, prompt = 'Password'): Promise<Buffer> {
  if (src.passfile.length > 0) return readPassFiles(src.passfile, out);
  if (src.extpass.length > 0) return readPasswordExtpass(src.extpass, out);
  if (!isatty(0)) return readPasswordStdin(prompt, out);
  return readPasswordTerminal(`${prompt}: `, out);
}

/** A new password: like readPasswordOnce, but a terminal asks twice and compares. */
export async function readPasswordTwice(src: PasswordSources, out: Output): Promise<Buffer> {
  if (src.passfile.length > 0) return readPassFiles(src.passfile, out);
  if (src.extpass.length > 0) return readPasswordExtpass(src.extpass, out);
  if (!isatty(0)) return readPasswordStdin('Password', out);
  const p1 = await readPasswordTerminal('Password: ', out);
  const p2 = await readPasswordTerminal('Repeat: ', out);
  const same = p1.equals(p2);
  wipe(p2);
  if (!same) {
    wipe(p1);
    throw pwError('Passwords do not match');
  }
  return p1;
}

// ------------------------------------------------------------------ passfile

function readPassFiles(files: readonly string[], out: Output): Buffer {
  const parts = files.map((f) => readPassFile(f, out));
  const pw = Buffer.concat(parts);
  parts.forEach(wipe);
  return pw;
}

/** First line of a file; one read of at most 2050 bytes, like gocryptfs. */
export function readPassFile(path: string, out: Output): Buffer {
  out.info(`passfile: reading from file ${goQuote(path)}`);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw pwError(`passfile: could not open ${goQuote(path)}: ${describeError(err)}`);
  }
  const buf = Buffer.alloc(MAX_PASSWORD_LEN + 2);
  let n: number;
  try {
    n = readSync(fd, buf, 0, buf.length, null);
  } catch (err) {
    throw pwError(`passfile: could not read from ${goQuote(path)}: ${describeError(err)}`);
  } finally {
    closeSync(fd);
  }
  if (n === 0) throw pwError(`passfile: could not read from ${goQuote(path)}: EOF`);
  const data = buf.subarray(0, n);
  const nl = data.indexOf(0x0a);
  const first = Buffer.from(nl >= 0 ? data.subarray(0, nl) : data);
  const rest = nl >= 0 ? data.length - nl - 1 : 0;
  wipe(buf);
  if (first.length === 0) throw pwError(`passfile: empty first line in ${goQuote(path)}`);
  if (first.length > MAX_PASSWORD_LEN) {
    wipe(first);
    throw pwError(`passfile: max password length (${MAX_PASSWORD_LEN} bytes) exceeded`);
  }
  if (rest > 0) out.warn(`warning: passfile: ignoring trailing garbage (${rest} bytes) after first line`);
  return first;
}

// ------------------------------------------------------------------- extpass

/** The program and arguments of -extpass: one value is split on every space. */
export function extpassCommand(extpass: readonly string[]): string[] {
  return extpass.length === 1 ? extpass[0]!.split(' ') : [...extpass];
}

function spawnFailure(prog: string, err: NodeJS.ErrnoException): string {
  if (hasCode(err, 'ENOENT')) return `exec: ${goQuote(prog)}: executable file not found in $PATH`;
  if (hasCode(err, 'EACCES')) return `exec: ${goQuote(prog)}: permission denied`;
  return describeError(err);
}

/** Runs the program (stdin /dev/null, stderr passed through) and takes its first output line. */
export async function readPasswordExtpass(extpass: readonly string[], out: Output): Promise<Buffer> {
  const [prog, ...args] = extpassCommand(extpass) as [string, ...string[]];
  out.info(`Reading password from extpass program ${goQuote(prog)}, arguments: ${goQuoteList(args)}`);
  const line = await new Promise<Buffer>((resolve, reject) => {
    let child;
    try {
      child = spawn(prog, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    } catch (err) {
      reject(pwError(`extpass cmd start failed: ${(err as Error).message}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false; // first line complete, or too long
    let tooLong = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (done) return;
      const nl = chunk.indexOf(0x0a);
      const part = nl >= 0 ? chunk.subarray(0, nl) : chunk;
      chunks.push(Buffer.from(part));
      size += part.length;
      if (size > MAX_PASSWORD_LEN) {
        tooLong = true;
        done = true;
      } else if (nl >= 0) {
        done = true;
      }
      wipe(chunk);
    });
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('close', (code, signal) => {
      const pw = Buffer.concat(chunks);
      chunks.forEach(wipe);
      if (spawnError) {
        reject(pwError(`extpass cmd start failed: ${spawnFailure(prog, spawnError)}`));
      } else if (tooLong) {
        wipe(pw);
        reject(pwError(`maximum password length of ${MAX_PASSWORD_LEN} bytes exceeded`));
      } else if (code !== 0) {
        wipe(pw);
        reject(pwError(`extpass program returned an error: ${signal ? `signal: ${signal}` : `exit status ${code}`}`));
      } else {
        resolve(pw);
      }
    });
  });
  if (line.length === 0) throw pwError('extpass: password is empty');
  return line;
}

// --------------------------------------------------------------------- stdin

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * One line from fd 0, one byte at a time so nothing after the newline is
 * consumed (-passwd reads the old and the new password as two lines).
 */
export function readLineUnbuffered(fd = 0): Buffer {
  const bytes: number[] = [];
  const b = Buffer.alloc(1);
  try {
    for (;;) {
      if (bytes.length > MAX_PASSWORD_LEN) {
        throw pwError(`maximum password length of ${MAX_PASSWORD_LEN} bytes exceeded`);
      }
      let n: number;
      try {
        n = readSync(fd, b, 0, 1, null);
      } catch (err) {
        if (hasCode(err, 'EAGAIN', 'EINTR')) {
          Atomics.wait(sleepCell, 0, 0, 10); // non-blocking stdin: poll
          continue;
        }
        if (hasCode(err, 'EOF')) return Buffer.from(bytes);
        throw pwError(`could not read from stdin: ${(err as Error).message}`);
      }
      if (n === 0 || b[0] === 0x0a) return Buffer.from(bytes);
      bytes.push(b[0]!);
    }
  } finally {
    wipe(bytes);
    wipe(b);
  }
}

function readPasswordStdin(prompt: string, out: Output): Buffer {
  out.info(`Reading ${prompt} from stdin`);
  const p = readLineUnbuffered(0);
  if (p.length === 0) throw pwError(`Got empty ${prompt} from stdin`);
  return p;
}

// ------------------------------------------------------------------ terminal

/** Bytes typed after the line end of the previous prompt (paste of two lines). */
let typeAhead: Buffer = Buffer.alloc(0);

/**
 * A no-echo prompt: the terminal goes into raw mode, keys are collected
 * until Enter. Backspace and Ctrl-U edit, Ctrl-C aborts like SIGINT,
 * Ctrl-D on an empty line is end of input.
 */
function readTerminalLine(prompt: string, out: Output): Promise<Buffer> {
  const stdin = process.stdin;
  return new Promise<Buffer>((resolve, reject) => {
    const bytes: number[] = [];
    const wasRaw = stdin.isRaw;
    // Echo goes off before the prompt appears, so nothing typed ahead is shown.
    stdin.setRawMode(true);
    out.prompt(prompt);
    let finished = false;
    const finish = (): void => {
      finished = true;
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onErr);
      stdin.setRawMode(wasRaw);
      stdin.pause();
    };
    const feed = (chunk: Buffer): void => {
      for (let i = 0; i < chunk.length && !finished; i++) {
        const c = chunk[i]!;
        if (c === 0x0d || c === 0x0a) {
          typeAhead = Buffer.from(chunk.subarray(c === 0x0d && chunk[i + 1] === 0x0a ? i + 2 : i + 1));
          finish();
          const line = Buffer.from(bytes);
          wipe(bytes);
          resolve(line);
        } else if (c === 0x7f || c === 0x08) {
          bytes.pop();
        } else if (c === 0x15) {
          wipe(bytes);
          bytes.length = 0;
        } else if (c === 0x03) {
          finish();
          wipe(bytes);
          process.stderr.write('\n');
          process.kill(process.pid, 'SIGINT');
          reject(pwError('interrupted'));
        } else if (c === 0x04) {
          if (bytes.length === 0) {
            finish();
            reject(pwError('Could not read password from terminal: EOF'));
          }
        } else {
          bytes.push(c);
        }
      }
      wipe(chunk);
    };
    const onData = (chunk: Buffer): void => feed(chunk);
    const onEnd = (): void => {
      finish();
      wipe(bytes);
      reject(pwError('Could not read password from terminal: EOF'));
    };
    const onErr = (err: Error): void => {
      finish();
      wipe(bytes);
      reject(pwError(`Could not read password from terminal: ${err.message}`));
    };
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.on('error', onErr);
    if (typeAhead.length > 0) {
      const pending = typeAhead;
      typeAhead = Buffer.alloc(0);
      feed(pending);
    }
    if (!finished) stdin.resume();
  });
}

async function readPasswordTerminal(prompt: string, out: Output): Promise<Buffer> {
  let p: Buffer;
  try {
    p = await readTerminalLine(prompt, out);
  } finally {
    out.prompt('\n');
  }
  if (p.length === 0) throw pwError('Password is empty');
  if (p.length > MAX_PASSWORD_LEN) {
    wipe(p);
    throw pwError(`maximum password length of ${MAX_PASSWORD_LEN} bytes exceeded`);
  }
  return p;
}
