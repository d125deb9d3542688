#!/usr/bin/env bash
#
# benchmark.bash: tscryptfs side by side with gocryptfs, securefs, EncFS and
# a plain directory, in one run, interleaved round by round, as gocryptfs's own
# benchmark.bash measures it (https://nuetzlich.net/gocryptfs/comparison/).
#
# Phases (per candidate and round, on a fresh cipherdir + mount):
#   WRITE    dd if=/dev/zero of=zero bs=128k count=2000 conv=fsync   MB/s (10^6 B/s)
#   READ     dd if=zero of=/dev/null bs=128k count=2000              MB/s
#            (after "echo 3 > /proc/sys/vm/drop_caches": cold page cache)
#   UNTAR    tar xf linux-subset.tar                                 seconds
#   MD5      md5sum --quiet -c linux-subset.md5sums                  seconds
#   LS       ls -lR linux-subset > /dev/null                         seconds
#   RM       rm -rf linux-subset                                     seconds
#   DBENCH4  dbench 4 -t 8 -c /usr/share/dbench/client.txt          MB/s
#   DBENCH16 dbench 16 -t 8 (same loadfile)                          MB/s
#   FIO      fio --rw=randrw --bs=4k --size=64m --runtime=20
#            --time_based --ioengine=psync --numjobs=1               IOPS (read + write)
#   RSS      peak RSS (VmHWM) of the FUSE daemon during UNTAR        MB (10^6 B)
#   PEAK     peak RSS of the FUSE daemon over all the phases above   MB
#   IDLE     its VmRSS 8 s after the last phase (nothing asked)     MB
#
# and for each phase but the three of memory the CPU time of the mount's FUSE daemon (none
# for plain): user + sys seconds of all its threads, utime + stime of
# /proc/PID/stat (in clock ticks, getconf CLK_TCK, 100 per second here)
# read before and after the phase.
#
# The tree is a fixed subset of Debian's linux-source-6.1 (19,376 files,
# 290 MB), built once by scripts/make-bench-tree.bash into
# ${XDG_CACHE_HOME:-$HOME/.cache}/tscryptfs-bench/ and copied to a tmpfs
# for the run (so that dropping the page cache before READ does not send
# UNTAR to the disk).
#
# Candidates (default: all; securefs and EncFS only when installed):
#   plain               the backing directory itself, no FUSE, no encryption
#   gocryptfs           gocryptfs -init (AES-256-GCM), the reference for the ratios
#   gocryptfs-xchacha   gocryptfs -init -xchacha
#   tscryptfs           tscryptfs -init (AES-256-GCM), this checkout's bin/tscryptfs
#   tscryptfs-xchacha   tscryptfs -init -xchacha
#   tscryptfs-aessiv    tscryptfs -init -aessiv
#   tscryptfs-aegis     tscryptfs -init -aegis
#   securefs            securefs create --format 4 -r 1: securefs's default "lite"
#                       format (one backing file per file, names encrypted with
#                       AES-SIV, contents in 4 KiB AES-GCM blocks; `securefs info`
#                       of 0.13.1 says AES-128-GCM, 96-bit IVs), argon2id with 1
#                       iteration instead of 9; mounted with securefs mount -b
#                       and its defaults (multithreaded, --attr-timeout 30)
#   encfs               encfs --standard
# Each round runs every candidate once; the starting candidate rotates from
# round to round, and every second round runs the candidates in reverse
# order, so that no candidate always runs right after the same one
# (Documentation/performance.md, "The candidate order in benchmark.bash":
# in a fixed cyclic order the one after securefs was slower on LS and RM
# in four rounds of five). Every candidate gets a fresh cipherdir and mount per round,
# all on the same backing filesystem (default: a directory on the tmpfs
# /dev/shm; -dir DIR to choose), with -scryptn 10 (securefs: -r 1; password:
# "bench").
#
# Output: the median of each phase per candidate, its spread (max / min over
# the rounds), every candidate's ratio to gocryptfs (default) per phase (candidate / gocryptfs: for MB/s and IOPS
# more is better, for seconds less is better), the same two tables for the
# daemons' CPU seconds (less is better), every round's raw numbers, and the
# machine. Raw numbers also go to a TSV file under the cache directory
# (columns round, candidate, phase, value, cpu_s; cpu_s is "-" for plain
# and RSS).
# A phase that fails marks its candidate FAILED (no number is printed for
# it, later rounds skip it) and the script exits 1 at the end.
#
# Usage:
#   bash benchmark.bash [-rounds N] [-dd] [-only NAME,NAME,...] [-dir DIR]
#                       [-dbench-time S] [-fio-time S] [-baseline DIR]
#   bash benchmark.bash -twomounts [-rounds N] [-only NAME,...] [-dir DIR] [-baseline DIR]
#   bash benchmark.bash -extractloop N [-mixed] [-only tscryptfs-CIPHER] [-dir DIR]
#   bash benchmark.bash -scale [-scale-parts LIST] [-scale-small] [-only NAME,...] [-dir DIR]
#   bash benchmark.bash -fsstress XFSTESTS_DIR [-fsstress-cycles N] [-only NAME,...] [-dir DIR]
#
#   -rounds N       rounds (default 3)
#   -dd             WRITE and READ only
#   -twomounts      WRITE with two mounts of each candidate at once (a
#                   second mount can write at a third of the first's speed):
#                   WRITE into the first mount (its file kept), then WRITE2
#                   into the second, then WRITE2B, a second file there; the
#                   same dd as WRITE, each with its own daemon's CPU seconds
#                   (on the 2-core VM the drop is gocryptfs's too: fresh pages
#                   cost a trip to the host there; Documentation/
#                   performance.md, "Why WRITE swings on this machine")
#   -only LIST      comma-separated candidate names (see above)
#   -dir DIR        backing directory (default: a new directory in /dev/shm)
#   -dbench-time S  dbench -t S for each of the two dbench runs (default 8)
#   -fio-time S     fio --runtime=S (default 20)
#   -baseline DIR   one more candidate, tscryptfs-baseline: the default
#                   cipher run from another checkout's build (DIR has its own
#                   dist/ and node_modules/, e.g. a git worktree of an older
#                   commit after npm ci), to show a change before and after
#                   in one run; the report adds each tscryptfs candidate's
#                   ratio to it within each round (median, lowest-highest),
#                   for times and for daemon CPU
#   -extractloop N  leak check, like gocryptfs's tests/stress_tests/extractloop.bash:
#                   one tscryptfs mount, N cycles of UNTAR + RM, VmRSS of the
#                   daemon after each (right after RM, and the least of three
#                   readings 6-9 s later, once the quiet daemon has given
#                   memory back); fails if the last cycle's settled VmRSS is
#                   more than 110% of the first cycle's
#   -mixed          with -extractloop: each cycle runs scripts/mixed-load.py
#                   instead of UNTAR (4 processes x 2000 operations: opens
#                   of many files at once, sparse writes at random offsets,
#                   clone/dedupe ioctls that fail, splice, truncates,
#                   unlinks), then RM; fails if the last cycle's VmRSS is
#                   more than 110% of cycle 2's
#   -scale          how costs grow with the size of the work (default
#                   candidates gocryptfs and tscryptfs; needs python3), each
#                   point on a fresh mount (warmed up by 500 creates and
#                   deletes elsewhere) and after dropping the page cache
#                   (and, for DIR and DEPTH, half a second of quiet):
#                     DIR    directories of 1k, 10k, 100k empty files, as
#                            many as make 20k files at least, worked through
#                            one after the other: create all, ls -l, stat one
#                            name (median of nine names), delete all
#                     FILE   one file of 1 GiB and 8 GiB: dd write (bs 1M,
#                            fsync) and read, random 4 KiB reads (each
#                            block once, so each misses the page cache):
#                            the median of three runs of 3.3 s
#                     OPEN   1, 16, 256, 4096 files of 64 KiB open at once,
#                            a 4 KiB write and read of each in turn for 10 s:
#                            requests per second, the daemon's VmRSS
#                     DEPTH  stat of a file 1, 16, 64 directories deep
#                            (median of five)
#                   (scripts/scale-load.py); prints a table per part and
#                   each candidate's growth from the smallest to the
#                   largest size beside gocryptfs's, and draws the curves
#                   into an SVG (scripts/scale-plot.py) next to the TSV
#   -scale-parts L  comma-separated subset of dir,file,open,depth
#   -scale-small    sizes a tenth as large (100..10k entries, 64 and 512
#                   MiB, up to 256 open files): a quick check of the script
#   -fsstress DIR   the daemons' memory under fsstress's default mix
#                   (default candidates gocryptfs and tscryptfs, all mounted
#                   at once): cycles of `fsstress -n 5000 -p 4` taking turns
#                   between the mounts, the tree removed after each; each
#                   daemon's VmRSS after every cycle, its VmHWM, and its
#                   VmRSS 8 s after the last (scripts/bench-fsstress.bash).
#                   fsstress is built from DIR, an xfstests checkout
#                   (ltp/fsstress.c), into the run's scratch directory; needs
#                   gcc and the XFS headers (apt-get install xfslibs-dev)
#   -fsstress-cycles N  cycles for -fsstress (default 5)
#
# Needs root (drop_caches, clear_refs of the daemon), tar, md5sum, dd, dbench
# and fio (apt-get install dbench fio), gocryptfs, fuse3; securefs and encfs
# optional (apt-get install securefs encfs; Debian 12 has securefs 0.13.1;
# setup.bash does not install them, nor dbench and fio: CI does not benchmark).
# A default run (then 8 candidates, no securefs, 3 rounds) took 43 minutes on
# the 2-core reference machine with tscryptfs 0.1.0, 30 of them in the four
# tscryptfs candidates' tree phases; it gets shorter as tscryptfs gets
# faster. The script prints its estimate first and a projection after every
# round.
# -only, -rounds, -dbench-time and -fio-time shorten it.
#
# tscryptfs runs from a copy of this checkout's bin/, dist/, package.json,
# native/build/ and FUSE binding taken at the start (the other modules
# linked), so that all rounds measure the same build; the git commit
# printed is HEAD, with "+uncommitted-changes" if src/, native/ or
# package.json differ from it (dist/ is used as built; run npm run build first).

