/**
 * The native read path of a forward mount (native/src/reader.c in
 * the batch addon, called by the binding's setReadHook). With it a
 * READ is answered on the libfuse thread that received it: pread of the
 * cipher blocks and their decryption through node's OpenSSL, with no trip to
 * the JS thread, and in parallel when the kernel has several reads in
 * flight. Anything out of the ordinary (a block that does not open, a hole,
 * a write to the same file under way) goes to JS as before, which answers
 * and logs it (Documentation/performance.txt §9).
 *
 * Available for AES-256-GCM and XChaCha20-Poly1305 on the OpenSSL backend
 * when the addon is built (and not refused with TSCRYPTFS_NATIVE_BATCH=0),
 * and for AEGIS-256X2 when the AEGIS addon is in use too (its decryption
 * function is handed to the reader; the TypeScript AEGIS reads through JS);
 * TSCRYPTFS_NATIVE_READ=0 turns it off (for measurements), and
 * -sharedstorage mounts do not use it (see mount.ts).
 *
 * The same registry answers chmod, chown and utimens of a file a handle has
 * open (reader_attr in native/src/reader.c): the change goes to the
 * handle's cipher file descriptor on the libfuse thread, where JS would
 * have made it on the cipher file's name (src/vault/node-attrs.ts), and the
 * attributes after it go back as the binding's carried ones. Off with
 * -force_owner (JS shows another owner than the cipher file's) and on
 * read-only mounts, and with TSCRYPTFS_NATIVE_ATTRS=0.
 *
 * And it answers writes (native/src/writer.c): the header of an empty
 * file, read-modify-write of partly covered blocks, sealing, preallocation
 * and one pwrite, on the libfuse thread, as src/vault/file-content.ts's
 * writeContent does them; a write past the end, a block that does not open,
 * a failed preallocation and (with -noprealloc) a write that grows the file
 * go to JS. JS and the native writer share each file's owner word
 * (src/vault/write-fences.ts), so they never change one file at once. Off on
 * read-only mounts and with TSCRYPTFS_NATIVE_WRITE=0.
 *
 * And unlinks (native/src/unlinker.c): the binding's attribute cache keeps
 * each listed entry's cipher path (readdir hands them over with the packed
 * listing), and an UNLINK of a name it knows so is an unlinkat(2) on the
 * libfuse thread, after a walk from the cipher
 * directory as the vault's (plus the long name's .name file). Off on
 * read-only mounts and with TSCRYPTFS_NATIVE_UNLINK=0.
 *
 * And rmdirs of listed directories that hold nothing but their IV, with
 * unlinks (the hook's rmdir, same file): the vault keeps descriptors of the
 * directories it walked, so it must forget a removed one before it makes
 * anything at that path again: `syncRemovedDirs`, which the mount calls
 * before every request it answers. Off with TSCRYPTFS_NATIVE_RMDIR=0.
 *
 * The same walk tells the binding whether a listing the kernel keeps still
 * holds (the hook's dir_stat; mount.ts, keptListings).
 *
 * And opens for reading (native/src/opener.c), when lookups are native: the
 * libfuse thread opens the cipher file and registers the handle, numbered
 * from 0x80000000 up, and closes it at its release; JS adopts such a handle
 * (`adopt`) only when a request for it reaches JS after all. Each file's
 * fence slot then comes from the reader, by device and inode, so that JS's
 * handles of the file and the native ones share it. Off with
 * TSCRYPTFS_NATIVE_OPEN=0.
 */
import type { Vault, VaultFile } from '../vault/index.js';
import { fileDescriptor, internalAccess, type FileKey } from '../vault/index.js';
import { BATCH_GCM, BATCH_XCHACHA, READER_READABLE, READER_WRITABLE, READ_AEGIS, batchBinding } from '../crypto/native-batch.js';
import { aegisNativeBinding } from '../crypto/aegis/native.js';
import { AEGIS_VARIANTS } from '../crypto/aegis/variants.js';
import { envSwitch } from '../util/switches.js';

/** Files open at once whose reads can go the native way (more just stay in JS). */
const SLOTS = 65536;

