#!/usr/bin/env node
/**
 * AEGIS seal throughput against node:crypto AES-256-GCM, in one run.
 * Needs the compiled tree (`npm run build`); run: node scripts/bench-aegis.mjs [ms per row]
 *
 * Per-call rows: `measureSealThroughput` (src/crypto/speed.ts) — seal 4096-byte
 * blocks with a 24-byte AAD and a fresh random nonce each, as `-speed` does.
 * Batched rows: one `sealBlocks` call per 128 KiB FUSE write (32 blocks, 32
 * random nonces drawn per call, AAD = BE64(blockNo) || fileID).
 * MB = 10^6 bytes.
 */
import { performance } from 'node:perf_hooks';
import { randomFillSync } from 'node:crypto';
import { createAead, measureSealThroughput, randomBytes } from '../dist/src/crypto/index.js';
import { createAegisAead, aegisNativeAvailable, aegisNativeStatus } from '../dist/src/crypto/aegis/index.js';
import { aegisNativeBinding } from '../dist/src/crypto/aegis/native.js';

const ms = Number(process.argv[2] ?? 1000);
const native = aegisNativeBinding();
const rows = [];

function batched(aead, reuse, blocks = 32) {
  const pt = randomBytes(blocks * 4096);
  const aads = new Uint8Array(blocks * 24);
  const nonces = new Uint8Array(blocks * aead.nonceSize);
  const out = reuse ? new Uint8Array(pt.length + blocks * (aead.nonceSize + 16)) : undefined;
  for (let i = 0; i < 4; i++) aead.sealBlocks(randomFillSync(nonces), pt, aads, 4096, out);
  let n = 0;
  const start = performance.now();
  let now = start;
  do {
    aead.sealBlocks(randomFillSync(nonces), pt, aads, 4096, out);
    n++;
    now = performance.now();
  } while (now - start < ms);
  return (n * pt.length) / ((now - start) / 1000) / 1e6;
}

function row(name, mbs) {
  rows.push([name, mbs]);
}

const gcm = createAead('aes-gcm', randomBytes(32));
row('AES-256-GCM node:crypto (per 4 KiB call)', measureSealThroughput(gcm, { durationMs: ms }));
row('  (for scale: AES-256-GCM, one 128 KiB message)', measureSealThroughput(gcm, { durationMs: ms, blockSize: 128 * 1024 }));
for (const [variant, title, keyLen] of [
  ['aegis256x2', 'AEGIS-256X2', 32],
  ['aegis128x2', 'AEGIS-128X2', 16],
]) {
  if (native !== null) {
    const def = native.implementation();
    for (const impl of native.implementations()) {
      native.useImplementation(impl);
      const a = createAegisAead(variant, randomBytes(keyLen), 'native');
      row(`${title} native ${impl} (per 4 KiB call)`, measureSealThroughput(a, { durationMs: ms }));
      row(`${title} native ${impl} sealBlocks 32x4K, new out`, batched(a, false));
      row(`${title} native ${impl} sealBlocks 32x4K, reused out`, batched(a, true));
    }
    native.useImplementation(def);
  }
  const t = createAegisAead(variant, randomBytes(keyLen), 'ts');
  row(`${title} TypeScript (per 4 KiB call)`, measureSealThroughput(t, { durationMs: ms }));
  row(`${title} TypeScript sealBlocks 32x4K, reused out`, batched(t, true));
}

console.log(`node ${process.version}; native AEGIS: ${aegisNativeAvailable() ? aegisNativeStatus().implementation : `no (${aegisNativeStatus().reason})`}`);
const base = rows[0][1];
for (const [name, mbs] of rows) {
  console.log(`${name.padEnd(58)} ${mbs.toFixed(1).padStart(9)} MB/s  ${(mbs / base).toFixed(2).padStart(6)}x GCM`);
}
