/* Queries on a mounted btrfs through its ioctls (shared by filesystem, device,
 * subvolume and scrub commands). Functions return 0 or -errno unless noted and never
 * print, except btrfs_open_path*() which report why they failed and
 * btrfs_warn_multiple_profiles() (btrfs-progs wording). */
#ifndef UTIL_BTRFS_IOCTL_H
#define UTIL_BTRFS_IOCTL_H
#include <stddef.h>
#include <stdint.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>

/* Opens a file or directory on a mounted btrfs read-only. Returns the fd, or -1 after
 * printing "ERROR: cannot access 'P': ...", "ERROR: not a btrfs filesystem: P" or, with
 * dir_only, "ERROR: not a directory: P" (quiet: print nothing). */
int btrfs_open_path(const char *path, int dir_only, int quiet);

/* btrfs_open_path(path, 1, quiet), or for a block device the mount point of the btrfs
 * mounted from it ("ERROR: 'P' is not a mounted btrfs device" when there is none, or
 * after "ERROR: cannot check P: ..." when path does not exist). */
int btrfs_open_path_or_dev(const char *path, int quiet);

/* An ioctl on /dev/btrfs-control with a struct btrfs_ioctl_vol_args naming path (NULL:
 * an empty name): BTRFS_IOC_SCAN_DEV, BTRFS_IOC_DEVICES_READY, BTRFS_IOC_FORGET_DEV.
 * Returns the ioctl's result (>= 0) or -errno. */
int btrfs_control_ioctl(unsigned long request, const char *path);

/* Calls fn("/dev/NAME", ctx) for every block device in /proc/partitions until fn
 * returns non-zero (returned). */
int btrfs_each_block_device(int (*fn)(const char *path, void *ctx), void *ctx);

/* Is fd (any file on it) on a btrfs mount? 1 yes, 0 no, -errno. */
int btrfs_fd_is_btrfs(int fd);

/* BTRFS_IOC_FS_INFO: fsid, num_devices, max_id, nodesize, sectorsize, ... */
int btrfs_fs_info(int fd, struct btrfs_ioctl_fs_info_args *fi);

/* BTRFS_IOC_DEV_INFO for one devid (-ENODEV when there is no such device). */
int btrfs_dev_info(int fd, uint64_t devid, struct btrfs_ioctl_dev_info_args *di);

/* Every device of the filesystem, ascending devid (the replace target devid 0 first
 * when a replace runs). *devs is malloc'ed (free() it), *count set; fi is filled too. */
int btrfs_dev_infos(int fd, struct btrfs_ioctl_fs_info_args *fi,
		    struct btrfs_ioctl_dev_info_args **devs, int *count);

/* btrfs_dev_infos() for a command given path: a mount point means every device, a
 * block device only that one (as btrfs-progs scrubs and reports it). */
int btrfs_dev_infos_of_path(int fd, const char *path, struct btrfs_ioctl_fs_info_args *fi,
			    struct btrfs_ioctl_dev_info_args **devs, int *count);

/* BTRFS_IOC_SPACE_INFO: all space infos in kernel order (Data, System, Metadata,
 * GlobalReserve ...). *out is malloc'ed; (*out)->total_spaces entries in (*out)->spaces. */
int btrfs_space_info(int fd, struct btrfs_ioctl_space_args **out);

/* "Data", "System", "Metadata", "Data+Metadata", "GlobalReserve", "unknown" for a
 * block group / space info flags value. */
const char *btrfs_group_type_str(uint64_t flags);
/* "single", "DUP", "RAID0", "RAID1", "RAID10", "RAID5", "RAID6", "RAID1C3", "RAID1C4",
 * "UNKNOWN" for the profile bits of flags. */
const char *btrfs_group_profile_str(uint64_t flags);
/* How many bytes on disk one byte of the profile takes (DUP/RAID1/RAID10: 2, RAID1C3: 3,
 * RAID1C4: 4, others 1; RAID5/6 depend on the device count and give 1 here). */
int btrfs_profile_copies(uint64_t flags);

/* Block group classes of a space info list that use more than one profile (what an
 * unfinished balance leaves). Returns a mask of (1 << BTRFS_CLASS_*) bits and puts the
 * lower-case profile list ("single, dup") of each such class in profiles[class]. */
enum { BTRFS_CLASS_DATA, BTRFS_CLASS_METADATA, BTRFS_CLASS_MIXED, BTRFS_CLASS_SYSTEM,
       BTRFS_NR_CLASSES };
