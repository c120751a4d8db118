//config:config CSUM_XXHASH
//config:	bool "xxhash64 checksums"
//config:	default y
//config:	help
//config:	  Support filesystems created with --csum xxhash.
//build:O2
#include "config.h"
#if CFG_CSUM_XXHASH
/* XXH64 (xxHash specification, 64-bit variant). btrfs uses seed 0 and stores the
 * digest as 8 little-endian bytes. */
#include "csum.h"
#include "le.h"

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
		uint64_t v[4] = { seed + P1 + P2, seed + P2, seed, seed - P1 };
		for (; end - p >= 32; p += 32)
			for (int i = 0; i < 4; i++)
				v[i] = round64(v[i], get_le64(p + 8 * i));
		h = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
		for (int i = 0; i < 4; i++)
			h = merge64(h, v[i]);
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
