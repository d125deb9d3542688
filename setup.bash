#!/usr/bin/env bash
# One-time set-up on Debian 12 (run as root, or with sudo available):
# system packages, npm dependencies and the build, then a short demo of
# tscryptfs on a throw-away cipher directory. Safe to run again.
#
#   bash setup.bash            # install, build, run the demo
#   bash setup.bash --no-demo  # install and build only
set -euo pipefail
cd "$(dirname "$0")"

# libfuse2 is what the mount (our fuse-native fork) links against; fuse3
# gives fusermount(3). gocryptfs (with gocryptfs-xray) is the reference the tests compare against; attr, rsync,
# sqlite3, git and python3 are programs the mount tests run inside a mount;
# man-db renders the man pages, and systemd's systemd-analyze checks the
# example unit, in their tests (systemd need not be running). The
# backing-store matrix (test/mount/backing-stores.test.ts) makes its own
# stores: xfs and btrfs images (xfsprogs, btrfs-progs; ext4's mkfs is
# e2fsprogs, always there), an OpenSSH server on 127.0.0.1 with sshfs
# (openssh-server, openssh-client, sshfs), an rclone mount (rclone), and
# exFAT through exfat-fuse (exfatprogs, exfat-fuse); the durability test
# traces the daemon with strace.
APT_PACKAGES=(libfuse2 fuse3 gocryptfs attr rsync sqlite3 git python3 man-db systemd
  xfsprogs btrfs-progs openssh-server openssh-client sshfs rclone exfatprogs exfat-fuse strace)

need_apt=0
for cmd in gocryptfs gocryptfs-xray fusermount3 getfattr rsync sqlite3 git python3 man systemd-analyze \
  mkfs.xfs mkfs.btrfs /usr/sbin/sshd ssh-keygen sshfs rclone mkfs.exfat mount.exfat-fuse strace; do
  command -v "$cmd" >/dev/null 2>&1 || need_apt=1
done
[ -e /usr/lib/x86_64-linux-gnu/libfuse.so.2 ] || [ -e /lib/x86_64-linux-gnu/libfuse.so.2 ] || ldconfig -p 2>/dev/null | grep -q 'libfuse.so.2 ' || need_apt=1
if [ "$need_apt" = 1 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "setup: installing ${APT_PACKAGES[*]} with apt-get"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${APT_PACKAGES[@]}" >/dev/null
fi

echo "setup: npm ci (installs dependencies, builds the native modules)"
npm ci --no-audit --no-fund
echo "setup: npm run build (compiles TypeScript into dist/, bundles the mount daemon's modules)"
npm run build

if [ "${1:-}" = "--no-demo" ]; then
  exit 0
fi

# The demo: make a cipher directory, show its config, write and read a file
# through the library and through a mount, and show what lands on disk.
demo=$(mktemp -d /tmp/tscryptfs-demo.XXXXXX)
trap 'fusermount -u "$demo/plain" 2>/dev/null || true; rm -rf "$demo"' EXIT
mkdir "$demo/cipher"
echo "demo: tscryptfs -init $demo/cipher"
node bin/tscryptfs -init -q -scryptn 10 -extpass "echo demo-password" "$demo/cipher"
node bin/tscryptfs -info "$demo/cipher"
node --input-type=module -e "
import { Vault } from './dist/src/index.js';
const v = await Vault.open(process.argv[1], { password: 'demo-password' });
await v.mkdir('/notes');
await v.writeFile('/notes/hello.txt', 'Hello from tscryptfs\n');
process.stdout.write('demo: plaintext view: /notes/hello.txt = ' + (await v.readFile('/notes/hello.txt')).toString());
await v.close();
" "$demo/cipher"
mkdir "$demo/plain"
node bin/tscryptfs -q -extpass "echo demo-password" "$demo/cipher" "$demo/plain"
echo "demo: mounted at $demo/plain:"
ls -l "$demo/plain/notes" | sed 's/^/  /'
echo "Written through the mount" > "$demo/plain/notes/mounted.txt"
fusermount -u "$demo/plain"
echo "demo: what is on disk:"
find "$demo/cipher" -mindepth 1 | sed "s|$demo/cipher|  CIPHERDIR|"
echo "demo: gocryptfs -fsck agrees:"
rc=0
fsck_out=$(gocryptfs -fsck -q -extpass "echo demo-password" "$demo/cipher" 2>&1) || rc=$?
# gocryptfs complains when there is no syslog daemon; that line is noise here.
printf '%s\n' "$fsck_out" | grep -v SwitchLoggerToSyslog | sed 's/^/  /' || true
echo "  gocryptfs -fsck exit code: $rc (0 = no problems found)"
exit "$rc"
