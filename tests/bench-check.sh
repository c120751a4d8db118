#!/bin/sh
# btrfs check on the standard large image (issue 5): ours against the reference (6.19
# where built, else Debian's) in its original mode (time and memory), against the
# reference's --mode=lowmem (the reference's low-memory answer), and both with
# --check-data-csum (warm and cold cache); ours on one thread (BTRFSBOX_THREADS=1)
# against two. Warm cache unless said, median of BENCH_RUNS (lowmem: BENCH_LOWMEM_RUNS, default 1: it takes half a minute).
BENCH_NAME=check
. "$(dirname "$0")/bench/lib.sh"
bench_need_ref
bench_need_applet "$BOX" btrfs check
bench_big_image
bench_warm "$IMG"

REF=$(bench_ref619 btrfs)
bench_vs "check" box '"$BOX" btrfs check "$IMG"' ref '"$REF" check "$IMG"' || [ $? = 1 ] || exit 0
bench_goal "check" box ref time 0.33
bench_vs "check --check-data-csum" box '"$BOX" btrfs check --check-data-csum "$IMG"' \
	ref '"$REF" check --check-data-csum "$IMG"'
bench_goal "check --check-data-csum" box ref time 0.2
BENCH_COLD=1 bench_vs "check --check-data-csum, cold cache" box '"$BOX" btrfs check --check-data-csum "$IMG"' \
	ref '"$REF" check --check-data-csum "$IMG"'
bench_vs "check two threads vs one" box '"$BOX" btrfs check "$IMG"' \
	box-1 'env BTRFSBOX_THREADS=1 "$BOX" btrfs check "$IMG"'
BENCH_RUNS=${BENCH_LOWMEM_RUNS:-1}
bench_vs "check vs ref lowmem" box '"$BOX" btrfs check "$IMG"' \
	ref-lowmem '"$REF_BTRFS" check --mode=lowmem "$IMG"'
exit 0
