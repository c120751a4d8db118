#!/bin/sh
# make bench: `btrfs inspect-internal dump-tree` (every tree of a kernel-made filesystem
# with 30,000 files, 4 KiB nodes) against the reference; prints both times and the ratio.
: "${BOX:?}"
REF_BTRFS=${REF_BTRFS:-/usr/bin/btrfs}
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
if [ "$(id -u)" != 0 ] || [ ! -x "$REF_BTRFS" ] || [ ! -x "$REF_MKFS" ]; then
	echo "skipped: needs root and the reference btrfs-progs"
	exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/var/tmp}/bench-dump-tree.XXXXXX")
trap 'mountpoint -q "$dir/mnt" && timeout 60 umount "$dir/mnt"; rm -rf "$dir"' EXIT
img=$dir/fs.img
truncate -s 512M "$img"
timeout 60 "$REF_MKFS" -q -f -n 4096 "$img" > /dev/null 2>&1 || { echo "reference mkfs failed"; exit 1; }
mkdir "$dir/mnt"
timeout 60 mount -o loop "$img" "$dir/mnt" || { echo "mount failed"; exit 1; }
for d in $(seq 1 30); do
	mkdir "$dir/mnt/d$d"
	for f in $(seq 1 1000); do echo "$d $f"; done | split -l 1 -a 3 - "$dir/mnt/d$d/f"
done
timeout 120 umount "$dir/mnt" || { echo "umount failed"; exit 1; }

# best of three runs, CPU time (user + system) in milliseconds: steadier than wall-clock
# time on a busy machine; wall-clock when /usr/bin/time is missing
best_ms() {
	best=
	for i in 1 2 3; do
		s=$(date +%s%N)
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f '%U %S' -o "$dir/time" timeout 300 "$@" inspect-internal dump-tree "$img" > /dev/null 2>&1
			ms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$dir/time")
		else
			timeout 300 "$@" inspect-internal dump-tree "$img" > /dev/null 2>&1
			ms=$(( ($(date +%s%N) - s) / 1000000 ))
		fi
		{ [ -z "$best" ] || [ "$ms" -lt "$best" ]; } && best=$ms
	done
	echo "$best"
}
ours=$(best_ms "$BOX" btrfs)
ref=$(best_ms "$REF_BTRFS")
awk -v o="$ours" -v r="$ref" 'BEGIN { printf "dump-tree, 30k files, 4 KiB nodes: btrfsbox %d ms, reference %d ms (CPU), ratio %.2f (< 1: faster)\n", o, r, o / (r ? r : 1) }'
