/* Numbers from text without the C library's number scanner (musl's intscan: 2 KB static). */
#ifndef UTIL_STRNUM_H
#define UTIL_STRNUM_H

/* strtoull(s, end, base) for base 0, 10 or 16, without the C library's number
 * scanner (2 KB static): leading white space, a sign (minus negates), the 0x and
 * (base 0) 0 prefixes, ULLONG_MAX and errno ERANGE on overflow; *end (if end) at
 * the first character not used, s when there is no number (then errno EINVAL, as in
 * musl). */
unsigned long long str_to_ull(const char *s, char **end, int base);

#endif
