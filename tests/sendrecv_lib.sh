# Shared by send.test and receive.test (source it after tests/lib.sh).
#   sr_setup            source fs $SRC (snapshots snap1, snap2, cbase-snap; snap2 holds a
#                       reflink of cbase-snap/big; csnap has zlib, lzo and zstd extents)
#                       and an empty destination fs $DST
#   sr_new_dest NAME    a fresh directory below $DST
#   sr_manifest DIR     one line per entry: type, mode, owner, links, size, mtime, target,
#                       content hash and xattrs (directory sizes left out)
#   sr_same A B         t_fail unless the manifests of A and B are equal
# Everything is mounted below $T, so lib.sh's cleanup unmounts and detaches it.

sr_mkfs_mount() { # IMG DIR
	t_img "$1" 256M
	timeout 60 "$REF_MKFS" -q -f "$1" > /dev/null 2>&1 || { t_fail "mkfs.btrfs $1"; return 1; }
	mkdir -p "$2"
	t_mount -o loop "$1" "$2" || { t_fail "mount $1"; return 1; }
}

sr_populate() { # DIR: every file type, holes, xattrs, hard links, owners, modes, times
	d=$1
	mkdir -p "$d/dir/sub" "$d/dir/gone" "$d/empty-dir" &&
	printf 'hello\n' > "$d/dir/text.txt" &&
	head -c 300000 /dev/urandom > "$d/dir/sub/random.bin" &&
	: > "$d/empty" &&
	truncate -s 3M "$d/sparse" && printf 'middle' | dd of="$d/sparse" bs=1 seek=1000000 conv=notrunc 2>/dev/null &&
	printf 'tail' >> "$d/sparse" &&
	ln "$d/dir/text.txt" "$d/hardlink" &&
	ln -s dir/text.txt "$d/rel-link" && ln -s /nonexistent/target "$d/abs-link" &&
	mkfifo "$d/fifo" && mknod "$d/chardev" c 1 3 &&
	printf 'bye\n' > "$d/dir/gone/file" && printf 'old\n' > "$d/to-delete" &&
	chmod 4750 "$d/dir/text.txt" && chown 1234:5678 "$d/dir/sub/random.bin" &&
	chmod 1777 "$d/empty-dir" || return 1
	if command -v setfattr > /dev/null; then
		setfattr -n user.one -v first "$d/dir/text.txt" &&
		setfattr -n user.dir -v value "$d/dir" &&
		setfattr -n user.bin -v 0x00ff10 "$d/empty" || return 1
	fi
	touch -h -d '2020-01-02 03:04:05.123456789' "$d/rel-link" "$d/empty" "$d/dir/gone/file"
}

sr_change() { # DIR: renames, deletions, new links, changed data and xattrs
	d=$1
	mv "$d/dir/sub" "$d/moved-sub" && mv "$d/dir/text.txt" "$d/dir/renamed.txt" &&
	rm "$d/to-delete" "$d/hardlink" && rm -r "$d/dir/gone" &&
	ln "$d/empty" "$d/new-hardlink" && printf 'more\n' >> "$d/dir/renamed.txt" &&
	printf 'XXXX' | dd of="$d/moved-sub/random.bin" bs=1 seek=4096 conv=notrunc 2>/dev/null &&
	truncate -s 1M "$d/sparse" && mkdir "$d/new-dir" && printf 'new\n' > "$d/new-dir/new" || return 1
	if command -v setfattr > /dev/null; then
		setfattr -x user.one "$d/dir/renamed.txt" && setfattr -n user.two -v second "$d/empty" || return 1
	fi
}

sr_setup() {
	t_need_loop || return 1
	t_need_ref || return 1
	SRC=$T/src DST=$T/dst
	sr_mkfs_mount "$T/src.img" "$SRC" && sr_mkfs_mount "$T/dst.img" "$DST" || return 1
	B=$BB/btrfs
	timeout 60 "$REF_BTRFS" -q subvolume create "$SRC/vol" > /dev/null &&
	timeout 60 "$REF_BTRFS" -q subvolume create "$SRC/cbase" > /dev/null &&
	sr_populate "$SRC/vol" && head -c 1000000 /dev/urandom > "$SRC/cbase/big" &&
	timeout 60 "$REF_BTRFS" -q subvolume snapshot -r "$SRC/vol" "$SRC/snap1" > /dev/null &&
	timeout 60 "$REF_BTRFS" -q subvolume snapshot -r "$SRC/cbase" "$SRC/cbase-snap" > /dev/null &&
	sr_change "$SRC/vol" && cp --reflink=always "$SRC/cbase-snap/big" "$SRC/vol/cloned" &&
	timeout 60 "$REF_BTRFS" -q subvolume snapshot -r "$SRC/vol" "$SRC/snap2" > /dev/null &&
	sr_compressed "$SRC/cvol" && sync &&
	timeout 60 "$REF_BTRFS" -q subvolume snapshot -r "$SRC/cvol" "$SRC/csnap" > /dev/null ||
		{ t_fail "cannot build the source filesystem"; return 1; }
}

sr_compressed() { # SUBVOL: files compressed with each algorithm (for --compressed-data)
	timeout 60 "$REF_BTRFS" -q subvolume create "$1" > /dev/null || return 1
	for alg in zlib lzo zstd; do
		mkdir "$1/$alg" && timeout 60 "$REF_BTRFS" property set "$1/$alg" compression $alg &&
		{ yes "compressible $alg" | head -c 400000; head -c 3000 /dev/urandom; } > "$1/$alg/file" || return 1
	done
}

sr_new_dest() { mkdir -p "$DST/$1" && echo "$DST/$1"; }

sr_manifest() {
	(cd "$1" && {
		find . ! -type d -printf '%p %y %m %U:%G %n %T@ %s %l\n'
		find . -type d -printf '%p %y %m %U:%G %n %T@\n'
		find . -type f -exec sha256sum {} +
		if command -v getfattr > /dev/null; then
			getfattr -h -R -d -m - -e hex . 2>/dev/null |
				awk '/^# file: /{ f = substr($0, 9); next } NF { print f, $0 }'
		fi
	} | sort)
}

sr_same() { # SOURCE RECEIVED
	sr_manifest "$1" > "$T/m.a"; sr_manifest "$2" > "$T/m.b"
	cmp -s "$T/m.a" "$T/m.b" || t_fail "trees differ: $(diff "$T/m.a" "$T/m.b" | grep '^[<>]' | head -2 | tr '\n' ' ')"
}

sr_received_ro() { # SUBVOL: a Received UUID and the read-only flag, per the reference
	timeout 60 "$REF_BTRFS" subvolume show "$1" > "$T/show.out" 2>&1 || { t_fail "subvolume show $1"; return 1; }
	grep -Eq 'Received UUID:[[:space:]]+[0-9a-f]{8}-' "$T/show.out" || t_fail "$1 has no received UUID"
	grep -Eq 'Flags:[[:space:]]+.*readonly' "$T/show.out" || t_fail "$1 is not read-only"
}
