/** Argument checks shared by the Aead implementations. */
import type { BackendName } from './aead.js';
import { invalidArgument, requireLength } from './errors.js';

export const TAG_SIZE = 16;

export function requireBackend(backend: BackendName): BackendName {
  if (backend !== 'node' && backend !== 'noble') throw invalidArgument(`unknown crypto backend ${String(backend)}`);
  return backend;
}

export function requireNonce(nonce: Uint8Array, size: number, cipher: string): void {
  requireLength(nonce, size, `${cipher} nonce`);
}

export function requireBytes(data: Uint8Array, what: string): void {
  if (!(data instanceof Uint8Array)) throw invalidArgument(`${what} must be a Uint8Array`);
}
