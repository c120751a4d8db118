/* Device scan for multi-device filesystems (see devscan.h). */
#include "devscan.h"
#include "sysfile.h"
#include <stdio.h>

struct scan {
	int (*fn)(const char *path, const struct btrfs_super_block *sb, void *ctx);
	void *ctx;
};

static int scan_partition(unsigned major, unsigned minor, uint64_t blocks, const char *name,
			  void *ctx)
{
	struct scan *s = ctx;
	struct btrfs_super_block sb;
	char path[160];

	(void)major;
	(void)minor;
	if (!blocks)
		return 0;
	snprintf(path, sizeof(path), "/dev/%s", name);
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
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
