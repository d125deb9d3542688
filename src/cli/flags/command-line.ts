/**
 * tscryptfs's command line on top of commander: the Go-style scanner
 * (./go-flags.ts) reads argv against the flag table and this module
 * rewrites it into plain commander syntax (canonical "--name", "--no-name"
 * for =false, values as separate words); commander then converts the
 * values (Go syntax, ./go-values.ts), collects repeated list flags and
 * lays out the long help. Errors come out as gocryptfs words them: exit 1,
 * "Invalid command line: ...", with pflag's phrases.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
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

/**
 * Rewrites argv (already -o expanded) into commander syntax. Throws a
 * usage CliError for unknown flags, missing values and bad booleans.
 */
export function normaliseArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  try {
    for (const w of scanGoFlags(argv, findFlag, { interspersed: true })) {
      if (w.type === 'arg') out.push(w.value);
      else if (w.type === 'end') out.push('--');
      else if (w.value === true) out.push(`--${w.spec.name}`);
      else if (w.value === false) out.push(`--no-${w.spec.name}`);
      else out.push(`--${w.spec.name}`, w.value);
    }
  } catch (err) {
    if (err instanceof GoFlagError) throw usageError(argv, pflagMessage(err));
    throw err;
  }
  return out;
}

function valueParser(spec: FlagSpec): ((value: string, previous: unknown) => unknown) | undefined {
  switch (spec.kind) {
    case 'int':
      return (v) => {
        const n = parseGoInt(v);
        if (n === undefined || n < -(2 ** 31) || n >= 2 ** 31) throw new InvalidArgumentError('not an integer');
        return n;
      };
    case 'uint8':
      return (v) => {
        const n = parseGoInt(v);
        if (n === undefined || n < 0 || n > 255) throw new InvalidArgumentError('not an integer in 0..255');
        return n;
      };
    case 'duration':
      return (v) => {
        const ms = parseGoDuration(v);
        if (ms === undefined) throw new InvalidArgumentError('not a duration like "500s" or "2h45m"');
        return ms;
      };
    case 'list':
      return (v, prev) => {
        const items = splitCsv(v);
        if (items === undefined) throw new InvalidArgumentError('unterminated quote');
        return [...(Array.isArray(prev) ? (prev as string[]) : []), ...items];
      };
    default:
      return undefined;
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

/** The commander program: one option per flag (plus hidden --no-X for booleans). */
export function buildCommand(): Command {
  const cmd = new Command(PROGRAM_NAME);
  cmd.helpOption(false);
  cmd.exitOverride();
  cmd.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  cmd.allowExcessArguments(true);
  cmd.argument('[args...]');
  for (const spec of FLAGS) {
    const flags = spec.kind === 'bool' ? `--${spec.name}` : `--${spec.name} <${spec.metavar ?? 'VALUE'}>`;
    const opt = new Option(flags, spec.help);
    const parser = valueParser(spec);
    if (parser) opt.argParser(parser);
    cmd.addOption(opt);
    if (spec.kind === 'bool') cmd.addOption(new Option(`--no-${spec.name}`).hideHelp());
  }
  return cmd;
}

/** The commander attribute name of a flag ("deterministic-names" → "deterministicNames"). */
function attributeOf(cmd: Command, spec: FlagSpec): string {
  const opt = cmd.options.find((o) => o.long === `--${spec.name}`);
  return opt ? opt.attributeName() : spec.name;
}

/** Parses argv (without node and the script path). Throws CliError(1) on usage errors. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const expanded = expandOArgs(argv);
  const normal = normaliseArgv(expanded);
  const cmd = buildCommand();
  try {
    cmd.parse(normal, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      throw usageError(argv, err.message.replace(/^error: /, '').replace(/\.$/, ''));
    }
    throw err;
  }
  const opts = cmd.opts();
  const values = new Map<string, boolean | string | number | string[]>();
  const given = new Set<string>();
  for (const spec of FLAGS) {
    const attr = attributeOf(cmd, spec);
    const v: unknown = opts[attr];
    if (v === undefined) {
      values.set(spec.name, defaultOf(spec));
    } else {
      values.set(spec.name, v as boolean | string | number | string[]);
      given.add(spec.name);
    }
  }
  return { values, given, positional: [...cmd.args], argv };
}
