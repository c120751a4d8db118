//build:Oz
/* Sizes parsed from the command line and printed with units (see units.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "units.h"
#include <ctype.h>
#include <limits.h>

static const char unit_names[2][7][4] = {
	{ "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" },
	{ "B", "kB", "MB", "GB", "TB", "PB", "EB" },
};

const char *pretty_size_mode(uint64_t size, unsigned mode, char buf[UNITS_BUF])
{
	int negative = !!(mode & UNITS_NEGATIVE);
	unsigned kind = mode & ~(UNITS_MODE_MASK | UNITS_NEGATIVE);
	unsigned unit = mode & UNITS_MODE_MASK;
	int decimal = kind == UNITS_DECIMAL, divs = 0;
	uint64_t mult = decimal ? 1000 : 1024, base = 1;
	/* Magnitude of the value; the sign is put back at the end. */
	uint64_t mag = negative && (int64_t)size < 0 ? -size : size, shown = mag;

	if (kind == UNITS_RAW) {
		if (negative)
			snprintf(buf, UNITS_BUF, "%" PRId64, (int64_t)size);
		else
			snprintf(buf, UNITS_BUF, "%" PRIu64, size);
		return buf;
	}
	if (unit >= UNITS_KBYTES && unit <= UNITS_TBYTES) {
		for (divs = 0; divs < (int)unit - 1; divs++)
			base *= mult;
	} else if (unit != UNITS_BYTES) {
		/* Divide while the value stays >= 1 unit, keeping the value before the
		 * last integer division for the fraction (so 1536 KiB + 1023 B -> 1.50MiB). */
		for (; mag >= mult; divs++) {
			shown = mag;
			mag /= mult;
		}
		if (divs)
			base = mult;
	}
	/* Single precision, like btrfs-progs, so rounding matches to the last digit. */
	float value = (float)shown / (float)base;
	if (negative && (int64_t)size < 0)
		value = -value;
	snprintf(buf, UNITS_BUF, "%.2f%s", value, unit_names[decimal][divs]);
	return buf;
}

int parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "bkmgtpe";
	uint64_t v = 0;
	const char *p = s, *suffix;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (unsigned)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (*p) {
		suffix = strchr(suffixes, *p | 0x20);
		if (!suffix || p[1])
			return -EINVAL;
		for (long shift = 10 * (suffix - suffixes); shift; shift -= 10) {
			if (v > UINT64_MAX >> 10)
				return -ERANGE;
			v <<= 10;
		}
	}
	*out = v;
	return 0;
}

int parse_size_arg(const char *s, uint64_t *out)
{
	int ret = parse_size(s, out);
	const char *p = s;

	if (!ret)
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s)
		msg_error("size value '%s' is invalid", s);
	else if (ret == -ERANGE)
		msg_error("size value '%s' is too large for u64", s);
	else if (p[1])
		msg_error("illegal suffix contains character '%c' in wrong position", p[1]);
	else
		msg_error("unknown size descriptor '%c'", tolower((unsigned char)*p));
	return -1;
}

unsigned units_parse_args(int *argc, char **argv, int short_opts)
{
	/* keep: the bits of the current mode a switch leaves alone. */
	static const struct {
		char name[17];
		uint8_t is_short;
		uint16_t value;
		unsigned keep;
	} args[] = {
		{ "--raw", 0, UNITS_RAW, 0 },
		{ "--human-readable", 0, UNITS_HUMAN, 0 },
		{ "--iec", 0, UNITS_BINARY, UNITS_MODE_MASK },
		{ "--si", 0, UNITS_DECIMAL, UNITS_MODE_MASK },
		{ "--kbytes", 0, UNITS_KBYTES, ~UNITS_MODE_MASK },
		{ "--mbytes", 0, UNITS_MBYTES, ~UNITS_MODE_MASK },
		{ "--gbytes", 0, UNITS_GBYTES, ~UNITS_MODE_MASK },
		{ "--tbytes", 0, UNITS_TBYTES, ~UNITS_MODE_MASK },
		{ "-b", 1, UNITS_RAW, 0 },
		{ "-h", 1, UNITS_HUMAN, 0 },
		{ "-H", 1, UNITS_DECIMAL, 0 },
		{ "-k", 1, UNITS_KBYTES, ~UNITS_MODE_MASK },
		{ "-m", 1, UNITS_MBYTES, ~UNITS_MODE_MASK },
		{ "-g", 1, UNITS_GBYTES, ~UNITS_MODE_MASK },
		{ "-t", 1, UNITS_TBYTES, ~UNITS_MODE_MASK },
	};
	unsigned mode = UNITS_DEFAULT;
	int i, n = 0;

	for (i = 0; i < *argc && strcmp(argv[i], "--"); i++) {
		size_t a;
		for (a = 0; a < sizeof(args) / sizeof(args[0]); a++)
			if ((short_opts || !args[a].is_short) && !strcmp(argv[i], args[a].name))
				break;
		if (a < sizeof(args) / sizeof(args[0]))
			mode = (mode & args[a].keep) | args[a].value;
		else
			argv[n++] = argv[i];
	}
	for (; i < *argc; i++)
		argv[n++] = argv[i];
	*argc = n;
	argv[n] = NULL;
	return mode;
}
