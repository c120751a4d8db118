/* Checksum throughput: crc32c (hardware and table paths), xxhash64, sha256, blake2b over
 * 4 KiB blocks, as btrfs checksums data. Prints "NAME GB/s" lines. */
#include "csum.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BLOCK 4096
#define TOTAL (256u << 20)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(const char *name, int type, const unsigned char *buf, size_t total)
{
	uint8_t out[CSUM_MAX_SIZE];
	unsigned sink = 0;
	double t = now();

	for (size_t off = 0; off < total; off += BLOCK) {
		csum_compute(type, buf + off % (16u << 20), BLOCK, out);
		sink += out[0];
	}
	t = now() - t;
	printf("%-14s %6.2f GB/s%s\n", name, total / t / 1e9, sink == 0xffffffffu ? " " : "");
}

int main(void)
{
	unsigned char *buf = malloc(16u << 20);

	if (!buf)
		return 1;
	for (size_t i = 0; i < (16u << 20); i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	if (crc32c_hw_available())
		run("crc32c-hw", CSUM_CRC32C, buf, TOTAL * 4);
	crc32c_force_table(1);
	run("crc32c-table", CSUM_CRC32C, buf, TOTAL);
	crc32c_force_table(0);
	if (!csum_supported(CSUM_XXHASH))
		run("xxhash64", CSUM_XXHASH, buf, TOTAL * 2);
	if (!csum_supported(CSUM_SHA256))
		run("sha256", CSUM_SHA256, buf, TOTAL / 4);
	if (!csum_supported(CSUM_BLAKE2))
		run("blake2b", CSUM_BLAKE2, buf, TOTAL / 2);
	free(buf);
	return 0;
}
