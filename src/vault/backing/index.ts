export { CipherTree, openCipherRoot, type Located } from './cipher-tree.js';
export { DirSlot, type CipherName } from './dir-cache.js';
