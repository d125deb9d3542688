/**
 * Console output the way gocryptfs's tlog does it: informational lines on
 * stdout (silenced by -q), warnings and fatal errors on stderr, colours only
 * when both stdout and stderr are terminals and NO_COLOR is unset. With
 * -json, stdout carries the one JSON document only and informational and
 * debug lines go to stderr.
 */
import { isatty } from 'node:tty';

export const PROGRAM_NAME = 'tscryptfs';

export interface Colors {
  reset: string;
  grey: string;
  red: string;
  green: string;
  yellow: string;
}

const NO_COLORS: Colors = { reset: '', grey: '', red: '', green: '', yellow: '' };
const ANSI_COLORS: Colors = { reset: '\x1b[0m', grey: '\x1b[2m', red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m' };

/** Where the CLI writes; replaceable for in-process use. */
export interface Streams {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** One line with exactly one trailing newline (tlog trims one, log adds one). */
function line(msg: string): string {
  const trimmed = msg.endsWith('\n') ? msg.slice(0, -1) : msg;
  return trimmed.endsWith('\n') ? trimmed : `${trimmed}\n`;
}

export class Output {
  /** -q: no informational messages. */
  quiet = false;
  /** -d: debug messages. */
  debugEnabled = false;
  /** -wpanic: a warning ends the program (exit 2), as gocryptfs's panic does. */
  wpanic = false;
  /** -json: stdout is for the JSON document; info and debug lines go to stderr. */
  json = false;
  readonly colors: Colors;
  private readonly streams: Streams;

  constructor(streams: Streams = process, colors?: Colors) {
    this.streams = streams;
    this.colors = colors ?? (wantColors() ? ANSI_COLORS : NO_COLORS);
  }

  /** Unconditional output on stdout (help, -info, -version, -speed). */
  print(text: string): void {
    this.streams.stdout.write(text);
  }

  /** An informational line on stdout (stderr with -json), unless -q. */
  info(msg: string): void {
    if (!this.quiet) this.messages().write(line(msg));
  }

  /** A debug line on stdout (stderr with -json), only with -d. */
  debug(msg: string): void {
    if (this.debugEnabled) this.messages().write(line(msg));
  }

  /** The -json document: the only thing on stdout, indented, with a final newline. */
  printJson(value: unknown): void {
    this.streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  private messages(): Streams['stdout'] {
    return this.json ? this.streams.stderr : this.streams.stdout;
  }

  /** A line on stderr that is neither a warning nor an error (where messages go): silenced by -q, never a -wpanic panic. */
  notice(msg: string): void {
    if (!this.quiet) this.streams.stderr.write(line(`${PROGRAM_NAME}: ${msg}`));
  }

  /** A warning on stderr (yellow on a terminal). */
  warn(msg: string): void {
    const c = this.colors;
    this.streams.stderr.write(line(`${c.yellow}${PROGRAM_NAME}: ${msg}${c.reset}`));
    if (this.wpanic) panicOnWarning(msg, (m) => this.streams.stderr.write(line(m)));
  }

  /** The one error line before a non-zero exit (red on a terminal). */
  fatal(msg: string): void {
    const c = this.colors;
    this.streams.stderr.write(line(`${c.red}${PROGRAM_NAME}: ${msg}${c.reset}`));
  }

  /** Text for prompts on stderr (no newline added). */
  prompt(text: string): void {
    this.streams.stderr.write(text);
  }
}

function wantColors(): boolean {
  return process.env.NO_COLOR === undefined && isatty(1) && isatty(2);
}

/** Go's %q for a string, close enough for paths and arguments (JSON escaping). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go's %q for a []string: `["a" "b"]`. */
export function goQuoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}

/**
 * A one-line description of an error. Node's fs errors
 * ("ENOENT: no such file or directory, stat '/x'") are turned into Go's
 * order ("stat /x: no such file or directory"), as gocryptfs prints them.
 */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as NodeJS.ErrnoException & { dest?: string };
  if (typeof e.code === 'string' && typeof e.syscall === 'string' && e.message.startsWith(`${e.code}: `)) {
    const end = e.message.lastIndexOf(`, ${e.syscall}`);
    const desc = e.message.slice(e.code.length + 2, end > 0 ? end : undefined);
    const where = [e.syscall, e.path, e.dest].filter((x) => typeof x === 'string' && x !== '').join(' ');
    return `${where}: ${desc}`;
  }
  return e.message;
}

/**
 * -wpanic: "When encountering a warning, panic and exit immediately"
 * (gocryptfs, for regression tests). Go's panic exits with status 2; a
 * mount that panics is left dead, as gocryptfs's is.
 */
export function panicOnWarning(msg: string, write: (line: string) => void): never {
  write(`panic: -wpanic turns this warning into a panic: ${msg}`);
  process.exit(2);
}
