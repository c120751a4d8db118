/* Compression algorithms of btrfs file extents: zlib, lzo (btrfs framing), zstd. */
//config:config COMPRESS_ZLIB
//config:	bool "zlib compression"
//config:	default y
//config:	help
//config:	  Read (and write) file extents compressed with zlib.
//config:config COMPRESS_LZO
//config:	bool "lzo compression"
//config:	default y
//config:	help
//config:	  Read (and write) file extents compressed with lzo.
//config:config COMPRESS_ZSTD
//config:	bool "zstd compression"
//config:	default y
//config:	help
//config:	  Read (and write) file extents compressed with zstd.
#include "config.h"
#include "fs.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if CFG_COMPRESS_ZLIB
#include <zlib.h>
#endif
#if CFG_COMPRESS_LZO
#include <lzo/lzo1x.h>
#endif
#if CFG_COMPRESS_ZSTD
#include "util/zstd_enc.h"
#include <zstd.h>
#endif

#if CFG_COMPRESS_ZLIB
/* A zlib stream (with header); output stops when out is full. The z_stream is
 * kept in *zp and reset for each call. */
static int zlib_decompress(void **zp, const void *in, size_t in_len, void *out, size_t out_len,
			   size_t *got)
{
	z_stream *z = *zp;
	int ret;

	if (!z) {
		z = calloc(1, sizeof(*z));
		if (!z || inflateInit(z) != Z_OK) {
			free(z);
			return -ENOMEM;
		}
		*zp = z;
	} else if (inflateReset(z) != Z_OK) {
		return -ENOMEM;
	}
	z->next_in = (Bytef *)in;
	z->avail_in = (uInt)in_len;
	z->next_out = out;
	z->avail_out = (uInt)out_len;
	ret = inflate(z, Z_FINISH);
	*got = out_len - z->avail_out;
	if (ret == Z_STREAM_END || ((ret == Z_BUF_ERROR || ret == Z_OK) && !z->avail_out))
		return 0;
	return -EUCLEAN;
}

static void zlib_inflater_free(void *z)
{
	if (z)
		inflateEnd(z);
	free(z);
}

/* compress2 equivalent with the deflate state kept in *zp (made at level, then
 * reset for each call). */
static int zlib_compress(void **zp, int level, const void *in, size_t in_len, void *out,
			 size_t out_cap, size_t *out_len)
{
	z_stream *z = *zp;

	if (!z) {
		z = calloc(1, sizeof(*z));
		if (!z || deflateInit(z, level) != Z_OK) {
			free(z);
			return -ENOMEM;
		}
		*zp = z;
	} else if (deflateReset(z) != Z_OK) {
		return -ENOMEM;
	}
	z->next_in = (Bytef *)in;
	z->avail_in = (uInt)in_len;
	z->next_out = out;
	z->avail_out = (uInt)out_cap;
	if (deflate(z, Z_FINISH) != Z_STREAM_END)
		return -E2BIG;
	*out_len = out_cap - z->avail_out;
	return 0;
}

static void zlib_deflater_free(void *z)
{
	if (z)
		deflateEnd(z);
	free(z);
}
#endif

#if CFG_COMPRESS_ZSTD
/* One zstd frame; output stops when out is full. The context is kept in *dp. */
static int zstd_decompress(void **dp, const void *in, size_t in_len, void *out, size_t out_len,
			   size_t *got)
{
	ZSTD_inBuffer ib = { in, in_len, 0 };
	ZSTD_outBuffer ob = { out, out_len, 0 };
	ZSTD_DCtx *d = *dp;
	int ret = 0;

	if (!d && !(d = *dp = ZSTD_createDCtx()))
		return -ENOMEM;
	ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
	while (ib.pos < ib.size && ob.pos < ob.size) {
		size_t r = ZSTD_decompressStream(d, &ob, &ib);
		if (ZSTD_isError(r)) {
			ret = -EUCLEAN;
			break;
		}
		if (r == 0)
			break;          /* frame done (btrfs writes one; padding may follow) */
	}
	*got = ob.pos;
	return ret;
}

#endif

#if CFG_COMPRESS_LZO
/* btrfs lzo framing: le32 total length (including itself), then segments of
 * (le32 compressed length, lzo1x data), each decompressing to at most one
 * sector. A segment header never straddles a sector boundary: when fewer than
 * 4 bytes remain in the sector, the rest is padding. */
#define LZO_HDR 4

static size_t lzo_skip_padding(size_t pos, uint32_t sectorsize)
{
	size_t left = sectorsize - pos % sectorsize;
	return left < LZO_HDR ? pos + left : pos;
}

static int lzo_decompress(const void *in, size_t in_len, void *out, size_t out_len, size_t *got,
			  uint32_t sectorsize)
{
	const uint8_t *src = in;
	uint8_t *seg = malloc(sectorsize);
	size_t total, pos = LZO_HDR, done = 0;
	int ret = 0;

	if (!seg)
		return -ENOMEM;
	total = in_len >= LZO_HDR ? get_le32(src) : 0;
	if (total < LZO_HDR || total > in_len)
		ret = -EUCLEAN;
	while (!ret && pos < total && done < out_len) {
		lzo_uint n = sectorsize;
		size_t len;

		pos = lzo_skip_padding(pos, sectorsize);
		if (pos + LZO_HDR > total)
			break;
		len = get_le32(src + pos);
		pos += LZO_HDR;
		if (len > total - pos || lzo1x_decompress_safe(src + pos, len, seg, &n, NULL) != LZO_E_OK) {
			ret = -EUCLEAN;
			break;
		}
		if (n > out_len - done)
			n = out_len - done;
		memcpy((uint8_t *)out + done, seg, n);
		done += n;
		pos += len;
	}
	free(seg);
	*got = done;
	return ret;
}

