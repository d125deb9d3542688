/**
 * The registry of environment variables tscryptfs reads: every
 * `TSCRYPTFS_*` variable the program looks at is listed here, with its
 * values, its default and what it changes. Code reads them only through
 * `envSwitch` and `switchValue`, so a name missing here does not compile.
 *
 * Kinds:
 *   user         a setting a user may need (documented in the man page);
 *   measurement  turns one mechanism off, to measure what it buys and to
 *                run the test suite without it; the default is what users get;
 *   test         makes a test's run shorter;
 *   internal     set by tscryptfs for its own child processes.
 *
 * The man page's ENVIRONMENT section describes every user and measurement
 * switch (test/unit/switches.test.ts holds it to this list).
 *
 * An "off switch" is on unless its value is exactly `0`. A value outside
 * a switch's `accepts` means its default; the command line says so once
 * (switchWarnings), so that a typo does not pass for a setting.
 */

export type SwitchKind = 'user' | 'measurement' | 'test' | 'internal';

export interface SwitchInfo {
  kind: SwitchKind;
  /** The values it takes, as the man page shows them. */
  values: string;
  /** What it is when unset. */
  default: string;
  /** One sentence: what it changes. */
  meaning: string;
  /** True for an off switch: anything but `0` means on. */
  offSwitch?: true;
  /** The values it reads; anything else (but empty) means the default. Absent: any value, or the switch explains a bad one itself. */
  accepts?: RegExp;
}

const off = (kind: SwitchKind, meaning: string): SwitchInfo & { offSwitch: true } => ({ kind, values: '0', default: 'on', meaning, offSwitch: true, accepts: /^[01]$/ });

