/* External sort: sorted runs in one temporary file, k-way merge.
 *
 * A record of variable size is stored after a header holding its length (host
 * order, never leaves this process), in the collecting buffer and in the runs; one
 * of fixed size as it is (its length is the sorter's). */
#include "config.h"
#include "pio.h"
#include "sort.h"
#include "xsort.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XSORT_MIN_MEM (256u << 10)
#define XSORT_MIN_RUN_BUF (16u << 10)
#define XSORT_STAGE (64u << 10)
/* Each stored record: (variable sizes) a 4-byte length and 4 bytes of padding, the
 * record, zero padding to a multiple of 8 — so every record starts 8-byte aligned in
 * memory and in run files. */
#define XSORT_HDR 8u
#define XSORT_MAX_BUF ((size_t)1 << 31)     /* offsets in order[] are 32 bits */
#define NO_KEY SIZE_MAX

struct xsort_run {
	off_t start, end;       /* file range of the run */
	off_t next;             /* file offset of the first byte not yet loaded */
	uint8_t *buf;
	size_t buf_cap, buf_len, buf_pos;   /* in bytes */
};

struct xsort {
	size_t rec_size;        /* 0: variable */
	size_t hdr;             /* bytes before each stored record: XSORT_HDR or 0 */
	size_t max_rec;
	xsort_cmp_fn cmp;
	size_t key_off;         /* xsort_set_key, or NO_KEY */
	size_t mem;
	const char *tmpdir;
	uint8_t *buf;           /* collecting; then the in-memory result or the runs' buffers */
	size_t buf_cap, buf_used;
	uint32_t *order;        /* offsets of buf's records, sorted (records never move) */
	size_t len, order_cap, pos;
	int unsorted;           /* buf's records did not come in order: they need sorting */
	size_t total;
	int fd;                 /* -1 until the first spill */
	off_t file_end;
	struct xsort_run *runs;
	size_t nruns, cap_runs;
	size_t *heap;           /* run indices, smallest current record on top */
	size_t heap_len;
	int reading;
#if CFG_CHECK_THREADS
	struct workq *helper;   /* xsort_use_thread */
	size_t faulted;         /* bytes of buf the helper was asked to fault in */
#endif
};

static size_t stored_size(const struct xsort *s, size_t len)
{
	return s->hdr + ((len + 7) & ~(size_t)7);
}

/* The length of the stored record at p. */
static uint32_t get_len(const struct xsort *s, const uint8_t *p)
{
	uint32_t v = (uint32_t)s->rec_size;

	if (!v)
		memcpy(&v, p, sizeof(v));
	return v;
}

struct xsort *xsort_new(size_t rec_size, xsort_cmp_fn cmp, size_t mem, const char *tmpdir)
{
	struct xsort *s;

	if (rec_size > XSORT_MAX_REC || !cmp)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rec_size = rec_size;
	s->hdr = rec_size ? 0 : XSORT_HDR;
	s->max_rec = rec_size ? rec_size : XSORT_MAX_REC;
	/* room for a few of the largest records */
	if (mem < 4 * (stored_size(s, s->max_rec)))
		mem = 4 * (stored_size(s, s->max_rec));
	if (mem < XSORT_MIN_MEM)
		mem = XSORT_MIN_MEM;
	s->cmp = cmp;
	s->key_off = NO_KEY;
	s->mem = mem;
	s->tmpdir = tmpdir ? tmpdir : "/tmp";
	s->fd = -1;
	/* records and their order entries share the budget */
	s->buf_cap = mem - mem / 8;
	if (s->buf_cap > XSORT_MAX_BUF)
		s->buf_cap = XSORT_MAX_BUF;
	return s;
}

static inline int rec_less(const struct xsort *s, uint32_t a, uint32_t b)
{
	return s->cmp(s->buf + a + s->hdr, s->buf + b + s->hdr) < 0;
}

