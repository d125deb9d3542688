#!/bin/bash
# The FUSE daemons' memory under fsstress's default mix, gocryptfs and
# tscryptfs side by side: one mount of each, backed by tmpfs, CYCLES cycles
# (default 5) of `fsstress -d MNT/work -n 5000 -p 4` with the tree removed
# after each, the daemon's VmRSS after each cycle, its VmHWM at the end and
# its VmRSS 8 s later (what a quiet daemon keeps).
# fsstress comes from xfstests (ltp/fsstress.c) and is built in a scratch
# directory that is removed afterwards; it is not a dependency.
#
#   bash scripts/fsstress-memory.bash XFSTESTS_SOURCE_DIR [CYCLES]
#
# Needs root, gcc, the XFS headers fsstress includes (apt-get install
# xfslibs-dev), gocryptfs and a built tree (bash setup.bash). The two mounts
# take turns, cycle by cycle, so that both see the same machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: bash scripts/fsstress-memory.bash XFSTESTS_SOURCE_DIR [CYCLES]}
cycles=${2:-5}
scratch=$(mktemp -d /dev/shm/fsstress-memory.XXXXXX)
names=(gocryptfs tscryptfs)
cleanup() {
    for n in "${names[@]}"; do
        fusermount -u "$scratch/$n/mnt" 2>/dev/null || umount -l "$scratch/$n/mnt" 2>/dev/null || true
    done
    rm -rf "$scratch"
}
trap cleanup EXIT

# xfstests's configure would write config.h; these are what Debian 12 has.
cat >"$scratch/config.h" <<'EOF'
#define STDC_HEADERS 1
#define HAVE_XFS_XFS_H 1
#define NEED_INTERNAL_XFS_IOC_EXCHANGE_RANGE 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_STATVFS_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_IOCTL_H 1
#define HAVE_SYS_WAIT_H 1
#define HAVE_SYS_MMAN_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_SYS_PRCTL_H 1
#define HAVE_SYS_FCNTL_H 1
#define HAVE_MALLOC_H 1
#define HAVE_DIRENT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_UNISTD_H 1
#define HAVE_ERRNO_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_LIBGEN_H 1
#define HAVE_ASSERT_H 1
#define HAVE_LINUX_FIEMAP_H 1
#define HAVE_LINUX_FALLOC_H 1
#define HAVE_RENAMEAT2 1
#define HAVE_COPY_FILE_RANGE 1
EOF
gcc -O2 -w -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$scratch" -I"$src/src" -I"$src/include" \
    "$src/ltp/fsstress.c" -o "$scratch/fsstress" -lm

# The daemon that serves MNT: the process whose environment carries its tag.
daemon_of() {
    local f
    for f in /proc/[0-9]*/environ; do
        if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF "FSSTRESS_MEMORY_MNT=$1"; then
            f=${f%/environ}
            echo "${f#/proc/}"
            return
        fi
    done
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
mb() { echo "$(status_kb "$1" "$2") / 1000" | bc -l; }

declare -A pid=()
for n in "${names[@]}"; do
    mkdir -p "$scratch/$n/cipher" "$scratch/$n/mnt"
    case $n in
    gocryptfs) prog=(gocryptfs) ;;
    tscryptfs) prog=(node "$here/bin/tscryptfs") ;;
    esac
    "${prog[@]}" -init -q -scryptn 10 -extpass 'echo pw' "$scratch/$n/cipher" </dev/null >/dev/null
    # -nosyslog: the daemons' messages (go-fuse's "Unimplemented opcode" lines) go to the log, not the table
    env "FSSTRESS_MEMORY_MNT=$scratch/$n/mnt" "${prog[@]}" -q -nosyslog -extpass 'echo pw' \
        "$scratch/$n/cipher" "$scratch/$n/mnt" </dev/null >>"$scratch/daemons.log" 2>&1
    pid[$n]=$(daemon_of "$scratch/$n/mnt")
    [ -n "${pid[$n]}" ] || { echo "cannot find the daemon of $n" >&2; exit 1; }
done

printf '%-10s' cycle
for n in "${names[@]}"; do printf ' %16s' "$n VmRSS MB"; done
echo
for c in $(seq "$cycles"); do
    printf '%-10s' "$c"
    for n in "${names[@]}"; do
        "$scratch/fsstress" -d "$scratch/$n/mnt/work" -n 5000 -p 4 >/dev/null 2>&1 || true
        rm -rf "$scratch/$n/mnt/work"
        printf ' %16.1f' "$(mb "${pid[$n]}" VmRSS)"
    done
    echo
done
printf '%-10s' VmHWM
for n in "${names[@]}"; do printf ' %16.1f' "$(mb "${pid[$n]}" VmHWM)"; done
echo
sleep 8
printf '%-10s' 'idle 8 s'
for n in "${names[@]}"; do printf ' %16.1f' "$(mb "${pid[$n]}" VmRSS)"; done
echo