#define BTRFS_PROFILES_LEN 96
int btrfs_multiple_profiles(const struct btrfs_ioctl_space_args *sa,
			    char profiles[BTRFS_NR_CLASSES][BTRFS_PROFILES_LEN]);
/* When the filesystem of fd uses more than one profile for a block group class:
 * "WARNING: Multiple block group profiles detected, see 'man btrfs(5)'" and one
 * "WARNING:    Data: single, dup" line per such class, on stderr (as btrfs-progs
 * after filesystem df, device usage/add/remove). Prints nothing on error. */
void btrfs_warn_multiple_profiles(int fd);

/* Chunk allocation summed per (chunk type, device, stripe count), from the chunk tree
 * (BTRFS_IOC_TREE_SEARCH, needs root). size is the sum of chunk lengths times the
 * stripes of those chunks on the device. Sorted by type like btrfs-progs: Data,
 * Metadata, then System; within a type by profile. *out malloc'ed. */
struct btrfs_chunk_usage {
	uint64_t type;
	uint64_t devid;
	uint64_t size;
	uint32_t num_stripes;
};
int btrfs_chunk_usage(int fd, struct btrfs_chunk_usage **out, int *count);
/* Bytes the chunks of c occupy on their device (parity and striping accounted). */
uint64_t btrfs_chunk_usage_on_device(const struct btrfs_chunk_usage *c);
/* btrfs-progs order of block group / space info flags (qsort-style result). */
int btrfs_group_order(uint64_t a, uint64_t b);

/* Size of a block device (BLKGETSIZE64) or regular file; 0 when unknown. */
uint64_t btrfs_device_size(const char *path);


/* The mount point of the btrfs mounted from block device dev (compared by device
 * number), copied into mnt. 0 when found, -ENOENT when not mounted, -errno. */
int btrfs_mount_of_device(const char *dev, char *mnt, size_t size);

/* /sys/fs/btrfs/FSID/name for the filesystem of fd into path. 0 or -errno. */
#define BTRFS_SYSFS_PATH 256
int btrfs_sysfs_path(int fd, const char *name, char path[BTRFS_SYSFS_PATH]);

/* The first line of /sys/fs/btrfs/FSID/name (an attribute of the filesystem of fd,
 * "exclusive_operation", "features/zoned", ...) without its newline into buf, which is
 * empty on error. 0 or -errno (-ENOENT: no such attribute). */
int btrfs_sysfs_read(int fd, const char *name, char *buf, size_t size);

/* Filesystem label of a mounted fs (FS_IOC_GETFSLABEL / FS_IOC_SETFSLABEL); label has
 * room for BTRFS_LABEL_SIZE bytes. */
int btrfs_get_label_fd(int fd, char label[BTRFS_LABEL_SIZE]);
int btrfs_set_label_fd(int fd, const char *label);

/* A profile name (single, dup, raid0, raid1, raid1c3, raid1c4, raid10, raid5, raid6; any
 * case) as block group flags (single: 0). -1 when unknown. */
int btrfs_parse_profile(const char *name, uint64_t *flags);

/* The kernel's text for a positive result of the device, balance and replace ioctls
 * (enum btrfs_err_code), "unknown error" for others. */
const char *btrfs_err_str(int code);

/* 0 when no other exclusive operation (balance, device add, replace, ...) runs on the
 * filesystem of fd; with enqueue it waits for it ("Waiting for ..." on stdout). -1 after
 * "ERROR: unable to start MINE, another exclusive operation 'OP' in progress". A paused
 * balance does not stop a device add. */
int btrfs_wait_exclop(int fd, int enqueue, const char *mine);

/* subvol_check_path() with the error printed in btrfs-progs' wording ("ERROR: Not a
 * Btrfs subvolume: Invalid argument"); 0 when path is the root of a subvolume. */
int btrfs_check_subvol_path(const char *path);

/* For a command whose last of exactly nargs arguments is a path on a mounted btrfs:
 * cli_check_argc(), then btrfs_open_path(that path, dir_only, 0). The fd, or -1
 * (reported). */
int btrfs_open_cmd_path(int argc, char **argv, int nargs, int dir_only, const char *usage);

/* btrfs_open_path(path, 1, 0), then ioctl(fd, request, arg). Returns the ioctl's
 * result (>= 0, errno set to 0) or -1 with errno set; *fd is the open directory (-1
 * when it could not be opened, reported, errno 0), to close. */
int btrfs_path_ioctl(const char *path, unsigned long request, void *arg, int *fd);

#endif
