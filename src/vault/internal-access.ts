/**
 * What tscryptfs's own code needs from a Vault beyond its public methods:
 * the master key (printed by -init), and for a mount's native fast path
 * (src/fuse/native-fast-path.ts) key material for the C side, the cipher
 * directory's descriptor, and two ways to keep the Vault coherent with
 * what the C side changes, and the backing descriptor of each open file.
 * It lives outside the Vault classes so that the classes library users
 * import hand out no keys or descriptors;
 * src/index.ts does not export this module.
 */
import type { NativeContentKey, NativeNameKey } from './keys.js';
import type { FenceSlots } from './write-fences.js';
import type { Vault } from './vault.js';
import { backingDescriptor, type VaultFile } from './vault-file.js';

export interface InternalAccess {
  /** A copy of the master key. */
  masterKey(): Uint8Array;
  /** The content cipher and a fresh copy of its key when the native path can read this filesystem, else null. The caller wipes the key once handed over. */
  contentKey(): NativeContentKey | null;
  /** The name key, freshly derived (the caller wipes it), when the native lookup finds names as the Vault does; null otherwise (plaintext or deterministic names, long names off, -badname, the TypeScript backend). */
  nameKey(): NativeNameKey | null;
  /** The cipher directory's own descriptor (O_PATH): open until the Vault closes; whoever keeps it longer takes a duplicate. */
  rootFd(): number;
  /** A directory at `cipherPath` (its names on disk from the cipher directory, joined by "/"; all of them when omitted) was removed by the native path: the Vault forgets what it kept of it and below it. */
  forgetCipherDirs(cipherPath?: string): void;
  /** The mount has gone quiet: the Vault forgets the names it decrypted and the directories it keeps open (all found again when needed). */
  forgetCaches(): void;
  /** Write fences (./write-fences.ts) for the files opened from now on; `buffer` holds the counters the native path shares. */
  useWriteFences(buffer: ArrayBuffer, slots?: FenceSlots): void;
}

const registry = new WeakMap<Vault, InternalAccess>();

/** Called once by each Vault as it is made. */
export function registerInternalAccess(vault: Vault, access: InternalAccess): void {
  registry.set(vault, access);
}

/** The internal side of `vault`. */
export function internalAccess(vault: Vault): InternalAccess {
  const access = registry.get(vault);
  if (!access) throw new Error('not a Vault');
  return access;
}

/** The backing file descriptor of `file`, which a mount's native path reads and writes through. */
export function fileDescriptor(file: VaultFile): number {
  return backingDescriptor(file);
}
