/**
 * tscryptfs [OPTIONS] CIPHERDIR MOUNTPOINT
 *
 * Everything gocryptfs checks before it talks to FUSE, in gocryptfs's
 * order, so the exit codes match: MOUNTPOINT (10), -masterkey (14) or
 * config (11 / 27), password (9 / 12). Then the mount: in the foreground
 * with -fg, otherwise in a background process (daemon.ts) while this one
 * returns once the mount is ready; a FUSE failure is exit 19. That process
 * starts before the config and the password are read, so this module
 * imports what it needs for them only after it has started it.
 */
import { promises as fsp } from 'node:fs';
import { createServer } from 'node:net';
import { resolve, sep } from 'node:path';
import type { ConfFile, FormatOptions } from '../config/index.js';
import { bool, list, num, str } from './flags/command-line.js';
import type { MountOptions } from '../fuse/index.js';
import type { Logger } from '../util/logger.js';
import { startDaemon } from './daemon.js';
import type { ServePlan } from './serve.js';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { masterKeyFromArgs } from './masterkey.js';
import { describeError } from './output.js';
import { hasCode } from '../util/errors.js';
import { wipe } from './password.js';

export interface MountPlan {
  cipherdir: string;
  mountpoint: string;
  /** Null when the key came from -masterkey / -zerokey (the config is not read then). */
  conf: ConfFile | null;
  format: FormatOptions;
  masterKey: Buffer;
}

async function checkMountpoint(ctx: CliContext, mountpoint: string): Promise<void> {
  const { cipherdir } = ctx;
  if (cipherdir === mountpoint || cipherdir.startsWith(mountpoint + sep)) {
    throw new CliError(EXIT.MountPoint, `Mountpoint ${JSON.stringify(mountpoint)} would shadow cipherdir ${JSON.stringify(cipherdir)}, this is not supported`);
  }
  if (mountpoint.startsWith(cipherdir + sep)) {
    throw new CliError(EXIT.MountPoint, `Mountpoint ${JSON.stringify(mountpoint)} is contained in cipherdir ${JSON.stringify(cipherdir)}, this is not supported`);
  }
  if (mountpoint.startsWith('/dev/fd/')) return; // fuse's "magic fd" syntax
  try {
    const st = await fsp.stat(mountpoint);
    if (!st.isDirectory()) throw new Error(`${mountpoint} is not a directory`);
    if (!bool(ctx.args, 'nonempty') && (await fsp.readdir(mountpoint)).length > 0) {
      throw new Error(`directory ${mountpoint} not empty`);
    }
  } catch (err) {
    throw new CliError(EXIT.MountPoint, `Invalid mountpoint: ${describeError(err)}`);
  }
}

/**
 * -ctlsock PATH, made absolute (the daemon works from /). Like gocryptfs,
 * fail (exit 20) before asking for the password if the socket cannot be
 * made: bind it once here and remove it; the mount binds it for real.
 */
async function checkCtlSock(ctx: CliContext): Promise<string | null> {
  const given = str(ctx.args, 'ctlsock');
  if (given === '') return null;
  const path = resolve(given);
  try {
    await new Promise<void>((res, rej) => {
      const server = createServer();
      server.once('error', rej);
      server.listen(path, () => server.close(() => res()));
    });
  } catch (err) {
    throw new CliError(EXIT.CtlSock, `ctlsock: listen unix ${path}: bind: ${hasCode(err, 'EADDRINUSE') ? 'address already in use' : describeError(err)}`);
  }
  await fsp.rm(path, { force: true });
  return path;
}

/** Format settings from -aessiv / -xchacha / ... when the config is bypassed. */
export async function formatFromFlags(ctx: CliContext): Promise<FormatOptions> {
  const a = ctx.args;
  // -reverse implies -aessiv.
  const ciphers = (['aessiv', 'xchacha', 'aegis'] as const).filter((c) => bool(a, c) || (c === 'aessiv' && bool(a, 'reverse')));
  if (ciphers.length > 1) {
    throw new CliError(EXIT.Usage, `The options ${ciphers.map((c) => `-${c}`).join(' and ')} cannot be used at the same time`);
  }
  const cipher = bool(a, 'xchacha') ? 'xchacha' : ciphers.includes('aessiv') ? 'aes-siv' : bool(a, 'aegis') ? 'aegis' : 'aes-gcm';
  (await import('./aegis-check.js')).requireAegisIfUsed(cipher);
  const { formatFromInitOptions } = await import('../vault/index.js');
  try {
    return formatFromInitOptions({
      cipher,
      plaintextNames: bool(a, 'plaintextnames'),
      deterministicNames: bool(a, 'deterministic-names'),
      longNameMax: num(a, 'longnamemax') || 255,
      raw64: bool(a, 'raw64'),
      hkdf: bool(a, 'hkdf'),
      // Only here, with the config bypassed, as in gocryptfs (for v0.8 and older filesystems).
      longNames: bool(a, 'longnames'),
    });
  } catch (err) {
    throw new CliError(EXIT.Usage, (err as Error).message);
  }
}

