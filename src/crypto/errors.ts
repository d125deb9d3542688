/**
 * Argument errors raised by the crypto layer. Authentication failures use
 * `authError()` from `aead.ts` (code `EAUTH`); everything a caller got wrong
 * (key, nonce or data of the wrong size, unknown cipher or backend) is
 * `EINVAL`, like the errno Node's own fs functions report for bad arguments.
 */
export type InvalidArgumentError = Error & { code: 'EINVAL' };

export function invalidArgument(message: string): InvalidArgumentError {
  const err = new Error(message) as InvalidArgumentError;
  err.code = 'EINVAL';
  return err;
}

/** Throws EINVAL unless `bytes` is a Uint8Array (Buffer included) of one of the allowed lengths. */
export function requireLength(bytes: Uint8Array, allowed: number | readonly number[], what: string): void {
  if (!(bytes instanceof Uint8Array)) throw invalidArgument(`${what} must be a Uint8Array`);
  const ok = typeof allowed === 'number' ? bytes.length === allowed : allowed.includes(bytes.length);
  if (!ok) {
    const want = typeof allowed === 'number' ? String(allowed) : allowed.join(', ');
    throw invalidArgument(`${what} must be ${want} bytes long, got ${bytes.length}`);
  }
}
