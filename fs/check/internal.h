/* Shared state of the checker's passes (fs/check*.c only). */
#ifndef FS_CHECK_INTERNAL_H
#define FS_CHECK_INTERNAL_H
#include "config.h"
#include "check.h"
#include "util/xsort.h"

/* btrfs_inode_item.flags bits (kernel-internal, not in the UAPI headers). */
#define INODE_FLAG_NODATASUM (1ULL << 0)
#define INODE_FLAG_NODATACOW (1ULL << 1)
#define INODE_FLAG_IMMUTABLE (1ULL << 6)
#define INODE_FLAG_APPEND (1ULL << 7)
/* btrfs_inode_item.flags bits the kernel knows (low word; the high word holds
 * the read-only compat flags, of which only VERITY exists). */
#define INODE_FLAGS_KNOWN (0x80000fffULL | 1ULL << 32)

/* The tree block of the highest level whose first backref names root: where a
 * subvolume's root item must point. count: blocks of that level. */
struct ck_root_top { uint64_t root, bytenr, gen; int level, count; };

struct check_bg {
	uint64_t start, len, flags;
	uint64_t used_item;             /* block group item's used bytes */
	uint64_t used_found;            /* sum of extent items inside */
};

/* Which tree blocks the extent pass has visited: one bit per sector of each
 * metadata/system chunk, up to the size of the devices (no block lies beyond). */
struct check_seen {
	uint64_t start, len, nbits;
	uint8_t *bits;
};

#define CHECK_MAX_BAD_REPORTED 512

struct check_ctx {
	struct fs *fs;
	const struct check_opts *o;
	struct check_stats *st;
	enum check_stage stage;
	uint64_t reported;              /* problems reported so far (errors, warnings, fixes) */
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
	enum check_fix fix;             /* of the next problem (ck_fix) */
	enum check_fix fix_all;         /* of every problem until reset */
	struct fs_key fix_key;
	uint64_t fix_value[3];
	struct ck_root_top *tops;       /* per subvolume, from the extent tree: sorted by root */
	size_t ntops, cap_tops;
	struct data_bg *data_bg;        /* --check-data-csum on a second thread */
	struct fsr_bg *fsr_bg;          /* set: this is stage 4 on a second thread */
	struct check_ref *xrefs;        /* repair: the references of the extent being compared */
	size_t nxrefs, cap_xrefs;
};

/* A range of data that must be covered by checksums, or (nodatasum files)
 * must have none. */
struct check_range {
	uint64_t start, len;
	uint64_t root, ino;
	uint64_t no_csum;
};

int ck_range_cmp(const void *a, const void *b);

