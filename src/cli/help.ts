/**
 * -h (short help, also shown for a bare "tscryptfs") and -hh (every
 * option, laid out by commander's Help from the flag table in flags/flag-table.ts).
 */
import type { Option } from 'commander';
import { buildCommand } from './flags/command-line.js';
import { findFlag, type FlagSpec } from './flags/flag-table.js';
import type { Output } from './output.js';
import { PROGRAM_NAME } from './output.js';
import { versionLine } from './version.js';

const USAGE =
  `Usage: ${PROGRAM_NAME} -init|-passwd|-info [OPTIONS] CIPHERDIR\n` +
  `  or   ${PROGRAM_NAME} [OPTIONS] CIPHERDIR MOUNTPOINT\n` +
  `  or   ${PROGRAM_NAME} -reverse [OPTIONS] PLAINDIR MOUNTPOINT\n` +
  `  or   ${PROGRAM_NAME} -speed|-version|-h|-hh\n`;

const SHORT_OPTIONS = `
Common options (use -hh to show all):
  -aessiv            Use AES-SIV encryption (with -init)
  -xchacha           Use XChaCha20-Poly1305 encryption (with -init)
  -aegis             Use AEGIS-256X2 encryption (with -init)
  -plaintextnames    Do not encrypt file names (with -init)
  -deterministic-names
                     Do not create gocryptfs.diriv files (with -init)
  -longnamemax N     Hash encrypted names longer than N bytes (with -init)
  -scryptn N         scrypt cost log2(N), 10..28, default 16 (with -init, -passwd)
  -reverse           Encrypted read-only view of a plaintext directory (with -init: create its config)
  -exclude PATH      Hide PATH from the -reverse view (also -exclude-wildcard, -exclude-from)
  -ctlsock PATH      Create a control socket for path translation at PATH
  -config FILE       Custom path to the config file
  -extpass CMD       Get the password from an external program
  -passfile FILE     Read the password from a file
  -masterkey HEX     Use the master key instead of the password ("stdin" reads it)
  -h, -help          This short help text
  -hh                Long help text with all options
  -fsck              Check an encrypted directory for corruption
  -init              Initialize an encrypted directory
  -info              Display information about an encrypted directory
  -passwd            Change the password
  -q, -quiet         Silence informational messages
  -speed             Run the crypto speed test
  -version           Print version information
  --                 Stop option parsing

tscryptfs-xray inspects cipher files, dumps the master key and translates
paths through a control socket.
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

export function helpShort(out: Output): void {
  out.print(`${versionLine()}\n\n${USAGE}${SHORT_OPTIONS}`);
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
  const cmd = buildCommand();
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
