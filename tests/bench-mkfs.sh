#!/bin/sh
# mkfs.btrfs against the reference: --rootdir on one generated tree (BENCH_FILES small
# files in 100 dirs plus BENCH_MB MiB of large files) and a 1 TiB sparse image.
# Prints wall time and peak memory of both and the ratios (reference / ours).
: "${BOX:?}"
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
[ -x "$REF_MKFS" ] && [ -x /usr/bin/time ] || { echo "skipped: needs $REF_MKFS and /usr/bin/time"; exit 0; }
files=${BENCH_FILES:-100000} mb=${BENCH_MB:-256}
d=$(mktemp -d "${TMPDIR:-/var/tmp}/bench-mkfs.XXXXXX")
trap 'rm -rf "$d"' EXIT
ln -s "$BOX" "$d/mkfs.btrfs"
mkdir "$d/src"
i=0
while [ $i -lt 100 ]; do mkdir "$d/src/d$i"; i=$((i + 1)); done
awk -v n="$files" -v dir="$d/src" 'BEGIN { for (i = 0; i < n; i++) {
	f = sprintf("%s/d%d/file%d", dir, i % 100, i); printf "content of file %d\n", i > f; close(f) } }'
i=0
while [ $i -lt $((mb / 32)) ]; do head -c 33554432 /dev/urandom > "$d/src/big$i"; i=$((i + 1)); done
sync

# run NAME TOOL ARGS...: prints "seconds peak-KiB"
run() {
	rm -f "$d/img"; truncate -s "$1" "$d/img"; shift
	/usr/bin/time -f '%e %M' -o "$d/time" "$@" "$d/img" > /dev/null 2>&1 || { echo "failed: $*" >&2; echo "0 0"; return; }
	cat "$d/time"
}
compare() { # compare WHAT SIZE ARGS...
	what=$1 size=$2; shift 2
	set -- "$size" "$@"
	ref=$(run "$1" "$REF_MKFS" -q -f $(shift; echo "$@"))
	box=$(run "$1" "$d/mkfs.btrfs" -q -f $(shift; echo "$@"))
	echo "$ref $box" | awk -v w="$what" '{ printf "%-28s ref %6.2fs %7d KiB   box %6.2fs %7d KiB   time x%.1f  memory x%.2f\n",
		w, $1, $2, $3, $4, ($3 > 0 ? $1 / $3 : 0), ($4 > 0 ? $2 / $4 : 0) }'
}
compare "--rootdir ($files files, ${mb}M)" 8G --rootdir "$d/src"
compare "1 TiB sparse image" 1T
