#include "btrfs_ioctl.h"
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

/* From <linux/fs.h>, which clashes with the libc mount headers elsewhere. */
#ifndef FS_IOC_GETFSLABEL
#define FSLABEL_MAX 256
#define FS_IOC_GETFSLABEL _IOR(0x94, 49, char[FSLABEL_MAX])
#define FS_IOC_SETFSLABEL _IOW(0x94, 50, char[FSLABEL_MAX])
#endif

int btrfs_open_path(const char *path, int dir_only, int quiet)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	if (stat(path, &st) || statfs(path, &sfs)) {
		if (!quiet)
			msg_error("cannot access '%s': %m", path);
		return -1;
	}
	if (dir_only && !S_ISDIR(st.st_mode)) {
		if (!quiet)
			msg_error("not a directory: %s", path);
		return -1;
	}
	if (sfs.f_type != BTRFS_SUPER_MAGIC) {
		if (!quiet)
			msg_error("not a btrfs filesystem: %s", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0 && !quiet)
		msg_error("cannot access '%s': %m", path);
	return fd;
}

int btrfs_fd_is_btrfs(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return -errno;
	return sfs.f_type == BTRFS_SUPER_MAGIC;
}

int btrfs_fs_info(int fd, struct btrfs_ioctl_fs_info_args *fi)
{
	memset(fi, 0, sizeof(*fi));
	return ioctl(fd, BTRFS_IOC_FS_INFO, fi) ? -errno : 0;
}

int btrfs_dev_info(int fd, uint64_t devid, struct btrfs_ioctl_dev_info_args *di)
{
	memset(di, 0, sizeof(*di));
	di->devid = devid;
	if (ioctl(fd, BTRFS_IOC_DEV_INFO, di))
		return -errno;
	di->path[sizeof(di->path) - 1] = 0; /* the kernel's string, bounded anyway */
	return 0;
}

int btrfs_dev_infos(int fd, struct btrfs_ioctl_fs_info_args *fi,
		    struct btrfs_ioctl_dev_info_args **devs, int *count)
{
	struct btrfs_ioctl_dev_info_args *d;
	uint64_t devid;
	int n = 0, room, ret;

	*devs = NULL;
	*count = 0;
	ret = btrfs_fs_info(fd, fi);
	if (ret)
		return ret;
	if (fi->num_devices > 65536) /* no real filesystem comes near */
		return -EOVERFLOW;
	room = (int)fi->num_devices + 1; /* + a running replace's target, devid 0 */
	d = calloc(room, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (devid = 0; devid <= fi->max_id && n < room; devid++) {
		ret = btrfs_dev_info(fd, devid, &d[n]);
		if (ret == -ENODEV)
			continue;
		if (ret) {
			free(d);
			return ret;
		}
		n++;
	}
	*devs = d;
	*count = n;
	return 0;
}

int btrfs_space_info(int fd, struct btrfs_ioctl_space_args **out)
{
	struct btrfs_ioctl_space_args probe = { 0 }, *sa;
	uint64_t slots;

	*out = NULL;
	/* The first call with no slots returns how many there are. */
	if (ioctl(fd, BTRFS_IOC_SPACE_INFO, &probe))
		return -errno;
	/* Space can be added between the calls: leave room for a few more. */
	for (slots = probe.total_spaces + 4;; slots *= 2) {
		if (slots > 1024)
			return -EOVERFLOW;
		sa = calloc(1, sizeof(*sa) + slots * sizeof(sa->spaces[0]));
		if (!sa)
			return -ENOMEM;
		sa->space_slots = slots;
		if (ioctl(fd, BTRFS_IOC_SPACE_INFO, sa)) {
			int e = errno;

			free(sa);
			return -e;
		}
		if (sa->total_spaces <= slots)
			break;
		free(sa);
	}
	*out = sa;
	return 0;
}

const char *btrfs_group_type_str(uint64_t flags)
{
	switch (flags & (BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_SPACE_INFO_GLOBAL_RSV)) {
	case BTRFS_BLOCK_GROUP_DATA:
		return "Data";
	case BTRFS_BLOCK_GROUP_SYSTEM:
		return "System";
	case BTRFS_BLOCK_GROUP_METADATA:
		return "Metadata";
	case BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA:
		return "Data+Metadata";
	case BTRFS_SPACE_INFO_GLOBAL_RSV:
		return "GlobalReserve";
	}
	return "unknown";
}

static const struct {
	uint64_t flag;
	const char *name;
	int copies;
} profiles[] = {
	{ BTRFS_BLOCK_GROUP_RAID0, "RAID0", 1 },
	{ BTRFS_BLOCK_GROUP_RAID1, "RAID1", 2 },
	{ BTRFS_BLOCK_GROUP_DUP, "DUP", 2 },
	{ BTRFS_BLOCK_GROUP_RAID10, "RAID10", 2 },
	{ BTRFS_BLOCK_GROUP_RAID5, "RAID5", 1 },
	{ BTRFS_BLOCK_GROUP_RAID6, "RAID6", 1 },
	{ BTRFS_BLOCK_GROUP_RAID1C3, "RAID1C3", 3 },
	{ BTRFS_BLOCK_GROUP_RAID1C4, "RAID1C4", 4 },
};

/* Index in profiles[], -1 for single, -2 for an unknown or mixed value. */
static int profile_index(uint64_t flags)
{
	uint64_t p = flags & ~(BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_SPACE_INFO_GLOBAL_RSV);
	size_t i;

	if (!p)
		return -1;
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (p == profiles[i].flag)
			return (int)i;
	return -2;
}

const char *btrfs_group_profile_str(uint64_t flags)
{
	int i = profile_index(flags);

	return i >= 0 ? profiles[i].name : i == -1 ? "single" : "UNKNOWN";
}

int btrfs_profile_copies(uint64_t flags)
{
	int i = profile_index(flags);

	return i >= 0 ? profiles[i].copies : 1;
}

int btrfs_mount_of_device(const char *dev, char *mnt, size_t size)
{
	struct stat want, st;
	struct mntent *m;
	FILE *f;
	int ret = -ENOENT;

	if (stat(dev, &want))
		return -errno;
	if (!S_ISBLK(want.st_mode))
		return -ENOTBLK;
	f = setmntent("/proc/self/mounts", "r");
	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (strcmp(m->mnt_type, "btrfs") || stat(m->mnt_fsname, &st) ||
		    !S_ISBLK(st.st_mode) || st.st_rdev != want.st_rdev)
			continue;
		if (strlen(m->mnt_dir) >= size) {
			ret = -ENAMETOOLONG;
			break;
		}
		strcpy(mnt, m->mnt_dir);
		ret = 0;
		break;
	}
	endmntent(f);
	return ret;
}

int btrfs_get_label_fd(int fd, char label[BTRFS_LABEL_SIZE])
{
	char buf[FSLABEL_MAX] = { 0 };

	if (ioctl(fd, FS_IOC_GETFSLABEL, buf))
		return -errno;
	snprintf(label, BTRFS_LABEL_SIZE, "%.*s", FSLABEL_MAX, buf);
	return 0;
}

int btrfs_set_label_fd(int fd, const char *label)
{
	char buf[FSLABEL_MAX] = { 0 };

	if (strlen(label) >= BTRFS_LABEL_SIZE)
		return -EINVAL;
	strcpy(buf, label);
	return ioctl(fd, FS_IOC_SETFSLABEL, buf) ? -errno : 0;
}
