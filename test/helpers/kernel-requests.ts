/**
 * The requests the kernel sends one FUSE mount, counted by opcode, as the
 * kernel itself reports them: the tracepoint fuse:fuse_request_send
 * (fs/fuse/fuse_trace.h), read in a tracing instance of our own, so that
 * the machine's own tracing is left as it is. Needs root and a kernel with
 * that tracepoint; `kernelRequestsProblem()` says why not, for a skip.
 *
 *   const counts = await countKernelRequests(mnt, () => run('ls', ['-l', dir]));
 *   counts.FUSE_LOOKUP ?? 0
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const TRACEFS = '/sys/kernel/tracing';
const EVENT = 'events/fuse/fuse_request_send';

/** Mounts tracefs where it belongs if nothing is there yet; says whether it had to. */
function ensureTracefs(): boolean {
  if (existsSync(join(TRACEFS, 'instances'))) return false;
  const r = spawnSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS], { stdio: 'ignore' });
  return r.status === 0;
}

/** Why requests cannot be counted here, or null. */
export function kernelRequestsProblem(): string | null {
  if (process.getuid?.() !== 0) return 'counting kernel requests needs root (tracefs)';
  const mounted = ensureTracefs();
  try {
    if (!existsSync(join(TRACEFS, 'instances'))) return `no tracefs at ${TRACEFS}`;
    if (!existsSync(join(TRACEFS, EVENT))) return 'this kernel has no fuse:fuse_request_send tracepoint';
    return null;
  } finally {
    if (mounted) spawnSync('umount', [TRACEFS], { stdio: 'ignore' });
  }
}

/** The device number of `mnt` as the kernel writes it in trace records (MKDEV: major << 20 | minor). */
function kernelDev(mnt: string): number {
  const dev = statSync(mnt, { bigint: true }).dev;
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  return major * 2 ** 20 + minor;
}

/** Runs `fn` and returns how many requests of each opcode (FUSE_LOOKUP, ...) the kernel sent the mount at `mnt` meanwhile. */
export async function countKernelRequests(mnt: string, fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const mountedTracefs = ensureTracefs();
  const instance = join(TRACEFS, 'instances', `tscryptfs-test-${process.pid}`);
  mkdirSync(instance);
  try {
    writeFileSync(join(instance, 'buffer_size_kb'), '8192');
    writeFileSync(join(instance, EVENT, 'filter'), `connection == ${kernelDev(mnt)}`);
    writeFileSync(join(instance, EVENT, 'enable'), '1');
    try {
      await fn();
    } finally {
      writeFileSync(join(instance, EVENT, 'enable'), '0');
    }
    const trace = readFileSync(join(instance, 'trace'), 'utf8');
    if (/LOST \d+ EVENTS/.test(trace)) throw new Error('the trace buffer overflowed: counts would be short');
    const counts: Record<string, number> = {};
    for (const m of trace.matchAll(/ opcode \d+ \((\w+)\)/g)) counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
    return counts;
  } finally {
    rmdirSync(instance);
    if (mountedTracefs) spawnSync('umount', [TRACEFS], { stdio: 'ignore' });
  }
}