/* Sorts the order entries by their records (only 4-byte offsets move). */
SORT_DEFINE(sort_order, uint32_t, const struct xsort *, rec_less)

/* With a key: each entry beside its record's key, so that most comparisons read only
 * the entries (contiguous) and not the records (scattered over the buffer). */
struct keyed { uint64_t key; uint32_t off; };

static uint64_t rec_key(const struct xsort *s, const uint8_t *rec)
{
	uint64_t k;

	memcpy(&k, rec + s->key_off, sizeof(k));
	return k;
}

static inline int keyed_less(const struct xsort *s, struct keyed a, struct keyed b)
{
	if (a.key != b.key)
		return a.key < b.key;
	return rec_less(s, a.off, b.off);
}

SORT_DEFINE(sort_keyed, struct keyed, const struct xsort *, keyed_less)

/* Whether record b may follow record a. */
static int in_order(const struct xsort *s, const uint8_t *a, const uint8_t *b)
{
	if (s->key_off != NO_KEY && rec_key(s, a) != rec_key(s, b))
		return rec_key(s, a) < rec_key(s, b);
	return s->cmp(b, a) >= 0;
}

void xsort_set_key(struct xsort *s, size_t off)
{
	if (s->key_off != NO_KEY || off + sizeof(uint64_t) > s->max_rec)
		return;
	s->key_off = off;
	/* room for the keyed entries the sort makes (16 bytes a record) within mem */
	s->buf_cap -= s->buf_cap / (s->max_rec + 16) * 16;
}

#if CFG_CHECK_THREADS
#include "workq.h"
#include <stdlib.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define FAULT_STEP ((size_t)2 << 20)
#define SPLIT_MIN 4096  /* fewer records are sorted on one thread */

/* Work for the second thread: sort n order entries at v (or keyed ones at kv), or
 * (neither) fault in the pages of [p, p + n) (MADV_POPULATE_WRITE: only the page
 * tables change; on kernels before 5.14 it is a no-op). */
struct job { uint32_t *v; struct keyed *kv; uint8_t *p; size_t n; };

static void helper_run(void *ctx, void *rec)
{
	const struct job *j = rec;
	uintptr_t a = (uintptr_t)j->p & ~(uintptr_t)4095;

	if (j->v)
		sort_order(ctx, j->v, j->n);
	else if (j->kv)
		sort_keyed(ctx, j->kv, j->n);
	else
		madvise((void *)a, (uintptr_t)j->p + j->n - a, MADV_POPULATE_WRITE);
}

static void helper_post(struct xsort *s, struct job job)
{
	struct job *j = workq_reserve(s->helper, sizeof(*j));

	*j = job;
	workq_commit(s->helper, sizeof(*j));
}

void xsort_use_thread(struct xsort *s)
{
	if (s->helper || !(s->helper = malloc(sizeof(*s->helper))))
		return;
	if (workq_start(s->helper, 8 * sizeof(struct job) + 64, helper_run, s) < 0) {
		free(s->helper);
		s->helper = NULL;
	}
}

/* Fresh memory costs a page fault per page, and in a virtual machine much more on
 * its first touch: the second thread faults in the next 2 MiB before the records
 * reach it. */
static void fault_ahead(struct xsort *s, size_t need)
{
	if (s->helper && s->faulted < s->buf_cap && need + FAULT_STEP > s->faulted) {
		size_t n = s->buf_cap - s->faulted;

		if (n > FAULT_STEP)
			n = FAULT_STEP;

		helper_post(s, (struct job){ NULL, NULL, s->buf + s->faulted, n });
		s->faulted += n;
	}
}

