/* Mount table, partitions table and one-value sysfs file readers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "unit.h"
#include "util/sysfile.h"

/* Writes text to a new temporary file; its path goes to path[32]. */
static void write_tmp(char path[32], const char *text, size_t len)
{
	int fd;

	strcpy(path, "/tmp/sysfile-unit.XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, len) == (ssize_t)len);
	close(fd);
}

struct seen_mounts {
	int n;
	char rec[8][4][300];
};

static int record_mount(const struct sys_mount *m, void *ctx)
{
	struct seen_mounts *s = ctx;

	if (s->n < 8) {
		snprintf(s->rec[s->n][0], 300, "%s", m->source);
		snprintf(s->rec[s->n][1], 300, "%s", m->target);
		snprintf(s->rec[s->n][2], 300, "%s", m->fstype);
		snprintf(s->rec[s->n][3], 300, "%s", m->options);
	}
	s->n++;
	return 0;
}

TEST(sysfile_mounts_escapes_and_garbage)
{
	static const char text[] =
		"/dev/loop0 /mnt/a\\040b btrfs rw,relatime 0 0\n"
		"garbage\n"
		"\n"
		"two fields\n"
		"/dev/x\\011y /t\\134u\\012v\\400 ext4 ro 0 0\n"
		"proc /proc proc rw";		/* no newline at the end */
	struct seen_mounts s = { 0 };
	char path[32];

	write_tmp(path, text, sizeof(text) - 1);
	CHECK(sysfile_each_mount_in(path, record_mount, &s) == 0);
	CHECK(s.n == 3);
	CHECK(!strcmp(s.rec[0][0], "/dev/loop0") && !strcmp(s.rec[0][1], "/mnt/a b"));
	CHECK(!strcmp(s.rec[0][2], "btrfs") && !strcmp(s.rec[0][3], "rw,relatime"));
	CHECK(!strcmp(s.rec[1][0], "/dev/x\ty") && !strcmp(s.rec[1][1], "/t\\u\nv\\400"));
	CHECK(!strcmp(s.rec[2][1], "/proc") && !strcmp(s.rec[2][3], "rw"));
	unlink(path);
	CHECK(sysfile_each_mount_in(path, record_mount, &s) < 0);
}

static int stop_at_second(const struct sys_mount *m, void *ctx)
{
	(void)m;
	return ++*(int *)ctx == 2 ? 7 : 0;
}

/* A mount line of len characters (options padded with 'o'), then two short ones. */
static void write_long_mount_table(char path[32], size_t len)
{
	char *text = malloc(len + 64);

	CHECK(text != NULL);
	if (!text)
		return;
	memcpy(text, "src /long btrfs ", 16);
	memset(text + 16, 'o', len - 16);
	strcpy(text + len, " 0 0\na b c d\nx y z w\n");
	write_tmp(path, text, strlen(text));
	free(text);
}

TEST(sysfile_mounts_long_line_and_stop)
{
	struct seen_mounts s = { 0 };
	char path[32];
	int count = 0;

	write_long_mount_table(path, 12000);
	CHECK(sysfile_each_mount_in(path, record_mount, &s) == 0);
	CHECK(s.n == 3 && !strcmp(s.rec[0][1], "/long") && strlen(s.rec[0][3]) == 299);
	CHECK(sysfile_each_mount_in(path, stop_at_second, &count) == 7);
	CHECK(count == 2);
	unlink(path);
	/* longer than the line buffer: skipped whole, its tail not parsed as a line */
	write_long_mount_table(path, 50000);
	s.n = 0;
	CHECK(sysfile_each_mount_in(path, record_mount, &s) == 0);
	CHECK(s.n == 2 && !strcmp(s.rec[0][0], "a") && !strcmp(s.rec[1][0], "x"));
	unlink(path);
}

struct seen_parts {
	int n;
	unsigned major[4], minor[4];
	uint64_t blocks[4];
	char name[4][64];
};

static int record_part(unsigned major, unsigned minor, uint64_t blocks, const char *name, void *ctx)
{
	struct seen_parts *s = ctx;

	if (s->n < 4) {
		s->major[s->n] = major;
		s->minor[s->n] = minor;
		s->blocks[s->n] = blocks;
		snprintf(s->name[s->n], 64, "%s", name);
	}
	s->n++;
	return 0;
}

TEST(sysfile_partitions)
{
	static const char text[] =
		"major minor  #blocks  name\n"
		"\n"
		" 259        0  500107608 nvme0n1\n"
		"   7        0 18446744073709551615 loop0\n"
		"   8       -1     1024 bad\n"
		"   8        1     12x4 bad\n"
		"   8        2 99999999999999999999 overflow\n"
		"   8        3\n"
		"   7       12          0 loop12\n";
	struct seen_parts s = { 0 };
	char path[32];

	write_tmp(path, text, sizeof(text) - 1);
	CHECK(sysfile_each_partition_in(path, record_part, &s) == 0);
	CHECK(s.n == 3);
	CHECK(s.major[0] == 259 && s.minor[0] == 0 && s.blocks[0] == 500107608 &&
	      !strcmp(s.name[0], "nvme0n1"));
	CHECK(s.major[1] == 7 && s.blocks[1] == UINT64_MAX && !strcmp(s.name[1], "loop0"));
	CHECK(s.minor[2] == 12 && s.blocks[2] == 0 && !strcmp(s.name[2], "loop12"));
	unlink(path);
}

TEST(sysfile_one_value_files)
{
	char path[32];
	uint64_t v;
	dev_t d;

	write_tmp(path, "7:12\n", 5);
	CHECK(sysfile_read_devnum(path, &d) == 0 && major(d) == 7 && minor(d) == 12);
	CHECK(sysfile_read_u64(path, &v) < 0);
	unlink(path);
	write_tmp(path, "259:65536", 9);
	CHECK(sysfile_read_devnum(path, &d) == 0 && major(d) == 259 && minor(d) == 65536);
	unlink(path);
	write_tmp(path, "2\n", 2);
	CHECK(sysfile_read_u64(path, &v) == 0 && v == 2);
	CHECK(sysfile_read_devnum(path, &d) < 0);
	unlink(path);
	write_tmp(path, "7:\n", 3);
	CHECK(sysfile_read_devnum(path, &d) < 0);
	unlink(path);
	write_tmp(path, ":1\n", 3);
	CHECK(sysfile_read_devnum(path, &d) < 0);
	unlink(path);
	write_tmp(path, "-1\n", 3);
	CHECK(sysfile_read_u64(path, &v) < 0);
	unlink(path);
	CHECK(sysfile_read_u64(path, &v) < 0);
	CHECK(sysfile_read_devnum(path, &d) < 0);
}
