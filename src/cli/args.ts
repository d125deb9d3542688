/**
 * Command-line parsing with gocryptfs's conventions (Go pflag behind a
 * single-dash compatibility layer):
 *
 *   -flag and --flag are the same; -flag=value and -flag value both work;
 *   booleans take an optional =true/=false (-raw64=false); -h stays the
 *   help shorthand; "--" ends option parsing; "-o a,b" at any position
 *   means "-a -b" (mount(8) style); list options (-extpass, -passfile, ...)
 *   may be repeated and split their value on commas like pflag's
 *   StringSlice.
 *
 * normaliseArgv() rewrites argv into plain commander syntax (canonical
 * "--name", "--no-name" for =false, values as separate words) and reports
 * unknown flags and missing values itself; commander then does the actual
 * parsing, value conversion and the layout of the long help.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CliError, EXIT } from './exit-codes.js';
import { goQuote, PROGRAM_NAME } from './output.js';
import { redactArgs } from './redact.js';

export type FlagKind = 'bool' | 'string' | 'int' | 'uint8' | 'duration' | 'list';

/** Which part of the program a flag belongs to (for -hh grouping and checks). */
export type FlagStatus =
  /** Implemented now. */
  | 'ok'
  /** A mount option: read by the mount action (-hh marks it [mount]). */
  | 'mount'
  /** Accepted for compatibility, has no effect (as in gocryptfs). */
  | 'ignored'
  /** Parsed, but using it exits with "not implemented yet" (exit 1). */
  | 'unimplemented';

export interface FlagSpec {
  /** Canonical name without dashes, e.g. "deterministic-names". */
  name: string;
  kind: FlagKind;
  /** Other spellings (without dashes), e.g. "q" for "quiet". */
  aliases?: readonly string[];
  /** Metavariable shown in help for value flags. */
  metavar?: string;
  /** Default when not given (bool default false, list default []). */
  default?: boolean | string | number;
  status: FlagStatus;
  help: string;
}

