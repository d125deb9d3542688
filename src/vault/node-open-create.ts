/**
 * Opening and creating: regular files (a VaultFile over the cipher file),
 * and FIFOs, sockets and device nodes (Documentation/format.md §2.3: the
 * same node type on disk, its name encrypted, no content).
 */
import { constants as C } from 'node:fs';
import { fsError } from '../util/errors.js';
import { closeFd } from '../util/fd-io.js';
import type { ContentFile } from './file-content.js';
import { backingFlags, isWritable, parseOpenFlags } from './open-flags.js';
import { assertWritable, atEntry, credentialOf, entryExists, plainError, withLongName, type Owner, type VaultCore } from './vault-core.js';
import { VaultFile } from './vault-file.js';

/**
 * Opens a regular file. `flags` as for fs.open ('r', 'w+', 'a', ...) or
 * O_* numbers; `mode` (and `owner`) apply when the file is created.
 * Native twins, for a mount's opens and creates: fp_open and fp_create in
 * native/fastpath/open.c.
 */
export async function open(core: VaultCore, path: string, flags: string | number, mode: number, owner?: Owner): Promise<VaultFile> {
  const f = parseOpenFlags(flags);
  if (isWritable(f) || (f & (C.O_CREAT | C.O_TRUNC)) !== 0) assertWritable(core, 'open', path);
  const creating = (f & C.O_CREAT) !== 0;
  const { fd, logPath } = await atEntry(core, path, 'open', async (e) => {
    const doOpen = (): Promise<number> => core.at.openat(e.dir.fd, e.diskName, backingFlags(f), mode, creating ? credentialOf(owner) : undefined);
    try {
      const longCreate = creating && e.long && !(await entryExists(core, e));
      return { fd: longCreate ? await withLongName(core, e, doOpen) : await doOpen(), logPath: e.logPath };
    } catch (err) {
      throw plainError(err, 'open', path);
    }
  });
  const handle = await wrap(core, fd, f, path, logPath);
  if ((f & C.O_TRUNC) !== 0 && isWritable(f)) {
    try {
      await handle.truncate(0);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
  return handle;
}

/**
 * A handle over `fd`, a cipher file's descriptor someone else opened (a
 * mount's native open or create, src/fuse/native-fast-path.ts) for
 * `access` (O_RDONLY, O_WRONLY or O_RDWR); the handle closes it. `path` is
 * the plaintext path it goes by now.
 */
export async function adopt(core: VaultCore, fd: number, path: string, access: number = C.O_RDONLY): Promise<VaultFile> {
  core.assertOpen();
  let logPath = path;
  try {
    logPath = await atEntry(core, path, 'open', async (e) => e.logPath); // for log lines only
  } catch {
    // unlinked meanwhile, or a name libfuse made up: its plaintext path will do
  }
  return wrap(core, fd, access & (C.O_RDONLY | C.O_WRONLY | C.O_RDWR), path, logPath);
}

/** The VaultFile over `fd` (a regular file, or it is closed and EISDIR or EINVAL thrown). */
async function wrap(core: VaultCore, fd: number, f: number, path: string, logPath: string): Promise<VaultFile> {
  let dev: number;
  let ino: bigint;
  try {
    const w = await core.at.fstat(fd);
    const type = w[0]! & C.S_IFMT;
    if (type === C.S_IFDIR) throw fsError('EISDIR', 'open', path);
    if (type !== C.S_IFREG) throw fsError('EINVAL', 'open', path, 'not a regular file');
    dev = w[5]!;
    ino = BigInt(w[7]!) | (BigInt(w[8]!) << 32n);
  } catch (err) {
    await closeFd(fd);
    throw err;
  }
  const state = core.files.acquire(dev, ino);
  const content: ContentFile = { fd, state, cipher: core.ciphers.content, cipherPath: logPath, log: core.log, buffers: core.cipherBuffers, prealloc: core.prealloc };
  const attrs = { at: core.at, assertWritable: (syscall: string, p: string) => assertWritable(core, syscall, p) };
  const handle: VaultFile = new VaultFile(
    content,
    f,
    path,
    () => {
      core.files.release(dev, ino);
      core.openHandles.delete(handle);
    },
    attrs,
  );
  core.openHandles.add(handle);
  return handle;
}

/**
 * Creates a FIFO, socket, character or block device (a regular file for
 * S_IFREG or no type), owned by `owner` when given.
 */
export async function mknod(core: VaultCore, path: string, mode: number, dev: number, owner?: Owner): Promise<void> {
  assertWritable(core, 'mknod', path);
  const type = mode & C.S_IFMT;
  if (type === C.S_IFREG || type === 0) {
    await (await open(core, path, C.O_WRONLY | C.O_CREAT | C.O_EXCL, mode & 0o7777, owner)).close();
    return;
  }
  if (![C.S_IFIFO, C.S_IFSOCK, C.S_IFCHR, C.S_IFBLK].includes(type)) throw fsError('EINVAL', 'mknod', path);
  await atEntry(core, path, 'mknod', async (e) => {
    try {
      await withLongName(core, e, () => core.at.mknodat(e.dir.fd, e.diskName, mode, dev, credentialOf(owner)));
    } catch (err) {
      throw plainError(err, 'mknod', path);
    }
  });
}
