/**
 * Sync conflict copies (Documentation/format.md §7.12): when two machines
 * change one file before a sync tool copies it, the tool keeps both and
 * renames one, adding its own suffix to the name on disk. On an encrypted
 * name the suffix stops it decrypting; here the suffix is recognised, the
 * canonical name on disk (the one the tool renamed from) is recovered, and
 * a readable name is made for the copy. Pure: no I/O; the caller proves a
 * candidate by decrypting it (src/names/conflict-dir.ts).
 *
 * Where the suffix goes: after the whole name, or before its last
 * extension (`gocryptfs.longname.HASH` has the extension `.HASH` for the
 * tools, which write `gocryptfs.longname.sync-conflict-....HASH`). Short
 * encrypted names are base64url and have no extension.
 */
import { NAME_MAX } from './valid-name.js';

/** Every shown conflict name holds this; a name without it is never looked up as one (twin: may_be_conflict in native/fastpath/walk.c). */
export const CONFLICT_MARKER = ' (conflict ';

/** True when `name` may be a shown conflict name (a cheap test before any lookup work). */
export function mayBeConflictName(name: string): boolean {
  return name.includes(CONFLICT_MARKER);
}

/** A way a name on disk can be a renamed copy of `canonical`. */
export interface ConflictSuffix {
  /** The name on disk the tool renamed from. */
  canonical: string;
  /** Which tool's naming matched. */
  tool: string;
  /** What the shown name says about the copy ("Syncthing 2026-12-05 08.15"). */
  label: string;
}

const ymd = (s: string): string => `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
const hm = (s: string): string => `${s.slice(0, 2)}.${s.slice(2, 4)}`;

interface Pattern {
  tool: string;
  /** The suffix, anchored at the end of the part it is tried on (the whole name, or the name before its extension). */
  re: RegExp;
  label(m: RegExpExecArray): string;
}

/**
 * The tools' suffixes, most specific first. Characters outside base64url
 * (space, parentheses, dot) make every one but OneDrive's and ownCloud's
 * old form unambiguous on a short encrypted name.
 */
const PATTERNS: readonly Pattern[] = [
  // Syncthing: NAME.sync-conflict-20261205-081500-ABCDEFG
  { tool: 'Syncthing', re: /\.sync-conflict-(\d{8})-(\d{6})-([A-Z0-9]{7})$/, label: (m) => `Syncthing ${ymd(m[1]!)} ${hm(m[2]!)}` },
  // Nextcloud and ownCloud: NAME (conflicted copy 2026-12-05 081500)
  { tool: 'Nextcloud', re: / \(conflicted copy (\d{4}-\d{2}-\d{2}) (\d{6})\)$/, label: (m) => `Nextcloud ${m[1]} ${hm(m[2]!)}` },
  // Dropbox: NAME (conflicted copy 2026-12-05), NAME (Bob's conflicted copy 2026-12-05 (1))
  { tool: 'Dropbox', re: / \((?:[^()/]{1,64}'s )?conflicted copy(?: (\d{4}-\d{2}-\d{2}))?(?: \((\d{1,4})\))?\)$/, label: (m) => `Dropbox${m[1] ? ' ' + m[1] : ''}${m[2] ? ' ' + m[2] : ''}` },
  // Dropbox, two names that differ only in case: NAME (Case Conflict), NAME (Case Conflict 1)
  { tool: 'Dropbox', re: / \(Case Conflict(?: (\d{1,4}))?\)$/, label: (m) => `Dropbox case${m[1] ? ' ' + m[1] : ''}` },
  { tool: 'Dropbox', re: / \(Selective Sync Conflict(?: (\d{1,4}))?\)$/, label: (m) => `Dropbox selective sync${m[1] ? ' ' + m[1] : ''}` },
  // Seafile: NAME (SFConflict user@example.com 2026-12-05-08-15-00)
  { tool: 'Seafile', re: / \(SFConflict [^()/]{0,128}?(\d{4}-\d{2}-\d{2})-(\d{2})-(\d{2})-\d{2}\)$/, label: (m) => `Seafile ${m[1]} ${m[2]}.${m[3]}` },
  // Resilio Sync: NAME.Conflict
  { tool: 'Resilio', re: /\.Conflict$/, label: () => 'Resilio' },
  // ownCloud's older clients: NAME_conflict-20261205-081500
  { tool: 'ownCloud', re: /_conflict-(\d{8})-(\d{6})$/, label: (m) => `ownCloud ${ymd(m[1]!)} ${hm(m[2]!)}` },
  // Google Drive and most others: NAME (1)
  { tool: 'copy', re: / \((\d{1,4})\)$/, label: (m) => `copy ${m[1]}` },
];

/** OneDrive: NAME-HOSTNAME, where '-' is also a base64url character (see conflictSuffixes). */
const ONEDRIVE_HOST = /^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/;

/**
 * Every canonical name `disk` may be a conflict copy of, most likely
 * first; empty when it looks like no tool's copy. For OneDrive every '-'
 * is a possible start of the host name, the longest canonical first (host
 * names are at most 63 characters, and the caller keeps only a canonical
 * that decrypts).
 */
export function conflictSuffixes(disk: string): ConflictSuffix[] {
  const out: ConflictSuffix[] = [];
  const dot = disk.lastIndexOf('.');
  // [what the suffix may end, what follows it]: the whole name, or the part before the extension.
  const forms: [string, string][] = [[disk, '']];
  if (dot > 0) forms.push([disk.slice(0, dot), disk.slice(dot)]);
  for (const p of PATTERNS) {
    for (const [head, ext] of forms) {
      const m = p.re.exec(head);
      if (m === null || m.index === 0) continue;
      out.push({ canonical: head.slice(0, m.index) + ext, tool: p.tool, label: p.label(m) });
    }
  }
  for (const [head, ext] of forms) {
    for (let i = head.lastIndexOf('-'); i > 0; i = head.lastIndexOf('-', i - 1)) {
      const host = head.slice(i + 1);
      if (!ONEDRIVE_HOST.test(host)) break;
      out.push({ canonical: head.slice(0, i) + ext, tool: 'OneDrive', label: `OneDrive ${host}` });
    }
  }
  return out;
}

/**
 * The name a conflict copy of plaintext `plain` is shown under: the label
 * in parentheses before the extension, so programs still know the type
 * ("report (conflict Syncthing 2026-12-05 08.15).odt"). A name in `taken`
 * gets a counter (" 2", " 3", ...); the result is added to `taken`. The
 * stem is shortened, whole characters at a time, to keep within NAME_MAX;
 * an extension too long to leave room for a stem counts as part of it.
 */
export function conflictShownName(plain: string, label: string, taken: Set<string>): string {
  const dot = plain.lastIndexOf('.');
  const split = dot > 0 && dot < plain.length - 1 ? dot : plain.length;
  for (let n = 1; ; n++) {
    const close = `${CONFLICT_MARKER}${label}${n > 1 ? ` ${n}` : ''})`;
    let stem = plain.slice(0, split);
    let tag = close + plain.slice(split);
    if (Buffer.byteLength(tag) >= NAME_MAX) {
      stem = plain;
      tag = close;
    }
    while (Buffer.byteLength(stem + tag) > NAME_MAX) stem = [...stem].slice(0, -1).join('');
    const shown = stem + tag;
    if (!taken.has(shown)) {
      taken.add(shown);
      return shown;
    }
  }
}
