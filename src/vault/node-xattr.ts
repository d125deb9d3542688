/**
 * Extended attributes (Documentation/format.md §8.2-§8.4): names encrypted
 * under user.gocryptfs., values sealed like symlink targets, POSIX ACLs in
 * clear. On the entry itself: a symlink has none (Linux keeps no user
 * xattrs on links).
 *
 * A mount answers getxattr and listxattr of an entry with no extended
 * attributes at all without this code (native/fastpath/lookup.c,
 * no_xattrs: ENODATA, an empty list), and sends here every name stored
 * under more than 255 bytes (see encryptXattrName).
 */
import { fsError } from '../util/errors.js';
import { XATTR_CREATE, XATTR_NAME_MAX, XATTR_REPLACE } from '../util/sys-at.js';
import { assertWritable, atNode, plainError, type VaultCore } from './vault-core.js';

export type XattrSetMode = 'create' | 'replace';

function checkName(name: string, syscall: string, path: string): void {
  if (name.length === 0 || name.includes('\0')) throw fsError('EINVAL', syscall, path, 'bad xattr name');
}

/** The value of an extended attribute (ENODATA when absent). */
export async function getxattr(core: VaultCore, path: string, name: string): Promise<Buffer> {
  checkName(name, 'getxattr', path);
  const stored = core.ciphers.xattrNames.encryptXattrName(name);
  // A name whose stored form is too long for Linux cannot have been set: no such attribute. (ERANGE,
  // the backing call's answer, means "buffer too small" to getxattr's callers, which retry with larger ones.)
  if (Buffer.byteLength(stored) > XATTR_NAME_MAX) throw fsError('ENODATA', 'getxattr', path);
  return atNode(core, path, 'getxattr', async (e) => {
    let value: Buffer;
    try {
      value = await core.at.getxattrat(e.dir.fd, e.diskName, stored);
    } catch (err) {
      throw plainError(err, 'getxattr', path);
    }
    if (stored === name) return value; // ACLs are stored in clear
    try {
      return core.ciphers.content.openMessage(value);
    } catch (err) {
      core.log.warn(`${e.logPath}: xattr ${stored} does not decrypt: ${(err as Error).message}`);
      throw fsError('EIO', 'getxattr', path);
    }
  });
}

export async function setxattr(core: VaultCore, path: string, name: string, value: Uint8Array, mode?: XattrSetMode): Promise<void> {
  assertWritable(core, 'setxattr', path);
  checkName(name, 'setxattr', path);
  const stored = core.ciphers.xattrNames.encryptXattrName(name);
  const v = stored === name ? Buffer.from(value) : core.ciphers.content.sealMessage(value);
  const flags = mode === 'create' ? XATTR_CREATE : mode === 'replace' ? XATTR_REPLACE : 0;
  await atNode(core, path, 'setxattr', (e) => core.at.setxattrat(e.dir.fd, e.diskName, stored, v, flags)).catch((err) => {
    throw plainError(err, 'setxattr', path);
  });
}

export async function listxattr(core: VaultCore, path: string): Promise<string[]> {
  return atNode(core, path, 'listxattr', async (e) => {
    let names: string[];
    try {
      names = await core.at.listxattrat(e.dir.fd, e.diskName);
    } catch (err) {
      throw plainError(err, 'listxattr', path);
    }
    const out: string[] = [];
    for (const n of names) {
      const plain = core.ciphers.xattrNames.decryptXattrName(n);
      if (plain !== null) out.push(plain);
      else if (n.startsWith('user.gocryptfs.')) core.log.warn(`${e.logPath}: xattr name ${n} does not decrypt, hidden`);
    }
    return out;
  });
}

export async function removexattr(core: VaultCore, path: string, name: string): Promise<void> {
  assertWritable(core, 'removexattr', path);
  checkName(name, 'removexattr', path);
  const stored = core.ciphers.xattrNames.encryptXattrName(name);
  await atNode(core, path, 'removexattr', (e) => core.at.removexattrat(e.dir.fd, e.diskName, stored)).catch((err) => {
    throw plainError(err, 'removexattr', path);
  });
}