export async function runMount(ctx: CliContext): Promise<void> {
  const mountpoint = resolve(ctx.args.positional[1]!);
  await checkMountpoint(ctx, mountpoint);

  const reverse = bool(ctx.args, 'reverse') ? await (await import('./reverse-settings.js')).reverseSettings(ctx) : undefined;
  const ctlsock = await checkCtlSock(ctx);
  const fg = bool(ctx.args, 'fg');
  const daemon = fg ? null : startDaemon({ cipherdir: ctx.cipherdir, mountpoint, reverse: !!reverse, readOnly: bool(ctx.args, 'ro'), nosyslog: bool(ctx.args, 'nosyslog'), quiet: ctx.out.quiet }, ctx.out);
  // In the foreground, the modules that serve load while the key is derived.
  const serving = fg ? import('./serve.js') : null;
  serving?.catch(() => undefined);
  let serve: ServePlan;
  try {
    serve = servePlan(ctx, await mountPlan(ctx, mountpoint, !!reverse));
  } catch (err) {
    await daemon?.abort();
    throw err;
  }
  if (reverse) {
    serve.reverse = reverse;
    serve.idleMs = 0; // gocryptfs ignores -idle in reverse mode
  }
  if (ctlsock) serve.ctlsock = ctlsock;
  if (daemon) {
    await daemon.serve(serve);
    notifyReady(ctx);
    return;
  }
  const log: Logger = { warn: (m) => ctx.out.warn(m), info: (m) => ctx.out.info(m) };
  const { done } = await (await serving!).startServing(serve, log);
  ctx.out.info('Filesystem mounted and ready.');
  notifyReady(ctx);
  await done;
}

/** The key and format: from -masterkey / -zerokey and the flags, or from the config and the password. */
async function mountPlan(ctx: CliContext, mountpoint: string, reverse: boolean): Promise<MountPlan> {
  let plan: MountPlan;
  const keyFromArgs = await masterKeyFromArgs(ctx.args, ctx.out);
  if (keyFromArgs) {
    let format: FormatOptions;
    try {
      format = await formatFromFlags(ctx);
    } catch (err) {
      wipe(keyFromArgs);
      throw err;
    }
    plan = { cipherdir: ctx.cipherdir, mountpoint, conf: null, format, masterKey: keyFromArgs };
  } else {
    const [{ loadConfig }, { confFormat }] = await Promise.all([import('./load-config.js'), import('../config/index.js')]);
    const { conf, masterKey } = await loadConfig(ctx);
    plan = { cipherdir: ctx.cipherdir, mountpoint, conf, format: confFormat(conf), masterKey };
  }
  if (reverse && plan.format.cipher !== 'aes-siv') {
    wipe(plan.masterKey);
    throw new CliError(EXIT.Usage, 'AES-SIV is required by reverse mode, but not enabled in the config file');
  }
  return plan;
}

/** -notifypid PID: SIGUSR1 to PID once the mount is ready (for a waiting parent, as gocryptfs does). */
function notifyReady(ctx: CliContext): void {
  const pid = num(ctx.args, 'notifypid');
  if (pid <= 0) return;
  try {
    process.kill(pid, 'SIGUSR1');
  } catch (err) {
    ctx.out.warn(`-notifypid ${pid}: ${describeError(err)}`);
  }
}

/** The mount options gocryptfs's flags ask for. */
function mountOptions(ctx: CliContext): MountOptions {
  const a = ctx.args;
  const ko = str(a, 'ko');
  const extra = ko === '' ? [] : ko.split(',').filter((o) => o !== '');
  if (bool(a, 'sharedstorage')) extra.push('attr_timeout=0', 'entry_timeout=0', 'negative_timeout=0');
  const fsname = str(a, 'fsname');
  const forceOwner = parseForceOwner(str(a, 'force_owner'));
  return {
    readOnly: bool(a, 'ro'),
    // -force_owner implies -allow_other (gocryptfs).
    allowOther: bool(a, 'allow_other') || forceOwner !== undefined,
    ...(forceOwner && { forceOwner }),
    serializeReads: bool(a, 'serialize_reads'),
    acl: bool(a, 'acl'),
    nonempty: bool(a, 'nonempty'),
    kernelCache: bool(a, 'kernel_cache'),
    ...(fsname !== '' && { fsname }),
    extraOptions: extra,
    attrCache: !bool(a, 'sharedstorage'),
    negativeTimeout: !bool(a, 'sharedstorage'),
    nativeReads: !bool(a, 'sharedstorage'),
    backingLocks: bool(a, 'sharedstorage'),
    dev: bool(a, 'dev') && !bool(a, 'nodev'),
    suid: bool(a, 'suid') && !bool(a, 'nosuid'),
    exec: !bool(a, 'noexec'),
    debug: bool(a, 'fusedebug'),
  };
}

/** -force_owner UID:GID (checked by main.ts already); undefined when not given. */
function parseForceOwner(v: string): { uid: number; gid: number } | undefined {
  if (v === '') return undefined;
  const [uid, gid] = v.split(':').map(Number);
  return { uid: uid!, gid: gid! };
}

/** The plan a mount process serves; takes the key (the MountPlan's copy is wiped). */
function servePlan(ctx: CliContext, plan: MountPlan): ServePlan {
  const masterKey = Buffer.from(plan.masterKey);
  wipe(plan.masterKey);
  return {
    cipherdir: plan.cipherdir,
    mountpoint: plan.mountpoint,
    format: plan.format,
    masterKey,
    backend: ctx.backend,
    readOnly: bool(ctx.args, 'ro'),
    noPrealloc: bool(ctx.args, 'noprealloc'),
    sharedStorage: bool(ctx.args, 'sharedstorage'),
    mount: mountOptions(ctx),
    idleMs: num(ctx.args, 'idle'),
    wpanic: bool(ctx.args, 'wpanic'),
    badname: list(ctx.args, 'badname'),
    noConflicts: bool(ctx.args, 'noconflicts'),
  };
}
