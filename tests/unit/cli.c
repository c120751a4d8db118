/* util/cli: argument helpers. */
#include "unit.h"
#include "util/cli/cli.h"
#include <stdio.h>
#include <string.h>

TEST(all_digits)
{
	CHECK(cli_all_digits("0"));
	CHECK(cli_all_digits("0123456789"));
	CHECK(!cli_all_digits(""));
	CHECK(!cli_all_digits("12a"));
	CHECK(!cli_all_digits("-1"));
	CHECK(!cli_all_digits("+1"));
	CHECK(!cli_all_digits(" 1"));
	CHECK(!cli_all_digits("0x10"));
}

/* The options cli_getopt_long returns for the words of line (after a program name), then
 * "|" and the operands from optind on, e.g. "a c=1 L|x y". */
static const char *parse(const char *line, const char *shortopts, const char *longs)
{
	static char out[256];
	char copy[256], *argv[16];
	int argc = 1, c;
	size_t n = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	argv[0] = "prog";
	for (char *w = strtok(copy, " "); w && argc < 15; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	optind = 0;
	while ((c = cli_getopt_long(argc, argv, shortopts, longs, "usage\n")) != -1)
		n += (size_t)snprintf(out + n, sizeof(out) - n, optarg ? "%c=%s " : "%c ", c, optarg);
	n += (size_t)snprintf(out + n, sizeof(out) - n, "|");
	for (int i = optind; i < argc; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, i > optind ? " %s" : "%s", argv[i]);
	return out;
}

#define PARSES(line, shortopts, longs, expect) \
	do { const char *got = parse(line, shortopts, longs); CHECK(!strcmp(got, expect)); \
	     if (strcmp(got, expect)) fprintf(stderr, "  '%s' -> '%s'\n", line, got); } while (0)

/* The conventions of musl's getopt_long, which the parser replaces. */
TEST(getopt_conventions)
{
	const char *longs = "alpha=A alpine:=P al=L beta:=B gamma::=G";

	PARSES("x -a y -b z", "ab", "", "a b |x y z");                 /* operands move back */
	PARSES("-ab -ba", "ab", "", "a b b a |");                      /* clusters */
	PARSES("-cval -c next x", "c:", "", "c=val c=next |x");        /* attached or next */
	PARSES("-acx y", "ac:", "", "a c=x |y");
	PARSES("-d x -dval", "d::", "", "d d=val |x");                 /* optional: attached only */
	PARSES("x -- -a y", "a", "", "|x -a y");                       /* "--" ends the options */
	PARSES("x y -- -a", "a", "", "|x y -a");
	PARSES("- -a", "a", "", "a |-");                               /* "-" is an operand */
	PARSES("--alpha --al --alpi v --alpine=w", "", longs, "A L P=v P=w |");
	PARSES("--be x --beta=y --b z", "", longs, "B=x B=y B=z |");  /* unique prefixes */
	PARSES("--gamma x --gamma=y --g", "", longs, "G G=y G |x");
	PARSES("o1 --beta v o2 -a o3", "a", longs, "B=v a |o1 o2 o3"); /* argument moves along */
	PARSES("--beta=", "", longs, "B= |");
}