set -uo pipefail
export LC_ALL=C

cd "$(dirname "$0")" || exit 2
ROOT=$PWD
MYNAME=$(basename "$0")
NODE=$(command -v node || echo node)
PASS=bench
TAGVAR=TSCRYPTFS_BENCH_MNT
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tscryptfs-bench
ALL_CANDIDATES=(plain gocryptfs gocryptfs-xchacha tscryptfs tscryptfs-xchacha tscryptfs-aessiv tscryptfs-aegis securefs encfs)
PHASE_TIMEOUT=900

usage() {
	sed -n '/^# Usage:/,/-fsstress-cycles N  cycles for -fsstress/p' "$ROOT/$MYNAME" | sed 's/^# \{0,1\}//'
}

die() {
	echo "$MYNAME: $*" >&2
	exit 2
}

# ---------------------------------------------------------------- options

ROUNDS=3
DD_ONLY=0
TWOMOUNTS=0
ONLY=""
OPT_DIR=""
EXTRACTLOOP=0
MIXED=0
MIXED_PROCS=4
MIXED_OPS=2000
DBENCH_T=8
FIO_T=20
BASELINE=""
SCALE=0
SCALE_PARTS=dir,file,open,depth
SCALE_SMALL=0
FSSTRESS_SRC=""
FSSTRESS_CYCLES=5
while [[ $# -gt 0 ]]; do
	case $1 in
	-h | -help | --help)
		usage
		exit 0
		;;
	-rounds) [[ $# -ge 2 ]] || die "-rounds needs a number"; ROUNDS=$2; shift ;;
	-dd) DD_ONLY=1 ;;
	-twomounts) TWOMOUNTS=1 DD_ONLY=1 ;;
	-only) [[ $# -ge 2 ]] || die "-only needs a list"; ONLY=$2; shift ;;
	-dir) [[ $# -ge 2 ]] || die "-dir needs a directory"; OPT_DIR=$2; shift ;;
	-extractloop) [[ $# -ge 2 ]] || die "-extractloop needs a number"; EXTRACTLOOP=$2; shift ;;
	-mixed) MIXED=1 ;;
	-dbench-time) [[ $# -ge 2 ]] || die "-dbench-time needs seconds"; DBENCH_T=$2; shift ;;
	-fio-time) [[ $# -ge 2 ]] || die "-fio-time needs seconds"; FIO_T=$2; shift ;;
	-baseline) [[ $# -ge 2 ]] || die "-baseline needs a directory"; BASELINE=$2; shift ;;
	-scale) SCALE=1 ;;
	-scale-parts) [[ $# -ge 2 ]] || die "-scale-parts needs a list"; SCALE_PARTS=$2; shift ;;
	-scale-small) SCALE_SMALL=1 ;;
	-fsstress) [[ $# -ge 2 ]] || die "-fsstress needs an xfstests directory"; FSSTRESS_SRC=$2; shift ;;
	-fsstress-cycles) [[ $# -ge 2 ]] || die "-fsstress-cycles needs a number"; FSSTRESS_CYCLES=$2; shift ;;
	*)
		usage >&2
		die "invalid argument: $1"
		;;
	esac
	shift
done
for v in ROUNDS EXTRACTLOOP DBENCH_T FIO_T FSSTRESS_CYCLES; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
[[ $ROUNDS -ge 1 ]] || die "-rounds must be at least 1"
[[ $EXTRACTLOOP -eq 0 || $EXTRACTLOOP -ge 2 ]] || die "-extractloop needs at least 2 cycles"
[[ $TWOMOUNTS -eq 0 || $EXTRACTLOOP -eq 0 ]] || die "-twomounts and -extractloop are different runs"
[[ $MIXED -eq 0 || $EXTRACTLOOP -ge 3 ]] || die "-mixed needs -extractloop N with N >= 3 (cycle 2 is the reference)"
[[ $MIXED -eq 0 ]] || command -v python3 >/dev/null || die "-mixed needs python3"
[[ $SCALE -eq 0 || ($EXTRACTLOOP -eq 0 && $TWOMOUNTS -eq 0 && $DD_ONLY -eq 0) ]] || die "-scale is a run of its own (not with -extractloop, -twomounts or -dd)"
[[ $SCALE -eq 0 ]] || command -v python3 >/dev/null || die "-scale needs python3"
if [[ -n $FSSTRESS_SRC ]]; then
	[[ $SCALE -eq 0 && $EXTRACTLOOP -eq 0 && $TWOMOUNTS -eq 0 && $DD_ONLY -eq 0 ]] || die "-fsstress is a run of its own (not with -scale, -extractloop, -twomounts or -dd)"
	[[ -f $FSSTRESS_SRC/ltp/fsstress.c ]] || die "-fsstress $FSSTRESS_SRC: no ltp/fsstress.c there (give an xfstests checkout)"
	FSSTRESS_SRC=$(realpath "$FSSTRESS_SRC")
	[[ $FSSTRESS_CYCLES -ge 1 ]] || die "-fsstress-cycles must be at least 1"
	command -v gcc >/dev/null || die "-fsstress needs gcc"
fi
[[ $SCALE_PARTS =~ ^(dir|file|open|depth)(,(dir|file|open|depth))*$ ]] || die "-scale-parts: a comma-separated list of dir, file, open, depth"
[[ $(id -u) -eq 0 ]] || die "run as root (drop_caches, /proc/PID/clear_refs of the mount daemons)"
[[ $(getconf CLK_TCK) =~ ^[0-9]+$ ]] || die "getconf CLK_TCK does not give the clock tick"

# Candidates of this run, in order.
CANDIDATES=()
NOTES=()
if [[ -n $ONLY ]]; then
	IFS=, read -r -a wanted <<<"$ONLY"
	for w in "${wanted[@]}"; do
		ok=0
		for c in "${ALL_CANDIDATES[@]}"; do [[ $c == "$w" ]] && ok=1; done
		[[ $ok -eq 1 ]] || die "unknown candidate '$w' (known: ${ALL_CANDIDATES[*]})"
		CANDIDATES+=("$w")
	done
elif [[ $EXTRACTLOOP -gt 0 ]]; then
	CANDIDATES=(tscryptfs)
elif [[ $SCALE -eq 1 || -n $FSSTRESS_SRC ]]; then
	CANDIDATES=(gocryptfs tscryptfs)
else
	CANDIDATES=("${ALL_CANDIDATES[@]}")
fi
if [[ -n $BASELINE ]]; then
	[[ $EXTRACTLOOP -eq 0 ]] || die "-baseline is for the side-by-side phases, not -extractloop"
	BASELINE=$(realpath "$BASELINE") || die "-baseline: no such directory"
	[[ -f $BASELINE/dist/src/cli/main.js && -d $BASELINE/node_modules ]] ||
		die "-baseline $BASELINE: no dist/src/cli/main.js or node_modules/ there (npm ci, then npm run build)"
	CANDIDATES+=(tscryptfs-baseline)
fi
# Drop the candidates whose program is missing, with a note.
have_program() {
	case $1 in
	plain) return 0 ;;
	gocryptfs*) command -v gocryptfs >/dev/null ;;
	securefs) command -v securefs >/dev/null ;;
	encfs) command -v encfs >/dev/null ;;
	tscryptfs*) [[ -f $ROOT/dist/src/cli/main.js ]] && command -v node >/dev/null ;;
	esac
}
kept=()
for c in "${CANDIDATES[@]}"; do
	if have_program "$c"; then
		kept+=("$c")
	else
		case $c in
		securefs) NOTES+=("securefs: not installed (apt-get install securefs), skipped") ;;
		encfs) NOTES+=("encfs: not installed (apt-get install encfs), skipped") ;;
		tscryptfs*) NOTES+=("$c: dist/ not built (npm run build), skipped") ;;
		*) NOTES+=("$c: not installed, skipped") ;;
		esac
	fi
