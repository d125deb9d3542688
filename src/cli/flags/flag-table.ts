/**
 * The flags a command knows, as data: name, spellings, value kind, default,
 * status and help text. FLAGS is tscryptfs's table (every flag gocryptfs
 * 2.3 has, plus -aegis, -json and -noconflicts); tscryptfs-xray has its own (src/cli/xray/). Both
 * are read by the one Go-style argv scanner (./go-flags.ts); the help
 * texts are laid out from them.
 */

export type FlagKind = 'bool' | 'string' | 'int' | 'uint8' | 'duration' | 'list';

/** Which part of the program a flag belongs to (for -hh grouping and checks). */
export type FlagStatus =
  /** Implemented now. */
  | 'ok'
  /** A mount option: read by the mount action (-hh marks it [mount]). */
  | 'mount'
  /** Accepted for compatibility, has no effect (as in gocryptfs). */
  | 'ignored'
  /** Parsed, but using it exits with "not implemented yet" (exit 1). */
  | 'unimplemented';

export interface FlagSpec {
  /** Canonical name without dashes, e.g. "deterministic-names". */
  name: string;
  kind: FlagKind;
  /** Other spellings (without dashes), e.g. "q" for "quiet". */
  aliases?: readonly string[];
  /** Metavariable shown in help for value flags. */
  metavar?: string;
  /** Default when not given (bool default false, list default []). */
  default?: boolean | string | number;
  status: FlagStatus;
  help: string;
}

