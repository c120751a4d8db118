//build:Oz
/* Device scan for multi-device filesystems (see devscan.h). */
#include "devscan.h"
#include "util/le.h"
#include "util/sysfile.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct scan {
	int (*fn)(const char *path, const struct btrfs_super_block *sb, void *ctx);
	void *ctx;
};

static int scan_partition(unsigned major, unsigned minor, uint64_t blocks, const char *name,
			  void *ctx)
{
	struct scan *s = ctx;
	struct btrfs_super_block sb = { 0 };
	char path[160];

	(void)major;
	(void)minor;
	if (!blocks)
		return 0;
	snprintf(path, sizeof(path), "/dev/%s", name);
	if (!fs_super_read(path, 0, &sb, NULL))
		return s->fn(path, &sb, s->ctx);
	/* a primary without its magic was wiped (wipefs): the device left the
	 * filesystem, as the kernel's scan sees it; a damaged one falls back on a copy */
	if (get_le64(&sb.magic) != BTRFS_MAGIC_LE)
		return 0;
	for (int m = 1; m < BTRFS_SUPER_MIRRORS; m++)
		if (!fs_super_read(path, m, &sb, NULL))
			return s->fn(path, &sb, s->ctx);
	return 0;
}

void fs_scan_block_devices(int (*fn)(const char *path, const struct btrfs_super_block *sb, void *ctx),
			   void *ctx)
{
	struct scan s = { fn, ctx };

	sysfile_each_partition(scan_partition, &s);
}

/* ---- is a device mounted? ------------------------------------------------------ */

#define MAX_DEVNUMS 16

struct devnums { dev_t v[MAX_DEVNUMS]; int n; };

static int devnums_has(const struct devnums *d, dev_t dev)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i] == dev)
			return 1;
	return 0;
}

/* Calls fn(dir, name) for each entry of dir but . and .., until fn returns nonzero. */
static int each_entry(const char *dir, int (*fn)(const char *dir, const char *name, void *ctx),
		      void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (de = readdir(d)))
		if (de->d_name[0] != '.')
			ret = fn(dir, de->d_name, ctx);
	closedir(d);
	return ret;
}

struct loop_match { struct stat file; struct devnums *out; };

/* A loop device whose backing file is the image adds its device number. */
static int match_loop(const char *dir, const char *name, void *ctx)
{
	struct loop_match *m = ctx;
	char p[320], back[4096];
	struct stat st;
	dev_t dev;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/loop/backing_file", dir, name);
	if (strncmp(name, "loop", 4) || !(f = fopen(p, "r")))
		return 0;
	if (fgets(back, sizeof(back), f)) {
		back[strcspn(back, "\n")] = 0;
		snprintf(p, sizeof(p), "%s/%s/dev", dir, name);
		if (!stat(back, &st) && st.st_dev == m->file.st_dev && st.st_ino == m->file.st_ino &&
		    !sysfile_read_devnum(p, &dev) && m->out->n < MAX_DEVNUMS)
			m->out->v[m->out->n++] = dev;
	}
	fclose(f);
	return 0;
}

static int mount_uses(const struct sys_mount *mt, void *ctx)
{
	struct stat st;

	return !stat(mt->source, &st) && S_ISBLK(st.st_mode) && devnums_has(ctx, st.st_rdev);
}

static int sysfs_device_is(const char *dir, const char *name, void *ctx)
{
	char p[600];
	dev_t dev;

	snprintf(p, sizeof(p), "%s/%s/dev", dir, name);
	return !sysfile_read_devnum(p, &dev) && devnums_has(ctx, dev);
}

/* /sys/fs/btrfs/FSID/devices lists the devices of each mounted btrfs. */
static int sysfs_fs_uses(const char *dir, const char *name, void *ctx)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s/devices", dir, name);
	return each_entry(p, sysfs_device_is, ctx);
}

int fs_path_mounted(const char *path)
{
	struct devnums d = { .n = 0 };
	struct loop_match m = { .out = &d };

	if (stat(path, &m.file))
		return -errno;
	if (S_ISBLK(m.file.st_mode))
		d.v[d.n++] = m.file.st_rdev;
	else
		each_entry("/sys/block", match_loop, &m);
	if (!d.n)
		return 0;
	return sysfile_each_mount(mount_uses, &d) > 0 || each_entry("/sys/fs/btrfs", sysfs_fs_uses, &d);
}
