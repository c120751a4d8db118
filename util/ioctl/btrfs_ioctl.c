//build:Oz
/* Queries of a mounted btrfs through its ioctls (see btrfs_ioctl.h). */
#include "btrfs_ioctl.h"
#include "subvol.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/magic.h>


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
	uint64_t p = flags & ~(BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_RESERVED);
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

/* Lower-case profile names of a set of profile bits, ", "-separated, into buf;
 * 0 when the set has at most one profile. */
static int profile_list(uint64_t bits, char *buf, size_t size)
{
	static const struct { uint64_t bit; const char *name; } order[] = {
		{ BTRFS_AVAIL_ALLOC_BIT_SINGLE, "single" }, { BTRFS_BLOCK_GROUP_RAID10, "raid10" },
		{ BTRFS_BLOCK_GROUP_RAID1, "raid1" }, { BTRFS_BLOCK_GROUP_DUP, "dup" },
		{ BTRFS_BLOCK_GROUP_RAID0, "raid0" }, { BTRFS_BLOCK_GROUP_RAID5, "raid5" },
		{ BTRFS_BLOCK_GROUP_RAID6, "raid6" }, { BTRFS_BLOCK_GROUP_RAID1C3, "raid1c3" },
		{ BTRFS_BLOCK_GROUP_RAID1C4, "raid1c4" },
	};
	size_t i, len = 0;

	if (!(bits & (bits - 1)))
		return 0;
	buf[0] = 0;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if ((bits & order[i].bit) && len < size)
			len += snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
					order[i].name);
	return 1;
}

int btrfs_multiple_profiles(const struct btrfs_ioctl_space_args *sa,
			    char profiles[BTRFS_NR_CLASSES][BTRFS_PROFILES_LEN])
{
	const uint64_t mixed = BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA;
	uint64_t bits[BTRFS_NR_CLASSES] = { 0 }, i;
	int c, mask = 0;

	for (i = 0; i < sa->total_spaces; i++) {
		uint64_t f = sa->spaces[i].flags;

		if (!(f & BTRFS_BLOCK_GROUP_PROFILE_MASK))
			f |= BTRFS_AVAIL_ALLOC_BIT_SINGLE;
		c = (f & mixed) == mixed ? BTRFS_CLASS_MIXED :
		    (f & BTRFS_BLOCK_GROUP_DATA) ? BTRFS_CLASS_DATA :
		    (f & BTRFS_BLOCK_GROUP_METADATA) ? BTRFS_CLASS_METADATA :
		    (f & BTRFS_BLOCK_GROUP_SYSTEM) ? BTRFS_CLASS_SYSTEM : -1;
		if (c >= 0)
			bits[c] |= f & BTRFS_EXTENDED_PROFILE_MASK;
	}
	for (c = 0; c < BTRFS_NR_CLASSES; c++)
		if (profile_list(bits[c], profiles[c], BTRFS_PROFILES_LEN))
			mask |= 1 << c;
	return mask;
}

void btrfs_warn_multiple_profiles(int fd)
{
	static const char *const label[BTRFS_NR_CLASSES] = {
		"Data", "Metadata", "Data+Metadata", "System"
	};
	char names[BTRFS_NR_CLASSES][BTRFS_PROFILES_LEN];
	struct btrfs_ioctl_space_args *sa;
	int mask, c;

	if (btrfs_space_info(fd, &sa))
		return;
	mask = btrfs_multiple_profiles(sa, names);
	free(sa);
	if (!mask)
		return;
	msg_warn("Multiple block group profiles detected, see 'man btrfs(5)'");
	for (c = 0; c < BTRFS_NR_CLASSES; c++)
		if (mask & (1 << c))
			msg_warn("   %s: %s", label[c], names[c]);
}

