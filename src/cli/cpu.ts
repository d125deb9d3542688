/** CPU facts for -speed and the -init notice, read from /proc/cpuinfo like gocryptfs. */
import { readFileSync } from 'node:fs';

function cpuinfo(): string[] {
  if (process.platform !== 'linux') return [];
  try {
    return readFileSync('/proc/cpuinfo', 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** The "model name" line (or ARM's "Hardware"), or "" when unknown. */
export function cpuModelName(): string {
  const lines = cpuinfo();
  for (const want of ['model name', 'Hardware']) {
    for (const l of lines) {
      if (!l.startsWith(want)) continue;
      const colon = l.indexOf(':');
      if (colon < 0) continue;
      return l.slice(colon + 1).trim();
    }
  }
  return '';
}

/** True when the CPU advertises AES instructions (x86 "flags" or ARM "Features" contain "aes"). */
export function cpuHasAes(): boolean {
  if (process.platform === 'darwin' && process.arch === 'arm64') return true;
  for (const l of cpuinfo()) {
    if (!/^(flags|Features)\s*:/.test(l)) continue;
    if (l.slice(l.indexOf(':') + 1).trim().split(/\s+/).includes('aes')) return true;
  }
  return false;
}
