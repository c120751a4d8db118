//build:Oz
/* Superblock reading and validation. */
#include "fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t fs_fd_size(int fd)
{
	struct stat st;
	uint64_t size = 0;

	if (fstat(fd, &st))
		return 0;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, &size) ? 0 : size;
	return (uint64_t)st.st_size;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int check_sizes(const struct btrfs_super_block *sb, struct fs_error *err)
{
	uint32_t sectorsize = get_le32(&sb->sectorsize), nodesize = get_le32(&sb->nodesize);
	uint32_t stripesize = get_le32(&sb->stripesize), sys = get_le32(&sb->sys_chunk_array_size);

	if (!is_pow2(sectorsize) || sectorsize < 4096 || sectorsize > 65536)
		return fs_err(err, -EUCLEAN, "invalid sectorsize %u", sectorsize);
	if (!is_pow2(nodesize) || nodesize < sectorsize || nodesize > 65536)
		return fs_err(err, -EUCLEAN, "invalid nodesize %u", nodesize);
	if (stripesize != sectorsize)
		return fs_err(err, -EUCLEAN, "invalid stripesize %u", stripesize);
	if (sys > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE ||
	    sys < sizeof(struct btrfs_disk_key) + sizeof(struct btrfs_chunk))
		return fs_err(err, -EUCLEAN, "invalid sys_chunk_array_size %u", sys);
	if (get_le64(&sb->root) % sectorsize || get_le64(&sb->chunk_root) % sectorsize)
		return fs_err(err, -EUCLEAN, "tree root or chunk root not aligned to sectorsize");
	if (sb->root_level >= BTRFS_MAX_LEVEL || sb->chunk_root_level >= BTRFS_MAX_LEVEL)
		return fs_err(err, -EUCLEAN, "invalid root level %u / chunk root level %u",
			      sb->root_level, sb->chunk_root_level);
	if (!get_le64(&sb->num_devices))
		return fs_err(err, -EUCLEAN, "num_devices is 0");
	return 0;
}

int fs_super_check(const struct btrfs_super_block *sb, int mirror, struct fs_error *err)
{
	uint8_t csum[CSUM_MAX_SIZE];
	int type = get_le16(&sb->csum_type);

	if (get_le64(&sb->magic) != BTRFS_MAGIC_LE)
		return fs_err(err, -EUCLEAN, "bad magic");
	if (!csum_size(type))
		return fs_err(err, -EUCLEAN, "unknown csum type %d", type);
	if (csum_supported(type))
		return fs_err(err, -ENOTSUP, "csum type %s not supported in this build", csum_name(type));
	csum_compute(type, (const uint8_t *)sb + BTRFS_CSUM_START,
		     BTRFS_SUPER_SIZE - BTRFS_CSUM_START, csum);
	if (memcmp(csum, sb->csum, csum_size(type)))
		return fs_err(err, -EUCLEAN, "bad superblock checksum");
	if (mirror >= 0 && get_le64(&sb->bytenr) != btrfs_super_offset(mirror))
		return fs_err(err, -EUCLEAN, "superblock bytenr %llu is not %llu",
			      (unsigned long long)get_le64(&sb->bytenr),
			      (unsigned long long)btrfs_super_offset(mirror));
	return check_sizes(sb, err);
}

int fs_super_read_fd(int fd, int mirror, struct btrfs_super_block *sb, struct fs_error *err)
{
	uint64_t off;
	ssize_t n;
	int ret;

	if (mirror < 0 || mirror >= BTRFS_SUPER_MIRRORS)
		return fs_err(err, -EINVAL, "superblock copy %d does not exist", mirror);
	off = btrfs_super_offset(mirror);
	if (off + BTRFS_SUPER_SIZE > fs_fd_size(fd))
		return fs_err_at(err, -ENOENT, 0, off, "superblock copy %d is beyond the end of the device", mirror);
	n = pread(fd, sb, BTRFS_SUPER_SIZE, (off_t)off);
	if (n != BTRFS_SUPER_SIZE)
		return fs_err_at(err, -EIO, 0, off, "cannot read superblock copy %d: %s", mirror,
				 n < 0 ? strerror(errno) : "short read");
	ret = fs_super_check(sb, mirror, err);
	if (ret && err) {
		err->logical = off;
		err->mirror = mirror;
	}
	return ret;
}

int fs_super_read(const char *path, int mirror, struct btrfs_super_block *sb, struct fs_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return fs_err(err, -errno, "cannot open %s: %s", path, strerror(errno));
	ret = fs_super_read_fd(fd, mirror, sb, err);
	close(fd);
	return ret;
}
