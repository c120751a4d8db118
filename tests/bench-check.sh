#!/bin/sh
# btrfs check against the reference on one large kernel-made image: wall time and
# peak memory of the applet, of the reference's original mode and of its lowmem
# mode, and the ratios. The image (BENCH_FILES files, default 300000, in
# directories of 1000, every tenth 5000 random bytes, the rest inline) is built
# once with the reference mkfs through a kernel mount and cached in BENCH_DIR.
: "${BOX:?}"
REF_BTRFS=${REF_BTRFS:-/usr/bin/btrfs}
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
N=${BENCH_FILES:-300000}
DIR=${BENCH_DIR:-/var/tmp/btrfsbox-bench}
IMG=$DIR/check-$N.img
TIME=/usr/bin/time

[ "$(id -u)" = 0 ] || { echo "SKIP check bench: needs root"; exit 0; }
[ -x "$REF_BTRFS" ] && [ -x "$REF_MKFS" ] && [ -x "$TIME" ] && command -v python3 > /dev/null ||
	{ echo "SKIP check bench: needs the reference btrfs-progs, GNU time and python3"; exit 0; }

build_image() {
	mkdir -p "$DIR/mnt" || return 1
	rm -f "$IMG" "$IMG.tmp"
	truncate -s 4G "$IMG.tmp"
	timeout 60 "$REF_MKFS" -q -f "$IMG.tmp" > /dev/null || return 1
	timeout 60 mount -o loop "$IMG.tmp" "$DIR/mnt" || return 1
	timeout 1800 python3 - "$DIR/mnt" "$N" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for d in range((n + 999) // 1000):
    p = os.path.join(root, "d%04d" % d)
    os.mkdir(p)
    for i in range(min(1000, n - d * 1000)):
        with open(os.path.join(p, "file-with-a-longish-name-%06d" % i), "wb") as f:
            f.write(os.urandom(5000) if i % 10 == 0 else b"x" * (i % 100))
    if d % 50 == 0:
        os.link(os.path.join(p, "file-with-a-longish-name-000001"), os.path.join(root, "hl%d" % d))
EOF
	rc=$?
	timeout 300 umount "$DIR/mnt" || return 1
	[ $rc = 0 ] && mv "$IMG.tmp" "$IMG"
}

[ -f "$IMG" ] || { echo "building $IMG ($N files)..."; build_image; } ||
	{ echo "FAIL check bench: cannot build the image"; exit 1; }

# measure NAME CMD... -> "NAME SECONDS KB RC"
measure() {
	name=$1
	shift
	$TIME -f "%e %M" -o "$DIR/time.out" timeout 1800 "$@" "$IMG" > /dev/null 2>&1
	rc=$?
	echo "$name $(tail -1 "$DIR/time.out") $rc"
}

{
	measure box "$BOX" btrfs check
	measure original "$REF_BTRFS" check
	measure lowmem "$REF_BTRFS" check --mode=lowmem
} > "$DIR/results"
cat "$DIR/results" | while read -r name secs kb rc; do
	printf '%-9s %8.2f s %9d KiB  exit %s\n' "$name" "$secs" "$kb" "$rc"
done
awk '{ t[$1] = $2; m[$1] = $3 } END {
	printf "time   box/original %.2f  box/lowmem %.2f\n", t["box"] / t["original"], t["box"] / t["lowmem"]
	printf "memory box/original %.2f  (goal: at most 0.25)\n", m["box"] / m["original"] }' "$DIR/results"