const CIPHER = { 'aes-gcm': BATCH_GCM, xchacha: BATCH_XCHACHA, aegis: READ_AEGIS } as const;

export interface NativeReads {
  /** What the binding's setReadHook takes. */
  readonly hook: object;
  /** After a handle is opened: its reads may be answered natively. */
  open(fh: number, file: VaultFile): void;
  /** Before the handle's descriptor is closed. */
  close(fh: number): void;
  /** Whether `fh` is a handle the native path opened (JS may not know it yet). */
  isNative(fh: number): boolean;
  /** A duplicate of native handle `fh`'s descriptor for JS, which gets its release from now on; -1 when there is no such handle. */
  adopt(fh: number): number;
  /** The native handles JS has not adopted that are open on this file. */
  opensOn(dev: number | bigint, ino: bigint): number[];
  /**
   * Whether lookups may be answered natively (when they are at all): off
   * while libfuse's rename over an open file is half done, whose second
   * half JS must tell from a lookup in between (src/fuse/hidden-files.ts).
   */
  lookups(on: boolean): void;
  /** Makes the vault forget the directories the libfuse threads removed since the last call (see above). */
  syncRemovedDirs(): void;
  /** Reads answered natively, reads it passed on to JS, attribute changes answered natively, writes, unlinks and lookups answered natively and passed on. */
  stats(): {
    served: number;
    passed: number;
    attrs: number;
    written: number;
    writesPassed: number;
    unlinked: number;
    unlinksPassed: number;
    lookedUp: number;
    lookupsPassed: number;
    opened: number;
    opensPassed: number;
    rmdired: number;
    rmdirsPassed: number;
  };
}

export interface NativeReadsOptions {
  /** Answer chmod, chown and utimens of open files natively too (unless TSCRYPTFS_NATIVE_ATTRS=0). */
  attrs: boolean;
  /** Answer writes natively too (unless TSCRYPTFS_NATIVE_WRITE=0). */
  writes: boolean;
  /** Answer unlinks of listed names natively too (unless TSCRYPTFS_NATIVE_UNLINK=0). */
  unlinks: boolean;
  /** Answer lookups natively too (unless TSCRYPTFS_NATIVE_LOOKUP=0), where the vault's names allow (InternalAccess.nameKey). */
  lookups: boolean;
  /** And opens for reading (unless TSCRYPTFS_NATIVE_OPEN=0), where lookups are native. */
  opens: boolean;
}

/** Handles the native path opens are numbered from here (native/src/reader_core.h, NATIVE_FH_BASE). */
const NATIVE_FH_BASE = 0x80000000;

const halves = (ino: bigint): [number, number] => [Number(ino & 0xffffffffn), Number(ino >> 32n)];
/** A device number as the binding keeps it (its low 32 bits, as C's (uint32_t)st_dev). */
const dev32 = (dev: number | bigint): number => Number(BigInt(dev) & 0xffffffffn);

/** Which parts of the native fast path the environment leaves on: the registry's NATIVE_* switches with what each one needs. */
export function nativeFastPathSwitches(env: NodeJS.ProcessEnv = process.env): Record<'reads' | keyof NativeReadsOptions | 'rmdirs', boolean> {
  const reads = envSwitch('TSCRYPTFS_NATIVE_BATCH', env) && envSwitch('TSCRYPTFS_NATIVE_READ', env);
  const lookups = reads && envSwitch('TSCRYPTFS_NATIVE_LOOKUP', env);
  const unlinks = reads && envSwitch('TSCRYPTFS_NATIVE_UNLINK', env);
  return {
    reads,
    attrs: reads && envSwitch('TSCRYPTFS_NATIVE_ATTRS', env),
    writes: reads && envSwitch('TSCRYPTFS_NATIVE_WRITE', env),
    unlinks,
    rmdirs: unlinks && envSwitch('TSCRYPTFS_NATIVE_RMDIR', env),
    lookups,
    opens: lookups && envSwitch('TSCRYPTFS_NATIVE_OPEN', env),
  };
}

