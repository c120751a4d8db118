/* XXH64 (xxHash specification, 64-bit variant). btrfs uses seed 0 and stores the
 * digest as 8 little-endian bytes. */
//config:config CSUM_XXHASH
//config:	bool "xxhash64 checksums"
//config:	default y
//config:	help
//config:	  Support filesystems created with --csum xxhash.
//build:O2
#include "config.h"
#if CFG_CSUM_XXHASH
#include "csum.h"
#include "util/le.h"

#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull
#define P4 0x85ebca77c2b2ae63ull
#define P5 0x27d4eb2f165667c5ull

static inline uint64_t rotl64(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t round64(uint64_t acc, uint64_t in)
{
	return rotl64(acc + in * P2, 31) * P1;
}

static inline uint64_t merge64(uint64_t h, uint64_t v)
{
	return (h ^ round64(0, v)) * P1 + P4;
}

uint64_t xxh64(const void *buf, size_t len, uint64_t seed)
{
	const uint8_t *p = buf, *end = p + len;
	uint64_t h;

	if (len >= 32) {
		/* four accumulators in registers (an array would live in memory) */
		uint64_t v0 = seed + P1 + P2, v1 = seed + P2, v2 = seed, v3 = seed - P1;
		for (; end - p >= 32; p += 32) {
			v0 = round64(v0, get_le64(p));
			v1 = round64(v1, get_le64(p + 8));
			v2 = round64(v2, get_le64(p + 16));
			v3 = round64(v3, get_le64(p + 24));
		}
		h = rotl64(v0, 1) + rotl64(v1, 7) + rotl64(v2, 12) + rotl64(v3, 18);
		h = merge64(merge64(merge64(merge64(h, v0), v1), v2), v3);
	} else {
		h = seed + P5;
	}
	h += len;
	for (; end - p >= 8; p += 8)
		h = rotl64(h ^ round64(0, get_le64(p)), 27) * P1 + P4;
	if (end - p >= 4) {
		h = rotl64(h ^ get_le32(p) * P1, 23) * P2 + P3;
		p += 4;
	}
	while (p < end)
		h = rotl64(h ^ *p++ * P5, 11) * P1;
	h = (h ^ h >> 33) * P2;
	h = (h ^ h >> 29) * P3;
	return h ^ h >> 32;
}
#endif
