/**
 * -speed (FORMAT.md §13): the version line, the CPU line, then the seal
 * throughput of every content cipher with each backend, encrypting
 * 4096-byte blocks with a 24-byte AAD, in MB/s (10^6 bytes per second).
 *
 * Backend names follow gocryptfs: "OpenSSL" is our node:crypto backend
 * ('node'), "noble" the pure-TypeScript @noble/ciphers one. The row marked
 * "(selected in auto mode)" is the backend used without -openssl: node:crypto
 * for every cipher.
 */
import { createAead, measureSealThroughput, randomBytes, type BackendName, type CipherName } from '../crypto/index.js';
import { cpuHasAes, cpuModelName } from './cpu.js';
import type { Output } from './output.js';
import { printVersion } from './version.js';

/** Measuring time per row; 6 rows keep the whole run at about 3.5 s. */
const ROW_DURATION_MS = 550;

interface Row {
  name: string;
  cipher: CipherName;
  keyLen: number;
  backend: BackendName;
}

const ROWS: readonly Row[] = [
  { name: 'AES-GCM-256-OpenSSL', cipher: 'aes-gcm', keyLen: 32, backend: 'node' },
  { name: 'AES-GCM-256-noble', cipher: 'aes-gcm', keyLen: 32, backend: 'noble' },
  { name: 'AES-SIV-512-OpenSSL', cipher: 'aes-siv', keyLen: 64, backend: 'node' },
  { name: 'AES-SIV-512-noble', cipher: 'aes-siv', keyLen: 64, backend: 'noble' },
  { name: 'XChaCha20-Poly1305-OpenSSL', cipher: 'xchacha', keyLen: 32, backend: 'node' },
  { name: 'XChaCha20-Poly1305-noble', cipher: 'xchacha', keyLen: 32, backend: 'noble' },
];

/** The backend tscryptfs uses for a cipher when -openssl is "auto". */
export function autoBackend(_cipher: CipherName): BackendName {
  return 'node';
}

/** Row start: the name left-aligned in 26 columns and a TAB (printed before measuring). */
export function speedRowHead(name: string): string {
  return `${name.padEnd(26)}\t`;
}

/** Row end: "%7.2f MB/s" or "    N/A", and the auto-mode marker. */
export function speedRowTail(mbPerSec: number | null, selected: boolean): string {
  const value = mbPerSec !== null && mbPerSec > 0 ? `${mbPerSec.toFixed(2).padStart(7)} MB/s` : '    N/A';
  return `${value}${selected ? '\t(selected in auto mode)' : ''}\n`;
}

function measure(row: Row, durationMs: number): number | null {
  try {
    const aead = createAead(row.cipher, randomBytes(row.keyLen), { backend: row.backend });
    return measureSealThroughput(aead, { durationMs, blockSize: 4096 });
  } catch {
    return null;
  }
}

export function runSpeed(out: Output, durationMs = ROW_DURATION_MS): void {
  printVersion(out);
  const model = cpuModelName() || 'unknown';
  out.print(`cpu: ${model}; ${cpuHasAes() ? 'with' : 'no'} AES acceleration\n`);
  for (const row of ROWS) {
    out.print(speedRowHead(row.name));
    const mbs = measure(row, durationMs);
    out.print(speedRowTail(mbs, autoBackend(row.cipher) === row.backend));
  }
}
