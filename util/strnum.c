//build:Oz
/* str_to_ull (see strnum.h). */
#include "strnum.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>

unsigned long long str_to_ull(const char *s, char **end, int base)
{
	const char *p = s, *digits;
	unsigned long long v = 0, b;
	unsigned d;
	int neg = 0, over = 0;

	while (*p == ' ' || (unsigned)(*p - '\t') < 5)
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (base != 10 && p[0] == '0' && (p[1] | 0x20) == 'x' && isxdigit((unsigned char)p[2])) {
		p += 2;
		base = 16;
	} else if (!base) {
		base = *p == '0' ? 8 : 10;
	}
	b = (unsigned)base;
	for (digits = p;; p++) {
		d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0') :
		    (*p | 0x20) >= 'a' && (*p | 0x20) <= 'z' ? (unsigned)((*p | 0x20) - 'a' + 10) : 99;
		if (d >= b)
			break;
		if (v > (ULLONG_MAX - d) / b)
			over = 1;
		v = v * b + d;
	}
	if (end)
		*end = (char *)(p == digits ? s : p);
	if (p == digits) {
		errno = EINVAL;   /* as musl's: no number */
		return 0;
	}
	if (over) {
		errno = ERANGE;
		return ULLONG_MAX;
	}
	return neg ? -v : v;
}
