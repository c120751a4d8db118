/* Size printing and parsing; expected strings are what btrfs-progs 6.2 prints
 * (pretty_size_mode in single-precision float, hence "1.07kB" for 1065). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "util/cli/units.h"
#include "util/strnum.h"

TEST(pretty_size_modes)
{
	static const struct { uint64_t v; unsigned mode; const char *want; } cases[] = {
		{ 0, UNITS_BINARY, "0.00B" },
		{ 1023, UNITS_BINARY, "1023.00B" },
		{ 1024, UNITS_BINARY, "1.00KiB" },
		{ 16777216, UNITS_HUMAN, "16.00MiB" },
		{ 1073741824, UNITS_DEFAULT, "1.00GiB" },
		{ 1610613759, UNITS_BINARY, "1.50GiB" },
		{ 1048575, UNITS_BINARY, "1024.00KiB" },
		{ 16777215, UNITS_BINARY, "16.00MiB" },
		{ 123456789, UNITS_BINARY, "117.74MiB" },
		{ 8589934592, UNITS_BINARY, "8.00GiB" },
		{ UINT64_MAX, UNITS_BINARY, "16.00EiB" },
		{ 12345, UNITS_RAW, "12345" },
		{ UINT64_MAX, UNITS_RAW, "18446744073709551615" },
		{ (uint64_t)-5, UNITS_RAW | UNITS_NEGATIVE, "-5" },
		{ 1048576000, UNITS_DECIMAL, "1.05GB" },
		{ 999, UNITS_DECIMAL, "999.00B" },
		{ 1000, UNITS_DECIMAL, "1.00kB" },
		{ 1065, UNITS_DECIMAL, "1.07kB" },
		{ 1135, UNITS_DECIMAL, "1.13kB" },
		{ 1073741824, UNITS_DECIMAL, "1.07GB" },
		{ 5368709119, UNITS_DECIMAL, "5.37GB" },
		{ 1073741824, UNITS_BINARY | UNITS_KBYTES, "1048576.00KiB" },
		{ 1073741824, UNITS_BINARY | UNITS_MBYTES, "1024.00MiB" },
		{ 1073741824, UNITS_BINARY | UNITS_GBYTES, "1.00GiB" },
		{ 1073741824, UNITS_BINARY | UNITS_TBYTES, "0.00TiB" },
		{ 1073741824, UNITS_DECIMAL | UNITS_MBYTES, "1073.74MB" },
		{ 123456789012345, UNITS_BINARY | UNITS_KBYTES, "120563269632.00KiB" },
		{ 12345, UNITS_BINARY | UNITS_BYTES, "12345.00B" },
		{ (uint64_t)-1536, UNITS_BINARY | UNITS_NEGATIVE, "-1.50KiB" },
		{ (uint64_t)-1536, UNITS_BINARY, "16.00EiB" },
		{ (uint64_t)-1, UNITS_DECIMAL | UNITS_NEGATIVE, "-1.00B" },
		{ (uint64_t)-123456789012345, UNITS_DECIMAL | UNITS_GBYTES | UNITS_NEGATIVE, "-123456.79GB" },
	};
	char buf[UNITS_BUF];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = pretty_size_mode(cases[i].v, cases[i].mode, buf);
		CHECK(got == buf);
		if (strcmp(got, cases[i].want))
			fprintf(stderr, "  %llu mode %#x: got %s want %s\n",
				(unsigned long long)cases[i].v, cases[i].mode, got, cases[i].want);
		CHECK(!strcmp(got, cases[i].want));
	}
	/* The temporary-buffer form: two in one expression stay distinct. */
	CHECK(strcmp(pretty_size(1024, UNITS_RAW), pretty_size(2048, UNITS_RAW)) < 0);
}

