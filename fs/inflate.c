/* Decompression with a reused context (see inflate.h). */
#include "config.h"
#include "inflate.h"
#include <errno.h>
#if CFG_COMPRESS_ZSTD
#include <zstd.h>

/* One zstd frame into out; output stops when out is full (as fs_decompress). */
static int zstd_inflate(ZSTD_DCtx *d, const void *in, size_t in_len, void *out, size_t out_len,
			size_t *got)
{
	ZSTD_inBuffer ib = { in, in_len, 0 };
	ZSTD_outBuffer ob = { out, out_len, 0 };
	int ret = 0;

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

int fs_inflate(struct fs_inflater *inf, int type, const void *in, size_t in_len, void *out,
	       size_t out_len, size_t *got, uint32_t sectorsize)
{
	(void)inf;  /* unused when zstd is not built in */
#if CFG_COMPRESS_ZSTD
	if (type == FS_COMPRESS_ZSTD) {
		*got = 0;
		if (!inf->zstd)
			inf->zstd = ZSTD_createDCtx();
		if (!inf->zstd)
			return -ENOMEM;
		return zstd_inflate(inf->zstd, in, in_len, out, out_len, got);
	}
#endif
	return fs_decompress(type, in, in_len, out, out_len, got, sectorsize);
}

void fs_inflater_free(struct fs_inflater *inf)
{
#if CFG_COMPRESS_ZSTD
	ZSTD_freeDCtx(inf->zstd);
#endif
	inf->zstd = NULL;
}
