#!/bin/sh
# make bench: micro-benchmarks of both builds (musl and glibc) and every tests/bench-*.sh
# (each compares an applet against the reference btrfs-progs and prints ratios).
cd "$(dirname "$0")/.." || exit 1
: "${BOX:?}"
echo "== checksums per core, 4 KiB blocks: musl build, glibc build, openssl speed (CPU time)"
make -s BUILD=build build/bench/csum >/dev/null &&
make -s BUILD=build/glibc build/glibc/bench/csum CC=gcc >/dev/null || exit 1
t=$(mktemp -d) || exit 1
build/bench/csum | sort > "$t/musl"
build/glibc/bench/csum | sort > "$t/glibc"
# openssl speed reports thousands of bytes per second of user time
for alg in sha256 blake2b:-evp\ blake2b512; do
	timeout 60 openssl speed -seconds 1 -bytes 4096 ${alg#*:} 2>/dev/null |
		awk -v n="${alg%%:*}" 'NF == 2 && $2 ~ /k$/ { print n, $2 / 1e6 }'
done | sort > "$t/openssl"
# the issue's goals per core (musl build)
join "$t/musl" "$t/glibc" | join -a 1 - "$t/openssl" | awk 'BEGIN {
	goal["crc32c"] = 11; goal["sha256"] = 1.5; goal["blake2b"] = 0.85; goal["xxhash64"] = 10 } {
	printf "%-16s musl %6.2f GB/s  glibc %6.2f GB/s", $1, $2, $4
	if (NF > 5) printf "  openssl %5.2f GB/s  ratio %.2f", $6, $2 / $6
	if ($1 in goal) printf "  (goal: at least %.2f GB/s) %s", goal[$1], $2 >= goal[$1] ? "met" : "MISSED"
	printf "\n" }'
echo "== zstd compression of 128 KiB chunks: ours vs libzstd (glibc build; sizes, speeds, ratios)"
make -s BUILD=build/glibc build/glibc/bench/zstd CC=gcc >/dev/null || exit 1
cat fs/*.c tests/*.test > "$t/text"
build/glibc/bench/zstd "$t/text" "$BOX" | sed "s|$t/text|sources|; s|$BOX|btrfsbox|"
rm -rf "$t"
for b in tests/bench-*.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	BOX=$BOX sh "$b"
done
