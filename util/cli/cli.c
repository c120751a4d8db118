/* Command-line conventions shared by every applet; the compressed usage texts. */
//config:config COMPRESS_USAGE
//config:	bool "Compressed usage texts"
//config:	default y
//config:	depends on COMPRESS_ZLIB
//config:	help
//config:	  Keep the usage texts of all commands deflate-compressed in the binary
//config:	  (about 17 KB smaller) and inflate them when one is printed.
//build:Oz
#include "cli.h"
#include "units.h"
#include "util/strnum.h"
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

#if USAGE_COMPRESSED
#include "usage_blob.h"   /* usage_blob[]: the texts as raw deflate; USAGE_TEXTS_SIZE */
#include <zlib.h>

const char *usage_entry(unsigned n)
{
	static char *texts;
	z_stream z = { 0 };
	const char *t;

	/* zeroed first: whatever fails, every entry is a string ("" at worst) */
	if (!texts && (texts = calloc(1, USAGE_TEXTS_SIZE)) && inflateInit2(&z, -15) == Z_OK) {
		z.next_in = (unsigned char *)usage_blob;
		z.avail_in = sizeof(usage_blob);
		z.next_out = (unsigned char *)texts;
		z.avail_out = USAGE_TEXTS_SIZE;
		inflate(&z, Z_FINISH);
		inflateEnd(&z);
	}
	if (!texts)
		return "";
	for (t = texts; n--; t += strlen(t) + 1)
		;
	return t;
}

const char *usage_text(const char *usage)
{
	if (usage[0] != USAGE_REF)
		return usage;
	return usage_entry((unsigned char)usage[1] | (unsigned char)usage[2] << 8);
}
#endif

/* The usage text with CLI_UNITS (a control character) spelled out. */
void cli_put_usage(const char *usage, FILE *f)
{
	for (usage = usage_text(usage); *usage; usage++)
		if (*usage == CLI_UNITS[0])
			fputs("    --raw --human-readable --iec --si --kbytes --mbytes --gbytes --tbytes\n", f);
		else
			fputc(*usage, f);
}

void cli_usage_error(const char *usage, const char *msg)
{
	if (msg)
		msg_error("%s", msg);
	cli_put_usage(usage, stderr);
	exit(1);
}

/* The option parser, instead of the C library's getopt_long (3 KB in musl): the same
 * results as musl's for every input (the GNU conventions): options and operands in any
 * order, the operands moved behind the options as they are passed; "--" ends the
 * options; -abc clusters; -ovalue or -o value ("o:"), -ovalue only ("o::"); --name=value
 * or --name value (required_argument), --name=value only (optional_argument); a long name
 * may be shortened to a prefix of only one option. Errors return '?' with optopt the
 * option character (0 for an unknown or ambiguous long option); nothing is printed. */
char *optarg;
int optind = 1, optopt;
static int optpos; /* of the next character in a cluster of short options, 0 at its start */

static int long_option(char **argv, const struct cli_option *longopts)
{
	const char *name = argv[optind] + 2;
	size_t len = strcspn(name, "=");
	const struct cli_option *o = NULL;
	int count = 0;

	for (const struct cli_option *l = longopts; l && l->name; l++) {
		if (strncmp(l->name, name, len))
			continue;
		o = l;
		if (!l->name[len]) {  /* an exact match beats prefixes */
			count = 1;
			break;
		}
		count++;
	}
	optind++;
	if (count != 1) {
		optopt = 0;
		return '?';
	}
	optopt = o->val;
	if (name[len] == '=') {
		if (o->has_arg == no_argument)
			return '?';
		optarg = (char *)name + len + 1;
	} else if (o->has_arg == required_argument) {
		if (!(optarg = argv[optind]))
			return '?';
		optind++;
	}
	return o->val;
}

static int short_option(int argc, char **argv, const char *shortopts)
{
	const char *arg = argv[optind], *spec;
	int c;

	if (arg[1] == '-' && !arg[2]) {  /* "--" */
		optind++;
		return -1;
	}
	if (!optpos)
		optpos = 1;
	c = (unsigned char)arg[optpos++];
	if (!arg[optpos]) {
		optind++;
		optpos = 0;
	}
	optopt = c;
	if (c == ':' || !(spec = strchr(shortopts, c)))
		return '?';
	if (spec[1] == ':' && (spec[2] != ':' || optpos)) {
		/* the rest of this argument, else the next one */
		optarg = optpos ? argv[optind] + optpos : argv[optind];
		optind++;
		optpos = 0;
		if (optind > argc)
			return '?';
	}
	return c;
}

/* The next option of argv (-1 at the end, then optind is the first operand): operands
 * before it are skipped, then moved behind it. */
static int next_option(int argc, char **argv, const char *shortopts,
		       const struct cli_option *longopts)
{
	int first = optind, at, end, c;

	if (!optind) {  /* optind = 0 restarts, as in the C library */
		optind = first = 1;
		optpos = 0;
	}
	for (at = first; at < argc && argv[at] && (argv[at][0] != '-' || !argv[at][1]); at++)
		;
	if (at >= argc || !argv[at])
		return -1;
	optind = at;
	optarg = NULL;
	c = argv[at][1] == '-' && argv[at][2] ? long_option(argv, longopts) :
						short_option(argc, argv, shortopts);
	/* the option and its argument go before the operands skipped (after "-x" without
	 * its value optind is argc + 1: musl's getopt_long then moves argv[argc] too) */
	end = optind > argc ? argc : optind;
	for (int moved = end - at; moved > 0 && at > first; moved--) {
		char *o = argv[end - 1];

		memmove(argv + first + 1, argv + first, (size_t)(end - 1 - first) * sizeof(*argv));
		argv[first] = o;
	}
	if (at > first)
		optind = first + (optind - at);
	return c;
}

int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct cli_option *longopts, const char *usage)
{
	char err[128];
	const char *last;   /* the argument that failed; after "-x" missing its value, optind is argc + 1 */
	int c;

	c = next_option(argc, argv, shortopts, longopts);
	if (c != '?' && c != ':')
		return c;
	last = optind > 1 && optind <= argc ? argv[optind - 1] : "";
	if (!strcmp(last, "--help")) {
		cli_put_usage(usage, stdout);
		exit(0);
	}
	if (cli_globals.cmd) {  /* btrfs-progs' wording in the btrfs command tree */
		if (optopt)
			fprintf(stderr, "%s: invalid option '%c'\n", cli_globals.cmd, optopt);
		else
			fprintf(stderr, "%s: unrecognized option '%s'\n", cli_globals.cmd, last);
		fprintf(stderr, "Try '%s --help' for more information\n", cli_globals.cmd);
		exit(1);
	}
	if (optopt)
		snprintf(err, sizeof(err), "%s for option -%c",
			 strchr(shortopts, optopt) ? "missing argument" : "invalid option", optopt);
	else
		snprintf(err, sizeof(err), "unrecognized option '%s'", last);
	cli_usage_error(usage, err);
}

int cli_getopt_long(int argc, char **argv, const char *shortopts, const char *longs,
		    const char *usage)
{
	static struct cli_option opts[16];
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
	v = str_to_ull(s, &end, 0);
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
	v = str_to_ull(s, &end, 0);
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

char *cli_strstr(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (;; s++) {
		if (!strncmp(s, needle, n))
			return (char *)s;
		if (!*s)
			return NULL;
	}
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
