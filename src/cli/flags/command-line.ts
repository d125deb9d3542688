/**
 * tscryptfs's command line: the Go-style scanner (./go-flags.ts) reads
 * argv against the flag table, and this module converts the values (Go
 * syntax, ./go-values.ts) and fills in the defaults. Errors come out as
 * gocryptfs words them: exit 1, "Invalid command line: ...", with pflag's
 * phrases. Commander only lays out the help (../help.ts), loaded by -h
 * and -hh alone: loading it costs a fifth of Node's own start
 * (Documentation/performance.md, "Start-up").
 */
import { CliError, EXIT } from '../exit-codes.js';
import { goQuote, PROGRAM_NAME } from '../output.js';
import { redactArgs } from '../redact.js';
import { FLAGS, findFlag, type FlagSpec } from './flag-table.js';
import { expandOArgs, GoFlagError, scanGoFlags } from './go-flags.js';
import { parseGoDuration, parseGoInt, splitCsv } from './go-values.js';

/** The parsed command line. Values are typed by kind; see FLAGS for names. */
export interface ParsedArgs {
  /** Flag values by canonical name (every flag present, defaults filled in). */
  values: ReadonlyMap<string, boolean | string | number | string[]>;
  /** Canonical names of the flags given on the command line (Go's flagSet.Visit). */
  given: ReadonlySet<string>;
  /** Positional arguments (CIPHERDIR, MOUNTPOINT). */
  positional: string[];
  /** The original argv (without node and script), for messages. */
  argv: readonly string[];
}

export function bool(a: ParsedArgs, name: string): boolean {
  return a.values.get(name) === true;
}
export function str(a: ParsedArgs, name: string): string {
  const v = a.values.get(name);
  return typeof v === 'string' ? v : '';
}
export function num(a: ParsedArgs, name: string): number {
  const v = a.values.get(name);
  return typeof v === 'number' ? v : 0;
}
export function list(a: ParsedArgs, name: string): string[] {
  const v = a.values.get(name);
  return Array.isArray(v) ? v : [];
}

/** Go's %q of the whole command line, as in gocryptfs's "Invalid command line" message; secrets redacted. */
export function prettyArgs(argv: readonly string[]): string {
  return [PROGRAM_NAME, ...redactArgs(argv)].map(goQuote).join(' ');
}

function usageError(argv: readonly string[], detail: string): CliError {
  return new CliError(EXIT.Usage, `Invalid command line: ${prettyArgs(argv)}: ${detail}. Try '${PROGRAM_NAME} -help'.`);
}

/** pflag's message for what the scanner could not read. */
function pflagMessage(err: GoFlagError): string {
  switch (err.problem) {
    case 'unknown':
      return `unknown flag: --${err.flag}`;
    case 'needs-value':
      return `flag needs an argument: --${err.flag}`;
    case 'not-bool':
      return `invalid argument ${goQuote(err.value ?? '')} for "--${err.flag}" flag: not a boolean (true/false)`;
    case 'bad-syntax':
      // gocryptfs hands pflag "-x" as "--x".
      return `bad flag syntax: ${err.word.startsWith('--') ? err.word : `-${err.word}`}`;
  }
}

/** A flag value that does not convert to the flag's kind, with pflag's reason. */
class BadValue extends Error {}

/** The value of one occurrence of `spec` (after `previous` for list flags). */
function convert(spec: FlagSpec, value: boolean | string, previous: unknown): boolean | string | number | string[] {
  if (typeof value === 'boolean') return value;
  switch (spec.kind) {
    case 'int': {
      const n = parseGoInt(value);
      if (n === undefined || n < -(2 ** 31) || n >= 2 ** 31) throw new BadValue('not an integer');
      return n;
    }
    case 'uint8': {
      const n = parseGoInt(value);
      if (n === undefined || n < 0 || n > 255) throw new BadValue('not an integer in 0..255');
      return n;
    }
    case 'duration': {
      const ms = parseGoDuration(value);
      if (ms === undefined) throw new BadValue('not a duration like "500s" or "2h45m"');
      return ms;
    }
    case 'list': {
      const items = splitCsv(value);
      if (items === undefined) throw new BadValue('unterminated quote');
      return [...(Array.isArray(previous) ? (previous as string[]) : []), ...items];
    }
    default:
      return value;
  }
}

function defaultOf(spec: FlagSpec): boolean | string | number | string[] {
  if (spec.default !== undefined) return spec.default;
  switch (spec.kind) {
    case 'bool':
      return false;
    case 'list':
      return [];
    case 'string':
      return '';
    default:
      return 0;
  }
}

/**
 * Parses argv (without node and the script path): "-o" expanded, then
 * Go's flag syntax read against the flag table, interspersed with the
 * positional arguments, as pflag reads gocryptfs's. A later occurrence
 * of a flag replaces an earlier one; list flags collect. Throws
 * CliError(1) with pflag's message for unknown flags, missing values and
 * values of the wrong kind.
 */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const given = new Map<string, boolean | string | number | string[]>();
  const positional: string[] = [];
  let spec: FlagSpec | undefined;
  let text = '';
  try {
    for (const w of scanGoFlags(expandOArgs(argv), findFlag, { interspersed: true })) {
      if (w.type === 'arg') positional.push(w.value);
      else if (w.type === 'flag') {
        spec = w.spec;
        text = String(w.value);
        given.set(spec.name, convert(spec, w.value, given.get(spec.name)));
      }
    }
  } catch (err) {
    if (err instanceof GoFlagError) throw usageError(argv, pflagMessage(err));
    if (err instanceof BadValue) throw usageError(argv, `invalid argument ${goQuote(text)} for "--${spec!.name}" flag: ${err.message}`);
    throw err;
  }
  const values = new Map<string, boolean | string | number | string[]>();
  for (const f of FLAGS) values.set(f.name, given.get(f.name) ?? defaultOf(f));
  return { values, given: new Set(given.keys()), positional, argv };
}
