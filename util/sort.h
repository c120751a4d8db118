/* A sort for arrays of small handles (offsets, indices) ordered through a context,
 * instead of qsort: musl's qsort (smoothsort) moves every element with a memcpy
 * call, and its comparator cannot take a context.
 *
 * SORT_DEFINE(name, T, CTX, LESS) defines
 *     static void name(CTX ctx, T *v, size_t n)
 * sorting v[0..n) so that LESS(ctx, a, b) (a and b of type T: a before b) holds
 * wherever it can (and name_split, its partition step, to sort the sides apart):
 * quicksort (median of three; the smaller side by recursion, so
 * the depth stays logarithmic) and insertion sort for short ranges. Not stable. */
#ifndef UTIL_SORT_H
#define UTIL_SORT_H
#include <stddef.h>
#include <stdint.h>

/* qsort(base, n, size, cmp), but stable: equal elements keep their order, as with
 * glibc's qsort (a merge sort), whose order the reference tools print. For the small
 * arrays of the commands (musl's qsort is 2 KB); a merge sort through a buffer of
 * n * size bytes, an insertion sort when there is no memory for it. */
void sort_stable(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* In an array of n elements of size bytes sorted by the uint64_t at byte offset off of
 * each: the index of the first whose key is not below key (n when none). */
size_t lower_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key);

#define SORT_DEFINE(name, T, CTX, LESS)                                               \
/* One partition step (n > 2): returns k, v[0..k) <= pivot <= v[k..n). */            \
static __attribute__((unused)) size_t name##_split(CTX ctx, T *v, size_t n)           \
{                                                                                     \
	size_t mid = n / 2, i = 0, j = n - 1;                                         \
	T t, pivot;                                                                   \
                                                                                      \
	if (LESS(ctx, v[mid], v[0]))                                                  \
		t = v[mid], v[mid] = v[0], v[0] = t;                                  \
	if (LESS(ctx, v[n - 1], v[0]))                                                \
		t = v[n - 1], v[n - 1] = v[0], v[0] = t;                              \
	if (LESS(ctx, v[n - 1], v[mid]))                                              \
		t = v[n - 1], v[n - 1] = v[mid], v[mid] = t;                          \
	pivot = v[mid];                                                               \
	for (;;) {                                                                    \
		while (LESS(ctx, v[i], pivot))                                        \
			i++;                                                          \
		while (LESS(ctx, pivot, v[j]))                                        \
			j--;                                                          \
		if (i >= j)                                                           \
			return j + 1;                                                 \
		t = v[i], v[i] = v[j], v[j] = t;                                      \
		i++;                                                                  \
		j--;                                                                  \
	}                                                                             \
}                                                                                     \
                                                                                      \
static void name(CTX ctx, T *v, size_t n)                                             \
{                                                                                     \
	size_t lo = 0, hi = n;                                                        \
                                                                                      \
	while (hi - lo > 16) {                                                        \
		size_t k = lo + name##_split(ctx, v + lo, hi - lo);                   \
                                                                                      \
		/* the smaller side by recursion */                                   \
		if (k - lo < hi - k) {                                                \
			name(ctx, v + lo, k - lo);                                    \
			lo = k;                                                       \
		} else {                                                              \
			name(ctx, v + k, hi - k);                                     \
			hi = k;                                                       \
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
