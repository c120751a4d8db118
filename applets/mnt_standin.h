/* TEMPORARY stand-ins for util/btrfs_ioctl.h and util/units.h (branches mountfs and
 * util); replaced by those APIs once they are merged. */
#ifndef APPLETS_MNT_STANDIN_H
#define APPLETS_MNT_STANDIN_H
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/btrfs.h>
#include <linux/magic.h>

/* btrfs-progs' btrfs_open_dir(): a directory on btrfs, with its error messages. */
static inline int sd_open_dir(const char *path)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	if (stat(path, &st) < 0) {
		msg_error("cannot access '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		msg_error("not a directory: %s", path);
		return -1;
	}
	if (statfs(path, &sfs) < 0) {
		msg_error("cannot access '%s': %s", path, strerror(errno));
		return -1;
	}
	if (sfs.f_type != BTRFS_SUPER_MAGIC) {
		msg_error("not a btrfs filesystem: %s", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		msg_error("cannot access '%s': %s", path, strerror(errno));
	return fd;
}

/* A mount point or a mounted btrfs block device. */
static inline int sd_open_path_or_dev(const char *path)
{
	struct stat st, st2;
	struct mntent *me;
	FILE *f;
	int fd = -1;

	if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode))
		return sd_open_dir(path);
	f = setmntent("/proc/self/mounts", "r");
	while (f && (me = getmntent(f))) {
		if (strcmp(me->mnt_type, "btrfs") || stat(me->mnt_fsname, &st2) ||
		    !S_ISBLK(st2.st_mode) || st2.st_rdev != st.st_rdev)
			continue;
		fd = open(me->mnt_dir, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			msg_error("can't access '%s': %s", path, strerror(errno));
		break;
	}
	if (f)
		endmntent(f);
	if (fd < 0 && (!f || !me))
		msg_error("'%s' is not a mounted btrfs device", path);
	return fd;
}

/* FS_INFO and DEV_INFO of every device, malloc'ed array of fi->num_devices. */
static inline int sd_fs_info(int fd, struct btrfs_ioctl_fs_info_args *fi,
			     struct btrfs_ioctl_dev_info_args **di)
{
	struct btrfs_ioctl_dev_info_args *v;
	uint64_t id, n = 0;

	memset(fi, 0, sizeof(*fi));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, fi) < 0)
		return -errno;
	v = calloc(fi->num_devices ? fi->num_devices : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (id = 0; id <= fi->max_id && n < fi->num_devices; id++) {
		memset(&v[n], 0, sizeof(v[n]));
		v[n].devid = id;
		if (ioctl(fd, BTRFS_IOC_DEV_INFO, &v[n]) < 0) {
			if (errno == ENODEV)
				continue;
			free(v);
			return -errno;
		}
		v[n].path[sizeof(v[n].path) - 1] = 0;
		n++;
	}
	fi->num_devices = n;
	*di = v;
	return 0;
}

/* pretty_size(): "%.2f" and an IEC suffix. */
static inline const char *sd_pretty_size(uint64_t size, char buf[32])
{
	static const char *const sfx[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t last = size;
	int n = 0;

	while (size >= 1024) {
		last = size;
		size /= 1024;
		n++;
	}
	snprintf(buf, 32, "%.2f%s", n ? (float)last / 1024 : (float)last, sfx[n]);
	return buf;
}
#endif
