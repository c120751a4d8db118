#!/bin/sh
# btrfs restore of the standard large image (issue 6): throughput (bytes of regular files
# written per second of wall time) and peak memory, ours against the reference. Both
# write to the same filesystem (a tmpfs when there is room, see bench_out_dir), into an
# empty directory removed after each run (untimed). Warm cache, then cold; median of
# BENCH_RUNS.
BENCH_NAME=restore
. "$(dirname "$0")/bench/lib.sh"
bench_need_ref
bench_need_applet "$BOX" btrfs restore
bench_big_image
bench_warm "$IMG"

REF=$(bench_ref619 btrfs)
bench_out_dir
BENCH_PREP=bench_out_prep BENCH_POST=bench_out_post
bench_vs "restore" box '"$BOX" btrfs restore "$IMG" "$OUT"' ref '"$REF" restore "$IMG" "$OUT"'
[ $? = 2 ] && exit 0
bench_same_output restore box ref
bench_goal "restore" box ref speed 4
# btrfs-progs drops the image's cached pages when it opens it, so it reads the disk
# even when the cache is warm: both from a cold cache too.
BENCH_COLD=1 bench_vs "restore, cold cache" box '"$BOX" btrfs restore "$IMG" "$OUT"' ref '"$REF" restore "$IMG" "$OUT"'
exit 0
