/**
 * Names: unlink, rename, link, and symlinks (targets encrypted,
 * Documentation/format.md §8.1). Long names get their .name file before the
 * entry appears and lose it after the entry is gone (§7.8).
 */
import { BlockError } from '../content/index.js';
import { b64Decode, b64Encode, deleteLongName, DIRIV_NAME } from '../names/index.js';
import { fsError, hasCode } from '../util/errors.js';
import { RENAME_EXCHANGE, RENAME_NOREPLACE, RENAME_WHITEOUT } from '../util/sys-at.js';
import type { Located } from './backing/index.js';
import { rmdirEntry } from './node-dir-ops.js';
import { assertWritable, atEntry, atNode, credentialOf, plainError, withLongName, type Owner, type VaultCore } from './vault-core.js';

/** Removes the name `path`. Native twin, for a mount's unlinks: fp_unlink in native/fastpath/remove.c. */
export async function unlink(core: VaultCore, path: string): Promise<void> {
  assertWritable(core, 'unlink', path);
  await atEntry(core, path, 'unlink', async (e) => {
    try {
      await core.at.unlinkat(e.dir.fd, e.diskName, 0);
    } catch (err) {
      throw plainError(err, 'unlink', path);
    }
    if (e.long) await deleteLongName(core.at, e.dir.fd, e.diskName);
  });
}

/** How rename treats an existing target: replace it (rename(2)), refuse (EEXIST), or swap the two. */
export type RenameMode = 'replace' | 'noreplace' | 'exchange';

/**
 * Renames a file or directory, as rename(2), or renameat2(2) with `mode`
 * or with its flags as a number (RENAME_NOREPLACE 1, RENAME_EXCHANGE 2,
 * RENAME_WHITEOUT 4). The flags go to the backing store's renameat2 as they
 * are, so the check or the swap is atomic there; a store that refuses one
 * gives its error (EINVAL), never an imitation. A whiteout is made by the
 * daemon (root) and then given to `owner`, as the kernel gives one to its
 * caller on a local filesystem.
 */
export async function rename(core: VaultCore, from: string, to: string, mode: RenameMode | number = 'replace', owner?: Owner): Promise<void> {
  assertWritable(core, 'rename', from);
  const flags = typeof mode === 'number' ? mode : mode === 'noreplace' ? RENAME_NOREPLACE : mode === 'exchange' ? RENAME_EXCHANGE : 0;
  await atEntry(core, from, 'rename', (src) =>
    atEntry(core, to, 'rename', async (dst) => {
      if (src.logPath === dst.logPath) return;
      const doRename = (): Promise<void> =>
        withLongName(core, dst, () => core.at.renameat2(src.dir.fd, src.diskName, dst.dir.fd, dst.diskName, flags));
      try {
        try {
          await doRename();
        } catch (err) {
          // A plaintext-empty directory is not empty on disk (its diriv): remove it and retry.
          if (flags !== 0 || !hasCode(err, 'ENOTEMPTY', 'EEXIST') || !(await isEmptyCipherDir(core, dst))) throw err;
          await rmdirEntry(core, dst);
          await doRename();
        }
      } catch (err) {
        throw plainError(err, 'rename', from);
      }
      // After an exchange both names still exist, and a whiteout takes the source's name: each keeps its .name file.
      if (src.long && (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)) === 0) await deleteLongName(core.at, src.dir.fd, src.diskName);
      core.tree.forgetTree(src.logPath);
      core.tree.forgetTree(dst.logPath);
      const cred = (flags & RENAME_WHITEOUT) !== 0 ? credentialOf(owner) : undefined;
      if (cred !== undefined && (cred.uid !== 0 || cred.gid !== 0)) {
        await core.at.fchownat(src.dir.fd, src.diskName, cred.uid, cred.gid).catch((err: Error) => core.log.warn(`${src.logPath}: whiteout made, but not given to uid ${cred.uid}: ${err.message}`));
      }
    }),
  );
}

async function isEmptyCipherDir(core: VaultCore, e: Located): Promise<boolean> {
  try {
    const names = await core.at.readdirat(e.dir.fd, e.diskName);
    return names.every((n) => core.format.dirIV && n === DIRIV_NAME);
  } catch {
    return false;
  }
}

/** A new name for an existing file (directories: EPERM, as link(2)). */
export async function link(core: VaultCore, existing: string, newPath: string): Promise<void> {
  assertWritable(core, 'link', newPath);
  await atEntry(core, existing, 'link', (src) =>
    atEntry(core, newPath, 'link', async (dst) => {
      try {
        await withLongName(core, dst, () => core.at.linkat(src.dir.fd, src.diskName, dst.dir.fd, dst.diskName));
      } catch (err) {
        throw plainError(err, 'link', newPath);
      }
    }),
  );
}

/** Creates `path` as a symlink pointing to `target`. */
export async function symlink(core: VaultCore, target: string, path: string, owner?: Owner): Promise<void> {
  assertWritable(core, 'symlink', path);
  const stored = encryptSymlinkTarget(core, target);
  await atEntry(core, path, 'symlink', async (e) => {
    try {
      await withLongName(core, e, () => core.at.symlinkat(stored, e.dir.fd, e.diskName, credentialOf(owner)));
    } catch (err) {
      throw plainError(err, 'symlink', path);
    }
  });
}

export async function readlink(core: VaultCore, path: string): Promise<string> {
  return atNode(core, path, 'readlink', (e) => readlinkEntry(core, e, path));
}

function encryptSymlinkTarget(core: VaultCore, target: string): string {
  if (core.format.plaintextNames) return target;
  return b64Encode(core.ciphers.content.sealMessage(Buffer.from(target, 'utf8')), core.format.raw64);
}

/** The plaintext target of the symlink entry `e`; EIO (logged) when it does not decrypt. */
export async function readlinkEntry(core: VaultCore, e: Located, path: string): Promise<string> {
  let raw: Buffer;
  try {
    raw = await core.at.readlinkat(e.dir.fd, e.diskName);
  } catch (err) {
    throw plainError(err, 'readlink', path);
  }
  if (core.format.plaintextNames) return raw.toString('utf8');
  const sealed = b64Decode(raw.toString('latin1'), core.format.raw64);
  try {
    if (sealed === null) throw new BlockError('target is not valid base64', -1);
    return core.ciphers.content.openMessage(sealed).toString('utf8');
  } catch (err) {
    core.log.warn(`${e.logPath}: symlink target does not decrypt: ${(err as Error).message}`);
    throw fsError('EIO', 'readlink', path);
  }
}

