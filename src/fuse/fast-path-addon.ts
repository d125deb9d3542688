/**
 * The addon of the mount's native fast path (native/fastpath, built at
 * install time beside the others as tscryptfs_fastpath.node): hooks the
 * binding calls on the libfuse thread that received a request, each
 * answering the plain case of one operation as its twin in src/vault does.
 * native-fast-path.ts makes one per mount and turns its hooks on.
 */
import { loadNativeAddon } from '../util/native-addon.js';
import { envSwitch } from '../util/switches.js';

/** Content ciphers (native/fastpath/content.h): aead_block.h's two, and AEGIS-256X2 through the AEGIS addon's functions. */
export const FAST_GCM = 0;
export const FAST_XCHACHA = 1;
export const FAST_AEGIS = 2;
/** handleOpened's flags (native/fastpath/handles.h). */
export const HANDLE_READABLE = 1;
export const HANDLE_WRITABLE = 2;
/** Handles the fast path opens are numbered from here (NATIVE_FH_BASE); JavaScript's stay below. */
export const NATIVE_FH_BASE = 0x80000000;

export interface FastPathBinding {
  /** [fastPath, its fence counters]; FAST_AEGIS takes the AEGIS addon's decryptHandle(variant) as `aegis`. */
  create(cipher: typeof FAST_GCM | typeof FAST_XCHACHA | typeof FAST_AEGIS, key: Uint8Array, slots: number, aegis?: object): [object, ArrayBuffer];
  /** JavaScript opened handle `fh`. `flags`: HANDLE_READABLE when its reads may be answered (reads of a write-only handle always go to JS), HANDLE_WRITABLE when its writes may be. */
  handleOpened(fastPath: object, fh: number, fd: number, slot: number, flags: number): void;
  /** Before JavaScript closes the handle's descriptor: waits for a hook using it. */
  handleClosing(fastPath: object, fh: number): void;
  /** Whether chmod, chown and utimens of an open file are answered (off when created). */
  answerAttrs(fastPath: object, on: 0 | 1): void;
  /** Whether writes are answered (off when created; native/fastpath/write.c), and whether they reserve space first (-noprealloc: no). */
  answerWrites(fastPath: object, on: 0 | 1, prealloc: 0 | 1): void;
  /**
   * From now on the fast path walks the cipher directory from `rootFd`: for
   * the binding's checks of kept listings and statfs, and with `unlinks` to
   * answer the unlinks the binding knows the cipher path of
   * (native/fastpath/remove.c); once only.
   */
  useCipherRoot(fastPath: object, rootFd: number, unlinks: boolean): void;
  /**
   * From now on (after useCipherRoot) the fast path answers the binding's
   * lookups (native/fastpath/lookup.c), encrypting names under `emeKey`
   * (copied), long names hashed above `longNameMax`; once only.
   */
  useNames(fastPath: object, emeKey: Uint8Array, longNameMax: number, raw64: boolean): void;
  /** [the name on disk of plaintext `name` under directory IV `iv`, whether it is a long name's hash], as the fast path's walk makes it. */
  nameEncrypt(emeKey: Uint8Array, iv: Uint8Array, name: Uint8Array, longNameMax: number, raw64: boolean): [string, boolean];
  /** The plaintext of short name on disk `name` under directory IV `iv` as the fast path's listing reads it, or null when it is no valid name. */
  nameDecrypt(emeKey: Uint8Array, iv: Uint8Array, name: string, raw64: boolean): Buffer | null;
  /** Whether the hooks leave requests naming plaintext `path` to JS (native/fastpath/held.h): lookups, opens, creates, renames. */
  holdPath(fastPath: object, path: string, on: boolean): void;
  /**
   * Whether the fast path opens files itself (native/fastpath/open.c; off when
   * created; only while lookups are on; for writing only while writes are). Its handles are numbered
   * from NATIVE_FH_BASE up and their slots come from claimSlot.
   */
  answerOpens(fastPath: object, on: boolean): void;
  /**
   * Whether the fast path creates files itself (native/fastpath/open.c; off when created; only while opens are on), as
   * the daemon's own user, with short names; their handles are native ones as the opens' are.
   */
  answerCreates(fastPath: object, on: boolean): void;
  /** Whether the hook `fsync` answers FSYNCs of registered handles. */
  answerFsyncs(fastPath: object, on: boolean): void;
  /** Whether the hook `list` answers READDIRs (after useNames). */
  answerLists(fastPath: object, on: boolean): void;
  /** Whether the hook `rename` answers RENAMEs of files (after useNames). */
  answerRenames(fastPath: object, on: boolean): void;
  /** The fence slot of the file with this device and inode (split in 32-bit halves), counted once more; -1 when none is free. */
  claimSlot(fastPath: object, dev: number, inoLow: number, inoHigh: number): number;
  /** Gives back what claimSlot took. */
  releaseSlot(fastPath: object, dev: number, inoLow: number, inoHigh: number): void;
  /**
   * [a duplicate (close-on-exec) of the descriptor of handle `fh`, which the fast path opened (-1: no such handle),
   * the access mode it was opened with (O_RDONLY, O_WRONLY, O_RDWR)]; JS closes the duplicate and gets the handle's
   * release from now on.
   */
  adopt(fastPath: object, fh: number): [number, number];
  /** How many handles the fast path opened that JS has not adopted are open. */
  nativeHandles(fastPath: object): number;
  /** The handles the fast path opened on this file that JS has not adopted. */
  opensOn(fastPath: object, dev: number, inoLow: number, inoHigh: number): number[];
  /**
   * Whether the fast path removes empty directories itself (native/fastpath/remove.c; off when created; only with unlinks on,
   * see useCipherRoot); `dirIVs`: each directory has a gocryptfs.diriv (FormatOptions.dirIV). The caller must then
   * take takeRemovedDirs before each request it answers.
   */
  answerRmdirs(fastPath: object, on: boolean, dirIVs: boolean): void;
  /**
   * The cipher paths (from the cipher directory, names on disk joined by "/") of the directories the fast path
   * removed since the last call; undefined: none; false: too many to list, forget every directory.
   */
  takeRemovedDirs(fastPath: object): string[] | false | undefined;
  /**
   * [reads answered natively, reads passed on to JS, attribute changes answered natively, writes answered natively,
   * writes passed on to JS, unlinks answered natively, unlinks passed on to JS, lookups answered natively, lookups passed on to JS,
   * opens answered natively, opens passed on to JS, rmdirs answered natively, rmdirs passed on to JS,
   * getxattr and listxattr of entries without extended attributes answered natively, those passed on to JS,
   * creates answered natively, creates passed on to JS, fstats of handles it opened answered natively, those passed on to JS,
   * fsyncs answered natively, those passed on to JS, listings answered natively, those passed on to JS,
   * renames answered natively, those passed on to JS]
   */
  stats(fastPath: object): [number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number];
}

/** Loaded once per process; null when unavailable (the file cannot change while we run). */
let cached: FastPathBinding | null | undefined;

/** The addon, or null when it is missing or refused (TSCRYPTFS_NATIVE_BATCH=0 turns off all native content crypto, this with it). */
export function fastPathBinding(): FastPathBinding | null {
  if (cached !== undefined) return cached;
  cached = envSwitch('TSCRYPTFS_NATIVE_BATCH') ? loadNativeAddon<FastPathBinding>('tscryptfs_fastpath.node') : null;
  return cached;
}
