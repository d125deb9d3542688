#!/usr/bin/env node
// Runs node with the given arguments and every native fast path of the
// mount switched off: each TSCRYPTFS_NATIVE_* switch of the registry
// (src/util/switches.ts, compiled to dist/) set to 0. `npm test` runs the
// mount suite a second time this way, so that the TypeScript twin of each
// native operation meets the whole suite too. Exits with node's status.
import { spawnSync } from 'node:child_process';

const { SWITCHES } = await import('../dist/src/util/switches.js');
const off = Object.keys(SWITCHES).filter((name) => name.startsWith('TSCRYPTFS_NATIVE_'));
const env = { ...process.env };
for (const name of off) env[name] = '0';
console.log(`# the mount suite again, every native fast path off: ${off.map((n) => `${n}=0`).join(' ')}`);
const r = spawnSync(process.execPath, process.argv.slice(2), { stdio: 'inherit', env });
process.exit(r.status ?? 1);
