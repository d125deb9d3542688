/**
 * -fsck CIPHERDIR: check every name, diriv, long-name file, header, block,
 * symlink and xattr (src/vault/fsck), print one line per problem in
 * gocryptfs's wording and a summary, exit 26 (EXIT.FsckErrors) when
 * anything was found, 11 when interrupted. Sync conflict copies get a line
 * each too, and alone leave the exit code 0. Read-only. On a terminal a
 * progress line on stderr shows how far the walk has come. With -json the
 * findings and the summary are one document at the end instead
 * (Documentation/schemas/fsck.schema.json), with the same exit code.
 *
 * The key comes from the password (config file) or -masterkey / -zerokey
 * with the format flags, as for mounting.
 */
import { isatty } from 'node:tty';
import { confFormat, type FormatOptions } from '../config/index.js';
import { conflictCount, corruptPaths, fsckCipherdir, isCorruption, type FsckFinding, type FsckProgress, type FsckReport } from '../vault/fsck/index.js';
import { bool } from './flags/command-line.js';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { loadConfig } from './load-config.js';
import { masterKeyFromArgs } from './masterkey.js';
import { formatFromFlags } from './mount.js';
import { goQuote, type Output } from './output.js';
import { wipe } from './password.js';
import { Progress } from './progress.js';
import { switchNumber } from '../util/switches.js';

/** One finding as a line, worded like gocryptfs -fsck where it has the same check. */
export function findingLine(f: FsckFinding): string {
  const slash = f.path.lastIndexOf('/');
  const dir = slash < 0 ? '' : f.path.slice(0, slash);
  const where = `(cipher file ${f.cipherPath})`;
  switch (f.kind) {
    case 'name':
    case 'longname':
      return `fsck: corrupt entry in dir ${goQuote(dir)}: ${goQuote(f.item ?? '')}: ${f.detail} ${where}`;
    case 'orphan-name-file':
      return `fsck: orphaned long name file in dir ${goQuote(dir)}: ${goQuote(f.item ?? '')}: ${f.detail} ${where}`;
    case 'diriv':
      return `fsck: error opening dir ${goQuote(f.path)}: ${f.detail} ${where}`;
    case 'header':
    case 'block':
      return `fsck: corrupt file ${goQuote(f.path)}: ${f.detail} ${where}`;
    case 'symlink':
      return `fsck: error reading symlink ${goQuote(f.path)}: ${f.detail} ${where}`;
    case 'xattr-name':
      return `fsck: corrupt xattr name on file ${goQuote(f.path)}: ${goQuote(f.item ?? '')} ${where}`;
    case 'xattr-value':
      return `fsck: error reading xattr ${goQuote(f.item ?? '')} from ${goQuote(f.path)}: ${f.detail} ${where}`;
    case 'io':
      return `fsck: error reading ${goQuote(f.path)}: ${f.detail} ${where}`;
    case 'conflict':
    case 'iv-conflict':
      return `fsck: sync conflict ${goQuote(f.path)}: ${f.detail} ${where}`;
  }
}

async function keyAndFormat(ctx: CliContext): Promise<{ masterKey: Buffer; format: FormatOptions }> {
  const fromArgs = await masterKeyFromArgs(ctx.args, ctx.out);
  if (fromArgs) {
    try {
      return { masterKey: fromArgs, format: await formatFromFlags(ctx) };
    } catch (err) {
      wipe(fromArgs);
      throw err;
    }
  }
  const { conf, masterKey } = await loadConfig(ctx);
  return { masterKey, format: confFormat(conf) };
}

function progressText(p: FsckProgress): string {
  const mib = (p.bytes / (1 << 20)).toFixed(1);
  return `fsck: ${p.dirs} dirs, ${p.files} files, ${mib} MiB checked: ${p.current === '' ? '/' : p.current}`;
}

