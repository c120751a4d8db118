/* zstd compression of 128 KiB chunks (btrfs compressed extents), util/zstd_enc.c against
 * libzstd's compressor (only in the glibc build: the musl deps have libzstd's decoder
 * only), at levels 1, 3, 9 and 15. Usage: zstd FILE... (each file one corpus). Prints
 * per file and level the compressed size and speed of both, and the ratios. */
#include "util/zstd_enc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define CHUNK ZSTD_ENC_MAX_INPUT

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned char *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else
		buf = (free(buf), NULL);
	if (f)
		fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	static const int levels[] = { 1, 3, 9, 15 };
	static unsigned char out[CHUNK + 64], back[CHUNK];
	ZSTD_CCtx *ref = ZSTD_createCCtx();
	void *ours = NULL;

	for (int a = 1; a < argc; a++) {
		size_t len = 0;
		unsigned char *buf = load(argv[a], &len);

		if (!buf) {
			fprintf(stderr, "cannot read %s\n", argv[a]);
			return 1;
		}
		for (int l = 0; l < 4; l++) {
			size_t size[2] = { 0, 0 };
			double secs[2] = { 0, 0 };

			for (size_t off = 0; off < len; off += CHUNK) {
				size_t n = len - off < CHUNK ? len - off : CHUNK, olen = 0, r;
				double t = cpu_now();

				if (zstd_encode(&ours, levels[l], buf + off, n, out, sizeof(out), &olen) ||
				    ZSTD_decompress(back, sizeof(back), out, olen) != n || memcmp(back, buf + off, n)) {
					fprintf(stderr, "round trip failed: %s level %d\n", argv[a], levels[l]);
					return 1;
				}
				secs[0] += cpu_now() - t;
				t = cpu_now();
				r = ZSTD_compressCCtx(ref, out, sizeof(out), buf + off, n, levels[l]);
				secs[1] += cpu_now() - t;
				size[0] += olen < n ? olen : n;         /* btrfs keeps what does not shrink */
				size[1] += !ZSTD_isError(r) && r < n ? r : n;
			}
			printf("%s level %2d: %8zu bytes %6.1f MB/s, libzstd %8zu bytes %6.1f MB/s: size x%.3f, speed x%.2f\n",
			       argv[a], levels[l], size[0], len / secs[0] / 1e6, size[1], len / secs[1] / 1e6,
			       (double)size[0] / size[1], secs[1] / secs[0]);
		}
		free(buf);
	}
	free(ours);
	ZSTD_freeCCtx(ref);
	return 0;
}
