# Shared helpers for tests/*.test (POSIX sh). Source it first: . tests/lib.sh
#   t_begin NAME; ...checks...; t_end        one case: PASS unless a check failed or it skipped
#   t_fail REASON / t_skip REASON            result of the current case
#   t_ok "what" CMD...                       run CMD (with a timeout); t_fail "what" when it fails
#   t_need_root / t_need_loop / t_need_ref   return 1 (and t_skip with the reason) when missing
#   t_mount ARGS... / t_umount DIR           mount/umount under a timeout (hangs become failures)
#   t_img FILE SIZE                          sparse image file
#   t_attach FILE -> prints /dev/loopN       losetup under a timeout; detached by t_cleanup
#   t_same WHAT ARGS...                      `btrfs ARGS`: same stdout, stderr, exit code as the reference
# $T is a fresh scratch dir, removed at exit after unmounting and detaching what is below it.
# $BB/APPLET runs our applets through links named like the applets (argv[0] dispatch).
# REF_BTRFS / REF_MKFS are the reference btrfs-progs tools.
: "${BOX:?BOX must name the btrfsbox binary}"
REF_BTRFS=${REF_BTRFS:-/usr/bin/btrfs}
REF_MKFS=${REF_MKFS:-/usr/sbin/mkfs.btrfs}
T_TIMEOUT=${T_TIMEOUT:-120}
T=$(mktemp -d "${TMPDIR:-/var/tmp}/btrfsbox-test.XXXXXX")
BB=$T/bin
mkdir -p "$BB"
for a in btrfsbox btrfs mkfs.btrfs btrfsck fsck.btrfs mount.btrfs; do ln -s "$BOX" "$BB/$a"; done
T_CASE= T_RESULT=

t_cleanup() {
	[ -d "$T" ] || return 0
	# unmount deepest first, everything mounted below the scratch dir
	awk -v t="$T" '$2 ~ "^"t {print $2}' /proc/self/mounts | sort -r | while read -r m; do
		timeout 60 umount "$m" 2>/dev/null || timeout 30 umount -l "$m" 2>/dev/null
	done
	losetup -nO NAME,BACK-FILE 2>/dev/null | while read -r dev file; do
		case $file in "$T"/*) timeout 30 losetup -d "$dev" 2>/dev/null ;; esac
	done
	rm -rf "$T"
}
trap 't_cleanup' EXIT
trap 't_cleanup; exit 1' INT TERM

t_begin() { T_CASE=$1; T_RESULT=; }
t_fail() { [ -n "$T_RESULT" ] && return 1; echo "FAIL $T_CASE: $*"; T_RESULT=fail; return 1; }
t_skip() { [ -n "$T_RESULT" ] && return 1; echo "SKIP $T_CASE: $*"; T_RESULT=skip; return 1; }
t_end() { [ -z "$T_RESULT" ] && echo "PASS $T_CASE"; T_RESULT=done; }
t_ok() { what=$1; shift; timeout "$T_TIMEOUT" "$@" > "$T/last.out" 2>&1 || \
	{ t_fail "$what (exit $?): $(tail -3 "$T/last.out" | tr '\n' ' ')"; return 1; }; }
t_not() { what=$1; shift; if timeout "$T_TIMEOUT" "$@" > "$T/last.out" 2>&1; then \
	t_fail "$what: succeeded but should fail"; return 1; fi; [ $? -lt 124 ] || \
	{ t_fail "$what: timed out or crashed"; return 1; }; }

t_need_root() { [ "$(id -u)" = 0 ] || t_skip "needs root"; }
t_need_loop() {
	t_need_root || return 1
	grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null
	grep -qw btrfs /proc/filesystems || { t_skip "kernel has no btrfs"; return 1; }
	[ -e /dev/loop-control ] || { t_skip "no loop devices"; return 1; }
}
t_need_ref() { [ -x "$REF_BTRFS" ] && [ -x "$REF_MKFS" ] || t_skip "reference btrfs-progs not installed"; }

t_img() { rm -f "$1"; truncate -s "$2" "$1"; }
t_attach() { timeout 60 losetup -f --show "$@"; }
t_mount() { timeout "$T_TIMEOUT" mount "$@"; }
# After umount returns, another process holding the superblock for a moment (a sync, a
# device scan) still keeps the filesystem alive: wait until the kernel lets the device go.
t_umount() {
	_dev=$(awk -v m="$1" '$2 == m { n = split($1, p, "/"); d = p[n] } END { print d }' /proc/self/mounts)
	timeout "$T_TIMEOUT" umount "$1" || return
	_i=0
	while [ -n "$_dev" ] && [ $_i -lt 100 ] && ls /sys/fs/btrfs/*/devices 2>/dev/null | grep -qx "$_dev"; do
		sleep 0.1; _i=$((_i + 1))
	done
}

# The streams are compared apart: the reference does not flush stdout before a warning.
t_same() {
	what=$1; shift
	timeout 60 "$BB/btrfs" "$@" > "$T/box.out" 2> "$T/box.err"; brc=$?
	timeout 60 "$REF_BTRFS" "$@" > "$T/ref.out" 2> "$T/ref.err"; rrc=$?
	[ $brc = $rrc ] || { t_fail "$what: exit $brc, reference $rrc"; return 1; }
	for s in out err; do
		cmp -s "$T/box.$s" "$T/ref.$s" || { t_fail "$what differs (std$s):" \
			"$(diff "$T/ref.$s" "$T/box.$s" | head -5 | tr '\n' ' ')"; return 1; }
	done
}
