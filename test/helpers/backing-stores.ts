/**
 * Real backing stores for a cipher directory, made and removed by a test:
 *
 *   ext4, xfs, btrfs  a sparse image file, mkfs, a loop device, a kernel mount
 *   sshfs             this machine's OpenSSH server (its own config, keys and
 *                     port, on 127.0.0.1 only) and sshfs onto a local directory
 *   rclone            `rclone mount` of a local directory (VFS cache: writes)
 *   exfat             an image, mkfs.exfat, a loop device, exfat-fuse (fuseblk,
 *                     not the kernel's exfat driver)
 *
 * Everything lives below the caller's temp dir. Teardown unmounts
 * (umount or fusermount -u, retried, then umount -l), detaches the loop
 * device and ends the processes this module started, by the PIDs it keeps;
 * it runs in every outcome, and a synchronous version runs on process exit
 * for the stores still set up then.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { daemonPids, describeRun, FUSERMOUNT, isAlive, isMounted, mountEntries, run, sleep, waitFor } from './mount.js';
import { executable } from './requirements.js';

export const STORE_KINDS = ['ext4', 'xfs', 'btrfs', 'sshfs', 'rclone', 'exfat'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface BackingStore {
  kind: StoreKind;
  /** Where the store is mounted (everything below it is on the store). */
  mountpoint: string;
  /** The filesystem type /proc/mounts shows for it. */
  fstype: string;
  /** Ends the store: unmounts, detaches, stops its processes; the problems it met (empty when clean). */
  teardown(): Promise<string[]>;
}

/** Programs each store needs, with the Debian package that has them (Debian 12; losetup, mount and umount are in `mount`). */
const TOOLS: Record<StoreKind, [program: string, pkg: string][]> = {
  ext4: [['mkfs.ext4', 'e2fsprogs'], ['losetup', 'mount']],
  xfs: [['mkfs.xfs', 'xfsprogs'], ['losetup', 'mount']],
  btrfs: [['mkfs.btrfs', 'btrfs-progs'], ['losetup', 'mount']],
  sshfs: [['sshd', 'openssh-server'], ['ssh-keygen', 'openssh-client'], ['ssh', 'openssh-client'], ['sshfs', 'sshfs']],
  rclone: [['rclone', 'rclone']],
  exfat: [['mkfs.exfat', 'exfatprogs'], ['mount.exfat-fuse', 'exfat-fuse'], ['losetup', 'mount']],
};

/** Where a program is, in the system directories (not PATH: a test must not pick up a user's copy). */
function tool(name: string): string | null {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/bin']) if (executable(join(dir, name))) return join(dir, name);
  return null;
}

/** `tool`, for a program storeUnmet has already found. */
function toolPath(name: string): string {
  const p = tool(name);
  if (p === null) throw new Error(`${name} is not installed`);
  return p;
}

/** Why `kind` cannot be set up on this machine (a missing program or device), or null. */
export function storeUnmet(kind: StoreKind): string | null {
  for (const [name, pkg] of TOOLS[kind]) {
    if (tool(name) === null) return `${name} is not installed (Debian package ${pkg}), needed for the ${kind} backing store`;
  }
  if (['ext4', 'xfs', 'btrfs', 'exfat'].includes(kind) && !existsSync('/dev/loop-control')) return `no loop devices (/dev/loop-control), needed for the ${kind} backing store`;
  return null;
}

/** Image sizes: as small as mkfs allows (xfs wants 300 MiB, btrfs 114 MiB); the images are sparse. */
const IMAGE_MIB: Partial<Record<StoreKind, number>> = { ext4: 64, xfs: 300, btrfs: 128, exfat: 64 };

// ------------------------------------------------------------ bookkeeping

/** What a store holds that must be given back, in the order it was taken. */
interface Held {
  mountpoint: string;
  /** The mount is FUSE (fusermount -u first) or a kernel mount (umount first). */
  fuse: boolean;
  loop?: string;
  /** The image file behind `loop`. */
  image?: string;
  /** Processes this module started (a foreground FUSE daemon, sshd). */
  children: ChildProcess[];
  /** A daemon that detached itself (exfat-fuse), found by its mount point on its command line. */
  detachedPids: number[];
  /** The listening sshd among `children` (its per-connection children outlive it until their client goes). */
  sshdPid?: number;
}

