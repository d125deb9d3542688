/**
 * `tscryptfs-xray FILE`: the header and the blocks of one cipher file, in
 * gocryptfs-xray's words (its inspectCiphertext): the file ID, then per
 * block the nonce, the tag, the offset and the length. The cipher is not
 * in the file, so it is assumed (AES-GCM unless -aessiv, -xchacha, -aegis).
 */
import * as fs from 'node:fs';
import type { CipherName } from '../../crypto/index.js';
import { contentEncryptionName } from '../../config/index.js';
import { BLOCK_SIZE, HEADER_LEN, HEADER_VERSION } from '../../content/index.js';
import { hasCode } from '../../util/errors.js';
import { describeError } from '../output.js';

const TAG_LEN = 16;
const NONCE_LEN: Record<CipherName, number> = { 'aes-gcm': 16, 'aes-siv': 16, xchacha: 24, aegis: 32 };

/** What to print and the exit code. */
export interface XrayResult {
  stdout: string;
  code: number;
}

/** gocryptfs's ParseHeader checks, with its messages. */
function headerError(h: Buffer): string | null {
  const hex = h.toString('hex');
  if (h.every((b) => b === 0)) return `ParseHeader: header is all-zero. Header hexdump: ${hex}`;
  const version = h.readUInt16BE(0);
  if (version !== HEADER_VERSION) return `ParseHeader: invalid version, want=${HEADER_VERSION} have=${version}. Header hexdump: ${hex}`;
  if (h.subarray(2).every((b) => b === 0)) return `ParseHeader: file id is all-zero. Header hexdump: ${hex}`;
  return null;
}

function readAt(fd: number, len: number, pos: number, path: string): Buffer {
  const buf = Buffer.alloc(len);
  let got = 0;
  try {
    while (got < len) {
      const n = fs.readSync(fd, buf, got, len - got, pos + got);
      if (n === 0) break;
      got += n;
    }
  } catch (err) {
    throw new Error(hasCode(err, 'EISDIR') ? `read ${path}: is a directory` : describeError(err));
  }
  return buf.subarray(0, got);
}

export function inspectFile(path: string, cipher: CipherName): XrayResult {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (err) {
    return { stdout: `${describeError(err)}\n`, code: 1 };
  }
  const out: string[] = [];
  const done = (code: number, last?: string): XrayResult => {
    if (last !== undefined) out.push(last);
    return { stdout: out.map((l) => `${l}\n`).join(''), code };
  };
  try {
    const header = readAt(fd, HEADER_LEN, 0, path);
    if (header.length === 0) return done(0, 'empty file');
    if (header.length < HEADER_LEN) return done(1, `incomplete file header: read ${header.length} bytes, want ${HEADER_LEN}`);
    const bad = headerError(header);
    if (bad) return done(1, bad);
    out.push(`Header: Version: ${header.readUInt16BE(0)}, Id: ${header.subarray(2).toString('hex')}, assuming ${contentEncryptionName(cipher)} mode`);
    const nonceLen = NONCE_LEN[cipher];
    const blockLen = nonceLen + BLOCK_SIZE + TAG_LEN;
    for (let i = 0; ; i++) {
      const off = HEADER_LEN + i * blockLen;
      const data = readAt(fd, blockLen, off, path);
      if (data.length === 0) break;
      if (data.length < nonceLen + TAG_LEN + 1) return done(1, `corrupt block: truncated data, len=${data.length}`);
      const iv = data.subarray(0, nonceLen);
      // AES-SIV stores its tag right after the nonce, the others at the end.
      const tag = cipher === 'aes-siv' ? data.subarray(nonceLen, nonceLen + TAG_LEN) : data.subarray(data.length - TAG_LEN);
      out.push(`Block ${String(i).padStart(2)}: IV: ${iv.toString('hex')}, Tag: ${tag.toString('hex')}, Offset: ${String(off).padStart(5)} Len: ${data.length}`);
    }
    return done(0);
  } catch (err) {
    return done(1, (err as Error).message);
  } finally {
    fs.closeSync(fd);
  }
}
