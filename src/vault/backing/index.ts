export { CipherTree, openCipherRoot, type Located } from './cipher-tree.js';
export { DIR_LIFETIME_MS, DirSlot, type CipherName } from './dir-cache.js';
