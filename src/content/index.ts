export * from './layout.js';
export * from './header.js';
export * from './content-cipher.js';
