/* Device scan for multi-device filesystems (see devscan.h). */
#include "devscan.h"
#include "le.h"
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

int fs_scan_devices(const uint8_t fsid[BTRFS_FSID_SIZE], const uint64_t *skip_devids, int nskip,
		    char **paths, int max)
{
	FILE *f = fopen("/proc/partitions", "re");
	uint64_t found[64];
	char line[256], name[128];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && n < 64 && fgets(line, sizeof(line), f)) {
		struct btrfs_super_block sb;
		char path[160];
		unsigned major, minor;
		unsigned long long blocks;
		uint64_t devid;

		if (sscanf(line, "%u %u %llu %127s", &major, &minor, &blocks, name) != 4)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", name);
		if (read_any_super(path, &sb) || memcmp(sb.fsid, fsid, BTRFS_FSID_SIZE))
			continue;
		devid = get_le64(&sb.dev_item.devid);
		if (devid_known(devid, skip_devids, nskip) || devid_known(devid, found, n))
			continue;
		paths[n] = strdup(path);
		if (!paths[n])
			break;
		found[n++] = devid;
	}
	fclose(f);
	return n;
}
