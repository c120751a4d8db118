#!/bin/sh
# Builds a rescue initramfs for Debian's amd64 kernel (make initramfs):
#   /sbin/btrfsbox and its applet links (hard links made by `btrfsbox --install`),
#   /bin/busybox from Debian's busybox-static (the shell and the rest of userland),
#   the btrfs, loop and virtio modules with their dependencies from Debian's
#   linux-image-amd64 package (bookworm: 6.1), and /init (config/initramfs-init).
# Usage: sh config/initramfs.sh BTRFSBOX OUT.cpio.gz CACHE
# CACHE keeps the downloaded packages; the kernel they hold is copied to CACHE/vmlinuz.
# KERNEL_DEB=FILE takes the kernel and its modules from another linux-image package.
# Extra files (make vm-test adds its steps) come from the directories in INITRAMFS_EXTRA.
set -eu

die() { echo "initramfs: ERROR: $*" >&2; exit 1; }
[ $# -eq 3 ] || die "usage: sh config/initramfs.sh BTRFSBOX OUT.cpio.gz CACHE"
box=$1 out=$2 cache=$3
here=$(cd "$(dirname "$0")" && pwd)
case $box in /*) ;; *) box=$PWD/$box ;; esac
[ -x "$box" ] || die "$box: no btrfsbox binary (run make first)"
"$box" --list > /dev/null 2>&1 || die "$box does not run here (a cross build?)"
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)

# download PACKAGE: the .deb of PACKAGE in $cache/debs (kept); prints its path
download() {
	deb=$(ls "$cache/debs/$1"_*.deb 2>/dev/null | tail -n 1)
	if [ -z "$deb" ]; then
		sandbox=
		[ "$(id -u)" -ne 0 ] || sandbox=-oAPT::Sandbox::User=root
		(cd "$cache/debs" && apt-get download -q $sandbox "$1") > "$cache/debs/$1.log" 2>&1 ||
			die "cannot download $1: $(tail -n 1 "$cache/debs/$1.log")"
		deb=$(ls "$cache/debs/$1"_*.deb | tail -n 1)
	fi
	echo "$deb"
}

# unpack DEB DIR: DEB's files below DIR, once per DEB
unpack() {
	if [ "$(cat "$2.from" 2>/dev/null)" != "$1" ]; then
		rm -rf "$2" && mkdir -p "$2" && dpkg-deb -x "$1" "$2" || die "cannot unpack $1"
		echo "$1" > "$2.from"
	fi
}

if [ -n "${KERNEL_DEB-}" ]; then
	kdeb=$KERNEL_DEB
else
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
	[ -n "$kpkg" ] || die "linux-image-amd64 unknown to apt (apt-get update?)"
	kdeb=$(download "$kpkg")
fi
unpack "$kdeb" "$cache/kernel"
unpack "$(download busybox-static)" "$cache/busybox"
kver=$(ls "$cache/kernel/lib/modules" | head -n 1)
mods=$cache/kernel/lib/modules/$kver
[ -n "$kver" ] && [ -d "$mods/kernel" ] || die "$kdeb holds no modules"
cp "$cache/kernel/boot/vmlinuz-$kver" "$cache/vmlinuz"
bb=$cache/busybox/bin/busybox
[ -x "$bb" ] || die "busybox-static holds no bin/busybox"

stage=$cache/stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/sbin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/tmp" \
	"$stage/mnt" "$stage/lib/modules"
cp "$box" "$stage/sbin/btrfsbox"
"$stage/sbin/btrfsbox" --install "$stage/sbin" || die "btrfsbox --install failed"
cp "$bb" "$stage/bin/busybox"
for a in $("$bb" --list); do
	[ -e "$stage/bin/$a" ] || [ -e "$stage/sbin/$a" ] || ln -s busybox "$stage/bin/$a"
done
cp "$here/initramfs-init" "$stage/init"
chmod 755 "$stage/init"

# Modules: each after the ones it depends on (the depends= field of its .modinfo);
# the checksum and crc32c drivers btrfs asks for by name (softdep) first. Written
# uncompressed, with their load order in /lib/modules/order for /init's insmod.
find "$mods/kernel" -name '*.ko*' > "$cache/modules.all"
modfile() { # NAME -> path of NAME.ko (a dash and an underscore are the same in module names)
	grep -E "/$(echo "$1" | sed 's/[-_]/[-_]/g')\.ko(\.xz|\.zst)?\$" "$cache/modules.all" | head -n 1
}
add_module() {
	grep -qx "$1" "$cache/modules.order" 2>/dev/null && return 0
	f=$(modfile "$1")
	[ -n "$f" ] || return 0         # built into the kernel
	case $f in
	*.xz) xz -dc "$f" > "$stage/lib/modules/$1.ko" ;;
	*.zst) zstd -dcq "$f" > "$stage/lib/modules/$1.ko" ;;
	*) cp "$f" "$stage/lib/modules/$1.ko" ;;
	esac
	for d in $(strings -a "$stage/lib/modules/$1.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
		add_module "$d"
	done
	echo "$1" >> "$cache/modules.order"
}
: > "$cache/modules.order"
for m in crc32c_generic xxhash_generic sha256_generic blake2b_generic virtio_pci virtio_blk loop btrfs; do
	add_module "$m"
done
grep -qx btrfs "$cache/modules.order" || die "no btrfs module in $kdeb"
cp "$cache/modules.order" "$stage/lib/modules/order"
for d in ${INITRAMFS_EXTRA-}; do
	cp -a "$d/." "$stage/"
done

(cd "$stage" && find . | sort | "$bb" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -9 > "$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs: $out ($(stat -c %s "$out") bytes) for $kver: btrfsbox, busybox, modules $(tr '\n' ' ' < "$cache/modules.order")"
