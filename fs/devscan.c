/* Device scan for multi-device filesystems (see devscan.h). */
#include "devscan.h"
#include "le.h"
#include "sysfile.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int devid_known(uint64_t devid, const uint64_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == devid)
			return 1;
	return 0;
}

/* Reads a valid superblock of path (primary first); 0 on success. */
static int read_any_super(const char *path, struct btrfs_super_block *sb)
{
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (!fs_super_read(path, m, sb, NULL))
			return 0;
	return -1;
}

struct scan {
	const uint8_t *fsid;
	const uint64_t *skip_devids;
	int nskip;
	char **paths;
	int max, n;
	uint64_t found[64];
};

/* Adds /dev/NAME when its superblock names a device of the filesystem not yet
 * known; stops the walk when the list is full or out of memory. */
static int scan_partition(unsigned major, unsigned minor, uint64_t blocks, const char *name,
			  void *ctx)
{
	struct scan *s = ctx;
	struct btrfs_super_block sb;
	char path[160];
	uint64_t devid;

	(void)major;
	(void)minor;
	(void)blocks;
	snprintf(path, sizeof(path), "/dev/%s", name);
	if (read_any_super(path, &sb) || memcmp(sb.fsid, s->fsid, BTRFS_FSID_SIZE))
		return 0;
	devid = get_le64(&sb.dev_item.devid);
	if (devid_known(devid, s->skip_devids, s->nskip) || devid_known(devid, s->found, s->n))
		return 0;
	s->paths[s->n] = strdup(path);
	if (!s->paths[s->n])
		return 1;
	s->found[s->n++] = devid;
	return s->n >= s->max || s->n >= 64;
}

int fs_scan_devices(const uint8_t fsid[BTRFS_FSID_SIZE], const uint64_t *skip_devids, int nskip,
		    char **paths, int max)
{
	struct scan s = { .fsid = fsid, .skip_devids = skip_devids, .nskip = nskip,
			  .paths = paths, .max = max };

	if (max > 0)
		sysfile_each_partition(scan_partition, &s);
	return s.n;
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
