export * from './conf-file.js';
export * from './config-io.js';
export * from './config.js';
export * from './feature-flags.js';
export * from './format.js';
export * from './master-key.js';
export * from './scrypt.js';
