/** The cipher directory flavours the random-operation tester runs on, with their -init flags. */
import type { MountImpl } from '../mount.js';

export const FSX_CIPHERS = {
  'aes-gcm': [],
  xchacha: ['-xchacha'],
  aessiv: ['-aessiv'],
  aegis: ['-aegis'],
  plaintextnames: ['-plaintextnames'],
  'deterministic-names': ['-deterministic-names'],
} as const satisfies Record<string, readonly string[]>;

export type FsxCipher = keyof typeof FSX_CIPHERS;

export const ALL_FSX_CIPHERS = Object.keys(FSX_CIPHERS) as FsxCipher[];

/** gocryptfs 2.3 has no AEGIS. */
export function cipherSupported(impl: MountImpl, c: FsxCipher): boolean {
  return !(impl === 'gocryptfs' && c === 'aegis');
}
