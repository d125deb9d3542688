/**
 * The filesystem check (gocryptfs -fsck) as a read-only walk of the cipher
 * directory: every name must decrypt under its directory's IV, every
 * long-name entry needs a .name file that hashes to it (and every .name
 * file its entry), every directory a valid diriv, every file a valid
 * header and blocks, every symlink target and xattr must decrypt.
 *
 * gocryptfs does this through a temporary FUSE mount; we walk the cipher
 * tree directly with the same ciphers, which also finds what a mount
 * hides silently (orphaned .name files, .name files of the wrong entry,
 * incomplete headers of files that show as empty). Sync conflict copies
 * are reported as such, not as corruption (kinds 'conflict', 'iv-conflict').
 *
 * Nothing is written: files are opened O_RDONLY (and O_NOATIME where
 * allowed), directories are only listed. Like the Vault, the walk goes
 * from directory descriptor to directory descriptor and follows no
 * symlink in the cipher directory.
 */
import { constants as C } from 'node:fs';
import { join } from 'node:path';
import { CONF_NAME, type FormatOptions } from '../../config/index.js';
import type { BackendName } from '../../crypto/index.js';
import {
  b64Decode,
  DIRIV_NAME,
  doubtfulName,
  hashLongName,
  LONGNAME_SUFFIX,
  longNameKind,
  readDirIV,
  readLongName,
  resolveDirConflicts,
  XATTR_PREFIX,
  ZERO_IV,
} from '../../names/index.js';
import { hasCode } from '../../util/errors.js';
import { sizeWords } from '../../util/stat-words.js';
import { atCalls, type AtCalls } from '../../util/sys-at.js';
import { openCipherRoot } from '../backing/index.js';
import { deriveCiphers, type VaultCiphers } from '../keys.js';
import { checkContent, openReadOnlyAt } from './check-content.js';
import { joinRel, type FsckFinding, type FsckKind, type FsckProgress, type FsckReport } from './findings.js';

export interface FsckOptions {
  format: FormatOptions;
  /** 32 bytes; not kept (the derived ciphers are). */
  masterKey: Uint8Array;
  backend?: BackendName;
  /** Called for every finding as soon as it is found (for streaming output). */
  onFinding?: (f: FsckFinding) => void;
  /** Called after every directory and file. */
  onProgress?: (p: FsckProgress) => void;
  /** Stops the walk early (the report then says aborted). */
  signal?: AbortSignal;
  /** Not root: EACCES entries are reported as skipped, not corrupt (gocryptfs does the same). */
  skipUnreadable?: boolean;
}

interface Entry {
  plain: string;
  /** The name in its directory. */
  disk: string;
  cipherPath: string;
}

class Walker {
  readonly report: FsckReport = { findings: [], skipped: [], dirs: 0, files: 0, symlinks: 0, bytes: 0, aborted: false };
  private readonly seenInodes = new Set<string>();
  private current = '';

  constructor(
    private readonly at: AtCalls,
    private readonly format: FormatOptions,
    private readonly ciphers: VaultCiphers,
    private readonly opts: FsckOptions,
  ) {}

  private get stopped(): boolean {
    return this.opts.signal?.aborted === true;
  }

  private find(kind: FsckKind, path: string, cipherPath: string, detail: string, item?: string, conflictOf?: string): void {
    const f: FsckFinding = { kind, path, cipherPath, detail, ...(item !== undefined && { item }), ...(conflictOf !== undefined && { conflictOf }) };
    this.report.findings.push(f);
    this.opts.onFinding?.(f);
  }

  /** An I/O error while checking: EACCES is "skipped" when not root, anything else a finding. */
  private ioProblem(err: unknown, path: string, cipherPath: string, what: string): void {
    const detail = `${what}: ${(err as Error).message}`;
    if (this.opts.skipUnreadable && hasCode(err, 'EACCES', 'EPERM')) {
      this.report.skipped.push({ path, cipherPath, detail });
      return;
    }
    this.find('io', path, cipherPath, detail);
  }

