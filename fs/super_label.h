/* Changing the label of an unmounted device or image in its superblocks
 * (btrfs filesystem label DEVICE NEWLABEL). Never prints. */
#ifndef FS_SUPER_LABEL_H
#define FS_SUPER_LABEL_H

/* Sets the label (at most BTRFS_LABEL_SIZE - 1 bytes) of an unmounted device or image:
 * the primary superblock is read and checked (fs_super_read_fd), then every copy that
 * lies inside the device is rewritten from it with the new label, its own bytenr and
 * checksum. The copies at 64MiB and 256GiB are written and synced first, the primary
 * last, so a crash leaves a primary with either the old or the new label.
 * 0 or -errno (-EUCLEAN: no valid btrfs superblock, -EBUSY: a mounted block device). */
int fs_super_set_label(const char *path, const char *label);

#endif
