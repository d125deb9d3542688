/**
 * The optional batched AEAD addon (native/src/batch_aead.c, built at
 * install time next to the AEGIS addon): AES-256-GCM and
 * XChaCha20-Poly1305 over every 4 KiB block of a request in one call,
 * through node's own OpenSSL with one reused cipher context, where
 * JavaScript has to build a cipher object per block. Missing (no compiler)
 * or refused (TSCRYPTFS_NATIVE_BATCH=0), the per-block node:crypto path is
 * used; both give the same bytes (test/unit/crypto-native-batch.test.ts).
 */
import { loadNativeAddon } from '../util/native-addon.js';
import { authError, type Aead } from './aead.js';
import { TAG_SIZE } from './aead-checks.js';
import { envSwitch } from '../util/switches.js';

export const BATCH_GCM = 0;
export const BATCH_XCHACHA = 1;
/** The read path only: AEGIS-256X2, decrypted by the AEGIS addon's function (native/src/aegis_export.h). */
export const READ_AEGIS = 2;
/** readerOpen's flags (native/src/reader_core.h). */
export const READER_READABLE = 1;
export const READER_WRITABLE = 2;
type BatchCipher = typeof BATCH_GCM | typeof BATCH_XCHACHA;

export interface BatchBinding {
  /** Block k of `out` = nonce_k || ct_k || tag_k(16). */
  sealBlocks(cipher: BatchCipher, key: Uint8Array, nonces: Uint8Array, plaintext: Uint8Array, blockSize: number, aads: Uint8Array, aadLen: number, out: Uint8Array): void;
  /** -1 on success, else the first block whose tag failed (out is zeroed). */
  openBlocks(cipher: BatchCipher, key: Uint8Array, sealed: Uint8Array, cipherBlockSize: number, aads: Uint8Array, aadLen: number, out: Uint8Array): number;
  /**
   * A mount's native read path (native/src/reader.c; used by src/fuse/native-reads.ts): [reader, its fence counters].
   * READ_AEGIS takes the AEGIS addon's decryptHandle(variant) as `aegis`.
   */
  readerCreate(cipher: BatchCipher | typeof READ_AEGIS, key: Uint8Array, slots: number, aegis?: object): [object, ArrayBuffer];
  /** `flags`: READER_READABLE when the handle may read (reads of a write-only handle always go to JS), READER_WRITABLE when its writes may be answered. */
  readerOpen(reader: object, fh: number, fd: number, slot: number, flags: number): void;
  /** Waits for an attribute change using the handle's descriptor to end. */
  readerClose(reader: object, fh: number): void;
  /** Whether chmod, chown and utimens of an open file are answered natively (off when created). */
  readerAttrs(reader: object, on: 0 | 1): void;
  /** Whether writes are answered natively (off when created; native/src/writer.c), and whether they reserve space first (-noprealloc: no). */
  readerWrites(reader: object, on: 0 | 1, prealloc: 0 | 1): void;
  /**
   * From now on the reader walks the cipher directory from `rootFd`: for the
   * binding's checks of kept listings, and with `unlinks` to make the unlinks
   * the binding knows the cipher path of (native/src/unlinker.c); once only.
   */
  readerCipherRoot(reader: object, rootFd: number, unlinks: boolean): void;
  /**
   * From now on (after readerCipherRoot) the reader answers the binding's
   * lookups (native/src/lookup.c), encrypting names under `emeKey` (copied),
   * long names hashed above `longNameMax`; once only.
   */
  readerNames(reader: object, emeKey: Uint8Array, longNameMax: number, raw64: boolean): void;
  /** [the name on disk of plaintext `name` under directory IV `iv`, whether it is a long name's hash], as the native lookup makes it. */
  nameEncrypt(emeKey: Uint8Array, iv: Uint8Array, name: Uint8Array, longNameMax: number, raw64: boolean): [string, boolean];
  /** Whether the reader answers lookups (on after readerNames). */
  readerLookups(reader: object, on: boolean): void;
  /**
   * Whether the reader opens files for reading itself (native/src/opener.c;
   * off when created; only while lookups are on). Its handles are numbered
   * from 0x80000000 up and their slots come from readerSlot.
   */
  readerOpens(reader: object, on: boolean): void;
  /** The fence slot of the file with this device and inode (split in 32-bit halves), counted once more; -1 when none is free. */
  readerSlot(reader: object, dev: number, inoLow: number, inoHigh: number): number;
  /** Gives back what readerSlot took. */
  readerSlotRelease(reader: object, dev: number, inoLow: number, inoHigh: number): void;
  /** A duplicate (close-on-exec) of the descriptor of handle `fh`, which the reader opened; JS closes it and gets the handle's release from now on. -1: no such handle. */
  readerAdopt(reader: object, fh: number): number;
  /** The handles the reader opened on this file that JS has not adopted. */
  readerOpensOn(reader: object, dev: number, inoLow: number, inoHigh: number): number[];
  /**
   * Whether the reader removes empty directories itself (native/src/unlinker.c; off when created; only with unlinks on,
   * see readerCipherRoot); `dirIVs`: each directory has a gocryptfs.diriv (FormatOptions.dirIV). The caller must then
   * take readerTakeRemovedDirs before each request it answers.
   */
  readerRmdirs(reader: object, on: boolean, dirIVs: boolean): void;
  /**
   * The cipher paths (from the cipher directory, names on disk joined by "/") of the directories the reader
   * removed since the last call; undefined: none; false: too many to list, forget every directory.
   */
  readerTakeRemovedDirs(reader: object): string[] | false | undefined;
  /**
   * [reads answered natively, reads passed on to JS, attribute changes answered natively, writes answered natively,
   * writes passed on to JS, unlinks answered natively, unlinks passed on to JS, lookups answered natively, lookups passed on to JS,
   * opens answered natively, opens passed on to JS, rmdirs answered natively, rmdirs passed on to JS]
   */
  readerStats(reader: object): [number, number, number, number, number, number, number, number, number, number, number, number, number];
  /** What the binding's setAssistHook takes: lets its waiting threads seal chunks of a large sealBlocks (native/src/shared_job.h). */
  assistHook(): object;
  /** [jobs opened to other threads, chunks they sealed], for this process so far. */
  sharedJobStats(): [number, number];
}

