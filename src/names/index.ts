export * from './b64.js';
export * from './diriv.js';
export * from './longnames.js';
export * from './name-codec.js';
export * from './name-memo.js';
export * from './pad16.js';
export * from './valid-name.js';
export * from './b64-error.js';
