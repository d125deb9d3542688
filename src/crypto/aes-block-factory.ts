/** Picks the AES block implementation for a backend. */
import type { BackendName } from './aead.js';
import type { AesBlockCipher } from './aes-block.js';
import { NodeAesBlockCipher } from './aes-block-node.js';
import { NobleAesBlockCipher } from './aes-block-noble.js';
import { invalidArgument, requireLength } from './errors.js';

/** An AES block cipher keyed with `key` (16, 24 or 32 bytes). */
export function createAesBlockCipher(key: Uint8Array, backend: BackendName = 'node'): AesBlockCipher {
  requireLength(key, [16, 24, 32], 'AES key');
  switch (backend) {
    case 'node':
      return new NodeAesBlockCipher(key);
    case 'noble':
      return new NobleAesBlockCipher(key);
    default:
      throw invalidArgument(`unknown crypto backend ${String(backend)}`);
  }
}
