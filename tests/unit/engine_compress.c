/* Compression round trips and corrupt input for zlib, lzo (btrfs framing), zstd. */
#include "unit.h"
#include "fs/core/fs.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LEN (3 * 4096 + 1000)

static void fill(uint8_t *b, size_t n)
{
	uint32_t s = 1;
	for (size_t i = 0; i < n; i++) {
		s = s * 1103515245 + 12345;
		b[i] = (i / 64) % 3 ? (uint8_t)(s >> 24) % 4 + 'a' : (uint8_t)'x';
	}
}

TEST(roundtrip_and_truncation)
{
	static uint8_t in[LEN], comp[2 * LEN], out[LEN + 4096];
	const int types[] = { FS_COMPRESS_ZLIB, FS_COMPRESS_LZO, FS_COMPRESS_ZSTD };
	struct fs_inflater inf = { 0 };   /* one for all calls: reused after corrupt input too */
	struct fs_deflater def = { 0 };

	fill(in, LEN);
	for (int t = 0; t < 3; t++) {
		size_t clen = 0, got = 0;
		int r = fs_compress(&def, types[t], in, LEN, comp, sizeof(comp), &clen, 4096);

		if (r == -ENOTSUP)
			continue;
		CHECK(r == 0 && clen < LEN);
		CHECK(fs_decompress(&inf, types[t], comp, clen, out, LEN, &got, 4096) == 0);
		CHECK(got == LEN && !memcmp(in, out, LEN));
		/* output limited to one sector (inline extents): no error, one sector out */
		CHECK(fs_decompress(&inf, types[t], comp, clen, out, 4096, &got, 4096) == 0 && got == 4096);
		for (size_t cut = 0; cut < clen; cut += 7) {
			memset(out, 0, sizeof(out));
			fs_decompress(&inf, types[t], comp, cut, out, LEN, &got, 4096);
			CHECK(got <= LEN);
		}
		for (size_t i = 0; i < clen; i += 3) {
			comp[i] ^= 0x5a;
			fs_decompress(&inf, types[t], comp, clen, out, LEN, &got, 4096);
			CHECK(got <= LEN);
			comp[i] ^= 0x5a;
		}
	}
	CHECK(fs_decompress(&inf, 9, in, 10, out, 10, &(size_t){ 0 }, 4096) == -ENOTSUP);
	fs_inflater_free(&inf);
	fs_deflater_free(&def);
}

/* lzo: a segment header must not straddle a sector: padding is skipped. */
TEST(lzo_header_padding)
{
	static uint8_t in[8192], comp[16384], out[8192];
	struct fs_inflater inf = { 0 };
	struct fs_deflater def = { 0 };
	size_t clen, got;

	fill(in, sizeof(in));
	if (fs_compress(&def, FS_COMPRESS_LZO, in, sizeof(in), comp, sizeof(comp), &clen, 4096) == -ENOTSUP)
		return;
	/* total length in the first le32; every segment header starts with >= 4 bytes left in its sector */
	CHECK(get_le32(comp) == clen);
	CHECK(fs_decompress(&inf, FS_COMPRESS_LZO, comp, clen, out, sizeof(out), &got, 4096) == 0);
	CHECK(got == sizeof(out) && !memcmp(in, out, sizeof(out)));
	put_le32(comp, (uint32_t)clen + 100);   /* total beyond the input */
	CHECK(fs_decompress(&inf, FS_COMPRESS_LZO, comp, clen, out, sizeof(out), &got, 4096) == -EUCLEAN);
	fs_inflater_free(&inf);
	fs_deflater_free(&def);
}

/* Words from a small vocabulary: compresses well, and better at higher levels. */
static void fill_words(uint8_t *b, size_t n)
{
	static const char *const words[] = { "extent ", "chunk ", "tree ", "block ", "group ",
					     "inode ", "root ", "csum ", "leaf ", "node " };
	uint32_t s = 7;
	size_t i = 0;

	while (i < n) {
		const char *w;
		s = s * 1103515245 + 12345;
		w = words[(s >> 16) % 10];
		while (*w && i < n)
			b[i++] = (uint8_t)*w++;
	}
}

/* The level of the deflater is used: the highest level makes smaller output than
 * the lowest, and both decompress to the input. */
TEST(compression_levels)
{
	static uint8_t in[128 * 1024], comp[2][128 * 1024], out[128 * 1024];
	const struct { int type, max; } algos[] = {
		{ FS_COMPRESS_ZLIB, FS_ZLIB_MAX_LEVEL }, { FS_COMPRESS_ZSTD, FS_ZSTD_MAX_LEVEL },
	};
	struct fs_inflater inf = { 0 };

	fill_words(in, sizeof(in));
	for (int a = 0; a < 2; a++) {
		size_t clen[2], got;
		int r = 0;

		for (int k = 0; k < 2 && !r; k++) {
			struct fs_deflater def = { .level = k ? algos[a].max : 1 };
			r = fs_compress(&def, algos[a].type, in, sizeof(in), comp[k], sizeof(comp[k]), &clen[k], 4096);
			fs_deflater_free(&def);
			CHECK(r == 0 || r == -ENOTSUP);
			if (!r) {
				CHECK(fs_decompress(&inf, algos[a].type, comp[k], clen[k], out, sizeof(out), &got, 4096) == 0);
				CHECK(got == sizeof(in) && !memcmp(in, out, sizeof(in)));
			}
		}
		if (!r)
			CHECK(clen[1] < clen[0]);
	}
	fs_inflater_free(&inf);
}
