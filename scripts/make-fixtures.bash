#!/usr/bin/env bash
# Makes the gocryptfs 2.3 fixtures under test/fixtures/gocryptfs-2.3/ with the
# installed gocryptfs: every cipher directory is created and filled by
# gocryptfs itself, through its own mount; this script only writes plaintext
# into the mount and records what gocryptfs shows and stores (manifests,
# paths through the control socket, gocryptfs-xray output, the master key).
#
#   bash scripts/make-fixtures.bash                 # all fixtures, into test/fixtures/gocryptfs-2.3
#   bash scripts/make-fixtures.bash -o DIR [NAME...] # some of them, somewhere else
#
# Names: aesgcm aessiv xchacha plaintextnames deterministic-names
# longnamemax62 hkdf-false raw64-false reverse.
#
# gocryptfs 2.x -init ignores -hkdf=false and -raw64=false (it always sets
# HKDF and Raw64); those two flags only act on -masterkey mounts. The
# hkdf-false and raw64-false fixtures are therefore made as a user of 2.3
# would convert a directory: -init, then the flag taken out of the config's
# FeatureFlags, then `gocryptfs -passwd -masterkey` (gocryptfs re-wraps the
# master key for the flags now in the config), then an ordinary mount. All
# content and names are still written by gocryptfs.
#
# Every run gives new random
# file IDs, nonces, directory IVs and master keys; what does not change is
# the plaintext (plain_manifest.json) and the shape of the cipher directory,
# which is what the tests rely on. Needs root (or fusermount), gocryptfs,
# gocryptfs-xray and python3. The password of every fixture is "test".
set -euo pipefail
cd "$(dirname "$0")/.."

out=test/fixtures/gocryptfs-2.3
if [ "${1:-}" = "-o" ]; then
  out=$2
  shift 2
fi
ALL=(aesgcm aessiv xchacha plaintextnames deterministic-names longnamemax62 hkdf-false raw64-false reverse)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${ALL[@]}")

for tool in gocryptfs gocryptfs-xray python3 fusermount; do
  command -v "$tool" >/dev/null || { echo "make-fixtures: $tool is not installed" >&2; exit 1; }
done

init_flags() {
  case "$1" in
    aesgcm|reverse|hkdf-false|raw64-false) echo "" ;;
    aessiv) echo "-aessiv" ;;
    xchacha) echo "-xchacha" ;;
    plaintextnames) echo "-plaintextnames" ;;
    deterministic-names) echo "-deterministic-names" ;;
    longnamemax62) echo "-longnamemax 62" ;;
    *) echo "make-fixtures: unknown fixture $1 (known: ${ALL[*]})" >&2; return 1 ;;
  esac
}

