/* crc32c (Castagnoli, reflected polynomial 0x82f63b78), the btrfs default checksum.
 * Two paths: slicing-by-8 tables (portable) and the SSE4.2 crc32 instruction, three
 * streams at a time combined with carry-less multiplies. */
#include <string.h>
#include "csum.h"
#include "util/le.h"

#define CRC32C_POLY 0x82f63b78u

static uint32_t crc_table[8][256];

__attribute__((constructor))
static void build_table(void)
{
	for (unsigned n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (CRC32C_POLY & -(c & 1));
		crc_table[0][n] = c;
	}
	/* crc_table[k][n]: n followed by k zero bytes. */
	for (unsigned n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++) {
			uint32_t c = crc_table[k - 1][n];
			crc_table[k][n] = c >> 8 ^ crc_table[0][c & 0xff];
		}
}

static uint32_t crc32c_table(uint32_t crc, const uint8_t *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v = get_le64(p) ^ crc;
		crc = crc_table[7][v & 0xff] ^ crc_table[6][v >> 8 & 0xff] ^
		      crc_table[5][v >> 16 & 0xff] ^ crc_table[4][v >> 24 & 0xff] ^
		      crc_table[3][v >> 32 & 0xff] ^ crc_table[2][v >> 40 & 0xff] ^
		      crc_table[1][v >> 48 & 0xff] ^ crc_table[0][v >> 56];
	}
	while (len--)
		crc = crc >> 8 ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
#include <immintrin.h>

/* Bytes per stream in the three-stream loop: 3 * 1360 + 16 covers a 4 KiB sector. */
#define LANE 1360
/* x^(8*n - 33) mod P, bit-reflected, for n = LANE and 2 * LANE: a 32-bit crc c
 * carry-less multiplied by K and reduced by crc32(0, .) gives c * x^(8*n) mod P,
 * i.e. c advanced over n zero bytes. */
#define K_LANE1 0x3f70cc6fu
#define K_LANE2 0x5aa1f3cfu

__attribute__((target("sse4.2,pclmul")))
static uint64_t clmul32(uint32_t a, uint32_t k)
{
	__m128i r = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)k), 0);
	return (uint64_t)_mm_cvtsi128_si64(r);
}

__attribute__((target("sse4.2,pclmul")))
static uint32_t crc32c_3way(uint32_t crc, const uint8_t **pp, size_t *lenp)
{
	const uint8_t *p = *pp;
	size_t len = *lenp;

	for (; len >= 3 * LANE; p += 3 * LANE, len -= 3 * LANE) {
		uint64_t a = crc, b = 0, c = 0;
		for (size_t i = 0; i < LANE; i += 8) {
			a = _mm_crc32_u64(a, get_le64(p + i));
			b = _mm_crc32_u64(b, get_le64(p + LANE + i));
			c = _mm_crc32_u64(c, get_le64(p + 2 * LANE + i));
		}
		crc = (uint32_t)c ^ (uint32_t)_mm_crc32_u64(0,
			clmul32((uint32_t)a, K_LANE2) ^ clmul32((uint32_t)b, K_LANE1));
	}
	*pp = p;
	*lenp = len;
	return crc;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	for (; len && ((uintptr_t)p & 7); len--)
		crc = _mm_crc32_u8(crc, *p++);
	if (len >= 3 * LANE && csum_cpu(CPU_CLMUL))
		crc = crc32c_3way(crc, &p, &len);
	uint64_t c = crc;
	for (; len >= 8; p += 8, len -= 8)
		c = _mm_crc32_u64(c, get_le64(p));
	crc = (uint32_t)c;
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}
#endif

uint32_t crc32c_raw(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (csum_cpu(CPU_CRC32))
		return crc32c_hw(crc, buf, len);
#endif
	return crc32c_table(crc, buf, len);
}

uint32_t crc32c(const void *buf, size_t len)
{
	return ~crc32c_raw(~0u, buf, len);
}
