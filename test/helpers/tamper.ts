/**
 * Tampering with cipher files on disk, as an attacker or a bad sync would.
 */
import { promises as fsp } from 'node:fs';

/**
 * XORs the byte at `offset` of the file at `path` with `mask`, so the byte
 * always changes (writing a fixed value leaves it as it was when the random
 * ciphertext already holds that value, one time in 256).
 */
export async function flipBits(path: string, offset: number, mask = 0x01): Promise<void> {
  if ((mask & 0xff) === 0) throw new Error('flipBits: a zero mask changes nothing');
  const fh = await fsp.open(path, 'r+');
  try {
    const b = Buffer.alloc(1);
    const { bytesRead } = await fh.read(b, 0, 1, offset);
    if (bytesRead !== 1) throw new Error(`flipBits: ${path} has no byte at ${offset}`);
    b[0]! ^= mask;
    await fh.write(b, 0, 1, offset);
  } finally {
    await fh.close();
  }
}
