# Shared by tests/cross/*.test (source it after tests/lib.sh). make cross-test sets ARCH,
# QEMU (qemu-ARCH-static, run directly: no binfmt needed), BOX and TINY_BOX (the target's
# defconfig and tinyconfig builds), NATIVE_BOX (the native defconfig build), TOOLS and
# NATIVE_TOOLS (tests/cross/*.c built for the target and natively).
#   x_same WHAT ARGS...   btrfsbox ARGS natively and on the target (in $T): t_fail unless
#                         both exit alike and print the same (stdout and stderr)
# Trees are compared with sr_manifest (tests/sendrecv_lib.sh).
: "${QEMU:?QEMU must name qemu-ARCH-static}" "${NATIVE_BOX:?NATIVE_BOX must name the native build}"
: "${TOOLS:=}" "${NATIVE_TOOLS:=}"

x_same() {
	what=$1; shift
	(cd "$T" && timeout "$T_TIMEOUT" "$NATIVE_BOX" "$@") > "$T/native.out" 2>&1; n=$?
	(cd "$T" && timeout "$T_TIMEOUT" "$QEMU" "$BOX" "$@") > "$T/target.out" 2>&1; x=$?
	if [ "$n" != "$x" ]; then
		t_fail "$what: exit $x on $ARCH, $n natively: $(tail -2 "$T/target.out" | tr '\n' ' ')"
		return 1
	fi
	cmp -s "$T/native.out" "$T/target.out" && return 0
	t_fail "$what: output on $ARCH differs: $(diff "$T/native.out" "$T/target.out" | grep '^[<>]' | head -2 | tr '\n' ' ')"
	return 1
}
