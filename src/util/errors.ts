/**
 * Node-style errors: every failure the library raises carries a `code`
 * (ENOENT, EIO, ...) and, for POSIX codes, the matching negative-free
 * `errno`, so callers (the CLI, the FUSE adapter) can map it without parsing
 * messages.
 */
import { constants } from 'node:os';
import { getSystemErrorName } from 'node:util';

export interface CodedError extends Error {
  code: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

const errnoTable = constants.errno as Record<string, number>;

/**
 * Linux names some errno numbers twice (95 is EOPNOTSUPP and ENOTSUP, 11 is
 * EAGAIN and EWOULDBLOCK, 35 is EDEADLK and EDEADLOCK), and each source of
 * an error picks its own: node:fs says ENOTSUP where the kernel's headers and
 * Python say EOPNOTSUPP. Codes are therefore compared by number. Node's
 * table lacks EDEADLOCK; it is added here.
 */
const extraAliases: Record<string, number> = { EDEADLOCK: 35 };

/** The errno number a POSIX code names (an alias gives its number), or undefined for other codes. */
export function errnoOf(code: string): number | undefined {
  return errnoTable[code] ?? extraAliases[code];
}

/** Node's own name where libuv has one (it lacks some, EDEADLK among them), else the table's first. */
const canonicalNames = new Map<number, string>();
for (const [name, n] of Object.entries(errnoTable)) {
  if (canonicalNames.has(n)) continue;
  let uv = '';
  try {
    uv = getSystemErrorName(-n);
  } catch {
    /* not an errno libuv knows */
  }
  canonicalNames.set(n, errnoTable[uv] === n ? uv : name);
}

/** One name for an errno number: the one node:fs puts in `code` (ENOTSUP for 95, EAGAIN for 11); EIO for a number Node does not know. */
export function errnoName(errno: number): string {
  return canonicalNames.get(Math.abs(errno)) ?? 'EIO';
}

/** Whether two codes are the same error: equal errno numbers for POSIX names, equal strings otherwise. */
export function sameCode(a: string, b: string): boolean {
  if (a === b) return true;
  const n = errnoOf(a);
  return n !== undefined && n === errnoOf(b);
}

/**
 * Builds an Error whose message reads like Node's own fs errors. It has no
 * stack trace: these are answers (ENOENT for a lookup, ENODATA for an
 * absent xattr), made thousands of times a second under a mount, and
 * capturing a stack is most of their cost.
 */
export function fsError(code: string, syscall?: string, path?: string, detail?: string): CodedError {
  const parts = [code];
  if (detail) parts.push(detail);
  let msg = parts.join(': ');
  if (syscall) msg += `, ${syscall}`;
  if (path !== undefined) msg += ` '${path}'`;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const err = new Error(msg) as CodedError;
  Error.stackTraceLimit = limit;
  err.code = code;
  const errno = errnoOf(code);
  if (errno !== undefined) err.errno = errno;
  if (syscall) err.syscall = syscall;
  if (path !== undefined) err.path = path;
  return err;
}

/**
 * True for an error object with one of the given codes (any string code
 * when none are given); aliases match (see sameCode), so `hasCode(err,
 * 'EOPNOTSUPP')` is true for node:fs's ENOTSUP.
 */
export function hasCode(err: unknown, ...codes: string[]): err is CodedError {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as CodedError).code;
  return typeof code === 'string' && (codes.length === 0 || codes.some((c) => sameCode(code, c)));
}

/** Errors specific to gocryptfs configuration handling (not POSIX). */
export type ConfigErrorCode =
  | 'ECONFIGMISSING' // no gocryptfs.conf
  | 'ECONFIGPARSE' // not JSON, empty, wrong field types
  | 'ECONFIGINVALID' // fails gocryptfs validation: unknown flag, version, scrypt limits
  | 'EPASSWORD' // master key did not unwrap: wrong password
  | 'EMASTERKEY' // a given master key is malformed
  | 'ECONFIGWRITE'; // could not write the config

export function configError(code: ConfigErrorCode, message: string, cause?: unknown): CodedError {
  const err = new Error(message, cause === undefined ? undefined : { cause }) as CodedError;
  err.code = code;
  return err;
}
