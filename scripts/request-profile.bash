#!/usr/bin/env bash
# request-profile.bash: where one FUSE daemon's time goes per request in
# benchmark.bash's UNTAR, RM and DBENCH4 phases: the requests of each kind,
# their time from the kernel's send to the answer, and the daemon's CPU per
# request by thread and part (scripts/request-profile.py says which parts).
#
# Usage: bash scripts/request-profile.bash MNT PID LABEL OUTDIR
#   MNT     an empty directory in a FUSE mount
#   PID     the process id of the daemon serving it
#   LABEL   a name for the summaries (e.g. tscryptfs, securefs)
#   OUTDIR  where the recordings (LABEL-PHASE-KIND.data) and LABEL.txt go
#
# Each phase runs twice, once recording the FUSE tracepoints (counts and
# times), once sampling CPU at 1 kHz, since either recording slows what
# the other measures. Wall times under perf are longer than
# benchmark.bash's. Needs root, perf, tar, dbench and the bench tree
# (scripts/make-bench-tree.bash). Documentation/performance.md, "Per
# request, against securefs", has a run.

set -uo pipefail
[[ $# -eq 4 ]] || { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
MNT=$1 PID=$2 LABEL=$3 OUT=$4
HERE=$(cd "$(dirname "$0")" && pwd)
TAR=$(bash "$HERE/make-bench-tree.bash" | tail -n 1) || { echo "request-profile: no bench tree" >&2; exit 1; }
TOP=$(basename "$TAR" .tar)
LOADFILE=/usr/share/dbench/client.txt
for tool in perf tar dbench python3; do
	command -v "$tool" >/dev/null || { echo "request-profile: $tool is missing" >&2; exit 1; }
done
kill -0 "$PID" 2>/dev/null || { echo "request-profile: no process $PID" >&2; exit 1; }
[[ -d $MNT && -z $(ls -A "$MNT") ]] || { echo "request-profile: $MNT is not an empty directory" >&2; exit 1; }
mkdir -p "$OUT" || exit 1
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[[ -d /sys/kernel/tracing/events/fuse ]] || { echo "request-profile: the kernel has no fuse tracepoints" >&2; exit 1; }

TRACE=(-e fuse:fuse_request_send -e fuse:fuse_request_end)
CPU=(-e cpu-clock -c 1000000)

# record KIND PHASE CMD...: CMD in MNT under perf record, then summed up.
record() {
	local kind=$1 phase=$2 data="$OUT/$LABEL-$2-$1.data" t0 t1 extra=()
	shift 2
	local -n events=$kind
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$EPOCHREALTIME
	(cd "$MNT" && perf record -q -a "${events[@]}" -o "$data" -- "$@" >/dev/null 2>"$OUT/$LABEL-$phase-$kind.log") ||
		{ echo "request-profile: $phase failed: $(tail -n 3 "$OUT/$LABEL-$phase-$kind.log")" >&2; exit 1; }
	t1=$EPOCHREALTIME
	[[ $kind == CPU ]] && extra=(--requests "${COUNT[$phase]}")
	{
		echo "== $LABEL $phase ($kind: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s under perf)"
		perf script -i "$data" -F pid,tid,time,event,ip,dso,trace 2>/dev/null |
			python3 "$HERE/request-profile.py" --pid "$PID" --label "$LABEL $phase" "${extra[@]}"
	} | tee -a "$OUT/$LABEL.txt"
	if [[ $kind == TRACE ]]; then
		COUNT[$phase]=$(sed -n 's/^requests ([^)]*): \([0-9]*\)$/\1/p' "$OUT/$LABEL.txt" | tail -n 1)
	fi
}

declare -A COUNT=()
: >"$OUT/$LABEL.txt"
for kind in TRACE CPU; do
	record $kind UNTAR tar xf "$TAR"
	record $kind RM rm -rf "$TOP"
done
mkdir "$MNT/dbench" || exit 1
for kind in TRACE CPU; do
	record $kind DBENCH4 dbench 4 -t 8 -c "$LOADFILE" -D "$MNT/dbench"
done
rm -rf "${MNT:?}/dbench"
