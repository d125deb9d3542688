/**
 * Errors to what FUSE wants: a negative errno. Vault errors carry POSIX
 * codes; anything else (a bug, a library error without a code) is EIO and
 * gets a log line, so it is never silent.
 */
import { constants } from 'node:os';
import type { Logger } from '../util/logger.js';
import { errnoOf } from '../util/errors.js';

const ERRNO = constants.errno as Record<string, number>;

export function toErrno(err: unknown, op: string, path: string, log: Logger): number {
  const code = (err as { code?: unknown })?.code;
  const n = typeof code === 'string' ? errnoOf(code) : undefined;
  if (n !== undefined) return -n;
  const errno = (err as { errno?: unknown })?.errno;
  if (typeof errno === 'number' && errno !== 0) return -Math.abs(errno);
  log.warn(`${op} ${path}: ${(err as Error)?.message ?? String(err)}`);
  return -ERRNO.EIO!;
}
