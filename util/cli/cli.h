/* Command-line conventions shared by every applet (btrfs-progs forms). */
#ifndef UTIL_CLI_H
#define UTIL_CLI_H
#include "config.h"
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define BTRFSBOX_VERSION "0.2"
/* The btrfs-progs release whose commands, options and output we follow. */
#define BTRFS_PROGS_COMPAT "6.2"

enum cli_format { CLI_FORMAT_TEXT, CLI_FORMAT_JSON };
/* Global options of the `btrfs` command (set by the btrfs applet before dispatch). */
struct cli_globals {
	int format;     /* enum cli_format */
	int verbose;    /* -v count (or --log level: default 1 .. debug 4); -1 after -q */
	int dry_run;    /* --dry-run: report what would change, change nothing */
	const char *cmd; /* "btrfs balance start" while a command of the tree runs */
};
extern struct cli_globals cli_globals;

/* One more -v (after -q: the first level again). */
void cli_be_verbose(void);

/* "ERROR: ..." / "WARNING: ..." on stderr, newline added. */
void msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* In a usage text: the line of the size unit options (--raw, --iec, ...). */
#define CLI_UNITS "\001"

/* A usage text, declared beside the code of its command:
 *     USAGE(name) = "usage: btrfs ...\n" "...";
 * With COMPRESS_USAGE, config/usage.sh collects every such text (and the descriptions
 * of the //cmd: lines) into one deflate-compressed blob, and name is a 3-byte reference
 * into it (USAGE_REF, entry number); usage_text() gives the text either way. The cli_*
 * functions below take either. */
#define USAGE_REF '\002'
#if defined(USAGE_EXTRACT)      /* config/usage.sh: mark the texts in the preprocessed source */
#define USAGE(name) __usage_text__ name
#elif CFG_COMPRESS_USAGE && CFG_COMPRESS_ZLIB
#define USAGE_COMPRESSED 1
#include "usage.h"              /* USAGE_ID_<file>__<name>: the entry number */
#define USAGE_ID(file, name) USAGE_ID_(file, name)
#define USAGE_ID_(file, name) USAGE_ID_##file##__##name
#define USAGE(name)                                                                   \
	static const char name[3] = { USAGE_REF, USAGE_ID(SRC_ID, name) & 255,           \
				      USAGE_ID(SRC_ID, name) >> 8 };                    \
	static const char __attribute__((unused)) name##_uncompressed[]
const char *usage_text(const char *usage);
/* Entry n of the blob: the description of line n of commands.h when n < its lines. */
const char *usage_entry(unsigned n);
#else
#define USAGE_COMPRESSED 0
#define USAGE(name) static const char name[]
#define usage_text(usage) (usage)
#endif

/* A long option: has_arg no_argument, required_argument or optional_argument (as in
 * <getopt.h>), val what cli_getopt returns for it. (struct option without its flag:
 * half the size.) An array of them ends with a NULL name. */
struct cli_option {
	const char *name;
	short has_arg, val;
};

/* getopt_long with the usual conventions: "--help" prints usage on stdout and exits 0;
 * an unknown option or missing argument prints an error and the usage on stderr and
 * exits 1. Returns the option like getopt_long, -1 at the end (then use optind). */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct cli_option *longopts, const char *usage);
/* cli_getopt with the long options as a string: "name=c" (no argument), "name:=c"
 * (required argument), "name::=c" (optional argument), separated by spaces; c is the
 * character returned. At most 15 options. */
int cli_getopt_long(int argc, char **argv, const char *shortopts, const char *longs,
		    const char *usage);
/* The usage text (CLI_UNITS spelled out) on f. */
void cli_put_usage(const char *usage, FILE *f);
/* Usage on stderr, exit 1 (with an "ERROR: ..." line first when msg is not NULL). */
void cli_usage_error(const char *usage, const char *msg) __attribute__((noreturn));
/* Exit 1 with usage unless min <= argc - optind <= max (max < 0: no limit). */
void cli_check_argc(int argc, int min, int max, const char *usage);
/* For a command without options: cli_getopt (--help, "--", unknown options), then
 * cli_check_argc; the arguments start at optind. */
void cli_no_options(int argc, char **argv, int min, int max, const char *usage);
/* "NAME, part of btrfsbox vX (btrfs-progs 6.2 compatible)" on stdout. */
void cli_print_version(const char *name);
/* Parse a decimal or 0x number; -1 on garbage or overflow. */
int cli_parse_u64(const char *s, uint64_t *out);
/* A number argument (decimal, 0x hex, 0 octal) or exit 1 after btrfs-progs' "ERROR: X is
 * not a valid numeric value", "X: negative value is invalid" or "X is too large". */
uint64_t cli_arg_u64(const char *s);
/* 1 when s is one or more decimal digits and nothing else. */
int cli_all_digits(const char *s);
/* strstr() for the few short searches of the commands (musl's two-way strstr is 1.2 KB). */
char *cli_strstr(const char *s, const char *needle);

#endif
