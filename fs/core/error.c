//build:Oz
/* Error values with context (struct fs_error, fs.h): recorded, extended, formatted. */
#include "fs.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fs_verr(struct fs_error *e, int code, uint64_t tree, uint64_t logical,
		   const char *fmt, va_list ap)
{
	if (!e)
		return code;
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->tree = tree;
	e->logical = logical;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return code;
}

int fs_err(struct fs_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = fs_verr(e, code, 0, 0, fmt, ap);
	va_end(ap);
	return code;
}

int fs_err_at(struct fs_error *e, int code, uint64_t tree, uint64_t logical, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = fs_verr(e, code, tree, logical, fmt, ap);
	va_end(ap);
	return code;
}

void fs_err_wrap(struct fs_error *e, const char *prefix, const char *suffix)
{
	char buf[sizeof(e->msg) * 2 + 64];

	snprintf(buf, sizeof(buf), "%s%s%s", prefix ? prefix : "", e->msg, suffix ? suffix : "");
	snprintf(e->msg, sizeof(e->msg), "%.*s", (int)sizeof(e->msg) - 1, buf);
}

int fs_err_key(struct fs_error *e, const struct fs_key *key)
{
	if (!e)
		return -EUCLEAN;
	e->has_key = 1;
	e->key = *key;
	return e->code;
}

void fs_err_clear(struct fs_error *e)
{
	memset(e, 0, sizeof(*e));
}

const char *fs_error_format(const struct fs_error *e, char *buf, size_t size)
{
	size_t n;

	n = (size_t)snprintf(buf, size, "%s", e->msg[0] ? e->msg : strerror(e->code < 0 ? -e->code : e->code));
#define ADD(...) do { if (n < size) n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__); } while (0)
	if (e->tree || e->logical || e->has_key || e->mirror) {
		const char *sep = " (";
		if (e->tree) { ADD("%stree %llu", sep, (unsigned long long)e->tree); sep = ", "; }
		if (e->logical) { ADD("%sblock %llu", sep, (unsigned long long)e->logical); sep = ", "; }
		if (e->has_key) {
			ADD("%skey (%llu %u %llu)", sep, (unsigned long long)e->key.objectid,
			    e->key.type, (unsigned long long)e->key.offset);
			sep = ", ";
		}
		if (e->mirror) ADD("%smirror %d", sep, e->mirror);
		ADD(")");
	}
#undef ADD
	return buf;
}
