/**
 * Files unlinked while open, without `.fuse_hidden*` leftovers.
 *
 * libfuse2's path API (without hard_remove) does not unlink a file that is
 * still open: it renames it to `.fuse_hiddenXXXXXXXXXXXXXXXX` in the same
 * directory and unlinks that name after the last release. Meanwhile the
 * name shows in readdir and the directory cannot be removed (ENOTEMPTY);
 * and because release is asynchronous, the name can still be there after
 * close(2) returned. (hard_remove is no way out: libfuse then answers fstat
 * of the open file with ENOENT, as it has no path for it.)
 *
 * So the rename to a hidden name becomes a real unlink of the cipher file
 * — our open handles keep their descriptors, as on any POSIX file system —
 * and the hidden name, which libfuse keeps using for the open file, is
 * served from those handles: getattr, and the final unlink, which only
 * forgets it. (libfuse still knows the file by its old directory; once that
 * is removed it has no path for it, and the binding hands the
 * requests on with an empty path and the open handle, which serves them.)
 */
import { basename } from 'node:path';
import type { BigIntStats } from 'node:fs';
import { fsError, hasCode } from '../util/errors.js';
import type { Vault, VaultFile } from '../vault/index.js';
import type { HandleTable } from './handle-table.js';

const HIDDEN_NAME = /^\.fuse_hidden[0-9a-f]{16}$/;

/** Whether libfuse made up `path` to hide an open file. */
export function isHiddenPath(path: string): boolean {
  return HIDDEN_NAME.test(basename(path));
}

export class HiddenFiles {
  /**
   * Hidden name → the handles open on the unlinked file when it was hidden.
   * Keyed by the name alone: libfuse makes each one unique (node id and a
   * counter), and its directory may be renamed meanwhile.
   */
  private readonly hidden = new Map<string, VaultFile[]>();
  /**
   * Path → the hidden name its open file was just moved to, for
   * renamesOntoItself. One entry per path, not one for the whole mount:
   * libfuse serves requests in parallel, and another hide between a hide
   * and its rename must not take the entry away (that made the rename real).
   * An entry goes when a rename onto its path reads it, when its path is
   * looked up again (which a rename after a plain unlink needs first, and
   * libfuse's rename over an open file does not do between its two
   * halves: see forgetHiding), or when its hidden file is forgotten; so
   * there are never more entries than hidden files.
   */
  private readonly justHidden = new Map<string, string>();

  constructor(
    private readonly vault: Vault,
    private readonly handles: HandleTable,
    /**
     * Told when a path comes into justHidden (on) and when it goes: while
     * it is there, its lookups must reach forgetHiding and a rename onto it
     * renamesOntoItself (the native hooks leave them to JS).
     */
    private readonly hold: (path: string, on: boolean) => void = () => undefined,
    /**
     * Called by hide before it looks for the handles open on the file
     * (`st`, found at `path`; `openFh` as hide got it): puts into the table
     * those it does not hold yet (a native read path's, see operations.ts).
     */
    private readonly takeOpen: (path: string, st: BigIntStats, openFh: number) => Promise<void> = async () => undefined,
  ) {}

  has(path: string): boolean {
    return this.hidden.has(basename(path));
  }

  /**
   * libfuse's rename(from, hiddenPath): unlink `from`, keep serving it as
   * `hiddenPath`. The open handles are those on the same inode, or, where
   * the store numbers a renamed file anew (rclone), the one the binding
   * names (`openFh`: a handle libfuse has open on the hidden node; -1 for none).
   */
  async hide(from: string, hiddenPath: string, openFh = -1): Promise<void> {
    const st = await this.vault.stat(from, { bigint: true });
    await this.takeOpen(from, st, openFh);
    const open: VaultFile[] = [];
    for (const h of this.handles.all()) {
      const hs = await h.stat({ bigint: true }).catch(() => null);
      if (hs && hs.ino === st.ino && hs.dev === st.dev) open.push(h);
    }
    const named = openFh >= 0 ? this.handles.get(openFh) : undefined;
    if (open.length === 0 && named) open.push(named);
    if (open.length === 0) {
      // Nothing of ours is open on it after all: keep libfuse's own plan.
      await this.vault.rename(from, hiddenPath);
      return;
    }
    await this.vault.unlink(from);
    this.hidden.set(basename(hiddenPath), open);
    if (!this.justHidden.has(from)) this.hold(from, true);
    this.justHidden.set(from, hiddenPath);
  }

