#!/bin/sh
# Walking every tree of the standard large image (issue 3): our
# `btrfs inspect-internal walk-trees` (every tree, and it also reads every file) and,
# once it exists, our `inspect-internal dump-tree`, against the reference
# `btrfs inspect-internal dump-tree > /dev/null`. Warm cache, median of BENCH_RUNS
# (walk-trees: BENCH_WALK_RUNS, default 1, as it decompresses every file of every subvolume).
BENCH_NAME=walk
. "$(dirname "$0")/bench/lib.sh"
bench_need_ref
bench_need_applet "$BOX" btrfs inspect-internal walk-trees
bench_big_image
bench_warm "$IMG"

runs=$BENCH_RUNS
BENCH_RUNS=${BENCH_WALK_RUNS:-1}
bench_vs "walk-trees vs ref dump-tree" box '"$BOX" btrfs inspect-internal walk-trees "$IMG"' \
	ref '"$REF_BTRFS" inspect-internal dump-tree "$IMG"'
BENCH_RUNS=$runs
if timeout 10 "$BOX" btrfs inspect-internal dump-tree --help > /dev/null 2>&1; then
	bench_vs "dump-tree" box '"$BOX" btrfs inspect-internal dump-tree "$IMG"' \
		ref '"$REF_BTRFS" inspect-internal dump-tree "$IMG"'
else
	echo "dump-tree: SKIP: 'btrfs inspect-internal dump-tree' is not built yet"
fi
exit 0