done
CANDIDATES=("${kept[@]}")
[[ ${#CANDIDATES[@]} -gt 0 ]] || die "no candidate left to run (${NOTES[*]})"

if [[ $EXTRACTLOOP -gt 0 ]]; then
	[[ ${#CANDIDATES[@]} -eq 1 && ${CANDIDATES[0]} == tscryptfs* ]] ||
		die "-extractloop runs one tscryptfs mount: use no -only or -only tscryptfs[-CIPHER]"
fi
for tool in tar md5sum dd fusermount mountpoint; do
	command -v $tool >/dev/null || die "$tool is missing"
done
if [[ $SCALE -eq 1 || -n $FSSTRESS_SRC ]]; then
	for c in "${CANDIDATES[@]}"; do
		[[ $c != plain ]] || die "-scale and -fsstress measure FUSE daemons: plain has none"
	done
elif [[ $DD_ONLY -eq 0 && $EXTRACTLOOP -eq 0 ]]; then
	command -v dbench >/dev/null || die "dbench is missing: apt-get install dbench"
	command -v fio >/dev/null || die "fio is missing: apt-get install fio"
	DBENCH_LOADFILE=$(dpkg -L dbench 2>/dev/null | grep '/client\.txt$' | head -n 1)
	[[ -n $DBENCH_LOADFILE && -f $DBENCH_LOADFILE ]] || DBENCH_LOADFILE=/usr/share/dbench/client.txt
	[[ -f $DBENCH_LOADFILE ]] || die "dbench's loadfile client.txt not found"
fi

# ---------------------------------------------------------------- directories, cleanup

is_tmpfs() { [[ $(stat -f -c %T "$1" 2>/dev/null) == tmpfs ]]; }

if [[ -n $OPT_DIR ]]; then
	[[ -d $OPT_DIR ]] || die "-dir $OPT_DIR: not a directory"
	WORK=$(mktemp -d "$(realpath "$OPT_DIR")/tscryptfs-bench.XXXXXX") || die "cannot create a directory in $OPT_DIR"
elif is_tmpfs /dev/shm; then
	WORK=$(mktemp -d /dev/shm/tscryptfs-bench.XXXXXX) || die "cannot create a directory in /dev/shm"
else
	die "/dev/shm is not a tmpfs here: give a backing directory with -dir DIR"
fi
# The tarball and checksum list live on a tmpfs, outside the backing
# directory's accounting if that is a disk.
if is_tmpfs /dev/shm; then
	STAGE=$(mktemp -d /dev/shm/tscryptfs-bench-stage.XXXXXX) || die "cannot create a directory in /dev/shm"
else
	STAGE=$WORK/stage
	mkdir "$STAGE"
fi
LOGDIR=$WORK/logs
mkdir -p "$LOGDIR"

# tscryptfs runs from a snapshot of this checkout's build (bin, dist,
# package.json, the native addons, the FUSE binding; the other modules
# linked), taken now: every round measures the same build even if dist/ or
# the binding is rebuilt during the run.
# snapshot FROM TO: that copy of the checkout FROM.
snapshot() {
	mkdir -p "$2/native" "$2/node_modules" &&
		cp -a "$1/bin" "$1/dist" "$1/package.json" "$2/" || die "cannot copy the tscryptfs build of $1 to $2"
	if [[ -d $1/native/build ]]; then
		cp -a "$1/native/build" "$2/native/" || die "cannot copy $1/native/build to $2"
	fi
	# A checkout from before fuse-native was kept as source checks its patch record at mount.
	if [[ -d $1/patches ]]; then
		cp -a "$1/patches" "$2/" || die "cannot copy $1/patches to $2"
	fi
	local m
	for m in "$1"/node_modules/* "$1"/node_modules/.bin; do
		[[ -e $m ]] || continue
		if [[ ${m##*/} == fuse-native ]]; then
			cp -aL "$m" "$2/node_modules/" || die "cannot copy $m to $2"
		else
			ln -s "$m" "$2/node_modules/" || die "cannot link $m into $2"
		fi
	done
}
SNAP=$STAGE/tscryptfs
for c in "${CANDIDATES[@]}"; do
	[[ $c == tscryptfs* && $c != tscryptfs-baseline ]] || continue
	snapshot "$ROOT" "$SNAP"
	break
done
TSCRYPTFS=("$NODE" "$SNAP/bin/tscryptfs")
TSCRYPTFS_BASELINE=()
if [[ -n $BASELINE ]]; then
	snapshot "$BASELINE" "$STAGE/tscryptfs-baseline"
	TSCRYPTFS_BASELINE=("$NODE" "$STAGE/tscryptfs-baseline/bin/tscryptfs")
fi

ACTIVE_MNT=""    # mountpoint currently mounted by us ("" if none)
ACTIVE_PIDS=""   # daemon pids that we started for it
CHILD=""         # the benchmark command running in the background

# bg_run CMD...: runs CMD in the background and waits for it, so that a
# signal to this script is handled at once (bash runs a trap only after the
# foreground command has ended); returns CMD's exit code.
bg_run() {
	"$@" &
	CHILD=$!
	wait "$CHILD"
	local rc=$?
	CHILD=""
	return $rc
}

# The pids of the FUSE daemons that we started for mountpoint $1: they carry
# $TAGVAR=$1 in their environment (inherited from the mount command) and
# hold /dev/fuse open.
find_daemons() {
	local p pids=""
	for p in /proc/[0-9]*; do
		grep -qzxF "$TAGVAR=$1" "$p/environ" 2>/dev/null || continue
		if ls -l "$p/fd" 2>/dev/null | grep -q ' -> /dev/fuse$'; then
			pids+="${p#/proc/} "
		fi
	done
	echo "$pids"
}

# Unmount $ACTIVE_MNT (fusermount -u, then a lazy unmount) and make sure
# the daemons we started for it are gone (TERM, then KILL, by pid).
# $ACTIVE_MNT may hold several mountpoints (-twomounts), space-separated.
unmount_active() {
	local mnt pids=$ACTIVE_PIDS p i still=""
	[[ -n $ACTIVE_MNT ]] || return 0
	for mnt in $ACTIVE_MNT; do
		if grep -qF " $mnt fuse" /proc/mounts; then
			fusermount -u "$mnt" 2>/dev/null || fusermount -uz "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
		fi
	done
	for i in $(seq 50); do
		local alive=""
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive+="$p "; done
		[[ -z $alive ]] && break
		[[ $i -eq 30 ]] && kill -TERM $alive 2>/dev/null
		[[ $i -eq 45 ]] && kill -KILL $alive 2>/dev/null
		sleep 0.2
	done
	for mnt in $ACTIVE_MNT; do
		grep -qF " $mnt fuse" /proc/mounts && still+="$mnt "
	done
	if [[ -n $still ]]; then
		echo "$MYNAME: WARNING: ${still% } still mounted" >&3
		return 1
	fi
	ACTIVE_MNT=""
	ACTIVE_PIDS=""
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	cd / || true
	if [[ -n $CHILD ]]; then
		kill -TERM "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	unmount_active
	if grep -qF " $WORK/" /proc/mounts; then
		echo "$MYNAME: WARNING: something is still mounted under $WORK, not deleting it" >&3
	else
		rm -rf "$WORK"
	fi
	[[ $STAGE == "$WORK"/* ]] || rm -rf "$STAGE"
	exit $rc
}
# fd 3: the script's stderr, for messages from traps (which can run while a
# phase's stderr is redirected to its log).
exec 3>&2
trap cleanup EXIT
trap 'echo "$MYNAME: interrupted" >&3; exit 130' INT TERM

# ---------------------------------------------------------------- helpers

now() { echo "$EPOCHREALTIME"; }
CLK_TCK=$(getconf CLK_TCK)

# cpu_ticks PID: the user + sys CPU time of process PID so far, all its
# threads (living and ended), in clock ticks: fields 14 and 15 (utime,
# stime) of /proc/PID/stat, counted after the ")" that ends field 2 (the
# command name, which may hold spaces and parentheses).
cpu_ticks() {
	local stat f
	{ stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	read -r -a f <<<"${stat##*) }"
	[[ ${f[11]:-} =~ ^[0-9]+$ && ${f[12]:-} =~ ^[0-9]+$ ]] || return 1
	echo $((f[11] + f[12]))
}

# cpu_begin and cpu_end PHASE, around a phase in bench_candidate: set
# cpu[PHASE] to the seconds of CPU that the daemon $pid used in between
# (nothing without a daemon).
cpu_begin() {
	CPU0=""
	[[ -n $pid ]] || return 0
	CPU0=$(cpu_ticks "$pid") || { FAILMSG="the daemon $pid is gone"; return 1; }
}
cpu_end() {
	local t
	[[ -n $pid ]] || return 0
	t=$(cpu_ticks "$pid") || { FAILMSG="the daemon $pid is gone after $1"; return 1; }
	cpu[$1]=$(awk -v t=$((t - CPU0)) -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", t / hz }')
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

FAILMSG=""  # why the last phase failed

# run_timed LOG CMD...: runs CMD (stdout to /dev/null, stderr to LOG),
# sets SECS to the wall time; fails if CMD fails.
run_timed() {
	local log=$1 t0 t1 rc
	shift
	t0=$(now)
	bg_run timeout -k 10 $PHASE_TIMEOUT "$@" >/dev/null 2>"$log" </dev/null
	rc=$?
	t1=$(now)
	SECS=$(elapsed "$t0" "$t1")
	if [[ $rc -ne 0 ]]; then
		local why="exited with $rc"
		[[ $rc -eq 124 ]] && why="timed out after ${PHASE_TIMEOUT}s"
		FAILMSG="'$*' $why: $(tail -n 3 "$log" | tr '\n' ' ')"
		return 1
	fi
}

# dd_rate LOG [BYTES]: MB/s from dd's summary line (bytes / seconds, both
# from dd), in RATE; fails unless dd copied BYTES (default 262144000, the
# WRITE and READ phases').
dd_rate() {
	local line bytes secs want=${2:-262144000}
	line=$(grep ' copied, ' "$1" | tail -n 1)
	bytes=$(sed -n 's/^\([0-9]*\) bytes .*/\1/p' <<<"$line")
	secs=$(sed -n 's/.* copied, \([0-9.e+-]*\) s, .*/\1/p' <<<"$line")
	if [[ $bytes != "$want" || -z $secs ]]; then
		FAILMSG="dd did not copy $want bytes: $line"
		return 1
	fi
	RATE=$(awk -v b="$bytes" -v s="$secs" 'BEGIN { if (s <= 0) exit 1; printf "%.1f", b / s / 1e6 }') || {
		FAILMSG="dd reported $secs s"
		return 1
	}
}

# VmHWM or VmRSS (field $2) of pid $1 in kB.
proc_mem_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# fmt PHASE VALUE: a number as the tables print it (PHASE CPU: CPU seconds).
fmt() {
	case $1 in
	UNTAR | MD5 | LS | RM | CPU) printf '%.2f' "$2" ;;
	FIO | RSS | PEAK | IDLE) printf '%.0f' "$2" ;;
	*) awk -v v="$2" 'BEGIN { if (v >= 100) printf "%.0f", v; else printf "%.1f", v }' ;;
	esac
}

# ---------------------------------------------------------------- mounting

# mount_candidate NAME DIR: sets MNT (and ACTIVE_MNT/ACTIVE_PIDS for FUSE
# candidates). DIR is a fresh empty directory.
mount_candidate() {
	local name=$1 dir=$2 log=$LOGDIR/mount.log flags=()
	local cipher=$dir/cipher
	MNT=$dir/mnt
	mkdir "$cipher" "$MNT" || { FAILMSG="mkdir failed"; return 1; }
	case $name in
	plain)
		MNT=$cipher
		return 0
		;;
	tscryptfs*)
		local prog=("${TSCRYPTFS[@]}")
		case $name in
		tscryptfs-xchacha) flags=(-xchacha) ;;
		tscryptfs-aessiv) flags=(-aessiv) ;;
		tscryptfs-aegis) flags=(-aegis) ;;
		tscryptfs-baseline) prog=("${TSCRYPTFS_BASELINE[@]}") ;;
		esac
		"${prog[@]}" -init -q -scryptn 10 -extpass "echo $PASS" "${flags[@]}" "$cipher" >"$log" 2>&1 </dev/null ||
			{ FAILMSG="tscryptfs -init ${flags[*]} failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		env "$TAGVAR=$MNT" "${prog[@]}" -q -nosyslog -extpass "echo $PASS" "$cipher" "$MNT" >>"$log" 2>&1 </dev/null ||
			{ FAILMSG="tscryptfs mount failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		;;
	gocryptfs*)
		[[ $name == gocryptfs-xchacha ]] && flags=(-xchacha)
		gocryptfs -init -q -scryptn 10 -extpass "echo $PASS" "${flags[@]}" "$cipher" >"$log" 2>&1 </dev/null ||
			{ FAILMSG="gocryptfs -init ${flags[*]} failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		env "$TAGVAR=$MNT" gocryptfs -q -nosyslog -extpass "echo $PASS" "$cipher" "$MNT" >>"$log" 2>&1 </dev/null ||
			{ FAILMSG="gocryptfs mount failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		;;
	securefs)
		securefs create --format 4 -r 1 --pass "$PASS" "$cipher" >"$log" 2>&1 </dev/null ||
			{ FAILMSG="securefs create failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		env "$TAGVAR=$MNT" securefs mount -b --pass "$PASS" "$cipher" "$MNT" >>"$log" 2>&1 </dev/null ||
			{ FAILMSG="securefs mount failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		;;
	encfs)
		env "$TAGVAR=$MNT" encfs --standard --extpass="echo $PASS" "$cipher" "$MNT" >"$log" 2>&1 </dev/null ||
			{ FAILMSG="encfs failed: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
		;;
	esac
	ACTIVE_MNT=$MNT
	local i
	for i in $(seq 50); do
		grep -qF " $MNT fuse" /proc/mounts && break
		sleep 0.1
	done
	if ! mountpoint -q "$MNT"; then
		FAILMSG="$MNT is not a mountpoint after mounting"
		return 1
	fi
	ACTIVE_PIDS=$(find_daemons "$MNT")
	if [[ $(wc -w <<<"$ACTIVE_PIDS") -ne 1 ]]; then
		FAILMSG="cannot tell the daemon of $MNT (found: '$ACTIVE_PIDS')"
		return 1
	fi
	ACTIVE_PIDS=${ACTIVE_PIDS% }
}

# ---------------------------------------------------------------- the tree

if [[ -n $FSSTRESS_SRC ]]; then
	TREE_DESC="none (-fsstress: xfstests's fsstress)"
elif [[ $SCALE -eq 1 ]]; then
	cp "$ROOT/scripts/scale-load.py" "$ROOT/scripts/scale-plot.py" "$STAGE/" || die "cannot copy the -scale scripts to $STAGE"
	TREE_DESC="none (-scale: scripts/scale-load.py)"
elif [[ $MIXED -eq 1 ]]; then
	# The load program, copied like the build: a change during the run does not count.
	cp "$ROOT/scripts/mixed-load.py" "$STAGE/" || die "cannot copy scripts/mixed-load.py to $STAGE"
	MIXED_LOAD=$STAGE/mixed-load.py
	TREE_DESC="none (-mixed: scripts/mixed-load.py)"
else
	echo "Preparing the benchmark tree (scripts/make-bench-tree.bash)..."
	TREE_TAR=$(bash "$ROOT/scripts/make-bench-tree.bash" | tail -n 1) || die "scripts/make-bench-tree.bash failed"
	TREE_MD5=${TREE_TAR%.tar}.md5sums
	TREE_INFO=${TREE_TAR%.tar}.info
	[[ -s $TREE_TAR && -s $TREE_MD5 ]] || die "benchmark tree missing after make-bench-tree.bash"
	cp "$TREE_TAR" "$TREE_MD5" "$STAGE/" || die "cannot copy the tree to $STAGE"
	TAR=$STAGE/$(basename "$TREE_TAR")
	MD5=$STAGE/$(basename "$TREE_MD5")
	TREE_TOP=$(basename "$TREE_TAR" .tar)
	TREE_DESC="$(sed -n 's/^selection: //p' "$TREE_INFO") ($(sed -n 's/^source: .*, //p' "$TREE_INFO"); $(sed -n 's/^contents: //p' "$TREE_INFO"))"
fi

# ---------------------------------------------------------------- the machine

CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
MEM_GIB=$(awk '/^MemTotal:/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
BACKING_FS=$(stat -f -c %T "$WORK")
[[ $BACKING_FS == ext2/ext3 ]] && BACKING_FS=$(findmnt -n -o FSTYPE --target "$WORK" 2>/dev/null || echo "$BACKING_FS")
MACHINE="Machine: ${CPU:-unknown CPU}, $(nproc) cores, ${MEM_GIB} GiB RAM, Linux $(uname -r), backing fs $BACKING_FS ($WORK)"
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Uncommitted changes in what the build is made of (not in scripts or docs).
if [[ $COMMIT != unknown ]] && ! git -C "$ROOT" diff --quiet HEAD -- src native package.json 2>/dev/null; then
	COMMIT+="+uncommitted-changes"
fi
VERSIONS="tscryptfs $("${TSCRYPTFS[@]}" -version 2>/dev/null | head -n 1 | awk -F'; ' '{sub(/^tscryptfs /, "", $1); print $1 " (commit '"$COMMIT"', " $2 ")"}')"
if [[ -n $BASELINE ]]; then
	VERSIONS+=", tscryptfs-baseline commit $(git -C "$BASELINE" rev-parse --short HEAD 2>/dev/null || echo unknown) ($BASELINE)"
fi
command -v gocryptfs >/dev/null && VERSIONS+=", gocryptfs $(gocryptfs -version 2>/dev/null | head -n 1 | awk '{print $2}' | tr -d ';')"
if command -v securefs >/dev/null; then
	# The Debian build says "securefs GIT-NOTFOUND": then the package's version.
	v=$(securefs version 2>/dev/null | awk 'NR == 1 {print $2}')
	[[ -z $v || $v == GIT-NOTFOUND ]] && v=$(dpkg-query -W -f '${Version}' securefs 2>/dev/null)
	VERSIONS+=", securefs ${v:-unknown}"
fi
command -v encfs >/dev/null && VERSIONS+=", encfs $(encfs --version 2>&1 | awk '{print $NF}')"
if [[ $DD_ONLY -eq 0 && $EXTRACTLOOP -eq 0 && $SCALE -eq 0 && -z $FSSTRESS_SRC ]]; then
	VERSIONS+=", $(dbench --help 2>&1 | head -n 1 | awk '{print "dbench " $3}'), $(fio --version)"
fi
echo "$MACHINE"
echo "Versions: $VERSIONS"
echo "Tree: $TREE_DESC"
echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${NOTES[@]}"; do echo "Note: $n"; done

# ---------------------------------------------------------------- extractloop

if [[ $EXTRACTLOOP -gt 0 ]]; then
	cand=${CANDIDATES[0]}
	echo
	if [[ $MIXED -eq 1 ]]; then
		echo "extractloop -mixed: $EXTRACTLOOP cycles of MIXED ($MIXED_PROCS processes x $MIXED_OPS operations of scripts/mixed-load.py) + RM on one $cand mount; VmRSS of the daemon after each cycle"
		load=MIXED
		ref_cycle=2
	else
		echo "extractloop: $EXTRACTLOOP cycles of UNTAR + RM on one $cand mount; VmRSS of the daemon after each cycle"
		load=UNTAR
		ref_cycle=1
	fi
	mkdir "$WORK/$cand" || exit 1
	mount_candidate "$cand" "$WORK/$cand" || { echo "FAILED: $cand mount: $FAILMSG" >&2; exit 1; }
	pid=$ACTIVE_PIDS
	echo "daemon pid $pid, VmRSS after mounting: $(( $(proc_mem_kb "$pid" VmRSS) / 1000 )) MB"
	ref=0
	last=0
	for ((i = 1; i <= EXTRACTLOOP; i++)); do
		cd "$MNT" || exit 1
		if [[ $MIXED -eq 1 ]]; then
			top=mixed
			run_timed "$LOGDIR/mixed.log" python3 "$MIXED_LOAD" "$MNT/$top" $((1000 * i)) "$MIXED_OPS" "$MIXED_PROCS" || { echo "FAILED: cycle $i MIXED: $FAILMSG" >&2; exit 1; }
		else
			top=$TREE_TOP
			run_timed "$LOGDIR/untar.log" tar xf "$TAR" || { echo "FAILED: cycle $i UNTAR: $FAILMSG" >&2; exit 1; }
		fi
		t_load=$SECS
		run_timed "$LOGDIR/rm.log" rm -rf "$top" || { echo "FAILED: cycle $i RM: $FAILMSG" >&2; exit 1; }
		t_rm=$SECS
		[[ ! -e $top ]] || { echo "FAILED: cycle $i: $top still exists after rm -rf" >&2; exit 1; }
		cd / || exit 1
		kill -0 "$pid" 2>/dev/null || { echo "FAILED: the daemon $pid died" >&2; exit 1; }
		busy=$(proc_mem_kb "$pid" VmRSS)
		hwm=$(proc_mem_kb "$pid" VmHWM)
		# What the daemon keeps: it gives memory back after 5 s without a
		# request (src/cli/idle-memory.ts), and the kernel's last requests can
		# come a little after rm; the least of readings 6, 7.5 and 9 s later.
		rss=$busy
		for wait in 6 1.5 1.5; do
			sleep "$wait"
			r=$(proc_mem_kb "$pid" VmRSS)
			((r < rss)) && rss=$r
		done
		[[ $i -eq $ref_cycle ]] && ref=$rss
		last=$rss
		printf 'cycle %3d: %s %7.2f s  RM %6.2f s  VmRSS %6.1f MB (right after RM %6.1f)  VmHWM %6.1f MB\n' \
			"$i" "$load" "$t_load" "$t_rm" "$(awk -v k="$rss" 'BEGIN {print k / 1000}')" "$(awk -v k="$busy" 'BEGIN {print k / 1000}')" "$(awk -v k="$hwm" 'BEGIN {print k / 1000}')"
	done
	what="cycle $ref_cycle's"
	[[ $ref_cycle -eq 1 ]] && what="the first cycle's"
	pct=$(awk -v a="$ref" -v b="$last" 'BEGIN { printf "%.1f", 100 * b / a }')
	if awk -v a="$ref" -v b="$last" 'BEGIN { exit !(b > 1.10 * a) }'; then
		echo "extractloop FAILED: VmRSS after the last cycle is $pct% of $what (limit 110%)"
		exit 1
	fi
	echo "extractloop PASSED: VmRSS after the last cycle is $pct% of $what (limit 110%)"
	exit 0
fi

# ---------------------------------------------------------------- scale

[[ $SCALE -eq 0 ]] || source "$ROOT/scripts/bench-scale.bash"

# ---------------------------------------------------------------- fsstress

[[ -z $FSSTRESS_SRC ]] || source "$ROOT/scripts/bench-fsstress.bash"

# ---------------------------------------------------------------- the benchmark

if [[ $TWOMOUNTS -eq 1 ]]; then
	PHASES=(WRITE WRITE2 WRITE2B)
elif [[ $DD_ONLY -eq 1 ]]; then
	PHASES=(WRITE READ)
else
	PHASES=(WRITE READ UNTAR MD5 LS RM DBENCH4 DBENCH16 FIO RSS PEAK IDLE)
fi
declare -A UNIT=([WRITE]=MB/s [WRITE2]=MB/s [WRITE2B]=MB/s [READ]=MB/s [UNTAR]=s [MD5]=s [LS]=s [RM]=s [DBENCH4]=MB/s [DBENCH16]=MB/s [FIO]=IOPS [RSS]=MB [PEAK]=MB [IDLE]=MB)
# The seconds IDLE waits after the last phase: longer than the quiet spell
# after which tscryptfs gives memory back (src/cli/idle-memory.ts).
IDLE_WAIT=8
declare -A RES=()     # "cand,phase" -> values of the rounds, space-separated
declare -A ROUNDV=()  # "cand,round,phase" -> value
declare -A CPURES=()     # "cand,phase" -> daemon CPU seconds of the rounds, space-separated
# shellcheck disable=SC2034 # read by rounds_table, through a nameref
declare -A CPUROUNDV=()  # "cand,round,phase" -> daemon CPU seconds
declare -A FAILED=()  # cand -> why

# Expected duration, from the 2-core reference machine (AMD EPYC VM, tmpfs,
# tscryptfs 0.1.0): seconds per candidate and round; the tree phases
# (UNTAR+MD5+LS+RM) dominate for tscryptfs.
estimate_candidate() {
	local c=$1 tree=0
	case $c in
	plain) tree=2 ;;
	gocryptfs*) tree=19 ;;
	securefs) tree=14 ;;
	encfs) tree=18 ;;
	tscryptfs*) tree=108 ;;
	esac
	if [[ $DD_ONLY -eq 1 ]]; then
		echo 5
	else
		echo $((4 + tree + 2 * (DBENCH_T * 6 / 5 + 1) + FIO_T + 1 + IDLE_WAIT))
	fi
}
est=0
for c in "${CANDIDATES[@]}"; do est=$((est + $(estimate_candidate "$c"))); done
est=$((est * ROUNDS))
echo
echo "Candidates: ${CANDIDATES[*]}"
echo "Phases: ${PHASES[*]}; $ROUNDS round(s)$([[ $DD_ONLY -eq 0 ]] && echo "; dbench -t $DBENCH_T, fio --runtime=$FIO_T")"
echo "Expected duration: about $(((est + 59) / 60)) min (estimated from the 2-core reference machine)"

