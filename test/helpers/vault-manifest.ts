/** Walks a Vault and describes its plaintext tree the way the fixture manifests do. */
import { createHash } from 'node:crypto';
import type { Vault } from '../../src/index.js';
import type { ManifestEntry } from './fixtures.js';

export async function vaultManifest(v: Vault, opts: { xattrs?: boolean } = {}): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await v.readdir(dir)) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const st = await v.stat(path);
      const e: ManifestEntry = {
        path,
        type: st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'file',
        mode: '0o' + (st.mode & 0o7777).toString(8),
        size: st.size,
      };
      if (e.type === 'file') e.sha256 = createHash('sha256').update(await v.readFile(path)).digest('hex');
      if (e.type === 'symlink') e.target = await v.readlink(path);
      if (opts.xattrs !== false && e.type !== 'symlink') {
        const names = (await v.listxattr(path)).sort();
        if (names.length > 0) {
          e.xattrs = {};
          for (const n of names) {
            const val = await v.getxattr(path, n);
            e.xattrs[n] = { hex: val.toString('hex'), text: val.toString('utf8') };
          }
        }
      }
      out.push(e);
      if (e.type === 'dir') await walk(path);
    }
  };
  await walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The fields we compare (directory sizes are the backing filesystem's business). */
export function comparable(entries: ManifestEntry[]): ManifestEntry[] {
  return entries
    .map((e) => ({ ...e, size: e.type === 'dir' ? 0 : e.size }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
