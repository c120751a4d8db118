#!/bin/sh
# Clean base images for tests/fuzz/campaign.py: small filesystems with every kind of item
# the parsers meet. Usage: bases.sh DIR (BOX: the btrfsbox binary, default ./btrfsbox).
# Kernel-written ones need root, loop devices and Debian's mkfs.btrfs; they are skipped
# (with a line saying so) when those are missing.
set -e
dir=$1
: "${dir:?usage: bases.sh DIR}"
BOX=${BOX:-./btrfsbox}
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'umount "$tmp/mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/mnt" "$tmp/root"

# files of every shape: inline, compressible, random, sparse, links, xattrs, many names
content() { # DIR
	d=$1
	mkdir -p "$d/dir/sub" "$d/many"
	printf 'small inline file\n' > "$d/small"
	head -c 300000 /dev/urandom > "$d/random"
	yes 'compressible text line for the compressors' | head -c 400000 > "$d/text"
	dd if=/dev/urandom of="$d/sparse" bs=4096 seek=100 count=3 2>/dev/null
	truncate -s 2M "$d/sparse"
	ln "$d/small" "$d/dir/hardlink"
	ln -s ../random "$d/dir/symlink"
	mkfifo "$d/dir/fifo"
	python3 - "$d" <<-'EOF'
	import os, sys
	d = sys.argv[1]
	for i in range(150):
	    with open(os.path.join(d, "many", "f%03d-%s" % (i, "x" * (i % 40))), "w") as f:
	        f.write("%d\n" % i * (i % 7))
	open(os.path.join(d, "dir", "n" * 255), "w").close()
	for n, v in (("user.a", b"1"), ("user.big", os.urandom(2000)), ("security.x", b"sec")):
	    try:
	        os.setxattr(os.path.join(d, "text"), n, v)
	    except OSError:
	        pass
	EOF
}

content "$tmp/root"
truncate -s 160M "$dir/box-rootdir.img"
"$BOX" mkfs.btrfs -q -f -n 4096 --rootdir "$tmp/root" "$dir/box-rootdir.img"
truncate -s 160M "$dir/box-dup.img"
"$BOX" mkfs.btrfs -q -f -m dup -d dup --csum sha256 --rootdir "$tmp/root" "$dir/box-dup.img"

if [ "$(id -u)" != 0 ] || ! command -v mkfs.btrfs >/dev/null || ! grep -qw btrfs /proc/filesystems; then
	echo "SKIP kernel-written bases: need root, mkfs.btrfs and btrfs in the kernel"
	exit 0
fi
REF=$(command -v mkfs.btrfs)
# kernel IMG MOUNTOPTS MKFSOPTS...: a filesystem made by $mkfs (default: the reference)
# and written by the kernel, with a snapshot
# /snap, a later /snap2 (incremental send) and reflinked copies
kernel() {
	img=$1 opts=$2
	shift 2
	truncate -s 256M "$img"
	[ -n "${second-}" ] && truncate -s 256M "${img}2"
	${mkfs:-$REF} -q -f "$@" "$img" ${second:+"${img}2"} >/dev/null
	dev=$(losetup -f --show "$img")
	[ -n "${second-}" ] && dev2=$(losetup -f --show "${img}2") && opts=$opts,device=$dev2
	mount -o "$opts" "$dev" "$tmp/mnt"
	btrfs subvolume create "$tmp/mnt/sub" >/dev/null
	content "$tmp/mnt/sub"
	cp --reflink=always "$tmp/mnt/sub/random" "$tmp/mnt/sub/reflink"
	btrfs subvolume snapshot -r "$tmp/mnt/sub" "$tmp/mnt/snap" >/dev/null
	head -c 50000 /dev/urandom >> "$tmp/mnt/sub/text"
	rm -r "$tmp/mnt/sub/many"
	mv "$tmp/mnt/sub/dir" "$tmp/mnt/sub/moved"
	btrfs subvolume snapshot -r "$tmp/mnt/sub" "$tmp/mnt/snap2" >/dev/null
	content "$tmp/mnt"
	if [ -n "${log-}" ]; then   # fsync'ed, not committed: the copy has a log tree
		sync
		python3 -c 'import os,sys; f=os.open(sys.argv[1],os.O_WRONLY|os.O_CREAT); os.write(f,b"x"*9000); os.fsync(f)' "$tmp/mnt/fsynced"
		cp --sparse=always "$img" "$img.tmp"
	fi
	umount "$tmp/mnt"
	losetup -d "$dev"
	[ -n "${second-}" ] && losetup -d "$dev2"
	[ -n "${log-}" ] && mv "$img.tmp" "$img"
	true
}
kernel "$dir/k-zlib.img" compress=zlib -n 4096
kernel "$dir/k-lzo.img" compress=lzo -n 4096 -m dup -d dup
mkfs="$BOX mkfs.btrfs"
kernel "$dir/k-zstd.img" compress-force=zstd -O block-group-tree --csum blake2
mkfs=
kernel "$dir/k-quota.img" compress=zstd,space_cache=v1 -n 4096 -O ^no-holes -R quota,^free-space-tree
log=1
kernel "$dir/k-log.img" commit=300,compress=zstd -n 4096
log= second=1
kernel "$dir/k-raid1.img" compress=lzo -n 4096 -m raid1 -d raid1
second=
kernel "$dir/k-mixed.img" compress=zlib -M -n 4096
echo "bases in $dir: $(ls "$dir" | tr '\n' ' ')"
