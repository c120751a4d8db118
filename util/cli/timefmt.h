/* Times in output, as btrfs-progs prints them with strftime in the C locale. */
#ifndef UTIL_TIMEFMT_H
#define UTIL_TIMEFMT_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* strftime(buf, size, fmt, tm) in the C locale, for the conversions btrfsbox prints:
 * %a %b %c %d %e %F %H %m %M %S %T %X %Y %z %% (not the C library's: its strftime
 * takes 3 KB for locales, padding flags and conversions nothing here uses). Returns
 * the length, 0 (buf "") when it does not fit. */
size_t tm_format(char *buf, size_t size, const char *fmt, const struct tm *tm);

/* The local time of sec by fmt into buf, or "-" when sec is 0 or has no local time. */
const char *local_time_text(int64_t sec, const char *fmt, char *buf, size_t size);

#endif