# bench_candidate NAME ROUND: one candidate, one round, all phases.
bench_candidate() {
	local cand=$1 round=$2 dir=$WORK/$1.r$2 pid="" v hwm_before=""
	declare -A got=() cpu=()
	mkdir "$dir" || { FAILMSG="mkdir $dir"; return 1; }
	mount_candidate "$cand" "$dir" || { FAILMSG="mount: $FAILMSG"; return 1; }
	pid=$ACTIVE_PIDS
	cd "$MNT" || { FAILMSG="cd $MNT"; return 1; }

	cpu_begin && run_timed "$LOGDIR/write.log" dd if=/dev/zero of=zero bs=131072 count=2000 conv=fsync &&
		cpu_end WRITE && dd_rate "$LOGDIR/write.log" || { FAILMSG="WRITE: $FAILMSG"; return 1; }
	got[WRITE]=$RATE
	if [[ $TWOMOUNTS -eq 1 ]]; then
		# The first mount keeps its file; a second mount of the same kind
		# beside it gets the same dd, twice.
		local first_mnt=$ACTIVE_MNT first_pids=$ACTIVE_PIDS
		mkdir "$dir/second" || { FAILMSG="mkdir $dir/second"; return 1; }
		ACTIVE_MNT=""
		mount_candidate "$cand" "$dir/second" || {
			ACTIVE_MNT="$first_mnt $ACTIVE_MNT" ACTIVE_PIDS="$first_pids $ACTIVE_PIDS"
			FAILMSG="second mount: $FAILMSG"
			return 1
		}
		pid=$ACTIVE_PIDS
		ACTIVE_MNT="$first_mnt $ACTIVE_MNT" ACTIVE_PIDS="$first_pids $ACTIVE_PIDS"
		cd "$MNT" || { FAILMSG="cd $MNT"; return 1; }
		cpu_begin && run_timed "$LOGDIR/write.log" dd if=/dev/zero of=zero bs=131072 count=2000 conv=fsync &&
			cpu_end WRITE2 && dd_rate "$LOGDIR/write.log" || { FAILMSG="WRITE2: $FAILMSG"; return 1; }
		got[WRITE2]=$RATE
		cpu_begin && run_timed "$LOGDIR/write.log" dd if=/dev/zero of=zero2 bs=131072 count=2000 conv=fsync &&
			cpu_end WRITE2B && dd_rate "$LOGDIR/write.log" || { FAILMSG="WRITE2B: $FAILMSG"; return 1; }
		got[WRITE2B]=$RATE
		cd "$WORK" || { FAILMSG="cd $WORK"; return 1; }
	else
		drop_caches || { FAILMSG="cannot drop the page cache"; return 1; }
		cpu_begin && run_timed "$LOGDIR/read.log" dd if=zero of=/dev/null bs=131072 count=2000 &&
			cpu_end READ && dd_rate "$LOGDIR/read.log" || { FAILMSG="READ: $FAILMSG"; return 1; }
		got[READ]=$RATE
		rm zero || { FAILMSG="rm zero failed"; return 1; }
	fi

	if [[ $DD_ONLY -eq 0 ]]; then
		if [[ -n $pid ]]; then
			# Reset the daemon's VmHWM to its current RSS: VmHWM after UNTAR
			# is then the peak during UNTAR. The peak before it counts for PEAK.
			hwm_before=$(proc_mem_kb "$pid" VmHWM)
			echo 5 >"/proc/$pid/clear_refs" || { FAILMSG="cannot reset VmHWM of $pid"; return 1; }
		fi
		cpu_begin && run_timed "$LOGDIR/untar.log" tar xf "$TAR" && cpu_end UNTAR || { FAILMSG="UNTAR: $FAILMSG"; return 1; }
		got[UNTAR]=$SECS
		if [[ -n $pid ]]; then
			v=$(proc_mem_kb "$pid" VmHWM)
			[[ -n $v ]] || { FAILMSG="the daemon $pid is gone after UNTAR"; return 1; }
			got[RSS]=$(awk -v k="$v" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
		fi
		cpu_begin && run_timed "$LOGDIR/md5.log" md5sum --quiet -c "$MD5" && cpu_end MD5 || { FAILMSG="MD5: $FAILMSG"; return 1; }
		got[MD5]=$SECS
		cpu_begin && run_timed "$LOGDIR/ls.log" ls -lR "$TREE_TOP" && cpu_end LS || { FAILMSG="LS: $FAILMSG"; return 1; }
		got[LS]=$SECS
		cpu_begin && run_timed "$LOGDIR/rm.log" rm -rf "$TREE_TOP" && cpu_end RM || { FAILMSG="RM: $FAILMSG"; return 1; }
		got[RM]=$SECS
		[[ ! -e $TREE_TOP ]] || { FAILMSG="RM: $TREE_TOP still exists"; return 1; }

		local n
		for n in 4 16; do
			mkdir "dbench$n" || { FAILMSG="mkdir dbench$n"; return 1; }
			cpu_begin || return 1
			bg_run timeout -k 10 $PHASE_TIMEOUT dbench "$n" -t "$DBENCH_T" -c "$DBENCH_LOADFILE" -D "$MNT/dbench$n" \
				>"$LOGDIR/dbench.log" 2>&1 </dev/null || {
				FAILMSG="DBENCH$n: dbench exited with $?: $(grep -i -m 3 -E 'error|fail' "$LOGDIR/dbench.log" | tr '\n' ' ')"
				return 1
			}
			cpu_end "DBENCH$n" || return 1
			v=$(awk '/^Throughput [0-9.]+ MB\/sec/ {print $2}' "$LOGDIR/dbench.log" | tail -n 1)
			[[ -n $v ]] || { FAILMSG="DBENCH$n: no Throughput line: $(tail -n 3 "$LOGDIR/dbench.log" | tr '\n' ' ')"; return 1; }
			got[DBENCH$n]=$v
			rm -rf "dbench$n" || { FAILMSG="rm -rf dbench$n failed"; return 1; }
		done

		mkdir fio || { FAILMSG="mkdir fio"; return 1; }
		cpu_begin || return 1
		bg_run timeout -k 10 $PHASE_TIMEOUT fio --name=randrw --directory="$MNT/fio" --rw=randrw --bs=4k --size=64m \
			--runtime="$FIO_T" --time_based --ioengine=psync --numjobs=1 \
			--output-format=json --output="$LOGDIR/fio.json" >"$LOGDIR/fio.log" 2>&1 </dev/null || {
			FAILMSG="FIO: fio exited with $?: $(tail -n 3 "$LOGDIR/fio.log" | tr '\n' ' ')"
			return 1
		}
		cpu_end FIO || return 1
		v=$(node -e '
			const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).jobs[0];
			if (j.error !== 0 || !(j.read.iops > 0) || !(j.write.iops > 0)) { console.error("fio job error " + j.error); process.exit(1); }
			console.log((j.read.iops + j.write.iops).toFixed(0));' "$LOGDIR/fio.json" 2>>"$LOGDIR/fio.log") ||
			{ FAILMSG="FIO: cannot read fio's result: $(tail -n 3 "$LOGDIR/fio.log" | tr '\n' ' ')"; return 1; }
		got[FIO]=$v
		rm -rf fio || { FAILMSG="rm -rf fio failed"; return 1; }
		if [[ -n $pid ]]; then
			v=$(proc_mem_kb "$pid" VmHWM)
			[[ -n $v && -n $hwm_before ]] || { FAILMSG="no VmHWM of the daemon $pid"; return 1; }
			got[PEAK]=$(awk -v a="$v" -v b="$hwm_before" 'BEGIN { printf "%.1f", (a > b ? a : b) * 1024 / 1e6 }')
			sleep "$IDLE_WAIT"
			v=$(proc_mem_kb "$pid" VmRSS)
			[[ -n $v ]] || { FAILMSG="the daemon $pid is gone after the phases"; return 1; }
			got[IDLE]=$(awk -v k="$v" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
		fi
	fi

	if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
		FAILMSG="the daemon $pid died during the round"
		return 1
	fi
	cd / || return 1
	unmount_active || { FAILMSG="unmount failed"; return 1; }
	rm -rf "$dir" || { FAILMSG="rm -rf $dir failed"; return 1; }
	# Only a complete round counts.
	local p c cpusum=0
	for p in "${PHASES[@]}"; do
		[[ -n ${got[$p]:-} ]] || continue
		RES["$cand,$p"]+="${got[$p]} "
		ROUNDV["$cand,$round,$p"]=${got[$p]}
		c=${cpu[$p]:--}
		if [[ $c != - ]]; then
			CPURES["$cand,$p"]+="$c "
			CPUROUNDV["$cand,$round,$p"]=$c
			cpusum=$(awk -v a="$cpusum" -v b="$c" 'BEGIN { print a + b }')
		fi
		printf '%s=%s ' "$p" "$(fmt "$p" "${got[$p]}")"
		printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$cand" "$p" "${got[$p]}" "$c" >>"$TSV"
	done
	[[ -n $pid ]] && printf 'daemon CPU %s s ' "$(fmt CPU "$cpusum")"
	echo "($(awk -v a="$t_c" -v b="$(now)" 'BEGIN {printf "%.0f", b - a}') s)"
}

mkdir -p "$CACHE/results"
TSV=$CACHE/results/benchmark-$(date -u +%Y%m%dT%H%M%SZ).tsv
{
	echo "# $MACHINE"
	echo "# Versions: $VERSIONS"
	echo "# Tree: $TREE_DESC"
	printf 'round\tcandidate\tphase\tvalue\tcpu_s\n'
} >"$TSV"

T_START=$(now)
for ((round = 1; round <= ROUNDS; round++)); do
	echo
	echo "=== Round $round of $ROUNDS ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg))"
	nc=${#CANDIDATES[@]}
	for ((k = 0; k < nc; k++)); do
		idx=$(((k + round - 1) % nc))
		((round % 2 == 0)) && idx=$((nc - 1 - idx))
		cand=${CANDIDATES[$idx]}
		if [[ -n ${FAILED[$cand]:-} ]]; then
			echo "$(printf '%-21s' "$cand") skipped (failed earlier)"
			continue
		fi
		printf '%-21s ' "$cand"
		FAILMSG=""
		t_c=$(now)
		if ! bench_candidate "$cand" "$round"; then
			FAILED[$cand]="round $round: $FAILMSG"
			echo
			echo "FAILED: $cand, round $round: $FAILMSG" >&2
			cd / || true
			unmount_active
			if ! grep -qF " $WORK/" /proc/mounts; then rm -rf "${WORK:?}/$cand.r$round"; fi
		fi
	done
	el=$(elapsed "$T_START" "$(now)")
	echo "--- after round $round: $(awk -v s="$el" -v r="$round" 'BEGIN {printf "%.1f min", s / r / 60}') per round on average; about $(awk -v s="$el" -v r="$round" -v n="$ROUNDS" 'BEGIN {printf "%.0f", s / r * (n - r) / 60}') min to go"
done
TOTAL_MIN=$(awk -v s="$(elapsed "$T_START" "$(now)")" 'BEGIN {printf "%.1f", s / 60}')

# ---------------------------------------------------------------- report

median() {
	tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR == 0) exit 1; if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
largest() {
	tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | tail -n 1
}
# The phases with a CPU column: all but those of memory.
CPU_PHASES=()
for p in "${PHASES[@]}"; do [[ $p == RSS || $p == PEAK || $p == IDLE ]] || CPU_PHASES+=("$p"); done
declare -A MED=() CPUMED=()
for c in "${CANDIDATES[@]}"; do
	for p in "${PHASES[@]}"; do
		[[ -z ${FAILED[$c]:-} && -n ${RES["$c,$p"]:-} ]] || continue
		MED["$c,$p"]=$(median "${RES["$c,$p"]}")
		[[ -n ${CPURES["$c,$p"]:-} ]] && CPUMED["$c,$p"]=$(median "${CPURES["$c,$p"]}")
	done
done

# header TITLE KIND PHASE...: the two header lines of a table; KIND "" for
# the phases' own units, CPU for CPU seconds, SPREAD for max/min ratios.
header() {
	local title=$1 kind=$2 p
	shift 2
	printf '%-21s' "$title"
	for p in "$@"; do printf ' %9s' "$p"; done
	echo
	printf '%-21s' ""
	for p in "$@"; do
		case $kind in
		CPU) printf ' %9s' s ;;
		SPREAD) printf ' %9s' max/min ;;
		*) printf ' %9s' "${UNIT[$p]}" ;;
		esac
	done
	echo
}

