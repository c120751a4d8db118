/* sort_stable: ordered, equal keys keep their order, any element size. */
#include <stdint.h>
#include <string.h>
#include "unit.h"
#include "util/sort.h"

struct rec {
	uint32_t key, seq;
	char pad[3];   /* an element size that is not a power of two */
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int sorted_and_stable(const struct rec *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[i - 1].key > r[i].key || (r[i - 1].key == r[i].key && r[i - 1].seq > r[i].seq))
			return 0;
	return 1;
}

TEST(sort_stable_orders_and_keeps_ties)
{
	static struct rec r[1500];
	uint64_t x = 42;
	size_t sizes[] = { 0, 1, 2, 3, 7, 8, 9, 16, 33, 64, 65, 100, 1000, 1500 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];

		for (uint32_t range = 1; range <= 1000; range *= 10) {
			uint64_t sum = 0, after = 0;

			for (size_t i = 0; i < n; i++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				r[i].key = (uint32_t)(x >> 33) % range;
				r[i].seq = (uint32_t)i;
				memset(r[i].pad, (int)i, sizeof(r[i].pad));
				sum += r[i].key * 1000003ULL + r[i].seq;
			}
			sort_stable(r, n, sizeof(r[0]), rec_cmp);
			for (size_t i = 0; i < n; i++) {
				after += r[i].key * 1000003ULL + r[i].seq;
				CHECK(r[i].pad[2] == (char)r[i].seq);
			}
			CHECK(sum == after);
			CHECK(sorted_and_stable(r, n));
		}
	}
}
