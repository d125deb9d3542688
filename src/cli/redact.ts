/**
 * Keeping the master key out of messages and out of the process's
 * command line. `-masterkey HEX` is a gocryptfs emergency feature; the key
 * must not show up in "Invalid command line" errors, -d's "cli args" line,
 * or /proc/PID/cmdline (ps) for as long as the process runs.
 */

/** Flags whose value is a secret. */
const SECRET_FLAGS: ReadonlySet<string> = new Set(['masterkey']);
/** Values that are not secrets themselves. */
const PUBLIC_VALUES: ReadonlySet<string> = new Set(['', 'stdin']);
export const REDACTED = '***';

const redactValue = (v: string): string => (PUBLIC_VALUES.has(v) ? v : REDACTED);

/** "-o a,masterkey=HEX,b" → "-o a,masterkey=***,b". */
function redactOValue(v: string): string {
  return v
    .split(',')
    .map((o) => {
      const eq = o.indexOf('=');
      return eq > 0 && SECRET_FLAGS.has(o.slice(0, eq)) ? `${o.slice(0, eq)}=${redactValue(o.slice(eq + 1))}` : o;
    })
    .join(',');
}

/** argv with every secret flag value replaced by "***" (flag syntax as flags/go-flags.ts reads it). */
export function redactArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const m = /^--?([A-Za-z0-9_-]+)(?:=(.*))?$/s.exec(a);
    if (!m) {
      out.push(a);
      continue;
    }
    const [, name, value] = m as unknown as [string, string, string | undefined];
    const secret = SECRET_FLAGS.has(name);
    if (!secret && name !== 'o') {
      out.push(a);
      continue;
    }
    const redact = secret ? redactValue : redactOValue;
    if (value !== undefined) {
      out.push(`${a.slice(0, a.indexOf('='))}=${redact(value)}`);
    } else {
      out.push(a);
      if (i + 1 < argv.length) out.push(redact(argv[++i]!));
    }
  }
  return out;
}

/**
 * When the command line holds a secret, overwrites the process's argument
 * memory with the redacted command line: Node's process.title (libuv)
 * writes into the original argv area, so /proc/PID/cmdline and ps show
 * "... -masterkey *** ..." from here on. (What ran before this point, and
 * the shell history, may still have seen the key; gocryptfs warns about it.)
 */
export function scrubProcessArgv(argv: readonly string[] = process.argv.slice(2)): boolean {
  const red = redactArgs(argv);
  if (red.every((x, i) => x === argv[i])) return false;
  process.title = [process.argv[0], process.argv[1], ...red].join(' ');
  return true;
}
