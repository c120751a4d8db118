#!/bin/sh
# The main job end to end on an image file:
#   mkfs.btrfs --rootdir (an image built from a directory) -> btrfsck -> mount.btrfs -> restore
set -e
: "${BOX:?}"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/btrfsbox-demo.XXXXXX")
bin=$work/bin
mnt=$work/mnt
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && timeout 60 umount "$mnt"
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$bin" "$mnt" "$work/src/etc" "$work/src/data"
"$BOX" --install -s "$bin"
PATH=$bin:$PATH

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

echo "hello from btrfsbox" > "$work/src/etc/motd"
seq 1 20000 > "$work/src/data/numbers.txt"
ln -s ../etc/motd "$work/src/data/motd-link"
head -c 300000 /dev/urandom > "$work/src/data/random.bin"

step "make a 128 MiB image from a directory" "mkfs.btrfs -f -L demo --rootdir src demo.img"
truncate -s 128M "$work/demo.img"
mkfs.btrfs -f -L demo --rootdir "$work/src" "$work/demo.img"

step "check it" "btrfsck demo.img"
btrfsck "$work/demo.img"

if [ "$(id -u)" = 0 ] && grep -qw btrfs /proc/filesystems; then
	step "mount it through the loop helper and look" "mount.btrfs demo.img mnt; btrfs filesystem df mnt"
	mount.btrfs "$work/demo.img" "$mnt"
	btrfs filesystem df "$mnt"
	cat "$mnt/etc/motd"
	timeout 60 umount "$mnt"
else
	echo "(mount step skipped: needs root and a kernel with btrfs)"
fi

step "restore the files without mounting" "btrfs restore -S demo.img out"
mkdir "$work/out"
btrfs restore -S "$work/demo.img" "$work/out"
diff -r "$work/src" "$work/out" && echo "restored tree equals the source"
printf "\ndemo done\n"
