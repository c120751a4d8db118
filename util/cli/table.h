/* A text table as btrfs-progs prints them: cells are "<text" (left aligned), ">text"
 * (right aligned) or "*-" (a rule as wide as the column); a column is as wide as its
 * widest text; columns are separated by `spacing` spaces. */
#ifndef UTIL_TABLE_H
#define UTIL_TABLE_H

struct table {
	int ncols, nrows;
	char **cells;
};

/* 0, or -1 when out of memory. */
int table_init(struct table *t, int ncols, int nrows);
/* Sets a cell (printf-style, the alignment character first); out of memory leaves it
 * empty. */
void table_set(struct table *t, int col, int row, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void table_print(const struct table *t, int spacing);
void table_free(struct table *t);

#endif
