# benchmark.bash -scale: how each candidate's costs grow with the size of
# the work. Sourced by benchmark.bash after its setup (candidates, WORK,
# STAGE, LOGDIR, mount_candidate, unmount_active, drop_caches, run_timed,
# dd_rate); ends the script. The parts and sizes are in benchmark.bash's usage.

SCALE_LOAD=$STAGE/scale-load.py
if [[ $SCALE_SMALL -eq 1 ]]; then
	DIR_SIZES=(100 1000 10000)
	DIR_MIN_ENTRIES=10000 # as long as it takes a burst to settle (scale_dir)
	FILE_MIB=(64 512)
	OPEN_COUNTS=(1 16 256)
	TIMED_S=3
else
	DIR_SIZES=(1000 10000 100000)
	DIR_MIN_ENTRIES=20000
	FILE_MIB=(1024 8192)
	OPEN_COUNTS=(1 16 256 4096)
	TIMED_S=10
fi
DEPTHS=(1 16 64)
STAMP=$(date +%Y%m%d-%H%M%S)
mkdir -p "$CACHE"
SCALE_TSV=$CACHE/scale-$STAMP.tsv
SCALE_SVG=$CACHE/scale-$STAMP.svg
printf 'candidate\tmetric\tsize\tvalue\n' >"$SCALE_TSV"

declare -A SV=()  # "metric|candidate|size" -> value
METRICS=()        # in the order first measured

# record CAND METRIC SIZE VALUE
record() {
	local m
	for m in "${METRICS[@]}"; do [[ $m == "$2" ]] && break; done
	[[ ${m:-} == "$2" ]] || METRICS+=("$2")
	SV["$2|$1|$3"]=$4
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$SCALE_TSV"
}

# load ARGS...: runs scale-load.py, sets J to its JSON line; fails with its message.
load() {
	local log=$LOGDIR/scale-load.log
	bg_run timeout -k 10 $PHASE_TIMEOUT python3 "$SCALE_LOAD" "$@" >"$log.out" 2>"$log" </dev/null || {
		FAILMSG="scale-load.py $*: $(tail -n 2 "$log" | tr '\n' ' ')"
		return 1
	}
	J=$(tail -n 1 "$log.out")
}
# field NAME: a number from J.
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$J" "$1"; }
# calc EXPR: awk arithmetic, printed with up to 4 significant digits.
calc() { awk "BEGIN { printf \"%.4g\", $1 }"; }

# fresh CAND PART: a new mount of CAND for one point, warmed up by 500
# creates and deletes in a directory of its own (so that the first point
# does not carry the start of a JIT); sets MNT and pid.
fresh() {
	local dir=$WORK/$1.$2
	rm -rf "$dir"
	mkdir "$dir" || { FAILMSG="mkdir $dir"; return 1; }
	mount_candidate "$1" "$dir" || return 1
	pid=$ACTIVE_PIDS
	mkdir "$MNT/warm-up" && load create 500 "$MNT/warm-up" && load unlink 500 "$MNT/warm-up" && rmdir "$MNT/warm-up"
}
done_mount() {
	local dir=${MNT%/mnt}
	cd / || return 1
	unmount_active || { FAILMSG="cannot unmount $MNT"; return 1; }
	rm -rf "$dir"
}

# settle: drops the caches, then waits. Evicting the FUSE inodes of up to
# 100k files keeps the kernel busy for a while after drop_caches returns,
# and requests made meanwhile wake the daemon's threads on other CPUs
# than usual (up to 300 ms at 20k files); both would be measured.
settle() {
	drop_caches
	sleep 0.5
}

# cold_stat_median PATH...: the median of single stats of the PATHs, each after dropping
# the caches (the kernel's dentries included): milliseconds in MS.
cold_stat_median() {
	local vals=() p
	for p in "$@"; do
		settle
		load stat "$p" || return 1
		vals+=("$(field seconds)")
	done
	MS=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.4g", v[int((NR + 1) / 2)] * 1000 }')
}

