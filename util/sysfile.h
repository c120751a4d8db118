/* Readers for the kernel's text tables: /proc/self/mounts, /proc/partitions and
 * one-value sysfs files. No scanf, no getmntent: a line tokenizer and strtoull. */
#ifndef SYSFILE_H
#define SYSFILE_H
#include <stdint.h>
#include <sys/types.h>

/* One line of a mount table, octal escapes (\040 for a space ...) decoded. */
struct sys_mount {
	const char *source, *target, *fstype, *options;
};

/* Calls cb for each well-formed line of the mount table at path until cb returns
 * non-zero (returned); 0 at the end, -errno when it cannot be opened. Lines with
 * fewer than four fields are skipped. */
int sysfile_each_mount_in(const char *path, int (*cb)(const struct sys_mount *m, void *ctx),
			  void *ctx);
/* The same over /proc/self/mounts. */
int sysfile_each_mount(int (*cb)(const struct sys_mount *m, void *ctx), void *ctx);

/* The mount point that is the longest prefix of path (an absolute real path) when it
 * is a btrfs mount: 0, or -1 (not btrfs, no mount table). */
int sysfile_btrfs_mount_root(const char *path, char *out, size_t outlen);

/* Calls cb for each "major minor #blocks name" line of a partitions table at path
 * (the header and garbage lines are skipped) until cb returns non-zero (returned);
 * 0 at the end, -errno when it cannot be opened. */
int sysfile_each_partition_in(const char *path,
			      int (*cb)(unsigned major, unsigned minor, uint64_t blocks,
					const char *name, void *ctx),
			      void *ctx);
/* The same over /proc/partitions. */
int sysfile_each_partition(int (*cb)(unsigned major, unsigned minor, uint64_t blocks,
				     const char *name, void *ctx),
			   void *ctx);

/* A "MAJ:MIN" device number file (sysfs .../dev); 0 or -errno (-EINVAL: malformed). */
int sysfile_read_devnum(const char *path, dev_t *out);

/* A file holding one unsigned decimal number; 0 or -errno (-EINVAL: malformed). */
int sysfile_read_u64(const char *path, uint64_t *out);

#endif
