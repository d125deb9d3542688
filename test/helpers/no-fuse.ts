/**
 * Running a program on this machine as if FUSE were not there, without
 * changing the machine: in a private mount namespace (unshare -m, as root)
 * either libfuse.so.2 is covered by /dev/null, so that loading it fails as a
 * missing or broken libfuse2 does, or /dev is replaced by a tmpfs holding
 * only null, zero and urandom, so that /dev/fuse does not exist. The
 * namespace ends with the program; nothing outside it sees either change.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { run, type RunResult } from './mount.js';

export type MissingFuse = 'libfuse2' | '/dev/fuse';

/** The files libfuse.so.2 resolves to, as the dynamic loader finds it (ldconfig's cache). */
function libfuseFiles(): string[] {
  const cache = spawnSync('ldconfig', ['-p'], { encoding: 'utf8' }).stdout ?? '';
  const paths = cache
    .split('\n')
    .filter((l) => /^\s*libfuse\.so\.2 /.test(l))
    .map((l) => l.slice(l.indexOf('=> ') + 3).trim());
  if (paths.length === 0) throw new Error('ldconfig -p lists no libfuse.so.2 (Debian package libfuse2)');
  return [...new Set(paths.map((p) => realpathSync(p)))];
}

/** The shell commands (run as root in the new namespace) that take `what` away. */
function hide(what: MissingFuse): string {
  if (what === 'libfuse2') return libfuseFiles().map((f) => `mount --bind /dev/null '${f}'`).join(' && ');
  const nodes = [['null', 3], ['zero', 5], ['urandom', 9]].map(([n, minor]) => `mknod -m 666 /dev/${n} c 1 ${minor}`).join(' && ');
  return `mount -t tmpfs -o mode=755 tscryptfs-test-dev /dev && ${nodes}`;
}

/** Runs `cmd args` with `what` missing; returns its exit code and output. */
export function runWithoutFuse(what: MissingFuse, cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<RunResult> {
  const script = `${hide(what)} && exec "$@"`;
  return run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', cmd, ...args], { timeoutMs: 30_000, ...(env && { env }) });
}
