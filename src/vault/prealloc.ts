/**
 * Reserving disk space for cipher blocks before writing them, as gocryptfs
 * does (internal/syscallcompat EnospcPrealloc): on a full disk the write
 * then fails with ENOSPC before a byte is written, instead of leaving a
 * half-written block that no longer decrypts (and takes the old data of
 * that block with it).
 *
 * A filesystem without fallocate (errno 95 under either of its names, or
 * ENOSYS: ZFS, ext3, sshfs, rclone, exFAT through FUSE) gets one warning and no more attempts; so does a missing
 * native addon (no compiler at install time). `-noprealloc` turns it off.
 */
import { fallocate, fallocateAvailable, FALLOC_FL_KEEP_SIZE } from '../util/native-sys.js';
import { fsError, sameCode } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

export class Preallocator {
  private enabled: boolean;

  constructor(
    enabled: boolean,
    private readonly log: Logger,
  ) {
    this.enabled = enabled && fallocateAvailable();
  }

  /** Whether space is still reserved before writes (off with -noprealloc, without fallocate, without the addon). */
  get active(): boolean {
    return this.enabled;
  }

  /** Reserves [offset, offset+length) of fd; throws ENOSPC (or another errno) if the space is not there. */
  reserve(fd: number, offset: number, length: number): void {
    if (!this.enabled || length <= 0) return;
    const r = fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length);
    if (r === 'ok') return;
    if (r === 'unavailable' || sameCode(r, 'EOPNOTSUPP') || sameCode(r, 'ENOSYS')) {
      this.enabled = false;
      this.log.warn('Warning: The underlying filesystem does not support fallocate(2). tscryptfs will continue working but is no longer resistant against out-of-space errors.');
      return;
    }
    throw fsError(r, 'fallocate');
  }
}
