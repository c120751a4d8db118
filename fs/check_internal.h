/* Shared state of the checker's passes (fs/check*.c only). */
#ifndef FS_CHECK_INTERNAL_H
#define FS_CHECK_INTERNAL_H
#include "check.h"
#include "xsort.h"

/* btrfs_inode_item.flags bits (kernel-internal, not in the UAPI headers). */
#define INODE_FLAG_NODATASUM (1ULL << 0)
#define INODE_FLAG_IMMUTABLE (1ULL << 6)
#define INODE_FLAG_APPEND (1ULL << 7)

struct check_bg {
	uint64_t start, len, flags;
	uint64_t used_item;             /* block group item's used bytes */
	uint64_t used_found;            /* sum of extent items inside */
};

/* Which tree blocks the extent pass has visited: one bit per sector of each
 * metadata/system chunk. */
struct check_seen {
	uint64_t start, len;
	uint8_t *bits;
};

#define CHECK_MAX_BAD_REPORTED 512

struct check_ctx {
	struct fs *fs;
	const struct check_opts *o;
	struct check_stats *st;
	enum check_stage stage;
	uint64_t super_gen;
	int no_holes, skinny;
	struct fs_root root_tree, extent_root, csum_root;
	int have_extent_root, have_csum_root;
	struct check_bg *bgs;           /* sorted by start */
	int nbgs;
	struct check_seen *seen;
	int nseen;
	struct fs_root quota_root;
	struct xsort *qgroups;          /* struct qrec, when qgroups are verified from the trees */
	int qgroup_err;
	struct qgroups *qg;             /* the quota tree's qgroups */
	int qgroup_skip;                /* rescan running or numbers known to be wrong */
	uint64_t qgroup_dropping;       /* a subvolume partly dropped: numbers not verified */
	struct xsort *csum_need;        /* struct check_range, filled by the fs roots pass */
	uint64_t bad_blocks[CHECK_MAX_BAD_REPORTED];    /* already reported */
	int nbad;
};

/* A range of data that must be covered by checksums, or (nodatasum files)
 * must have none. */
struct check_range {
	uint64_t start, len;
	uint64_t root, ino;
	uint64_t no_csum;
};

int ck_range_cmp(const void *a, const void *b);

enum { CK_ERROR, CK_WARNING, CK_RAW };
void ck_problem(struct check_ctx *c, int warning, uint64_t root, uint64_t ino, uint64_t bytenr,
		uint64_t len, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
#define ck_err(c, root, ino, bytenr, len, ...) ck_problem(c, 0, root, ino, bytenr, len, __VA_ARGS__)
#define ck_warn(c, root, ino, bytenr, len, ...) ck_problem(c, 1, root, ino, bytenr, len, __VA_ARGS__)
/* An error printed as is: the reference's multi-line reports (inode errors,
 * unresolved refs) have no "ERROR:" prefix. */
#define ck_raw(c, root, ino, ...) ck_problem(c, CK_RAW, root, ino, 0, 0, __VA_ARGS__)
/* Reports an engine error (bad block, failed read) once per block address. */
void ck_fs_error(struct check_ctx *c, const struct fs_error *e);
void ck_progress(struct check_ctx *c, uint64_t done);
/* A sorter with share/16 of the sort memory. */
struct xsort *ck_sorter(struct check_ctx *c, size_t rec_size, xsort_cmp_fn cmp, unsigned share);
struct check_bg *ck_bg_find(struct check_ctx *c, uint64_t bytenr);
/* Iterates every item of a tree in key order from key `from`: cb returns 0 to
 * go on, >0 to stop early (not an error), <0 to abort. Bad blocks are reported. */
typedef int (*ck_item_fn)(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			  uint32_t size, void *arg);
int ck_iterate(struct check_ctx *c, const struct fs_root *root, const struct fs_key *from,
	       ck_item_fn cb, void *arg);
/* Iterates the log root tree (none: nothing to do). */
int ck_iterate_logs(struct check_ctx *c, ck_item_fn cb, void *arg);
/* Pull-style iteration over one tree from a key. */
struct ck_cursor {
	struct check_ctx *c;
	const struct fs_root *root;
	struct fs_key from;
	struct fs_path p;
	int state;              /* 0 not started, 1 on an item, 2 at the end */
};
void ck_cursor_init(struct ck_cursor *cu, struct check_ctx *c, const struct fs_root *root,
		    const struct fs_key *from);
/* 1 with the next item, 0 at the end (errors are reported and end it). */
int ck_cursor_next(struct ck_cursor *cu, struct fs_key *key, const uint8_t **data, uint32_t *size);
void ck_cursor_release(struct ck_cursor *cu);
/* Errors of a name (dir item, dir index, inode ref; or a subvolume's root
 * ref, backref and entries): the reference's bits. */
enum {
	REF_NO_DIR_ITEM = 1 << 0, REF_NO_DIR_INDEX = 1 << 1, REF_NO_INODE_REF = 1 << 2,
	REF_DUP_DIR_ITEM = 1 << 3, REF_DUP_DIR_INDEX = 1 << 4, REF_DUP_INODE_REF = 1 << 5,
	REF_INDEX_UNMATCH = 1 << 6, REF_FILETYPE_UNMATCH = 1 << 7, REF_NAME_TOO_LONG = 1 << 8,
	REF_NO_ROOT_REF = 1 << 9, REF_NO_ROOT_BACKREF = 1 << 10,
};
/* ", word" for each of those bits, in buf. */
const char *ck_ref_words(char *buf, size_t size, uint32_t errors);
/* Item data must be packed from the end of a leaf down, without gaps. */
void ck_leaf_packing(struct check_ctx *c, uint64_t tree, const struct fs_block *b);
/* btrfs name hash of directory entries: crc32c seeded with ~1, not inverted. */
uint32_t ck_name_hash(const char *name, size_t len);
static inline int ck_is_fstree(uint64_t id)
{
	return id == BTRFS_FS_TREE_OBJECTID ||
	       (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

int check_chunks_and_devices(struct check_ctx *c);
void check_device_set(struct check_ctx *c);
int check_extents(struct check_ctx *c);
int check_free_space(struct check_ctx *c);
int check_cache_inodes(struct check_ctx *c);
int check_fs_roots(struct check_ctx *c);
int check_csums(struct check_ctx *c);
int check_root_refs(struct check_ctx *c);
int check_root_items(struct check_ctx *c);
int check_log_csums(struct check_ctx *c);
int check_log_trees(struct check_ctx *c);
int ck_qgroup_init(struct check_ctx *c);
void ck_qgroup_add(struct check_ctx *c, uint64_t bytenr, uint64_t root, uint64_t size);
int check_qgroups(struct check_ctx *c);
void ck_qgroup_free(struct check_ctx *c);

#endif
