/* Readers for the kernel's text tables (see sysfile.h). */
//build:Oz
#include "strnum.h"
#include "sysfile.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Splits line in place into up to max blank-separated fields; returns their count. */
static int split_fields(char *line, char **field, int max)
{
	int n = 0;

	while (n < max) {
		line += strspn(line, " \t\n");
		if (!*line)
			break;
		field[n++] = line;
		line += strcspn(line, " \t\n");
		if (*line)
			*line++ = 0;
	}
	return n;
}

/* Undoes the kernel's mount table escapes: a backslash and three octal digits
 * (space, tab, newline and backslash are written that way). */
static void unescape_octal(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* An unsigned decimal number at s that ends at the character stop; 0 or -EINVAL. */
static int parse_u64(const char *s, char stop, uint64_t *out, const char **end)
{
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = str_to_ull(s, &e, 10);
	if (errno || *e != stop)
		return -EINVAL;
	if (end)
		*end = e;
	return 0;
}

/* Calls fn on each line of the file at path until it returns non-zero. A line too
 * long for the buffer (far beyond two escaped PATH_MAX paths) is skipped whole, so
 * its tail is never taken for a line of its own. */
static int each_line(const char *path, int (*fn)(char *line, void *arg), void *arg)
{
	FILE *f = fopen(path, "re");
	char line[16384];
	int ret = 0, overlong = 0;

	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		int whole = strchr(line, '\n') || feof(f);

		if (!overlong && whole)
			ret = fn(line, arg);
		overlong = !whole;
	}
	fclose(f);
	return ret;
}

struct mount_walk {
	int (*cb)(const struct sys_mount *m, void *ctx);
	void *ctx;
};

static int mount_line(char *line, void *arg)
{
	struct mount_walk *w = arg;
	struct sys_mount m;
	char *f[4];

	if (split_fields(line, f, 4) < 4)
		return 0;
	for (int i = 0; i < 4; i++)
		unescape_octal(f[i]);
	m.source = f[0];
	m.target = f[1];
	m.fstype = f[2];
	m.options = f[3];
	return w->cb(&m, w->ctx);
}

int sysfile_each_mount_in(const char *path, int (*cb)(const struct sys_mount *m, void *ctx),
			  void *ctx)
{
	struct mount_walk w = { cb, ctx };

	return each_line(path, mount_line, &w);
}

int sysfile_each_mount(int (*cb)(const struct sys_mount *m, void *ctx), void *ctx)
{
	return sysfile_each_mount_in("/proc/self/mounts", cb, ctx);
}

struct mount_root_query {
	const char *path;
	char *out;
	size_t outlen, best;
};

/* Keeps the mount point that is the longest prefix of the path so far. */
static int mount_root_candidate(const struct sys_mount *m, void *ctx)
{
	struct mount_root_query *q = ctx;
	size_t n = strlen(m->target);

	if (strncmp(q->path, m->target, n) ||
	    (q->path[n] && q->path[n] != '/' && strcmp(m->target, "/")))
		return 0;
	if (n >= q->best && n < q->outlen) {
		q->best = n;
		/* a later mount over the same point hides the earlier one */
		snprintf(q->out, q->outlen, "%s", strcmp(m->fstype, "btrfs") ? "" : m->target);
	}
	return 0;
}

int sysfile_btrfs_mount_root(const char *path, char *out, size_t outlen)
{
	struct mount_root_query q = { path, out, outlen, 0 };

	out[0] = 0;
	if (sysfile_each_mount(mount_root_candidate, &q) < 0)
		return -1;
	return out[0] ? 0 : -1;
}

struct part_walk {
	int (*cb)(unsigned major, unsigned minor, uint64_t blocks, const char *name, void *ctx);
	void *ctx;
};

static int partition_line(char *line, void *arg)
{
	struct part_walk *w = arg;
	uint64_t major, minor, blocks;
	char *f[4];

	if (split_fields(line, f, 4) < 4 || parse_u64(f[0], 0, &major, NULL) ||
	    parse_u64(f[1], 0, &minor, NULL) || parse_u64(f[2], 0, &blocks, NULL) ||
	    major > 0xffffffffu || minor > 0xffffffffu)
		return 0;
	return w->cb((unsigned)major, (unsigned)minor, blocks, f[3], w->ctx);
}

int sysfile_each_partition_in(const char *path,
			      int (*cb)(unsigned major, unsigned minor, uint64_t blocks,
					const char *name, void *ctx),
			      void *ctx)
{
	struct part_walk w = { cb, ctx };

	return each_line(path, partition_line, &w);
}

int sysfile_each_partition(int (*cb)(unsigned major, unsigned minor, uint64_t blocks,
				     const char *name, void *ctx),
			   void *ctx)
{
	return sysfile_each_partition_in("/proc/partitions", cb, ctx);
}

/* The first line of a small file, without its newline; 0 or -errno. */
static int read_first_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int sysfile_read_devnum(const char *path, dev_t *out)
{
	uint64_t major, minor;
	const char *s;
	char buf[64];
	int ret = read_first_line(path, buf, sizeof(buf));

	if (ret)
		return ret;
	if (parse_u64(buf, ':', &major, &s) || parse_u64(s + 1, 0, &minor, NULL) ||
	    major > 0xffffffffu || minor > 0xffffffffu)
		return -EINVAL;
	*out = makedev((unsigned)major, (unsigned)minor);
	return 0;
}

int sysfile_read_u64(const char *path, uint64_t *out)
{
	char buf[64];
	int ret = read_first_line(path, buf, sizeof(buf));

	return ret ? ret : parse_u64(buf, 0, out, NULL);
}
