#!/usr/bin/env node
/**
 * Part of `npm run build`, after tsc: bundles the background process's
 * modules (dist/src/cli/daemon.js and everything it imports, statically
 * or lazily) into one file, dist/src/cli/daemon.bundle.js, and lists the
 * files it bundles in daemon.bundle.json, for src/cli/daemon-module.ts to
 * check that none is newer. Loading 77 modules one by one through Node's
 * ESM loader (an open, stat, read and close each, then a parse and a
 * link) sits on a mount's way to ready; one file takes about 15 ms less
 * (Documentation/performance.md, "Start-up"). The bundle sits beside
 * daemon.js, so the relative paths its modules resolve from
 * import.meta.url (native addons, package.json) stay right, and packages
 * stay imports of node_modules (none is imported statically: each is
 * loaded on first use with createRequire).
 */
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'dist', 'src', 'cli');

const { metafile } = await build({
  absWorkingDir: cli,
  entryPoints: ['daemon.js'],
  outfile: 'daemon.bundle.js',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});
writeFileSync(join(cli, 'daemon.bundle.json'), `${JSON.stringify({ inputs: Object.keys(metafile.inputs).sort() }, null, 1)}\n`);
