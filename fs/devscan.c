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
