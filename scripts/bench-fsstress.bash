# benchmark.bash -fsstress: the FUSE daemons' memory under fsstress's
# default mix. Sourced by benchmark.bash after its setup (candidates, WORK,
# STAGE, LOGDIR, mount_candidate, unmount_active, bg_run, proc_mem_kb);
# ends the script. Every candidate is mounted at once; the cycles take
# turns between them, so that all see the same machine, each running
# `fsstress -d MNT/work -n 5000 -p 4` and removing the tree afterwards.
# fsstress comes from the xfstests checkout given (ltp/fsstress.c) and is
# built in STAGE; it is not a dependency.

# xfstests's configure would write config.h; these are what Debian 12 has.
cat >"$STAGE/config.h" <<'EOF'
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
FSSTRESS=$STAGE/fsstress
gcc -O2 -w -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$STAGE" -I"$FSSTRESS_SRC/src" -I"$FSSTRESS_SRC/include" \
	"$FSSTRESS_SRC/ltp/fsstress.c" -o "$FSSTRESS" -lm >"$LOGDIR/fsstress-build.log" 2>&1 ||
	die "cannot build fsstress from $FSSTRESS_SRC: $(tail -n 3 "$LOGDIR/fsstress-build.log" | tr '\n' ' ') (apt-get install xfslibs-dev)"

mb() { awk -v k="$1" 'BEGIN { printf " %16.1f", k / 1000 }'; }

echo
echo "fsstress: $FSSTRESS_CYCLES cycles of fsstress -n 5000 -p 4 (xfstests $(git -C "$FSSTRESS_SRC" rev-parse --short HEAD 2>/dev/null || echo "from $FSSTRESS_SRC")) on each mount, taking turns; the daemon's VmRSS after each cycle, its VmHWM, and its VmRSS 8 s after the last"
declare -A FS_PID=() FS_MNT=()
all_mnt="" all_pids=""
for cand in "${CANDIDATES[@]}"; do
	mkdir "$WORK/$cand" || exit 1
	mount_candidate "$cand" "$WORK/$cand" || { echo "FAILED: $cand mount: $FAILMSG" >&2; exit 1; }
	FS_PID[$cand]=$ACTIVE_PIDS
	FS_MNT[$cand]=$MNT
	all_mnt+="$ACTIVE_MNT " all_pids+="$ACTIVE_PIDS "
	# unmount_active, also on the way out, takes every mount so far.
	ACTIVE_MNT=$all_mnt ACTIVE_PIDS=$all_pids
done

printf '%-10s' cycle
for cand in "${CANDIDATES[@]}"; do printf ' %16s' "$cand"; done
echo "   (VmRSS, MB)"
for ((i = 1; i <= FSSTRESS_CYCLES; i++)); do
	printf '%-10s' "$i"
	for cand in "${CANDIDATES[@]}"; do
		# fsstress's mix includes calls a filesystem may refuse; its exit code is not the measure.
		bg_run "$FSSTRESS" -d "${FS_MNT[$cand]}/work" -n 5000 -p 4 >>"$LOGDIR/fsstress.log" 2>&1
		rm -rf "${FS_MNT[$cand]}/work" || { echo "FAILED: cycle $i: cannot remove $cand's tree" >&2; exit 1; }
		kill -0 "${FS_PID[$cand]}" 2>/dev/null || { echo "FAILED: the $cand daemon ${FS_PID[$cand]} died" >&2; exit 1; }
		mb "$(proc_mem_kb "${FS_PID[$cand]}" VmRSS)"
	done
	echo
done
printf '%-10s' VmHWM
for cand in "${CANDIDATES[@]}"; do mb "$(proc_mem_kb "${FS_PID[$cand]}" VmHWM)"; done
echo
sleep 8
printf '%-10s' 'idle 8 s'
for cand in "${CANDIDATES[@]}"; do mb "$(proc_mem_kb "${FS_PID[$cand]}" VmRSS)"; done
echo
exit 0
