#!/bin/sh
# Base send streams for `tests/fuzz/campaign.py streams`: full and incremental sends
# (each incremental one behind its full stream in the same file, so a receive of a
# mutant reaches the incremental commands) with files, dirs, symlinks, hard links,
# special files, xattrs, clones, renames, deletions, holes and compressed extents; made by
# the reference `btrfs send` (protocol 1, protocol 2 with --compressed-data) and by
# btrfsbox's send, mounted and offline (--device). Usage: streams.sh DIR (BOX: the
# btrfsbox binary, default ./btrfsbox). Needs root, loop devices and Debian's btrfs-progs.
set -e
dir=$1
: "${dir:?usage: streams.sh DIR}"
BOX=$(realpath "${BOX:-./btrfsbox}")
if [ "$(id -u)" != 0 ] || ! command -v mkfs.btrfs >/dev/null || ! grep -qw btrfs /proc/filesystems; then
	echo "SKIP streams: need root, mkfs.btrfs and btrfs in the kernel"
	exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'umount "$tmp/mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
m=$tmp/mnt
mkdir "$m"
truncate -s 512M "$tmp/src.img"
mkfs.btrfs -q -f "$tmp/src.img" >/dev/null
mount -o loop,compress=zstd "$tmp/src.img" "$m"

btrfs -q subvolume create "$m/v"
btrfs -q subvolume create "$m/cbase"
v=$m/v
mkdir -p "$v/d/sub" "$v/d/gone" "$v/empty" "$v/lzo" "$v/zlib"
btrfs property set "$v/lzo" compression lzo
btrfs property set "$v/zlib" compression zlib
printf 'small\n' > "$v/d/small"
head -c 70000 /dev/urandom > "$v/d/sub/random"
yes 'compressible line' | head -c 200000 > "$v/text"
yes 'lzo line' | head -c 100000 > "$v/lzo/f"
yes 'zlib line' | head -c 100000 > "$v/zlib/f"
truncate -s 1M "$v/sparse" && printf 'mid' | dd of="$v/sparse" bs=1 seek=300000 conv=notrunc 2>/dev/null
ln "$v/d/small" "$v/hard"
ln -s d/small "$v/rel" && ln -s /abs/target "$v/abs"
mkfifo "$v/fifo" && mknod "$v/null" c 1 3
printf 'bye\n' > "$v/d/gone/f" && printf 'old\n' > "$v/old"
chmod 4750 "$v/d/small" && chown 1000:1000 "$v/d/sub/random"
setfattr -n user.a -v one "$v/d/small"
setfattr -n user.big -v "0x$(head -c 1000 /dev/urandom | od -An -tx1 | tr -d ' \n')" "$v/text"
head -c 150000 /dev/urandom > "$m/cbase/big"
cp --reflink=always "$v/d/sub/random" "$v/reflink"
# a clone inside one file: the second 64 KiB block shares the first's extent
head -c 65536 /dev/urandom > "$v/selfclone"
python3 -c '
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, 0x4020940d, struct.pack("=qQQQ", fd, 0, 65536, 65536))   # FICLONERANGE
' "$v/selfclone"
sync
btrfs -q subvolume snapshot -r "$v" "$m/s1"
btrfs -q subvolume snapshot -r "$m/cbase" "$m/cs"
mv "$v/d/sub" "$v/moved" && mv "$v/d/small" "$v/d/renamed"
rm "$v/old" "$v/hard" && rm -r "$v/d/gone"
ln "$v/rel" "$v/rel-link2" && printf 'more\n' >> "$v/d/renamed"
printf 'XXXX' | dd of="$v/moved/random" bs=1 seek=4096 conv=notrunc 2>/dev/null
truncate -s 200000 "$v/sparse" && mkdir "$v/new" && printf 'new\n' > "$v/new/f"
setfattr -x user.a "$v/d/renamed" && setfattr -n user.b -v two "$v/new"
cp --reflink=always "$m/cbase/big" "$v/cloned"
mv "$v/text" "$v/d/text" && mv "$v/d" "$v/e"  # a rename of a renamed parent
sync
btrfs -q subvolume snapshot -r "$v" "$m/s2"

send() { # NAME ARGS...: a stream from the reference send
	name=$1; shift
	btrfs -q send "$@" -f "$tmp/$name.part" && mv "$tmp/$name.part" "$tmp/$name"
}
send full "$m/s1"
send inc -p "$m/s1" "$m/s2"
send cbase "$m/cs"
send clone -p "$m/s1" -c "$m/cs" "$m/s2"
send full2 --proto 2 --compressed-data "$m/s1"
send inc2 --proto 2 --compressed-data -p "$m/s1" "$m/s2"
send nodata --no-data -p "$m/s1" "$m/s2"
send multi -e "$m/s1" "$m/cs"          # two subvolumes in one stream
cat "$tmp/full" > "$dir/ref-full.stream"
cat "$tmp/full" "$tmp/inc" > "$dir/ref-inc.stream"
cat "$tmp/full" "$tmp/cbase" "$tmp/clone" > "$dir/ref-clone.stream"
cat "$tmp/full2" "$tmp/inc2" > "$dir/ref-v2.stream"
cat "$tmp/full" "$tmp/nodata" > "$dir/ref-nodata.stream"
cat "$tmp/multi" > "$dir/ref-multi.stream"
"$BOX" btrfs -q send -f "$tmp/bfull" "$m/s1"
"$BOX" btrfs -q send -f "$tmp/binc" -p "$m/s1" "$m/s2"
cat "$tmp/bfull" "$tmp/binc" > "$dir/box-inc.stream"
umount "$m"
"$BOX" btrfs -q send -f "$tmp/ofull" --device "$tmp/src.img" /s1
"$BOX" btrfs -q send -f "$tmp/oinc" -p /s1 --device "$tmp/src.img" /s2
cat "$tmp/ofull" "$tmp/oinc" > "$dir/box-offline-inc.stream"
echo "streams in $dir: $(cd "$dir" && ls -s *.stream | tr '\n' ' ')"
