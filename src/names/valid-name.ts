/**
 * What a plaintext name component may be on Linux (Documentation/format.md §7.2):
 * 1..255 bytes, no NUL, no '/', not "." or "..". Names are bytes; we check
 * the UTF-8 encoding because that is what reaches the backing filesystem.
 */
export const NAME_MAX = 255;

/** Why a name is unusable, as an errno code, or null if it is fine. */
export function invalidNameCode(name: Uint8Array): 'EINVAL' | 'ENAMETOOLONG' | null {
  if (name.length === 0) return 'EINVAL';
  if (name.length > NAME_MAX) return 'ENAMETOOLONG';
  if (name.length <= 2 && name.every((b) => b === 0x2e)) return 'EINVAL'; // "." or ".."
  for (const b of name) if (b === 0 || b === 0x2f) return 'EINVAL';
  return null;
}