# has_cpu CAND: whether CAND has a daemon (all but plain).
has_cpu() { [[ $1 != plain ]]; }

# table VAR KIND CELL PHASE...: the header, then a line per candidate (with
# a daemon, for KIND CPU) holding `CELL VAR KIND CAND PHASE` for each phase.
# VAR names the associative array the cells read ("cand,phase" -> value).
table() {
	local var=$1 kind=$2 cell=$3 c p
	shift 3
	header candidate "$kind" "$@"
	for c in "${CANDIDATES[@]}"; do
		[[ $kind == CPU ]] && ! has_cpu "$c" && continue
		printf '%-21s' "$c"
		for p in "$@"; do printf ' %9s' "$("$cell" "$var" "$kind" "$c" "$p")"; done
		echo
	done
}

# The cells: a median as the tables print it; a median divided by $REF's;
# max / min over the rounds ("-" with fewer than two).
# shellcheck disable=SC2317 # called by table, as its CELL
median_cell() {
	local -n _m=$1
	if [[ -n ${FAILED[$3]:-} ]]; then
		echo FAILED
	elif [[ -n ${_m["$3,$4"]:-} ]]; then
		fmt "${2:-$4}" "${_m["$3,$4"]}"
	else
		echo -
	fi
}
# shellcheck disable=SC2317 # called by table, as its CELL
ratio_cell() {
	local -n _m=$1
	local a=${_m["$3,$4"]:-} b=${_m["$REF,$4"]:-}
	if [[ -n $a && -n $b ]] && awk -v b="$b" 'BEGIN { exit !(b > 0) }'; then
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2fx", a / b }'
	else
		echo -
	fi
}
# shellcheck disable=SC2317 # called by table, as its CELL
spread_cell() {
	local -n _r=$1
	tr ' ' '\n' <<<"${_r["$3,$4"]:-}" | grep -v '^$' |
		awk 'NR == 1 { lo = hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		     END { if (NR >= 2 && lo > 0) printf "%.2fx", hi / lo; else print "-" }'
}

