#!/usr/bin/env bash
#
# Builds the source tree that benchmark.bash unpacks (UNTAR), checks (MD5),
# lists (LS) and deletes (RM), once, into a cache:
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/tscryptfs-bench/linux-subset.tar       the tree (uncompressed tar)
#   ${XDG_CACHE_HOME:-$HOME/.cache}/tscryptfs-bench/linux-subset.md5sums   md5sum list of its regular files
#   ${XDG_CACHE_HOME:-$HOME/.cache}/tscryptfs-bench/linux-subset.info      what it was built from
#
# Source: Debian's kernel source package linux-source-6.1, which ships
# /usr/src/linux-source-6.1.tar.xz (installed with apt-get if missing).
#
# Selection (fixed; change SELECTION_ID below if you ever change it): these
# directories of linux-source-6.1, complete, nothing else:
#
#   arch/x86 block certs crypto drivers/net fs include init io_uring ipc
#   kernel lib mm net scripts security usr virt
#
# With linux-source-6.1 6.1.192-3 that is 19,376 regular files, 1,091
# directories and 16 symlinks (some of them dangling, as in the kernel tree),
# 290 MB of file data, unpacked under the single top directory
# "linux-subset/". (The gocryptfs benchmark uses linux-3.0.tar.gz: 36,782
# files, 400 MB; this is about half of that.)
#
# Deterministic: entries sorted by name, every mtime set to
# 2023-01-01 00:00:00 UTC, owner/group 0/0, GNU tar format, no
# compression. Two machines with the same linux-source-6.1 package version
# get byte-identical tarballs (the .info file records the version and the
# SHA-256 of the tarball). Debian's security updates of linux-source-6.1
# change a few files; compare numbers only between runs with the same .info.
#
# Usage: scripts/make-bench-tree.bash [-f]    (-f: rebuild even if cached)
# Prints the path of the tarball on its last line.

set -euo pipefail
export LC_ALL=C

SELECTION_ID="linux-subset-v1"
SELECTION=(arch/x86 block certs crypto drivers/net fs include init io_uring ipc
	kernel lib mm net scripts security usr virt)
SRC_TXZ=/usr/src/linux-source-6.1.tar.xz
SRC_TOP=linux-source-6.1
TOP=linux-subset
FIXED_MTIME="2023-01-01 00:00:00 UTC"

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tscryptfs-bench
TAR=$CACHE/$TOP.tar
MD5=$CACHE/$TOP.md5sums
INFO=$CACHE/$TOP.info

FORCE=0
if [[ ${1:-} == -f ]]; then FORCE=1; elif [[ $# -gt 0 ]]; then
	echo "usage: $0 [-f]" >&2
	exit 2
fi

if [[ $FORCE -eq 0 && -s $TAR && -s $MD5 && -s $INFO ]] && grep -qx "selection: $SELECTION_ID" "$INFO"; then
	echo "$TAR"
	exit 0
fi

if [[ ! -f $SRC_TXZ ]]; then
	echo "$SRC_TXZ missing: installing linux-source-6.1 with apt-get" >&2
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-source-6.1 >&2; then
		apt-get update -q >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-source-6.1 >&2
	fi
fi
PKG_VERSION=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)

mkdir -p "$CACHE"
WORK=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "Building the benchmark tree from $SRC_TXZ ($PKG_VERSION), about a minute..." >&2
members=()
for d in "${SELECTION[@]}"; do members+=("$SRC_TOP/$d"); done
tar -xJf "$SRC_TXZ" -C "$WORK" "${members[@]}"
mv "$WORK/$SRC_TOP" "$WORK/$TOP"

# Checksum list of the plain tree, sorted, paths relative to the parent of
# $TOP (benchmark.bash runs "md5sum -c" where it unpacked the tarball).
(cd "$WORK" && find "$TOP" -type f -print0 | sort -z | xargs -0 md5sum) > "$WORK/$TOP.md5sums"

(cd "$WORK" && tar --sort=name --format=gnu --mtime="$FIXED_MTIME" \
	--owner=0 --group=0 --numeric-owner --mode='u+rw,go+r,go-w' \
	-cf "$WORK/$TOP.tar" "$TOP")

nfiles=$(find "$WORK/$TOP" -type f | wc -l)
ndirs=$(find "$WORK/$TOP" -type d | wc -l)
nlinks=$(find "$WORK/$TOP" -type l | wc -l)
bytes=$(find "$WORK/$TOP" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
{
	echo "selection: $SELECTION_ID"
	echo "source: $SRC_TXZ, linux-source-6.1 $PKG_VERSION"
	echo "directories: ${SELECTION[*]}"
	echo "contents: $nfiles files, $ndirs directories, $nlinks symlinks, $bytes bytes"
	echo "tar sha256: $(sha256sum "$WORK/$TOP.tar" | cut -d' ' -f1)"
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$WORK/$TOP.info"

mv -f "$WORK/$TOP.tar" "$TAR"
mv -f "$WORK/$TOP.md5sums" "$MD5"
mv -f "$WORK/$TOP.info" "$INFO"
cat "$INFO" >&2
echo "$TAR"
