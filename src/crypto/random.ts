import { randomBytes as nodeRandomBytes, randomFillSync } from 'node:crypto';
import { invalidArgument } from './errors.js';

/** `n` bytes from the operating system's CSPRNG (nonces, file IDs, keys). */
export function randomBytes(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw invalidArgument(`randomBytes: bad length ${n}`);
  return nodeRandomBytes(n);
}

/** Fills `buf` from the operating system's CSPRNG and returns it. */
export function randomFill<T extends Uint8Array>(buf: T): T {
  return randomFillSync(buf);
}