TEST(parse_size_values)
{
	static const struct { const char *s; int ret; uint64_t want; } cases[] = {
		{ "4096", 0, 4096 },
		{ "0", 0, 0 },
		{ "512k", 0, 512 << 10 },
		{ "512K", 0, 512 << 10 },
		{ "300M", 0, 300ull << 20 },
		{ "1g", 0, 1ull << 30 },
		{ "1G", 0, 1ull << 30 },
		{ "2t", 0, 2ull << 40 },
		{ "3P", 0, 3ull << 50 },
		{ "15e", 0, 15ull << 60 },
		{ "100b", 0, 100 },
		{ "100B", 0, 100 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "16e", -ERANGE, 0 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
		{ "17179869184G", -ERANGE, 0 },
		{ "17179869183G", 0, 17179869183ull << 30 },
		{ "", -EINVAL, 0 },
		{ "G", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "1.5G", -EINVAL, 0 },
		{ "1GB", -EINVAL, 0 },
		{ "1x", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1z", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int ret = parse_size(cases[i].s, &v);
		if (ret != cases[i].ret)
			fprintf(stderr, "  parse_size(\"%s\") = %d\n", cases[i].s, ret);
		CHECK(ret == cases[i].ret);
		CHECK(v == (ret ? 12345 : cases[i].want));
	}
	CHECK(parse_size(NULL, &(uint64_t){ 0 }) == -EINVAL);
}

/* str_to_ull gives what the C library's strtoull gives: value, end and errno (glibc
 * leaves errno alone when there is no number, musl and str_to_ull set EINVAL). */
TEST(str_to_ull_like_strtoull)
{
	static const char *const in[] = {
		"", "0", "00", "08", "012", "0x", "0x1g", "0X1F", "0xg", " \t\n42abc", "+7", "-7",
		"-", "+", " -0x10", "18446744073709551615", "18446744073709551616",
		"99999999999999999999999", "-18446744073709551616", "0x0", "4294967296", "abc",
		"1 2", "  ", "0b1", "0xffffffffffffffff", "0x10000000000000000",
	};
	static const int bases[] = { 0, 10, 16 };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		for (size_t b = 0; b < 3; b++) {
			char *want_end, *end;
			unsigned long long want, got;
			int want_errno;

			errno = 0;
			want = strtoull(in[i], &want_end, bases[b]);
			want_errno = errno;
			errno = 0;
			got = str_to_ull(in[i], &end, bases[b]);
			if (got != want || end != want_end ||
			    (errno != want_errno && !(end == in[i] && errno == EINVAL)))
				fprintf(stderr, "  str_to_ull(\"%s\", %d) = %llu\n", in[i], bases[b], got);
			CHECK(got == want);
			CHECK(end == want_end);
			CHECK(errno == want_errno || (end == in[i] && errno == EINVAL));
		}
	CHECK(str_to_ull("12", NULL, 10) == 12);
}

/* Runs units_parse_args on a space-separated command line; returns the mode and
 * leaves what remains, joined by spaces, in rest. */
static unsigned parse_line(const char *line, int short_opts, char *rest)
{
	char copy[256], *argv[16];
	int argc = 0;

	strcpy(copy, line);
	for (char *t = strtok(copy, " "); t; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	unsigned mode = units_parse_args(&argc, argv, short_opts);
	rest[0] = '\0';
	for (int i = 0; i < argc; i++)
		strcat(strcat(rest, i ? " " : ""), argv[i]);
	CHECK(argv[argc] == NULL);
	return mode;
}

TEST(units_args)
{
	static const struct { const char *line; int short_opts; unsigned mode; const char *rest; } cases[] = {
		{ "df /mnt", 1, UNITS_DEFAULT, "df /mnt" },
		{ "df --raw /mnt", 0, UNITS_RAW, "df /mnt" },
		{ "df -b /mnt", 1, UNITS_RAW, "df /mnt" },
		{ "show -b /mnt", 0, UNITS_DEFAULT, "show -b /mnt" },
		{ "df --si -h", 1, UNITS_HUMAN, "df" },
		{ "df -h --si", 1, UNITS_DECIMAL, "df" },
		{ "df -H", 1, UNITS_DECIMAL, "df" },
		{ "df --human-readable", 0, UNITS_HUMAN, "df" },
		{ "df --iec", 0, UNITS_BINARY, "df" },
		{ "df --si --gbytes x", 0, UNITS_DECIMAL | UNITS_GBYTES, "df x" },
		{ "df -g --si", 1, UNITS_DECIMAL | UNITS_GBYTES, "df" },
		{ "df -k", 1, UNITS_BINARY | UNITS_KBYTES, "df" },
		{ "df -m -t", 1, UNITS_BINARY | UNITS_TBYTES, "df" },
		{ "df --mbytes --tbytes --kbytes", 0, UNITS_BINARY | UNITS_KBYTES, "df" },
		{ "df --kbytes --raw", 0, UNITS_RAW, "df" },
		{ "df --raw --kbytes", 0, UNITS_RAW | UNITS_KBYTES, "df" },
		{ "df -x --raw -- --si -h", 1, UNITS_RAW, "df -x -- --si -h" },
	};
	char rest[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned mode = parse_line(cases[i].line, cases[i].short_opts, rest);
		CHECK(mode == cases[i].mode);
		CHECK(!strcmp(rest, cases[i].rest));
	}
}
