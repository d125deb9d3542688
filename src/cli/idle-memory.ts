/**
 * A quiet mount gives its memory back. A burst of requests (an untar, a
 * build) leaves V8's heap spaces and the malloc arenas of libfuse's
 * threads as large as the burst needed them; V8 shrinks its heap by itself
 * only after about 8 s of low allocation (and not always), malloc never.
 * Once the mount has answered nothing for `quietMs`, the daemon returns that
 * memory, once per quiet spell: this module decides when, and the caller's
 * `give` what (serve.ts: the caches, then util/native-sys.ts returnMemory,
 * a full collection of the few MB still in use, tens of milliseconds).
 * Not sooner than 5 s: after half a second of quiet the next listing or rm
 * took 7-10 % more CPU (most likely the collection dropped compiled code of
 * functions that had not run meanwhile, and it warmed up again).
 * Figures: Documentation/performance.md, "Memory given back when idle".
 * Start-up is a burst of its own (module loading, parsing, the key
 * derivation) that leaves code pages no request needs, so the first
 * give-back comes `startMs` after the watch starts (the mount is ready),
 * whether requests come or not; `give` is told so.
 * TSCRYPTFS_RETURN_MEMORY=0 turns it off; TSCRYPTFS_QUIET_MS shortens the
 * spell for tests.
 *
 * No polling at a fixed rate when idle: while requests come, the next look
 * is due when the spell since the last one would be `quietMs` long, but at
 * most `LOOK_MS` away, since a mount sees the requests answered in C only
 * at a look and dates them by it (fuse/operations.ts lastActivity): the
 * memory goes back at most `quietMs` + `LOOK_MS` after the last request.
 * Once it is back, a look every `restMs` notices the next burst.
 */
import { envSwitch, switchNumber } from '../util/switches.js';

/** The longest wait between two looks while requests come. */
const LOOK_MS = 1000;

export interface QuietOptions {
  quietMs?: number;
  /** When the first give-back comes, busy or not. */
  startMs?: number;
  restMs?: number;
  /** Gives the memory back (`atStart`: start-up's); false when it cannot (then the watch ends). */
  give: (atStart: boolean) => boolean;
}

/** Starts watching `lastActivity` (ms since the epoch of the last request); returns the function that stops it. */
export function returnMemoryWhenQuiet(lastActivity: () => number, opts: QuietOptions): () => void {
  if (!envSwitch('TSCRYPTFS_RETURN_MEMORY')) return () => undefined;
  const quiet = switchNumber('TSCRYPTFS_QUIET_MS'); // the quiet spell and the rest between looks
  const { quietMs = quiet, restMs = quiet, startMs = Math.min(100, quiet), give } = opts;
  /** The activity time the last return followed: nothing to give back until a request comes after it. */
  let givenAfter = -1;
  let timer: NodeJS.Timeout | undefined;
  const lookIn = (ms: number): void => {
    timer = setTimeout(look, ms);
    timer.unref();
  };
  const look = (): void => {
    const last = lastActivity();
    if (last === givenAfter) return lookIn(restMs);
    const due = last + quietMs - Date.now();
    if (due > 0) return lookIn(Math.min(due, LOOK_MS));
    givenAfter = last;
    if (give(false)) lookIn(restMs);
  };
  const atStart = (): void => {
    givenAfter = lastActivity();
    if (give(true)) lookIn(quietMs); // a burst may be under way
  };
  timer = setTimeout(atStart, startMs);
  timer.unref();
  return () => clearTimeout(timer);
}