scratch=$(mktemp -d /tmp/tscryptfs-fixtures.XXXXXX)
mounted=""
cleanup() {
  if [ -n "$mounted" ]; then
    fusermount -u "$mounted" 2>/dev/null || umount -l "$mounted" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# The records are written by one small Python program (it is the same walk
# for the plaintext through the mount and for the cipher directory).
RECORD=$(cat <<'PY'
import hashlib, json, os, socket, stat, sys

def walk(root, hashes_only=False):
    """lstat of every entry below root, sorted by path, as the manifests hold them."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            e = {"path": rel}
            if stat.S_ISLNK(st.st_mode):
                e.update(type="symlink", mode="0o%o" % stat.S_IMODE(st.st_mode), size=st.st_size, target=os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                e.update(type="dir", mode="0o%o" % stat.S_IMODE(st.st_mode), size=st.st_size)
            else:
                with open(p, "rb") as f:
                    data = f.read()
                e.update(type="file", mode="0o%o" % stat.S_IMODE(st.st_mode), size=st.st_size,
                         sha256=hashlib.sha256(data).hexdigest())
                if sys.argv[1] == "cipher":
                    e["allocated_bytes"] = st.st_blocks * 512
            if not stat.S_ISLNK(st.st_mode):
                xs = {}
                for n in sorted(os.listxattr(p, follow_symlinks=False)):
                    v = os.getxattr(p, n, follow_symlinks=False)
                    x = {"hex": v.hex()}
                    try:
                        t = v.decode("utf-8")
                        if t.isprintable():
                            x["text"] = t
                    except UnicodeDecodeError:
                        pass
                    xs[n] = x
                if xs:
                    e["xattrs"] = xs
            out.append(e)
    out.sort(key=lambda e: e["path"])
    return out

def ask(sock_path, req):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.sendall(req.encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    return buf.decode()

def dump(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")

cmd = sys.argv[1]
if cmd in ("plain", "cipher"):
    dump(walk(sys.argv[2]), sys.argv[3])
elif cmd == "paths":
    # plaintext -> ciphertext paths and the raw control-socket transcript
    plain, sock, paths_out, transcript_out = sys.argv[2:6]
    paths, transcript = [], []
    for e in walk(plain):
        if e["path"] == ".gocryptfs.reverse.conf":
            continue
        req = json.dumps({"EncryptPath": e["path"]})
        resp = ask(sock, req)
        transcript.append({"request": req, "response": resp})
        cipher = json.loads(resp)["Result"]
        paths.append({"plain": e["path"], "cipher": cipher, "type": e["type"]})
        req = json.dumps({"DecryptPath": cipher})
        transcript.append({"request": req, "response": ask(sock, req)})
    for req in ['{"EncryptPath": "/dir1//dir2/./nested.txt"}', '{"DecryptPath": "does-not-exist-AAAAAAAAAAAAAAAAAAAAAA"}', '{"EncryptPath": "a", "DecryptPath": "b"}',
                '{}', '{"EncryptPath": "../x"}', 'this is not json']:
        transcript.append({"request": req, "response": ask(sock, req)})
    dump(paths, paths_out)
    dump(transcript, transcript_out)
PY
)
record() { python3 -c "$RECORD" "$@"; }

# The plaintext every forward fixture holds (see test/fixtures/README.md).
fill_forward() {
  local name=$1
  : > empty.txt
  printf 'x' > one_byte.txt
  python3 -c 'import sys; sys.stdout.buffer.write(bytes(i % 256 for i in range(4096)))' > block_4096.bin
  python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 31) % 251 for i in range(5000)))' > file_5000.bin
  printf 'start' > hole_seek.bin
  printf 'end\n' | dd of=hole_seek.bin bs=4 seek=12388 oflag=seek_bytes conv=notrunc status=none
  : > hole_truncate.bin
  truncate -s 10000 hole_truncate.bin
  : > hole_aligned.bin
  truncate -s 8192 hole_aligned.bin
  mkdir -p dir1/dir2
  printf 'nested\n' > dir1/dir2/nested.txt
  ln -s one_byte.txt symlink_rel
  ln -s /tmp/absolute/target/path symlink_abs
  ln -s ../one_byte.txt dir1/symlink_up
  printf 'unicode\n' > 'ünïcødé_名前.txt'
  if [ "$name" = longnamemax62 ]; then
    printf '31\n' > "n31_$(printf 'a%.0s' {1..27})"
    printf '32\n' > "n32_$(printf 'b%.0s' {1..28})"
    local d="dir40_$(printf 'c%.0s' {1..34})"
    mkdir "$d"
    printf 'inside\n' > "$d/inside.txt"
  else
    printf 'long name\n' > "longfile_$(printf 'x%.0s' {1..221})"
    local d="longdir_$(printf 'y%.0s' {1..222})"
    mkdir "$d"
    printf 'inside\n' > "$d/inside.txt"
    printf '175\n' > "n175_$(printf 'a%.0s' {1..170})"
    printf '176\n' > "n176_$(printf 'b%.0s' {1..171})"
  fi
  python3 -c "import os; os.setxattr('one_byte.txt','user.test',b'hello xattr'); os.setxattr('one_byte.txt','user.empty',b''); os.setxattr('dir1','user.dirattr',b'on a directory')"
}

xray_all() {
  local cipher=$1 flag=$2
  (cd "$cipher" && find . -type f ! -name 'gocryptfs.conf' ! -name 'gocryptfs.diriv' ! -name '*.name' | sed 's|^\./||' | LC_ALL=C sort) |
    while IFS= read -r f; do
      echo "== $f"
      # shellcheck disable=SC2086
      gocryptfs-xray $flag "$cipher/$f" 2>&1
    done
}

make_forward() {
  local name=$1 dest=$2 flags
  flags=$(init_flags "$name")
  local w="$scratch/$name"
  mkdir -p "$w/cipher" "$w/plain"
  # shellcheck disable=SC2086
  gocryptfs -init -q -extpass "echo test" -scryptn 10 $flags "$w/cipher"
  local drop=""
  case "$name" in hkdf-false) drop=HKDF ;; raw64-false) drop=Raw64 ;; esac
  if [ -n "$drop" ]; then
    local mk
    mk=$(echo test | gocryptfs-xray -dumpmasterkey "$w/cipher/gocryptfs.conf")
    chmod u+w "$w/cipher/gocryptfs.conf"
    python3 -c 'import json, sys
p, flag = sys.argv[1:3]
c = json.load(open(p))
c["FeatureFlags"].remove(flag)
json.dump(c, open(p, "w"), indent="\t")' "$w/cipher/gocryptfs.conf" "$drop"
    echo test | gocryptfs -passwd -q -masterkey "$mk" "$w/cipher"
    rm "$w/cipher/gocryptfs.conf.bak"
  fi
  gocryptfs -q -nosyslog -extpass "echo test" -ctlsock "$w/ctl.sock" "$w/cipher" "$w/plain"
  mounted="$w/plain"
  (cd "$w/plain" && fill_forward "$name")
  record plain "$w/plain" "$w/plain_manifest.json"
  record paths "$w/plain" "$w/ctl.sock" "$w/paths.json" "$w/ctlsock_transcript.json"
  fusermount -u "$w/plain"
  mounted=""
  record cipher "$w/cipher" "$w/cipher_manifest.json"
  local xflag=""
  case "$name" in aessiv) xflag=-aessiv ;; xchacha) xflag=-xchacha ;; esac
  xray_all "$w/cipher" "$xflag" > "$w/xray.txt"
  echo test | gocryptfs-xray -dumpmasterkey "$w/cipher/gocryptfs.conf" > "$w/masterkey.txt"
  gocryptfs -info "$w/cipher" > "$w/info.txt"
  echo test > "$w/password.txt"
  {
    echo "# $(gocryptfs -version)"
    echo "gocryptfs -init -q -extpass 'echo test' -scryptn 10 ${flags:+$flags }cipher"
    if [ -n "$drop" ]; then
      echo "# \"$drop\" taken out of FeatureFlags in cipher/gocryptfs.conf, then:"
      echo "echo test | gocryptfs -passwd -q -masterkey \$(echo test | gocryptfs-xray -dumpmasterkey cipher/gocryptfs.conf) cipher"
    fi
    echo "gocryptfs -q -nosyslog -extpass 'echo test' -ctlsock ctl.sock cipher plain"
    echo "# then the plaintext of test/fixtures/README.md, written into plain/ (scripts/make-fixtures.bash, fill_forward)"
  } > "$w/command.txt"
  rm -rf "$dest"
  mkdir -p "$dest"
  cp -a "$w/cipher" "$dest/cipher"
  cp "$w"/{plain_manifest,cipher_manifest,paths,ctlsock_transcript}.json "$w"/{xray,masterkey,info,password,command}.txt "$dest/"
}

make_reverse() {
  local dest=$1 w="$scratch/reverse"
  mkdir -p "$w/plain/dir1/dir2" "$w/view"
  (
    cd "$w/plain"
    printf 'It works!\n' > status.txt
    python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 31) % 251 for i in range(5000)))' > file_5000.bin
    : > empty.txt
    printf 'nested\n' > dir1/dir2/nested.txt
    ln -s status.txt symlink_rel
    ln -s ../status.txt dir1/symlink_up
    printf 'long name\n' > "longfile_$(printf 'x%.0s' {1..221})"
  )
  gocryptfs -init -reverse -q -extpass "echo test" -scryptn 10 "$w/plain"
  record plain "$w/plain" "$w/plain_manifest.json"
  gocryptfs -q -nosyslog -reverse -extpass "echo test" -ctlsock "$w/ctl.sock" "$w/plain" "$w/view"
  mounted="$w/view"
  cp -a "$w/view" "$w/cipher_view"
  record cipher "$w/view" "$w/cipher_manifest.json"
  record paths "$w/plain" "$w/ctl.sock" "$w/paths.json" "$w/ctlsock_transcript.json"
  fusermount -u "$w/view"
  mounted=""
  echo test | gocryptfs-xray -dumpmasterkey "$w/plain/.gocryptfs.reverse.conf" > "$w/masterkey.txt"
  echo test > "$w/password.txt"
  {
    echo "# $(gocryptfs -version)"
    echo "gocryptfs -init -reverse -q -extpass 'echo test' -scryptn 10 plain"
    echo "gocryptfs -q -nosyslog -reverse -extpass 'echo test' -ctlsock ctl.sock plain view"
    echo "cp -a view cipher_view"
  } > "$w/command.txt"
  rm -rf "$dest"
  mkdir -p "$dest"
  cp -a "$w/plain" "$w/cipher_view" "$dest/"
  cp "$w"/{plain_manifest,cipher_manifest,paths,ctlsock_transcript}.json "$w"/{masterkey,password,command}.txt "$dest/"
}

mkdir -p "$out"
for name in "${names[@]}"; do
  init_flags "$name" >/dev/null
  echo "make-fixtures: $name"
  if [ "$name" = reverse ]; then make_reverse "$out/$name"; else make_forward "$name" "$out/$name"; fi
done
