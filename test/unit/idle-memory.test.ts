/**
 * src/cli/idle-memory.ts: the daemon gives its memory back once per quiet
 * spell of the mount, never while requests come, and does not wake at a
 * fixed rate. Timers and the clock are node:test's mocks, so the test runs
 * in no time and does not depend on the machine's load.
 */
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { returnMemoryWhenQuiet } from '../../src/cli/idle-memory.js';
import { limitMallocArenas, returnMemory } from '../../src/util/native-sys.js';
import { readFileSync, realpathSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { mallocArenaLimit } from '../../src/cli/daemon.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { needs } from '../helpers/requirements.js';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

test('gives back once per quiet spell: not during a burst, once after it, not again until requests come', () => {
  let last = Date.now();
  const given: number[] = [];
  const stop = returnMemoryWhenQuiet(() => last, { quietMs: 500, startMs: 100, restMs: 5000, give: () => (given.push(Date.now() - 1_000_000), true) });
  // A burst from the start: a request every 50 ms for 3 s.
  for (let t = 0; t < 3000; t += 50) {
    mock.timers.tick(50);
    last = Date.now();
  }
  assert.deepEqual(given, [100], 'nothing while requests come but start-up\'s');
  mock.timers.tick(499);
  assert.deepEqual(given, [100]);
  mock.timers.tick(1);
  assert.deepEqual(given, [100, 3500], 'half a second after the last request');
  mock.timers.tick(60_000);
  assert.deepEqual(given, [100, 3500], 'an idle mount is left alone');
  // One request after a long rest: seen at the next look (every 5 s), then given back.
  last = Date.now();
  mock.timers.tick(5000);
  assert.deepEqual(given, [100, 3500, 68500]);
  stop();
  last = Date.now();
  mock.timers.tick(60_000);
  assert.equal(given.length, 3, 'stopped');
});

test('the first give-back comes right after the start, busy or not; then once per quiet spell', () => {
  const given: number[] = [];
  const last = Date.now();
  const stop = returnMemoryWhenQuiet(() => last, { quietMs: 500, startMs: 100, restMs: 5000, give: () => (given.push(Date.now() - 1_000_000), true) });
  mock.timers.tick(99);
  assert.deepEqual(given, []);
  mock.timers.tick(1);
  assert.deepEqual(given, [100], 'start-up is a burst of its own');
  mock.timers.tick(60_000);
  assert.deepEqual(given, [100], 'once');
  stop();

  const busyGiven: number[] = [];
  const started = Date.now();
  let busy = started;
  const stopBusy = returnMemoryWhenQuiet(() => busy, { quietMs: 500, startMs: 100, give: () => (busyGiven.push(Date.now() - started), true) });
  for (let t = 0; t < 1000; t += 20) {
    mock.timers.tick(20);
    busy = Date.now();
  }
  assert.deepEqual(busyGiven, [100], 'start-up\'s leftovers, in the middle of the first burst');
  mock.timers.tick(500);
  assert.deepEqual(busyGiven, [100, 1500], 'and the burst\'s, half a second after its last request');
  stopBusy();
});

test('at most one look per quiet period while requests come', () => {
  let last = Date.now();
  let looks = 0;
  const stop = returnMemoryWhenQuiet(() => (looks++, last), { quietMs: 500, give: () => true });
  for (let t = 0; t < 10_000; t += 10) {
    mock.timers.tick(10);
    last = Date.now();
  }
  stop();
  assert.ok(looks <= 21, `${looks} looks in 10 s of requests`);
});

test('requests seen only at a look (answered in C) are dated by it: the memory goes back at most a second after the quiet spell', () => {
  const started = Date.now();
  let served = 0;
  let seen = 0;
  let stamp = started;
  const last = (): number => {
    if (served !== seen) {
      seen = served;
      stamp = Date.now();
    }
    return stamp;
  };
  const given: number[] = [];
  const stop = returnMemoryWhenQuiet(last, { quietMs: 5000, startMs: 100, restMs: 5000, give: () => (given.push(Date.now() - started), true) });
  // Requests every 10 ms for 20.35 s, then none.
  for (let t = 0; t < 20_350; t += 10) {
    mock.timers.tick(10);
    served++;
  }
  for (let t = 0; t < 7000; t += 50) mock.timers.tick(50);
  assert.equal(given[0], 100, 'start-up\'s');
  assert.equal(given.length, 2);
  assert.ok(given[1]! > 20_350 + 5000 && given[1]! <= 20_350 + 6000, `given back ${given[1]! - 20_350} ms after the last request`);
  stop();
});

test('without the addon the watch ends after the first try; TSCRYPTFS_RETURN_MEMORY=0 starts none', () => {
  let tries = 0;
  let last = Date.now();
  returnMemoryWhenQuiet(() => last, { give: () => (tries++, false) });
  mock.timers.tick(1000);
  last = Date.now();
  mock.timers.tick(20_000);
  assert.equal(tries, 1);
  process.env.TSCRYPTFS_RETURN_MEMORY = '0';
  try {
    returnMemoryWhenQuiet(() => last, { give: () => (tries++, true) });
    last = Date.now();
    mock.timers.tick(20_000);
    assert.equal(tries, 1);
  } finally {
    delete process.env.TSCRYPTFS_RETURN_MEMORY;
  }
});

test('returnMemory shrinks this process\'s V8 heap', needs('native'), () => {
  mock.timers.reset();
  const junk: unknown[] = [];
  for (let i = 0; i < 200_000; i++) junk.push({ i, s: `x${i}` });
  junk.length = 0;
  const before = process.memoryUsage().heapTotal;
  assert.equal(typeof returnMemory(), 'number');
  const after = process.memoryUsage().heapTotal;
  assert.ok(after < before, `heapTotal ${before} -> ${after}`);
});

/** Rss and Anonymous kB of this process's mappings of `file`, from /proc/self/smaps. */
function mappedKb(file: string): { rss: number; anon: number } {
  let mine = false;
  const kb = { rss: 0, anon: 0 };
  for (const line of readFileSync('/proc/self/smaps', 'latin1').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) mine = head[1] === file;
    else if (mine && line.startsWith('Rss:')) kb.rss += parseInt(line.slice(4), 10);
    else if (mine && line.startsWith('Anonymous:')) kb.anon += parseInt(line.slice(10), 10);
  }
  return kb;
}