/** Every flag gocryptfs 2.3 knows, plus -aegis; in -hh order (sorted by name). */
export const FLAGS: readonly FlagSpec[] = [
  // actions
  { name: 'init', kind: 'bool', status: 'ok', help: 'Initialize an empty CIPHERDIR' },
  { name: 'info', kind: 'bool', status: 'ok', help: 'Print the settings stored in the config file of CIPHERDIR' },
  { name: 'passwd', kind: 'bool', status: 'ok', help: 'Change the password (re-wrap the master key)' },
  { name: 'fsck', kind: 'bool', status: 'ok', help: 'Check CIPHERDIR for corruption (read-only; exit code 26 when problems are found)' },
  { name: 'speed', kind: 'bool', status: 'ok', help: 'Measure the encryption speed of every cipher and backend' },
  { name: 'version', kind: 'bool', status: 'ok', help: 'Print the version and exit' },
  { name: 'help', kind: 'bool', aliases: ['h'], status: 'ok', help: 'Print the short help text' },
  { name: 'hh', kind: 'bool', status: 'ok', help: 'Print this long help text with all options' },
  // -init format options
  { name: 'aessiv', kind: 'bool', status: 'ok', help: 'Content cipher AES-SIV-512 (with -init; with -masterkey for mounting)' },
  { name: 'xchacha', kind: 'bool', status: 'ok', help: 'Content cipher XChaCha20-Poly1305 (with -init; with -masterkey for mounting)' },
  { name: 'aegis', kind: 'bool', status: 'ok', help: 'Content cipher AEGIS-256X2, as gocryptfs\'s unmerged aegis branch (with -init)' },
  { name: 'plaintextnames', kind: 'bool', status: 'ok', help: 'Do not encrypt file names and symlink targets (with -init)' },
  { name: 'deterministic-names', kind: 'bool', status: 'ok', help: 'No per-directory gocryptfs.diriv, identical names encrypt identically (with -init)' },
  { name: 'longnamemax', kind: 'uint8', metavar: 'N', default: 255, status: 'ok', help: 'Hash encrypted names longer than N bytes, 62..255 (with -init)' },
  { name: 'raw64', kind: 'bool', default: true, status: 'ok', help: 'Unpadded base64 for encrypted names; -raw64=false describes a padded-base64 filesystem (with -masterkey) or makes one (with -init, where gocryptfs 2.x ignores it)' },
  { name: 'hkdf', kind: 'bool', default: true, status: 'ok', help: 'Derive subkeys with HKDF; -hkdf=false describes a legacy (pre-v1.3) filesystem (with -masterkey) or makes one (with -init, where gocryptfs 2.x ignores it)' },
  { name: 'scryptn', kind: 'int', metavar: 'N', default: 16, status: 'ok', help: 'scrypt cost as log2(N), 10..28; lower is faster but weaker against brute force (with -init, -passwd)' },
  { name: 'reverse', kind: 'bool', status: 'ok', help: 'Reverse mode: read-only encrypted view of a plaintext directory (implies -aessiv)' },
  { name: 'fido2', kind: 'string', metavar: 'DEVICE', status: 'unimplemented', help: 'Protect the master key with a FIDO2 token (not supported)' },
  // password and key sources
  { name: 'extpass', kind: 'list', metavar: 'CMD', status: 'ok', help: 'Read the password from the first output line of this program (split on spaces if given once; repeat for literal arguments)' },
  { name: 'passfile', kind: 'list', metavar: 'FILE', status: 'ok', help: 'Read the password from the first line of FILE (repeat to concatenate several files)' },
  { name: 'masterkey', kind: 'string', metavar: 'HEX', status: 'ok', help: 'Use this master key (64 hex digits, dashes ignored, or "stdin") instead of the config file password' },
  { name: 'zerokey', kind: 'bool', status: 'ok', help: 'Use an all-zero master key (testing only, no security)' },
  { name: 'config', kind: 'string', metavar: 'FILE', status: 'ok', help: 'Config file to use instead of CIPHERDIR/gocryptfs.conf' },
  // general
  { name: 'quiet', kind: 'bool', aliases: ['q'], status: 'ok', help: 'Do not print informational messages' },
  { name: 'debug', kind: 'bool', aliases: ['d'], status: 'ok', help: 'Print debug messages' },
  { name: 'openssl', kind: 'string', metavar: 'BOOL|auto', default: 'auto', status: 'ok', help: 'Crypto backend: true = node:crypto (OpenSSL), false = noble (pure TypeScript), auto = node:crypto' },
  { name: 'wpanic', kind: 'bool', status: 'ok', help: 'When encountering a warning, panic and exit immediately (exit code 2; a mount is left dead, as gocryptfs\'s)' },
  { name: 'nosyslog', kind: 'bool', status: 'mount', help: 'Do not redirect messages to syslog in the background' },
  // mount options
  { name: 'fg', kind: 'bool', aliases: ['f'], status: 'mount', help: 'Stay in the foreground' },
  { name: 'ro', kind: 'bool', status: 'mount', help: 'Mount read-only' },
  { name: 'rw', kind: 'bool', status: 'mount', help: 'Mount read-write (default)' },
  { name: 'allow_other', kind: 'bool', status: 'mount', help: 'Allow other users to access the mount (needs user_allow_other in /etc/fuse.conf)' },
  { name: 'nonempty', kind: 'bool', status: 'mount', help: 'Allow mounting over a non-empty directory' },
  { name: 'idle', kind: 'duration', aliases: ['i'], metavar: 'DURATION', status: 'mount', help: 'Unmount after this idle time, like "500s" or "2h45m" (0 = never)' },
  { name: 'kernel_cache', kind: 'bool', status: 'mount', help: 'Enable the FUSE kernel_cache option' },
  { name: 'fsname', kind: 'string', metavar: 'NAME', status: 'mount', help: 'Filesystem name shown in mount(8)' },
  { name: 'ko', kind: 'string', metavar: 'OPTS', status: 'mount', help: 'Extra comma-separated options passed to the kernel' },
  { name: 'o', kind: 'string', metavar: 'OPTS', status: 'ok', help: 'Comma-separated options, "-o a,b" is the same as "-a -b" (mount(8) compatibility)' },
  { name: 'sharedstorage', kind: 'bool', status: 'mount', help: 'Safer concurrent access to a shared CIPHERDIR' },
  { name: 'dev', kind: 'bool', status: 'mount', help: 'Allow device files to be used (they are created either way; without -dev the mount is nodev)' },
  { name: 'nodev', kind: 'bool', status: 'mount', help: 'Deny device files' },
  { name: 'suid', kind: 'bool', status: 'mount', help: 'Allow suid/sgid executables' },
  { name: 'nosuid', kind: 'bool', status: 'mount', help: 'Deny suid/sgid executables' },
  { name: 'exec', kind: 'bool', status: 'mount', help: 'Allow executables' },
  { name: 'noexec', kind: 'bool', status: 'mount', help: 'Deny executables' },
  { name: 'acl', kind: 'bool', status: 'mount', help: 'Enforce ACLs: the kernel checks POSIX ACLs (stored unencrypted, as gocryptfs stores them) and new entries inherit default ACLs' },
  { name: 'fusedebug', kind: 'bool', status: 'mount', help: 'Print FUSE debug messages' },
  { name: 'notifypid', kind: 'int', metavar: 'PID', default: 0, status: 'mount', help: 'Send SIGUSR1 to PID after mounting (used for daemonizing)' },
  { name: 'force_owner', kind: 'string', metavar: 'UID:GID', status: 'mount', help: 'Show every file as owned by UID:GID (implies -allow_other)' },
  { name: 'longnames', kind: 'bool', default: true, status: 'mount', help: 'Store names longer than 175 bytes in gocryptfs.longname.* files; only with -masterkey (gocryptfs v0.8 and older), ignored otherwise as in gocryptfs' },
  { name: 'noprealloc', kind: 'bool', status: 'mount', help: 'Do not preallocate space before writing' },
  { name: 'serialize_reads', kind: 'bool', status: 'mount', help: 'Have the kernel send reads one at a time and in order (libfuse\'s sync_read), for backing storage that is slow at concurrent reads' },
  { name: 'one-file-system', kind: 'bool', status: 'mount', help: 'Do not cross filesystem boundaries' },
  { name: 'badname', kind: 'list', metavar: 'GLOB', status: 'mount', help: 'Show names that do not decrypt but match GLOB (Go filepath.Match syntax) as the part that decrypts, the rest, and " GOCRYPTFS_BAD_NAME", instead of hiding them (repeatable)' },
  { name: 'ctlsock', kind: 'string', metavar: 'PATH', status: 'ok', help: 'Create a control socket at PATH (path translation, owner only)' },
  { name: 'exclude', kind: 'list', aliases: ['e'], metavar: 'PATH', status: 'ok', help: 'Exclude relative PATH from the reverse view (reverse mode)' },
  { name: 'exclude-wildcard', kind: 'list', aliases: ['ew'], metavar: 'PATTERN', status: 'ok', help: 'Exclude gitignore-style PATTERN from the reverse view (reverse mode)' },
  { name: 'exclude-from', kind: 'list', metavar: 'FILE', status: 'ok', help: 'Read gitignore-style exclusion patterns from FILE (reverse mode)' },
  { name: 'cpuprofile', kind: 'string', metavar: 'FILE', status: 'unimplemented', help: 'Go profiling option of gocryptfs (not supported)' },
  { name: 'memprofile', kind: 'string', metavar: 'FILE', status: 'unimplemented', help: 'Go profiling option of gocryptfs (not supported)' },
  { name: 'trace', kind: 'string', metavar: 'FILE', status: 'unimplemented', help: 'Go execution trace option of gocryptfs (not supported)' },
  // accepted and ignored, as in gocryptfs
  { name: 'nofail', kind: 'bool', status: 'ignored', help: 'Ignored (for /etc/fstab compatibility)' },
  { name: 'devrandom', kind: 'bool', status: 'ignored', help: 'Obsolete, ignored' },
  { name: 'forcedecode', kind: 'bool', status: 'ignored', help: 'Obsolete, ignored' },
];