/* Adds the stripes of one chunk item to the per-device sums. */
static int add_chunk(struct btrfs_chunk_usage **cu, int *n, int *room,
		     const uint8_t *item, uint32_t len)
{
	const struct btrfs_chunk *c = (const void *)item;
	uint64_t type, length;
	uint32_t stripes, s;
	int i;

	if (len < offsetof(struct btrfs_chunk, stripe))
		return -EUCLEAN;
	stripes = get_le16(&c->num_stripes);
	if (!stripes || len < offsetof(struct btrfs_chunk, stripe) +
			      (uint64_t)stripes * sizeof(struct btrfs_stripe))
		return -EUCLEAN;
	type = get_le64(&c->type);
	length = get_le64(&c->length);
	for (s = 0; s < stripes; s++) {
		const struct btrfs_stripe *st = (const void *)(item +
			offsetof(struct btrfs_chunk, stripe) + s * sizeof(struct btrfs_stripe));
		uint64_t devid = get_le64(&st->devid);

		for (i = 0; i < *n; i++)
			if ((*cu)[i].type == type && (*cu)[i].devid == devid &&
			    (*cu)[i].num_stripes == stripes)
				break;
		if (i == *n) {
			if (*n == *room) {
				void *p = realloc(*cu, (*room * 2 + 8) * sizeof(**cu));

				if (!p)
					return -ENOMEM;
				*cu = p;
				*room = *room * 2 + 8;
			}
			(*cu)[i] = (struct btrfs_chunk_usage){ type, devid, 0, stripes };
			(*n)++;
		}
		(*cu)[i].size += length;
	}
	return 0;
}

int btrfs_group_order(uint64_t a, uint64_t b)
{
	uint64_t mask = BTRFS_BLOCK_GROUP_TYPE_MASK;

	if ((a & BTRFS_BLOCK_GROUP_TYPE_MASK) == (b & BTRFS_BLOCK_GROUP_TYPE_MASK))
		mask = BTRFS_BLOCK_GROUP_PROFILE_MASK;
	else if (b & BTRFS_BLOCK_GROUP_SYSTEM)
		return -1;
	else if (a & BTRFS_BLOCK_GROUP_SYSTEM)
		return 1;
	return (a & mask) > (b & mask) ? 1 : (a & mask) < (b & mask) ? -1 : 0;
}

static int chunk_usage_cmp(const void *a, const void *b)
{
	return btrfs_group_order(((const struct btrfs_chunk_usage *)a)->type,
				 ((const struct btrfs_chunk_usage *)b)->type);
}

int btrfs_chunk_usage(int fd, struct btrfs_chunk_usage **out, int *count)
{
	struct btrfs_ioctl_search_args args;
	struct btrfs_ioctl_search_key *sk = &args.key;
	struct btrfs_chunk_usage *cu = NULL;
	int n = 0, room = 0, ret = 0;

	memset(&args, 0, sizeof(args));
	sk->tree_id = BTRFS_CHUNK_TREE_OBJECTID;
	sk->min_objectid = sk->max_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
	sk->min_type = sk->max_type = BTRFS_CHUNK_ITEM_KEY;
	sk->max_offset = UINT64_MAX;
	sk->max_transid = UINT64_MAX;
	for (;;) {
		size_t off = 0;
		uint32_t i;

		sk->nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &args)) {
			ret = -errno;
			break;
		}
		if (!sk->nr_items)
			break;
		for (i = 0; i < sk->nr_items && !ret; i++) {
			struct btrfs_ioctl_search_header sh;

			if (off + sizeof(sh) > sizeof(args.buf)) {
				ret = -EUCLEAN;
				break;
			}
			memcpy(&sh, args.buf + off, sizeof(sh));
			off += sizeof(sh);
			if (sh.len > sizeof(args.buf) - off) {
				ret = -EUCLEAN;
				break;
			}
			if (sh.type == BTRFS_CHUNK_ITEM_KEY)
				ret = add_chunk(&cu, &n, &room, (const uint8_t *)args.buf + off, sh.len);
			off += sh.len;
			sk->min_offset = sh.offset + 1;
		}
		if (ret || sk->min_offset == 0) /* error, or the last possible offset */
			break;
	}
	if (ret) {
		free(cu);
		return ret;
	}
	sort_stable(cu, n, sizeof(*cu), chunk_usage_cmp);
	*out = cu;
	*count = n;
	return 0;
}