enum { CK_ERROR, CK_WARNING, CK_RAW, CK_FIX };   /* CK_FIX: for the repair alone */
void ck_problem(struct check_ctx *c, int warning, uint64_t root, uint64_t ino, uint64_t bytenr,
		uint64_t len, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
#define ck_err(c, root, ino, bytenr, len, ...) ck_problem(c, 0, root, ino, bytenr, len, __VA_ARGS__)
#define ck_warn(c, root, ino, bytenr, len, ...) ck_problem(c, 1, root, ino, bytenr, len, __VA_ARGS__)
/* What the repair can do about the next problem reported (nothing without it). */
#if CFG_CHECK_REPAIR
#define ck_fix(c, kind) ((c)->fix = (kind))
#else
#define ck_fix(c, kind) ((void)sizeof(kind))     /* (its words used, not run) */
#endif
#define ck_err_fix(c, kind, ...) (ck_fix(c, kind), ck_err(c, __VA_ARGS__))
/* An error printed as is: the reference's multi-line reports (inode errors,
 * unresolved refs) have no "ERROR:" prefix. */
#define ck_raw(c, root, ino, ...) ck_problem(c, CK_RAW, root, ino, 0, 0, __VA_ARGS__)
/* Reports an engine error (bad block, failed read) once per block address; reached: the
 * key of the pointer the block was reached through (for the repair: e's key when NULL,
 * which for a damaged leaf may be the key of the item that is wrong). */
void ck_fs_error(struct check_ctx *c, const struct fs_error *e, const struct fs_key *reached);
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
/* A ROOT_ITEM's tree as an fs_root, or -EUCLEAN when the item is unusable. */
int ck_root_from_item(const struct fs_key *key, const uint8_t *data, uint32_t size, struct fs_root *root);
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
/* Inode errors: the reference's bits. */
enum {
	I_NO_INODE_ITEM = 1 << 0, I_NO_ORPHAN_ITEM = 1 << 1, I_DUP_INODE_ITEM = 1 << 2,
	I_DUP_DIR_INDEX = 1 << 3, I_ODD_DIR_ITEM = 1 << 4, I_ODD_FILE_EXTENT = 1 << 5,
	I_BAD_FILE_EXTENT = 1 << 6, I_FILE_EXTENT_OVERLAP = 1 << 7, I_FILE_EXTENT_DISCOUNT = 1 << 8,
	I_DIR_ISIZE_WRONG = 1 << 9, I_NBYTES_WRONG = 1 << 10, I_LINK_COUNT_WRONG = 1 << 13,
	I_FILE_EXTENT_TOO_LARGE = 1 << 15, I_ODD_INODE_FLAGS = 1 << 16, I_INLINE_RAM_BYTES = 1 << 17,
	I_MISMATCH_DIR_HASH = 1 << 18, I_INVALID_IMODE = 1 << 19, I_INVALID_GEN = 1 << 20,
	I_INVALID_NLINK = 1 << 21, I_INVALID_XATTR = 1 << 22, I_DEPRECATED_FREE_INO = 1 << 23,
	I_DUP_FILENAME = 1 << 24,
};
/* 64-bit hash of a name: the dir item hash, then a second crc (link records). */
uint64_t ck_name_hash64(const char *name, size_t len);

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
/* An inode number the kernel accepts in a subvolume tree's keys. */
static inline int ck_valid_ino(uint64_t ino)
{
	return ino >= BTRFS_FIRST_FREE_OBJECTID && ino <= BTRFS_LAST_FREE_OBJECTID;
}
/* Why the kernel's tree checker refuses an inode item's fields, NULL when it does not. */
const char *ck_inode_item_refusal(const struct btrfs_inode_item *ii, uint64_t super_gen);
/* A dir entry's location the kernel's tree checker accepts. */
int ck_dir_location_ok(const struct fs_key *location);
/* Whether a subvolume's tree holds items of key type (its log trees aside). */
int ck_subvol_key_type(uint8_t type);
static inline int ck_is_fstree(uint64_t id)
{
	return id == BTRFS_FS_TREE_OBJECTID ||
	       (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

/* Whether a root item keyed id can name a tree: the global trees (extent 2 ... remap
 * 13), subvolumes, the data relocation tree and relocation trees (no other id has had
 * a tree). */
#define CK_LAST_GLOBAL_TREE 13
/* The root item flags the kernel knows (a read-only subvolume, one being deleted). */
#define CK_ROOT_FLAGS (BTRFS_ROOT_SUBVOL_RDONLY | BTRFS_ROOT_SUBVOL_DEAD)
static inline int ck_is_tree_id(uint64_t id)
{
	return (id && id <= CK_LAST_GLOBAL_TREE) || ck_is_fstree(id) || id == BTRFS_DATA_RELOC_TREE_OBJECTID ||
	       id == BTRFS_TREE_RELOC_OBJECTID;
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
#if CFG_CHECK_THREADS
/* Stage 4 on a second thread met a bad tree block: the first thread does it anew. */
void ck_fsr_redo(struct check_ctx *c);
/* Starts the data verification of stage 5 on a second thread (when it applies). */
void ck_data_bg_start(struct check_ctx *c);
void ck_data_bg_free(struct check_ctx *c);
#else
#define ck_data_bg_start(c) ((void)0)
#define ck_data_bg_free(c) ((void)0)
#define ck_fsr_redo(c) ((void)0)
#endif
int ck_qgroup_init(struct check_ctx *c);
void ck_qgroup_add(struct check_ctx *c, uint64_t bytenr, uint64_t root, uint64_t size);
int check_qgroups(struct check_ctx *c);
void ck_qgroup_free(struct check_ctx *c);

#endif
