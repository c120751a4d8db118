/* The zstd frame encoder: round trips through libzstd's decoder for every kind of input
 * and level, frame header, output bound, random inputs; sequences the parser rarely makes
 * through the block writer (its static functions, hence the include). */
#include "unit.h"
#include "util/zstd_enc.c"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define MAX ZSTD_ENC_MAX_INPUT

static uint32_t seed = 1;

static uint32_t rnd(void)       /* xorshift32 */
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

enum { RANDOM, ZEROS, TEXT, REPEATS, RANDOM_REPEATS, SMALL_ALPHABET, HIGH_BYTES, SKEWED, KINDS };

static void fill(uint8_t *b, size_t n, int kind)
{
	static const char *const words[] = { "extent ", "chunk ", "tree ", "block ", "group ",
					     "inode ", "root ", "csum ", "leaf\n", "node, " };
	size_t i = 0;

	switch (kind) {
	case RANDOM:            /* incompressible */
		for (; i < n; i++)
			b[i] = (uint8_t)rnd();
		break;
	case ZEROS:
		memset(b, 0, n);
		break;
	case TEXT:
		while (i < n) {
			const char *w = words[rnd() % 10];
			while (*w && i < n)
				b[i++] = (uint8_t)*w++;
		}
		break;
	case REPEATS:           /* copies of earlier data at random distances, and noise */
	case RANDOM_REPEATS:    /* the same with random noise: raw literals */
		while (i < n) {
			size_t len = 1 + rnd() % 300, off = 1 + rnd() % (i ? i : 1);
			for (int copy = i && rnd() % 2; len-- && i < n; i++)
				b[i] = copy ? b[i - off] : (uint8_t)(rnd() % (kind == REPEATS ? 16 : 256));
		}
		break;
	case SMALL_ALPHABET:
		for (; i < n; i++)
			b[i] = (uint8_t)(rnd() % 5);
		break;
	case HIGH_BYTES:        /* literals above 128: Huffman weights need FSE */
		for (; i < n; i++)
			b[i] = (uint8_t)(128 + rnd() % 128);
		break;
	case SKEWED:            /* mostly zero, a few rare bytes: long Huffman codes */
		for (; i < n; i++) {
			uint32_t r = rnd() % 4096;
			b[i] = (uint8_t)(r < 3500 ? 0 : r < 4000 ? 1 + r % 7 : rnd());
		}
		break;
	}
}

/* Encodes in at level, decodes with libzstd; checks the frame header too. Returns the
 * frame size, 0 after a failed check. */
static size_t round_trip(void **st, int level, const uint8_t *in, size_t n)
{
	static uint8_t out[MAX + 64], back[MAX + 1];
	size_t olen = 0, got;
	int ret = zstd_encode(st, level, in, n, out, sizeof(out), &olen);

	CHECK(ret == 0);
	if (ret)
		return 0;
	/* Single_Segment: the window is the content, no larger than 128 KiB */
	CHECK(olen > 6 && (out[4] & 0x20));
	CHECK(ZSTD_getFrameContentSize(out, olen) == n);
	got = ZSTD_decompress(back, sizeof(back), out, olen);
	CHECK(!ZSTD_isError(got) && got == n && !memcmp(back, in, n));
	if (ZSTD_isError(got) || got != n || memcmp(back, in, n)) {
		fprintf(stderr, "  level %d, %zu bytes: %s\n", level, n,
			ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong data");
		return 0;
	}
	return olen;
}

TEST(tiny_inputs)
{
	const uint8_t in[3] = { 'a', 'b', 'c' };
	void *st = NULL;

	for (int level = 1; level <= 15; level++)
		for (size_t n = 0; n <= 3; n++)
			CHECK(round_trip(&st, level, in, n) == 5 + 1 + 3 + n); /* raw block */
	free(st);
}

/* Every kind of input at every level, at sizes around the format's thresholds. */
TEST(kinds_and_levels)
{
	static uint8_t in[MAX];
	static const size_t sizes[] = { 4, 31, 200, 256, 1500, 4097, 20000, 65791, 65792, MAX };
	size_t size[16];
	void *st = NULL;

	for (int kind = 0; kind < KINDS; kind++)
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			fill(in, sizes[k], kind);
			for (int level = 1; level <= 15; level++)
				CHECK((size[level] = round_trip(&st, level, in, sizes[k])) != 0);
			if (sizes[k] != MAX)
				continue;
			if (kind == RANDOM)     /* a raw block */
				CHECK(size[1] == 9 + 3 + MAX && size[15] == 9 + 3 + MAX);
			else if (kind == ZEROS) /* an RLE block */
				CHECK(size[1] == 9 + 3 + 1);
			else if (kind == TEXT)  /* effort pays */
				CHECK(size[15] < size[3] && size[3] < size[1] && size[1] < MAX / 3);
		}
	free(st);
}

