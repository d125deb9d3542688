/**
 * Which requests this run's mounts answer without JS, from the switches in
 * the environment (src/util/switches.ts): the mount suite runs once with
 * the native fast paths on and once with all of them off, and a test's
 * assertion that some request was answered natively holds only when the
 * part that answers it is on. Data, errno and owner checks hold in both.
 *
 * `native(...)` gives the switches a mount started with `extra` variables
 * on top of this process's environment runs with.
 */
import { nativeFastPathSwitches } from '../../src/fuse/native-fast-path.js';
import { bindingSwitches } from '../../src/fuse/mount.js';

export interface NativeParts extends ReturnType<typeof nativeFastPathSwitches> {
  /** Kept listings need the native fast path (src/fuse/mount.ts, bindingSwitches). */
  keptListings: boolean;
  /** Kept copies of listings ride on kept listings. */
  keptCopies: boolean;
  /** Libfuse threads seal chunks of large writes (the batch addon's assist hook). */
  assist: boolean;
}

export function native(extra: NodeJS.ProcessEnv = {}): NativeParts {
  const env = { ...process.env, ...extra };
  const parts = nativeFastPathSwitches(env);
  return { ...parts, ...bindingSwitches(parts.reads, env) };
}

/** The parts on in this process's environment. */
export const NATIVE: NativeParts = native();
