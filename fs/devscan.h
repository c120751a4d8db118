/* Finding the other devices of a multi-device filesystem (engine conventions, fs.h). */
#ifndef FS_DEVSCAN_H
#define FS_DEVSCAN_H
#include "fs.h"

/* Block devices listed in /proc/partitions whose superblock (primary, else a
 * valid copy) has this fsid and a devid not in skip_devids[0..nskip). Stores up
 * to max malloc'd paths ("/dev/NAME") in paths, one per devid; returns how many
 * (0 when /proc is not there). */
int fs_scan_devices(const uint8_t fsid[BTRFS_FSID_SIZE], const uint64_t *skip_devids, int nskip,
		    char **paths, int max);

/* fs_open of paths and, when their superblock counts more devices, of the others
 * found by fs_scan_devices (at most 16 given). */
struct fs *fs_open_scan(const char *const *paths, int n, const struct fs_open_opts *opts,
			struct fs_error *err);

#endif
