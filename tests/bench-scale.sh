#!/bin/sh
# btrfs check at scale: filesystems with BENCH_SCALE_SIZES files (default 1M and 3M;
# add 10000000 for 10M: its tree takes ~10 minutes and 10M inodes of the disk under
# BENCH_DIR to make, once), each made by our mkfs --rootdir from a generated tree of
# empty files (1000 a directory) and kept in BENCH_DIR. Prints per size the time and
# peak memory of our check and of the reference's (Debian's, and 6.19's when built),
# the reference only where it should fit in half the available memory (about 1 KiB a
# file): our memory must stay flat below 128 MiB, our time grow linearly.
BENCH_NAME=scale
. "$(dirname "$0")/bench/lib.sh"
bench_need_applet "$BOX" btrfs check
bench_need_applet "$BOX" mkfs.btrfs
command -v python3 > /dev/null || bench_skip "needs python3 to make the trees"
SIZES=${BENCH_SCALE_SIZES:-1000000 3000000}

# grow_tree DIR N: DIR holds files d*/f* up to N (made where missing)
grow_tree() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
root, n, per = sys.argv[1], int(sys.argv[2]), 1000
for d in range((n + per - 1) // per):
    p = os.path.join(root, "d%05d" % d)
    os.makedirs(p, exist_ok=True)
    for f in range(min(per, n - d * per)):
        q = os.path.join(p, "f%04d" % f)
        if not os.path.exists(q):
            os.close(os.open(q, os.O_CREAT | os.O_WRONLY, 0o644))
EOF
}

# one TAG CMD...: "TAG s KiB" of one run, under GNU time
one() {
	tag=$1
	shift
	bench_settle
	"$GNU_TIME" -f '%e %M' -o "$W/time" timeout "$BENCH_TIMEOUT" "$@" > /dev/null 2> "$W/err" ||
		echo "scale: WARNING: $tag exited non-zero: $(tail -1 "$W/err")" >&2
	tail -1 "$W/time"
}

refs=
[ -x "$REF_BTRFS" ] && refs="6.2=$REF_BTRFS"
[ "$(bench_ref619 btrfs)" != "$REF_BTRFS" ] && refs="$refs 6.19=$(bench_ref619 btrfs)"
avail=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)
for n in $SIZES; do
	img=$BENCH_DIR/scale-$n.img
	if [ ! -f "$img" ]; then
		echo "scale: making $img (once)"
		grow_tree "$W/tree" "$n" || exit 1
		rm -f "$img.tmp"
		truncate -s $((n / 500 + 1024))M "$img.tmp"
		"$BOX" mkfs.btrfs -q --rootdir "$W/tree" "$img.tmp" > "$W/err" 2>&1 &&
			mv "$img.tmp" "$img" || { echo "scale: FAIL: mkfs: $(tail -1 "$W/err")"; exit 1; }
	fi
	bench_warm "$img"
	set -- $(one box "$BOX" btrfs check "$img")
	line="$n files: btrfsbox $1 s / $(($2 / 1024)) MiB ($(awk -v t="$1" -v n="$n" \
		'BEGIN { printf "%.2f", t * 1e6 / n }') s per 1M files)"
	[ "$2" -lt $((128 * 1024)) ] || line="$line MEMORY ABOVE 128 MiB"
	if [ "$n" -lt $((avail / 2)) ]; then
		for r in $refs; do
			set -- $(one "${r%%=*}" "${r#*=}" check "$img")
			line="$line, ${r%%=*} $1 s / $(($2 / 1024)) MiB"
		done
	else
		line="$line, reference skipped (about $((n / 1024)) MiB needed)"
	fi
	echo "scale: $line"
done
exit 0
