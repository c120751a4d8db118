/* Laying out a fresh btrfs filesystem over one or more devices (the engine behind
 * mkfs.btrfs). Never prints; errors come back as a message in err. */
#ifndef FS_MKFS_H
#define FS_MKFS_H
#include <stddef.h>
#include <stdint.h>
#include "fs/core/format.h"
#include <sys/types.h>

struct mkfs_device {
	int fd;
	const char *path;
	uint64_t size;              /* bytes to use (device size or -b) */
	uint64_t dev_size;          /* the whole device (old signatures are wiped there) */
	int grow;                   /* an image file that may grow to fit --rootdir */
	uint8_t uuid[BTRFS_UUID_SIZE];
};

/* A file or directory of --rootdir. */
struct mkfs_inode_id {
	dev_t dev;
	ino_t ino;
};

/* --subvol: a directory of --rootdir made a subvolume. */
struct mkfs_subvol_spec {
	struct mkfs_inode_id id;        /* first (resolved with the one below) */
	int ro, is_default;
};

/* --inode-flags: BTRFS_INODE_NODATACOW / NODATASUM for one file or directory. */
struct mkfs_inode_flags {
	struct mkfs_inode_id id;        /* first */
	uint64_t flags;
};
_Static_assert(offsetof(struct mkfs_subvol_spec, id) == 0 &&
	       offsetof(struct mkfs_inode_flags, id) == 0, "id first");

enum { MKFS_QUOTA = 1, MKFS_SQUOTA };

struct mkfs_config {
	uint32_t nodesize, sectorsize;
	int csum_type;
	uint64_t incompat, compat_ro;   /* feature bits to set */
	uint64_t meta_profile;          /* BTRFS_BLOCK_GROUP_* profile bit, 0 for single */
	uint64_t data_profile;
	int mixed;                      /* data and metadata share block groups */
	char label[BTRFS_LABEL_SIZE];
	uint8_t fsid[BTRFS_FSID_SIZE];
	uint8_t chunk_uuid[BTRFS_UUID_SIZE];
	uint8_t fs_root_uuid[BTRFS_UUID_SIZE];
	uint64_t now;                   /* timestamps of the new root dirs and trees */
	int reproducible;               /* SOURCE_DATE_EPOCH: --rootdir atime/ctime from mtime */
	const char *rootdir;            /* populate from this directory (NULL: empty) */
	int shrink;                     /* with rootdir: make the devices just big enough */
	int compress;                   /* FS_COMPRESS_* (fs/core/fs.h) for rootdir data; 0 none */
	int compress_level;             /* its level (struct fs_deflater); 0 default */
	const char *tmpdir;             /* temporary files of rootdir's item sorting */
	size_t sort_mem;                /* their memory budget (0: 64 MiB) */
	int writer_thread;              /* rootdir data written on a second thread (MKFS_THREADS) */
	struct { dev_t dev; ino_t ino; } skip[64];  /* image files: not copied by --rootdir */
	int nskip;
	const struct mkfs_subvol_spec *subvols;
	int nsubvols;
	const struct mkfs_inode_flags *inode_flags;
	int ninode_flags;
	int quota;                      /* 0, MKFS_QUOTA (qgroups) or MKFS_SQUOTA (simple) */
};

/* What was made, for the summary. */
struct mkfs_result {
	uint64_t size[3];               /* logical bytes of data, metadata, system chunks */
	uint64_t total_bytes;           /* filesystem size (sum of device sizes used) */
	uint64_t dev_size[64];
	int warnings;                   /* rootdir entries skipped (reasons in warn_msg) */
	char warn_msg[256];
};

/* Writes the filesystem: wipes old signatures, writes every tree block and data,
 * syncs, then the superblocks (primary last). Returns 0 or -1 with err set. */
int mkfs_make(const struct mkfs_config *cfg, struct mkfs_device *devs, int ndevs,
	      struct mkfs_result *res, char *err, size_t errlen);

/* The directory name hash of btrfs (crc32c seeded with ~1, not inverted). */
uint32_t btrfs_name_hash(const char *name, size_t len);

#endif
