export { fsckCipherdir, type FsckOptions } from './walk.js';
export { conflictCount, corruptPaths, isCorruption, CONFLICT_KINDS, type FsckFinding, type FsckKind, type FsckProgress, type FsckReport, type FsckSkip } from './findings.js';