/* Random inputs, levels and room: the output never passes out_cap; a frame that does not
 * fit is -E2BIG. */
TEST(random_inputs)
{
	static uint8_t in[MAX], out[MAX + 64 + 16], back[MAX];
	void *st = NULL;

	for (int i = 0; i < 300; i++) {
		size_t n = rnd() % (1u << (rnd() % 18)), cap = rnd() % 2 ? n + 32 : rnd() % (n + 32), olen;
		int level = 1 + (int)(rnd() % 15), ret;

		fill(in, n, (int)(rnd() % KINDS));
		memset(out, 0xa5, sizeof(out));
		ret = zstd_encode(&st, level, in, n, out, cap, &olen);
		for (size_t k = cap; k < cap + 16; k++)
			CHECK(out[k] == 0xa5);
		if (ret == -E2BIG) {
			CHECK(cap < n + 9 + 3);
			continue;
		}
		CHECK(ret == 0 && olen <= cap);
		if (!ret)
			CHECK(ZSTD_decompress(back, sizeof(back), out, olen) == n && !memcmp(back, in, n));
	}
	free(st);
}

TEST(input_too_large)
{
	static uint8_t in[MAX + 1], out[64];
	void *st = NULL;
	size_t olen;

	CHECK(zstd_encode(&st, 3, in, MAX + 1, out, sizeof(out), &olen) == -EINVAL);
	CHECK(zstd_encode(&st, 3, in, MAX, out, sizeof(out), &olen) == 0);     /* zeros: RLE */
	free(st);
}

/* A frame of one compressed block from sequences given by their offsets (Offset_Value as
 * the encoder computes it); exp gets what it must decode to. Returns its size. */
static size_t frame_of(const uint32_t (*spec)[3], uint32_t nseq, uint8_t *exp, uint32_t *content,
		       uint8_t *out, size_t cap)
{
	static uint8_t lit[MAX];
	struct zenc *z = zenc_new();
	struct seq *seq = z->seq;
	uint32_t rep[3] = { 1, 4, 8 }, pos = 0, nlit = 0;
	uint8_t *q = out + 12;
	int ret;

	for (uint32_t i = 0; i < nseq; i++) {
		uint32_t l = spec[i][0], len = spec[i][1], off = spec[i][2];
		for (uint32_t k = 0; k < l; k++)
			exp[pos++] = lit[nlit++] = (uint8_t)rnd();
		for (uint32_t k = 0; k < len; k++, pos++)
			exp[pos] = exp[pos - off];
		seq[i] = (struct seq){ l, len, offval_of(rep, off, l) };
		rep_update(rep, off, seq[i].offval, l);
	}
	for (; pos < *content; pos++)
		exp[pos] = lit[nlit++] = (uint8_t)rnd();
	put_le32(out, 0xFD2FB528);
	out[4] = 2 << 6 | 1 << 5;               /* Single_Segment, 4-byte content size */
	put_le32(out + 5, pos);
	*content = pos;
	ret = put_literals(&q, out + cap, lit, nlit) || put_sequences(z, &q, out + cap, nseq);
	free(z);
	if (ret)
		return 0;
	put_le(out + 9, 1 | 2 << 1 | (uint64_t)(q - out - 12) << 3, 3);
	return (size_t)(q - out);
}

