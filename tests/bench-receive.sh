#!/bin/sh
# Receive throughput: a stream of ~400 MiB (one large file, 2000 small ones) received by
# the applet and by the reference `btrfs receive` into a loop-mounted filesystem; best of
# three runs each, in MB/s, and the ratio applet / reference (goal: >= 1).
: "${BOX:?}"
REF_BTRFS=${REF_BTRFS:-/usr/bin/btrfs}
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
if [ "$(id -u)" != 0 ] || [ ! -x "$REF_BTRFS" ] || [ ! -x "$REF_MKFS" ]; then
	echo "receive: skipped (needs root and the reference btrfs-progs)"; exit 0
fi
W=$(mktemp -d "${TMPDIR:-/var/tmp}/bench-receive.XXXXXX")
cleanup() {
	timeout 60 umount "$W/mnt" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
truncate -s 2G "$W/img" && timeout 60 "$REF_MKFS" -q -f "$W/img" > /dev/null 2>&1 &&
mkdir "$W/mnt" && timeout 60 mount -o loop "$W/img" "$W/mnt" || { echo "receive: cannot mount"; exit 1; }
M=$W/mnt
"$REF_BTRFS" -q subvolume create "$M/src" > /dev/null
head -c 400M /dev/urandom > "$M/src/big"
i=0; while [ $i -lt 2000 ]; do echo "$i" > "$M/src/small$i"; i=$((i + 1)); done
"$REF_BTRFS" -q subvolume snapshot -r "$M/src" "$M/snap" > /dev/null
"$REF_BTRFS" -q send -f "$W/stream" "$M/snap" 2>/dev/null
bytes=$(stat -c %s "$W/stream")
ln -s "$BOX" "$W/btrfs"

best() { # TOOL: the best time in seconds of three receives
	for run in 1 2 3; do
		mkdir "$M/dst"; sync
		s=$(date +%s.%N)
		timeout 300 "$1" receive -q -f "$W/stream" "$M/dst" || { echo "receive with $1 failed" >&2; exit 1; }
		sync
		echo "$(date +%s.%N) - $s" | bc
		"$REF_BTRFS" -q subvolume delete "$M/dst/snap" > /dev/null && rmdir "$M/dst"
		"$REF_BTRFS" -q subvolume sync "$M" > /dev/null 2>&1
	done | sort -n | head -1
}
box=$(best "$W/btrfs"); ref=$(best "$REF_BTRFS")
awk -v n="$bytes" -v b="$box" -v r="$ref" 'BEGIN {
	printf "receive %d MiB stream: applet %.0f MB/s, reference %.0f MB/s, ratio %.2f\n",
		n / 1048576, n / b / 1e6, n / r / 1e6, r / b }'
