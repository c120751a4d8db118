/* Command-line conventions shared by every applet (btrfs-progs forms). */
#ifndef UTIL_CLI_H
#define UTIL_CLI_H
#include <getopt.h>
#include <stdint.h>

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

/* getopt_long with the usual conventions: "--help" prints usage on stdout and exits 0;
 * an unknown option or missing argument prints an error and the usage on stderr and
 * exits 1. Returns the option like getopt_long, -1 at the end (then use optind). */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts, const char *usage);
/* cli_getopt with the long options as a string: "name=c" (no argument), "name:=c"
 * (required argument), "name::=c" (optional argument), separated by spaces; c is the
 * character returned. At most 15 options. */
int cli_getopt_long(int argc, char **argv, const char *shortopts, const char *longs,
		    const char *usage);
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

#endif