uint64_t btrfs_chunk_usage_on_device(const struct btrfs_chunk_usage *c)
{
	uint32_t parity = (c->type & BTRFS_BLOCK_GROUP_RAID6) ? 2 :
			  (c->type & BTRFS_BLOCK_GROUP_RAID5) ? 1 : 0;
	uint32_t sub = (c->type & BTRFS_BLOCK_GROUP_RAID10) ? 2 : 1;
	uint32_t div;

	/* Mirrored profiles store the whole chunk on each stripe. */
	if (c->type & (BTRFS_BLOCK_GROUP_RAID1_MASK | BTRFS_BLOCK_GROUP_DUP))
		return c->size;
	div = c->num_stripes > parity ? (c->num_stripes - parity) / sub : 1;
	return c->size / (div ? div : 1);
}

uint64_t btrfs_device_size(const char *path)
{
	uint64_t size = 0;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;
	else if (ioctl(fd, BLKGETSIZE64, &size))
		size = 0;
	close(fd);
	return size;
}

struct mount_query {
	dev_t rdev;
	const uint8_t *fsid;
	char *mnt;
	size_t size;
};

/* The btrfs mount whose source is the block device q->rdev: 1 (found), or
 * -ENAMETOOLONG when its mount point does not fit. */
static int mount_on_rdev(const struct sys_mount *m, void *ctx)
{
	struct mount_query *q = ctx;
	struct stat st;

	if (strcmp(m->fstype, "btrfs") || stat(m->source, &st) || !S_ISBLK(st.st_mode) ||
	    st.st_rdev != q->rdev)
		return 0;
	if (strlen(m->target) >= q->size)
		return -ENAMETOOLONG;
	strcpy(q->mnt, m->target);
	return 1;
}

int btrfs_mount_of_device(const char *dev, char *mnt, size_t size)
{
	struct mount_query q = { .mnt = mnt, .size = size };
	struct stat want;
	int ret;

	if (stat(dev, &want))
		return -errno;
	if (!S_ISBLK(want.st_mode))
		return -ENOTBLK;
	q.rdev = want.st_rdev;
	ret = sysfile_each_mount(mount_on_rdev, &q);
	return ret > 0 ? 0 : ret < 0 ? ret : -ENOENT;
}

int btrfs_sysfs_path(int fd, const char *name, char path[BTRFS_SYSFS_PATH])
{
	struct btrfs_ioctl_fs_info_args fi;
	char fsid[UUID_STR_LEN];
	int ret = btrfs_fs_info(fd, &fi);

	if (ret)
		return ret;
	uuid_unparse(fi.fsid, fsid);
	if (snprintf(path, BTRFS_SYSFS_PATH, "/sys/fs/btrfs/%s/%s", fsid, name) >= BTRFS_SYSFS_PATH)
		return -ENAMETOOLONG;
	return 0;
}

