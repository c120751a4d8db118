/* External sort of fixed-size records with bounded memory.
 *
 * Records are collected in a buffer of at most mem bytes; a full buffer is
 * sorted and written as a run to an unlinked temporary file in tmpdir. Reading
 * merges the runs (a heap over one read buffer per run), so any number of
 * records costs about mem bytes of RAM. Equal records keep no particular order. */
#ifndef FS_CHECK_SORT_H
#define FS_CHECK_SORT_H
#include <stddef.h>

struct xsort;
typedef int (*xsort_cmp_fn)(const void *a, const void *b);

/* NULL on bad arguments or no memory. */
struct xsort *xsort_new(size_t rec_size, xsort_cmp_fn cmp, size_t mem, const char *tmpdir);
/* 0, or a negative errno (temporary file could not be created or written). */
int xsort_add(struct xsort *s, const void *rec);
/* Ends the adding; reading starts. 0 or a negative errno. */
int xsort_finish(struct xsort *s);
/* Copies the next record in order: 1, 0 at the end, negative errno. */
int xsort_next(struct xsort *s, void *rec);
/* Looks at the next record without taking it: pointer, or NULL at the end/error. */
const void *xsort_peek(struct xsort *s);
size_t xsort_count(const struct xsort *s);
void xsort_free(struct xsort *s);

#endif
