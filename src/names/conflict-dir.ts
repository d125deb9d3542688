/**
 * The sync conflicts of one cipher directory (Documentation/format.md
 * §7.12): given the names on disk that a listing could not show, finds
 * which are conflict copies (src/names/conflicts.ts) and proves each by
 * decrypting its canonical name; finds renamed copies of gocryptfs.diriv
 * (two machines made the same directory) and decrypts, with their IVs,
 * the names the directory's own IV does not (or decrypts to a name that is
 * not text); and finds renamed .name files
 * of long names and, in the root, renamed copies of gocryptfs.conf. What is proven gets a shown name that no other entry of
 * the directory has; everything else stays hidden, as before.
 *
 * A proof is a canonical name that decrypts to valid UTF-8 (a random
 * block passes the padding check one time in 256, UTF-8 as well about one
 * time in 10^5), or, for a long name, a .name file that hashes to it.
 */
import { isUtf8 } from 'node:buffer';
import { CONF_NAME } from '../config/conf-name.js';
import { hasCode } from '../util/errors.js';
import { readHeadAt } from '../util/fd-io.js';
import type { AtCalls } from '../util/sys-at.js';
import { conflictShownName, conflictSuffixes } from './conflicts.js';
import { DIRIV_LEN, DIRIV_NAME } from './diriv.js';
import { hashLongName, LONGNAME_FILE_MAX, LONGNAME_SUFFIX, longNameKind, readLongName } from './longnames.js';
import type { NameCodec } from './name-codec.js';

/** One conflict copy, shown under `shown`. */
export interface ConflictEntry {
  /** The name it is shown under in the directory. */
  shown: string;
  /** Its name on disk. */
  diskName: string;
  /** The plaintext name it is a version of. */
  plain: string;
  /** The name on disk of that plaintext name under the directory's IV (it may not exist). */
  canonical: string;
  /** 'copy': the tool renamed this entry; 'iv': its name was encrypted under a renamed gocryptfs.diriv. */
  kind: 'copy' | 'iv';
  tool: string;
  label: string;
  /** For 'iv': the renamed gocryptfs.diriv whose IV decrypts it. */
  ivCopy?: string;
}

/** A renamed gocryptfs.diriv, or a renamed .name file: kept, never shown. */
export interface ConflictFile {
  diskName: string;
  /** gocryptfs.diriv, or the .name file it is a copy of. */
  canonical: string;
  tool: string;
  label: string;
  /**
   * 'diriv': its IV decrypts entries of the directory (or none); 'name-file':
   * it names the long entry `canonical` without .name; 'conf': a copy of the
   * root's gocryptfs.conf (another password, or the same one changed twice).
   */
  kind: 'diriv' | 'name-file' | 'conf';
  /** Entries its IV or name decrypts. */
  used: number;
}

export interface DirConflicts {
  /** Long entries whose own .name file was renamed: shown under their plaintext name, as ordinary entries. */
  restored: { name: string; diskName: string }[];
  /** Includes the doubtful names that belong to a renamed diriv: the caller shows them only here. */
  conflicts: ConflictEntry[];
  files: ConflictFile[];
  /** Names still unexplained: hidden (or -badname's). */
  unexplained: string[];
}

export interface DirConflictInput {
  at: AtCalls;
  /** The directory (an O_PATH descriptor). */
  dirfd: number;
  codec: NameCodec;
  /** The directory's own IV. */
  iv: Buffer;
  raw64: boolean;
  /** Names on disk that are neither shown, nor gocryptfs.diriv/.conf, nor the .name file of a present long entry. */
  leftovers: readonly string[];
  /** Every name in the directory. */
  present: ReadonlySet<string>;
  /** Names already shown in the directory (ordinary entries): no conflict is shown under one. */
  shown: ReadonlySet<string>;
  /**
   * Names on disk shown under the directory's IV whose plaintext is not
   * UTF-8 (see doubtfulName). Where a renamed diriv's IV decrypts one to a
   * provable name, it is that IV's entry and becomes a conflict of kind 'iv'.
   */
  doubtful?: readonly string[];
  /** The cipher directory's root, where copies of gocryptfs.conf may be. */
  isRoot?: boolean;
}

/**
 * Whether a name shown under the directory's own IV may belong to a renamed
 * diriv instead: a name encrypted under another IV decrypts under this one
 * with valid padding about one time in 255, and then almost never to UTF-8,
 * which the decoded name shows as U+FFFD.
 */
export function doubtfulName(shown: string): boolean {
  return shown.includes('\uFFFD');
}

/** The plaintext of `cname` under `iv` when it is a provable name: valid padding, a valid name, valid UTF-8. */
function provable(codec: NameCodec, cname: string, iv: Buffer): string | null {
  const p = codec.decryptName(cname, iv);
  return p !== null && isUtf8(p) ? p.toString('utf8') : null;
}

async function readSmall(at: AtCalls, dirfd: number, name: string, max: number): Promise<Buffer | null> {
  try {
    const b = await readHeadAt(at, dirfd, name, max + 1);
    return b.length > max ? null : b;
  } catch (err) {
    if (hasCode(err)) return null; // a directory, gone, unreadable: not a copy we can use
    throw err;
  }
}

