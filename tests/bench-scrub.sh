#!/bin/sh
# btrfs scrub of the standard large image (issue 19): our offline scrub of the unmounted
# image against the kernel's scrub of it mounted read-only through a loop device (mount
# and unmount untimed), both read-only (-r: the cached image stays as it is). Warm
# cache (the image is read again before each of our runs), median of BENCH_RUNS; throughput is bytes scrubbed (data and tree blocks, every
# copy, from the -R counters) per second of wall time.
BENCH_NAME=scrub
. "$(dirname "$0")/bench/lib.sh"
bench_need_loop
bench_need_ref
# after an unmount, until the loop device is gone (its release drops cached pages)
loop_gone() { n=0; while [ -n "$(losetup -j "$IMG")" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done; }
bench_need_applet "$BOX" btrfs scrub start
bench_big_image
bench_warm "$IMG"
MNT=$W/mnt
mkdir -p "$MNT" "$W/state"
export BTRFS_SCRUB_STATE_DIR=$W/state

# A loop mount may switch the image to direct I/O, which drops its cached pages: each
# run of ours starts warm again (untimed).
scrub_prep() {
	BENCH_STDOUT=$W/$1.out
	[ "$1" = ref ] || bench_warm "$IMG"
	[ "$1" = box ] || timeout 120 mount -o loop,ro "$IMG" "$MNT" || { echo "scrub: FAIL: cannot mount $IMG"; exit 1; }
}
scrub_post() {
	awk '$1 ~ /^(data|tree)_bytes_scrubbed:/ { n += $2 } END { print n + 0 }' "$W/$1.out" > "$W/$1.bytes"
	[ "$1" = box ] || { timeout 120 umount "$MNT" && loop_gone; } || { echo "scrub: FAIL: cannot unmount $MNT"; exit 1; }
}
BENCH_PREP=scrub_prep BENCH_POST=scrub_post
bench_vs "scrub" box '"$BOX" btrfs scrub start -B -r -R "$IMG"' ref '"$REF_BTRFS" scrub start -B -r -R "$MNT"'
[ $? = 2 ] && exit 0
awk -v ta="$(bench_median "$W/box.runs" 1)" -v tb="$(bench_median "$W/ref.runs" 1)" 'BEGIN {
	printf "scrub: throughput box/kernel x%.2f (goal: at least x1.00)\n", (ta > 0 ? tb / ta : 0) }'
[ "$(cat "$W/box.bytes")" = "$(cat "$W/ref.bytes")" ] ||
	echo "scrub: WARNING: box scrubbed $(cat "$W/box.bytes") bytes, the kernel $(cat "$W/ref.bytes")"
exit 0
