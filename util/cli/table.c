//build:Oz
/* Text tables laid out as btrfs-progs prints them (see table.h). */
#include "table.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int table_init(struct table *t, int ncols, int nrows)
{
	t->ncols = ncols;
	t->nrows = nrows;
	t->cells = calloc((size_t)ncols * nrows, sizeof(char *));
	return t->cells ? 0 : -1;
}

void table_set(struct table *t, int col, int row, const char *fmt, ...)
{
	va_list ap;
	char **cell = &t->cells[row * t->ncols + col];

	free(*cell);
	va_start(ap, fmt);
	if (vasprintf(cell, fmt, ap) < 0)
		*cell = NULL;
	va_end(ap);
}

void table_print(const struct table *t, int spacing)
{
	int widths[t->ncols], c, r;

	for (c = 0; c < t->ncols; c++) {
		widths[c] = 0;
		for (r = 0; r < t->nrows; r++) {
			const char *s = t->cells[r * t->ncols + c];
			int len = s ? (int)strlen(s) - 1 : 0;

			if (s && s[0] != '*' && len > widths[c])
				widths[c] = len;
		}
	}
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];

			if (!s || !*s)
				printf("%*s", widths[c], "");
			else if (s[0] == '*')
				for (int k = 0; k < widths[c]; k++)
					putchar(s[1]);
			else
				printf("%*s", s[0] == '<' ? -widths[c] : widths[c], s + 1);
			if (c != t->ncols - 1)
				printf("%*s", spacing, "");
		}
		putchar('\n');
	}
}

void table_free(struct table *t)
{
	for (int c = 0; c < t->ncols * t->nrows; c++)
		free(t->cells[c]);
	free(t->cells);
}
