/**
 * @noble/ciphers, loaded on first use. It is the backend a user picks
 * ('noble', the CLI's -openssl=false), not the default, and importing it
 * costs every process about 30 ms (its AES tables are computed at import).
 * Its modules are ES modules, which Node loads synchronously with require
 * from 20.19 on (process.features.require_module); an older Node gets a
 * clear error when the backend is asked for.
 */
import { createRequire } from 'node:module';

type NobleAes = typeof import('@noble/ciphers/aes.js');
type NobleChaCha = typeof import('@noble/ciphers/chacha.js');

const requireModule = createRequire(import.meta.url);
let aes: NobleAes | undefined;
let chacha: NobleChaCha | undefined;

function load<T>(specifier: string): T {
  if (!process.features.require_module) {
    throw new Error(`the noble crypto backend needs Node.js 20.19 or later (this is ${process.version}), which loads ES modules with require`);
  }
  return requireModule(specifier) as T;
}

/** `@noble/ciphers/aes.js`. */
export function nobleAes(): NobleAes {
  return (aes ??= load<NobleAes>('@noble/ciphers/aes.js'));
}

/** `@noble/ciphers/chacha.js`. */
export function nobleChaCha(): NobleChaCha {
  return (chacha ??= load<NobleChaCha>('@noble/ciphers/chacha.js'));
}
