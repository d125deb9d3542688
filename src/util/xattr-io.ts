/**
 * Extended attributes on paths, through @napi-rs/xattr: its Linux, macOS and
 * FreeBSD binaries come prebuilt as npm packages, so installing needs no C
 * compiler (unlike fs-xattr, which always compiles). The four functions keep
 * fs-xattr's behaviour, which the Vault relies on:
 *
 *  - symlinks are followed (fs-xattr calls getxattr(2); @napi-rs/xattr calls
 *    lgetxattr(2), so the path is resolved with realpath first);
 *  - failures are Node-style errors: `code` ENODATA / ENOENT / ENOTSUP / ...,
 *    `errno`, `syscall` (getxattr, setxattr, listxattr, removexattr), `path`.
 *    @napi-rs/xattr only says "... (os error 61)"; getAttribute even turns
 *    every failure into `null`, so a `null` is told apart by listing the
 *    names: not listed is ENODATA, a failing list reports the real error.
 *
 * Left as is: a name @napi-rs/xattr cannot decode as UTF-8 makes
 * listAttributes fail with EIO (tscryptfs's own names are ASCII); getting a
 * name of a namespace the filesystem does not support is ENODATA, not ENOTSUP.
 */
import { promises as fsp } from 'node:fs';
import { createRequire } from 'node:module';
import { getSystemErrorName } from 'node:util';
import { fsError, hasCode } from './errors.js';
import { DIRECT_IO } from './fs-ops.js';

/** A Node-style error from what @napi-rs/xattr threw. */
function nodeError(err: unknown, syscall: string, path: string): Error {
  const message = err instanceof Error ? err.message : String(err);
  const m = /\(os error (\d+)\)/.exec(message);
  let code = 'EIO';
  if (m) {
    try {
      code = getSystemErrorName(-Number(m[1]));
    } catch {
      /* not an errno node knows: EIO */
    }
  }
  return fsError(code, syscall, path, m ? undefined : message);
}

/** The file `path` names, following symlinks as getxattr(2) would. */
async function follow(path: string, syscall: string): Promise<string> {
  try {
    return await fsp.realpath(path);
  } catch (err) {
    throw hasCode(err) ? fsError(err.code, syscall, path) : err;
  }
}

type Napi = typeof import('@napi-rs/xattr');
type Calls = {
  get(p: string, n: string): Promise<Buffer | null>;
  set(p: string, n: string, v: Buffer | string): Promise<void>;
  list(p: string): Promise<string[]>;
  remove(p: string, n: string): Promise<void>;
};
let loaded: Calls | undefined;

/**
 * @napi-rs/xattr's calls in the style chosen for this process (see
 * fs-ops.ts), the package loaded on first use: only sys-at.ts's proc
 * implementation calls them (no addon built, or TSCRYPTFS_FS_IO=async),
 * and loading it costs every start 10-20 ms.
 */
function lib(): Calls {
  if (loaded) return loaded;
  const napi = createRequire(import.meta.url)('@napi-rs/xattr') as Napi;
  loaded = DIRECT_IO
    ? {
        get: async (p, n) => napi.getAttributeSync(p, n),
        set: async (p, n, v) => napi.setAttributeSync(p, n, v),
        list: async (p) => napi.listAttributesSync(p),
        remove: async (p, n) => napi.removeAttributeSync(p, n),
      }
    : { get: napi.getAttribute, set: napi.setAttribute, list: napi.listAttributes, remove: napi.removeAttribute };
  return loaded;
}

async function list(real: string, syscall: string, path: string): Promise<string[]> {
  try {
    return await lib().list(real);
  } catch (err) {
    throw nodeError(err, syscall, path);
  }
}

/** The longest attribute name the kernel takes (limits.h); a longer one is ERANGE here and in native/sys/at_calls.c. */
export const XATTR_NAME_MAX = 255;

async function getAt(real: string, name: string, path: string): Promise<Buffer> {
  // getAttribute turns every failure into null; getxattr(2) says ERANGE for a name this long.
  if (Buffer.byteLength(name) > XATTR_NAME_MAX) throw fsError('ERANGE', 'getxattr', path);
  const value = await lib().get(real, name);
  if (value !== null) return value;
  if (!(await list(real, 'getxattr', path)).includes(name)) throw fsError('ENODATA', 'getxattr', path);
  const again = await lib().get(real, name); // it appeared between the two calls
  if (again !== null) return again;
  throw fsError('EIO', 'getxattr', path, `attribute ${name} is listed but cannot be read`);
}

async function setAt(real: string, name: string, value: Uint8Array | string, path: string): Promise<void> {
  const v = typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.length);
  try {
    await lib().set(real, name, v);
  } catch (err) {
    throw nodeError(err, 'setxattr', path);
  }
}

async function removeAt(real: string, name: string, path: string): Promise<void> {
  try {
    await lib().remove(real, name);
  } catch (err) {
    throw nodeError(err, 'removexattr', path);
  }
}

/** The value of attribute `name` of `path`; ENODATA when it has none. */
export async function getAttribute(path: string, name: string): Promise<Buffer> {
  return getAt(await follow(path, 'getxattr'), name, path);
}

/** Sets attribute `name` of `path` to `value` (created or replaced). */
export async function setAttribute(path: string, name: string, value: Uint8Array | string): Promise<void> {
  return setAt(await follow(path, 'setxattr'), name, value, path);
}

/** The attribute names of `path` (those the caller may see: no trusted.* unless root). */
export async function listAttributes(path: string): Promise<string[]> {
  return list(await follow(path, 'listxattr'), 'listxattr', path);
}

/** Removes attribute `name` of `path`; ENODATA when it has none. */
export async function removeAttribute(path: string, name: string): Promise<void> {
  return removeAt(await follow(path, 'removexattr'), name, path);
}

/**
 * The same four calls for a path whose last component the caller has just
 * seen is not a symlink (the Vault lstat()s it): no realpath, which costs a
 * trip through the thread pool per component on every getxattr that
 * `ls -l` makes.
 */
export const notLink = {
  getAttribute: (path: string, name: string) => getAt(path, name, path),
  setAttribute: (path: string, name: string, value: Uint8Array | string) => setAt(path, name, value, path),
  listAttributes: (path: string) => list(path, 'listxattr', path),
  removeAttribute: (path: string, name: string) => removeAt(path, name, path),
};