  private progress(): void {
    this.opts.onProgress?.({ dirs: this.report.dirs, files: this.report.files, bytes: this.report.bytes, current: this.current });
  }

  /** Lets timers and signal handlers run between entries. */
  private async breathe(): Promise<void> {
    await new Promise((r) => setImmediate(r));
  }

  /**
   * Checks the directory `fd` (an O_PATH descriptor, not closed here) at
   * `cipherDir`, plaintext `rel`. Its own xattrs are checked by the caller,
   * through its parent: reading them through "." would need search
   * permission on the directory itself.
   */
  async dir(fd: number, cipherDir: string, rel: string): Promise<void> {
    if (this.stopped) return;
    this.current = rel;
    this.report.dirs++;
    let names: string[];
    try {
      names = await this.at.readdirat(fd, '.');
    } catch (err) {
      this.ioProblem(err, rel, cipherDir, 'cannot read directory');
      return;
    }
    let iv = ZERO_IV;
    if (this.format.dirIV) {
      try {
        iv = await readDirIV(this.at, fd, cipherDir);
      } catch (err) {
        const why = hasCode(err, 'ENOENT') ? 'gocryptfs.diriv is missing' : `gocryptfs.diriv: ${reason(err)}`;
        if (this.opts.skipUnreadable && hasCode(err, 'EACCES')) this.ioProblem(err, rel, cipherDir, 'cannot read gocryptfs.diriv');
        else this.find('diriv', rel, join(cipherDir, DIRIV_NAME), why);
        return;
      }
    }
    this.progress();
    const entries = await this.names(fd, cipherDir, rel, names, iv);
    entries.sort((a, b) => (a.plain < b.plain ? -1 : a.plain > b.plain ? 1 : 0));
    for (const e of entries) {
      if (this.stopped) return;
      await this.entry(fd, e, joinRel(rel, e.plain));
    }
  }

  /**
   * Decrypts the names of one directory, reporting those that do not
   * decrypt; sync conflict copies among them (src/names/conflict-dir.ts)
   * are reported as conflicts instead, and checked under the names a
   * mount shows them by.
   */
  private async names(fd: number, cipherDir: string, rel: string, names: string[], iv: Buffer): Promise<Entry[]> {
    const isRoot = rel === '';
    const out: Entry[] = [];
    const present = new Set(names);
    const codec = this.ciphers.names;
    /** Findings held back until the names are known not to be conflict copies, by name on disk. */
    const held = new Map<string, [FsckKind, string]>();
    for (const n of names) {
      if (isRoot && (n === CONF_NAME || n === CONF_NAME + '.tmp')) continue;
      const cipherPath = join(cipherDir, n);
      if (!codec) {
        out.push({ plain: n, disk: n, cipherPath });
        continue;
      }
      if (this.format.dirIV && n === DIRIV_NAME) continue;
      let cname = n;
      const kind = this.format.longNames ? longNameKind(n) : 'none';
      if (kind === 'name-file') {
        const owner = n.slice(0, -LONGNAME_SUFFIX.length);
        if (!present.has(owner)) held.set(n, ['orphan-name-file', `no ${owner} beside this .name file`]);
        continue;
      }
      if (kind === 'content') {
        let full: string | null;
        try {
          full = await readLongName(this.at, fd, n);
        } catch (err) {
          this.find('longname', joinRel(rel, n), cipherPath, `cannot read ${n}${LONGNAME_SUFFIX}: ${(err as Error).message}`, n);
          continue;
        }
        if (full === null) {
          held.set(n, ['longname', `${n}${LONGNAME_SUFFIX} is missing or empty`]);
          continue;
        }
        if (hashLongName(full, this.format.raw64) !== n) {
          held.set(n, ['longname', `${n}${LONGNAME_SUFFIX} holds a name that does not hash to this entry`]);
          continue;
        }
        cname = full;
      }
      const plain = codec.decryptName(cname, iv);
      if (plain === null) {
        held.set(n, ['name', 'name does not decrypt']);
        continue;
      }
      out.push({ plain: plain.toString('utf8'), disk: n, cipherPath });
    }
    if (held.size > 0 && codec) out.push(...(await this.conflicts(fd, cipherDir, rel, iv, present, out, held)));
    return out;
  }

