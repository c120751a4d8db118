#!/bin/sh
# make bench: micro-benchmarks of both builds (musl and glibc) and every tests/bench-*.sh
# (each compares an applet against the reference btrfs-progs and prints ratios).
cd "$(dirname "$0")/.." || exit 1
: "${BOX:?}"
echo "== checksums, musl build vs glibc build (4 KiB blocks)"
make -s BUILD=build build/bench/csum CC=musl-gcc >/dev/null &&
make -s BUILD=build/glibc build/glibc/bench/csum CC=gcc >/dev/null || exit 1
build/bench/csum > /tmp/bench.musl.$$
build/glibc/bench/csum > /tmp/bench.glibc.$$
join /tmp/bench.musl.$$ /tmp/bench.glibc.$$ | awk '{ printf "%-14s musl %6.2f GB/s  glibc %6.2f GB/s  ratio %.2f\n", $1, $2, $4, $2 / $4 }'
rm -f /tmp/bench.musl.$$ /tmp/bench.glibc.$$
echo "== zstd compression of 128 KiB chunks: ours vs libzstd (glibc build; sizes, speeds, ratios)"
make -s BUILD=build/glibc build/glibc/bench/zstd CC=gcc >/dev/null || exit 1
cat fs/*.c tests/*.test > /tmp/bench.text.$$
build/glibc/bench/zstd /tmp/bench.text.$$ "$BOX" | sed "s|/tmp/bench.text.$$|sources|; s|$BOX|btrfsbox|"
rm -f /tmp/bench.text.$$
for b in tests/bench-*.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	BOX=$BOX sh "$b"
done