export const SWITCHES = {
  TSCRYPTFS_AEGIS: {
    kind: 'user',
    values: 'auto|native|ts|off',
    default: 'auto',
    meaning: 'Which AEGIS implementation may run: the native addon when it loads, else TypeScript (auto); only one of them; or none (src/crypto/aegis/mode.ts).',
  },
  TSCRYPTFS_NATIVE_BATCH: off('measurement', 'Load the native addons that seal and open many blocks per call and make the fast path of the mount; with 0, every block goes through node:crypto one by one and every request reaches JS.'),
  TSCRYPTFS_NATIVE_READ: off('measurement', 'Answer reads of open files in the native fast path; with 0 the whole native fast path is off (as every NATIVE_* switch below).'),
  TSCRYPTFS_NATIVE_ATTRS: off('measurement', 'Answer chmod, chown and utimens of open files in the native fast path.'),
  TSCRYPTFS_NATIVE_WRITE: off('measurement', 'Answer writes to open files in the native fast path.'),
  TSCRYPTFS_NATIVE_UNLINK: off('measurement', 'Answer unlinks of listed names in the native fast path (with 0, rmdir too).'),
  TSCRYPTFS_NATIVE_RMDIR: off('measurement', 'Answer rmdir of listed names in the native fast path.'),
  TSCRYPTFS_NATIVE_LOOKUP: off('measurement', 'Answer lookups in the native fast path, and getxattr and listxattr of entries with no extended attributes (with 0, opens too).'),
  TSCRYPTFS_NATIVE_OPEN: off('measurement', 'Answer opens in the native fast path, and the fstat and release of files opened there (for writing only with native writes; with 0, creates too).'),
  TSCRYPTFS_NATIVE_CREATE: off('measurement', 'Answer creates of files in the native fast path.'),
  TSCRYPTFS_NATIVE_FSYNC: off('measurement', 'Answer fsyncs of open files in the native fast path.'),
  TSCRYPTFS_NATIVE_LIST: off('measurement', 'Answer listings of directories whose names all decrypt in the native fast path.'),
  TSCRYPTFS_NATIVE_RENAME: off('measurement', 'Answer renames of files with short names in the native fast path.'),
  TSCRYPTFS_ASSIST: off('measurement', 'Let the libfuse thread seal part of a large write while JS seals the rest.'),
  TSCRYPTFS_CARRIED_ATTRS: off('measurement', 'Keep the attributes a reply carried, to answer the next GETATTR of that name in the binding.'),
  TSCRYPTFS_READDIRPLUS: off('measurement', 'Hand each listed name\'s entry to the kernel with the listing (READDIRPLUS).'),
  TSCRYPTFS_KEPT_LISTINGS: off('measurement', 'Keep a directory\'s listing in the kernel while the backing directory is unchanged.'),
  TSCRYPTFS_KEPT_COPIES: off('measurement', 'Answer a listing of a directory listed before, while that listing still holds, from the binding\'s copy of it (with kept listings).'),
  TSCRYPTFS_KILLPRIV: off('measurement', 'Let the kernel ask once per file whether setuid and setgid bits need dropping on write (FUSE_HANDLE_KILLPRIV_V2).'),
  TSCRYPTFS_RELEASE_LATER: off('measurement', 'Answer a file\'s release before JS has closed its backing descriptor.'),
  TSCRYPTFS_RETURN_MEMORY: off('measurement', 'Give freed memory and unused code pages back to the system after start-up and when the mount has been idle.'),
  TSCRYPTFS_HEAP_GROWTH: off('measurement', 'Let V8\'s old generation grow to 1.2 times what survived the last full collection before the next, instead of up to 4 times.'),
  TSCRYPTFS_BASELINE_JS: off('measurement', 'Run the mount\'s JavaScript without V8\'s optimizing compiler when the content cipher computes in C.'),
  TSCRYPTFS_SPIN: {
    kind: 'measurement',
    values: 'ANSWER,LOOP',
    default: '40,200',
    meaning: 'Microseconds the libfuse thread and the JS loop poll before they sleep ("0,0": never).',
    accepts: /^\s*(\d+),(\d+)\s*$/,
  },
  TSCRYPTFS_SPIN_GATE: off('measurement', 'Poll (TSCRYPTFS_SPIN) only while the machine\'s other processes leave 1.25 cores free.'),
  TSCRYPTFS_SPIN_NATIVE: off('measurement', 'Keep the JS loop polling (TSCRYPTFS_SPIN\'s LOOP) while requests the binding answers in C come, not only after requests JS answers.'),
  TSCRYPTFS_FS_IO: {
    kind: 'user',
    values: 'direct|async',
    default: 'direct',
    accepts: /^(direct|async)$/,
    meaning: 'direct: calls on the cipher directory run on the JS thread; async: on libuv\'s thread pool, which keeps the mount answering while a slow network store blocks a call, costs a thread hop per call, and implies TSCRYPTFS_AT_CALLS=proc.',
  },
  TSCRYPTFS_AT_CALLS: {
    kind: 'measurement',
    values: 'native|proc',
    default: 'native',
    accepts: /^(native|proc)$/,
    meaning: 'proc: reach names below a directory descriptor through /proc/self/fd paths instead of the native *at() calls (as where the addon is not built); then files are created as root and handed to their owner (no permission check as that owner), FIFOs and device nodes cannot be made, and times are set to the microsecond.',
  },
  TSCRYPTFS_OPSTATS: {
    kind: 'measurement',
    values: 'FILE',
    default: 'unset',
    meaning: 'At unmount, write the number of requests per FUSE operation that reached JS (and those answered natively), and what was given back to the system when idle, to FILE, as JSON.',
  },
  TSCRYPTFS_PROGRESS_MS: {
    kind: 'test',
    values: 'MILLISECONDS',
    default: '250',
    accepts: /^\s*\d+\s*$/,
    meaning: 'How often -fsck redraws its progress line.',
  },
  TSCRYPTFS_QUIET_MS: {
    kind: 'test',
    values: 'MILLISECONDS',
    default: '5000',
    accepts: /^\s*[1-9]\d*\s*$/,
    meaning: 'How long the mount must be quiet before the daemon gives memory back, and how often it looks again after that.',
  },
  TSCRYPTFS_DAEMON_CHILD: {
    kind: 'internal',
    values: '1',
    default: 'unset',
    meaning: 'Set by the mount for the background process it starts, which then serves the mount and reports to its parent when ready.',
  },
} as const satisfies Record<string, SwitchInfo>;

export type SwitchName = keyof typeof SWITCHES;
type OffSwitchName = { [K in SwitchName]: (typeof SWITCHES)[K] extends { offSwitch: true } ? K : never }[SwitchName];

/** The raw value of a registered variable, or undefined when unset. */
export function switchValue(name: SwitchName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[name];
}

/** Whether an off switch is on: anything but exactly `0` (unset included). */
export function envSwitch(name: OffSwitchName, env: NodeJS.ProcessEnv = process.env): boolean {
  return env[name] !== '0';
}

/** A numeric variable's value; its default when it is unset or outside its `accepts`. */
export function switchNumber(name: 'TSCRYPTFS_PROGRESS_MS' | 'TSCRYPTFS_QUIET_MS', env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  const info = SWITCHES[name];
  return Number(raw !== undefined && info.accepts.test(raw) ? raw : info.default);
}

/**
 * One line for each registered variable set to a value outside its
 * `accepts` (which means the default), such as TSCRYPTFS_SPIN=0 or
 * TSCRYPTFS_NATIVE_BATCH=off. An empty value is the same as unset.
 */
export function switchWarnings(env: NodeJS.ProcessEnv = process.env): string[] {
  const lines: string[] = [];
  for (const [name, info] of Object.entries(SWITCHES) as Array<[string, SwitchInfo]>) {
    const v = env[name];
    if (v === undefined || v === '' || !info.accepts || info.accepts.test(v)) continue;
    lines.push(`${name}=${JSON.stringify(v)} is not ${info.values}: the default (${info.default}) applies`);
  }
  return lines;
}
