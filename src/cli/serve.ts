/**
 * Serving a mount until it ends: SIGINT/SIGTERM or `fusermount -u`
 * unmount cleanly (all data is written by the time each FUSE request is
 * answered), -idle unmounts after a quiet period, and the process then
 * exits 0. Used by the foreground mount and by the background daemon.
 */
import { writeFileSync } from 'node:fs';
import { fuseDeviceProblem, loadFuse, mountReverse, mountVault, type MountOptions, type Mounted } from '../fuse/index.js';
import type { ReverseSettings } from './reverse-settings.js';
import type { CtlSock, PathTranslator } from '../ctlsock/index.js';
import type { Logger } from '../util/logger.js';
import { Vault } from '../vault/index.js';
import type { FormatOptions } from '../config/index.js';
import type { BackendName } from '../crypto/index.js';
import { CliError, EXIT } from './exit-codes.js';
import { panicOnWarning } from './output.js';
import { returnMemoryWhenQuiet } from './idle-memory.js';
import { limitMallocArenas, returnMemory } from '../util/native-sys.js';
import { leaveOptimizingCompilerOut, limitOldGenerationGrowth, MALLOC_ARENA_ENV, mallocArenaLimit } from './daemon.js';
import { switchValue } from '../util/switches.js';

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
  /** -sharedstorage */
  sharedStorage?: boolean;
  mount: MountOptions;
  /** Unmount after this many milliseconds without activity and open files (0 = never). */
  idleMs: number;
  /** Set for -reverse: `cipherdir` is then the plaintext directory. */
  reverse?: ReverseSettings;
  /** Absolute path of the control socket (-ctlsock), if any. */
  ctlsock?: string;
  /** -wpanic: the first warning ends the daemon. */
  wpanic?: boolean;
  /** -badname patterns. */
  badname?: string[];
  /** -noconflicts */
  noConflicts?: boolean;
}

/**
 * The object behind a mount: a Vault, or a reverse view (which has nothing
 * to close). The reverse modules, like the control socket's, load only for
 * the mounts that use them.
 */
async function openBacking(plan: ServePlan, key: Uint8Array, log: Logger): Promise<{ mount: () => Promise<Mounted>; close: () => Promise<void>; paths: PathTranslator; cipherInJs: boolean }> {
  const r = plan.reverse;
  if (r) {
    const { Excluder, ReverseView } = await import('../reverse/index.js');
    const excluded = r.exclude.length + r.excludeWildcard.length + r.excludeFromContents.length > 0;
    const view = await ReverseView.fromKey(plan.cipherdir, key, {
      format: plan.format,
      configPath: r.configPath,
      configCustom: r.configCustom,
      excluder: excluded ? Excluder.fromOptions(r.exclude, r.excludeWildcard, r.excludeFromContents) : null,
      oneFileSystem: r.oneFileSystem,
      backend: plan.backend,
      logger: log,
    });
    // Reverse mounts seal with AES-SIV, whose S2V runs in JavaScript.
    return { mount: () => mountReverse(view, plan.mountpoint, plan.mount, log), close: async () => undefined, paths: view, cipherInJs: true };
  }
  const vault = await Vault.fromKey(plan.cipherdir, key, plan.format, null, { backend: plan.backend, readOnly: plan.readOnly, noPrealloc: plan.noPrealloc, sharedStorage: plan.sharedStorage ?? false, logger: log, badname: plan.badname ?? [], noConflicts: plan.noConflicts ?? false });
  return { mount: () => mountVault(vault, plan.mountpoint, plan.mount, log), close: () => vault.close(), paths: vault, cipherInJs: vault.cipherInJs };
}

/**
 * Loads the FUSE binding ahead of startServing (the background process
 * does it while the parent derives the key). A failure is left for
 * startServing to report.
 */
export function preloadServing(): void {
  try {
    loadFuse();
  } catch {
    /* startServing says why */
  }
}

