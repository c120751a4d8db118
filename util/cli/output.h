/* The one output emitter for commands that print either text rows or JSON
 * (`btrfs --format json`, cli_globals.format).
 *
 * JSON follows btrfs-progs 6.2 exactly: an object whose first member is
 * "__header": {"version": "1"}, two-space indentation, one member per line, every
 * scalar value a quoted string (numbers too: "total": "8388608"), strings escaped
 * (\" \\ \b \f \n \r \t, other control characters as \u00XX). Example:
 *
 *	struct out o;
 *	out_start(&o, 0, 0);
 *	out_group_begin(&o, "filesystem-df", OUT_LIST);   // "filesystem-df": [
 *	out_group_begin(&o, NULL, OUT_MAP);               //   {
 *	out_str(&o, NULL, "bg-type", "Data");             //     "bg-type": "Data",
 *	out_printf(&o, NULL, "total", "%llu", n);         //     "total": "8388608"
 *	out_group_end(&o);                                //   }
 *	out_group_end(&o);                                // ]
 *	out_end(&o);                                      // }
 *
 * Text mode prints only the rows: each value with a non-NULL text label comes out as
 * INDENT spaces, "label:", spaces up to WIDTH columns, the value and a newline
 * (`out_start(&o, 24, 2)` makes "  Name:                 value"). A NULL text label
 * means the value is JSON-only. Groups, out_start and out_end print nothing in text
 * mode, so a command can print free-form text itself when out_json() is 0. */
#ifndef UTIL_OUTPUT_H
#define UTIL_OUTPUT_H
#include <stdint.h>
#include <stdio.h>

#define OUT_MAX_DEPTH 16
enum out_group { OUT_MAP, OUT_LIST };

struct out {
	int json;                   /* cli_globals.format == CLI_FORMAT_JSON at out_start */
	int width, indent;          /* text rows */
	int depth;
	char type[OUT_MAX_DEPTH];   /* enum out_group of each open level */
	char members[OUT_MAX_DEPTH];/* something printed at that level already */
	FILE *f;                    /* stdout */
};

/* 1 when the global format is JSON (to choose between free text and the emitter). */
int out_json(void);

/* 1 after the global -q (cli_globals.verbose < 0): normal output is silenced. */
int out_quiet(void);
/* Free-form text on stdout (printf), nothing when out_quiet(). */
void out_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts the document: JSON "{" and the version header. */
void out_start(struct out *o, int width, int indent);
/* The same to another stream (tests). */
void out_start_file(struct out *o, FILE *f, int width, int indent);
/* Closes the document: JSON "}" and a newline. */
void out_end(struct out *o);

/* Opens a JSON object or array; name is its member name inside an object, NULL
 * inside an array. Nesting deeper than OUT_MAX_DEPTH aborts (a programming error). */
void out_group_begin(struct out *o, const char *name, enum out_group type);
void out_group_end(struct out *o);

/* One value: text row "label: value" (when text is non-NULL) or JSON "json": "value"
 * (json NULL inside an array gives just the quoted value). */
void out_str(struct out *o, const char *text, const char *json, const char *value);
void out_printf(struct out *o, const char *text, const char *json, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void out_u64(struct out *o, const char *text, const char *json, uint64_t value);
/* A JSON-only number without quotes (btrfs-progs 6.19's newer JSON: "referenced": 16384);
 * nothing in text mode. */
void out_num(struct out *o, const char *json, uint64_t value);
/* A 16-byte UUID as "xxxxxxxx-xxxx-...", or "-" when all zero (as btrfs-progs does). */
void out_uuid(struct out *o, const char *text, const char *json, const uint8_t uuid[16]);

#endif
