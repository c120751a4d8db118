/* util/output: the JSON layout of btrfs-progs 6.2 and text rows. */
#include "unit.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include <stdlib.h>
#include <string.h>

static char *emit(int json, void (*body)(struct out *))
{
	struct out o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cli_globals.format = json ? CLI_FORMAT_JSON : CLI_FORMAT_TEXT;
	out_start_file(&o, f, 10, 2);
	body(&o);
	out_end(&o);
	fclose(f);
	cli_globals.format = CLI_FORMAT_TEXT;
	return buf;
}

static void df_like(struct out *o)
{
	static const uint8_t u[16] = { 0xaa, 0xe7, [15] = 0xe8 };

	out_group_begin(o, "filesystem-df", OUT_LIST);
	out_group_begin(o, NULL, OUT_MAP);
	out_str(o, "Type", "bg-type", "Da\"ta\n");
	out_u64(o, "Total", "total", 8388608);
	out_group_end(o);
	out_group_begin(o, NULL, OUT_MAP);
	out_uuid(o, NULL, "uuid", u);
	out_group_end(o);
	out_group_end(o);
}

TEST(output_json_layout)
{
	char *s = emit(1, df_like);

	CHECK(!strcmp(s,
		"{\n"
		"  \"__header\": {\n"
		"    \"version\": \"1\"\n"
		"  },\n"
		"  \"filesystem-df\": [\n"
		"    {\n"
		"      \"bg-type\": \"Da\\\"ta\\n\",\n"
		"      \"total\": \"8388608\"\n"
		"    },\n"
		"    {\n"
		"      \"uuid\": \"aae70000-0000-0000-0000-0000000000e8\"\n"
		"    }\n"
		"  ]\n"
		"}\n"));
	free(s);
}

TEST(output_text_rows)
{
	char *s = emit(0, df_like);

	CHECK(!strcmp(s, "  Type:     Da\"ta\n\n  Total:    8388608\n"));
	free(s);
}