const live = new Set<Held>();
let exitHandlerInstalled = false;

/** Process exit with stores still set up: unmount lazily, detach, kill what we started. Best effort, synchronous. */
function emergencyTeardown(): void {
  for (const h of live) {
    if (FUSERMOUNT) spawnSync(FUSERMOUNT, ['-u', h.mountpoint], { stdio: 'ignore' });
    spawnSync('umount', ['-l', h.mountpoint], { stdio: 'ignore' });
    for (const c of h.children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const pid of [...h.detachedPids, ...childPidsOf(h.sshdPid)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    if (h.loop && stillOurs(h)) spawnSync('losetup', ['-d', h.loop], { stdio: 'ignore' });
  }
  live.clear();
}

/**
 * Whether our loop device still has our image behind it. It may have gone
 * already (detached while mounted, e.g. by someone's `losetup -D`, it
 * clears itself at the unmount) and may then even serve someone else: a
 * device that is not ours any more is left alone.
 */
function stillOurs(h: Held): boolean {
  try {
    const backing = readFileSync(`/sys/block/${h.loop!.replace(/^\/dev\//, '')}/loop/backing_file`, 'utf8').trim();
    return backing === h.image || backing === `${h.image} (deleted)`;
  } catch {
    return false; // no longer bound
  }
}

function track(h: Held): void {
  live.add(h);
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.on('exit', emergencyTeardown);
  }
}

/** PIDs whose parent is `ppid` (none for undefined). */
function childPidsOf(ppid: number | undefined): number[] {
  if (ppid === undefined) return [];
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === ppid) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function exited(c: ChildProcess): boolean {
  return c.exitCode !== null || c.signalCode !== null;
}

/** Waits for a child we started to exit; SIGTERM, then SIGKILL, when it does not. Reports a kill. */
async function endChild(c: ChildProcess, what: string, graceMs: number, problems: string[], expectExit: boolean): Promise<void> {
  if (c.pid === undefined) return;
  if (expectExit && (await waitFor(() => exited(c), graceMs))) return;
  if (exited(c)) return;
  c.kill('SIGTERM');
  if (await waitFor(() => exited(c), 3000)) {
    if (expectExit) problems.push(`${what} (pid ${c.pid}) did not exit after its unmount; ended with SIGTERM`);
    return;
  }
  c.kill('SIGKILL');
  await waitFor(() => exited(c), 3000);
  problems.push(`${what} (pid ${c.pid}) ignored SIGTERM; killed`);
}

/** Unmounts a store: kernel mounts by umount, FUSE mounts by fusermount -u, each retried; then umount -l. */
async function unmountStore(mnt: string, fuse: boolean, problems: string[]): Promise<void> {
  const errors: string[] = [];
  for (let i = 0; i < 5 && isMounted(mnt); i++) {
    if (i > 0) await sleep(200 * i);
    const r = fuse && FUSERMOUNT ? await run(FUSERMOUNT, ['-u', mnt]) : await run('umount', [mnt]);
    if (r.code !== 0) errors.push(r.stderr.trim());
  }
  if (isMounted(mnt)) {
    const r = await run('umount', ['-l', mnt]);
    problems.push(`${mnt} stayed busy (${errors.join('; ')}); lazily unmounted${r.code === 0 ? '' : `, which failed too: ${r.stderr.trim()}`}`);
  }
  if (isMounted(mnt)) problems.push(`could not unmount ${mnt}`);
}

async function release(h: Held): Promise<string[]> {
  const problems: string[] = [];
  try {
    await unmountStore(h.mountpoint, h.fuse, problems);
    // A FUSE daemon exits by itself once its mount is gone.
    for (const c of h.children.filter((c) => c.pid !== h.sshdPid)) await endChild(c, 'FUSE daemon', 5000, problems, true);
    for (const pid of h.detachedPids) {
      if (await waitFor(() => !isAlive(pid), 5000)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
      problems.push(`detached FUSE daemon ${pid} for ${h.mountpoint} still running after its unmount; killed`);
    }
    const sshd = h.children.find((c) => c.pid === h.sshdPid);
    if (sshd) {
      const sessions = childPidsOf(h.sshdPid);
      await endChild(sshd, 'sshd', 0, problems, false);
      // Its session processes end when their client (sshfs, gone by now) has disconnected.
      for (const pid of sessions) {
        if (await waitFor(() => !isAlive(pid), 5000)) continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
        problems.push(`sshd session process ${pid} outlived its client; killed`);
      }
    }
    if (h.loop && stillOurs(h)) {
      let r = await run('losetup', ['-d', h.loop]);
      for (let i = 0; i < 5 && r.code !== 0 && stillOurs(h); i++) {
        await sleep(200 * (i + 1));
        r = await run('losetup', ['-d', h.loop]);
      }
      if (r.code !== 0 && stillOurs(h)) problems.push(describeRun(`losetup -d ${h.loop}`, r));
    }
  } catch (err) {
    problems.push((err as Error).message);
  } finally {
    live.delete(h);
  }
  return problems;
}

// ---------------------------------------------------------------- helpers

async function must(cmd: string, args: string[], what = `${cmd} ${args.join(' ')}`): Promise<string> {
  const r = await run(cmd, args, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(describeRun(what, r));
  return r.stdout;
}

/** A TCP port on 127.0.0.1 free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((res) => {
    const c = createConnection({ host: '127.0.0.1', port });
    c.setTimeout(1000, () => {
      c.destroy();
      res(false);
    });
    c.on('connect', () => {
      c.destroy();
      res(true);
    });
    c.on('error', () => res(false));
  });
}

/** Starts `cmd args` as our child with stdout and stderr to `log` (never our pipes). */
function startLogged(cmd: string, args: string[], log: string): ChildProcess {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
    child.on('error', () => undefined); // reported through exitCode and the log
    return child;
  } finally {
    closeSync(fd);
  }
}

const readLog = (p: string): string => (existsSync(p) ? readFileSync(p, 'utf8') : '');

/** Waits for `mnt` in /proc/mounts while `child` (if given) runs; throws with the log otherwise. */
async function awaitMount(mnt: string, what: string, log: string, child?: ChildProcess): Promise<void> {
  const ok = await waitFor(() => isMounted(mnt) || (child !== undefined && exited(child)), 20_000);
  if (!ok || !isMounted(mnt)) throw new Error(`${what} did not mount ${mnt}${child && exited(child) ? ` (exit ${child.exitCode ?? child.signalCode})` : ''}:\n${readLog(log)}`);
}

// ----------------------------------------------------------------- stores

async function loopStore(kind: 'ext4' | 'xfs' | 'btrfs' | 'exfat', base: string, h: Held): Promise<void> {
  const img = join(base, `${kind}.img`);
  await must('truncate', ['-s', `${IMAGE_MIB[kind]}M`, img]);
  if (kind === 'ext4') await must(toolPath('mkfs.ext4'), ['-q', '-F', img]);
  else if (kind === 'xfs') await must(toolPath('mkfs.xfs'), ['-q', img]);
  else if (kind === 'btrfs') await must(toolPath('mkfs.btrfs'), ['-q', img]);
  else await must(toolPath('mkfs.exfat'), [img]);
  h.image = img;
  h.loop = (await must(toolPath('losetup'), ['--find', '--show', img])).trim();
  if (kind !== 'exfat') {
    await must('mount', ['-t', kind, h.loop, h.mountpoint]);
    return;
  }
  h.fuse = true;
  const log = join(base, 'exfat-fuse.log');
  // It detaches itself once mounted; the foreground process gets a log file, not our pipes, which the daemon would keep open.
  const starter = startLogged(toolPath('mount.exfat-fuse'), [h.loop, h.mountpoint], log);
  if (!(await waitFor(() => exited(starter), 20_000))) starter.kill('SIGKILL');
  if (starter.exitCode !== 0) throw new Error(`mount.exfat-fuse failed (exit ${starter.exitCode ?? starter.signalCode}):\n${readLog(log)}`);
  await awaitMount(h.mountpoint, 'mount.exfat-fuse', log);
  // The daemon is the one process with our mount point on its command line.
  h.detachedPids.push(...daemonPids(h.mountpoint));
}

async function sshfsStore(base: string, h: Held): Promise<void> {
  const remote = join(base, 'remote');
  mkdirSync(remote);
  const hostKey = join(base, 'host_ed25519');
  const clientKey = join(base, 'client_ed25519');
  await must(toolPath('ssh-keygen'), ['-q', '-t', 'ed25519', '-N', '', '-C', 'tscryptfs-test-host', '-f', hostKey]);
  await must(toolPath('ssh-keygen'), ['-q', '-t', 'ed25519', '-N', '', '-C', 'tscryptfs-test-client', '-f', clientKey]);
  const authorized = join(base, 'authorized_keys');
  writeFileSync(authorized, readFileSync(`${clientKey}.pub`), { mode: 0o600 });
  const config = join(base, 'sshd_config');
  writeFileSync(
    config,
    [
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${authorized}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      `PidFile ${join(base, 'sshd.pid')}`,
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  // The privilege separation directory, which sshd refuses to start without.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const sshdLog = join(base, 'sshd.log');
  let port = 0;
  for (let attempt = 0; attempt < 3 && port === 0; attempt++) {
    const candidate = await freePort();
    // sshd insists on being started by its absolute path.
    const sshd = startLogged(toolPath('sshd'), ['-D', '-e', '-f', config, '-p', String(candidate)], sshdLog);
    h.children.push(sshd);
    h.sshdPid = sshd.pid;
    const up = await waitFor(() => exited(sshd), 200).then(async (gone) => {
      if (gone) return false;
      for (let i = 0; i < 50; i++) {
        if (exited(sshd)) return false;
        if (await accepts(candidate)) return true;
        await sleep(100);
      }
      return false;
    });
    if (up) port = candidate;
    else {
      await endChild(sshd, 'sshd', 0, [], false);
      h.children.pop();
      h.sshdPid = undefined;
    }
  }
  if (port === 0) throw new Error(`sshd did not start:\n${readLog(sshdLog)}`);
  const sshfsLog = join(base, 'sshfs.log');
  const opts = [
    `IdentityFile=${clientKey}`,
    'StrictHostKeyChecking=no',
    'UserKnownHostsFile=/dev/null',
    'BatchMode=yes',
    'LogLevel=ERROR',
    `port=${port}`,
    `ssh_command=${toolPath('ssh')}`,
  ].join(',');
  const sshfs = startLogged(toolPath('sshfs'), ['-f', '-o', opts, `root@127.0.0.1:${remote}`, h.mountpoint], sshfsLog);
  h.children.push(sshfs);
  h.fuse = true;
  await awaitMount(h.mountpoint, 'sshfs', sshfsLog, sshfs);
}

async function rcloneStore(base: string, h: Held): Promise<void> {
  const remote = join(base, 'remote');
  mkdirSync(remote);
  const log = join(base, 'rclone.log');
  const rclone = startLogged(
    toolPath('rclone'),
    ['mount', remote, h.mountpoint, '--vfs-cache-mode', 'writes', '--cache-dir', join(base, 'rclone-cache'), '--config', '/dev/null'],
    log,
  );
  h.children.push(rclone);
  h.fuse = true;
  await awaitMount(h.mountpoint, 'rclone mount', log, rclone);
}

/**
 * Sets up a store of `kind` below `dir` (made here; the caller's temp dir
 * holds it). Throws, with everything already made given back, if any part
 * fails.
 */
export async function setUpStore(kind: StoreKind, dir: string): Promise<BackingStore> {
  const base = resolve(dir);
  mkdirSync(base, { recursive: true });
  const mountpoint = join(base, 'store');
  mkdirSync(mountpoint);
  const h: Held = { mountpoint, fuse: false, children: [], detachedPids: [] };
  track(h);
  try {
    if (kind === 'sshfs') await sshfsStore(base, h);
    else if (kind === 'rclone') await rcloneStore(base, h);
    else await loopStore(kind, base, h);
  } catch (err) {
    const problems = await release(h);
    throw new Error(`setting up the ${kind} store failed: ${(err as Error).message}${problems.length ? `\nand its teardown: ${problems.join('; ')}` : ''}`);
  }
  const fstype = mountEntries(mountpoint).at(-1)?.fstype ?? '?';
  let done = false;
  return {
    kind,
    mountpoint,
    fstype,
    teardown: async () => {
      if (done) return [];
      done = true;
      return release(h);
    },
  };
}

/** The mount points of the stores still set up (none after every teardown ran). */
export function liveStores(): string[] {
  return [...live].map((h) => h.mountpoint);
}

/** Tears down every store still set up (the mounts using them must be gone first); the problems met. */
export async function tearDownLiveStores(): Promise<string[]> {
  const problems: string[] = [];
  for (const h of [...live].reverse()) problems.push(...(await release(h)));
  return problems;
}
