/**
 * -speed (Documentation/format.md §12.2): the version line, the CPU line, then the seal
 * throughput of every content cipher with each backend, encrypting
 * 4096-byte blocks with a 24-byte AAD, in MB/s (10^6 bytes per second).
 * Where the cipher has a batch call (the native addon's AES-GCM and
 * XChaCha20-Poly1305, AEGIS), 32 blocks are sealed per call, each with its
 * own nonce and AAD, as the mount seals a 128 KiB write (src/crypto/speed.ts).
 *
 * Backend names follow gocryptfs: "OpenSSL" is our node:crypto backend
 * ('node'), "noble" the pure-TypeScript @noble/ciphers one. The AEGIS rows
 * (gocryptfs's aegis branch has one, `Aegis256X2-Go`) are per
 * implementation: "native" is the C addon (AES-NI), "ts" the TypeScript
 * one; AEGIS-128X2 is measured for comparison only (no gocryptfs cipher).
 * As in the aegis branch the number is "%8.2f" (AEGIS passes 10 GB/s).
 *
 * "(selected in auto mode)" marks the implementation tscryptfs uses without
 * -openssl: node:crypto for the gocryptfs 2.3 ciphers; for AEGIS-256X2 the
 * native addon when it is available, else TypeScript (N/A and no mark when
 * TSCRYPTFS_AEGIS rules an implementation out).
 *
 * With -json the rows are measured first and printed as one document
 * (Documentation/schemas/speed.schema.json).
 */
import {
  aegisAvailability,
  createAead,
  createAegisAead,
  measureSealThroughput,
  randomBytes,
  type Aead,
  type AegisBackend,
  type BackendName,
  type CipherName,
} from '../crypto/index.js';
import { cpuHasAes, cpuModelName } from './cpu.js';
import type { Output } from './output.js';
import { printVersion, versionReport } from './version.js';

/** Measuring time per row; 10 rows keep the whole run at about 4.5 s. */
const ROW_DURATION_MS = 450;

type Sealer = Pick<Aead, 'nonceSize' | 'seal'>;

interface Row {
  name: string;
  make: () => Sealer | Promise<Sealer>;
  /** True when auto mode uses this row's implementation. */
  selected: () => boolean;
}

/** The backend tscryptfs uses for a gocryptfs 2.3 cipher when -openssl is "auto". */
export function autoBackend(_cipher: CipherName): BackendName {
  return 'node';
}

function classic(name: string, cipher: CipherName, keyLen: number, backend: BackendName): Row {
  return {
    name,
    make: () => createAead(cipher, randomBytes(keyLen), { backend }),
    selected: () => autoBackend(cipher) === backend,
  };
}

function aegis(name: string, variant: 'aegis256x2' | 'aegis128x2', backend: AegisBackend, marked: boolean): Row {
  return {
    name,
    make: () => createAegisAead(variant, randomBytes(variant === 'aegis256x2' ? 32 : 16), backend),
    selected: () => marked && aegisAvailability().backend === backend,
  };
}

export const SPEED_ROWS: readonly Row[] = [
  classic('AES-GCM-256-OpenSSL', 'aes-gcm', 32, 'node'),
  classic('AES-GCM-256-noble', 'aes-gcm', 32, 'noble'),
  classic('AES-SIV-512-OpenSSL', 'aes-siv', 64, 'node'),
  classic('AES-SIV-512-noble', 'aes-siv', 64, 'noble'),
  classic('XChaCha20-Poly1305-OpenSSL', 'xchacha', 32, 'node'),
  classic('XChaCha20-Poly1305-noble', 'xchacha', 32, 'noble'),
  aegis('AEGIS-256X2-native', 'aegis256x2', 'native', true),
  aegis('AEGIS-256X2-ts', 'aegis256x2', 'ts', true),
  aegis('AEGIS-128X2-native', 'aegis128x2', 'native', false),
  aegis('AEGIS-128X2-ts', 'aegis128x2', 'ts', false),
];

/** Row start: the name left-aligned in 26 columns and a TAB (printed before measuring). */
export function speedRowHead(name: string): string {
  return `${name.padEnd(26)}\t`;
}

/** Row end: "%8.2f MB/s" or "    N/A", and the auto-mode marker. */
export function speedRowTail(mbPerSec: number | null, selected: boolean): string {
  const value = mbPerSec !== null && mbPerSec > 0 ? `${mbPerSec.toFixed(2).padStart(8)} MB/s` : '    N/A';
  return `${value}${selected ? '\t(selected in auto mode)' : ''}\n`;
}

/** MB/s, or null when the implementation is not available here. */
async function measure(row: Row, durationMs: number): Promise<number | null> {
  try {
    return measureSealThroughput(await row.make(), { durationMs, blockSize: 4096 });
  } catch {
    return null;
  }
}

/** One measured row of -speed -json. */
export interface SpeedResult {
  name: string;
  /** The cipher part of the name ("AES-GCM-256"). */
  cipher: string;
  /** The implementation part ("OpenSSL", "noble", "native", "ts"). */
  implementation: string;
  /** null: not available here. */
  mbPerSec: number | null;
  selected: boolean;
}

async function runSpeedJson(out: Output, durationMs: number): Promise<void> {
  const results: SpeedResult[] = [];
  for (const row of SPEED_ROWS) {
    const mbs = await measure(row, durationMs);
    const cut = row.name.lastIndexOf('-');
    results.push({
      name: row.name,
      cipher: row.name.slice(0, cut),
      implementation: row.name.slice(cut + 1),
      mbPerSec: mbs !== null && mbs > 0 ? Math.round(mbs * 100) / 100 : null,
      selected: mbs !== null && row.selected(),
    });
  }
  out.printJson({
    version: versionReport(),
    cpu: { model: cpuModelName() || 'unknown', aes: cpuHasAes() },
    blockSize: 4096,
    results,
  });
}

export async function runSpeed(out: Output, durationMs = ROW_DURATION_MS): Promise<void> {
  if (out.json) {
    await runSpeedJson(out, durationMs);
    return;
  }
  printVersion(out);
  const model = cpuModelName() || 'unknown';
  out.print(`cpu: ${model}; ${cpuHasAes() ? 'with' : 'no'} AES acceleration\n`);
  for (const row of SPEED_ROWS) {
    out.print(speedRowHead(row.name));
    const mbs = await measure(row, durationMs);
    out.print(speedRowTail(mbs, mbs !== null && row.selected()));
  }
}
