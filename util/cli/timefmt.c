//build:Oz
/* Times formatted as btrfs-progs prints them (see timefmt.h). */
#include "timefmt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t tm_format(char *buf, size_t size, const char *fmt, const struct tm *tm)
{
	static const char names[] = "SunMonTueWedThuFriSatJanFebMarAprMayJunJulAugSepOctNovDec";
	const char *num = "%02d", *sub;
	char piece[32];
	size_t n = 0, len;
	long off;
	int v;

	for (; *fmt; fmt++) {
		sub = NULL;
		piece[0] = *fmt;
		piece[1] = 0;
		if (*fmt == '%' && fmt[1]) {
			switch (*++fmt) {
			case 'c': sub = "%a %b %e %H:%M:%S %Y"; break;
			case 'F': sub = "%Y-%m-%d"; break;
			case 'T': case 'X': sub = "%H:%M:%S"; break;
			case 'a': snprintf(piece, sizeof(piece), "%.3s", names + tm->tm_wday % 7 * 3); break;
			case 'b': snprintf(piece, sizeof(piece), "%.3s", names + 21 + tm->tm_mon % 12 * 3); break;
			case 'Y': /* as musl: 4 digits at least, '+' above 9999 */
				snprintf(piece, sizeof(piece), tm->tm_year + 1900LL > 9999 ? "+%lld" : "%04lld",
					 tm->tm_year + 1900LL);
				break;
			case 'z':
				off = labs(tm->tm_gmtoff);
				snprintf(piece, sizeof(piece), "%c%02ld%02ld", tm->tm_gmtoff < 0 ? '-' : '+',
					 off / 3600, off % 3600 / 60);
				break;
			case 'e': num = "%2d"; /* fall through */
			case 'd': v = tm->tm_mday; goto number;
			case 'm': v = tm->tm_mon + 1; goto number;
			case 'H': v = tm->tm_hour; goto number;
			case 'M': v = tm->tm_min; goto number;
			case 'S': v = tm->tm_sec;
			number:
				snprintf(piece, sizeof(piece), num, v);
				num = "%02d";
				break;
			default: /* %% and what is not listed: the character */
				piece[0] = *fmt;
			}
		}
		if (sub)
			tm_format(piece, sizeof(piece), sub, tm);
		len = strlen(piece);
		if (n + len >= size) {
			if (size)
				buf[0] = 0;
			return 0;
		}
		memcpy(buf + n, piece, len);
		n += len;
	}
	if (size)
		buf[n] = 0;
	return n;
}

const char *local_time_text(int64_t sec, const char *fmt, char *buf, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if (!sec || !localtime_r(&t, &tm) || !tm_format(buf, size, fmt, &tm))
		snprintf(buf, size, "-");
	return buf;
}