# paired_ratios ROUNDVAR CAND PHASE: CAND / tscryptfs-baseline for each
# round that has both, one per line: the same round, minutes apart, so the
# machine's drift over the run cancels out.
paired_ratios() {
	local -n _p=$1
	local r a b
	for ((r = 1; r <= ROUNDS; r++)); do
		a=${_p["$2,$r,$3"]:-} b=${_p["tscryptfs-baseline,$r,$3"]:-}
		[[ -n $a && -n $b ]] || continue
		awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.6f\n", a / b }'
	done
}

# paired_table ROUNDVAR KIND PHASE...: for each tscryptfs candidate, the
# median of paired_ratios and, below, the lowest and highest.
paired_table() {
	local rv=$1 kind=$2 c p list
	shift 2
	header candidate "$kind" "$@"
	for c in "${CANDIDATES[@]}"; do
		[[ $c == tscryptfs* && $c != tscryptfs-baseline ]] || continue
		[[ $kind == CPU ]] && ! has_cpu "$c" && continue
		local med="" rng=""
		for p in "$@"; do
			list=$(paired_ratios "$rv" "$c" "$p" | tr '\n' ' ')
			if [[ -n ${list// /} ]]; then
				med+=$(printf ' %9s' "$(median "$list" | awk '{ printf "%.2fx", $1 }')")
				rng+=$(printf ' %9s' "$(tr ' ' '\n' <<<"$list" | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }')")
			else
				med+=$(printf ' %9s' -) rng+=$(printf ' %9s' -)
			fi
		done
		printf '%-21s%s\n%-21s%s\n' "$c" "$med" "  lowest-highest" "$rng"
	done
}

# rounds_table ROUNDVAR KIND PHASE...: every complete round's numbers.
rounds_table() {
	local -n rv=$1
	local kind=$2 c r p v
	shift 2
	header "candidate, round" "$kind" "$@"
	for c in "${CANDIDATES[@]}"; do
		[[ $kind == CPU ]] && ! has_cpu "$c" && continue
		for ((r = 1; r <= ROUNDS; r++)); do
			[[ -n ${ROUNDV["$c,$r,$1"]:-} ]] || continue
			printf '%-21s' "$c r$r"
			for p in "$@"; do
				v=${rv["$c,$r,$p"]:-}
				if [[ -n $v ]]; then printf ' %9s' "$(fmt "${kind:-$p}" "$v")"; else printf ' %9s' -; fi
			done
			echo
		done
	done
}

any_cpu=0
for c in "${CANDIDATES[@]}"; do has_cpu "$c" && any_cpu=1; done

echo
echo "======================================================================"
echo "$MACHINE"
echo "Versions: $VERSIONS"
[[ $DD_ONLY -eq 0 ]] && echo "Tree: $TREE_DESC; dbench -t $DBENCH_T (loadfile $DBENCH_LOADFILE); fio randrw 4k psync 64m, ${FIO_T}s"
echo "Rounds: $ROUNDS (interleaved; took $TOTAL_MIN min); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Median of $ROUNDS round(s):"
table MED "" median_cell "${PHASES[@]}"
if [[ $ROUNDS -ge 2 ]]; then
	echo
	echo "Spread: max / min over the rounds (1.00x: the same every round):"
	table RES SPREAD spread_cell "${PHASES[@]}"
fi

REF=gocryptfs
echo
if [[ -n ${MED["$REF,${PHASES[0]}"]:-} ]]; then
	echo "Ratio to $REF (candidate / $REF; MB/s and IOPS: more is better, s: less is better):"
	table MED "" ratio_cell "${PHASES[@]}"
else
	echo "No ratios: $REF has no results in this run."
fi

if [[ -n $BASELINE ]]; then
	echo
	echo "Paired with tscryptfs-baseline (candidate / baseline within each round; median over the rounds, then lowest-highest):"
	paired_table ROUNDV "" "${PHASES[@]}"
	if [[ $any_cpu -eq 1 ]]; then
		echo
		echo "Daemon CPU seconds, paired with tscryptfs-baseline the same way:"
		paired_table CPUROUNDV CPU "${CPU_PHASES[@]}"
	fi
fi

if [[ $any_cpu -eq 1 ]]; then
	echo
	echo "Daemon CPU, user + sys seconds of the mount's FUSE daemon during each phase (median of $ROUNDS round(s)):"
	table CPUMED CPU median_cell "${CPU_PHASES[@]}"
	if [[ -n ${CPUMED["$REF,${CPU_PHASES[0]}"]:-} ]]; then
		echo
		echo "Daemon CPU, ratio to $REF (candidate / $REF; less is better):"
		table CPUMED CPU ratio_cell "${CPU_PHASES[@]}"
	fi
fi

echo
echo "Every round:"
rounds_table ROUNDV "" "${PHASES[@]}"
if [[ $any_cpu -eq 1 ]]; then
	echo
	echo "Daemon CPU seconds, every round:"
	rounds_table CPUROUNDV CPU "${CPU_PHASES[@]}"
fi
if [[ $DD_ONLY -eq 0 ]]; then
	echo
	echo "Peak RSS of the mount daemon during UNTAR (VmHWM, MB = 10^6 B; median and max over rounds):"
	for c in "${CANDIDATES[@]}"; do
		[[ -n ${RES["$c,RSS"]:-} ]] || continue
		printf '  %-21s median %6.1f MB, max %6.1f MB\n' "$c" "$(median "${RES["$c,RSS"]}")" "$(largest "${RES["$c,RSS"]}")"
	done
	echo "Peak RSS over all phases (PEAK) and VmRSS ${IDLE_WAIT} s after the last one (IDLE), median and max over rounds:"
	for c in "${CANDIDATES[@]}"; do
		[[ -n ${RES["$c,PEAK"]:-} && -n ${RES["$c,IDLE"]:-} ]] || continue
		printf '  %-21s PEAK median %6.1f MB, max %6.1f MB; IDLE median %6.1f MB, max %6.1f MB\n' "$c" \
			"$(median "${RES["$c,PEAK"]}")" "$(largest "${RES["$c,PEAK"]}")" \
			"$(median "${RES["$c,IDLE"]}")" "$(largest "${RES["$c,IDLE"]}")"
	done
fi
echo
echo "Raw results: $TSV"
for n in "${NOTES[@]}"; do echo "Note: $n"; done
if [[ ${#FAILED[@]} -gt 0 ]]; then
	echo
	for c in "${!FAILED[@]}"; do echo "FAILED: $c: ${FAILED[$c]}"; done
	exit 1
fi
exit 0