  /** Removes justHidden's entry for `path`, telling `hold`. */
  private unmark(path: string): void {
    if (this.justHidden.delete(path)) this.hold(path, false);
  }

  /** A lookup (getattr) of `path`: whatever was hidden there is no longer the second half of a rename. */
  forgetHiding(path: string): void {
    if (this.justHidden.size > 0) this.unmark(path);
  }

  /**
   * Whether rename(from, to) is the second half of libfuse's rename over
   * an open file that `from` is another hard link of: rename(2) then
   * changes nothing, but libfuse has already hidden `to`, so the caller
   * must put `to` back as a link instead of renaming.
   */
  async renamesOntoItself(from: string, to: string): Promise<boolean> {
    const hiddenPath = this.justHidden.get(to);
    if (hiddenPath === undefined) return false;
    this.unmark(to);
    // Compared with the open file itself: once it is closed, its inode number may be reused.
    const hiddenSt = await this.stat(hiddenPath).catch(() => null);
    if (!hiddenSt) return false;
    const st = await this.vault.stat(from, { bigint: true }).catch(() => null);
    return st !== null && st.isFile() && st.dev === hiddenSt.dev && st.ino === hiddenSt.ino;
  }

  /**
   * chmod, chown or utimens of a hidden file (fchmod, fchown, futimens of
   * an unlinked open file reach us by its hidden name): through one of its
   * handles, as it has no name on disk.
   */
  change(path: string, fn: (h: VaultFile) => Promise<void>): Promise<void> {
    return this.withHandle(path, fn);
  }

  /** The hidden file's attributes as they are, for the replies libfuse passes on unchanged (see stat). */
  rawStat(path: string): Promise<BigIntStats> {
    return this.withHandle(path, (h) => h.stat({ bigint: true }));
  }

  /** Runs `fn` on an open handle of the hidden file (ENOENT when all are closed). */
  private async withHandle<T>(path: string, fn: (h: VaultFile) => Promise<T>): Promise<T> {
    for (const h of this.hidden.get(basename(path)) ?? []) {
      try {
        return await fn(h);
      } catch (err) {
        if (!hasCode(err, 'EBADF')) throw err; // closed meanwhile: try the next one
      }
    }
    throw fsError('ENOENT', 'lstat', path);
  }

  /**
   * fstat of the hidden file, a positive link count raised by one.
   *
   * libfuse counts the hidden name as a link, and its GETATTR subtracts one
   * from a positive count; but not every caller of getattr does: SETATTR
   * (ftruncate of the open file) and LOOKUP pass the count on as it is.
   * The file usually has no other name: 0 is then the answer for every
   * caller, so it stays 0. Only a file that still has other names gets one
   * more, which only GETATTR takes off. (After an ftruncate libfuse usually
   * takes the attributes ftruncate carried back, unraised; only when its
   * thread comes more than 5 ms late do they come from here, and then a
   * file with other names shows one link too many in that one reply.)
   */
  stat(path: string): Promise<BigIntStats> {
    return this.withHandle(path, (h) => HiddenFiles.raisedStat(h));
  }

  /**
   * fgetattr of open handle `h` when libfuse has no path for it (`""`: the
   * hidden name's directory was removed): the same raised count as `stat`
   * if `h` is a hidden file's, as libfuse still takes one off; null if not.
   */
  async statOfHandle(h: VaultFile): Promise<BigIntStats | null> {
    for (const open of this.hidden.values()) {
      if (open.includes(h)) return HiddenFiles.raisedStat(h);
    }
    return null;
  }

  private static async raisedStat(h: VaultFile): Promise<BigIntStats> {
    const st = await h.stat({ bigint: true });
    if (st.nlink > 0n) st.nlink += 1n;
    return st;
  }

  /** libfuse's unlink of the hidden name after the last release: the file is already gone. */
  forget(path: string): void {
    const name = basename(path);
    this.hidden.delete(name);
    for (const [target, hiddenPath] of this.justHidden) {
      if (basename(hiddenPath) === name) this.unmark(target);
    }
  }
}
