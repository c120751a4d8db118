/* Checksum throughput per core over 4 KiB blocks, as btrfs checksums data: every
 * algorithm with the fast paths this CPU has and with the portable code. The blocks
 * come from a 256 KiB buffer (in the CPU cache, as `openssl speed` measures); the time
 * is the thread's CPU time, best of several passes, so that other processes on a loaded
 * machine count less. Prints "NAME GB/s" lines. */
#include "util/csum/csum.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BLOCK 4096
#define BUF (256u << 10)
#define PASSES 7

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* mib: bytes per pass; the best pass counts. */
static void run(const char *name, int type, const unsigned char *buf, size_t mib)
{
	uint8_t out[CSUM_MAX_SIZE];
	unsigned sink = 0;
	double best = 1e9;

	for (int pass = 0; pass < PASSES; pass++) {
		double t = cpu_seconds();
		for (size_t off = 0; off < (mib << 20); off += BLOCK) {
			csum_compute(type, buf + off % BUF, BLOCK, out);
			sink += out[0];
		}
		t = cpu_seconds() - t;
		best = t < best ? t : best;
	}
	printf("%-16s %6.2f GB/s%s\n", name, (mib << 20) / best / 1e9, sink == 0xffffffffu ? " " : "");
}

int main(void)
{
	static const struct { const char *name, *portable; int type; size_t mib; } algos[] = {
		{ "crc32c", "crc32c-portable", CSUM_CRC32C, 256 },
		{ "xxhash64", "xxhash64", CSUM_XXHASH, 256 },
		{ "sha256", "sha256-portable", CSUM_SHA256, 32 },
		{ "blake2b", "blake2b", CSUM_BLAKE2, 64 },
	};
	unsigned char *buf = malloc(BUF);
	unsigned cpu = csum_cpu_limit(~0u);

	if (!buf)
		return 1;
	for (size_t i = 0; i < BUF; i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		if (csum_supported(algos[i].type))
			continue;
		run(algos[i].name, algos[i].type, buf, algos[i].mib);
		if (!cpu || algos[i].portable == algos[i].name)
			continue;
		csum_cpu_limit(0);
		run(algos[i].portable, algos[i].type, buf, algos[i].mib / 8);
		csum_cpu_limit(~0u);
	}
	free(buf);
	return 0;
}
