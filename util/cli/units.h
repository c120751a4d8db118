/* Sizes on the command line and in output, as btrfs-progs parses and prints them. */
#ifndef UTIL_UNITS_H
#define UTIL_UNITS_H
#include <stdint.h>

/* A print mode is a unit (low byte) ORed with a kind. Unit 0 picks the largest
 * unit that keeps the number >= 1. */
#define UNITS_BYTES	1
#define UNITS_KBYTES	2
#define UNITS_MBYTES	3
#define UNITS_GBYTES	4
#define UNITS_TBYTES	5
#define UNITS_MODE_SHIFT 8
#define UNITS_MODE_MASK	((1u << UNITS_MODE_SHIFT) - 1)
#define UNITS_RAW	(1u << UNITS_MODE_SHIFT)	/* plain number of bytes */
#define UNITS_BINARY	(2u << UNITS_MODE_SHIFT)	/* KiB MiB ... */
#define UNITS_DECIMAL	(3u << UNITS_MODE_SHIFT)	/* kB MB ... */
#define UNITS_NEGATIVE	(4u << UNITS_MODE_SHIFT)	/* the value is an int64_t */
#define UNITS_HUMAN	UNITS_BINARY
#define UNITS_DEFAULT	UNITS_HUMAN
#define UNITS_BUF	32

/* Formats size into buf and returns buf: "12345" (raw), "1.00GiB", "16.00MiB",
 * "0.00B", "1.05GB", "-1.50KiB" (with UNITS_NEGATIVE). */
const char *pretty_size_mode(uint64_t size, unsigned mode, char buf[UNITS_BUF]);
/* The same into a temporary that lives until the end of the enclosing block,
 * e.g. printf("%s\n", pretty_size(n, mode)). */
#define pretty_size(size, mode) pretty_size_mode((size), (mode), (char[UNITS_BUF]){ 0 })

/* "4096", "512k", "300M", "1G", ... (suffix b k m g t p e in either case, powers
 * of 1024). Returns 0, -EINVAL for a malformed value, -ERANGE when it overflows. */
int parse_size(const char *s, uint64_t *out);

/* parse_size() for a command-line value, reporting a bad one as btrfs-progs 6.2 does
 * ("ERROR: size value 'x' is invalid", "... is too large for u64", "unknown size
 * descriptor 'q'", ...). 0 or -1. */
int parse_size_arg(const char *s, uint64_t *out);

/* Removes the unit switches from argv (up to a "--") and returns the resulting
 * mode, UNITS_DEFAULT when none is given: --raw --human-readable --iec --si
 * --kbytes --mbytes --gbytes --tbytes, and with short_opts also
 * -b -h -H -k -m -g -t. Call it before getopt; *argc is updated. */
unsigned units_parse_args(int *argc, char **argv, int short_opts);

#endif