# Each size is measured over at least DIR_MIN_ENTRIES entries, in as many
# directories of that size as it takes, worked through one after the
# other. A single pass over 1k entries lasts 30-60 ms. As a burst starts,
# the scheduler wakes the daemon's threads on the caller's CPU, where a
# request costs less than half of what it costs on the other CPU, and
# moves them there only once its load averages (half-life 32 ms) catch
# up; so a single short pass reads cheaper, for gocryptfs as for us
# (Documentation/performance.md, "How costs grow"). Stat is the median
# of nine names of the first directory.
scale_dir() {
	local c=$1 n k reps names=() dirs=()
	for n in "${DIR_SIZES[@]}"; do
		reps=$(((DIR_MIN_ENTRIES + n - 1) / n))
		fresh "$c" dir$n || return 1
		dirs=() names=()
		for ((k = 0; k < reps; k++)); do dirs+=("$MNT/d$k"); done
		for k in 0 1 2 3 4 5 6 7 8; do names+=("$MNT/d0/f$((k * (n - 1) / 8))"); done
		mkdir "${dirs[@]}" && settle && load create "$n" "${dirs[@]}" || return 1
		record "$c" "DIR: create (us per entry)" "$n" "$(calc "$(field seconds) * 1e6 / ($n * $reps)")"
		settle
		run_timed "$LOGDIR/scale-ls.log" ls -l "${dirs[@]}" || return 1
		record "$c" "DIR: ls -l (us per entry)" "$n" "$(calc "$SECS * 1e6 / ($n * $reps)")"
		cold_stat_median "${names[@]}" || return 1
		record "$c" "DIR: stat one name (ms)" "$n" "$MS"
		settle
		load unlink "$n" "${dirs[@]}" || return 1
		record "$c" "DIR: delete (us per entry)" "$n" "$(calc "$(field seconds) * 1e6 / ($n * $reps)")"
		done_mount || return 1
	done
}

# randread_median FILE: the median rate of three runs of random reads of
# FILE, each after dropping the caches and a third of TIMED_S long (single
# runs scatter by 10-15 % on a VM): reads per second in RATE.
randread_median() {
	local vals=() k
	for k in 1 2 3; do
		drop_caches
		load randread "$1" "$(calc "$TIMED_S / 3")" || return 1
		vals+=("$(field per_second)")
	done
	RATE=$(printf '%s\n' "${vals[@]}" | sort -g | awk 'NR == 2 { printf "%.4g", $1 }')
}

scale_file() {
	local c=$1 mib
	for mib in "${FILE_MIB[@]}"; do
		local size=$((mib << 20))
		fresh "$c" file$mib && drop_caches || return 1
		run_timed "$LOGDIR/scale-dd.log" dd if=/dev/zero of="$MNT/big" bs=1M count="$mib" conv=fsync && dd_rate "$LOGDIR/scale-dd.log" "$size" || return 1
		record "$c" "FILE: write (MB/s)" "$size" "$RATE"
		drop_caches
		run_timed "$LOGDIR/scale-dd.log" dd if="$MNT/big" of=/dev/null bs=1M && dd_rate "$LOGDIR/scale-dd.log" "$size" || return 1
		record "$c" "FILE: read (MB/s)" "$size" "$RATE"
		randread_median "$MNT/big" || return 1
		record "$c" "FILE: random 4K reads (per s)" "$size" "$RATE"
		done_mount || return 1
	done
}

scale_open() {
	local c=$1 k
	for k in "${OPEN_COUNTS[@]}"; do
		fresh "$c" open$k && mkdir "$MNT/d" && drop_caches && load openfiles "$MNT/d" "$k" "$TIMED_S" "$pid" || return 1
		record "$c" "OPEN: requests (per s)" "$k" "$(calc "$(field per_second)")"
		record "$c" "OPEN: daemon VmRSS (MB)" "$k" "$(calc "$(field rss_kb) / 1000")"
		done_mount || return 1
	done
}

scale_depth() {
	local c=$1 d leaf
	fresh "$c" depth || return 1
	for d in "${DEPTHS[@]}"; do
		mkdir "$MNT/t$d" && load deep "$MNT/t$d" "$d" || return 1
		leaf=$(field path)
		cold_stat_median "$leaf" "$leaf" "$leaf" "$leaf" "$leaf" || return 1
		record "$c" "DEPTH: stat deepest file (ms)" "$d" "$MS"
	done
	done_mount
}

