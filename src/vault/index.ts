export { Vault, formatFromInitOptions, type XattrSetMode } from './vault.js';
export { VaultFile } from './vault-file.js';
export * from './options.js';
