/* Growable arrays: the caller keeps the pointer, the count and the allocated room. */
#ifndef UTIL_VEC_H
#define UTIL_VEC_H
#include <stddef.h>

/* Appends one zeroed element of elem bytes to the array *(void **)vp holding *n of
 * *room, growing it geometrically. Returns the new element, or NULL when out of memory
 * (the array unchanged). */
void *vec_push(void *vp, size_t *n, size_t *room, size_t elem);
/* Makes room for need elements of elem bytes in the array *p of *room (at least 64,
 * doubling); 0, or -1 when out of memory (the array unchanged). */
int vec_reserve(void *p, size_t *room, size_t need, size_t elem);

#endif
