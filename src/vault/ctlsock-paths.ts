/**
 * Path translation as gocryptfs's control socket does it in forward mode
 * (fusefrontend/ctlsock_interface.go): relative paths, one component at a
 * time, reading each directory's IV from disk, so every directory on the
 * way must exist (the last component need not). Errors are what
 * gocryptfs's calls fail with: the system call's errno (ENOENT for a
 * missing directory), EBADMSG for a name that does not decrypt, and
 * EB64 with Go's "illegal base64 data" message.
 */
import type { FormatOptions } from '../config/format.js';
import { b64ErrorOffset, joinPathBytes, longNameKind, readDirIV, readLongName, invalidNameCode, ZERO_IV, type NameCodec } from '../names/index.js';
import { fsError, hasCode, sameCode, type CodedError } from '../util/errors.js';
import type { AtCalls } from '../util/sys-at.js';

export interface PathContext {
  at: AtCalls;
  /** The cipher directory's descriptor (not closed here). */
  rootFd: number;
  format: FormatOptions;
  codec: NameCodec | null;
}

async function dirIV(ctx: PathContext, fd: number): Promise<Buffer> {
  return ctx.format.dirIV ? readDirIV(ctx.at, fd, '') : ZERO_IV;
}

/** Steps into a directory with openat(O_DIRECTORY|O_NOFOLLOW): it must exist and be a real directory. */
async function descend(ctx: PathContext, fd: number, name: string): Promise<number> {
  try {
    return await ctx.at.openDir(fd, name);
  } catch (err) {
    if (!hasCode(err)) throw err;
    throw fsError(sameCode(err.code, 'ELOOP') ? 'ENOTDIR' : err.code, 'openat', name);
  }
}

/**
 * Walks `parts` from the root: `step` translates each with its directory's
 * descriptor and says which name on disk to descend into (all but the last
 * must be directories).
 */
async function walk<T>(ctx: PathContext, parts: string[], step: (fd: number, part: string) => Promise<{ out: T; disk: string }>): Promise<T[]> {
  const out: T[] = [];
  let fd = ctx.rootFd;
  try {
    for (let i = 0; i < parts.length; i++) {
      const r = await step(fd, parts[i]!);
      out.push(r.out);
      if (i === parts.length - 1) break;
      const next = await descend(ctx, fd, r.disk);
      if (fd !== ctx.rootFd) await ctx.at.close(fd);
      fd = next;
    }
    return out;
  } finally {
    if (fd !== ctx.rootFd) await ctx.at.close(fd);
  }
}

function b64Error(offset: number): CodedError {
  const err = new Error(`illegal base64 data at input byte ${offset}`) as CodedError;
  err.code = 'EB64';
  return err;
}

/** Cipher path (relative to the cipher directory) of a relative plaintext path. */
export async function encryptPathAt(ctx: PathContext, plainPath: string): Promise<string> {
  const codec = ctx.codec;
  if (!codec || plainPath === '') return plainPath;
  const parts = await walk(ctx, plainPath.split('/'), async (fd, part) => {
    const name = Buffer.from(part, 'utf8');
    const iv = await dirIV(ctx, fd);
    // gocryptfs: too long is ENAMETOOLONG, any other invalid name EBADMSG.
    const bad = invalidNameCode(name);
    if (bad !== null) throw fsError(bad === 'ENAMETOOLONG' ? bad : 'EBADMSG', 'encrypt', plainPath);
    const cpart = codec.diskName(codec.encryptName(name, iv));
    return { out: cpart, disk: cpart };
  });
  return parts.join('/');
}

/**
 * Plaintext path of a relative cipher path, as bytes (a name need not be
 * UTF-8); hashed names are read from their .name files.
 */
export async function decryptPathAt(ctx: PathContext, cipherPath: string): Promise<Buffer> {
  const codec = ctx.codec;
  if (!codec || cipherPath === '') return Buffer.from(cipherPath, 'utf8');
  const parts = await walk(ctx, cipherPath.split('/'), async (fd, part) => {
    const iv = await dirIV(ctx, fd);
    let cname = part;
    if (longNameKind(part) === 'content') {
      const full = await readLongName(ctx.at, fd, part);
      if (full === null) throw fsError('ENOENT', 'openat', part + '.name');
      cname = full;
    }
    const bad = b64ErrorOffset(cname, codec.opts.raw64);
    if (bad !== null) throw b64Error(bad);
    const plain = codec.decryptName(cname, iv);
    if (plain === null) throw fsError('EBADMSG', 'decrypt', part);
    return { out: plain, disk: part };
  });
  return parts.reduce(joinPathBytes, Buffer.alloc(0));
}