/** Loaded once per process; null when unavailable (the file cannot change while we run). */
let cached: BatchBinding | null | undefined;

export function batchBinding(): BatchBinding | null {
  if (cached !== undefined) return cached;
  cached = envSwitch('TSCRYPTFS_NATIVE_BATCH') ? loadNativeAddon<BatchBinding>('tscryptfs_batch.node') : null;
  return cached;
}

/** The Aead batch calls for `cipher` under `key`, or undefined when the addon is missing. */
export function nativeBatchCalls(cipher: BatchCipher, key: Uint8Array, nonceSize: number): Pick<Aead, 'sealBlocks' | 'openBlocks'> | undefined {
  const b = batchBinding();
  if (!b) return undefined;
  const raw = Uint8Array.from(key);
  const perBlock = nonceSize + TAG_SIZE;
  const aadLen = (aads: Uint8Array, count: number): number => (count === 0 ? 0 : aads.length / count);
  return {
    sealBlocks(nonces, plaintext, aads, blockSize = 4096, out) {
      const count = Math.ceil(plaintext.length / blockSize);
      const o = out ?? Buffer.allocUnsafe(plaintext.length + count * perBlock);
      b.sealBlocks(cipher, raw, nonces, plaintext, blockSize, aads, aadLen(aads, count), o);
      return o;
    },
    openBlocks(sealed, aads, blockSize = 4096, out) {
      const count = Math.ceil(sealed.length / (blockSize + perBlock));
      const o = out ?? Buffer.allocUnsafe(sealed.length - count * perBlock);
      const bad = b.openBlocks(cipher, raw, sealed, blockSize + perBlock, aads, aadLen(aads, count), o);
      if (bad >= 0) {
        o.fill(0); // the bad block's bytes were never authenticated
        throw Object.assign(authError(`block ${bad} failed authentication`), { blockIndex: bad });
      }
      return o;
    },
  };
}
