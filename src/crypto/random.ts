import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { invalidArgument } from './errors.js';

/** `n` bytes from the operating system's CSPRNG (nonces, file IDs, keys). */
export function randomBytes(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw invalidArgument(`randomBytes: bad length ${n}`);
  return nodeRandomBytes(n);
}
