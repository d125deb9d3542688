/**
 * Reserving disk space for cipher blocks before writing them, as gocryptfs
 * does (internal/syscallcompat EnospcPrealloc): on a full disk the write
 * then fails with ENOSPC before a byte is written, instead of leaving a
 * half-written block that no longer decrypts (and takes the old data of
 * that block with it).
 *
 * A store without fallocate (errno 95 under either of its names, or
 * ENOSYS: sshfs, rclone, exFAT through FUSE, ZFS, ext3) gets one warning
 * naming the store, and no more attempts; so does a missing native addon
 * (no compiler at install time). On btrfs it is off from the start, with
 * one line at open, as in gocryptfs: copy-on-write writes a new extent
 * anyway, so the reservation only costs time and space (figures in
 * Documentation/performance.md, "Preallocation"). `-noprealloc` turns it
 * off.
 */
import { fallocate, fallocateAvailable, FALLOC_FL_KEEP_SIZE } from '../util/native-sys.js';
import { fsError, sameCode } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { BTRFS_SUPER_MAGIC, storeLabel, type BackingStore } from './backing/store.js';

export class Preallocator {
  private enabled: boolean;

  constructor(
    enabled: boolean,
    private readonly log: Logger,
    private readonly store: BackingStore,
    /** fallocate(2) as native-sys.ts calls it; replaceable to show the errno handling without such a store. */
    private readonly call: typeof fallocate = fallocate,
  ) {
    this.enabled = enabled && (call !== fallocate || fallocateAvailable());
    if (this.enabled && store.magic === BTRFS_SUPER_MAGIC) {
      this.enabled = false;
      const say = log.info?.bind(log) ?? log.warn.bind(log);
      say(`Btrfs detected (${storeLabel(store)}), forcing -noprealloc: on copy-on-write storage a reservation is never reused.`);
    }
  }

  /** Whether space is still reserved before writes (off with -noprealloc, on btrfs, without fallocate, without the addon). */
  get active(): boolean {
    return this.enabled;
  }

  /** Reserves [offset, offset+length) of fd; throws ENOSPC (or another errno) if the space is not there. */
  reserve(fd: number, offset: number, length: number): void {
    if (!this.enabled || length <= 0) return;
    const r = this.call(fd, FALLOC_FL_KEEP_SIZE, offset, length);
    if (r === 'ok') return;
    if (r === 'unavailable' || sameCode(r, 'EOPNOTSUPP') || sameCode(r, 'ENOSYS')) {
      this.enabled = false;
      const why = r === 'unavailable' ? 'the native addon that calls fallocate(2) is not built' : `the underlying filesystem (${storeLabel(this.store)}) does not support fallocate(2)`;
      this.log.warn(`Warning: ${why}. tscryptfs will continue working but is no longer resistant against out-of-space errors.`);
      return;
    }
    throw fsError(r, 'fallocate');
  }
}