export async function runFsck(ctx: CliContext): Promise<void> {
  const { out } = ctx;
  if (bool(ctx.args, 'reverse')) throw new CliError(EXIT.Usage, 'Running -fsck with -reverse is not supported');
  const { masterKey, format } = await keyAndFormat(ctx);
  const progress = !out.quiet && isatty(2) ? new Progress(process.stderr, progressIntervalMs()) : null;
  const print = (line: string): void => {
    progress?.clear();
    out.print(`${line}\n`);
  };
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  out.info(`${out.colors.green}Checking filesystem...${out.colors.reset}`);
  let report;
  try {
    report = await fsckCipherdir(ctx.cipherdir, {
      format,
      masterKey,
      backend: ctx.backend,
      signal: abort.signal,
      skipUnreadable: process.geteuid?.() !== 0,
      ...(!out.json && { onFinding: (f: FsckFinding) => print(findingLine(f)) }),
      ...(progress && { onProgress: (p: FsckProgress) => progress.update(progressText(p)) }),
    });
  } finally {
    wipe(masterKey);
    progress?.clear();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const code = exitCode(report);
  if (out.json) out.printJson(fsckJson(ctx.cipherdir, report, code));
  else for (const s of report.skipped) print(`fsck: skipped ${goQuote(s.path)}: ${s.detail}`);
  summarize(out, report);
  if (code !== EXIT.OK) throw new CliError(code, '');
}

/** 11 when interrupted, 26 when anything was found (sync conflicts alone are not) or skipped, else 0. */
function exitCode(report: FsckReport): number {
  if (report.aborted) return EXIT.Other;
  return report.findings.some(isCorruption) || report.skipped.length > 0 ? EXIT.FsckErrors : EXIT.OK;
}

/** The closing lines, as gocryptfs prints them (with -json only the messages, on stderr). */
function summarize(out: Output, report: FsckReport): void {
  const corrupt = corruptPaths(report).length;
  const skipped = report.skipped.length;
  const conflicts = conflictCount(report);
  if (conflicts > 0 && !report.aborted) out.info(`fsck: ${conflicts} sync conflict finding${conflicts === 1 ? '' : 's'}, not corruption (see "Sync conflicts" in tscryptfs(1))`);
  if (report.aborted) {
    out.info('fsck: aborted');
  } else if (corrupt === 0 && skipped === 0) {
    out.info('fsck summary: no problems found');
  } else {
    if (skipped > 0) out.warn('fsck: re-run this program as root to check all files!');
    if (!out.json) out.print(`fsck summary: ${corrupt} corrupt files, ${skipped} files skipped\n`);
  }
}

/**
 * The block a 'block' finding names, and where it starts in the cipher
 * file. The walk (src/vault/fsck/check-content.ts) words it as "block N
 * ..., cipher offset M"; the numbers are read back from that text until
 * FsckFinding carries them itself.
 */
function blockOf(f: FsckFinding): { block: number | null; cipherOffset: number | null } {
  const m = f.kind === 'block' ? /^block (\d+) .*, cipher offset (\d+)$/.exec(f.detail) : null;
  return m ? { block: Number(m[1]), cipherOffset: Number(m[2]) } : { block: null, cipherOffset: null };
}

/** The -fsck -json document. */
export function fsckJson(cipherdir: string, report: FsckReport, exitCode: number): object {
  return {
    cipherdir,
    findings: report.findings.map((f) => ({
      kind: f.kind,
      path: f.path,
      cipherPath: f.cipherPath,
      ...blockOf(f),
      item: f.item ?? null,
      conflictOf: f.conflictOf ?? null,
      detail: f.detail,
    })),
    skipped: report.skipped.map((s) => ({ path: s.path, cipherPath: s.cipherPath, detail: s.detail })),
    summary: {
      corruptFiles: corruptPaths(report).length,
      conflicts: conflictCount(report),
      skippedFiles: report.skipped.length,
      dirs: report.dirs,
      files: report.files,
      symlinks: report.symlinks,
      bytes: report.bytes,
      aborted: report.aborted,
    },
    exitCode,
  };
}

/** How often the progress line is redrawn (TSCRYPTFS_PROGRESS_MS, for tests; default 250 ms). */
function progressIntervalMs(): number {
  return switchNumber('TSCRYPTFS_PROGRESS_MS');
}
