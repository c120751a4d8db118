/* Shared between fs/mkfs/mkfs.c and fs/mkfs/rootdir.c (not a public interface). */
#ifndef FS_MKFS_INT_H
#define FS_MKFS_INT_H
#include "alloc.h"
#include "mkfs.h"
#include "fs/write/build.h"
#include "util/workq.h"
#include <time.h>

#define MKFS_GENERATION 1ULL      /* every item and block of the new filesystem */

/* A spool: records appended in order, then read back from the start as often as
 * needed. Up to cap bytes stay in memory; more go to an unlinked temporary file in
 * tmpdir (made only then). Functions return 0 or a negative errno. */
#define SPOOL_BUF (256u << 10)
struct spool {
	int fd;                     /* -1: no file yet */
	const char *tmpdir;
	uint8_t *buf;
	size_t cap, len, pos;       /* buffer size, bytes in it, read position */
	off_t end, next;            /* file size; file offset of the next read */
	int reading;
};
int spool_init(struct spool *s, const char *tmpdir, size_t cap);
int spool_write(struct spool *s, const void *data, size_t len);
/* Ends the writing (the first time) and moves to the start. */
int spool_rewind(struct spool *s);
/* The next len (<= cap) bytes: 1 and *out valid until the next call, 0 at the end,
 * or a negative errno (-EIO: the spool ends inside the record). */
int spool_read(struct spool *s, size_t len, const void **out);
void spool_free(struct spool *s);

/* Data extents and their checksums, in increasing logical order as the data is
 * written (data space is handed out upwards while --rootdir streams files). */
struct data_extent_rec {
	uint64_t logical, len;      /* EXTENT_ITEM key */
	uint64_t root, ino, offset; /* its one EXTENT_DATA_REF */
};

/* A subvolume tree: the top level (id 5) first, then those of --subvol in id order. */
struct mkfs_subvol {
	uint64_t id;
	uint64_t parent, dirid, index;  /* its directory entry (ROOT_REF / ROOT_BACKREF) */
	char name[BTRFS_NAME_LEN_MAX + 1];
	int ro;
	uint64_t data_bytes;            /* of the data extents its files own (qgroups) */
};
struct csum_item_hdr {
	uint64_t logical;           /* EXTENT_CSUM key offset */
	uint32_t size;              /* checksum bytes that follow */
	uint32_t pad;
};

struct mkfs_ctx {
	const struct mkfs_config *cfg;
	struct alloc al;
	struct fs_items *fs;        /* FS_TREE items (fs/mkfs/items.c) */
	struct spool data_ext;      /* struct data_extent_rec (extent tree items) */
	struct spool csum;          /* CSUM_TREE items: struct csum_item_hdr, checksums */
	uint8_t *csum_item;         /* the csum item being filled (max_csum_item bytes) */
	uint64_t csum_start;        /* its first byte's logical address */
	uint32_t csum_len;          /* and its checksum bytes so far */
	uint64_t data_floor;        /* data extents so far end here */
	struct mkfs_subvol *sv;     /* the subvolume trees (sv[0]: the top level) */
	int nsv;
	int cur;                    /* the one items are added to (index into sv) */
	uint64_t default_id;        /* --subvol default: its id, 0: the top level */
	int nodatasum;              /* the data being written gets no checksums */
	struct workq writer;        /* writes rootdir data (mkfs_data_put); ring NULL: none */
	struct rootdir_seen *seen;  /* what the --rootdir estimate saw, for the populate pass */
	size_t nseen, seen_cap;
	int writer_err;             /* its first error, read once it has stopped */
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
/* mkfs_data_write in two steps, for a writer thread (cfg->writer_thread): len (at most
 * MKFS_DATA_PIECE) bytes of room to fill (in its ring, else fallback), then
 * checksummed and handed over to be written at logical (without the thread: written
 * at once). The thread's write errors are reported when --rootdir is done. */
#define MKFS_DATA_PIECE (1024 * 1024)
uint8_t *mkfs_data_space(struct mkfs_ctx *c, uint8_t *fallback, size_t len);
int mkfs_data_put(struct mkfs_ctx *c, uint64_t logical, uint8_t *buf, size_t len);
int mkfs_data_extent(struct mkfs_ctx *c, uint64_t ino, uint64_t off, uint64_t logical,
		     uint64_t len);

/* Items of the subvolume trees through an external sorter (memory bounded by mem,
 * 0: 64 MiB; temporary files in tmpdir, NULL: /tmp), sorted by tree, then key.
 * fs_items_add returns 0 or a negative errno. fs_items_settle ends the adding and
 * computes the shape of each tree, in tree order (shapes[0..ntrees), every tree has
 * items; 0 or -1 with err set); fs_items_source then gives the final items of tree i,
 * the trees read once, in order. */
struct fs_items;
struct fs_items *fs_items_new(size_t mem, const char *tmpdir);
int fs_items_add(struct fs_items *f, uint64_t tree, uint64_t objectid, uint8_t type,
		 uint64_t offset, const void *data, uint32_t size);
int fs_items_settle(struct mkfs_ctx *c, struct tree_shape *shapes, int ntrees);
struct item_source fs_items_source(struct fs_items *f, int i);
void fs_items_free(struct fs_items *f);
/* fs_items_add to the current subvolume tree, an error set on failure: 0 or -1. */
int mkfs_fs_add(struct mkfs_ctx *c, uint64_t objectid, uint8_t type, uint64_t offset,
		const void *data, uint32_t size);
/* A new subvolume tree made current (c->sv grows): -1 with err set when out of memory. */
int mkfs_subvol_new(struct mkfs_ctx *c, uint64_t parent, uint64_t dirid, uint64_t index,
		    const char *name, int ro);

/* --rootdir */
struct rootdir_estimate {
	uint64_t data_bytes;        /* data extents, sector aligned */
	uint64_t meta_bytes;        /* items, roughly */
};
/* The estimate keeps what it learns of the first entries (c->seen, up to a few MiB)
 * for rootdir_populate, which then asks the system only for what changed. */
int rootdir_estimate(struct mkfs_ctx *c, const char *dir, struct rootdir_estimate *est);
int rootdir_populate(struct mkfs_ctx *c, const char *dir);

#endif
