/**
 * A node:test reporter used by `npm test` beside TAP: at the end it lists
 * every skipped test with its reason (a missing tool, see
 * test/helpers/requirements.ts), grouped by reason, on stderr. Under CI
 * (CI set and not "false"/"0") a skip fails the run: CI installs everything
 * the tests need, so a skip there means a test did not run that should have.
 */
const underCi = () => {
  const ci = process.env.CI ?? '';
  return ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

export default async function* skipSummary(source) {
  /** reason -> test names */
  const byReason = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' || event.data.skip === undefined) continue;
    const reason = typeof event.data.skip === 'string' ? event.data.skip : '(no reason given)';
    if (!byReason.has(reason)) byReason.set(reason, []);
    byReason.get(reason).push(event.data.name);
  }
  const total = [...byReason.values()].reduce((n, names) => n + names.length, 0);
  if (total === 0) {
    yield 'tscryptfs tests: nothing skipped\n';
    return;
  }
  let out = `tscryptfs tests: ${total} skipped\n`;
  for (const [reason, names] of byReason) {
    out += `  ${names.length} skipped: ${reason}\n`;
    for (const name of names.slice(0, 5)) out += `      ${name}\n`;
    if (names.length > 5) out += `      ... and ${names.length - 5} more\n`;
  }
  if (underCi()) {
    out += 'tscryptfs tests: FAILED: tests were skipped under CI, which must run every test\n';
    process.exitCode = 1;
  }
  yield out;
}
