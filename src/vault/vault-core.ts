/**
 * What the Vault's operations share (the files node-*.ts each hold one
 * group of them, as gocryptfs splits its fusefrontend node): the walk to
 * the backing entries, the *at() calls, the ciphers, and the helpers every
 * operation needs: the read-only check, errors that name the plaintext
 * path, long-name files around a creation, and who owns what is created.
 */
import type { FormatOptions } from '../config/index.js';
import { deleteLongName, writeLongName, type NameMemo } from '../names/index.js';
import { fsError, hasCode } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { AtCalls, Credential } from '../util/sys-at.js';
import type { CipherTree, Located } from './backing/index.js';
import type { BufferPool } from './buffer-pool.js';
import type { FileStateTable } from './file-state.js';
import type { VaultCiphers } from './keys.js';
import type { Preallocator } from './prealloc.js';
import type { VaultFile } from './vault-file.js';

/**
 * Who a new file, directory, symlink or node belongs to: a FUSE request's
 * caller, or whoever a library user names. Honoured only when this
 * process runs as root (as gocryptfs does); otherwise new entries belong
 * to this process, as any file it creates.
 */
export interface Owner {
  uid: number;
  gid: number;
  /** Supplementary groups, for the permission checks of the creation itself. */
  groups?: readonly number[];
}

export interface VaultCore {
  readonly tree: CipherTree;
  readonly at: AtCalls;
  readonly format: FormatOptions;
  readonly ciphers: VaultCiphers;
  readonly log: Logger;
  readonly readOnly: boolean;
  readonly files: FileStateTable;
  readonly openHandles: Set<VaultFile>;
  readonly prealloc: Preallocator;
  readonly cipherBuffers: BufferPool;
  readonly nameMemo: NameMemo;
  assertOpen(): void;
}

export function assertWritable(core: VaultCore, syscall: string, path: string): void {
  core.assertOpen();
  if (core.readOnly) throw fsError('EROFS', syscall, path);
}

/** A backing error rewritten to name the plaintext path (never the cipher path). */
export function plainError(err: unknown, syscall: string, path: string): unknown {
  if (hasCode(err) && err.syscall !== undefined) return fsError(err.code, syscall, path);
  return err;
}

/** Runs `fn` on the node `path` names (the root included), its directory held meanwhile. */
export function atNode<T>(core: VaultCore, path: string, syscall: string, fn: (e: Located) => Promise<T>): Promise<T> {
  return atLocated(core, () => core.tree.node(path, syscall), fn);
}

/** Runs `fn` on the entry of `path`'s last component (not the root: EBUSY), its directory held meanwhile. */
export function atEntry<T>(core: VaultCore, path: string, syscall: string, fn: (e: Located) => Promise<T>): Promise<T> {
  return atLocated(core, () => core.tree.entry(path, syscall), fn);
}

async function atLocated<T>(core: VaultCore, locate: () => Promise<Located>, fn: (e: Located) => Promise<T>): Promise<T> {
  core.assertOpen();
  const e = await locate();
  try {
    return await fn(e);
  } finally {
    e.release();
  }
}

/** True when the entry exists (without following it). */
export async function entryExists(core: VaultCore, e: Located): Promise<boolean> {
  try {
    await core.at.fstatat(e.dir.fd, e.diskName);
    return true;
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return false;
    throw err;
  }
}

/**
 * Runs `create` for a new entry, writing its long-name file first and
 * removing that again if the creation fails (Documentation/format.md §7.8).
 */
export async function withLongName<T>(core: VaultCore, e: Located, create: () => Promise<T>): Promise<T> {
  if (!e.long) return create();
  const existed = await core.at.fstatat(e.dir.fd, e.diskName + '.name').then(
    () => true,
    () => false,
  );
  await writeLongName(core.at, e.dir.fd, e.diskName, e.cname);
  try {
    return await create();
  } catch (err) {
    if (!existed) await deleteLongName(core.at, e.dir.fd, e.diskName);
    throw err;
  }
}

/** The credential a creation runs under: the owner's, when this process is root and one is given. */
export function credentialOf(owner: Owner | undefined): Credential | undefined {
  if (owner === undefined || process.getuid?.() !== 0) return undefined;
  return { uid: owner.uid, gid: owner.gid, groups: owner.groups ?? [] };
}
