/**
 * tscryptfs as a library: open or create a gocryptfs-compatible cipher
 * directory and work on its plaintext view, with no FUSE involved.
 *
 *   import { Vault } from 'tscryptfs';
 *   const vault = await Vault.open('/path/to/cipherdir', { password: 'secret' });
 *   await vault.writeFile('/notes.txt', 'hello');
 */
export { Vault, VaultFile, formatFromInitOptions } from './vault/index.js';
export type {
  Password,
  VaultCommonOptions,
  VaultFormatOptions,
  VaultInitOptions,
  VaultOpenOptions,
  VaultPasswordOpenOptions,
  VaultMasterKeyOpenOptions,
  XattrSetMode,
} from './vault/index.js';
export { ReverseView, ReverseFile, Excluder, REVERSE_CONF_NAME } from './reverse/index.js';
export type { ReverseViewOptions, ReverseViewOpenOptions } from './reverse/index.js';
export type { CipherName, BackendName } from './crypto/aead.js';
export type { FormatOptions } from './config/format.js';
export type { Logger } from './util/logger.js';
export type { CodedError } from './util/errors.js';
export type { BackingStore } from './vault/index.js';
export type { ConflictEntry } from './names/conflict-dir.js';
