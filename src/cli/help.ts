/**
 * -h (short help, also shown for a bare "tscryptfs") and -hh (every
 * option, laid out by commander's Help from the flag table in flags/flag-table.ts).
 */
import { Command, Help, Option } from 'commander';
import { FLAGS, findFlag, type FlagSpec } from './flags/flag-table.js';
import type { Output } from './output.js';
import { PROGRAM_NAME } from './output.js';
import { versionLine } from './version-line.js';

const USAGE =
  `Usage: ${PROGRAM_NAME} -init|-passwd|-info [OPTIONS] CIPHERDIR\n` +
  `  or   ${PROGRAM_NAME} [OPTIONS] CIPHERDIR MOUNTPOINT\n` +
  `  or   ${PROGRAM_NAME} -reverse [OPTIONS] PLAINDIR MOUNTPOINT\n` +
  `  or   ${PROGRAM_NAME} -speed|-version|-h|-hh\n`;

/**
 * -h: the common options of each action, in groups, each option's text
 * from the flag table (so -h and -hh never disagree); gocryptfs's -h shows
 * the same options in one list. -hh has every option.
 */
const SHORT_GROUPS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['Mounting (tscryptfs CIPHERDIR MOUNTPOINT)', ['allow_other', 'fg', 'fusedebug', 'idle', 'nonempty', 'nosyslog', 'ro', 'reverse', 'exclude', 'ctlsock']],
  ['Creating a cipher directory (-init)', ['init', 'aessiv', 'xchacha', 'aegis', 'plaintextnames', 'deterministic-names', 'longnamemax', 'scryptn']],
  ['Password and key (every action that opens CIPHERDIR)', ['extpass', 'passfile', 'masterkey', 'config', 'passwd']],
  ['Other actions', ['info', 'fsck', 'speed', 'version', 'help', 'hh', 'quiet']],
];

/** The flags -h shows, by name. */
export function shortHelpFlags(): FlagSpec[] {
  return SHORT_GROUPS.flatMap(([, names]) => names.map((n) => findFlag(n)!));
}

const SHORT_TAIL = `  --                    Stop option parsing

Use -hh to show all options. tscryptfs-xray inspects cipher files, dumps the
master key and translates paths through a control socket.
`;

const NOTES = `
Notes: All options can equivalently use "-" (single dash) or "--" (double dash).
       Values can be given as "-flag value" or "-flag=value"; booleans take
       "-flag=false". A standalone "--" stops option parsing.
       "-o a,b" anywhere on the line is the same as "-a -b".
       -speed: "OpenSSL" rows are the node:crypto backend, "noble" rows the
       pure-TypeScript backend; "(selected in auto mode)" marks the backend
       used without -openssl, which is node:crypto for every cipher. With
       the native batch addon, blocks are sealed 32 per call, as the mount
       seals a 128 KiB write.
       Options marked [mount] are for mounting.
       Exit codes are those of gocryptfs (1 usage, 6 CIPHERDIR, 9 password
       unreadable or empty, 12 wrong password, 27 unsupported config, ...).
`;

/** A commander program with one option per flag, for its help layout (the command line is parsed by flags/command-line.ts). */
function helpProgram(): Command {
  const cmd = new Command(PROGRAM_NAME);
  cmd.helpOption(false);
  for (const spec of FLAGS) cmd.addOption(new Option(spec.kind === 'bool' ? `--${spec.name}` : `--${spec.name} <${spec.metavar ?? 'VALUE'}>`, spec.help));
  return cmd;
}

/** Option rows as commander lays them out: term, then the text wrapped at the terminal's width. */
function optionRows(specs: readonly FlagSpec[], text: (spec: FlagSpec) => string, width = Math.max(...specs.map((s) => term(s).length), 18)): string[] {
  const help = new Help(); // only its wrapping: no program of every option needed
  const helpWidth = help.helpWidth ?? (process.stdout.columns || 80);
  return specs.map((s) => help.wrap(`  ${term(s).padEnd(width + 2)}${text(s)}`, helpWidth, width + 4));
}

export function helpShort(out: Output): void {
  const width = Math.max(...shortHelpFlags().map((s) => term(s).length));
  const groups = SHORT_GROUPS.map(([title, names]) => `${title}:\n${optionRows(names.map((n) => findFlag(n)!), (s) => s.help, width).join('\n')}`);
  out.print(`${versionLine()}\n\n${USAGE}\n${groups.join('\n\n')}\n${SHORT_TAIL}`);
}

/** "-name, -alias VALUE" in gocryptfs's single-dash spelling. */
function term(spec: FlagSpec): string {
  const names = [spec.name, ...(spec.aliases ?? [])].map((n) => `-${n}`).join(', ');
  return spec.kind === 'bool' ? names : `${names} ${spec.metavar ?? 'VALUE'}`;
}

function describe(spec: FlagSpec): string {
  let d = spec.help;
  if (spec.default !== undefined && spec.default !== false && spec.default !== '' && spec.default !== 0) {
    d += ` (default ${String(spec.default)})`;
  }
  if (spec.kind === 'list') d += ' [repeatable]';
  if (spec.status === 'mount') d += ' [mount]';
  return d;
}

export function helpLong(out: Output): void {
  const cmd = helpProgram();
  cmd.configureHelp({
    sortOptions: true,
    optionTerm: (o: Option) => term(findFlag(o.long!.slice(2))!),
    optionDescription: (o: Option) => describe(findFlag(o.long!.slice(2))!),
  });
  const help = cmd.createHelp();
  const options = help.visibleOptions(cmd);
  const width = help.longestOptionTermLength(cmd, help);
  const helpWidth = help.helpWidth ?? (process.stdout.columns || 80);
  const lines = options.map((o) => {
    const item = `  ${help.optionTerm(o).padEnd(width + 2)}${help.optionDescription(o)}`;
    return help.wrap(item, helpWidth, width + 4);
  });
  out.print(`${versionLine()}\n\n${USAGE}${NOTES}\nOptions:\n${lines.join('\n')}\n`);
}
