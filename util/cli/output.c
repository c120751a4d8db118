//build:Oz
/* The output emitter: text rows or btrfs-progs 6.2 JSON (see output.h). */
#include "cli.h"
#include "output.h"
#include "util/uuid.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int out_json(void)
{
	return cli_globals.format == CLI_FORMAT_JSON;
}

int out_quiet(void)
{
	return cli_globals.verbose < 0;
}

void out_say(const char *fmt, ...)
{
	va_list ap;

	if (out_quiet())
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static void indent(struct out *o, int n)
{
	fprintf(o->f, "%*s", n, "");
}

/* Before a member at the current level: a newline the first time, ",\n" later, then
 * the indentation of the level. */
static void separator(struct out *o)
{
	fputs(o->members[o->depth] ? ",\n" : "\n", o->f);
	o->members[o->depth] = 1;
	indent(o, 2 * o->depth);
}

static void push(struct out *o, enum out_group type)
{
	if (o->depth + 1 >= OUT_MAX_DEPTH) {
		msg_error("output nesting deeper than %d", OUT_MAX_DEPTH);
		abort();
	}
	o->depth++;
	o->type[o->depth] = (char)type;
	o->members[o->depth] = 0;
}

static void put_escaped(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", o->f); break;
		case '\\': fputs("\\\\", o->f); break;
		case '\b': fputs("\\b", o->f); break;
		case '\f': fputs("\\f", o->f); break;
		case '\n': fputs("\\n", o->f); break;
		case '\r': fputs("\\r", o->f); break;
		case '\t': fputs("\\t", o->f); break;
		default:
			if (*p < 0x20)
				fprintf(o->f, "\\u%04x", *p);
			else
				fputc(*p, o->f);
		}
	}
}

void out_start(struct out *o, int width, int ind)
{
	out_start_file(o, stdout, width, ind);
}

void out_start_file(struct out *o, FILE *f, int width, int ind)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->json = out_json();
	o->width = width;
	o->indent = ind;
	if (!o->json)
		return;
	/* The document object is level 1, so its members are indented by two. */
	fputc('{', o->f);
	o->depth = 1;
	o->type[1] = OUT_MAP;
	out_group_begin(o, "__header", OUT_MAP);
	out_str(o, NULL, "version", "1");
	out_group_end(o);
}

void out_end(struct out *o)
{
	if (!o->json)
		return;
	if (o->depth != 1)
		msg_warn("output: %d groups left open", o->depth - 1);
	fputs("\n}\n", o->f);
}

void out_group_begin(struct out *o, const char *name, enum out_group type)
{
	if (!o->json)
		return;
	separator(o);
	if (name)
		fprintf(o->f, "\"%s\": ", name);
	fputc(type == OUT_MAP ? '{' : '[', o->f);
	push(o, type);
}

void out_group_end(struct out *o)
{
	if (!o->json)
		return;
	if (o->depth <= 1) {
		msg_error("output: closing a group that is not open");
		abort();
	}
	fputc('\n', o->f);
	indent(o, 2 * (o->depth - 1));
	fputc(o->type[o->depth] == OUT_MAP ? '}' : ']', o->f);
	o->depth--;
}

/* JSON "key": or the text label padded to the width. Returns 0 when the value is not
 * printed at all (a JSON-only value in text mode). */
static int value_begin(struct out *o, const char *text, const char *json)
{
	if (o->json) {
		separator(o);
		if (json)
			fprintf(o->f, "\"%s\": ", json);
		fputc('"', o->f);
		return 1;
	}
	if (!text)
		return 0;
	indent(o, o->indent);
	fprintf(o->f, "%s%s", text, *text ? ":" : "");
	indent(o, o->width - (int)strlen(text) - (*text ? 1 : 0));
	return 1;
}

static void value_end(struct out *o)
{
	fputc(o->json ? '"' : '\n', o->f);
}

void out_str(struct out *o, const char *text, const char *json, const char *value)
{
	if (!value_begin(o, text, json))
		return;
	if (o->json)
		put_escaped(o, value);
	else
		fputs(value, o->f);
	value_end(o);
}

void out_printf(struct out *o, const char *text, const char *json, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	out_str(o, text, json, n < 0 ? "" : s);
	free(s);
}

void out_u64(struct out *o, const char *text, const char *json, uint64_t value)
{
	out_printf(o, text, json, "%llu", (unsigned long long)value);
}

void out_uuid(struct out *o, const char *text, const char *json, const uint8_t u[16])
{
	char buf[UUID_STR_LEN];

	if (uuid_is_null(u)) {
		out_str(o, text, json, "-");
		return;
	}
	uuid_unparse(u, buf);
	out_str(o, text, json, buf);
}

void out_num(struct out *o, const char *json, uint64_t value)
{
	if (!o->json)
		return;
	separator(o);
	fprintf(o->f, "\"%s\": %llu", json, (unsigned long long)value);
}
