/**
 * What a filesystem check reports: one finding per problem, each naming
 * the plaintext path (relative to the root, "" for the root itself, as
 * gocryptfs -fsck prints them) and the cipher path it was found at.
 */

export type FsckKind =
  /** An entry name that does not decrypt (shown as dir/ciphername). */
  | 'name'
  /** A gocryptfs.longname.* entry whose .name file is missing, unreadable or does not hash to it. */
  | 'longname'
  /** A gocryptfs.longname.*.name file with no entry beside it. */
  | 'orphan-name-file'
  /** A directory whose gocryptfs.diriv is missing, unreadable, of the wrong size or all zero. */
  | 'diriv'
  /** A file shorter than a header, or with a bad header (version, all-zero file ID). */
  | 'header'
  /** A content block that does not authenticate or is truncated. */
  | 'block'
  /** A symlink target that does not decrypt. */
  | 'symlink'
  /** An encrypted xattr name that does not decrypt. */
  | 'xattr-name'
  /** An xattr value that does not decrypt. */
  | 'xattr-value'
  /** An I/O error on the cipher side (EIO, ENOTDIR, ...) while checking. */
  | 'io'
  /** Not corruption: a sync tool's conflict copy of an entry or of a .name file (Documentation/format.md §7.12). */
  | 'conflict'
  /** Not corruption: a renamed copy of gocryptfs.diriv, or an entry whose name is encrypted under one. */
  | 'iv-conflict';

/** Kinds that report sync conflicts, not corruption: alone they leave -fsck's exit code 0. */
export const CONFLICT_KINDS: ReadonlySet<FsckKind> = new Set<FsckKind>(['conflict', 'iv-conflict']);

/** True when `f` is a problem (not a sync conflict). */
export function isCorruption(f: FsckFinding): boolean {
  return !CONFLICT_KINDS.has(f.kind);
}

export interface FsckFinding {
  kind: FsckKind;
  /** Plaintext path ("" = root); for undecryptable entries: the directory's plaintext path + "/" + the cipher name; for a conflict copy: the name a mount shows it by. */
  path: string;
  /** Absolute path in the cipher directory. */
  cipherPath: string;
  /** One-line reason. */
  detail: string;
  /** For 'name', 'longname', 'orphan-name-file', 'xattr-name', 'conflict', 'iv-conflict': the cipher-side name concerned. */
  item?: string;
  /** For a conflict copy and an entry under a renamed IV: the plaintext path it is a version of. */
  conflictOf?: string;
}

/** What could not be checked for lack of permission (not root). */
export interface FsckSkip {
  path: string;
  cipherPath: string;
  detail: string;
}

export interface FsckProgress {
  dirs: number;
  files: number;
  /** Cipher bytes read from regular files so far. */
  bytes: number;
  /** The plaintext path being checked. */
  current: string;
}

export interface FsckReport {
  findings: FsckFinding[];
  skipped: FsckSkip[];
  dirs: number;
  files: number;
  symlinks: number;
  bytes: number;
  /** True when the walk was stopped through the abort signal. */
  aborted: boolean;
}

/** The distinct corrupt paths of a report (gocryptfs counts these as "corrupt files"); sync conflicts are not counted. */
export function corruptPaths(report: FsckReport): string[] {
  return [...new Set(report.findings.filter(isCorruption).map((f) => f.path))];
}

/** How many findings are sync conflicts. */
export function conflictCount(report: FsckReport): number {
  return report.findings.filter((f) => !isCorruption(f)).length;
}

/** Joins plaintext path components the way gocryptfs's filepath.Join("", ...) does. */
export function joinRel(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}