  /** Reports the sync conflicts among a directory's held-back names, and the rest as held; returns the entries to check. */
  private async conflicts(fd: number, cipherDir: string, rel: string, iv: Buffer, present: Set<string>, shown: Entry[], held: Map<string, [FsckKind, string]>): Promise<Entry[]> {
    const found = await resolveDirConflicts({
      at: this.at,
      dirfd: fd,
      codec: this.ciphers.names!,
      iv,
      raw64: this.format.raw64,
      leftovers: [...held.keys()],
      present,
      shown: new Set(shown.map((e) => e.plain)),
      doubtful: shown.filter((e) => doubtfulName(e.plain)).map((e) => e.disk),
      isRoot: rel === '',
    });
    const out: Entry[] = [];
    for (const c of found.conflicts) {
      const i = shown.findIndex((e) => e.disk === c.diskName);
      if (i >= 0) shown.splice(i, 1);
    }
    for (const r of found.restored) {
      held.delete(r.diskName);
      out.push({ plain: r.name, disk: r.diskName, cipherPath: join(cipherDir, r.diskName) });
    }
    for (const f of found.files) {
      held.delete(f.diskName);
      const detail =
        f.kind === 'diriv'
          ? `a renamed copy of ${DIRIV_NAME} (${f.label}); names encrypted under it: ${f.used}`
          : f.kind === 'conf'
            ? `a renamed copy of ${CONF_NAME} (${f.label}), never read: the config in use is ${CONF_NAME}`
            : `a renamed copy of ${f.canonical} (${f.label})`;
      this.find(f.kind === 'diriv' ? 'iv-conflict' : 'conflict', joinRel(rel, f.diskName), join(cipherDir, f.diskName), detail, f.diskName);
    }
    for (const c of found.conflicts) {
      held.delete(c.diskName);
      const cipherPath = join(cipherDir, c.diskName);
      const of = joinRel(rel, c.plain);
      const detail = c.kind === 'iv' ? `${of}, its name encrypted under ${c.ivCopy} (${c.label})` : `a conflict copy of ${of} (${c.label})`;
      this.find(c.kind === 'iv' ? 'iv-conflict' : 'conflict', joinRel(rel, c.shown), cipherPath, detail, c.diskName, of);
      out.push({ plain: c.shown, disk: c.diskName, cipherPath });
    }
    for (const [n, [kind, detail]] of held) this.find(kind, joinRel(rel, n), join(cipherDir, n), detail, n);
    return out;
  }

  private async entry(dirfd: number, e: Entry, rel: string): Promise<void> {
    this.current = rel;
    const { disk, cipherPath } = e;
    let w: Uint32Array;
    try {
      w = await this.at.fstatat(dirfd, disk);
    } catch (err) {
      this.ioProblem(err, rel, cipherPath, 'cannot stat');
      return;
    }
    const type = w[0]! & C.S_IFMT;
    if (type === C.S_IFDIR) {
      await this.xattrs(dirfd, disk, cipherPath, rel);
      let fd: number;
      try {
        fd = await this.at.openDir(dirfd, disk);
      } catch (err) {
        this.ioProblem(err, rel, cipherPath, 'cannot open directory');
        return;
      }
      try {
        await this.dir(fd, cipherPath, rel);
      } finally {
        await this.at.close(fd);
      }
      return;
    }
    if (type === C.S_IFLNK) {
      this.report.symlinks++;
      await this.symlink(dirfd, disk, cipherPath, rel);
      return;
    }
    if (type !== C.S_IFREG) return; // FIFOs, sockets, devices: nothing encrypted to check
    this.report.files++;
    if (w[6]! > 1) {
      const key = `${w[5]}:${w[7]}:${w[8]}`;
      if (this.seenInodes.has(key)) return; // another name of a file already checked
      this.seenInodes.add(key);
    }
    await this.xattrs(dirfd, disk, cipherPath, rel);
    const before = this.report.bytes;
    try {
      const fd = await openReadOnlyAt(this.at, dirfd, disk);
      try {
        const r = await checkContent(fd, sizeWords(w, 0), this.ciphers.content, {
          shouldStop: () => this.stopped,
          onBytes: (n) => {
            this.report.bytes = before + n;
            this.progress();
          },
        });
        this.report.bytes = before + r.bytes;
        for (const p of r.problems) this.find(p.kind, rel, cipherPath, p.detail);
      } finally {
        await this.at.close(fd);
      }
    } catch (err) {
      this.ioProblem(err, rel, cipherPath, 'cannot read file');
    }
    this.progress();
    await this.breathe();
  }

