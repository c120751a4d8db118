# Shared helpers for tests/bench-*.sh (POSIX sh). Set BENCH_NAME, then source this file.
# It lives in tests/bench/ so that tests/bench.sh, which runs every tests/bench-*.sh,
# does not run it as a benchmark.
#
#   bench_need_root / bench_need_loop / bench_need_ref    exit 0 with "SKIP: reason" when missing
#   bench_need_applet BIN ARGS...     SKIP when BIN does not know the command (ARGS --help)
#   bench_big_image                   IMG = the standard large image (built once, cached)
#   bench_warm FILE...                read files into the page cache, again before each run
#                                     (BENCH_COLD=1: dropped from it before each run instead)
#   bench_vs LABEL TAG_A CMD_A TAG_B CMD_B
#       runs CMD_A and CMD_B (strings, evaluated at run time) BENCH_RUNS times, alternating,
#       each under GNU time and timeout, and prints the medians and ratios:
#       "LABEL: A 1.38 s / 17 MiB, B 3.56 s / 306 MiB, speed x2.58, memory x0.06"
#       speed = time B / time A (above 1: A is faster), memory = peak RSS A / peak RSS B.
#       The order alternates (A B, B A, A B, ...) so that a drift of the machine's speed
#       during the runs favours neither command.
#       Before each run BENCH_PREP TAG is called, after it BENCH_POST TAG (shell functions,
#       default none, untimed); when BENCH_POST writes a byte count to $W/TAG.bytes, the
#       line shows throughput as well. Returns 2 (after a SKIP line) when A is not built
#       yet (placeholder or unknown command), 1 when a run failed.
#   bench_goal LABEL TAG_A TAG_B time|speed GOAL
#       after bench_vs: the issue's goal against the medians, "time" A's time at most
#       GOAL times B's, "speed" A's throughput at least GOAL times B's (met or MISSED).
#
# $W is a scratch directory under BENCH_DIR; at exit everything mounted below it is
# unmounted, loop devices backed by files below it are detached, and it is removed
# (with the directories bench_tmpfs_dir made). MKFS_IMG ($W/mkfs.img, or on a tmpfs
# after bench_img_on_tmpfs) is the target of the mkfs commands.
: "${BOX:?BOX must name the btrfsbox binary}"
: "${BENCH_NAME:?set BENCH_NAME before sourcing tests/bench/lib.sh}"
REF_BTRFS=${REF_BTRFS:-/usr/bin/btrfs}
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
GNU_TIME=${GNU_TIME:-/usr/bin/time}
BENCH_DIR=${BENCH_DIR:-/var/tmp/btrfsbox-bench}
BENCH_RUNS=${BENCH_RUNS:-3}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-1800}
# make-big.sh: ../shared/bench beside the checkout (as for the conformance suite)
BENCH_SHARED=${BENCH_SHARED:-$(cd "$(dirname "$0")/.." && pwd)/../shared/bench}
[ -d "$BENCH_SHARED" ] || BENCH_SHARED=/work/shared/bench
BENCH_TESTS=$(cd "$(dirname "$0")" && pwd)       # tests/ (image_sum.py's data_regions)
BENCH_PREP=:
BENCH_POST=:
BENCH_STDOUT=/dev/null
W=
BENCH_TMP_DIRS=

bench_skip() { echo "$BENCH_NAME: SKIP: $*"; exit 0; }