/* Sorts the entries: one side of a partition on each thread. */
static void sort_entries(struct xsort *s, struct keyed *kv)
{
	size_t k = 0;

	if (s->helper && s->len >= SPLIT_MIN) {
		k = kv ? sort_keyed_split(s, kv, s->len) : sort_order_split(s, s->order, s->len);
		helper_post(s, (struct job){ kv ? NULL : s->order + k, kv ? kv + k : NULL, NULL, s->len - k });
	}
	if (kv)
		sort_keyed(s, kv, k ? k : s->len);
	else
		sort_order(s, s->order, k ? k : s->len);
	if (s->helper)
		workq_drain(s->helper);
}
#else
#define fault_ahead(s, need) ((void)0)
static void sort_entries(struct xsort *s, struct keyed *kv)
{
	if (kv)
		sort_keyed(s, kv, s->len);
	else
		sort_order(s, s->order, s->len);
}
#endif

/* Sorts the order entries, through keyed ones when the records have a key (and there
 * is memory for them). */
static void sort_all(struct xsort *s)
{
	struct keyed *kv = s->key_off != NO_KEY ? malloc(s->len * sizeof(*kv)) : NULL;

	for (size_t i = 0; kv && i < s->len; i++)
		kv[i] = (struct keyed){ rec_key(s, s->buf + s->order[i] + s->hdr), s->order[i] };
	sort_entries(s, kv);
	for (size_t i = 0; kv && i < s->len; i++)
		s->order[i] = kv[i].off;
	free(kv);
}

/* Writes the buffer's records in sorted order at off, through a staging buffer
 * (a record larger than it goes out directly). Returns the bytes written or a
 * negative errno. */
static ssize_t write_sorted(struct xsort *s, off_t off)
{
	uint8_t *stage = malloc(XSORT_STAGE);
	size_t n = 0;
	off_t start = off;
	int ret = 0;

	if (!stage)
		return -ENOMEM;
	for (size_t i = 0; i < s->len && !ret; i++) {
		const uint8_t *rec = s->buf + s->order[i];
		size_t sz = stored_size(s, get_len(s, rec));

		if (n + sz > XSORT_STAGE) {
			ret = pio_all(s->fd, stage, n, off, 1);
			off += (off_t)n;
			n = 0;
		}
		if (ret)
			break;
		if (sz > XSORT_STAGE) {
			ret = pio_all(s->fd, (void *)rec, sz, off, 1);
			off += (off_t)sz;
		} else {
			memcpy(stage + n, rec, sz);
			n += sz;
		}
	}
	if (!ret && n) {
		ret = pio_all(s->fd, stage, n, off, 1);
		off += (off_t)n;
	}
	free(stage);
	return ret ? ret : off - start;
}

/* Sorts the buffer and appends it to the temporary file as a new run. */
static int spill_run(struct xsort *s)
{
	struct xsort_run *r;
	ssize_t written;
	int ret;

	if (!s->len)
		return 0;
	if (s->fd < 0) {
		if ((ret = pio_tmpfile(s->tmpdir, "sort")) < 0)
			return ret;
		s->fd = ret;
	}
	if (s->nruns == s->cap_runs) {
		size_t nc = s->cap_runs ? s->cap_runs * 2 : 16;
		void *p = realloc(s->runs, nc * sizeof(*s->runs));
		if (!p)
			return -ENOMEM;
		s->runs = p;
		s->cap_runs = nc;
	}
	if (s->unsorted) {
		sort_all(s);
		written = write_sorted(s, s->file_end);
	} else {
		/* came in order: the buffer is the run as it is */
		ret = pio_all(s->fd, s->buf, s->buf_used, s->file_end, 1);
		written = ret < 0 ? ret : (ssize_t)s->buf_used;
	}
	s->unsorted = 0;
	if (written < 0)
		return (int)written;
	r = &s->runs[s->nruns++];
	memset(r, 0, sizeof(*r));
	r->start = r->next = s->file_end;
	s->file_end += written;
	r->end = s->file_end;
	s->len = 0;
	s->buf_used = 0;
	return 0;
}

