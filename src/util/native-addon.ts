/**
 * Loading one of our optional native addons (built into native/build/Release
 * at install time). Missing or failing to load means null: callers have a
 * fallback. Paths are resolved from this file: dist/src/util/ when compiled,
 * src/util/ when run from source.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The addon `native/build/Release/<file>`, or null when it is not built or does not load. */
export function loadNativeAddon<T>(file: string): T | null {
  const addon = `native/build/Release/${file}`;
  for (const rel of [`../../../${addon}`, `../../${addon}`]) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (!existsSync(path)) continue;
    try {
      return createRequire(import.meta.url)(path) as T;
    } catch {
      return null;
    }
  }
  return null;
}
