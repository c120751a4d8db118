/* External sorter: in-memory and spilled (many runs) give the
 * same ordered output, duplicates kept, peek agrees with next, reading again
 * after a rewind gives it all again. */
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "util/xsort.h"

struct rec {
	uint64_t key, payload;
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* KEYS_ALMOST: ascending but for one smaller key now and then (a run that came
 * nearly in order is sorted all the same) */
enum { KEYS_RANDOM, KEYS_EQUAL, KEYS_ASCENDING, KEYS_DESCENDING, KEYS_ALMOST };

static uint64_t make_key(int kind, size_t i, size_t n, uint64_t *x)
{
	switch (kind) {
	case KEYS_EQUAL: return 7;
	case KEYS_ASCENDING: return i;
	case KEYS_DESCENDING: return n - i;
	case KEYS_ALMOST: return i % 10007 == 5000 ? i / 2 : i;
	}
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (*x >> 33) % (n / 2 + 1);        /* plenty of duplicates */
}

/* Sorts n records with mem bytes; 1 when the output is ordered and complete. */
static int sort_keys_ok(size_t n, size_t mem, int kind)
{
	struct xsort *s = xsort_new(sizeof(struct rec), rec_cmp, mem, "/tmp");
	uint64_t sum_in = 0, sum_out = 0, prev = 0, x = 12345;
	struct rec r;
	size_t got = 0;
	int ok = s != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		r.key = make_key(kind, i, n, &x);
		r.payload = i;
		sum_in += r.key;
		ok = xsort_add(s, &r) == 0;
	}
	ok = ok && xsort_count(s) == n && xsort_rewind(s) == -EINVAL && xsort_finish(s) == 0;
	/* a third read, then all of it again from the start */
	for (size_t i = 0; ok && i < n / 3; i++)
		ok = xsort_next(s, &r) == 1;
	ok = ok && xsort_rewind(s) == 0;
	while (ok) {
		const struct rec *p = xsort_peek(s);
		int ret = xsort_next(s, &r);

		if (ret == 0) {
			ok = p == NULL;
			break;
		}
		ok = ret == 1 && p && r.key >= prev;
		prev = r.key;
		sum_out += r.key;
		got++;
	}
	xsort_free(s);
	return ok && got == n && sum_in == sum_out;
}

static int sort_ok(size_t n, size_t mem)
{
	return sort_keys_ok(n, mem, KEYS_RANDOM);
}

TEST(xsort_key_patterns)
{
	CHECK(sort_keys_ok(50000, 1 << 20, KEYS_EQUAL));
	CHECK(sort_keys_ok(50000, 1 << 20, KEYS_ASCENDING));
	CHECK(sort_keys_ok(50000, 1 << 20, KEYS_DESCENDING));
	CHECK(sort_keys_ok(50000, 256 << 10, KEYS_EQUAL));
	CHECK(sort_keys_ok(50000, 1 << 20, KEYS_ALMOST));
	CHECK(sort_keys_ok(50000, 256 << 10, KEYS_ALMOST));
	CHECK(sort_keys_ok(50000, 256 << 10, KEYS_ASCENDING));
}

TEST(xsort_in_memory)
{
	CHECK(sort_ok(1000, 1 << 20));
	CHECK(sort_ok(0, 1 << 20));
}

TEST(xsort_spilled_runs)
{
	/* 256 KiB of memory = 16384 records per run: about 12 runs */
	CHECK(sort_ok(200000, 256 << 10));
	/* about 60 runs: their read buffers outgrow the collecting buffer */
	CHECK(sort_ok(1000000, 256 << 10));
}

/* Variable-size records: a key, then key % 3000 bytes of a pattern derived from
 * it (some larger than the staging buffer); order, count and contents survive. */
static int var_len(uint64_t key) { return (int)(key % 3000 + (key % 97 == 0 ? 70000 : 0)); }

static int sort_var_ok(size_t n, size_t mem)
{
	struct xsort *s = xsort_new(0, rec_cmp, mem, "/tmp");
	static uint8_t buf[XSORT_MAX_REC];
	uint64_t prev = 0, x = 99, key;
	size_t got = 0;
	int ok = s != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		uint64_t seq = i;        /* 8 bytes whatever the width of size_t */

		key = make_key(KEYS_RANDOM, i, n, &x);
		memcpy(buf, &key, 8);
		memcpy(buf + 8, &seq, 8);
		memset(buf + 16, (int)(key & 0xff), (size_t)var_len(key));
		ok = xsort_add_var(s, buf, 16 + (size_t)var_len(key)) == 0;
	}
	ok = ok && xsort_add(s, buf) == -EINVAL && xsort_finish(s) == 0;
	while (ok) {
		size_t sz = xsort_peek_size(s);
		int ret = xsort_next(s, buf);

		if (ret == 0)
			break;
		memcpy(&key, buf, 8);
		ok = ret == 1 && key >= prev && sz == 16 + (size_t)var_len(key) &&
		     buf[sz - 1] == (uint8_t)(key & 0xff) && buf[16] == (uint8_t)(key & 0xff);
		prev = key;
		got++;
	}
	xsort_free(s);
	return ok && got == n;
}

TEST(xsort_variable_size)
{
	CHECK(sort_var_ok(3000, 64 << 20));     /* in memory */
	CHECK(sort_var_ok(3000, 1 << 20));      /* about 8 runs */
}

/* By key, then payload from the largest: what a keyed sort must keep (its entries decide
 * on the key, the records on the rest). */
static int rec_cmp_then_payload(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->payload > y->payload ? -1 : x->payload < y->payload;
}

static int sort_keyed_ok(size_t n, size_t mem, int thread)
{
	struct xsort *s = xsort_new(sizeof(struct rec), rec_cmp_then_payload, mem, "/tmp");
	struct rec r, prev = { 0, UINT64_MAX };
	uint64_t x = 777;
	size_t got = 0;
	int ok = s != NULL;

	if (ok && thread)
		xsort_use_thread(s);
	if (ok)
		xsort_set_key(s, 0);
	for (size_t i = 0; ok && i < n; i++) {
		r.key = make_key(KEYS_RANDOM, i, n, &x);
		r.payload = i;
		ok = xsort_add(s, &r) == 0;
	}
	ok = ok && xsort_finish(s) == 0;
	while (ok && xsort_next(s, &r) == 1) {
		ok = rec_cmp_then_payload(&prev, &r) < 0;
		prev = r;
		got++;
	}
	xsort_free(s);
	return ok && got == n;
}

TEST(xsort_keyed)
{
	CHECK(sort_keyed_ok(50000, 8 << 20, 0));        /* in memory */
	CHECK(sort_keyed_ok(50000, 8 << 20, 1));        /* halves on two threads */
	CHECK(sort_keyed_ok(200000, 256 << 10, 1));     /* spilled runs, merged by key */
}