/** A native reader for `vault`'s files, or null when it cannot be had (cipher, backend, addon, environment). */
export function createNativeReads(vault: Vault, o: NativeReadsOptions, env: NodeJS.ProcessEnv = process.env): NativeReads | null {
  const on = nativeFastPathSwitches(env);
  if (!on.reads) return null;
  const binding = batchBinding();
  if (!binding) return null;
  const access = internalAccess(vault);
  const spec = access.contentKey();
  if (!spec) return null;
  let created: [object, ArrayBuffer];
  try {
    let aegis: object | undefined;
    if (spec.cipher === 'aegis') {
      const native = aegisNativeBinding(); // null when not built, no AES-NI, or TSCRYPTFS_AEGIS refuses it
      if (!native) return null;
      aegis = native.decryptHandle(AEGIS_VARIANTS.aegis256x2.nativeId);
    }
    created = binding.readerCreate(CIPHER[spec.cipher], spec.key, SLOTS, aegis); // the reader keeps its own copy
  } finally {
    spec.key.fill(0);
  }
  const [reader, fences] = created;
  const names = o.lookups && on.lookups ? access.nameKey() : null;
  const opens = names !== null && o.opens && on.opens;
  const writes = o.writes && on.writes;
  const unlinks = o.unlinks && on.unlinks;
  const rmdirs = unlinks && on.rmdirs;
  try {
    // With native opens the reader hands out the slots, by file (see above).
    const slots = opens
      ? {
          claim: ({ dev, ino }: FileKey) => binding.readerSlot(reader, dev32(dev), ...halves(BigInt(ino))),
          release: ({ dev, ino }: FileKey) => binding.readerSlotRelease(reader, dev32(dev), ...halves(BigInt(ino))),
        }
      : undefined;
    access.useWriteFences(fences, slots);
    if (o.attrs && on.attrs) binding.readerAttrs(reader, 1);
    if (writes) binding.readerWrites(reader, 1, vault.preallocates ? 1 : 0);
    // The binding checks kept listings through the reader's walks (Documentation/fuse-native.md), so it gets the root on read-only mounts too.
    binding.readerCipherRoot(reader, access.rootFd(), unlinks);
    if (rmdirs) binding.readerRmdirs(reader, true, vault.format.dirIV);
    if (names) {
      binding.readerNames(reader, names.key, names.longNameMax, names.raw64);
      if (opens) binding.readerOpens(reader, true);
    }
  } finally {
    names?.key.fill(0);
  }
  return {
    hook: reader,
    open(fh, file) {
      // A file opened before these fences were attached (or under another
      // mount's) has no slot here: its reads stay in JS.
      const slot = file.fenceIn(fences);
      if (slot >= 0) binding.readerOpen(reader, fh, fileDescriptor(file), slot, (file.readable ? READER_READABLE : 0) | (writes && file.writable ? READER_WRITABLE : 0));
    },
    close(fh) {
      binding.readerClose(reader, fh); // nothing to do for a handle it never saw
    },
    isNative(fh) {
      return opens && fh >= NATIVE_FH_BASE;
    },
    adopt(fh) {
      return binding.readerAdopt(reader, fh);
    },
    opensOn(dev, ino) {
      return opens ? binding.readerOpensOn(reader, dev32(dev), ...halves(ino)) : [];
    },
    lookups(on) {
      binding.readerLookups(reader, on); // stays off when readerNames was never called
    },
    syncRemovedDirs() {
      if (!rmdirs) return; // nothing to take: no call into the addon for every request
      const removed = binding.readerTakeRemovedDirs(reader);
      if (removed === false) access.forgetCipherDirs();
      else if (removed !== undefined) for (const c of removed) access.forgetCipherDirs(c);
    },
    stats() {
      const [served, passed, attrs, written, writesPassed, unlinked, unlinksPassed, lookedUp, lookupsPassed, opened, opensPassed, rmdired, rmdirsPassed] = binding.readerStats(reader);
      return { served, passed, attrs, written, writesPassed, unlinked, unlinksPassed, lookedUp, lookupsPassed, opened, opensPassed, rmdired, rmdirsPassed };
    },
  };
}
