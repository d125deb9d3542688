/**
 * Path translation as gocryptfs's control socket does it in forward mode
 * (fusefrontend/ctlsock_interface.go): relative paths, one component at a
 * time, reading each directory's IV from disk, so every directory on the
 * way must exist (the last component need not). Errors are what
 * gocryptfs's calls fail with: the system call's errno (ENOENT for a
 * missing directory), EBADMSG for a name that does not decrypt, and
 * EB64 with Go's "illegal base64 data" message.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { FormatOptions } from '../config/format.js';
import { b64ErrorOffset, longNameKind, readDirIV, readLongName, invalidNameCode, ZERO_IV, type NameCodec } from '../names/index.js';
import { fsError, hasCode, type CodedError } from '../util/errors.js';

export interface PathContext {
  root: string;
  format: FormatOptions;
  codec: NameCodec | null;
}

async function dirIV(ctx: PathContext, dir: string): Promise<Buffer> {
  return ctx.format.dirIV ? readDirIV(dir) : ZERO_IV;
}

/** Steps into a directory as openat(O_DIRECTORY|O_NOFOLLOW) would: it must exist and be a real directory. */
function descend(dir: string, name: string): string {
  const p = join(dir, name);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch (err) {
    throw hasCode(err) ? fsError(err.code, 'openat', name) : err;
  }
  if (!st.isDirectory()) throw fsError('ENOTDIR', 'openat', name);
  return p;
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
  const parts = plainPath.split('/');
  const out: string[] = [];
  let dir = ctx.root;
  for (let i = 0; i < parts.length; i++) {
    const name = Buffer.from(parts[i]!, 'utf8');
    const iv = await dirIV(ctx, dir);
    // gocryptfs: too long is ENAMETOOLONG, any other invalid name EBADMSG.
    const bad = invalidNameCode(name);
    if (bad !== null) throw fsError(bad === 'ENAMETOOLONG' ? bad : 'EBADMSG', 'encrypt', plainPath);
    const cpart = codec.diskName(codec.encryptName(name, iv));
    out.push(cpart);
    if (i < parts.length - 1) dir = descend(dir, cpart);
  }
  return out.join('/');
}

/** Plaintext path of a relative cipher path; hashed names are read from their .name files. */
export async function decryptPathAt(ctx: PathContext, cipherPath: string): Promise<string> {
  const codec = ctx.codec;
  if (!codec || cipherPath === '') return cipherPath;
  const parts = cipherPath.split('/');
  const out: string[] = [];
  let dir = ctx.root;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const iv = await dirIV(ctx, dir);
    let cname = part;
    if (longNameKind(part) === 'content') {
      const full = await readLongName(dir, part);
      if (full === null) throw fsError('ENOENT', 'openat', part + '.name');
      cname = full;
    }
    const bad = b64ErrorOffset(cname, codec.opts.raw64);
    if (bad !== null) throw b64Error(bad);
    const plain = codec.decryptName(cname, iv);
    if (plain === null) throw fsError('EBADMSG', 'decrypt', part);
    out.push(plain.toString('utf8'));
    if (i < parts.length - 1) dir = descend(dir, part);
  }
  return out.join('/');
}
