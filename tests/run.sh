#!/bin/sh
# Runs the unit test binaries (UNIT_DIR; through UNIT_RUNNER, e.g. qemu-mips-static, when
# set) and every tests/*.test (or the files TESTS names) against $BOX.
# Each test prints "PASS name", "FAIL name: why" or "SKIP name: why" lines.
# Usage: tests/run.sh [PATTERN]  (only tests whose file name contains PATTERN)
# SKIP_TESTS="NAME ...": test files left out of this run (each one a SKIP line saying so).
# Last line: "N passed, N failed, N skipped"; exit 1 when anything failed.
cd "$(dirname "$0")/.." || exit 1
: "${BOX:?BOX must name the btrfsbox binary}"
export BOX
pattern=${1-}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A test file that runs past its limit is killed and counted as a failure.
limit=${TEST_TIMEOUT:-600}

run_one() { # name command...
	name=$1; shift
	start=$(date +%s)
	timeout -k 10 "$limit" "$@" > "$log.out" 2>&1
	rc=$?
	sed -n 's/^\(PASS\|FAIL\|SKIP\) /&/p' "$log.out" | sed "s|^\([A-Z]*\) |\1 $name/|" | tee -a "$log"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log.out"; then
		echo "FAIL $name: exited $rc$( [ $rc -ge 124 ] && echo ' (timeout or crash)')" | tee -a "$log"
	fi
	if [ $rc -ne 0 ] || grep -q '^FAIL' "$log.out"; then
		echo "--- output of $name (last 40 lines)"; tail -40 "$log.out"; echo "---"
	fi
	echo "# $name: $(( $(date +%s) - start ))s" >&2
	rm -f "$log.out"
}

for u in "${UNIT_DIR:-build/unit}"/*; do
	[ -x "$u" ] || continue
	case $(basename "$u") in *"$pattern"*) run_one "unit/$(basename "$u")" ${UNIT_RUNNER-} "$u" ;; esac
done
# TESTS: other test files (make cross-test: tests/cross/*.test, named cross/NAME)
for t in ${TESTS:-tests/*.test}; do
	name=${t#tests/}
	case $(basename "$t" .test) in *"$pattern"*) ;; *) continue ;; esac
	case " ${SKIP_TESTS-} " in
	*" ${name%.test} "*) echo "SKIP ${name%.test}: left out of this run (SKIP_TESTS)" | tee -a "$log" ;;
	*) run_one "${name%.test}" sh "$t" ;;
	esac
done
p=$(grep -c '^PASS' "$log"); f=$(grep -c '^FAIL' "$log"); s=$(grep -c '^SKIP' "$log")
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
