#include "cli.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli_globals cli_globals;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	flockfile(stderr);      /* one line, also with a second thread writing */
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void msg_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("ERROR: ", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("WARNING: ", fmt, ap);
	va_end(ap);
}

void cli_usage_error(const char *usage, const char *msg)
{
	if (msg)
		msg_error("%s", msg);
	fputs(usage, stderr);
	exit(1);
}

int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts, const char *usage)
{
	static const struct option none[] = { { 0, 0, 0, 0 } };
	char err[128];
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts ? longopts : none, NULL);
	if (c != '?' && c != ':')
		return c;
	if (optind > 1 && !strcmp(argv[optind - 1], "--help")) {
		fputs(usage, stdout);
		exit(0);
	}
	if (optopt)
		snprintf(err, sizeof(err), "%s for option -%c",
			 strchr(shortopts, optopt) ? "missing argument" : "invalid option", optopt);
	else
		snprintf(err, sizeof(err), "unrecognized option '%s'", argv[optind - 1]);
	cli_usage_error(usage, err);
}

void cli_check_argc(int argc, int min, int max, const char *usage)
{
	int n = argc - optind;

	if (n < min)
		cli_usage_error(usage, "not enough arguments");
	if (max >= 0 && n > max)
		cli_usage_error(usage, "too many arguments");
}

void cli_no_options(int argc, char **argv, int min, int max, const char *usage)
{
	while (cli_getopt(argc, argv, "", NULL, usage) != -1)
		;
	cli_check_argc(argc, min, max, usage);
}

void cli_print_version(const char *name)
{
	printf("%s, part of btrfsbox v%s (btrfs-progs v%s compatible)\n",
	       name, BTRFSBOX_VERSION, BTRFS_PROGS_COMPAT);
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}
