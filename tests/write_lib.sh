# Helpers of the write side's tests (rescue.test, crash.test): sourced after tests/lib.sh.
#   fresh IMG [mkfs options]   a filesystem of the reference mkfs, filled by the kernel
#   with_log IMG               one whose log tree holds fsync'ed data (as a power cut leaves it)
#   valid IMG                  reference check passes and the kernel mounts it read-write
#   sum FILE                   a sha256 of its content (tests/image_sum.py: holes not read)
#   detached IMG               waits until no loop device holds IMG (after an umount)
MNT=$T/mnt
mkdir -p "$MNT"
IMAGE_SUM=$(pwd)/tests/image_sum.py
sum() { python3 "$IMAGE_SUM" "$1"; }
need() { t_need_loop && t_need_ref; }

# valid IMG: the reference check passes and the kernel mounts it (read-write)
valid() {
	timeout 120 "$REF_BTRFS" check "$1" > "$T/check.out" 2>&1 ||
		{ t_fail "reference check fails on $(basename "$1"): $(grep -m3 -i 'error\|err ' "$T/check.out" | tr '\n' ' ')"; return 1; }
	t_mount -o loop "$1" "$MNT" 2>"$T/mount.err" ||
		{ t_fail "kernel mount of $(basename "$1") fails: $(cat "$T/mount.err")"; return 1; }
	touch "$MNT/.written" && sync -f "$MNT" && t_umount "$MNT" && detached "$1"
}

# detached IMG: waits (up to 10 s) until the loop device of an unmounted image is gone
# (the kernel frees it after the umount returns, and may still write the image until
# then: a writer would find it in use, a checksum taken then would change)
detached() {
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -z "$(losetup -nj "$1" 2>/dev/null)" ] && return 0
		sleep 0.5
	done
}

# A small filesystem made by the reference mkfs and filled by the kernel.
fresh() { # IMG [mkfs options]
	img=$1; shift
	t_img "$img" 160M
	timeout 60 "$REF_MKFS" -q -f "$@" "$img" >/dev/null 2>&1 || { t_fail "reference mkfs $*"; return 1; }
	t_mount -o loop "$img" "$MNT" || { t_fail "mount of a fresh image"; return 1; }
	mkdir -p "$MNT/d/e" && echo hello > "$MNT/d/f" && head -c 300000 /dev/urandom > "$MNT/d/e/r"
	ln -s f "$MNT/d/l"
	t_umount "$MNT" && detached "$img"
}

# An image whose log tree holds an fsync'ed file: copied while mounted, as a power cut
# leaves it (the kernel sometimes commits instead of logging: tried again then).
with_log() { # IMG
	fresh "$T/base.img" || return 1
	for try in 1 2 3 4 5; do
		t_mount -o loop,commit=300 "$T/base.img" "$MNT" || return 1
		sync -f "$MNT"
		python3 -c "import os; fd = os.open('$MNT/d/logged$try', os.O_CREAT | os.O_WRONLY); os.write(fd, b'x' * 10000)
os.fsync(fd); os.write(fd, b'y' * 5000); os.fsync(fd)"
		cp --sparse=always "$T/base.img" "$1"
		t_umount "$MNT" && detached "$T/base.img"
		"$REF_BTRFS" inspect-internal dump-super "$1" | grep -q '^log_root[[:space:]]*[1-9]' && return 0
	done
	t_fail "could not make an image with a log tree"
}


# corpus_img NAME DEST: a copy of a corpus image (the unpacked one in /var/tmp/corpus when
# there is one, else from the shared corpus); returns 1 and skips when there is none.
for CORPUS in ${CORPUS:-} "$(pwd)/../shared/corpus" /work/shared/corpus; do
	[ -f "$CORPUS/manifest.tsv" ] && break
done
corpus_img() {
	if [ -f "/var/tmp/corpus/$1.raw" ]; then
		cp --sparse=always "/var/tmp/corpus/$1.raw" "$2" && return 0
	fi
	size=$(awk -F'\t' -v n="$1" '$1 == n { print $4 }' "$CORPUS/manifest.tsv" 2>/dev/null)
	if [ -n "$size" ] && command -v zstd >/dev/null && zstd -d -q -f "$CORPUS/images/$1.raw.zst" -o "$2"; then
		truncate -s "$size" "$2" && return 0
	fi
	t_skip "corpus image $1 not available"
	return 1
}

# undo_roundtrip IMG UNDO ORIG_SUM: the undo file puts IMG back byte for byte
undo_roundtrip() {
	t_ok "undo" "$BB/btrfs" rescue undo "$2" "$1" &&
		{ [ "$(sum "$1")" = "$3" ] || t_fail "undo did not restore $(basename "$1") byte for byte"; }
}

# changed_ok IMG ORIG_SUM UNDO: the command changed IMG, which is valid; then undone
changed_ok() {
	[ "$(sum "$1")" != "$2" ] || t_fail "nothing was written"
	cp --sparse=always "$1" "$1.copy" && valid "$1.copy"
	rm -f "$1.copy"
	undo_roundtrip "$1" "$3" "$2"
}

# fragmented IMG: metadata free space so scattered that the free space tree keeps it
# in bitmaps (many small files made, every other one deleted)
fragmented() {
	t_img "$1" 256M
	timeout 60 "$REF_MKFS" -q -f -n 4096 -m single "$1" >/dev/null 2>&1 && t_mount -o loop "$1" "$MNT" ||
		{ t_fail "mkfs/mount"; return 1; }
	python3 -c "
import os
for i in range(20000):
    with open('$MNT/f%05d' % i, 'wb') as f: f.write(b'x' * 100)
os.sync()
for i in range(0, 20000, 2): os.unlink('$MNT/f%05d' % i)"
	t_umount "$MNT" && detached "$1"
	"$REF_BTRFS" inspect-internal dump-tree -t 10 "$1" | grep -q FREE_SPACE_BITMAP ||
		{ t_fail "no free space bitmaps in the fragmented image"; return 1; }
}
