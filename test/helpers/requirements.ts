/**
 * What a test needs from the machine: root, a working FUSE (/dev/fuse, the
 * fuse-native binding, fusermount), the gocryptfs binaries, python3,
 * or the native addons (built at install time by a C compiler). Each is
 * checked once per test process. A test whose need is missing is skipped
 * with the reason, and `npm test` lists every skip and its reason at the end
 * (scripts/test-skips.mjs); under CI (CI=true) any skip fails the run, since
 * CI installs all of them.
 *
 *   test('...', { timeout: 60_000, ...needs('mount', 'gocryptfs') }, async () => { ... });
 *   before(() => { if (unmet('mount')) return; ... });  // hooks run even when every test skips
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadNativeAddon } from '../../src/util/native-addon.js';
import { loadFuse } from '../../src/fuse/fuse-native.js';
import { fuseDeviceProblem } from '../../src/fuse/fuse-info.js';

export type Need =
  /** uid 0: mounts with -allow_other, other users' files, chown, device nodes. */
  | 'root'
  /** Other users can run this checkout's bin/tscryptfs: every directory above it is searchable by others. */
  | 'others-reach-checkout'
  /** A FUSE mount can be made: /dev/fuse, the fuse-native binding, fusermount; implies root. */
  | 'mount'
  /** /usr/bin/gocryptfs and /usr/bin/gocryptfs-xray (Debian's gocryptfs 2.3). */
  | 'gocryptfs'
  /** /usr/bin/python3, for system calls node:fs lacks. */
  | 'python3'
  /** The four native addons (native/build/Release), which need a C compiler at install. */
  | 'native';

export const GOCRYPTFS_BIN = '/usr/bin/gocryptfs';
export const GOCRYPTFS_XRAY_BIN = '/usr/bin/gocryptfs-xray';
export const PYTHON3_BIN = '/usr/bin/python3';

/** Whether `path` is a file this process may run. */
export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((d) => d !== '' && executable(join(d, name)));
}

/** The first directory from the checkout up to / that others may not enter, or null. */
function closedAncestor(): string | null {
  // dist/test/helpers/requirements.js -> the checkout's root.
  let dir = fileURLToPath(new URL('../../../', import.meta.url));
  for (;;) {
    if ((statSync(dir).mode & 0o001) === 0) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

const CHECKS: Record<Need, () => string | null> = {
  root: () => (process.getuid?.() === 0 ? null : `needs root (running as uid ${process.getuid?.()})`),
  'others-reach-checkout': () => {
    const closed = closedAncestor();
    return closed === null
      ? null
      : `other users cannot run this checkout: ${closed} is not searchable by others (chmod o+x it, or clone below a directory they may enter)`;
  },
  mount: () => {
    const notRoot = CHECKS.root();
    if (notRoot) return notRoot;
    const dev = fuseDeviceProblem();
    if (dev) return dev;
    // The mount tests' TSCRYPTFS_MOUNT_IMPL=gocryptfs runs them against gocryptfs's own mount.
    if (process.env.TSCRYPTFS_MOUNT_IMPL === 'gocryptfs') {
      const go = CHECKS.gocryptfs();
      if (go) return go;
    }
    try {
      loadFuse();
    } catch (err) {
      return (err as Error).message;
    }
    return onPath('fusermount') || onPath('fusermount3') ? null : 'fusermount is not installed (Debian package fuse3)';
  },
  gocryptfs: () => {
    for (const bin of [GOCRYPTFS_BIN, GOCRYPTFS_XRAY_BIN]) {
      if (!executable(bin)) return `${bin} is not installed (Debian package gocryptfs)`;
    }
    return null;
  },
  python3: () => (executable(PYTHON3_BIN) ? null : `${PYTHON3_BIN} is not installed (Debian package python3)`),
  native: () => {
    for (const addon of ['tscryptfs_sys.node', 'tscryptfs_batch.node', 'tscryptfs_fastpath.node', 'tscryptfs_aegis.node']) {
      if (loadNativeAddon(addon) === null) {
        const built = existsSync(new URL(`../../../native/build/Release/${addon}`, import.meta.url));
        return `native addon ${addon} ${built ? 'does not load' : 'was not built (no C compiler, make or python3 at install?)'}`;
      }
    }
    return null;
  },
};

const results = new Map<Need, string | null>();

/** Why the first unmet need of `list` is unmet, or null when all are met. */
export function unmet(...list: Need[]): string | null {
  for (const need of list) {
    if (!results.has(need)) results.set(need, CHECKS[need]());
    const why = results.get(need)!;
    if (why !== null) return why;
  }
  return null;
}

/** Test options: `{ skip: reason }` when a need is unmet, else nothing. */
export function needs(...list: Need[]): { skip?: string } {
  const why = unmet(...list);
  return why === null ? {} : { skip: why };
}
