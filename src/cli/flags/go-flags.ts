/**
 * Reading a command line the way Go programs do, for both of our commands:
 *
 *   -flag and --flag are the same; -flag=value and -flag value both work
 *   (the next word is the value, whatever it looks like); booleans take
 *   no value or an inline =true/=false (-raw64=false); "--" ends the flags.
 *
 * tscryptfs reads flags anywhere on the line, as gocryptfs's pflag does
 * (interspersed); tscryptfs-xray stops at the first argument that is not
 * a flag, as gocryptfs-xray's Go flag package does. Each command words
 * the errors in its library's style, from the GoFlagError it gets.
 *
 * expandOArgs is gocryptfs's own step before that: "-o a,b" means "-a -b".
 */
import { CliError, EXIT } from '../exit-codes.js';
import type { FlagLookup, FlagSpec } from './flag-table.js';
import { parseGoBool } from './go-values.js';

/** One item of a scanned command line. */
export type FlagWord =
  /** A flag: booleans carry true/false, the others the text of their value. */
  | { type: 'flag'; spec: FlagSpec; value: boolean | string }
  /** A "--" that ended the flags (the arguments after it follow). */
  | { type: 'end' }
  | { type: 'arg'; value: string };

export type GoFlagProblem =
  /** No flag of that name. */
  | 'unknown'
  /** A flag that takes a value came last. */
  | 'needs-value'
  /** "=value" on a boolean is not a Go boolean. */
  | 'not-bool'
  /** No name after the dashes, or a third dash ("-=x", "---x"). */
  | 'bad-syntax';

/**
 * A command line the scanner cannot read: `flag` is the name as written
 * (without dashes), `word` the whole word it came from.
 */
export class GoFlagError extends Error {
  constructor(
    readonly problem: GoFlagProblem,
    readonly word: string,
    readonly flag: string,
    readonly value?: string,
  ) {
    super(`${problem}: ${word}`);
    this.name = 'GoFlagError';
  }
}

export interface ScanOptions {
  /** true: flags may follow arguments (pflag); false: the first argument ends the flags (Go's flag package). */
  interspersed: boolean;
}

/**
 * The flags and arguments of `argv`, in order. Throws GoFlagError at the
 * first word it cannot read (so a caller that stops early, as Go's flag
 * package does on -h, never sees the errors after that word).
 */
export function* scanGoFlags(argv: readonly string[], lookup: FlagLookup, opts: ScanOptions): Generator<FlagWord, void, undefined> {
  let i = 0;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') {
      yield { type: 'end' };
      i++;
      break;
    }
    if (word.length < 2 || !word.startsWith('-')) {
      // An argument, or a lone "-".
      if (!opts.interspersed) break;
      yield { type: 'arg', value: word };
      continue;
    }
    const body = word.startsWith('--') ? word.slice(2) : word.slice(1);
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const inline = eq >= 0 ? body.slice(eq + 1) : undefined;
    if (name === '' || name.startsWith('-')) throw new GoFlagError('bad-syntax', word, name);
    const spec = lookup(name);
    if (!spec) throw new GoFlagError('unknown', word, name);
    if (spec.kind === 'bool') {
      const on = inline === undefined ? true : parseGoBool(inline);
      if (on === undefined) throw new GoFlagError('not-bool', word, name, inline);
      yield { type: 'flag', spec, value: on };
    } else if (inline !== undefined) {
      yield { type: 'flag', spec, value: inline };
    } else if (i + 1 < argv.length) {
      // The next word is the value, whatever it looks like (so, unlike
      // gocryptfs, tscryptfs keeps "-X" of "-extpass -X" intact).
      yield { type: 'flag', spec, value: argv[++i]! };
    } else {
      throw new GoFlagError('needs-value', word, name);
    }
  }
  for (; i < argv.length; i++) yield { type: 'arg', value: argv[i]! };
}

/**
 * Generic mount(8) options that mount.fuse passes through from /etc/fstab
 * and that are the kernel's business, not flags of ours: they go to -ko.
 */
const KERNEL_MOUNT_OPTIONS = new Set(['atime', 'noatime', 'relatime', 'norelatime', 'strictatime', 'nostrictatime', 'diratime', 'nodiratime', 'sync', 'async', 'dirsync', 'lazytime', 'nolazytime']);

/**
 * gocryptfs's prefixOArgs: "-o a,b" (or "-o=a,b") anywhere turns into
 * leading "-a -b". Disabled when "--" is present. Kernel mount options
 * (noatime, ...) are collected into one -ko.
 */
export function expandOArgs(argv: readonly string[]): string[] {
  if (argv.length < 2 || argv.includes('--')) return [...argv];
  const oOpts: string[] = [];
  const other: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-o') {
      if (i + 1 >= argv.length) throw new CliError(EXIT.Usage, 'The "-o" option requires an argument');
      oOpts.push(...argv[i + 1]!.split(','));
      i++;
    } else if (a.startsWith('-o=')) {
      oOpts.push(...a.slice(3).split(','));
    } else {
      other.push(a);
    }
  }
  const out: string[] = [];
  const kernel: string[] = [];
  for (const o of oOpts) {
    if (o === '') continue;
    if (o === 'o' || o === '-o') throw new CliError(EXIT.Usage, 'You can\'t pass "-o" to "-o"');
    if (KERNEL_MOUNT_OPTIONS.has(o)) kernel.push(o);
    else out.push(`-${o}`);
  }
  if (kernel.length > 0) out.push(`-ko=${kernel.join(',')}`);
  return [...out, ...other];
}
