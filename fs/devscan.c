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

struct fs *fs_open_scan(const char *const *paths, int n, const struct fs_open_opts *opts,
			struct fs_error *err)
{
	struct btrfs_super_block sb;
	const char *all[32];
	char *found[16];
	uint64_t ids[16];
	int nf = 0;
	struct fs *fs;

	if (n <= 16 && !read_any_super(paths[0], &sb) && get_le64(&sb.num_devices) > (uint64_t)n) {
		for (int i = 0; i < n; i++)
			ids[i] = read_any_super(paths[i], &sb) ? 0 : get_le64(&sb.dev_item.devid);
		read_any_super(paths[0], &sb);
		nf = fs_scan_devices(sb.fsid, ids, n, found, 16);
		memcpy(all, paths, (size_t)n * sizeof(*paths));
		memcpy(all + n, found, (size_t)nf * sizeof(*found));
		paths = all;
	}
	fs = fs_open(paths, n + nf, opts, err);
	while (nf)
		free(found[--nf]);
	return fs;
}
