#!/bin/sh
# Our musl build against our glibc build on the hot paths (issue 2: the musl build must
# not be slower): btrfs check and btrfs restore of the standard large image and
# mkfs.btrfs --rootdir of the generated tree. $BOX is the musl build; the glibc build is
# made here (make CC=gcc BUILD=build/glibc BIN=build/glibc/btrfsbox). speed above 1
# means the musl build is faster. Warm cache, median of BENCH_RUNS (default 9 here:
# single runs of the same binary differ by up to 2x on the test VMs).
# Both builds make the same system calls, so most of the wall time is the kernel's,
# and it varies from run to run by more than the builds differ: restore output and the
# mkfs image go to a tmpfs, runs wait for the VM's page reporting (bench_settle) and
# take turns at going first. perf record -e cpu-clock:u shows where the builds differ
# in their own code (ours, libc's malloc, memcpy and string functions, zlib, lzo, zstd).
BENCH_NAME=build
BENCH_RUNS=${BENCH_RUNS:-9}
. "$(dirname "$0")/bench/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
GLIBC=$top/build/glibc/btrfsbox
command -v gcc > /dev/null || bench_skip "needs gcc for the glibc build"
timeout 1800 make -s -j"$(nproc)" -C "$top" CC=gcc BUILD=build/glibc BIN="$GLIBC" > "$W/make.log" 2>&1 ||
	bench_skip "the glibc build failed: $(tail -1 "$W/make.log")"
bench_big_image
bench_warm "$IMG"

bench_vs "musl/glibc check" musl '"$BOX" btrfs check "$IMG"' glibc '"$GLIBC" btrfs check "$IMG"'

bench_out_dir
BENCH_PREP=bench_out_prep BENCH_POST=bench_out_post
bench_vs "musl/glibc restore" musl '"$BOX" btrfs restore "$IMG" "$OUT"' glibc '"$GLIBC" btrfs restore "$IMG" "$OUT"'
[ $? = 2 ] || bench_same_output "musl/glibc restore" musl glibc

if command -v python3 > /dev/null; then
	. "$(dirname "$0")/bench/rootdir.sh"
	bench_rootdir_tree || { echo "build: FAIL: cannot generate $SRC"; exit 1; }
	bench_img_on_tmpfs
	BENCH_PREP=bench_img_prep BENCH_POST=: size=4G
	bench_vs "musl/glibc mkfs --rootdir" musl '"$BOX" mkfs.btrfs -f --rootdir "$SRC" "$MKFS_IMG"' \
		glibc '"$GLIBC" mkfs.btrfs -f --rootdir "$SRC" "$MKFS_IMG"'
else
	echo "musl/glibc mkfs --rootdir: SKIP: needs python3 to generate the tree"
fi
exit 0
