/* External sort of fixed-size records: sorted runs in one temporary file, k-way merge. */
#include "check_sort.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XSORT_MIN_MEM (256u << 10)
#define XSORT_MIN_RUN_BUF (16u << 10)
#define XSORT_STAGE (64u << 10)         /* also the largest record size */

struct xsort_run {
	off_t start;            /* file offset of the run */
	size_t count;           /* records in the run */
	size_t next;            /* records of the run already loaded */
	uint8_t *buf;
	size_t buf_cap, buf_len, buf_pos;   /* in records */
};

struct xsort {
	size_t rec_size;
	xsort_cmp_fn cmp;
	size_t mem;
	const char *tmpdir;
	uint8_t *buf;           /* collecting, then the in-memory result */
	uint32_t *order;        /* buf's records by index, sorted (records never move) */
	size_t cap, len, pos;
	size_t total;
	int fd;                 /* -1 until the first spill */
	off_t file_end;
	struct xsort_run *runs;
	size_t nruns, cap_runs;
	size_t *heap;           /* run indices, smallest current record on top */
	size_t heap_len;
	int reading;
};

struct xsort *xsort_new(size_t rec_size, xsort_cmp_fn cmp, size_t mem, const char *tmpdir)
{
	struct xsort *s;

	if (!rec_size || rec_size > XSORT_STAGE || !cmp)
		return NULL;
	if (mem < XSORT_MIN_MEM)
		mem = XSORT_MIN_MEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rec_size = rec_size;
	s->cmp = cmp;
	s->mem = mem;
	s->tmpdir = tmpdir ? tmpdir : "/tmp";
	s->fd = -1;
	s->cap = mem / (rec_size + sizeof(uint32_t));
	if (s->cap < 16)
		s->cap = 16;
	if (s->cap > UINT32_MAX)
		s->cap = UINT32_MAX;
	return s;
}

static int open_tmpfile(struct xsort *s)
{
	size_t n = strlen(s->tmpdir) + 32;
	char *path = malloc(n);

	if (!path)
		return -ENOMEM;
	snprintf(path, n, "%s/btrfsck-sort.XXXXXX", s->tmpdir);
	s->fd = mkstemp(path);
	if (s->fd < 0) {
		int e = errno;
		free(path);
		return -e;
	}
	unlink(path);           /* gone when closed, even after a crash */
	free(path);
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static inline int rec_less(const struct xsort *s, uint32_t a, uint32_t b)
{
	return s->cmp(s->buf + (size_t)a * s->rec_size, s->buf + (size_t)b * s->rec_size) < 0;
}

/* Sorts order[lo, hi) by the records: quicksort (median of three, the smaller
 * side first by recursion, the larger by looping), insertion sort for short
 * ranges. Only 4-byte indices move. */
static void sort_order(struct xsort *s, size_t lo, size_t hi)
{
	uint32_t *o = s->order, t;

	while (hi - lo > 16) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi - 1;
		uint32_t pivot;

		if (rec_less(s, o[mid], o[lo]))
			t = o[mid], o[mid] = o[lo], o[lo] = t;
		if (rec_less(s, o[hi - 1], o[lo]))
			t = o[hi - 1], o[hi - 1] = o[lo], o[lo] = t;
		if (rec_less(s, o[hi - 1], o[mid]))
			t = o[hi - 1], o[hi - 1] = o[mid], o[mid] = t;
		pivot = o[mid];
		for (;;) {
			while (rec_less(s, o[i], pivot))
				i++;
			while (rec_less(s, pivot, o[j]))
				j--;
			if (i >= j)
				break;
			t = o[i], o[i] = o[j], o[j] = t;
			i++;
			j--;
		}
		/* [lo, j] <= pivot <= [j + 1, hi) */
		if (j + 1 - lo < hi - (j + 1)) {
			sort_order(s, lo, j + 1);
			lo = j + 1;
		} else {
			sort_order(s, j + 1, hi);
			hi = j + 1;
		}
	}
	for (size_t i = lo + 1; i < hi; i++) {
		uint32_t v = o[i];
		size_t j = i;

		while (j > lo && rec_less(s, v, o[j - 1])) {
			o[j] = o[j - 1];
			j--;
		}
		o[j] = v;
	}
}

static void sort_buffer(struct xsort *s)
{
	for (size_t i = 0; i < s->len; i++)
		s->order[i] = (uint32_t)i;
	if (s->len > 1)
		sort_order(s, 0, s->len);
}

/* Writes the buffer's records in sorted order at off, through a staging buffer. */
static int write_sorted(struct xsort *s, off_t off)
{
	uint8_t stage[XSORT_STAGE];
	size_t per = sizeof(stage) / s->rec_size, i = 0;
	int ret;

	while (i < s->len) {
		size_t n = 0;

		for (; n < per && i < s->len; n++, i++)
			memcpy(stage + n * s->rec_size, s->buf + (size_t)s->order[i] * s->rec_size,
			       s->rec_size);
		ret = write_all(s->fd, stage, n * s->rec_size, off);
		if (ret < 0)
			return ret;
		off += (off_t)(n * s->rec_size);
	}
	return 0;
}

