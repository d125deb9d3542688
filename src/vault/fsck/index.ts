export { fsckCipherdir, type FsckOptions } from './walk.js';
export { corruptPaths, type FsckFinding, type FsckKind, type FsckProgress, type FsckReport, type FsckSkip } from './findings.js';
