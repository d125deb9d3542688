export { Vault, formatFromInitOptions, LISTED_ATTRS, LISTED_NO_XATTRS, type Owner, type PackedListing, type RenameMode, type XattrSetMode } from './vault.js';
export { VaultFile } from './vault-file.js';
export type { FenceSlots, FileKey } from './write-fences.js';
export { fileDescriptor, internalAccess, type InternalAccess } from './internal-access.js';
export * from './options.js';
export { directoryTimesFollowChanges, storeLabel, type BackingStore } from './backing/store.js';
