/**
 * Acting as other users in mount tests: the mount is made by
 * root with -allow_other, and the steps run as ordinary uids through
 * setpriv (real and effective uid/gid, supplementary groups as given).
 *
 * The oracle is the kernel's own ext4: a scenario is a list of phases, each
 * a Python snippet run as one identity against a root directory; the same
 * scenario runs on a plain directory in /tmp (ext4) and inside the mount,
 * and the tests compare every step's outcome (OK or the errno name) and a
 * snapshot of the resulting tree (type, mode, uid, gid, size, rdev).
 */
import { chmodSync } from 'node:fs';
import { run } from './mount.js';
import { PYTHON3_BIN } from './requirements.js';

export interface Identity {
  /** Short name, used to label the phase's results. */
  name: string;
  uid: number;
  gid: number;
  /** Supplementary groups (default: none). */
  groups?: number[];
}

export const ROOT: Identity = { name: 'root', uid: 0, gid: 0 };
/** The file owner in most scenarios (nobody:nogroup). */
export const A: Identity = { name: 'A', uid: 65534, gid: 65534 };
/** A second user; the owner of the sticky directory. */
export const D: Identity = { name: 'D', uid: 65533, gid: 65533 };
/** A third user, owner of nothing involved. */
export const C: Identity = { name: 'C', uid: 65532, gid: 65532 };
/** A, also a member of D's group 65533. */
export const A_IN_D: Identity = { name: 'A+65533', uid: 65534, gid: 65534, groups: [65533] };

/** Python helpers available to every phase: t(), case(), ops on paths relative to R. */
const PRELUDE = `
import os, sys, json, errno, stat, struct, ctypes
R = sys.argv[1]
ARGS = sys.argv[2:]
os.chdir(R)
res = {}
def t(f):
    try:
        v = f()
        return "OK" if v is None or isinstance(v, int) else v
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        return 'EOPNOTSUPP' if name == 'ENOTSUP' else name  # one number on Linux; the kernel's name
def case(name, f):
    res[name] = t(f)
def create(path, mode=0o644, data=b""):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        if data:
            os.write(fd, data)
    finally:
        os.close(fd)
def readall(path):
    with open(path, "rb") as f:
        return f.read().decode("latin-1")
def write_at(path, data, off=0):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, off)
    finally:
        os.close(fd)
def sock(path):
    os.mknod(path, 0o755 | stat.S_IFSOCK)
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
def fallocate(fd, mode, off, length):
    if _libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def mode_now(path):
    # statx asking for the mode alone (as \`stat -c %a\` does): the kernel may
    # answer from what it keeps, where a full stat would ask the file system
    buf = ctypes.create_string_buffer(256)
    if _libc.statx(-100, path.encode(), 0, 0x2, buf) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return "%04o" % (struct.unpack_from("<H", buf.raw, 28)[0] & 0o7777)
def append(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
`;

/** Runs `code` (with the prelude; its results go into `res`) as `who`, in directory `root`. */
export async function pyAs<T = Record<string, string>>(who: Identity, root: string, code: string, args: string[] = [], opts: { umask?: number } = {}): Promise<T> {
  const script = `${PRELUDE}\nos.umask(${opts.umask ?? 0o022})\n${code}\nprint(json.dumps(res))\n`;
  const py = [PYTHON3_BIN, '-c', script, root, ...args];
  // cwd '/': the other users may not be allowed into the directory the tests run from.
  const r =
    who.uid === 0 && who.gid === 0 && !who.groups
      ? await run(py[0]!, py.slice(1), { cwd: '/' })
      : await run('setpriv', [
          `--reuid=${who.uid}`,
          `--regid=${who.gid}`,
          who.groups && who.groups.length > 0 ? `--groups=${who.groups.join(',')}` : '--clear-groups',
          '--',
          ...py,
        ], { cwd: '/' });
  if (r.code !== 0) throw new Error(`python as ${who.name} (uid ${who.uid}) failed (${r.code}):\n${r.stderr}\n${code}`);
  return JSON.parse(r.stdout) as T;
}

export interface Phase {
  who: Identity;
  /** Python: calls case(name, fn) for every step; paths relative to the scenario root. */
  code: string;
  /** umask for the phase (default 022). */
  umask?: number;
}

/** Runs the phases in order against `root`; results keyed "who: case". */
export async function runScenario(root: string, phases: Phase[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const ph of phases) {
    const r = await pyAs(ph.who, root, ph.code, [], { umask: ph.umask ?? 0o022 });
    for (const [k, v] of Object.entries(r)) out[`${ph.who.name}: ${k}`] = v;
  }
  return out;
}

/** Every entry below `root` (not following symlinks): "type mode uid:gid size/rdev", keyed by relative path. */
export async function ownerSnapshot(root: string, under = '.'): Promise<Record<string, string>> {
  return pyAs<Record<string, string>>(
    ROOT,
    root,
    `
def kind(m):
    return {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l", stat.S_IFIFO: "p", stat.S_IFSOCK: "s", stat.S_IFCHR: "c", stat.S_IFBLK: "b"}[stat.S_IFMT(m)]
def describe(p):
    st = os.lstat(p)
    k = kind(st.st_mode)
    extra = ""
    if k in "fl":
        extra = " size=%d" % st.st_size
    if k in "cb":
        extra = " rdev=%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    return "%s %04o %d:%d%s" % (k, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, extra)
top = ARGS[0]
res[top] = describe(top)
for d, dirs, files in os.walk(top):
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        res[os.path.normpath(p)] = describe(p)
`,
    [under],
  );
}

/** Makes a test's temp dir traversable by everyone (mkdtemp gives 0700), so other uids reach the mount inside it. */
export function openForOthers(dir: string): void {
  chmodSync(dir, 0o755);
}

/** Fails with one line per key whose value differs (or is missing on one side), instead of a clipped dump of both records. */
export function assertSameRecord(actual: Record<string, string>, expected: Record<string, string>, what: string, expectedLabel = 'ext4'): void {
  const lines: string[] = [];
  for (const k of [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()) {
    if (actual[k] !== expected[k]) lines.push(`  ${k}: ${actual[k] ?? '(missing)'}  (${expectedLabel}: ${expected[k] ?? '(missing)'})`);
  }
  if (lines.length > 0) throw new Error(`${what}: ${lines.length} difference(s)\n${lines.join('\n')}`);
}
