/* SHA-256 (FIPS 180-4), one-shot; the SHA extensions on x86-64 when the CPU has them. */
//config:config CSUM_SHA256
//config:	bool "sha256 checksums"
//config:	default y
//config:	help
//config:	  Support filesystems created with --csum sha256.
#include "config.h"
#if CFG_CSUM_SHA256
#include <string.h>
#include "csum.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror32(uint32_t x, int r)
{
	return x >> r | x << (32 - r);
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void sha256_block(uint32_t h[8], const uint8_t *blk)
{
	uint32_t w[64];
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];

	for (int i = 0; i < 16; i++)
		w[i] = get_be32(blk + 4 * i);
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ w[i - 15] >> 3;
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ w[i - 2] >> 10;
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
			      ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
			      ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

#if defined(__x86_64__)
#include <immintrin.h>

/* Four rounds: w holds the next four message words (lane 0 first). The state is kept
 * as the sha256rnds2 instruction wants it: {F,E,B,A} and {H,G,D,C} (lane 0 first).
 * It does two rounds with the message words plus constants in the low half of its
 * third operand; after them the old ABEF is the new CDGH. */
__attribute__((target("sha,sse4.1"), always_inline))
static inline void rounds4(__m128i *abef, __m128i *cdgh, __m128i w, const uint32_t *k)
{
	__m128i m = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)k));

	*cdgh = _mm_sha256rnds2_epu32(*cdgh, *abef, m);
	*abef = _mm_sha256rnds2_epu32(*abef, *cdgh, _mm_shuffle_epi32(m, 0x0e));
}

/* Message words 4i..4i+3 from those of the four groups before. */
__attribute__((target("sha,sse4.1"), always_inline))
static inline __m128i next_words(__m128i w4, __m128i w3, __m128i w2, __m128i w1)
{
	return _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w4, w3),
						  _mm_alignr_epi8(w1, w2, 4)), w1);
}

__attribute__((target("sha,sse4.1")))
static void sha256_blocks_ni(uint32_t h[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
	__m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xb1);
	__m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1b);
	__m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);
	__m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xf0);

	for (; n--; p += 64) {
		__m128i abef0 = abef, cdgh0 = cdgh;
		__m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), bswap);
		__m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), bswap);
		__m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), bswap);
		__m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), bswap);
		for (int i = 0; i < 64; i += 16) {
			if (i) {
				w0 = next_words(w0, w1, w2, w3);
				w1 = next_words(w1, w2, w3, w0);
				w2 = next_words(w2, w3, w0, w1);
				w3 = next_words(w3, w0, w1, w2);
			}
			rounds4(&abef, &cdgh, w0, K + i);
			rounds4(&abef, &cdgh, w1, K + i + 4);
			rounds4(&abef, &cdgh, w2, K + i + 8);
			rounds4(&abef, &cdgh, w3, K + i + 12);
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	__m128i feba = _mm_shuffle_epi32(abef, 0x1b);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
	_mm_storeu_si128((__m128i *)h, _mm_blend_epi16(feba, dchg, 0xf0));
	_mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

static void sha256_blocks(uint32_t h[8], const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (csum_cpu(CPU_SHA)) {
		sha256_blocks_ni(h, p, n);
		return;
	}
#endif
	for (; n--; p += 64)
		sha256_block(h, p);
}

void sha256(const void *buf, size_t len, uint8_t out[32])
{
	uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	const uint8_t *p = buf;
	uint8_t tail[128] = { 0 };
	size_t rest = len % 64, tail_len = rest < 56 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;

	sha256_blocks(h, p, len / 64);
	p += len / 64 * 64;
	/* Padding: 0x80, zeros, then the message length in bits, big-endian. */
	if (rest)
		memcpy(tail, p, rest);
	tail[rest] = 0x80;
	for (int i = 0; i < 8; i++)
		tail[tail_len - 1 - i] = (uint8_t)(bits >> 8 * i);
	sha256_blocks(h, tail, tail_len / 64);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}
#endif
