/**
 * Serving a mount until it ends: SIGINT/SIGTERM or `fusermount -u`
 * unmount cleanly (all data is written by the time each FUSE request is
 * answered), -idle unmounts after a quiet period, and the process then
 * exits 0. Used by the foreground mount and by the background daemon.
 */
import { loadFuse, mountVault, type MountOptions, type Mounted } from '../fuse/index.js';
import type { Logger } from '../util/logger.js';
import { Vault } from '../vault/index.js';
import type { FormatOptions } from '../config/index.js';
import type { BackendName } from '../crypto/index.js';
import { CliError, EXIT } from './exit-codes.js';

/** Everything a mount process needs; plain data so it can cross to the daemon (structured clone: the key stays bytes). */
export interface ServePlan {
  cipherdir: string;
  mountpoint: string;
  format: FormatOptions;
  /** 32 bytes; zeroed by startServing once the vault has its own copy. */
  masterKey: Uint8Array;
  backend: BackendName;
  readOnly: boolean;
  /** -noprealloc */
  noPrealloc: boolean;
  mount: MountOptions;
  /** Unmount after this many milliseconds without activity and open files (0 = never). */
  idleMs: number;
}

/** Mounts; resolves with the mount once the kernel has answered INIT. */
export async function startServing(plan: ServePlan, log: Logger): Promise<{ mounted: Mounted; done: Promise<void> }> {
  let Fuse: ReturnType<typeof loadFuse>;
  try {
    Fuse = loadFuse();
  } catch (err) {
    throw new CliError(EXIT.FuseNewServer, `fuse: ${(err as Error).message}`);
  }
  let vault: Vault;
  try {
    vault = await Vault.fromKey(plan.cipherdir, plan.masterKey, plan.format, null, { backend: plan.backend, readOnly: plan.readOnly, noPrealloc: plan.noPrealloc, logger: log, mknod: Fuse.mknod });
  } finally {
    plan.masterKey.fill(0);
  }
  let mounted: Mounted;
  try {
    mounted = await mountVault(vault, plan.mountpoint, plan.mount, log);
  } catch (err) {
    await vault.close();
    throw new CliError(EXIT.FuseNewServer, `fuse: ${(err as Error).message}`);
  }

  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info?.(`${why}: unmounting ${plan.mountpoint}`);
    try {
      await mounted.unmount();
    } catch (err) {
      log.warn(`unmount of ${plan.mountpoint} failed (${(err as Error).message}); it stays mounted until it is no longer busy`);
      stopping = false;
    }
  };
  const onSignal = (sig: NodeJS.Signals): void => void stop(`got ${sig}`);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);

  let idleTimer: NodeJS.Timeout | undefined;
  if (plan.idleMs > 0) {
    const every = Math.max(100, Math.min(plan.idleMs / 10, 60_000));
    idleTimer = setInterval(() => {
      const quiet = Date.now() - mounted.operations.lastActivity() >= plan.idleMs;
      if (quiet && mounted.operations.handles.size === 0) void stop('idle');
    }, every);
  }

  const done = mounted.closed.then(async () => {
    if (idleTimer) clearInterval(idleTimer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    // Whatever the kernel left open (an unmount while busy), close it now.
    await Promise.all(mounted.operations.handles.all().map((f) => f.close().catch(() => undefined)));
    await vault.close();
  });
  return { mounted, done };
}