/* Room for one more record of sz bytes (header included) and its order entry. */
static int make_room(struct xsort *s, size_t sz)
{
	/* not in huge pages (MADV_HUGEPAGE): on a virtual machine whose guest reports
	 * free memory to the host, a fresh huge page costs the host's faults for its
	 * 512 small pages at once, measured slower than small pages (mkfs --rootdir
	 * by 30%, check by 7%) */
	if (!s->buf && !(s->buf = malloc(s->buf_cap)))
		return -ENOMEM;
	if (s->buf_used + sz > s->buf_cap ||
	    (s->len + 1) * sizeof(*s->order) > s->mem - s->buf_cap) {
		int ret = spill_run(s);
		if (ret < 0)
			return ret;
	}
	fault_ahead(s, s->buf_used + sz);
	if (s->len == s->order_cap) {
		size_t nc = s->order_cap ? s->order_cap * 2 : 1024;
		void *p;

		if (nc > (s->mem - s->buf_cap) / sizeof(*s->order))
			nc = (s->mem - s->buf_cap) / sizeof(*s->order);
		p = realloc(s->order, nc * sizeof(*s->order));
		if (!p)
			return -ENOMEM;
		s->order = p;
		s->order_cap = nc;
	}
	return 0;
}

/* Records that come in order are not sorted: a buffer's worth of them is a run as it
 * is. One out of order ends such a run early when there are runs already (the records
 * do not fit in memory) and it holds an eighth of a buffer; else the buffer is sorted. */
static int note_order(struct xsort *s, const void *rec)
{
	if (s->unsorted || !s->len || in_order(s, s->buf + s->order[s->len - 1] + s->hdr, rec))
		return 0;
	if (s->nruns && s->buf_used >= s->buf_cap / 8)
		return spill_run(s);
	s->unsorted = 1;
	return 0;
}

int xsort_add_var(struct xsort *s, const void *rec, size_t len)
{
	uint32_t l = (uint32_t)len;
	uint8_t *p;
	int ret;

	if (s->reading || len > s->max_rec)
		return -EINVAL;
	ret = note_order(s, rec);
	if (!ret)
		ret = make_room(s, stored_size(s, len));
	if (ret < 0)
		return ret;
	s->order[s->len++] = (uint32_t)s->buf_used;
	/* only the header's and the last word's padding are zeroed: a memset of the
	 * whole record (variable size, so not inlined well) costs more than the copy */
	p = s->buf + s->buf_used;
	if (s->hdr) {
		memcpy(p, &l, sizeof(l));
		memset(p + sizeof(l), 0, XSORT_HDR - sizeof(l));
	}
	if (len & 7)
		memset(p + s->hdr + (len & ~(size_t)7), 0, 8);
	memcpy(p + s->hdr, rec, len);
	s->buf_used += stored_size(s, len);
	s->total++;
	return 0;
}

int xsort_add(struct xsort *s, const void *rec)
{
	if (!s->rec_size)
		return -EINVAL;
	return xsort_add_var(s, rec, s->rec_size);
}

/* Makes the run's next record wholly present in its buffer (moving a partial one
 * to the front and reading more): 1, 0 when the run is exhausted, negative errno. */
static int run_fill(const struct xsort *s, struct xsort_run *r)
{
	size_t have = r->buf_len - r->buf_pos, want;
	int ret;

	if (have >= s->hdr && have >= stored_size(s, get_len(s, r->buf + r->buf_pos)))
		return 1;
	if (!have && r->next == r->end)
		return 0;
	memmove(r->buf, r->buf + r->buf_pos, have);
	r->buf_pos = 0;
	r->buf_len = have;
	want = r->buf_cap - have;
	if ((off_t)want > r->end - r->next)
		want = (size_t)(r->end - r->next);
	ret = pio_all(s->fd, r->buf + have, want, r->next, 0);
	if (ret < 0)
		return ret;
	r->next += (off_t)want;
	r->buf_len += want;
	have = r->buf_len;
	/* runs are our own file: a short record means it was damaged underneath us */
	if (have < s->hdr || have < stored_size(s, get_len(s, r->buf)))
		return -EIO;
	return 1;
}

