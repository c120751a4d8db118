#include "cli.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli_globals cli_globals;

void cli_be_verbose(void)
{
	cli_globals.verbose = cli_globals.verbose < 0 ? 1 : cli_globals.verbose + 1;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char msg[8192];

	/* one call: the line stays whole when another thread reports too */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	fprintf(stderr, "%s%s\n", prefix, msg);
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

/* The usage text with CLI_UNITS (a control character) spelled out. */
static void put_usage(const char *usage, FILE *f)
{
	for (; *usage; usage++)
		if (*usage == CLI_UNITS[0])
			fputs("    --raw --human-readable --iec --si --kbytes --mbytes --gbytes --tbytes\n", f);
		else
			fputc(*usage, f);
}

void cli_usage_error(const char *usage, const char *msg)
{
	if (msg)
		msg_error("%s", msg);
	put_usage(usage, stderr);
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
		put_usage(usage, stdout);
		exit(0);
	}
	if (cli_globals.cmd) {  /* btrfs-progs' wording in the btrfs command tree */
		if (optopt)
			fprintf(stderr, "%s: invalid option '%c'\n", cli_globals.cmd, optopt);
		else
			fprintf(stderr, "%s: unrecognized option '%s'\n", cli_globals.cmd, argv[optind - 1]);
		fprintf(stderr, "Try '%s --help' for more information\n", cli_globals.cmd);
		exit(1);
	}
	if (optopt)
		snprintf(err, sizeof(err), "%s for option -%c",
			 strchr(shortopts, optopt) ? "missing argument" : "invalid option", optopt);
	else
		snprintf(err, sizeof(err), "unrecognized option '%s'", argv[optind - 1]);
	cli_usage_error(usage, err);
}

int cli_getopt_long(int argc, char **argv, const char *shortopts, const char *longs,
		    const char *usage)
{
	static struct option opts[16];
	static char names[256];
	static const char *parsed;
	const char *p = longs;
	size_t n = 0, k = 0, len;

	while (parsed != longs && *p && n < 15 && k + (len = strcspn(p, ":=")) < sizeof(names)) {
		memcpy(names + k, p, len);
		names[k + len] = 0;
		opts[n].name = names + k;
		k += len + 1;
		for (p += len, opts[n].has_arg = 0; *p == ':'; p++)
			opts[n].has_arg++;
		opts[n++].val = (unsigned char)p[1];
		p += 2 + (p[2] == ' ');
	}
	if (parsed != longs)
		memset(&opts[n], 0, sizeof(opts[n]));
	parsed = longs;
	return cli_getopt(argc, argv, shortopts, opts, usage);
}

void cli_check_argc(int argc, int min, int max, const char *usage)
{
	int n = argc - optind;
	const char *cmd = cli_globals.cmd;

	if (cmd && (n < min || (max >= 0 && n > max))) {
		if (min == max)
			fprintf(stderr, "%s: exactly %d argument%s expected, %d given\n", cmd, min,
				min > 1 ? "s" : "", n);
		else if (n < min)
			fprintf(stderr, "%s: not enough arguments: %d but at least %d expected\n",
				cmd, n, min);
		else
			fprintf(stderr, "%s: too many arguments: %d but at most %d expected\n",
				cmd, n, max);
		exit(1);
	}
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

uint64_t cli_arg_u64(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end)
		msg_error("%s is not a valid numeric value", s);
	else if (*s == '-')
		msg_error("%s: negative value is invalid", s);
	else if (errno)
		msg_error("%s is too large", s);
	else
		return v;
	exit(1);
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
