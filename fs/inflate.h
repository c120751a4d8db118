/* Decompression with a context kept between calls (engine conventions, fs.h).
 * fs_decompress() sets up a fresh zstd context for every extent; with many small
 * files that setup (and the large allocation it maps and unmaps) costs more than the
 * decompression. A struct fs_inflater keeps it; other algorithms go to fs_decompress. */
#ifndef FS_INFLATE_H
#define FS_INFLATE_H
#include "fs.h"

struct fs_inflater {
	void *zstd;             /* ZSTD_DCtx, made on first use */
};

/* As fs_decompress(); release with fs_inflater_free. */
int fs_inflate(struct fs_inflater *inf, int type, const void *in, size_t in_len, void *out,
	       size_t out_len, size_t *got, uint32_t sectorsize);
void fs_inflater_free(struct fs_inflater *inf);

#endif
