/* Shared between fs/mkfs.c and fs/mkfs_rootdir.c (not a public interface). */
#ifndef FS_MKFS_INT_H
#define FS_MKFS_INT_H
#include "mkfs.h"
#include "alloc.h"
#include "build.h"
#include <time.h>

#define MKFS_GENERATION 1ULL      /* every item and block of the new filesystem */

struct mkfs_ctx {
	const struct mkfs_config *cfg;
	struct alloc al;
	struct fs_items *fs;        /* FS_TREE items (mkfs_items.c) */
	struct item_list csum;      /* CSUM_TREE items */
	struct item_list data_ext;  /* EXTENT_ITEMs of data extents (extent tree) */
	char *err;
	size_t errlen;
	struct mkfs_result *res;
};

int mkfs_fail(struct mkfs_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fills an inode item; mkfs_inode_times sets its times (otime = ctime). */
void mkfs_inode(struct btrfs_inode_item *ii, uint64_t size, uint64_t nbytes, uint32_t nlink,
		uint32_t mode, uint32_t uid, uint32_t gid, uint64_t rdev);
void mkfs_inode_times(struct btrfs_inode_item *ii, const struct timespec *atime,
		      const struct timespec *ctime, const struct timespec *mtime);
/* Adds the INODE_REF of ino in dir (index, name). */
int mkfs_add_inode_ref(struct mkfs_ctx *c, uint64_t ino, uint64_t dir, uint64_t index,
		       const char *name, size_t len);

/* Data extents: take space (up to maxlen, a multiple of the sector size), write
 * into it (sector-aligned pieces, checksummed), then record the extent as owned by
 * file ino at file offset off. Return 0 or -1 with err set. */
int mkfs_data_alloc(struct mkfs_ctx *c, uint64_t maxlen, uint64_t *logical, uint64_t *len);
/* Exactly len contiguous bytes (compressed extents). */
int mkfs_data_alloc_exact(struct mkfs_ctx *c, uint64_t len, uint64_t *logical);
int mkfs_data_write(struct mkfs_ctx *c, uint64_t logical, const void *buf, uint64_t len);
int mkfs_data_extent(struct mkfs_ctx *c, uint64_t ino, uint64_t off, uint64_t logical,
		     uint64_t len);

/* FS_TREE items through an external sorter (memory bounded by mem, 0: 64 MiB;
 * temporary files in tmpdir, NULL: /tmp). fs_items_add returns 0 or a negative
 * errno. fs_items_settle ends the adding and computes the tree's shape (0 or -1
 * with err set); fs_items_source then gives the final items, as often as needed. */
struct fs_items;
struct fs_items *fs_items_new(size_t mem, const char *tmpdir);
int fs_items_add(struct fs_items *f, uint64_t objectid, uint8_t type, uint64_t offset,
		 const void *data, uint32_t size);
int fs_items_settle(struct mkfs_ctx *c, struct tree_shape *shape);
struct item_source fs_items_source(struct fs_items *f);
void fs_items_free(struct fs_items *f);
/* fs_items_add, an error set on failure: 0 or -1. */
int mkfs_fs_add(struct mkfs_ctx *c, uint64_t objectid, uint8_t type, uint64_t offset,
		const void *data, uint32_t size);

/* --rootdir */
struct rootdir_estimate {
	uint64_t data_bytes;        /* data extents, sector aligned */
	uint64_t meta_bytes;        /* items, roughly */
};
int rootdir_estimate(struct mkfs_ctx *c, const char *dir, struct rootdir_estimate *est);
int rootdir_populate(struct mkfs_ctx *c, const char *dir);

#endif
