/* A small POSIX-ERE matcher for restore --path-regex: literals, '.', bracket
 * expressions with ranges and [:classes:], '*', '+', '?', '|', groups, '^', '$' and
 * '\' escapes, optionally case-insensitive. Compiled to a Thompson NFA and run as a
 * Pike VM: time linear in pattern x input, so no pattern can make it hang.
 * (musl's regcomp+regexec with their wide-character tables are ~40 KB.) */
#ifndef UTIL_REGEX_H
#define UTIL_REGEX_H
#include <stddef.h>

struct re;
/* 0, or -1 with a reason in err (unbalanced parenthesis, bad bracket, ...). */
int re_compile(struct re **out, const char *pattern, int icase, char *err, size_t errlen);
/* 1 when s contains a match (anchors apply), 0 when not. */
int re_search(const struct re *re, const char *s);
void re_free(struct re *re);

#endif
