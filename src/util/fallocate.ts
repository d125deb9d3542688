/**
 * fallocate(2) through the optional native addon (native/src/sys.c), which
 * Node itself lacks. Without the addon (no compiler at install time) there
 * is no preallocation: `fallocate` returns 'unavailable'.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { constants as osConstants } from 'node:os';

interface SysBinding {
  fallocate(fd: number, mode: number, offset: number, length: number): number;
}

/** Reserve without changing the file size. */
export const FALLOC_FL_KEEP_SIZE = 0x01;

const ADDON = 'native/build/Release/tscryptfs_sys.node';

/** Loaded once per process; null when unavailable (the file cannot change while we run). */
let cached: SysBinding | null | undefined;

function binding(): SysBinding | null {
  if (cached !== undefined) return cached;
  cached = null;
  // dist/src/util/ when compiled, src/util/ when run from source.
  for (const rel of [`../../../${ADDON}`, `../../${ADDON}`]) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (!existsSync(path)) continue;
    try {
      cached = createRequire(import.meta.url)(path) as SysBinding;
    } catch {
      cached = null;
    }
    break;
  }
  return cached;
}

/** True when fallocate can be called at all. */
export function fallocateAvailable(): boolean {
  return binding() !== null;
}

/** 'ok', 'unavailable' (no addon), or the errno code of the failure ('ENOSPC', 'EOPNOTSUPP', ...). */
export function fallocate(fd: number, mode: number, offset: number, length: number): string {
  const b = binding();
  if (!b) return 'unavailable';
  const rc = b.fallocate(fd, mode, offset, length);
  if (rc === 0) return 'ok';
  const table = osConstants.errno as Record<string, number>;
  return Object.keys(table).find((k) => table[k] === -rc) ?? 'EIO';
}