const BY_NAME = new Map<string, FlagSpec>();
for (const f of FLAGS) {
  BY_NAME.set(f.name, f);
  for (const a of f.aliases ?? []) BY_NAME.set(a, f);
}

/** Looks up a flag by canonical name or alias (no dashes). */
export function findFlag(name: string): FlagSpec | undefined {
  return BY_NAME.get(name);
}

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

/** Go's strconv.ParseBool. */
export function parseGoBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/**
 * Rewrites argv (already -o expanded) into commander syntax. Throws a
 * usage CliError for unknown flags, missing values and bad booleans.
 */
export function normaliseArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a.length < 2 || !a.startsWith('-')) {
      out.push(a); // positional, or a lone "-"
      continue;
    }
    const body = a.startsWith('--') ? a.slice(2) : a.slice(1);
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const inline = eq >= 0 ? body.slice(eq + 1) : undefined;
    const spec = name === '' ? undefined : findFlag(name);
    if (!spec) throw usageError(argv, `unknown flag: --${name}`);
    if (spec.kind === 'bool') {
      if (inline === undefined) {
        out.push(`--${spec.name}`);
      } else {
        const b = parseGoBool(inline);
        if (b === undefined) throw usageError(argv, `invalid argument ${goQuote(inline)} for "--${name}" flag: not a boolean (true/false)`);
        out.push(b ? `--${spec.name}` : `--no-${spec.name}`);
      }
      continue;
    }
    if (inline !== undefined) {
      out.push(`--${spec.name}`, inline);
    } else if (i + 1 < argv.length) {
      // The next word is the value, whatever it looks like (unlike
      // gocryptfs, "-extpass -X" keeps "-X" intact).
      out.push(`--${spec.name}`, argv[i + 1]!);
      i++;
    } else {
      throw usageError(argv, `flag needs an argument: --${name}`);
    }
  }
  return out;
}

