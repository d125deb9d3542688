#!/usr/bin/env node
// The test suite as `npm test` runs it, on the compiled dist/test/, in
// three runs of node --test (TAP on stdout, the skip list of
// scripts/test-skips.mjs on stderr), stopping at the first that fails:
//
//   1. the suites that make no mount of tscryptfs (unit, vault, cli, cross,
//      install), two test files at a time: each works in its own
//      temporary directory, and together they take 4 minutes one by one;
//   2. the mount suite, one file at a time (its timing and memory checks
//      need the machine to themselves);
//   3. the mount suite again with every native fast path off: each
//      TSCRYPTFS_NATIVE_* switch of the registry (src/util/switches.ts) set
//      to 0, so that the TypeScript twin of each native operation meets
//      the whole suite too.
import { spawnSync } from 'node:child_process';

const { SWITCHES } = await import('../dist/src/util/switches.js');
const REPORTERS = ['--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=./scripts/test-skips.mjs', '--test-reporter-destination=stderr'];
const nativeOff = Object.fromEntries(Object.keys(SWITCHES).filter((n) => n.startsWith('TSCRYPTFS_NATIVE_')).map((n) => [n, '0']));

const runs = [
  { title: 'the suites without mounts of tscryptfs, two files at a time', concurrency: 2, dirs: ['unit', 'vault', 'cli', 'cross', 'install'], env: {} },
  { title: 'the mount suite', concurrency: 1, dirs: ['mount'], env: {} },
  { title: `the mount suite again, every native fast path off: ${Object.keys(nativeOff).map((n) => `${n}=0`).join(' ')}`, concurrency: 1, dirs: ['mount'], env: nativeOff },
];

for (const run of runs) {
  console.log(`# ${run.title}`);
  const args = ['--test', `--test-concurrency=${run.concurrency}`, ...REPORTERS, ...run.dirs.map((d) => `dist/test/${d}/`)];
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, ...run.env } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
