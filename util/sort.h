/* A sort for arrays of small handles (offsets, indices) ordered through a context,
 * instead of qsort: musl's qsort (smoothsort) moves every element with a memcpy
 * call, and its comparator cannot take a context.
 *
 * SORT_DEFINE(name, T, CTX, LESS) defines
 *     static void name(CTX ctx, T *v, size_t n)
 * sorting v[0..n) so that LESS(ctx, a, b) (a and b of type T: a before b) holds
 * wherever it can: quicksort (median of three; the smaller side by recursion, so
 * the depth stays logarithmic) and insertion sort for short ranges. Not stable. */
#ifndef UTIL_SORT_H
#define UTIL_SORT_H
#include <stddef.h>

/* qsort(base, n, size, cmp), but stable: equal elements keep their order, as with
 * glibc's qsort (a merge sort), whose order the reference tools print. For the small
 * arrays of the commands (musl's qsort is 2 KB); a merge sort through a buffer of
 * n * size bytes, an insertion sort when there is no memory for it. */
void sort_stable(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#define SORT_DEFINE(name, T, CTX, LESS)                                               \
static void name(CTX ctx, T *v, size_t n)                                             \
{                                                                                     \
	size_t lo = 0, hi = n;                                                        \
	T t;                                                                          \
                                                                                      \
	while (hi - lo > 16) {                                                        \
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi - 1;                  \
		T pivot;                                                              \
                                                                                      \
		if (LESS(ctx, v[mid], v[lo]))                                         \
			t = v[mid], v[mid] = v[lo], v[lo] = t;                        \
		if (LESS(ctx, v[hi - 1], v[lo]))                                      \
			t = v[hi - 1], v[hi - 1] = v[lo], v[lo] = t;                  \
		if (LESS(ctx, v[hi - 1], v[mid]))                                     \
			t = v[hi - 1], v[hi - 1] = v[mid], v[mid] = t;                \
		pivot = v[mid];                                                       \
		for (;;) {                                                            \
			while (LESS(ctx, v[i], pivot))                                \
				i++;                                                  \
			while (LESS(ctx, pivot, v[j]))                                \
				j--;                                                  \
			if (i >= j)                                                   \
				break;                                                \
			t = v[i], v[i] = v[j], v[j] = t;                              \
			i++;                                                          \
			j--;                                                          \
		}                                                                     \
		/* [lo, j] <= pivot <= [j + 1, hi) */                                 \
		if (j + 1 - lo < hi - (j + 1)) {                                      \
			name(ctx, v + lo, j + 1 - lo);                                \
			lo = j + 1;                                                   \
		} else {                                                              \
			name(ctx, v + j + 1, hi - (j + 1));                           \
			hi = j + 1;                                                   \
		}                                                                     \
	}                                                                             \
	for (size_t i = lo + 1; i < hi; i++) {                                        \
		T x = v[i];                                                           \
		size_t j = i;                                                         \
                                                                                      \
		while (j > lo && LESS(ctx, x, v[j - 1])) {                            \
			v[j] = v[j - 1];                                              \
			j--;                                                          \
		}                                                                     \
		v[j] = x;                                                             \
	}                                                                             \
}

#endif
