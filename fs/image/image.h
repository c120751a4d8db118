/* btrfs-image's metadata dump: the format, and the dump and restore of it. */
#ifndef FS_IMAGE_H
#define FS_IMAGE_H
#include "fs/core/fs.h"

/* The dump format (version 0, as btrfs-progs writes it; all little-endian). A dump is a
 * sequence of clusters. A cluster opens with a 1 KiB index block: the header below and
 * up to IMAGE_ITEMS_PER_CLUSTER items, each a logical address and the size of its bytes
 * as stored. The items' bytes follow in order, each zlib-compressed on its own when the
 * header says so, and the cluster is padded with zeros to a 1 KiB multiple. The header's
 * bytenr is the cluster's own offset in the dump. The first item is the superblock
 * (at 65536, 4 KiB); the others are runs of adjacent tree blocks (up to
 * IMAGE_MAX_PENDING bytes) and the data extents of v1 free space cache inodes. */
#define IMAGE_BLOCK_SIZE 1024
#define IMAGE_MAGIC 0xbd5c25e27295668bULL
#define IMAGE_MAX_PENDING (256 * 1024)
/* Largest item (as stored) restore takes; dump keeps them under half of it. */
#define IMAGE_MAX_ITEM (64u << 20)
#define IMAGE_COMPRESS_NONE 0
#define IMAGE_COMPRESS_ZLIB 1
struct image_cluster_header {
	uint64_t magic;
	uint64_t bytenr;
	uint32_t nritems;
	uint8_t compress;
} __attribute__((packed));
struct image_cluster_item {
	uint64_t bytenr;
	uint32_t size;
} __attribute__((packed));
#define IMAGE_ITEMS_PER_CLUSTER \
	((IMAGE_BLOCK_SIZE - sizeof(struct image_cluster_header)) / sizeof(struct image_cluster_item))

enum image_names {
	IMAGE_NAMES_KEEP,       /* file names as they are */
	IMAGE_NAMES_GARBAGE,    /* -s: each name replaced by printable garbage of its length */
	IMAGE_NAMES_COLLIDE,    /* -ss: by another name of the same name hash where one exists */
};
struct image_dump_opts {
	int compress_level;     /* 0: stored as is; 1..9: zlib */
	int walk_trees;         /* find tree blocks by walking the trees, not the extent tree */
	enum image_names names;
};
struct image_dump_stats {
	uint64_t blocks;        /* tree blocks dumped */
	uint64_t unverified;    /* of those, copied as they are since they do not verify */
	uint64_t garbage_names; /* -ss: names no same-hash substitute was found for */
};
/* Dumps the metadata of fs (opened read-only) to fd: the superblock as it is on the
 * first device, every tree block (in the extent tree, or every tree reached from the
 * chunk and root trees with walk_trees) with its unused space and inline file data
 * zeroed (and names replaced, as asked), the log trees, the v1 free space
 * cache's data. Memory: one cluster's items. */
int image_dump(struct fs *fs, int fd, const struct image_dump_opts *o, struct image_dump_stats *st);

struct image_restore_opts {
	int old_restore;        /* -o: every block at its logical address, one chunk maps all */
	int multi;              /* -m: onto as many devices as the filesystem had */
};
/* Restores the dump read from in_fd (a file: it is read twice, first for the chunk map
 * from the dump's chunk tree) onto out_paths[0] (a file, made anew, or a device): each
 * block at its physical place on the first device, both copies of DUP, the superblock
 * marked as a restored dump (METADUMP_V2), the output made as large as the device was.
 * A dump of several devices becomes one device: its chunks single (or DUP) on it, those
 * overlapping another device's moved past the end, block groups, device extents and
 * items made to match (a transaction of fs/write). With multi, onto nout devices (as
 * many as the filesystem had; the first gets the dumped device's devid, the others the
 * remaining ones in order), each block on every copy as its chunk places it (RAID5/6
 * refused). */
int image_restore(int in_fd, const char *const *out_paths, int nout, const struct image_restore_opts *o,
		  struct fs_error *err);

/* A substitute for name of the same length and the same btrfs name hash (crc32c seeded
 * with ~1), printable, without '/', other than name; 0 found, -1 none (names of 4 bytes
 * or less have none). */
int image_name_collision(const char *name, size_t len, char *out);

#endif