int btrfs_sysfs_read(int fd, const char *name, char *buf, size_t size)
{
	char path[BTRFS_SYSFS_PATH];
	ssize_t n;
	int sfd, ret;

	buf[0] = 0;
	ret = btrfs_sysfs_path(fd, name, path);
	if (ret)
		return ret;
	sfd = open(path, O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		return -errno;
	n = read(sfd, buf, size - 1);
	ret = n < 0 ? -errno : 0;
	close(sfd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
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

/* The btrfs mount whose fsid is q->fsid (and whose mount point fits): 1 (found). */
static int mount_of_fsid(const struct sys_mount *m, void *ctx)
{
	struct mount_query *q = ctx;
	struct btrfs_ioctl_fs_info_args fi;
	int fd, found;

	if (strcmp(m->fstype, "btrfs"))
		return 0;
	fd = open(m->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	found = !btrfs_fs_info(fd, &fi) && !memcmp(fi.fsid, q->fsid, 16) &&
		strlen(m->target) < q->size;
	if (found)
		strcpy(q->mnt, m->target);
	close(fd);
	return found;
}

/* The mount point of a mounted btrfs whose fsid is the one in the primary superblock
 * of device dev: a multi-device filesystem appears in the mount table under one of its
 * devices only. */
static int mount_of_fsid_on(const char *dev, char *mnt, size_t size)
{
	struct mount_query q = { .mnt = mnt, .size = size };
	uint8_t sb[4096];
	int fd, ret;

	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* struct btrfs_super_block at 64 KiB: csum[32], fsid[16], bytenr, flags, magic */
	if (pread(fd, sb, sizeof(sb), 65536) != (ssize_t)sizeof(sb) ||
	    memcmp(sb + 64, "_BHRfS_M", 8)) {
		close(fd);
		return -ENOENT;
	}
	close(fd);
	q.fsid = sb + 32;
	ret = sysfile_each_mount(mount_of_fsid, &q);
	return ret > 0 ? 0 : ret < 0 ? ret : -ENOENT;
}

int btrfs_open_path_or_dev(const char *path, int quiet)
{
	char mnt[4096];
	struct stat st;
	int fd;

	if (stat(path, &st)) {
		if (!quiet)
			msg_error("cannot check %s: %m", path);
		goto not_mounted;
	}
	if (!S_ISBLK(st.st_mode))
		return btrfs_open_path(path, 1, quiet);
	if (btrfs_mount_of_device(path, mnt, sizeof(mnt)) && mount_of_fsid_on(path, mnt, sizeof(mnt))) {
not_mounted:
		if (!quiet)
			msg_error("'%s' is not a mounted btrfs device", path);
		return -1;
	}
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && !quiet)
		msg_error("can't access '%s': %m", path);
	return fd;
}

/* /dev/btrfs-control, created (misc 10:234) when a minimal /dev lacks it. */
static int open_btrfs_control(void)
{
	int fd = open("/dev/btrfs-control", O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && !mknod("/dev/btrfs-control", S_IFCHR | 0600, makedev(10, 234)))
		fd = open("/dev/btrfs-control", O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int btrfs_control_ioctl(unsigned long request, const char *path)
{
	struct btrfs_ioctl_vol_args args;
	int fd, ret;

	memset(&args, 0, sizeof(args));
	if (path && strlen(path) >= sizeof(args.name))
		return -ENAMETOOLONG;
	if (path)
		strcpy(args.name, path);
	fd = open_btrfs_control();
	if (fd < 0)
		return fd;
	ret = ioctl(fd, request, &args);
	ret = ret < 0 ? -errno : ret;
	close(fd);
	return ret;
}

struct block_walk {
	int (*fn)(const char *path, void *ctx);
	void *ctx;
};

static int block_device_entry(unsigned major, unsigned minor, uint64_t blocks, const char *name,
			      void *ctx)
{
	struct block_walk *w = ctx;
	char path[160];

	(void)major;
	(void)minor;
	(void)blocks;
	snprintf(path, sizeof(path), "/dev/%s", name);
	return w->fn(path, w->ctx);
}

int btrfs_each_block_device(int (*fn)(const char *path, void *ctx), void *ctx)
{
	struct block_walk w = { fn, ctx };

	return sysfile_each_partition(block_device_entry, &w);
}

int btrfs_dev_infos_of_path(int fd, const char *path, struct btrfs_ioctl_fs_info_args *fi,
			    struct btrfs_ioctl_dev_info_args **devs, int *count)
{
	struct stat want, st;
	int i, n = 0, ret = btrfs_dev_infos(fd, fi, devs, count);

	if (ret || stat(path, &want) || !S_ISBLK(want.st_mode))
		return ret;
	for (i = 0; i < *count; i++)
		if (!stat((const char *)(*devs)[i].path, &st) && S_ISBLK(st.st_mode) &&
		    st.st_rdev == want.st_rdev)
			(*devs)[n++] = (*devs)[i];
	*count = n;
	return 0;
}

int btrfs_parse_profile(const char *name, uint64_t *flags)
{
	size_t i;

	*flags = 0;
	if (!strcasecmp(name, "single"))
		return 0;
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcasecmp(name, profiles[i].name)) {
			*flags = profiles[i].flag;
			return 0;
		}
	return -1;
}

const char *btrfs_err_str(int code)
{
	static const char *const text[] = {
		[BTRFS_ERROR_DEV_RAID1_MIN_NOT_MET] = "unable to go below two devices on raid1",
		[BTRFS_ERROR_DEV_RAID10_MIN_NOT_MET] = "unable to go below two devices on raid10",
		[BTRFS_ERROR_DEV_RAID5_MIN_NOT_MET] = "unable to go below two devices on raid5",
		[BTRFS_ERROR_DEV_RAID6_MIN_NOT_MET] = "unable to go below three devices on raid6",
		[BTRFS_ERROR_DEV_TGT_REPLACE] = "unable to remove the dev_replace target dev",
		[BTRFS_ERROR_DEV_MISSING_NOT_FOUND] = "no missing devices found to remove",
		[BTRFS_ERROR_DEV_ONLY_WRITABLE] = "unable to remove the only writeable device",
		[BTRFS_ERROR_DEV_EXCL_RUN_IN_PROGRESS] =
			"add/delete/balance/replace/resize operation in progress",
		[BTRFS_ERROR_DEV_RAID1C3_MIN_NOT_MET] = "unable to go below three devices on raid1c3",
		[BTRFS_ERROR_DEV_RAID1C4_MIN_NOT_MET] = "unable to go below four devices on raid1c4",
	};

	if (code > 0 && code < (int)(sizeof(text) / sizeof(text[0])) && text[code])
		return text[code];
	return "unknown error";
}

int btrfs_wait_exclop(int fd, int enqueue, const char *mine)
{
	int waited = 0;
	char op[64];

	for (;;) {
		/* the kernel's exclusive operation: "none", "balance", "device add", ...;
		 * empty when unknown */
		btrfs_sysfs_read(fd, "exclusive_operation", op, sizeof(op));
		if (!op[0] || !strcmp(op, "none") ||
		    (!strcmp(mine, "device add") && !strcmp(op, "balance paused")))
			break;
		if (!enqueue) {
			msg_error("unable to start %s, another exclusive operation '%s' in progress",
				  mine, op);
			return -1;
		}
		if (!waited++) {
			out_say("Waiting for another exclusive operation '%s' to finish ...", op);
			fflush(stdout);
		}
		sleep(1);
	}
	if (waited)
		out_say(" done\n");
	return 0;
}

int btrfs_path_ioctl(const char *path, unsigned long request, void *arg, int *fd)
{
	int ret;

	errno = 0;
	*fd = btrfs_open_path(path, 1, 0);
	if (*fd < 0) {
		errno = 0;
		return -1;
	}
	ret = ioctl(*fd, request, arg);
	if (ret >= 0)
		errno = 0;
	return ret;
}

int btrfs_check_subvol_path(const char *path)
{
	int err = subvol_check_path(path);

	if (err)
		msg_error("%s: %s", subvol_strerror(err), strerror(err == -ENOTTY ? EINVAL : -err));
	return err;
}

int btrfs_open_cmd_path(int argc, char **argv, int nargs, int dir_only, const char *usage)
{
	cli_check_argc(argc, nargs, nargs, usage);
	return btrfs_open_path(argv[argc - 1], dir_only, 0);
}
