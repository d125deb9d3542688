/**
 * The one place that loads fuse-native. We need the build patched by
 * scripts/patch-fuse-native.mjs at install time, at the level
 * patches/fuse-native.json names (Documentation/fuse-native.md lists what
 * the patch changes), running on libfuse 2.9, whose internals the patch
 * depends on; anything else is refused with the reason.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';

/** Callback convention of fuse-native: 0 or a negative errno first. */
export type FuseCallback = (result: number, ...values: unknown[]) => void;

export interface FuseInstance extends EventEmitter {
  readonly mnt: string;
  /** True once the kernel side is gone (patched build). */
  readonly exited?: boolean;
  mount(cb: (err: Error | null) => void): void;
  /** The attribute cache's generation (0: cache off or not mounted). */
  attrGen(): number;
  /** Sets (or, with null, clears) the native read path; false when not mounted. */
  setReadHook(hook: object | null): boolean;
  /** Sets (or clears) what libfuse threads do while they wait for JS (patch level 18); false when not mounted. */
  setAssistHook(hook: object | null): boolean;
  unmount(cb: (err: Error | null) => void): void;
}

/** A time as the patched build passes it: [seconds, nanoseconds], or null for "leave it". */
export type FuseTime = [number, number] | null;

export interface FuseConstructor {
  new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>): FuseInstance;
  unmount(mnt: string, cb: (err: Error | null) => void): void;
  /** fuse_version() of the libfuse the binding runs with (29 for 2.9.x). */
  libfuseVersion(): number;
}

/** The patch this build must carry: patches/fuse-native.json (written by scripts/make-fuse-native-patch.mjs). */
export interface PatchInfo {
  package: string;
  version: string;
  level: number;
  /** fuse_version() of the libfuse it was made and tested for. */
  libfuse: number;
}

/** patches/fuse-native.json, from dist/src/fuse or src/fuse. */
export function patchInfo(): PatchInfo {
  for (const rel of ['../../../patches/fuse-native.json', '../../patches/fuse-native.json']) {
    try {
      return JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as PatchInfo;
    } catch {
      // the other layout
    }
  }
  throw new FuseUnavailableError('patches/fuse-native.json is missing from this installation');
}

export class FuseUnavailableError extends Error {
  readonly code = 'ENOFUSE';
}

const libfuseName = (v: number): string => `${Math.floor(v / 10)}.${v % 10}`;

/** Why libfuse `found` (fuse_version()) cannot run the patch made for `want`, or null when it can. */
export function libfuseMismatch(found: number, want: number): string | null {
  if (found === want) return null;
  return `libfuse ${libfuseName(found)} is loaded; the fuse-native patch depends on the internals of libfuse ${libfuseName(want)} (Documentation/fuse-native.md)`;
}

let cached: FuseConstructor | undefined;

/** The fuse-native class; cached after the first successful load. */
export function loadFuse(): FuseConstructor {
  if (cached) return cached;
  let Fuse: FuseConstructor & { prototype: { _onexit?: unknown } };
  try {
    Fuse = createRequire(import.meta.url)('fuse-native');
  } catch (err) {
    throw new FuseUnavailableError(`fuse-native cannot be loaded: ${(err as Error).message.split('\n')[0]} (is libfuse2 installed?)`);
  }
  const want = patchInfo();
  // index.js refuses a binary of another level; a build of another patch has no libfuseVersion.
  if (typeof Fuse.prototype._onexit !== 'function' || typeof Fuse.libfuseVersion !== 'function') {
    throw new FuseUnavailableError(`fuse-native is not built with tscryptfs's patch level ${want.level}; run npm ci (scripts/patch-fuse-native.mjs)`);
  }
  const wrongLibfuse = libfuseMismatch(Fuse.libfuseVersion(), want.libfuse);
  if (wrongLibfuse) throw new FuseUnavailableError(wrongLibfuse);
  cached = Fuse;
  return Fuse;
}
