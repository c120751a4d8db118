#!/bin/sh
# make fuzz [FUZZ_SECONDS=N]: builds tests/fuzz/fuzz_parse.c with libFuzzer + ASan/UBSan and
# runs it for N seconds (default 300). Seeds: the first blocks of the corpus images and of a
# fresh reference mkfs image when available. Crashes land in build/fuzz/ as crash-*.
set -e
cd "$(dirname "$0")/../.."
secs=${1:-300}
out=build/fuzz
command -v clang >/dev/null || { echo "SKIP fuzz: clang not installed"; exit 0; }
mkdir -p "$out/corpus"
make -s build/gen/stamp build/gen/usage.stamp >/dev/null  # config.h; usage.h, usage_blob.h (util/cli/cli.c)
clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -D_GNU_SOURCE -Ibuild/gen -I. \
	-Wl,--wrap=strerror -o "$out/fuzz_parse" tests/fuzz/fuzz_parse.c fs/*/*.c util/*.c util/*/*.c \
	-lzstd -llzo2 -lz 2> "$out/build.log" ||
	{ echo "SKIP fuzz: cannot build with libFuzzer (apt-get install libclang-rt-14-dev): $(tail -1 "$out/build.log")"; exit 0; }
# seeds: superblock and first tree blocks of a small reference image
if [ -z "$(ls "$out/corpus")" ] && command -v mkfs.btrfs >/dev/null; then
	img=$out/seed.img
	truncate -s 128M "$img" && mkfs.btrfs -q -f -n 4096 "$img" >/dev/null 2>&1 && {
		dd if="$img" of="$out/corpus/super" bs=4096 skip=16 count=1 2>/dev/null
		for off in $(seq 0 40); do
			dd if="$img" of="$out/corpus/blk$off" bs=4096 skip=$((5376 + off)) count=1 2>/dev/null
		done
	}
	rm -f "$img"
fi
"$out/fuzz_parse" -max_total_time="$secs" -max_len=8192 -timeout=10 -artifact_prefix="$out/" \
	"$out/corpus" > "$out/run.log" 2>&1 && { tail -2 "$out/run.log"; echo "fuzz: no crash in ${secs}s"; exit 0; }
tail -30 "$out/run.log"
echo "fuzz: FAILED, artifacts in $out/"
exit 1
