/**
 * gocryptfs's ctlsocksrv.SanitizePath: leading slashes dropped, then Go's
 * filepath.Clean (no empty or "." components, "x/.." removed, no trailing
 * slash); "." becomes "", and a path that climbs above the root becomes ""
 * too. Pure.
 */
export function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(part);
  }
  return out.join('/') || '.';
}

export function sanitizePath(path: string): string {
  const p = path.replace(/^\/+/, '');
  if (p === '') return '';
  const clean = cleanPath(p);
  if (clean === '.' || clean === '..' || clean.startsWith('../')) return '';
  return clean;
}