static void check_frame(const uint32_t (*spec)[3], uint32_t nseq, uint32_t content)
{
	static uint8_t exp[MAX], out[MAX + 64], back[MAX];
	size_t olen = frame_of(spec, nseq, exp, &content, out, sizeof(out)), got;

	CHECK(olen > 0);
	got = ZSTD_decompress(back, sizeof(back), out, olen);
	CHECK(!ZSTD_isError(got) && got == content && !memcmp(back, exp, content));
}

TEST(sequence_extremes)
{
	static uint32_t spec[MAX_SEQ][3];
	static const uint32_t longest[][3] = {
		{ 70000, 3, 70000 }, { 0, 60000, 1 }, { 1, 1000, 60000 }, { 0, 4, 60000 },
	};
	static const uint32_t far[][3] = { { 65536, 65532, 65536 } };
	uint32_t rep[3] = { 1, 4, 8 }, n = 0, repeats[4] = { 0 };

	/* the most sequences: 4 literals, then 4-byte matches without literals, a quarter
	 * of them at a repeat offset (or the first one minus 1) */
	for (uint32_t pos = 4; pos + 4 <= MAX; pos += 4, n++) {
		uint32_t k = rnd() % 4, off = k == 3 ? rep[0] - 1 : rep[k];
		if (rnd() % 4 || !off || off > pos)
			off = 1 + rnd() % pos;
		spec[n][0] = n ? 0 : 4;
		spec[n][1] = 4;
		spec[n][2] = off;
		k = offval_of(rep, off, spec[n][0]);
		repeats[k < 4 ? k : 0]++;
		rep_update(rep, off, k, spec[n][0]);
	}
	CHECK(repeats[1] && repeats[2] && repeats[3]);
	CHECK(n >= 0x7F00);             /* Number_of_Sequences in 3 bytes */
	check_frame((const uint32_t (*)[3])spec, n, MAX);
	check_frame(longest, 4, MAX);   /* long literal and match lengths, overlapping copy */
	check_frame(far, 1, MAX);
}

/* Huffman code lengths: complete codes of at most 11 bits, also for counts that make
 * deeper trees (Fibonacci counts, small and large totals). */
TEST(huffman_lengths)
{
	uint32_t cnt[256];
	uint8_t len[256];

	for (int t = 0; t < 40; t++) {
		unsigned nsym = t < 20 ? 2 + (unsigned)t : 256, longest;
		uint32_t total = 0, kraft = 0;

		for (unsigned s = 0; s < nsym; s++) {
			if (t < 20)     /* Fibonacci counts: depth nsym - 1 */
				cnt[s] = s < 2 ? 1 : cnt[s - 1] + cnt[s - 2];
			else            /* random counts below 2^(t - 19), some absent */
				cnt[s] = rnd() % 3 ? rnd() % (1u << (t - 19)) : 0;
		}
		cnt[0] += !cnt[0];
		cnt[nsym - 1] += !cnt[nsym - 1];
		for (unsigned s = 0; s < nsym; s++)
			total += cnt[s];
		longest = huf_lengths(cnt, nsym, total, len);
		CHECK(longest <= HUF_MAX_BITS);
		for (unsigned s = 0; s < nsym; s++) {
			CHECK(!cnt[s] == !len[s] && len[s] <= longest);
			kraft += cnt[s] ? 1u << (HUF_MAX_BITS - len[s]) : 0;
		}
		CHECK(kraft == 1u << HUF_MAX_BITS);
	}
}
