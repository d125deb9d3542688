/**
 * The one place that loads fuse-native: our fork in native/fuse-native
 * (its README says what differs from upstream 2.2.6), which refuses a
 * binary built from other sources than its own. It runs on libfuse 2.9,
 * whose internals it depends on; anything else is refused with the reason.
 */
import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';

/** Callback convention of fuse-native: 0 or a negative errno first. */
export type FuseCallback = (result: number, ...values: unknown[]) => void;

export interface FuseInstance extends EventEmitter {
  readonly mnt: string;
  /** True once the kernel side is gone. */
  readonly exited?: boolean;
  mount(cb: (err: Error | null) => void): void;
  /** The attribute cache's generation (0: cache off or not mounted). */
  attrGen(): number;
  /** Empties the binding's caches and gives their memory back; the bytes given back. */
  dropCaches(): number;
  /** Sets (or, with null, clears) the native read path; false when not mounted. */
  setFastPath(hook: object | null): boolean;
  /** Sets (or clears) what libfuse threads do while they wait for JS; false when not mounted. */
  setAssistHook(hook: object | null): boolean;
  unmount(cb: (err: Error | null) => void): void;
}

/** A time as the binding passes it: [seconds, nanoseconds], or null for "leave it". */
export type FuseTime = [number, number] | null;

export interface FuseConstructor {
  new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>): FuseInstance;
  unmount(mnt: string, cb: (err: Error | null) => void): void;
  /** fuse_version() of the libfuse the binding runs with (29 for 2.9.x). */
  libfuseVersion(): number;
  /** The sha256 (hex) of the C sources the loaded binary was built from. */
  sourceHash(): string;
}

/** fuse_version() of the libfuse the binding is written for: 2.9 (native/fuse-native/README.md). */
export const LIBFUSE_WANTED = 29;

export class FuseUnavailableError extends Error {
  readonly code = 'ENOFUSE';
}

const libfuseName = (v: number): string => `${Math.floor(v / 10)}.${v % 10}`;

/** Why libfuse `found` (fuse_version()) cannot run the binding written for `want`, or null when it can. */
export function libfuseMismatch(found: number, want: number = LIBFUSE_WANTED): string | null {
  if (found === want) return null;
  return `libfuse ${libfuseName(found)} is loaded; tscryptfs's fuse-native depends on the internals of libfuse ${libfuseName(want)} (Documentation/fuse-native.md)`;
}

let cached: FuseConstructor | undefined;

/** The fuse-native class; cached after the first successful load. */
export function loadFuse(): FuseConstructor {
  if (cached) return cached;
  let Fuse: FuseConstructor & { prototype: { _onexit?: unknown } };
  try {
    Fuse = createRequire(import.meta.url)('fuse-native');
  } catch (err) {
    const first = (err as Error).message.split('\n')[0]!;
    throw new FuseUnavailableError(`fuse-native cannot be loaded: ${first}${/libfuse/.test(first) ? ' (is libfuse2 installed?)' : ''}`);
  }
  // Upstream's fuse-native, installed in place of the fork, has neither libfuseVersion nor sourceHash.
  if (typeof Fuse.prototype._onexit !== 'function' || typeof Fuse.libfuseVersion !== 'function' || typeof Fuse.sourceHash !== 'function') {
    throw new FuseUnavailableError("the fuse-native that loads is not tscryptfs's fork (native/fuse-native); run npm ci");
  }
  const wrongLibfuse = libfuseMismatch(Fuse.libfuseVersion());
  if (wrongLibfuse) throw new FuseUnavailableError(wrongLibfuse);
  cached = Fuse;
  return Fuse;
}
