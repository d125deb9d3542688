#!/usr/bin/env bash
# A/B of one change: two tscryptfs mounts of this checkout's build, up at
# once on tmpfs, that differ only in their environment or flags. Each round
# runs every phase on both mounts, the order alternating between rounds, so
# both see the same machine load. For each phase and round it prints the
# time and the daemon's CPU seconds (user+sys from /proc/PID/stat) of A and
# B, and at the end the median of B/A per phase.
#
#   bash scripts/ab-mounts.bash ROUNDS "ENV_A" "ENV_B"
#   e.g. bash scripts/ab-mounts.bash 4 "TSCRYPTFS_NATIVE_UNLINK=0" ""
#
# Environment:
#   PHASES        phases to run, from WRITE UNTAR MD5 LS RM DBENCH4 DBENCH16
#                 (default: WRITE UNTAR MD5 LS RM); UNTAR is needed before
#                 MD5, LS and RM
#   ROOTA, ROOTB  the checkout whose build A and B run (default: this one;
#                 e.g. a git worktree of the commit before a change, built
#                 with npm ci, for a change that has no switch)
#   INITA, INITB  -init flags of A's and B's cipher directories (-aegis, ...)
#   MOUNTA, MOUNTB  mount flags of A and B (-ko negative_timeout=1, ...)
#   NODEA, NODEB  Node's own flags for A's and B's process (V8 flags that
#                 NODE_OPTIONS refuses, such as --optimize-for-size)
#   DBENCH_SECS   length of a dbench run (default 10)
#   TREE          the tar of the tree (default: benchmark.bash's kernel subset,
#                 with its .md5sums beside it)
# Needs root (drop_caches), dbench for the DBENCH phases, bc.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TREE=${TREE:-$HOME/.cache/tscryptfs-bench/linux-subset.tar}
SUMS=${TREE%.tar}.md5sums
PHASES=${PHASES:-WRITE UNTAR MD5 LS RM}
DBENCH_SECS=${DBENCH_SECS:-10}
if [[ $# -ne 3 ]]; then
  sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
rounds=$1 envA=$2 envB=$3
[[ -f $TREE && -f $SUMS ]] || { echo "ab-mounts: no $TREE (run benchmark.bash once to fetch it)" >&2; exit 1; }
if [[ " $PHASES " == *" DBENCH"* ]] && ! command -v dbench >/dev/null; then
  echo "ab-mounts: dbench is missing (apt-get install dbench)" >&2
  exit 1
fi

base=$(mktemp -d /dev/shm/ab-mounts.XXXXXX)
declare -A PID
cleanup() {
  for x in A B; do
    local m=$base/mnt-$x p=${PID[$x]:-}
    if mountpoint -q "$m"; then fusermount -u "$m" 2>/dev/null || umount -l "$m"; fi
    # The daemon exits by itself once unmounted; kill it only if it does not.
    [[ -n $p ]] || continue
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill "$p" 2>/dev/null || true
  done
  rm -rf "$base"
}
trap cleanup EXIT
cp "$TREE" "$base/tree.tar"
cp "$SUMS" "$base/sums"

ticks() { # user+sys clock ticks of a process
  local f
  read -r -a f <<<"$(sed 's/.*) //' "/proc/$1/stat")"
  echo $((f[11] + f[12]))
}
for x in A B; do
  mkdir -p "$base/c-$x" "$base/mnt-$x"
  iflags=${INITA:-} mflags=${MOUNTA:-} nflags=${NODEA:-} ev=$envA root=${ROOTA:-$ROOT}
  [[ $x == B ]] && iflags=${INITB:-} mflags=${MOUNTB:-} nflags=${NODEB:-} ev=$envB root=${ROOTB:-$ROOT}
  [[ -f $root/dist/src/cli/main.js ]] || { echo "ab-mounts: no build in $root (npm ci there)" >&2; exit 1; }
  # shellcheck disable=SC2086 # flags and environment are word lists
  node "$root/bin/tscryptfs" -init -q -scryptn 10 $iflags -extpass "echo ab" "$base/c-$x" >/dev/null
  # shellcheck disable=SC2086
  env $ev node $nflags "$root/bin/tscryptfs" -fg -q $mflags -extpass "echo ab" "$base/c-$x" "$base/mnt-$x" &
  PID[$x]=$!
done
for x in A B; do
  for _ in $(seq 100); do mountpoint -q "$base/mnt-$x" && break; sleep 0.1; done
  mountpoint -q "$base/mnt-$x" || { echo "ab-mounts: mount $x did not come up" >&2; exit 1; }
done

# One phase on one mount: prints "value cpu" (value: seconds, or MB/s for dbench).
phase() {
  local x=$1 ph=$2 m=$base/mnt-$1 c0 t0 t1 c1 v
  sync
  [[ $ph == MD5 || $ph == LS ]] && echo 3 >/proc/sys/vm/drop_caches
  c0=$(ticks "${PID[$x]}")
  t0=$(date +%s.%N)
  case $ph in
    WRITE) dd if=/dev/zero of="$m/zero" bs=128k count=2000 conv=fsync status=none && rm -f "$m/zero" ;;
    UNTAR) tar xf "$base/tree.tar" -C "$m" ;;
    MD5) (cd "$m" && md5sum --quiet -c "$base/sums") ;;
    LS) ls -lR "$m" >/dev/null ;;
    RM) rm -rf "${m:?}"/* ;;
    DBENCH*) v=$(dbench -D "$m" -t "$DBENCH_SECS" "${ph#DBENCH}" 2>&1 | awk '/^Throughput/ {print $2}') ;;
  esac
  t1=$(date +%s.%N)
  c1=$(ticks "${PID[$x]}")
  [[ $ph == DBENCH* ]] || v=$(echo "$t1 - $t0" | bc)
  [[ -n $v ]] || { echo "ab-mounts: $ph on $x gave no figure" >&2; return 1; }
  echo "$v $(echo "($c1 - $c0) / 100" | bc -l)"
}

declare -A RATIO CPURATIO
for r in $(seq "$rounds"); do
  order="A B"
  ((r % 2 == 0)) && order="B A"
  for ph in $PHASES; do
    declare -A V C
    for x in $order; do
      out=$(phase "$x" "$ph") || exit 1
      read -r V[$x] C[$x] <<<"$out"
    done
    ra=$(echo "${V[B]} / ${V[A]}" | bc -l)
    rc=$(echo "${C[B]} / ${C[A]}" | bc -l)
    RATIO[$ph]+="$ra "
    CPURATIO[$ph]+="$rc "
    printf 'round %d %-8s A %9.3f (cpu %6.2f)  B %9.3f (cpu %6.2f)  B/A %5.2f cpu %5.2f\n' "$r" "$ph" "${V[A]}" "${C[A]}" "${V[B]}" "${C[B]}" "$ra" "$rc"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "median B/A (time, or MB/s for DBENCH; then daemon CPU):"
for ph in $PHASES; do
  printf '  %-8s %5.2f  cpu %5.2f\n' "$ph" "$(echo "${RATIO[$ph]}" | median)" "$(echo "${CPURATIO[$ph]}" | median)"
done
