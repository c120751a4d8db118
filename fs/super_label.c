#include "super_label.h"
#include "csum.h"
#include "le.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

/* Checksum of a superblock: csum_type's digest of bytes 32..4095 (after the csum). */
static int super_csum(const struct btrfs_super_block *sb, uint8_t out[CSUM_MAX_SIZE])
{
	int type = get_le16(&sb->csum_type);

	if (csum_supported(type))
		return -ENOTSUP;
	return csum_compute(type, (const uint8_t *)sb + BTRFS_CSUM_SIZE,
			    BTRFS_SUPER_SIZE - BTRFS_CSUM_SIZE, out) ? -ENOTSUP : 0;
}

/* Magic, bytenr (copy at offset), checksum. */
static int super_valid(const struct btrfs_super_block *sb, uint64_t offset)
{
	uint8_t c[CSUM_MAX_SIZE];
	int ret;

	if (get_le64(&sb->magic) != BTRFS_MAGIC_LE || get_le64(&sb->bytenr) != offset)
		return -EUCLEAN;
	ret = super_csum(sb, c);
	if (ret)
		return ret;
	return memcmp(c, sb->csum, csum_size(get_le16(&sb->csum_type))) ? -EUCLEAN : 0;
}

static int read_super_fd(int fd, struct btrfs_super_block *sb)
{
	ssize_t n = pread(fd, sb, sizeof(*sb), BTRFS_SUPER_OFFSET);

	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(*sb))
		return -EUCLEAN; /* too small to hold a btrfs */
	return super_valid(sb, BTRFS_SUPER_OFFSET);
}

int fs_super_read_primary(const char *path, struct btrfs_super_block *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = read_super_fd(fd, sb);
	close(fd);
	return ret;
}

static uint64_t fd_size(int fd)
{
	struct stat st;
	uint64_t size = 0;

	if (fstat(fd, &st))
		return 0;
	if (S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size))
		return 0;
	return size;
}

/* Writes sb as copy `mirror` (its bytenr and checksum set for that place). */
static int write_copy(int fd, const struct btrfs_super_block *sb, int mirror)
{
	struct btrfs_super_block copy = *sb;
	uint64_t offset = btrfs_super_offset(mirror);
	int ret;

	put_le64(&copy.bytenr, offset);
	memset(copy.csum, 0, sizeof(copy.csum));
	ret = super_csum(&copy, copy.csum);
	if (ret)
		return ret;
	if (pwrite(fd, &copy, sizeof(copy), (off_t)offset) != (ssize_t)sizeof(copy))
		return errno ? -errno : -EIO;
	return 0;
}

int fs_super_set_label(const char *path, const char *label)
{
	struct btrfs_super_block sb;
	struct stat st;
	uint64_t size, limit;
	int fd, ret, i;

	if (strlen(label) >= BTRFS_LABEL_SIZE)
		return -EINVAL;
	if (stat(path, &st))
		return -errno;
	/* O_EXCL on a block device fails while the kernel has it (mounted). */
	fd = open(path, O_RDWR | O_CLOEXEC | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	if (fd < 0)
		return -errno;
	ret = read_super_fd(fd, &sb);
	if (ret)
		goto out;
	memset(sb.label, 0, sizeof(sb.label));
	memcpy(sb.label, label, strlen(label));
	/* The kernel keeps copies that fit inside the device's btrfs size. */
	size = fd_size(fd);
	limit = get_le64(&sb.dev_item.total_bytes);
	if (!limit || limit > size)
		limit = size;
	for (i = BTRFS_SUPER_MIRRORS - 1; i >= 0 && !ret; i--) {
		if (i && btrfs_super_offset(i) + BTRFS_SUPER_SIZE >= limit)
			continue;
		ret = write_copy(fd, &sb, i);
		if (!ret && fsync(fd))
			ret = -errno;
	}
out:
	close(fd);
	return ret;
}