IFS=, read -r -a parts <<<"$SCALE_PARTS"
echo
echo "Scale: parts ${parts[*]}, candidates ${CANDIDATES[*]}; sizes: entries ${DIR_SIZES[*]}, files ${FILE_MIB[*]} MiB, open ${OPEN_COUNTS[*]}, depth ${DEPTHS[*]}"
scale_failed=0
for part in "${parts[@]}"; do
	for c in "${CANDIDATES[@]}"; do
		t0=$(now)
		if "scale_$part" "$c"; then
			echo "  $part, $c: $(elapsed "$t0" "$(now)") s"
		else
			echo "FAILED: -scale $part, $c: $FAILMSG" >&2
			scale_failed=1
			cd / && unmount_active
		fi
	done
done

# The tables: one row per metric and size, one column per candidate.
echo
printf '%-32s %8s' "metric" "size"
for c in "${CANDIDATES[@]}"; do printf ' %18s' "$c"; done
echo
for m in "${METRICS[@]}"; do
	sizes=$(for k in "${!SV[@]}"; do [[ $k == "$m|"* ]] && echo "${k##*|}"; done | sort -n -u)
	for s in $sizes; do
		printf '%-32s %8s' "$m" "$s"
		for c in "${CANDIDATES[@]}"; do printf ' %18s' "${SV["$m|$c|$s"]:--}"; done
		echo
	done
done

# Growth from the smallest to the largest size, as a cost (a rate inverted):
# each candidate's, then beside gocryptfs's.
echo
# Beside each ratio, the cost the largest size adds to the smallest's,
# in the unit of the work: a ratio alone reads higher for whoever starts
# lower.
echo "Growth of the cost per unit of work, smallest to largest size (1.00 = flat; rates inverted; VmRSS: MB added), and the cost added:"
for m in "${METRICS[@]}"; do
	sizes=($(for k in "${!SV[@]}"; do [[ $k == "$m|"* ]] && echo "${k##*|}"; done | sort -n -u))
	first=${sizes[0]} last=${sizes[-1]}
	line=$(printf '  %-32s %s..%s:' "$m" "$first" "$last")
	added="" unit=""
	declare -A growth=()
	for c in "${CANDIDATES[@]}"; do
		a=${SV["$m|$c|$first"]:-} b=${SV["$m|$c|$last"]:-}
		[[ -n $a && -n $b ]] || continue
		case $m in
		*VmRSS*) g=$(calc "$b - $a") d="" ;;
		*"(MB/s)") g=$(calc "$a / $b") d=$(calc "1000 / $b - 1000 / $a") unit="ms per MB" ;;
		*"(per s)") g=$(calc "$a / $b") d=$(calc "1e6 / $b - 1e6 / $a") unit="us each" ;;
		*) g=$(calc "$b / $a") d=$(calc "$b - $a") unit=${m##*(} unit=${unit%)} ;;
		esac
		growth[$c]=$g
		line+=$(printf ' %s %s' "$c" "$g")
		[[ -z $d ]] || added+=$(printf ' %s %+g' "$c" "$d")
	done
	[[ -z $added ]] || line+="; added:$added $unit"
	ref=${growth[gocryptfs]:-}
	if [[ -n $ref ]]; then
		for c in "${!growth[@]}"; do
			[[ $c == gocryptfs ]] && continue
			if awk -v a="${growth[$c]}" -v r="$ref" 'BEGIN { exit !(a > r * 1.1 && a - r > 0.05) }'; then
				line+="  [$c grows faster than gocryptfs]"
			fi
		done
	fi
	echo "$line"
	unset growth
done

python3 "$STAGE/scale-plot.py" "$SCALE_TSV" "$SCALE_SVG" "benchmark.bash -scale, $(date +%Y-%m-%d), ${CPU:-unknown CPU}, $(nproc) cores, backing fs $BACKING_FS" ||
	echo "scale-plot.py failed" >&2
echo
echo "Results: $SCALE_TSV"
echo "Curves:  $SCALE_SVG"
exit $scale_failed