/** Every flag of tscryptfs: gocryptfs 2.3's, plus -aegis, -json and -noconflicts (-hh sorts them by name). */
export const FLAGS: readonly FlagSpec[] = [
  // actions
  { name: 'init', kind: 'bool', status: 'ok', help: 'Initialize an empty CIPHERDIR' },
  { name: 'info', kind: 'bool', status: 'ok', help: 'Print the settings stored in the config file of CIPHERDIR' },
  { name: 'passwd', kind: 'bool', status: 'ok', help: 'Change the password (re-wrap the master key)' },
  { name: 'fsck', kind: 'bool', status: 'ok', help: 'Check CIPHERDIR for corruption (read-only; exit code 26 when problems are found)' },
  { name: 'speed', kind: 'bool', status: 'ok', help: 'Measure the encryption speed of every cipher and backend' },
  { name: 'version', kind: 'bool', status: 'ok', help: 'Print the version and exit' },
  { name: 'help', kind: 'bool', aliases: ['h'], status: 'ok', help: 'Print the short help text' },
  { name: 'hh', kind: 'bool', status: 'ok', help: 'Print this long help text with all options' },
  // -init format options
  { name: 'aessiv', kind: 'bool', status: 'ok', help: 'Content cipher AES-SIV-512 (with -init; with -masterkey for mounting)' },
  { name: 'xchacha', kind: 'bool', status: 'ok', help: 'Content cipher XChaCha20-Poly1305 (with -init; with -masterkey for mounting)' },
  { name: 'aegis', kind: 'bool', status: 'ok', help: 'Content cipher AEGIS-256X2, as gocryptfs\'s unmerged aegis branch (with -init)' },
  { name: 'plaintextnames', kind: 'bool', status: 'ok', help: 'Do not encrypt file names and symlink targets (with -init)' },
  { name: 'deterministic-names', kind: 'bool', status: 'ok', help: 'No per-directory gocryptfs.diriv, identical names encrypt identically (with -init)' },
  { name: 'longnamemax', kind: 'uint8', metavar: 'N', default: 255, status: 'ok', help: 'Hash encrypted names longer than N bytes, 62..255 (with -init)' },
  { name: 'raw64', kind: 'bool', default: true, status: 'ok', help: 'Unpadded base64 for encrypted names; -raw64=false describes a padded-base64 filesystem (with -masterkey) or makes one (with -init, where gocryptfs 2.x ignores it)' },
  { name: 'hkdf', kind: 'bool', default: true, status: 'ok', help: 'Derive subkeys with HKDF; -hkdf=false describes a legacy (pre-v1.3) filesystem (with -masterkey) or makes one (with -init, where gocryptfs 2.x ignores it)' },
  { name: 'scryptn', kind: 'int', metavar: 'N', default: 16, status: 'ok', help: 'scrypt cost as log2(N), 10..28; lower is faster but weaker against brute force (with -init, -passwd)' },
  { name: 'reverse', kind: 'bool', status: 'ok', help: 'Reverse mode: read-only encrypted view of a plaintext directory (implies -aessiv)' },
  { name: 'fido2', kind: 'string', metavar: 'DEVICE', status: 'unimplemented', help: 'Protect the master key with a FIDO2 token (not supported)' },
  // password and key sources
  { name: 'extpass', kind: 'list', metavar: 'CMD', status: 'ok', help: 'Read the password from the first output line of this program (split on spaces if given once; repeat for literal arguments)' },
  { name: 'passfile', kind: 'list', metavar: 'FILE', status: 'ok', help: 'Read the password from the first line of FILE (repeat to concatenate several files)' },
  { name: 'masterkey', kind: 'string', metavar: 'HEX', status: 'ok', help: 'Use this master key (64 hex digits, dashes ignored, or "stdin") instead of the config file password' },
  { name: 'zerokey', kind: 'bool', status: 'ok', help: 'Use an all-zero master key (testing only, no security)' },
  { name: 'config', kind: 'string', metavar: 'FILE', status: 'ok', help: 'Config file to use instead of CIPHERDIR/gocryptfs.conf' },
  // general
  { name: 'quiet', kind: 'bool', aliases: ['q'], status: 'ok', help: 'Do not print informational messages' },
  { name: 'debug', kind: 'bool', aliases: ['d'], status: 'ok', help: 'Print debug messages' },
  { name: 'json', kind: 'bool', status: 'ok', help: 'With -info, -fsck, -speed or -version: print one JSON document on stdout and every message on stderr (schemas in Documentation/schemas/)' },
  { name: 'openssl', kind: 'string', metavar: 'BOOL|auto', default: 'auto', status: 'ok', help: 'Crypto backend: true = node:crypto (OpenSSL), false = noble (pure TypeScript), auto = node:crypto' },
  { name: 'wpanic', kind: 'bool', status: 'ok', help: 'When encountering a warning, panic and exit immediately (exit code 2; a mount is left dead, as gocryptfs\'s)' },
  { name: 'nosyslog', kind: 'bool', status: 'mount', help: 'Do not redirect messages to syslog in the background' },
  // mount options
  { name: 'fg', kind: 'bool', aliases: ['f'], status: 'mount', help: 'Stay in the foreground' },
  { name: 'ro', kind: 'bool', status: 'mount', help: 'Mount read-only' },
  { name: 'rw', kind: 'bool', status: 'mount', help: 'Mount read-write (default)' },
  { name: 'allow_other', kind: 'bool', status: 'mount', help: 'Allow other users to access the mount (needs user_allow_other in /etc/fuse.conf)' },
  { name: 'nonempty', kind: 'bool', status: 'mount', help: 'Allow mounting over a non-empty directory' },
  { name: 'idle', kind: 'duration', aliases: ['i'], metavar: 'DURATION', status: 'mount', help: 'Unmount after this idle time, like "500s" or "2h45m" (0 = never)' },
  { name: 'kernel_cache', kind: 'bool', status: 'mount', help: 'Enable the FUSE kernel_cache option' },
  { name: 'fsname', kind: 'string', metavar: 'NAME', status: 'mount', help: 'Filesystem name shown in mount(8)' },
  { name: 'ko', kind: 'string', metavar: 'OPTS', status: 'mount', help: 'Extra comma-separated options passed to the kernel' },
  { name: 'o', kind: 'string', metavar: 'OPTS', status: 'ok', help: 'Comma-separated options, "-o a,b" is the same as "-a -b" (mount(8) compatibility)' },
  { name: 'sharedstorage', kind: 'bool', status: 'mount', help: 'Safer concurrent access to a shared CIPHERDIR' },
  { name: 'dev', kind: 'bool', status: 'mount', help: 'Allow device files to be used (they are created either way; without -dev the mount is nodev)' },
  { name: 'nodev', kind: 'bool', status: 'mount', help: 'Deny device files' },
  { name: 'suid', kind: 'bool', status: 'mount', help: 'Allow suid/sgid executables' },
  { name: 'nosuid', kind: 'bool', status: 'mount', help: 'Deny suid/sgid executables' },
  { name: 'exec', kind: 'bool', status: 'mount', help: 'Allow executables' },
  { name: 'noexec', kind: 'bool', status: 'mount', help: 'Deny executables' },
  { name: 'acl', kind: 'bool', status: 'mount', help: 'Enforce ACLs: the kernel checks POSIX ACLs (stored unencrypted, as gocryptfs stores them) and new entries inherit default ACLs' },
  { name: 'fusedebug', kind: 'bool', status: 'mount', help: 'Print FUSE debug messages' },
  { name: 'notifypid', kind: 'int', metavar: 'PID', default: 0, status: 'mount', help: 'Send SIGUSR1 to PID after mounting (used for daemonizing)' },
  { name: 'force_owner', kind: 'string', metavar: 'UID:GID', status: 'mount', help: 'Show every file as owned by UID:GID (implies -allow_other)' },
  { name: 'longnames', kind: 'bool', default: true, status: 'mount', help: 'Store names longer than 175 bytes in gocryptfs.longname.* files; only with -masterkey (gocryptfs v0.8 and older), ignored otherwise as in gocryptfs' },
  { name: 'noprealloc', kind: 'bool', status: 'mount', help: 'Do not preallocate space before writing' },
  { name: 'serialize_reads', kind: 'bool', status: 'mount', help: 'Have the kernel send reads one at a time and in order (libfuse\'s sync_read), for backing storage that is slow at concurrent reads' },
  { name: 'one-file-system', kind: 'bool', status: 'mount', help: 'Do not cross filesystem boundaries' },
  { name: 'badname', kind: 'list', metavar: 'GLOB', status: 'mount', help: 'Show names that do not decrypt but match GLOB (Go filepath.Match syntax) as the part that decrypts, the rest, and " GOCRYPTFS_BAD_NAME", instead of hiding them (repeatable)' },
  { name: 'noconflicts', kind: 'bool', status: 'mount', help: 'Hide sync conflict copies (names a sync tool renamed, names under a renamed gocryptfs.diriv) as gocryptfs does, instead of showing each as "NAME (conflict TOOL ...).EXT"' },
  { name: 'ctlsock', kind: 'string', metavar: 'PATH', status: 'ok', help: 'Create a control socket at PATH (path translation, owner only)' },
  { name: 'exclude', kind: 'list', aliases: ['e'], metavar: 'PATH', status: 'ok', help: 'Exclude relative PATH from the reverse view (reverse mode)' },
  { name: 'exclude-wildcard', kind: 'list', aliases: ['ew'], metavar: 'PATTERN', status: 'ok', help: 'Exclude gitignore-style PATTERN from the reverse view (reverse mode)' },
  { name: 'exclude-from', kind: 'list', metavar: 'FILE', status: 'ok', help: 'Read gitignore-style exclusion patterns from FILE (reverse mode)' },
  { name: 'cpuprofile', kind: 'string', metavar: 'FILE', status: 'unimplemented', help: 'Go profiling option of gocryptfs (not supported)' },
  { name: 'memprofile', kind: 'string', metavar: 'FILE', status: 'unimplemented', help: 'Go profiling option of gocryptfs (not supported)' },
  { name: 'trace', kind: 'string', metavar: 'FILE', status: 'unimplemented', help: 'Go execution trace option of gocryptfs (not supported)' },
  // accepted and ignored, as in gocryptfs
  { name: 'nofail', kind: 'bool', status: 'ignored', help: 'Ignored (for /etc/fstab compatibility)' },
  { name: 'devrandom', kind: 'bool', status: 'ignored', help: 'Obsolete, ignored' },
  { name: 'forcedecode', kind: 'bool', status: 'ignored', help: 'Obsolete, ignored' },
];

/** Looks flags up by canonical name or alias (no dashes). */
export type FlagLookup = (name: string) => FlagSpec | undefined;

/** The lookup for a table; a name or alias given twice is a programming error. */
export function flagLookup(table: readonly FlagSpec[]): FlagLookup {
  const byName = new Map<string, FlagSpec>();
  for (const f of table) {
    for (const n of [f.name, ...(f.aliases ?? [])]) {
      if (byName.has(n)) throw new Error(`flag table: -${n} is defined twice`);
      byName.set(n, f);
    }
  }
  return (name) => byName.get(name);
}

/** Looks up one of tscryptfs's flags by canonical name or alias (no dashes). */
export const findFlag: FlagLookup = flagLookup(FLAGS);
