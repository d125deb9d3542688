/**
 * Everything about a directory tree that a read-only tool must not change:
 * for every entry its type, mode, size, content hash (files), target
 * (symlinks), xattrs, and its mtime and ctime in nanoseconds (a ctime
 * moves on any write, chmod, rename or xattr change). Access times are
 * left out: reading may update them.
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';

export async function treeState(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    const abs = join(root, rel);
    const st = await fsp.lstat(abs, { bigint: true });
    const head = `${(st.mode & 0o170000n).toString(8)} ${(st.mode & 0o7777n).toString(8)} ${st.size} m${st.mtimeNs} c${st.ctimeNs}`;
    if (st.isSymbolicLink()) {
      out[rel || '.'] = `${head} -> ${await fsp.readlink(abs)}`;
      return;
    }
    const attrs = (await xattr.listAttributes(abs)).sort();
    const x = await Promise.all(attrs.map(async (a) => `${a}=${(await xattr.getAttribute(abs, a)).toString('hex')}`));
    if (st.isDirectory()) {
      out[rel || '.'] = `${head} [${x.join(',')}]`;
      for (const n of (await fsp.readdir(abs)).sort()) await walk(rel ? `${rel}/${n}` : n);
      return;
    }
    const hash = st.isFile() ? createHash('sha256').update(await fsp.readFile(abs)).digest('hex') : '';
    out[rel] = `${head} ${hash} [${x.join(',')}]`;
  };
  await walk('');
  return out;
}
