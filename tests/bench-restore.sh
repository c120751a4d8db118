#!/bin/sh
# Restore throughput: a zstd-compressed filesystem (20,000 small files, 200 MiB in large
# ones, written through a kernel mount) restored by the applet and by the reference
# `btrfs restore -x -m -S`; best of three runs each, the ratio reference time / applet
# time (goal: >= 1.5) and the peak memory of each. BENCH_IMG=IMAGE uses another image
# (e.g. one made by ../shared/bench/make-big.sh).
: "${BOX:?}"
REF_BTRFS=${REF_BTRFS:-/usr/bin/btrfs}
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
if [ "$(id -u)" != 0 ] || [ ! -x "$REF_BTRFS" ] || [ ! -x "$REF_MKFS" ] || [ ! -x /usr/bin/time ]; then
	echo "restore: skipped (needs root, /usr/bin/time and the reference btrfs-progs)"; exit 0
fi
W=$(mktemp -d "${TMPDIR:-/var/tmp}/bench-restore.XXXXXX")
cleanup() {
	timeout 60 umount "$W/mnt" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
IMG=${BENCH_IMG:-}
if [ -z "$IMG" ]; then
	IMG=$W/img
	truncate -s 1G "$IMG" && timeout 60 "$REF_MKFS" -q -f "$IMG" > /dev/null 2>&1 &&
	mkdir "$W/mnt" && timeout 60 mount -o loop,compress-force=zstd "$IMG" "$W/mnt" ||
		{ echo "restore: cannot mount"; exit 1; }
	python3 - "$W/mnt" <<'EOF'
import os, random, sys
r = random.Random(1)
words = [''.join(r.choice('abcdefghij') for _ in range(r.randint(2, 9))) for _ in range(500)]
def text(n):
    return (' '.join(r.choice(words) for _ in range(n // 5)) + '\n').encode()[:n]
for d in range(20):
    os.makedirs('%s/small/d%02d' % (sys.argv[1], d))
    for f in range(1000):
        with open('%s/small/d%02d/f%04d' % (sys.argv[1], d, f), 'wb') as o:
            o.write(text(r.randint(100, 30000)))
os.makedirs(sys.argv[1] + '/big')
for b in range(10):
    with open('%s/big/b%d' % (sys.argv[1], b), 'wb') as o:
        for _ in range(20):
            o.write(text(1 << 20))
EOF
	timeout 120 umount "$W/mnt" || exit 1
fi
ln -s "$BOX" "$W/btrfs"

best() { # TOOL: "seconds peak-KiB" of the fastest of three restores
	for run in 1 2 3; do
		rm -rf "$W/out"; mkdir "$W/out"; sync
		/usr/bin/time -f "%e %M" -o "$W/time" timeout 600 "$1" restore -x -m -S "$IMG" "$W/out" \
			> /dev/null 2>&1 || { echo "restore with $1 failed" >&2; exit 1; }
		cat "$W/time"
	done | sort -n | head -1
}
box=$(best "$W/btrfs"); ref=$(best "$REF_BTRFS")
bytes=$(du -sb "$W/out" | cut -f1)
echo "$box $ref" | awk -v n="$bytes" '{
	printf "restore %d MiB: applet %.2f s (%.0f MB/s, %d MiB peak), reference %.2f s (%.0f MB/s, %d MiB peak), ratio %.2f\n",
		n / 1048576, $1, n / $1 / 1e6, $2 / 1024, $3, n / $3 / 1e6, $4 / 1024, $3 / $1 }'
