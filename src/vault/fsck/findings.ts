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
  | 'io';

export interface FsckFinding {
  kind: FsckKind;
  /** Plaintext path ("" = root); for undecryptable entries: the directory's plaintext path + "/" + the cipher name. */
  path: string;
  /** Absolute path in the cipher directory. */
  cipherPath: string;
  /** One-line reason. */
  detail: string;
  /** For 'name', 'longname', 'orphan-name-file', 'xattr-name': the offending cipher-side name. */
  item?: string;
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

/** The distinct corrupt paths of a report (gocryptfs counts these as "corrupt files"). */
export function corruptPaths(report: FsckReport): string[] {
  return [...new Set(report.findings.map((f) => f.path))];
}

/** Joins plaintext path components the way gocryptfs's filepath.Join("", ...) does. */
export function joinRel(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}
