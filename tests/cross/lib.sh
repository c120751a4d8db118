# Shared by tests/cross/*.test (source it after tests/lib.sh). make cross-test sets ARCH,
# QEMU (qemu-ARCH-static, run directly: no binfmt needed), BOX and TINY_BOX (the target's
# defconfig and tinyconfig builds), NATIVE_BOX (the native defconfig build), TOOLS and
# NATIVE_TOOLS (tests/cross/*.c built for the target and natively).
#   x_same WHAT ARGS...   btrfsbox ARGS natively and on the target (in $T): t_fail unless
#                         both exit alike and print the same (stdout and stderr); the
#                         command X_BETWEEN (if set) runs in $T between the two
#   files DIR             the content hashes of DIR's regular files
#   x_same_tree A B       t_fail unless the trees A and B have the same entries, modes,
#                         owners, times, contents and xattrs (sr_manifest from
#                         tests/sendrecv_lib.sh), where a time since the test began (restore
#                         could not set it: no inode item) counts as "now"
: "${QEMU:?QEMU must name qemu-ARCH-static}" "${NATIVE_BOX:?NATIVE_BOX must name the native build}"
: "${TOOLS:=}" "${NATIVE_TOOLS:=}"

x_same() {
	what=$1; shift
	(cd "$T" && timeout "$T_TIMEOUT" "$NATIVE_BOX" "$@") > "$T/native.out" 2>&1; n=$?
	[ -z "${X_BETWEEN-}" ] || (cd "$T" && eval "$X_BETWEEN") || { t_fail "$what: $X_BETWEEN failed"; return 1; }
	(cd "$T" && timeout "$T_TIMEOUT" "$QEMU" "$BOX" "$@") > "$T/target.out" 2>&1; x=$?
	if [ "$n" != "$x" ]; then
		t_fail "$what: exit $x on $ARCH, $n natively: $(tail -2 "$T/target.out" | tr '\n' ' ')"
		return 1
	fi
	cmp -s "$T/native.out" "$T/target.out" && return 0
	t_fail "$what: output on $ARCH differs: $(diff "$T/native.out" "$T/target.out" | grep '^[<>]' | head -2 | tr '\n' ' ')"
	return 1
}

X_START=$(date +%s)
x_tree_now() { sr_manifest "$1" | awk -v t="$X_START" '$6 + 0 >= t { $6 = "now" } { print }'; }
x_same_tree() {
	x_tree_now "$1" > "$T/tree.a" && x_tree_now "$2" > "$T/tree.b"
	cmp -s "$T/tree.a" "$T/tree.b" ||
		t_fail "trees differ: $(diff "$T/tree.a" "$T/tree.b" | grep '^[<>]' | head -2 | tr '\n' ' ')"
}

files() { (cd "$1" && find . -type f -exec sha256sum {} + | LC_ALL=C sort); }
