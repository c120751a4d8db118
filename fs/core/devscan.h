/* Finding the other devices of a multi-device filesystem (engine conventions, fs.h). */
#ifndef FS_DEVSCAN_H
#define FS_DEVSCAN_H
#include "fs.h"

/* Calls fn for each block device listed in /proc/partitions that holds a btrfs
 * superblock (the primary, else a valid copy when the primary still has its
 * magic), with its path ("/dev/NAME") and
 * that superblock; fn returns nonzero to stop the walk. Nothing happens when
 * /proc is not there. */
void fs_scan_block_devices(int (*fn)(const char *path, const struct btrfs_super_block *sb, void *ctx),
			   void *ctx);

/* 1 when the block device or image file at path backs a mounted filesystem (its
 * device, or a loop device over the file, is the source of a mount or a device of a
 * filesystem registered in /sys/fs/btrfs), 0 when not, -errno. */
int fs_path_mounted(const char *path);

#endif