static const void *run_cur(const struct xsort *s, const struct xsort_run *r)
{
	return r->buf + r->buf_pos + s->hdr;
}

static int heap_less(const struct xsort *s, size_t a, size_t b)
{
	const uint8_t *x = run_cur(s, &s->runs[a]), *y = run_cur(s, &s->runs[b]);

	if (s->key_off != NO_KEY && rec_key(s, x) != rec_key(s, y))
		return rec_key(s, x) < rec_key(s, y);
	return s->cmp(x, y) < 0;
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

/* Every run's first record loaded, the heap built over them. */
static int merge_start(struct xsort *s)
{
	size_t i;
	int ret;

	s->heap_len = 0;
	for (i = 0; i < s->nruns; i++) {
		struct xsort_run *r = &s->runs[i];

		r->next = r->start;
		r->buf_len = r->buf_pos = 0;
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

int xsort_finish(struct xsort *s)
{
	size_t per_run, i;
	int ret;

	if (s->reading)
		return 0;
	s->reading = 1;
	if (!s->nruns) {
		if (s->unsorted)
			sort_all(s);
		s->pos = 0;
		return 0;
	}
	ret = spill_run(s);
	if (ret < 0)
		return ret;
	free(s->order);
	s->order = NULL;
	/* the run buffers are carved from the collecting buffer (its pages are in
	 * already), grown only when one whole record per run does not fit */
	per_run = s->buf_cap / s->nruns & ~(size_t)7;
	if (per_run < XSORT_MIN_RUN_BUF)
		per_run = XSORT_MIN_RUN_BUF;
	if (per_run < stored_size(s, s->max_rec))
		per_run = stored_size(s, s->max_rec);
	if (per_run * s->nruns > s->buf_cap) {
		free(s->buf);
		s->buf_cap = per_run * s->nruns;
		s->buf = malloc(s->buf_cap);
	}
	s->heap = malloc(s->nruns * sizeof(*s->heap));
	if (!s->heap || !s->buf)
		return -ENOMEM;
	for (i = 0; i < s->nruns; i++) {
		s->runs[i].buf_cap = per_run;
		s->runs[i].buf = s->buf + i * per_run;
	}
	return merge_start(s);
}

int xsort_rewind(struct xsort *s)
{
	if (!s->reading)
		return -EINVAL;
	if (!s->nruns) {
		s->pos = 0;
		return 0;
	}
	return merge_start(s);
}

/* The next record with its length header (if any), or NULL. */
static const uint8_t *peek_raw(const struct xsort *s)
{
	const struct xsort_run *r;

	if (!s->reading)
		return NULL;
	if (!s->nruns)
		return s->pos < s->len ? s->buf + s->order[s->pos] : NULL;
	if (!s->heap_len)
		return NULL;
	r = &s->runs[s->heap[0]];
	return r->buf + r->buf_pos;
}

const void *xsort_peek(struct xsort *s)
{
	const uint8_t *p = peek_raw(s);

	return p ? p + s->hdr : NULL;
}

size_t xsort_peek_size(struct xsort *s)
{
	const uint8_t *p = peek_raw(s);

	return p ? get_len(s, p) : 0;
}

int xsort_next(struct xsort *s, void *rec)
{
	const uint8_t *cur = peek_raw(s);
	struct xsort_run *r;
	int ret;

	if (!cur)
		return 0;
	if (rec)
		memcpy(rec, cur + s->hdr, get_len(s, cur));
	if (!s->nruns) {
		s->pos++;
		return 1;
	}
	r = &s->runs[s->heap[0]];
	r->buf_pos += stored_size(s, get_len(s, cur));
	ret = run_fill(s, r);
	if (ret < 0)
		return ret;
	if (!ret)
		s->heap[0] = s->heap[--s->heap_len];
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
#if CFG_CHECK_THREADS
	if (s->helper)
		workq_stop(s->helper);
	free(s->helper);
#endif
	free(s->runs);
	free(s->heap);
	free(s->buf);
	free(s->order);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}
