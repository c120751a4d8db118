#!/bin/sh
# btrfs receive (issue 8): the send stream of snap-ro of the standard large image, made
# once with the reference `btrfs send` (image mounted read-only through a loop device)
# and cached beside the image, received by ours and by the reference into a fresh
# filesystem each run (reference mkfs, 8 GiB sparse, loop mount, untimed; the image is
# on a tmpfs when there is room, see bench_out_dir). Throughput
# is stream bytes per second of wall time. Warm cache, median of BENCH_RUNS.
BENCH_NAME=receive
. "$(dirname "$0")/bench/lib.sh"
bench_need_loop
bench_need_ref
bench_need_applet "$BOX" btrfs receive
bench_big_image
STREAM=$BENCH_DIR/snap-ro.stream

# The stream records the image it came from (the image's stamp).
make_stream() {
	[ "$(cat "$STREAM.stamp" 2>/dev/null)" = "$(cat "$IMG.stamp")" ] && [ -f "$STREAM" ] && return 0
	echo "receive: making $STREAM (once)"
	mkdir "$W/src" &&
	timeout 120 mount -o loop,ro "$IMG" "$W/src" || return 1
	rm -f "$STREAM" "$STREAM.stamp"
	timeout 1800 "$REF_BTRFS" -q send -f "$STREAM.tmp" "$W/src/snap-ro"
	rc=$?
	timeout 120 umount "$W/src" || return 1
	[ $rc = 0 ] && mv "$STREAM.tmp" "$STREAM" && cp "$IMG.stamp" "$STREAM.stamp"
}
( flock 9; make_stream ) 9> "$BENCH_DIR/.lock" || { echo "receive: FAIL: cannot make $STREAM"; exit 1; }
bench_warm "$STREAM"

receive_prep() {
	mkdir -p "$W/mnt"
	bench_out_prep
	truncate -s 8G "$OUT/dst.img" &&
	timeout 120 "$REF_MKFS" -q -f "$OUT/dst.img" > /dev/null &&
	timeout 120 mount -o loop "$OUT/dst.img" "$W/mnt" || { echo "receive: FAIL: cannot mount a scratch filesystem"; exit 1; }
}
receive_post() {
	stat -c %s "$STREAM" > "$W/$1.bytes"
	find "$W/mnt" | wc -l > "$W/$1.entries"
	timeout 300 umount "$W/mnt" || { echo "receive: FAIL: cannot unmount the scratch filesystem"; exit 1; }
	rm -rf "$OUT"
}
bench_out_dir
BENCH_PREP=receive_prep BENCH_POST=receive_post
bench_vs "receive" box '"$BOX" btrfs receive -f "$STREAM" "$W/mnt"' ref '"$REF_BTRFS" receive -f "$STREAM" "$W/mnt"'
[ $? = 2 ] && exit 0
# The issue's figure: throughput relative to the reference (medians; each run's time too,
# since a loaded machine shows in their spread).
awk -v runs="$BENCH_RUNS" -v ta="$(bench_median "$W/box.runs" 1)" -v tb="$(bench_median "$W/ref.runs" 1)" \
	-v ra="$(cut -d' ' -f1 "$W/box.runs" | tr '\n' ' ')" -v rb="$(cut -d' ' -f1 "$W/ref.runs" | tr '\n' ' ')" 'BEGIN {
	printf "receive: throughput box/ref x%.2f (goal: at least x1.50; median of %d runs each)\n", (ta > 0 ? tb / ta : 0), runs
	printf "receive: run times (s): box %s| ref %s\n", ra, rb }'
[ "$(cat "$W/box.entries")" = "$(cat "$W/ref.entries")" ] ||
	echo "receive: WARNING: box received $(cat "$W/box.entries") entries, ref $(cat "$W/ref.entries")"
exit 0
