/* Superblock access for unmounted devices and images: read the primary copy, and
 * change the label in every copy (btrfs filesystem label / show). Never prints. */
#ifndef FS_SUPER_LABEL_H
#define FS_SUPER_LABEL_H
#include "format.h"

/* Reads the primary superblock of a device or image and checks its magic, bytenr and
 * checksum. 0, -errno from open/read, -EUCLEAN when it is not a valid btrfs
 * superblock, -ENOTSUP for a checksum type not built in. */
int fs_super_read_primary(const char *path, struct btrfs_super_block *sb);

/* Sets the label (at most BTRFS_LABEL_SIZE - 1 bytes) of an unmounted device or image:
 * every superblock copy inside the device gets the new label and its own checksum.
 * The copies at 64MiB and 256GiB are written and synced first, the primary last, so a
 * crash leaves either the old or the new label in the primary. 0 or -errno. */
int fs_super_set_label(const char *path, const char *label);

#endif
