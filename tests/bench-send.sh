#!/bin/sh
# btrfs send of snap-ro of the standard large image (issue 19): our offline send of the
# unmounted image (--device) against the kernel's send of it mounted read-only through a
# loop device (mount and unmount untimed), both to /dev/null. Warm cache, median of
# BENCH_RUNS; throughput is stream bytes (measured once per command) per second.
BENCH_NAME=send
. "$(dirname "$0")/bench/lib.sh"
bench_need_loop
bench_need_ref
# after an unmount, until the loop device is gone (its release drops cached pages)
loop_gone() { n=0; while [ -n "$(losetup -j "$IMG")" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done; }
bench_need_applet "$BOX" btrfs send
bench_big_image
bench_warm "$IMG"
MNT=$W/mnt
mkdir -p "$MNT"
mount_ro() { timeout 120 mount -o loop,ro "$IMG" "$MNT" || { echo "send: FAIL: cannot mount $IMG"; exit 1; }; }

# stream sizes (and a check that ours is received like the kernel's is left to the tests)
"$BOX" btrfs send -q --device "$IMG" /snap-ro | wc -c > "$W/box.size" || { echo "send: FAIL: offline send"; exit 1; }
mount_ro
"$REF_BTRFS" send -q "$MNT/snap-ro" | wc -c > "$W/ref.size"
timeout 120 umount "$MNT" && loop_gone

# a loop mount may drop the image's cached pages (direct I/O): ours starts warm again
send_prep() { if [ "$1" = box ]; then bench_warm "$IMG"; else mount_ro; fi; }
send_post() {
	cp "$W/$1.size" "$W/$1.bytes"
	[ "$1" = box ] || { timeout 120 umount "$MNT" && loop_gone; } || { echo "send: FAIL: cannot unmount $MNT"; exit 1; }
}
BENCH_PREP=send_prep BENCH_POST=send_post
bench_vs "send" box '"$BOX" btrfs send -q --device "$IMG" -f /dev/null /snap-ro' ref '"$REF_BTRFS" send -q -f /dev/null "$MNT/snap-ro"'
[ $? = 2 ] && exit 0
awk -v ta="$(bench_median "$W/box.runs" 1)" -v tb="$(bench_median "$W/ref.runs" 1)" \
	-v sa="$(cat "$W/box.size")" -v sb="$(cat "$W/ref.size")" 'BEGIN {
	printf "send: throughput box/kernel x%.2f (goal: at least x1.00), stream bytes box/kernel x%.3f\n",
		(ta > 0 && sb > 0 ? (sa / ta) / (sb / tb) : 0), (sb > 0 ? sa / sb : 0) }'
exit 0
