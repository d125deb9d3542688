/**
 * The one place that loads fuse-native. We need the build patched by
 * scripts/patch-fuse-native.mjs at install time (utimens, fgetattr, create
 * flags, 64-bit inodes, the 'unmount' event, no 15 s timeout, the
 * security.capability short-cut); an unpatched or missing build is refused
 * with the reason.
 */
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
  /** utimensat(2) without following symlinks, exact to the nanosecond; 0 or -errno. */
  utimensat(path: string, atime: FuseTime, mtime: FuseTime): number;
  /** mknod(2); 0 or -errno. */
  mknod(path: string, mode: number, dev: number): number;
}

export class FuseUnavailableError extends Error {
  readonly code = 'ENOFUSE';
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
  if (typeof Fuse.prototype._onexit !== 'function' || typeof Fuse.utimensat !== 'function') {
    throw new FuseUnavailableError('fuse-native is not the patched build; run npm rebuild or npm ci (scripts/patch-fuse-native.mjs)');
  }
  cached = Fuse;
  return Fuse;
}
