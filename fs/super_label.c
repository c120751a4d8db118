#include "super_label.h"
#include "csum.h"
#include "fs.h"
#include "le.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes sb as copy `mirror`: its bytenr and checksum set for that place. */
static int write_copy(int fd, const struct btrfs_super_block *sb, int mirror)
{
	struct btrfs_super_block copy = *sb;
	uint64_t offset = btrfs_super_offset(mirror);
	uint8_t c[CSUM_MAX_SIZE];

	put_le64(&copy.bytenr, offset);
	/* The checksum covers everything after the csum field. */
	if (csum_compute(get_le16(&copy.csum_type), (const uint8_t *)&copy + BTRFS_CSUM_SIZE,
			 BTRFS_SUPER_SIZE - BTRFS_CSUM_SIZE, c))
		return -ENOTSUP;
	memcpy(copy.csum, c, sizeof(copy.csum));
	if (pwrite(fd, &copy, sizeof(copy), (off_t)offset) != (ssize_t)sizeof(copy))
		return errno ? -errno : -EIO;
	return fsync(fd) ? -errno : 0;
}

int fs_super_set_label(const char *path, const char *label)
{
	struct btrfs_super_block sb;
	struct stat st;
	uint64_t limit;
	int fd, ret, i;

	if (strlen(label) >= BTRFS_LABEL_SIZE)
		return -EINVAL;
	if (stat(path, &st))
		return -errno;
	/* O_EXCL on a block device fails while the kernel uses it (mounted). */
	fd = open(path, O_RDWR | O_CLOEXEC | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	if (fd < 0)
		return -errno;
	ret = fs_super_read_fd(fd, 0, &sb, NULL);
	if (ret)
		goto out;
	memset(sb.label, 0, sizeof(sb.label));
	memcpy(sb.label, label, strlen(label));
	/* The kernel keeps the copies that fit inside the device's btrfs size. */
	limit = get_le64(&sb.dev_item.total_bytes);
	if (!limit || limit > fs_fd_size(fd))
		limit = fs_fd_size(fd);
	for (i = BTRFS_SUPER_MIRRORS - 1; i >= 0 && !ret; i--)
		if (!i || btrfs_super_offset(i) + BTRFS_SUPER_SIZE < limit)
			ret = write_copy(fd, &sb, i);
out:
	close(fd);
	return ret;
}
