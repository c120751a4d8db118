#!/bin/sh
# btrfs check --repair of the standard large image, which is undamaged: the repair is a
# check that finds nothing to change (goal: within 1.1x of the check alone, time and
# memory), with its default undo file (made in --tmpdir, removed again: nothing was
# written). Warm cache, median of BENCH_RUNS. The image is checked first: a repair that
# found something would change the shared image, so then nothing runs.
BENCH_NAME=repair
. "$(dirname "$0")/bench/lib.sh"
bench_need_applet "$BOX" btrfs check
bench_big_image
bench_warm "$IMG"
"$BOX" btrfs check "$IMG" > /dev/null 2>&1 || bench_skip "btrfsck finds errors in $IMG: not repaired here"
bench_vs "repair (nothing to do) vs check" box-repair '"$BOX" btrfs check --repair --force --tmpdir "$W" "$IMG"' \
	box-check '"$BOX" btrfs check "$IMG"'
bench_goal "repair (nothing to do) vs check" box-repair box-check time 1.1
exit 0