/** Finds the conflicts among a directory's leftover names. */
export async function resolveDirConflicts(input: DirConflictInput): Promise<DirConflicts> {
  const { at, dirfd, codec, iv, raw64, present } = input;
  const files: ConflictFile[] = [];
  const ivs: { iv: Buffer; file: ConflictFile }[] = [];
  /** Full encrypted names of long entries, by hashed name, from renamed .name files. */
  const longNames = new Map<string, { cname: string; file: ConflictFile }>();
  const rest: string[] = [];
  // Renamed dirivs and .name files first: the names below need them.
  for (const n of [...input.leftovers].sort()) {
    let used = false;
    for (const s of conflictSuffixes(n)) {
      if (s.canonical === DIRIV_NAME) {
        const b = await readSmall(at, dirfd, n, DIRIV_LEN);
        if (b === null || b.length !== DIRIV_LEN || b.every((x) => x === 0)) continue;
        const file: ConflictFile = { diskName: n, canonical: DIRIV_NAME, tool: s.tool, label: s.label, kind: 'diriv', used: 0 };
        files.push(file);
        if (!b.equals(iv)) ivs.push({ iv: b, file }); // an identical copy is harmless and decrypts nothing new
        used = true;
        break;
      }
      if (input.isRoot && s.canonical === CONF_NAME) {
        files.push({ diskName: n, canonical: CONF_NAME, tool: s.tool, label: s.label, kind: 'conf', used: 0 });
        used = true;
        break;
      }
      if (longNameKind(s.canonical) === 'name-file') {
        const owner = s.canonical.slice(0, -LONGNAME_SUFFIX.length);
        const b = await readSmall(at, dirfd, n, LONGNAME_FILE_MAX);
        const cname = b?.toString('latin1');
        if (cname === undefined || hashLongName(cname, raw64) !== owner) continue;
        const file: ConflictFile = { diskName: n, canonical: s.canonical, tool: s.tool, label: s.label, kind: 'name-file', used: 0 };
        files.push(file);
        if (!longNames.has(owner)) longNames.set(owner, { cname, file });
        used = true;
        break;
      }
    }
    // A .name file that explains nothing is left out quietly, as the listing always did.
    if (!used && longNameKind(n) !== 'name-file') rest.push(n);
  }

  /** The plaintext of a full encrypted name: under the directory's IV (unless `copiesOnly`), else under a renamed diriv's. */
  const decrypt = (cname: string, copiesOnly = false): { plain: string; ivFile?: ConflictFile } | null => {
    const own = copiesOnly ? null : provable(codec, cname, iv);
    if (own !== null) return { plain: own };
    for (const alt of ivs) {
      const p = provable(codec, cname, alt.iv);
      if (p !== null) return { plain: p, ivFile: alt.file };
    }
    return null;
  };
  /**
   * The full encrypted name behind a name on disk (a long one through its
   * .name file or a renamed copy of it), and that copy, if one was used.
   */
  const fullName = async (disk: string): Promise<{ cname: string; via?: ConflictFile } | null> => {
    if (longNameKind(disk) !== 'content') return { cname: disk };
    const own = present.has(disk + LONGNAME_SUFFIX) ? await readLongName(at, dirfd, disk).catch(() => null) : null;
    if (own !== null && hashLongName(own, raw64) === disk) return { cname: own };
    const copy = longNames.get(disk);
    return copy === undefined ? null : { cname: copy.cname, via: copy.file };
  };
  /** fullName, then decrypt; a renamed .name file counts as used only when what it names decrypts. */
  const plainOf = async (disk: string, copiesOnly = false): Promise<{ plain: string; ivFile?: ConflictFile } | null> => {
    const full = await fullName(disk);
    const d = full === null ? null : decrypt(full.cname, copiesOnly);
    if (d !== null && full!.via) full!.via.used++;
    return d;
  };

  const restored: DirConflicts['restored'] = [];
  const found: Omit<ConflictEntry, 'shown'>[] = [];
  const unexplained: string[] = [];
  /** Entry `disk` as a name encrypted under renamed diriv `file`'s IV. */
  const ivConflict = (disk: string, plain: string, file: ConflictFile): Omit<ConflictEntry, 'shown'> => {
    file.used++;
    return { diskName: disk, plain, canonical: codec.diskName(codec.encryptName(Buffer.from(plain, 'utf8'), iv)), kind: 'iv', tool: file.tool, label: file.label, ivCopy: file.diskName };
  };
  // Shown names that are not text under the directory's IV but are under a renamed diriv's.
  for (const n of ivs.length > 0 ? (input.doubtful ?? []) : []) {
    const d = await plainOf(n, true);
    if (d !== null) found.push(ivConflict(n, d.plain, d.ivFile!));
  }
  for (const n of rest) {
    // The entry itself, not renamed: a long entry whose .name file was, or a name under a renamed IV.
    const self = await plainOf(n);
    if (self !== null && self.ivFile === undefined) {
      restored.push({ name: self.plain, diskName: n });
      continue;
    }
    if (self !== null) {
      found.push(ivConflict(n, self.plain, self.ivFile!));
      continue;
    }
    let hit: Omit<ConflictEntry, 'shown'> | null = null;
    for (const s of conflictSuffixes(n)) {
      if (s.canonical === DIRIV_NAME || longNameKind(s.canonical) === 'name-file') continue;
      const d = await plainOf(s.canonical);
      if (d === null) continue;
      if (d.ivFile) d.ivFile.used++;
      hit = { diskName: n, plain: d.plain, canonical: s.canonical, kind: 'copy', tool: s.tool, label: s.label, ...(d.ivFile && { ivCopy: d.ivFile.diskName }) };
      break;
    }
    if (hit === null) unexplained.push(n);
    else found.push(hit);
  }

  // Shown names: ordinary and restored entries keep theirs; copies get theirs in the order of their names on disk.
  const taken = new Set(input.shown);
  for (const r of restored) taken.add(r.name);
  const conflicts = found
    .sort((a, b) => (a.diskName < b.diskName ? -1 : a.diskName > b.diskName ? 1 : 0))
    .map((c) => ({ ...c, shown: conflictShownName(c.plain, c.label, taken) }));
  return { restored, conflicts, files, unexplained };
}
