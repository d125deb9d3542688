/**
 * What the FUSE side of this installation is, for -version: the version of
 * our fuse-native fork, the sources its loaded binary was built from (the
 * sha256 the binary carries, Fuse.sourceHash()), and the
 * libfuse that binary is linked against, read from this process's own
 * memory map once it is loaded. Nothing here mounts anything.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { loadFuse } from './fuse-native.js';

export interface FuseInfo {
  /** fuse-native's package version, null when it is not installed. */
  fuseNative: string | null;
  /** The first 12 hex digits of the sha256 of the C sources the loaded binding was built from; null when it did not load. */
  sources: string | null;
  /** The libfuse version the loaded binding uses (from its file name, "2.9.9"); null when not loaded. */
  libfuse: string | null;
  /** Why mounting cannot work here (the binding did not load, no FUSE device), else null. */
  problem: string | null;
}

/**
 * Why /dev/fuse cannot be the FUSE device (character device 10,229), or
 * null when it is. libfuse would only say "fuse: device not found" (or a
 * bare EINVAL for something else at that path) and try fusermount.
 */
export function fuseDeviceProblem(): string | null {
  let st;
  try {
    st = statSync('/dev/fuse');
  } catch {
    return '/dev/fuse does not exist: this kernel or container has no FUSE (modprobe fuse; in a container, pass the device in, e.g. --device /dev/fuse)';
  }
  const major = (st.rdev >> 8) & 0xfff;
  const minor = (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00);
  if (!st.isCharacterDevice() || major !== 10 || minor !== 229) return `/dev/fuse is not the FUSE device (character device 10,229)`;
  return null;
}

/** The fuse-native package directory, or null. */
function fuseNativeDir(): string | null {
  try {
    return dirname(createRequire(import.meta.url).resolve('fuse-native/package.json'));
  } catch {
    return null;
  }
}

/** The version part of the libfuse.so.2 file this process has mapped ("libfuse.so.2.9.9" → "2.9.9"). */
function mappedLibfuse(): string | null {
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return null;
  }
  const line = maps.split('\n').find((l) => /\/libfuse\.so\.2[.\s]/.test(`${l} `));
  if (!line) return null;
  const path = line.slice(line.indexOf('/'));
  let name = basename(path);
  try {
    name = basename(realpathSync(path));
  } catch {
    // mapped but gone from disk (upgraded meanwhile): the mapped name is what we have
  }
  const m = /^libfuse\.so\.(\d+(?:\.\d+)*)$/.exec(name);
  return m ? m[1]! : name;
}

export function fuseInfo(): FuseInfo {
  const dir = fuseNativeDir();
  if (dir === null) return { fuseNative: null, sources: null, libfuse: null, problem: 'fuse-native is not installed' };
  let version: string | null = null;
  try {
    version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    // unreadable package.json: the version stays unknown
  }
  let sources: string;
  try {
    sources = loadFuse().sourceHash().slice(0, 12);
  } catch (err) {
    return { fuseNative: version, sources: null, libfuse: mappedLibfuse(), problem: (err as Error).message };
  }
  return { fuseNative: version, sources, libfuse: mappedLibfuse(), problem: fuseDeviceProblem() };
}