  private async symlink(dirfd: number, disk: string, cipherPath: string, rel: string): Promise<void> {
    let stored: string;
    try {
      stored = (await this.at.readlinkat(dirfd, disk)).toString('latin1');
    } catch (err) {
      this.ioProblem(err, rel, cipherPath, 'cannot read symlink');
      return;
    }
    if (this.format.plaintextNames) return;
    const sealed = b64Decode(stored, this.format.raw64);
    if (sealed === null) {
      this.find('symlink', rel, cipherPath, 'symlink target is not valid base64');
      return;
    }
    try {
      this.ciphers.content.openMessage(sealed);
    } catch (err) {
      this.find('symlink', rel, cipherPath, `symlink target does not decrypt: ${(err as Error).message}`);
    }
  }

  /** Every encrypted xattr name and value of a file or directory (entry `name` of `dirfd`) must decrypt. */
  async xattrs(dirfd: number, name: string, cipherPath: string, rel: string): Promise<void> {
    let names: string[];
    try {
      names = await this.at.listxattrat(dirfd, name);
    } catch (err) {
      if (hasCode(err, 'ENOTSUP', 'EOPNOTSUPP')) return;
      this.ioProblem(err, rel, cipherPath, 'cannot list xattrs');
      return;
    }
    const x = this.ciphers.xattrNames;
    for (const stored of names) {
      const plainName = x.decryptXattrName(stored);
      if (plainName === null) {
        if (stored.startsWith(XATTR_PREFIX)) this.find('xattr-name', rel, cipherPath, `xattr name ${stored} does not decrypt`, stored);
        continue;
      }
      if (plainName === stored) continue; // ACLs are stored in clear
      let value: Buffer;
      try {
        value = await this.at.getxattrat(dirfd, name, stored);
      } catch (err) {
        this.ioProblem(err, rel, cipherPath, `cannot read xattr ${plainName}`);
        continue;
      }
      try {
        this.ciphers.content.openMessage(value);
      } catch (err) {
        this.find('xattr-value', rel, cipherPath, `xattr ${plainName} does not decrypt: ${(err as Error).message}`, plainName);
      }
    }
  }
}

/**
 * Checks the cipher directory `cipherdir` and returns every problem found.
 * Throws only when the root itself cannot be listed.
 */
export async function fsckCipherdir(cipherdir: string, opts: FsckOptions): Promise<FsckReport> {
  const ciphers = await deriveCiphers(opts.masterKey, opts.format, opts.backend);
  const at = atCalls();
  const w = new Walker(at, opts.format, ciphers, opts);
  const fd = await openCipherRoot(at, cipherdir);
  try {
    await w.xattrs(fd, '.', cipherdir, '');
    await w.dir(fd, cipherdir, '');
  } finally {
    await at.close(fd);
  }
  w.report.aborted = opts.signal?.aborted === true;
  return w.report;
}

/** The reason of a coded error without its code and path ("diriv is all zero"). */
function reason(err: unknown): string {
  const m = /^[A-Z]+: (.*?)(?:, \w+ '.*')?$/.exec((err as Error).message);
  return m ? m[1]! : (err as Error).message;
}