test('returnMemory unmaps the node executable\'s clean pages, keeps its private ones, and the code still runs', needs('native'), () => {
  mock.timers.reset();
  const exe = realpathSync(process.execPath);
  const before = mappedKb(exe);
  const dropped = returnMemory();
  const after = mappedKb(exe);
  assert.ok(typeof dropped === 'number' && dropped > 1000, `${dropped} kB unmapped`);
  assert.ok(after.rss < before.rss - 1000, `the executable's resident kB ${before.rss} -> ${after.rss}`);
  assert.equal(after.anon, before.anon, 'private copies (relocated data) stay');
  // Code and read-only data come back from the file as they are used.
  assert.equal(createHash('sha256').update('abc').digest('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.deepEqual(JSON.parse(JSON.stringify({ a: [1, 2, 'x'] })), { a: [1, 2, 'x'] });
  assert.ok(mappedKb(exe).rss > after.rss, 'used pages are mapped again');
});

test('mallocArenaLimit is one arena per CPU, at least two; limitMallocArenas sets a limit and refuses none', needs('native'), () => {
  mock.timers.reset();
  assert.equal(mallocArenaLimit(), Math.max(2, availableParallelism()));
  assert.equal(limitMallocArenas(mallocArenaLimit()), true);
  assert.equal(limitMallocArenas(0), false);
});

/** Runs `body` (an ES module) in a child node with `flags`, after calling daemon.ts's `setter` when `call`; returns its stdout. */
function afterSetter(setter: 'limitOldGenerationGrowth' | 'leaveOptimizingCompilerOut', call: boolean, flags: string[], body: string, env: NodeJS.ProcessEnv): string {
  const daemon = fileURLToPath(new URL('../../src/cli/daemon.js', import.meta.url));
  const code = `if (${call}) (await import(${JSON.stringify(daemon)})).${setter}();\n${body}`;
  const res = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', code], { env, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  return res.stdout;
}

/**
 * The growing factor V8 used for the old generation's limit after the
 * first full collection it chose to make, in a child that fills and drops
 * old-space objects (V8's --trace-gc-verbose prints it with the limit).
 */
function firstGrowingFactor(callLimit: boolean, env: NodeJS.ProcessEnv): string {
  const body = `
    const ring = new Array(20000);
    for (let i = 0; i < 4e6; i++) ring[i % 20000] = new Array(20).fill(i);
  `;
  const out = afterSetter('limitOldGenerationGrowth', callLimit, ['--trace-gc-verbose'], body, env);
  const m = /\[HeapController\] Limit: old size: \d+ KB, new limit: \d+ KB \(([\d.]+)\)/.exec(out);
  assert.ok(m, 'no limit in the trace');
  return m[1]!;
}

test('limitOldGenerationGrowth lets the old generation grow to 1.2 times its live size; TSCRYPTFS_HEAP_GROWTH=0 leaves V8\'s factor', () => {
  mock.timers.reset();
  const env = { ...process.env };
  delete env.TSCRYPTFS_HEAP_GROWTH;
  assert.equal(firstGrowingFactor(true, env), '1.2');
  const v8s = firstGrowingFactor(false, env);
  assert.equal(firstGrowingFactor(true, { ...env, TSCRYPTFS_HEAP_GROWTH: '0' }), v8s);
});

/** Whether V8 optimizes a function it is told to optimize, in a child that first calls leaveOptimizingCompilerOut (or not). */
function optimizes(callLeave: boolean, env: NodeJS.ProcessEnv): boolean {
  const body = `
    function f(x) { return x * 2 + 1; }
    %PrepareFunctionForOptimization(f);
    f(1);
    f(2);
    %OptimizeFunctionOnNextCall(f);
    f(3);
    console.log((%GetOptimizationStatus(f) & 16) !== 0); // V8's OptimizationStatus::kOptimized
  `;
  return afterSetter('leaveOptimizingCompilerOut', callLeave, ['--allow-natives-syntax'], body, env).trim() === 'true';
}

test('leaveOptimizingCompilerOut keeps V8 from optimizing; TSCRYPTFS_BASELINE_JS=0 keeps the compiler', () => {
  mock.timers.reset();
  const env = { ...process.env };
  delete env.TSCRYPTFS_BASELINE_JS;
  assert.equal(optimizes(false, env), true);
  assert.equal(optimizes(true, env), false);
  assert.equal(optimizes(true, { ...env, TSCRYPTFS_BASELINE_JS: '0' }), true);
});
