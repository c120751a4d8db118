/* Growable arrays (see vec.h). */
#include "vec.h"
#include <stdlib.h>
#include <string.h>

void *vec_push(void *vp, size_t *n, size_t *room, size_t elem)
{
	char **v = vp, *e;

	if (*n == *room) {
		size_t more = *room ? *room * 2 : 16;
		char *p = more > ((size_t)-1) / elem ? NULL : realloc(*v, more * elem);

		if (!p)
			return NULL;
		*v = p;
		*room = more;
	}
	e = *v + (*n)++ * elem;
	memset(e, 0, elem);
	return e;
}

int vec_reserve(void *vp, size_t *room, size_t need, size_t elem)
{
	void **v = vp, *p;
	size_t n = *room ? *room : 64;

	if (need <= *room)
		return 0;
	while (n < need)
		n *= 2;
	p = n > ((size_t)-1) / elem ? NULL : realloc(*v, n * elem);
	if (!p)
		return -1;
	*v = p;
	*room = n;
	return 0;
}
