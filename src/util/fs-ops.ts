/**
 * How the process makes its filesystem calls on the cipher directory,
 * chosen once: as direct system calls on the event loop, or through
 * libuv's thread pool (node:fs's callback and promise calls).
 *
 * A FUSE request makes several such calls in a row, and each trip through
 * the thread pool adds latency that a system call on a local disk, tmpfs or
 * the page cache does not have; direct calls are therefore the default
 * (Documentation/performance.md, "Direct system calls", has the
 * measurements). On a slow network
 * filesystem, where one call can block for milliseconds,
 * TSCRYPTFS_FS_IO=async keeps the event loop free instead.
 *
 * The modules that make the calls (sys-at.ts, fd-io.ts, xattr-io.ts) read
 * DIRECT_IO; the mount (src/fuse/mount.ts) reads it too, because only with
 * direct calls is each request answered in one go on the JS thread.
 */

import { switchValue } from './switches.js';

/** True when the cipher directory is accessed with direct system calls (the default). */
export const DIRECT_IO = switchValue('TSCRYPTFS_FS_IO') !== 'async';
