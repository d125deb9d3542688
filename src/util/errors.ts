/**
 * Node-style errors: every failure the library raises carries a `code`
 * (ENOENT, EIO, ...) and, for POSIX codes, the matching negative-free
 * `errno`, so callers (the CLI, the FUSE adapter) can map it without parsing
 * messages.
 */
import { constants } from 'node:os';

export interface CodedError extends Error {
  code: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

const errnoTable = constants.errno as Record<string, number>;

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
  const errno = errnoTable[code];
  if (errno !== undefined) err.errno = errno;
  if (syscall) err.syscall = syscall;
  if (path !== undefined) err.path = path;
  return err;
}

/** True for an error object with one of the given codes (any string code when none are given). */
export function hasCode(err: unknown, ...codes: string[]): err is CodedError {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as CodedError).code;
  return typeof code === 'string' && (codes.length === 0 || codes.includes(code));
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