/** pflag's StringSlice splits each value like one CSV record. */
export function splitCsv(value: string): string[] {
  if (value === '') return [];
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  let atFieldStart = true;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (quoted) {
      if (c === '"') {
        if (value[i + 1] === '"') {
          cur += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c === '"' && atFieldStart) {
      quoted = true;
      atFieldStart = false;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
      atFieldStart = true;
    } else {
      cur += c;
      atFieldStart = false;
    }
  }
  if (quoted) throw new InvalidArgumentError('unterminated quote');
  out.push(cur);
  return out;
}

/** Go's strconv.ParseInt(s, 0, bits): decimal, 0x hex, 0o/0 octal, 0b binary, optional sign. */
export function parseGoInt(s: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (!m) return undefined;
  let digits = m[2]!.replace(/_/g, '');
  let radix = 10;
  if (/^0[xX]/.test(digits)) {
    radix = 16;
    digits = digits.slice(2);
  } else if (/^0[bB]/.test(digits)) {
    radix = 2;
    digits = digits.slice(2);
  } else if (/^0[oO]/.test(digits)) {
    radix = 8;
    digits = digits.slice(2);
  } else if (digits.length > 1 && digits.startsWith('0')) {
    radix = 8;
    digits = digits.slice(1);
  }
  if (digits === '') return m[2] === '0' ? 0 : undefined;
  const n = parseInt(digits, radix);
  if (!Number.isSafeInteger(n)) return undefined;
  return m[1] === '-' ? -n : n;
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration, in milliseconds. */
export function parseGoDuration(s: string): number | undefined {
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const m = re.exec(rest);
    if (!m) return undefined;
    total += parseFloat(m[1]!) * DURATION_UNITS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
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
      return (v, prev) => [...(Array.isArray(prev) ? (prev as string[]) : []), ...splitCsv(v)];
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
