/**
 * Process exit codes, numerically identical to gocryptfs's
 * internal/exitcodes (Documentation/format.md §12.1), so scripts written for gocryptfs
 * can test our results the same way.
 */
export const EXIT = {
  /** Success. */
  OK: 0,
  /** Bad command line, conflicting options, unimplemented feature. */
  Usage: 1,
  /** CIPHERDIR missing, not a directory, or not empty on -init. */
  CipherDir: 6,
  /** Error during -init after the password was read (root diriv, backup file). */
  Init: 7,
  /** -info could not load the config file. */
  LoadConf: 8,
  /** The password could not be read, or was empty. */
  ReadPassword: 9,
  /** The mountpoint is invalid or not empty. */
  MountPoint: 10,
  /** Anything else: missing or unparsable config file on mount / -passwd. */
  Other: 11,
  /** The master key did not unwrap: wrong password. */
  PasswordIncorrect: 12,
  /** scrypt parameters rejected when deriving a key (-passwd -scryptn). */
  ScryptParams: 13,
  /** Malformed -masterkey value. */
  MasterKey: 14,
  /** Interrupted (SIGINT) during mount. */
  SigInt: 15,
  /** Could not start the background process. */
  ForkChild: 17,
  /** FUSE mount failed. */
  FuseNewServer: 19,
  /** Could not create the control socket. */
  CtlSock: 20,
  /** Could not write gocryptfs.conf. */
  WriteConf: 24,
  /** -fsck found problems. */
  FsckErrors: 26,
  /** The config fails validation: unknown flag, wrong version, weak scrypt, no GCMIV128. */
  DeprecatedFS: 27,
  /** -exclude used without -reverse. */
  ExcludeError: 29,
  /** FIDO2 token error (tscryptfs has no FIDO2 support). */
  FIDO2Error: 31,
  /** AEGIS requested (-init -aegis, an AEGIS256X2 filesystem) but no AEGIS implementation may run (aegis branch). */
  Aegis: 32,
} as const;

/**
 * A failure the CLI reports as one line on stderr before exiting with
 * `exitCode`. An empty message prints nothing (the line was already shown).
 */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Shorthand for `throw new CliError(...)` in expression position. */
export function fail(exitCode: number, message: string): never {
  throw new CliError(exitCode, message);
}