/* Sorts the buffer and appends it to the temporary file as a new run. */
static int spill_run(struct xsort *s)
{
	struct xsort_run *r;
	int ret;

	if (!s->len)
		return 0;
	if (s->fd < 0 && (ret = open_tmpfile(s)) < 0)
		return ret;
	if (s->nruns == s->cap_runs) {
		size_t nc = s->cap_runs ? s->cap_runs * 2 : 16;
		void *p = realloc(s->runs, nc * sizeof(*s->runs));
		if (!p)
			return -ENOMEM;
		s->runs = p;
		s->cap_runs = nc;
	}
	sort_buffer(s);
	ret = write_sorted(s, s->file_end);
	if (ret < 0)
		return ret;
	r = &s->runs[s->nruns++];
	memset(r, 0, sizeof(*r));
	r->start = s->file_end;
	r->count = s->len;
	s->file_end += (off_t)(s->len * s->rec_size);
	s->len = 0;
	return 0;
}

int xsort_add(struct xsort *s, const void *rec)
{
	if (s->reading)
		return -EINVAL;
	if (!s->buf) {
		s->buf = malloc(s->cap * s->rec_size);
		s->order = malloc(s->cap * sizeof(*s->order));
		if (!s->buf || !s->order)
			return -ENOMEM;
	}
	if (s->len == s->cap) {
		int ret = spill_run(s);
		if (ret < 0)
			return ret;
	}
	memcpy(s->buf + s->len * s->rec_size, rec, s->rec_size);
	s->len++;
	s->total++;
	return 0;
}

/* Loads the next chunk of a run; 0 when the run is exhausted. */
static int run_fill(struct xsort *s, struct xsort_run *r)
{
	size_t want = r->count - r->next, bytes, got = 0;

	if (want > r->buf_cap)
		want = r->buf_cap;
	if (!want)
		return 0;
	bytes = want * s->rec_size;
	while (got < bytes) {
		ssize_t n = pread(s->fd, r->buf + got, bytes - got,
				  r->start + (off_t)((r->next * s->rec_size) + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	r->next += want;
	r->buf_len = want;
	r->buf_pos = 0;
	return 1;
}

static const void *run_cur(const struct xsort *s, const struct xsort_run *r)
{
	return r->buf + r->buf_pos * s->rec_size;
}

static int heap_less(const struct xsort *s, size_t a, size_t b)
{
	return s->cmp(run_cur(s, &s->runs[a]), run_cur(s, &s->runs[b])) < 0;
}

static void heap_sift_down(struct xsort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < s->heap_len && heap_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->heap_len && heap_less(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

int xsort_finish(struct xsort *s)
{
	size_t per_run, i;
	int ret;

	if (s->reading)
		return 0;
	s->reading = 1;
	if (!s->nruns) {
		sort_buffer(s);
		s->pos = 0;
		return 0;
	}
	ret = spill_run(s);
	if (ret < 0)
		return ret;
	free(s->buf);
	free(s->order);
	s->buf = NULL;
	s->order = NULL;
	per_run = s->mem / s->nruns;
	if (per_run < XSORT_MIN_RUN_BUF)
		per_run = XSORT_MIN_RUN_BUF;
	s->heap = malloc(s->nruns * sizeof(*s->heap));
	if (!s->heap)
		return -ENOMEM;
	for (i = 0; i < s->nruns; i++) {
		struct xsort_run *r = &s->runs[i];

		r->buf_cap = per_run / s->rec_size ? per_run / s->rec_size : 1;
		r->buf = malloc(r->buf_cap * s->rec_size);
		if (!r->buf)
			return -ENOMEM;
		ret = run_fill(s, r);
		if (ret < 0)
			return ret;
		if (ret > 0)
			s->heap[s->heap_len++] = i;
	}
	for (i = s->heap_len / 2; i-- > 0;)
		heap_sift_down(s, i);
	return 0;
}

const void *xsort_peek(struct xsort *s)
{
	if (!s->reading)
		return NULL;
	if (!s->nruns)
		return s->pos < s->len ? s->buf + (size_t)s->order[s->pos] * s->rec_size : NULL;
	if (!s->heap_len)
		return NULL;
	return run_cur(s, &s->runs[s->heap[0]]);
}

int xsort_next(struct xsort *s, void *rec)
{
	struct xsort_run *r;
	const void *cur = xsort_peek(s);
	int ret;

	if (!cur)
		return 0;
	memcpy(rec, cur, s->rec_size);
	if (!s->nruns) {
		s->pos++;
		return 1;
	}
	r = &s->runs[s->heap[0]];
	if (++r->buf_pos == r->buf_len) {
		ret = run_fill(s, r);
		if (ret < 0)
			return ret;
		if (!ret)
			s->heap[0] = s->heap[--s->heap_len];
	}
	if (s->heap_len)
		heap_sift_down(s, 0);
	return 1;
}

size_t xsort_count(const struct xsort *s)
{
	return s->total;
}

void xsort_free(struct xsort *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nruns; i++)
		free(s->runs[i].buf);
	free(s->runs);
	free(s->heap);
	free(s->buf);
	free(s->order);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}
