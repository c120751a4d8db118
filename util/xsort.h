/* External sort of records with bounded memory (btrfs check's reference lists,
 * mkfs --rootdir's tree items).
 *
 * Records are collected in a buffer of about mem bytes; a full buffer is sorted
 * (unless its records came in order) and written as a run to an unlinked temporary
 * file in tmpdir; records that come in order cost no sort. Reading merges the
 * runs (a heap over one read buffer per run), so any number of records costs about
 * mem bytes of RAM. Records have a fixed size (rec_size) or, with rec_size 0, the
 * size given to xsort_add_var (at most XSORT_MAX_REC). Equal records keep no
 * particular order: a caller needing a stable order puts a sequence number in them. */
#ifndef FS_XSORT_H
#define FS_XSORT_H
#include <stddef.h>

#define XSORT_MAX_REC (128u << 10)

struct xsort;
/* Compares two records (the bytes given to xsort_add, at 8-byte aligned addresses). */
typedef int (*xsort_cmp_fn)(const void *a, const void *b);

/* NULL on bad arguments or no memory. */
struct xsort *xsort_new(size_t rec_size, xsort_cmp_fn cmp, size_t mem, const char *tmpdir);
/* Before the first record: the records' first order is the native uint64_t at byte
 * offset off (cmp orders by it first too). The sort then moves 16-byte entries holding
 * it, and reads the records only to break ties: much faster where records are large
 * and keys mostly differ (the collecting buffer gives up room for the entries). */
void xsort_set_key(struct xsort *s, size_t off);
/* 0, or a negative errno (temporary file could not be created or written). */
int xsort_add(struct xsort *s, const void *rec);
/* Variable-size records (a sorter made with rec_size 0): -EINVAL when too large. */
int xsort_add_var(struct xsort *s, const void *rec, size_t len);
/* Ends the adding; reading starts. 0 or a negative errno. */
int xsort_finish(struct xsort *s);
/* Copies the next record in order (xsort_peek_size bytes; rec NULL: skips it): 1,
 * 0 at the end, negative errno. */
int xsort_next(struct xsort *s, void *rec);
/* Looks at the next record without taking it: pointer (valid until the next
 * xsort_next), or NULL at the end/error; xsort_peek_size is its size. */
const void *xsort_peek(struct xsort *s);
size_t xsort_peek_size(struct xsort *s);
/* Reading starts again at the first record (the runs are read again from the
 * file): 0 or a negative errno. */
int xsort_rewind(struct xsort *s);
size_t xsort_count(const struct xsort *s);
/* A second thread for s (CHECK_THREADS): it sorts half of each run and faults in
 * the collecting buffer's pages ahead of the records. */
void xsort_use_thread(struct xsort *s);
void xsort_free(struct xsort *s);

#endif