/** Mounts; resolves with the mount once the kernel has answered INIT. */
export async function startServing(plan: ServePlan, serveLog: Logger): Promise<{ mounted: Mounted; done: Promise<void> }> {
  const log: Logger = plan.wpanic ? { ...serveLog, warn: (m) => (serveLog.warn(m), panicOnWarning(m, (l) => serveLog.warn(l))) } : serveLog;
  if (process.env[MALLOC_ARENA_ENV] === undefined) limitMallocArenas(mallocArenaLimit()); // before libfuse's threads start
  limitOldGenerationGrowth();
  try {
    loadFuse();
  } catch (err) {
    throw new CliError(EXIT.FuseNewServer, `fuse: ${(err as Error).message}`);
  }
  // A mount point of /dev/fd/N is a FUSE descriptor opened by the caller (mount.fuse3's magic fd).
  const noDevice = plan.mountpoint.startsWith('/dev/fd/') ? null : fuseDeviceProblem();
  if (noDevice) throw new CliError(EXIT.FuseNewServer, `fuse: ${noDevice}`);
  let backing: Awaited<ReturnType<typeof openBacking>>;
  try {
    backing = await openBacking(plan, plan.masterKey, log);
  } finally {
    plan.masterKey.fill(0);
  }
  if (!backing.cipherInJs) leaveOptimizingCompilerOut();
  let ctlsock: CtlSock | null = null;
  if (plan.ctlsock) {
    try {
      ctlsock = await (await import('../ctlsock/index.js')).startCtlSock(plan.ctlsock, backing.paths, log);
    } catch (err) {
      await backing.close();
      throw new CliError(EXIT.CtlSock, `ctlsock: ${(err as Error).message}`);
    }
  }
  let mounted: Mounted;
  try {
    mounted = await backing.mount();
  } catch (err) {
    await ctlsock?.close();
    await backing.close();
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

  /** What went back to the system, for TSCRYPTFS_OPSTATS. */
  const given = { memoryGivenBack: 0, cacheBytesDropped: 0, filePagesKbUnmapped: 0 };
  const stopReturningMemory = returnMemoryWhenQuiet(() => mounted.operations.lastActivity(), {
    // After a quiet spell the caches too, and a full collection; at the start
    // the caches are all but empty, and a collection would make V8 set its
    // limits from start-up's small heap: more collections all along.
    give: (atStart) => {
      if (!atStart) given.cacheBytesDropped += mounted.dropCaches();
      const kb = returnMemory(!atStart);
      if (kb === null) return false;
      given.memoryGivenBack++;
      given.filePagesKbUnmapped += kb;
      return true;
    },
  });
  let idleTimer: NodeJS.Timeout | undefined;
  if (plan.idleMs > 0) {
    const every = Math.max(100, Math.min(plan.idleMs / 10, 60_000));
    idleTimer = setInterval(() => {
      const quiet = Date.now() - mounted.operations.lastActivity() >= plan.idleMs;
      if (quiet && mounted.operations.openFiles() === 0) void stop('idle');
    }, every);
  }

  const done = mounted.closed.then(async () => {
    if (idleTimer) clearInterval(idleTimer);
    stopReturningMemory();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    // Whatever the kernel left open (an unmount while busy), close it now.
    await Promise.all(mounted.operations.handles.all().map((f) => f.close().catch(() => undefined)));
    await ctlsock?.close();
    await backing.close();
    writeCallCounts({ ...mounted.operations.calls(), ...given }, log);
  });
  return { mounted, done };
}

/**
 * TSCRYPTFS_OPSTATS=FILE: at unmount, the number of calls per FUSE operation
 * that reached JS, as JSON (to see what a workload costs in round trips),
 * and what the daemon gave back to the system (src/cli/idle-memory.ts).
 */
function writeCallCounts(calls: Record<string, number>, log: Logger): void {
  const file = switchValue('TSCRYPTFS_OPSTATS');
  if (!file) return;
  try {
    writeFileSync(file, `${JSON.stringify(calls)}\n`);
  } catch (err) {
    log.warn(`TSCRYPTFS_OPSTATS: cannot write ${file}: ${(err as Error).message}`);
  }
}
