#!/bin/sh
# mkfs.btrfs (issue 4): --rootdir of a generated tree (about 52k entries, 1 GiB: small
# files, large random and text files, hard links, symlinks, xattrs, a sparse file; made
# once with python3 and cached in BENCH_DIR) into a 4 GiB sparse file; --rootdir of
# 100k small data files (memory must not grow with the data extents: their extent
# and csum items are spooled); mkfs of a 1 TiB sparse file; ours against the
# reference: btrfs-progs 6.19 where it is built (REF619, see tests/bench/lib.sh; the
# goal for --rootdir: at most 0.2x its time), else Debian's. The image is on a tmpfs
# when there is room (see bench_tmpfs_dir). Warm cache, median of BENCH_RUNS (1 TiB:
# BENCH_RUNS + 2).
BENCH_NAME=mkfs
. "$(dirname "$0")/bench/lib.sh"
bench_need_ref
bench_need_applet "$BOX" mkfs.btrfs
REF_MKFS=$(bench_ref619 mkfs.btrfs)
echo "mkfs: reference $("$REF_MKFS" --version 2>&1 | sed -n 's/.*\(btrfs-progs v[^ ]*\).*/\1/p' | head -1) ($REF_MKFS)"
command -v python3 > /dev/null || bench_skip "needs python3 to generate the --rootdir tree"
. "$(dirname "$0")/bench/rootdir.sh"
bench_rootdir_tree || { echo "mkfs: FAIL: cannot generate $SRC"; exit 1; }

bench_img_on_tmpfs
BENCH_PREP=bench_img_prep
size=4G
bench_vs "mkfs --rootdir" box '"$BOX" mkfs.btrfs -f --rootdir "$SRC" "$MKFS_IMG"' \
	ref '"$REF_MKFS" -f --rootdir "$SRC" "$MKFS_IMG"'
[ $? = 2 ] && exit 0
bench_goal "mkfs --rootdir" box ref time 0.1
# The same into the image of the last run (its pages kept): without the cost of faulting
# in a GiB of freshly freed memory, which a virtual machine's host makes slow and uneven.
BENCH_PREP=: bench_vs "mkfs --rootdir, image pages kept" box '"$BOX" mkfs.btrfs -f --rootdir "$SRC" "$MKFS_IMG"' \
	ref '"$REF_MKFS" -f --rootdir "$SRC" "$MKFS_IMG"'
bench_rootdir_many || { echo "mkfs: FAIL: cannot generate $SRC"; exit 1; }
bench_vs "mkfs --rootdir 100k data files" box '"$BOX" mkfs.btrfs -f --rootdir "$SRC" "$MKFS_IMG"' \
	ref '"$REF_MKFS" -f --rootdir "$SRC" "$MKFS_IMG"'
size=1T BENCH_RUNS=$((BENCH_RUNS + 2))
bench_vs "mkfs 1 TiB" box '"$BOX" mkfs.btrfs -f "$MKFS_IMG"' ref '"$REF_MKFS" -f "$MKFS_IMG"'
exit 0
