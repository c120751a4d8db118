/* util/scrub_status: the btrfs-progs status file, parsed and written back. */
#include "unit.h"
#include "util/scrub_status.h"
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#define FSID "1512f571-8eab-4960-9deb-925e3b86bc6f"
#define OTHER "00000000-8eab-4960-9deb-925e3b86bc6f"

/* a line as btrfs-progs 6.2 writes it */
static const char sample[] =
	"scrub status:1\n"
	FSID ":1|data_extents_scrubbed:62|tree_extents_scrubbed:18|data_bytes_scrubbed:4001792"
	"|tree_bytes_scrubbed:294912|read_errors:0|csum_errors:3|verify_errors:0|no_csum:0"
	"|csum_discards:0|super_errors:0|malloc_errors:0|uncorrectable_errors:1"
	"|corrected_errors:2|last_physical:92733440|t_start:1796315081|t_resumed:0"
	"|duration:7|canceled:1|finished:1\n"
	OTHER ":1|data_extents_scrubbed:5\n"
	FSID ":2|data_bytes_scrubbed:12|some_future_key:9|finished:0\n"
	FSID ":x|garbage\n"
	FSID ":3|data_bytes_scrubbed:\n";

TEST(scrub_status_parses_progs_lines)
{
	char *text = strdup(sample);
	struct scrub_record *v;
	size_t n;

	CHECK(scrub_status_parse(text, FSID, &v, &n) == 0);
	CHECK(n == 2);
	CHECK(v[0].devid == 1 && v[0].p.data_extents_scrubbed == 62);
	CHECK(v[0].p.tree_bytes_scrubbed == 294912 && v[0].p.csum_errors == 3);
	CHECK(v[0].p.uncorrectable_errors == 1 && v[0].p.corrected_errors == 2);
	CHECK(v[0].p.last_physical == 92733440 && v[0].s.t_start == 1796315081);
	CHECK(v[0].s.duration == 7 && v[0].s.canceled == 1 && v[0].s.finished == 1);
	CHECK(v[1].devid == 2 && v[1].p.data_bytes_scrubbed == 12 && v[1].s.finished == 0);
	CHECK(scrub_status_find(v, n, 2) == &v[1] && !scrub_status_find(v, n, 3));
	free(v);
	free(text);
}

TEST(scrub_status_rejects_other_formats)
{
	char bad[] = "scrub status:2\n" FSID ":1|finished:1\n", empty[] = "";
	struct scrub_record *v;
	size_t n;

	CHECK(scrub_status_parse(bad, FSID, &v, &n) == -EINVAL && n == 0);
	CHECK(scrub_status_parse(empty, FSID, &v, &n) == 0 && n == 0);
}

TEST(scrub_status_write_then_read)
{
	char dir[] = "/tmp/scrub-status-unit.XXXXXX", path[128];
	struct scrub_record in[2], *out;
	size_t n;

	CHECK(mkdtemp(dir) != NULL);
	memset(in, 0, sizeof(in));
	in[0].devid = 1;
	in[0].p.data_bytes_scrubbed = 1ULL << 40;
	in[0].p.last_physical = 123;
	in[0].s.t_start = 42;
	in[0].s.finished = 1;
	in[1].devid = 7;
	in[1].s.canceled = 1;
	CHECK(scrub_status_write(dir, FSID, in, 2) == 0);
	setenv(SCRUB_STATUS_DIR_ENV, dir, 1);
	CHECK(scrub_status_read(FSID, &out, &n) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(out[0].p.data_bytes_scrubbed == 1ULL << 40 && out[0].p.last_physical == 123);
		CHECK(out[0].s.t_start == 42 && out[0].s.finished == 1);
		CHECK(out[1].devid == 7 && out[1].s.canceled == 1);
	}
	free(out);
	CHECK(scrub_status_read(OTHER, &out, &n) == 0 && n == 0);
	unsetenv(SCRUB_STATUS_DIR_ENV);
	snprintf(path, sizeof(path), "%s/scrub.status.%s", dir, FSID);
	unlink(path);
	rmdir(dir);
}