bench_cleanup() {
	for d in $BENCH_TMP_DIRS; do rm -rf "$d"; done
	[ -n "$W" ] && [ -d "$W" ] || return 0
	awk -v w="$W" 'index($2, w "/") == 1 { print $2 }' /proc/self/mounts | sort -r |
	while read -r m; do
		timeout 120 umount "$m" 2>/dev/null || timeout 30 umount -l "$m" 2>/dev/null
	done
	losetup -nO NAME,BACK-FILE 2>/dev/null | while read -r dev file; do
		case $file in "$W"/*) timeout 30 losetup -d "$dev" 2>/dev/null ;; esac
	done
	rm -rf "$W"
}

bench_need_root() { [ "$(id -u)" = 0 ] || bench_skip "needs root"; }
bench_need_loop() {
	bench_need_root
	grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null
	grep -qw btrfs /proc/filesystems || bench_skip "kernel has no btrfs"
	[ -e /dev/loop-control ] || bench_skip "no loop devices"
}
# btrfs-progs 6.19 built from source, where goals are set against it: REF619 names its
# build directory (default /work/ref619/src). bench_ref619 TOOL prints TOOL (btrfs or
# mkfs.btrfs) from there, or the Debian one when it is not built here.
REF619=${REF619:-/work/ref619/src}
bench_ref619() {
	if [ -x "$REF619/$1" ]; then echo "$REF619/$1"
	elif [ "$1" = btrfs ]; then echo "$REF_BTRFS"
	else echo "$REF_MKFS"; fi
}
bench_need_ref() {
	[ -x "$REF_BTRFS" ] && [ -x "$REF_MKFS" ] || bench_skip "reference btrfs-progs not installed"
}
bench_need_applet() {
	out=$(timeout 10 "$@" --help 2>&1)
	rc=$?
	case $out in
	*"not implemented"* | *"unknown command"* | *"unknown applet"*) rc=1 ;;
	esac
	[ $rc = 0 ] || bench_skip "'$(echo "$@" | sed "s|^$BOX |btrfsbox |")' is not built yet"
}

# The image records which make-big.sh/populate.py built it; other scripts mean a rebuild.
bench_big_image() {
	IMG=$BENCH_DIR/big.img
	[ -f "$BENCH_SHARED/make-big.sh" ] || bench_skip "no $BENCH_SHARED/make-big.sh"
	command -v python3 > /dev/null || bench_skip "needs python3 to build the image"
	want=$(cat "$BENCH_SHARED/make-big.sh" "$BENCH_SHARED/populate.py" | md5sum | cut -d' ' -f1)
	[ "$(cat "$IMG.stamp" 2>/dev/null)" = "$want" ] && [ -f "$IMG" ] && return 0
	echo "$BENCH_NAME: building $IMG (a few minutes, once)"
	(
		flock 9
		[ "$(cat "$IMG.stamp" 2>/dev/null)" = "$want" ] && [ -f "$IMG" ] && exit 0
		rm -f "$IMG.stamp"
		timeout 3600 "$BENCH_SHARED/make-big.sh" "$IMG.tmp" > "$BENCH_DIR/make-big.log" 2>&1 &&
			mv "$IMG.tmp" "$IMG" && echo "$want" > "$IMG.stamp"
	) 9> "$BENCH_DIR/.lock" || { echo "$BENCH_NAME: FAIL: cannot build $IMG (see $BENCH_DIR/make-big.log)"; exit 1; }
}

# Waits (at most 20 s) until the guest's free page reporting to the hypervisor
# (virtio-balloon) has caught up with what the last run freed (a restore frees a GiB of
# tmpfs pages): a run that overlaps the reporting is slower by a varying amount, up to
# 40% on the 2-CPU test machines. No-op without page reporting. (Shell functions
# share variables: these names are its own.)
bench_settle() {
	settle_f=/sys/module/page_reporting/parameters/reported_kib
	[ -r "$settle_f" ] || return 0
	settle_n=0 settle_prev= settle_cur=$(cat "$settle_f")
	while [ "$settle_cur" != "$settle_prev" ] && [ $settle_n -lt 20 ]; do
		settle_prev=$settle_cur
		sleep 1
		settle_cur=$(cat "$settle_f") settle_n=$((settle_n + 1))
	done
}

# bench_warm FILE...: reads the files' data (holes skipped) into the page cache and
# remembers them: bench_run reads them again before every run (untimed), because
# btrfs-progs drops an image's cached pages when it opens and closes it
# (posix_fadvise DONTNEED), so without this a run after the reference's reads the disk.
# With BENCH_COLD=1 bench_run drops their cached pages instead (cold-cache runs).
BENCH_WARM_FILES=
bench_warm() {
	for f in "$@"; do
		case " $BENCH_WARM_FILES " in *" $f "*) ;; *) BENCH_WARM_FILES="$BENCH_WARM_FILES $f" ;; esac
	done
	bench_rewarm
}
bench_rewarm() {
	[ -n "$BENCH_WARM_FILES" ] || return 0
	timeout 600 python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
from image_sum import data_regions
for name in sys.argv[2:]:
    for _ in data_regions(name):
        pass' "$BENCH_TESTS" $BENCH_WARM_FILES
}
bench_drop() { for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none; done; }

# bench_run TAG CMD: one timed run; appends "seconds KiB exit" to $W/TAG.runs.
bench_run() {
	tag=$1
	$BENCH_PREP "$tag"
	if [ -n "${BENCH_COLD:-}" ]; then bench_drop $BENCH_WARM_FILES; else bench_rewarm; fi
	bench_settle
	eval "set -- $2"
	"$GNU_TIME" -f '%e %M' -o "$W/time" timeout "$BENCH_TIMEOUT" "$@" > "$BENCH_STDOUT" 2> "$W/$tag.err"
	rc=$?
	echo "$(tail -1 "$W/time") $rc" >> "$W/$tag.runs"
	$BENCH_POST "$tag"
	return $rc
}

# bench_tmpfs_dir NAME: TMPD = a new directory on a tmpfs when /dev/shm has BENCH_OUT_GB
# (default 8) GiB free, else under $W; removed at exit. Both commands of a comparison
# write to the same filesystem either way, and a tmpfs keeps the disk and its writeback
# (and deleting 200k files from it) out of the measurement. BENCH_OUT_DIR=dir overrides.
bench_tmpfs_dir() {
	base=${BENCH_OUT_DIR:-}
	[ -z "$base" ] && [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge \
		$((${BENCH_OUT_GB:-8} * 1048576)) ] 2>/dev/null && base=/dev/shm
	TMPD=$(mktemp -d "${base:-$W}/btrfsbox-bench-$1.XXXXXX") || exit 1
	BENCH_TMP_DIRS="$BENCH_TMP_DIRS $TMPD"
}

# Hooks for commands writing into $OUT (restore): a fresh empty directory before each
# run (made by bench_out_dir, see bench_tmpfs_dir); afterwards the bytes of regular
# files go to $W/TAG.bytes, the entry count to $W/TAG.entries, and it is removed.
bench_out_dir() { bench_tmpfs_dir out; OUT=$TMPD/out; }
bench_out_prep() { rm -rf "$OUT"; mkdir "$OUT"; }
bench_out_post() {
	find "$OUT" -type f -printf '%s\n' | awk '{ n += $1 } END { printf "%d\n", n }' > "$W/$1.bytes"
	find "$OUT" | wc -l > "$W/$1.entries"
	rm -rf "$OUT"
}
# Warns when two runs wrote different amounts (compares $W/TAG.bytes and $W/TAG.entries).
bench_same_output() {
	[ "$(cat "$W/$2.bytes" "$W/$2.entries")" = "$(cat "$W/$3.bytes" "$W/$3.entries")" ] ||
		echo "$1: WARNING: outputs differ: $2 $(cat "$W/$2.bytes") bytes in $(cat "$W/$2.entries") entries," \
			"$3 $(cat "$W/$3.bytes") bytes in $(cat "$W/$3.entries") entries"
}
# Hook for commands writing an image: a fresh sparse $MKFS_IMG of $size before each run.
bench_img_prep() { rm -f "$MKFS_IMG"; truncate -s "$size" "$MKFS_IMG"; }
bench_img_on_tmpfs() { bench_tmpfs_dir img; MKFS_IMG=$TMPD/mkfs.img; }

bench_median() { # FILE FIELD
	sort -n -k"$2","$2" "$1" | awk -v f="$2" '{ v[NR] = $f } END { print v[int((NR + 1) / 2)] }'
}

# "TAG 1.38 s / 17 MiB" or "TAG 1.38 s = 120 MB/s / 17 MiB" (byte count in $W/TAG.bytes)
bench_figures() {
	awk -v tag="$1" -v t="$2" -v k="$3" -v b="$(cat "$W/$1.bytes" 2>/dev/null)" 'BEGIN {
		printf "%s %.2f s", tag, t
		if (b != "" && t > 0) printf " = %.0f MB/s", b / t / 1e6
		printf " / %.0f MiB", k / 1024 }'
}

bench_vs() {
	label=$1 tag_a=$2 cmd_a=$3 tag_b=$4 cmd_b=$5
	rm -f "$W/$tag_a.runs" "$W/$tag_b.runs" "$W/$tag_a.bytes" "$W/$tag_b.bytes"
	if ! bench_run "$tag_a" "$cmd_a" && grep -qE 'not implemented|unknown (command|applet)' "$W/$tag_a.err"; then
		echo "$label: SKIP: $tag_a: $(grep -m1 -E 'not implemented|unknown (command|applet)' "$W/$tag_a.err")"
		return 2
	fi
	bench_run "$tag_b" "$cmd_b"
	i=1
	while [ $i -lt "$BENCH_RUNS" ]; do
		if [ $((i % 2)) = 1 ]; then
			bench_run "$tag_b" "$cmd_b"
			bench_run "$tag_a" "$cmd_a"
		else
			bench_run "$tag_a" "$cmd_a"
			bench_run "$tag_b" "$cmd_b"
		fi
		i=$((i + 1))
	done
	ta=$(bench_median "$W/$tag_a.runs" 1) ka=$(bench_median "$W/$tag_a.runs" 2)
	tb=$(bench_median "$W/$tag_b.runs" 1) kb=$(bench_median "$W/$tag_b.runs" 2)
	echo "$label: $(bench_figures "$tag_a" "$ta" "$ka"), $(bench_figures "$tag_b" "$tb" "$kb"), $(awk \
		-v ta="$ta" -v tb="$tb" -v ka="$ka" -v kb="$kb" 'BEGIN {
		printf "speed x%.2f, memory x%.2f", (ta > 0 ? tb / ta : 0), (kb > 0 ? ka / kb : 0) }')"
	status=0
	for tag in "$tag_a" "$tag_b"; do
		rcs=$(awk '$3 != 0 { printf " %s", $3 }' "$W/$tag.runs")
		[ -z "$rcs" ] && continue
		echo "$label: WARNING: $tag exited non-zero (exit$rcs): $(tail -1 "$W/$tag.err")"
		status=1
	done
	return $status
}

bench_goal() {
	awk -v l="$1" -v kind="$4" -v goal="$5" -v ta="$(bench_median "$W/$2.runs" 1)" \
		-v tb="$(bench_median "$W/$3.runs" 1)" 'BEGIN {
		r = kind == "time" ? (tb > 0 ? ta / tb : 0) : (ta > 0 ? tb / ta : 0)
		ok = kind == "time" ? r <= goal : r >= goal
		printf "%s: %s x%.2f (goal: %s x%.2f) %s\n", l, kind == "time" ? "time" : "throughput",
			r, kind == "time" ? "at most" : "at least", goal, ok ? "met" : "MISSED" }'
}

bench_need_root
[ -x "$GNU_TIME" ] || bench_skip "needs GNU time ($GNU_TIME; package 'time')"
mkdir -p "$BENCH_DIR" || bench_skip "cannot create $BENCH_DIR"
W=$(mktemp -d "$BENCH_DIR/$BENCH_NAME.XXXXXX") || bench_skip "cannot create a scratch dir in $BENCH_DIR"
MKFS_IMG=$W/mkfs.img
trap 'bench_cleanup' EXIT
trap 'exit 1' INT TERM