/* Appends one segment at *pos (padding first when the header would straddle a sector). */
static int lzo_put_segment(uint8_t *dst, size_t cap, size_t *pos, const uint8_t *seg, size_t len,
			   uint32_t sectorsize)
{
	size_t at = lzo_skip_padding(*pos, sectorsize);

	if (at + LZO_HDR + len > cap)
		return -E2BIG;
	memset(dst + *pos, 0, at - *pos);
	put_le32(dst + at, (uint32_t)len);
	memcpy(dst + at + LZO_HDR, seg, len);
	*pos = at + LZO_HDR + len;
	return 0;
}

static int lzo_compress(void **workp, const void *in, size_t in_len, void *out, size_t out_cap,
			size_t *out_len, uint32_t sectorsize)
{
	size_t seg_cap = sectorsize + sectorsize / 16 + 64 + 3, pos = LZO_HDR;
	uint8_t *seg = malloc(seg_cap);
	int ret = seg ? 0 : -ENOMEM;

	if (!ret && !*workp && !(*workp = malloc(LZO1X_1_MEM_COMPRESS)))
		ret = -ENOMEM;
	if (!ret && out_cap < LZO_HDR)
		ret = -E2BIG;
	for (size_t off = 0; !ret && off < in_len; off += sectorsize) {
		lzo_uint n = seg_cap;
		size_t chunk = in_len - off < sectorsize ? in_len - off : sectorsize;

		if (lzo1x_1_compress((const uint8_t *)in + off, chunk, seg, &n, *workp) != LZO_E_OK)
			ret = -EUCLEAN;
		else
			ret = lzo_put_segment(out, out_cap, &pos, seg, n, sectorsize);
	}
	free(seg);
	if (!ret) {
		put_le32(out, (uint32_t)pos);
		*out_len = pos;
	}
	return ret;
}
#endif

int fs_decompress(struct fs_inflater *inf, int type, const void *in, size_t in_len, void *out,
		  size_t out_len, size_t *got, uint32_t sectorsize)
{
	*got = 0;
	(void)inf; (void)in; (void)in_len; (void)out; (void)out_len; (void)sectorsize;
	switch (type) {
#if CFG_COMPRESS_ZLIB
	case FS_COMPRESS_ZLIB:
		return zlib_decompress(&inf->zlib, in, in_len, out, out_len, got);
#endif
#if CFG_COMPRESS_LZO
	case FS_COMPRESS_LZO:
		return sectorsize ? lzo_decompress(in, in_len, out, out_len, got, sectorsize) : -EINVAL;
#endif
#if CFG_COMPRESS_ZSTD
	case FS_COMPRESS_ZSTD:
		return zstd_decompress(&inf->zstd, in, in_len, out, out_len, got);
#endif
	}
	return -ENOTSUP;
}

void fs_inflater_free(struct fs_inflater *inf)
{
#if CFG_COMPRESS_ZLIB
	zlib_inflater_free(inf->zlib);
#endif
#if CFG_COMPRESS_ZSTD
	ZSTD_freeDCtx(inf->zstd);
#endif
	inf->zlib = inf->zstd = NULL;
}

int fs_compress(struct fs_deflater *def, int type, const void *in, size_t in_len, void *out,
		size_t out_cap, size_t *out_len, uint32_t sectorsize)
{
	int level = def->level ? def->level : FS_COMPRESS_DEFAULT_LEVEL, ret = -ENOTSUP;

	(void)def; (void)in; (void)out; (void)out_cap; (void)out_len; (void)sectorsize; (void)level;
	switch (type) {
#if CFG_COMPRESS_ZLIB
	case FS_COMPRESS_ZLIB:
		ret = zlib_compress(&def->zlib, level, in, in_len, out, out_cap, out_len);
		break;
#endif
#if CFG_COMPRESS_LZO
	case FS_COMPRESS_LZO:
		ret = sectorsize ? lzo_compress(&def->lzo, in, in_len, out, out_cap, out_len, sectorsize)
				 : -EINVAL;
		break;
#endif
#if CFG_COMPRESS_ZSTD
	case FS_COMPRESS_ZSTD:
		ret = zstd_encode(&def->zstd, level, in, in_len, out, out_cap, out_len);
		break;
#endif
	}
	if (!ret && *out_len >= in_len)
		ret = -E2BIG;
	return ret;
}

void fs_deflater_free(struct fs_deflater *def)
{
#if CFG_COMPRESS_ZLIB
	zlib_deflater_free(def->zlib);
#endif
	free(def->zstd);
	free(def->lzo);
	def->zlib = def->zstd = def->lzo = NULL;
}
