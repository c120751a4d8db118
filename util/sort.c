//build:Oz
/* sort_stable: a bottom-up merge sort (insertion sort when no memory) for arrays that
 * need a stable order without musl's qsort (see sort.h). */
#include "sort.h"
#include <stdlib.h>
#include <string.h>

void sort_stable(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *src = base, *dst = n > 1 ? malloc(n * size) : NULL, *t;

	if (!dst) {
		for (size_t i = 1; i < n; i++)
			for (char *p = src + i * size; p > src && cmp(p - size, p) > 0; p -= size)
				for (size_t b = 0; b < size; b++) {
					char c = p[b];

					p[b] = p[b - size];
					p[b - size] = c;
				}
		return;
	}
	/* runs of width sorted in src are merged pairwise into dst, then they swap */
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = mid + width < n ? mid + width : n, i = lo, j = mid, k = lo;

			while (k < hi) {
				size_t from = j < hi && (i == mid ||
					      cmp(src + j * size, src + i * size) < 0) ? j++ : i++;

				memcpy(dst + k++ * size, src + from * size, size);
			}
		}
		t = src, src = dst, dst = t;
	}
	if (src != base) {
		memcpy(base, src, n * size);
		dst = src;
	}
	free(dst);
}

size_t lower_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, b + mid * size + off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
