/* Read-only consistency check of a whole filesystem (btrfs check).
 *
 * The checker never prints: every problem goes to a callback with its context,
 * and the applet decides the wording. Memory stays bounded whatever the size of
 * the filesystem: facts that must be matched across trees (extent references,
 * directory links, checksum coverage) are written as fixed-size records into
 * external sorters (xsort.h) that spill sorted runs to a temporary
 * directory, then merged in key order. */
#ifndef FS_CHECK_H
#define FS_CHECK_H
#include <stdint.h>
#include "fs/core/fs.h"

/* The stages, numbered as btrfs check prints them ("[N/7] ..."). */
enum check_stage {
	CHECK_STAGE_ROOT_ITEMS = 1,
	CHECK_STAGE_EXTENTS,
	CHECK_STAGE_FREE_SPACE,
	CHECK_STAGE_FS_ROOTS,
	CHECK_STAGE_CSUMS,
	CHECK_STAGE_ROOT_REFS,
	CHECK_STAGE_QGROUPS,
	CHECK_NUM_STAGES = CHECK_STAGE_QGROUPS
};

/* What a repair can do about a problem (check_problem.fix, set only when the
 * repair is built in); the other fields of the problem say where. */
enum check_fix {
	CHECK_FIX_NONE,         /* nothing it knows */
	CHECK_FIX_UNREADABLE,   /* a tree block (bytenr) of root, reached through key, could not
				 * be read: walks are incomplete (a subvolume's leaf is dropped);
				 * another tree's block where a write was lost: value[] as RECOW;
				 * a block that did not verify: value[0] the generation wanted
				 * (0: not known), value[1] 0 */
	CHECK_FIX_RECOW,        /* the blocks from root's root to key are copied anew (generations);
				 * value[0] the generation wanted, value[1] the one found */
	CHECK_FIX_EXTENT,       /* extent bytenr: its item and backrefs, from check_opts.extent */
	CHECK_FIX_SPACE_USED,   /* block group used and super bytes_used: counted again */
	CHECK_FIX_DEVICES,      /* device bytes_used and sizes, super total bytes and devices */
	CHECK_FIX_ROOT_ITEM,    /* root item key: the tree's root is block bytenr, with
				 * generation value[0] and level value[1] */
	CHECK_FIX_DEV_EXTENT,   /* device extent key: its length is value[0] */
	CHECK_FIX_CSUMS,        /* no checksums for data [bytenr, +len) (value[0] 1: but for
				 * what data extents hold) */
	CHECK_FIX_INODE,        /* inode key.objectid of root: value[0] its errors (I_* of
				 * fs/check/internal.h), value[1] the dir items naming it,
				 * value[2] the tree's top directory */
	CHECK_FIX_DELETE,       /* the item key of root goes (a damaged name part the others rebuild) */
	CHECK_FIX_REPACK,       /* the leaf bytenr of root whose first key is key: items packed */
	CHECK_FIX_QGROUP,       /* the qgroup info item key: referenced value[0], exclusive value[1] */
	CHECK_FIX_DEV_TREE,     /* the device extents do not match the chunks: made anew */
	CHECK_FIX_CACHE_MODE,   /* the free space cache inode item key of the root tree: its
				 * mode is value[0] */
	CHECK_FIX_CHUNK_TREE,   /* the chunk tree holds items it should not (the chunk map is
				 * right): made anew from the chunks and the devices' superblocks */
	CHECK_FIX_CHUNKS,       /* chunks missing or wrong where block groups and device extents
				 * say what they are: the chunk map recovered from a scan of the
				 * devices, the chunk tree made anew (fs/repair/chunks.c) */
	CHECK_FIX_FILE_EXTENT,  /* the file extent item key of root is malformed: mended from
				 * its extent's item and back references, else deleted */
	CHECK_FIX_SUBVOL,       /* subvolume root: value[2] 0: its name in tree key.objectid,
				 * directory key.offset, index value[1] gets what value[0] (REF_*)
				 * says is missing; 1: an orphan item; 2: its refs are value[1] */
	CHECK_FIX_NAME,         /* a name of inode ino in directory key.objectid: value[0] its
				 * hash (ck_name_hash64), value[1] errors (REF_*) | 1 << 16 ref,
				 * 2 << 16 dir item, 4 << 16 dir index, 8 << 16 inode item found
				 * | inode's type << 32 | the entries' type << 40 | length << 48,
				 * key.offset the ref's index, value[2] the dir index's */
	CHECK_FIX_BAD_COPY,     /* copy value[0] of tree block bytenr is bad, another is good
				 * (of generation value[1], 0: not known): written from it */
	CHECK_FIX_ROOT_LOST,    /* the root item of subvolume key.objectid is lost (its names
				 * are there): made again from its tree, when the extent tree's
				 * back references still name its blocks */
	CHECK_FIX_ROOT_FIELDS,  /* the root item at key has flags, generations or a drop level
				 * the kernel refuses: unknown flags cleared, the rest brought
				 * within its generation */
	CHECK_FIX_ROOT_KEY,     /* the root item at key names no tree (or its key type is
				 * another's): moved to the key of the tree its root block
				 * belongs to when that one has none, else deleted */
	CHECK_FIX_XATTR_LOCATION, /* the xattr item key of root has entries with a location
				 * (the kernel wants none): zeroed */
	CHECK_FIX_REMAKE,       /* the tree value[0] is made anew from the rest (data whose
				 * checksums are lost: the checksum tree) */
	CHECK_FIX_KEY_RANGE,    /* the leaf bytenr of root whose first key is key holds keys
				 * not below (value[0] value[1] value[2]), where the next leaf
				 * starts: they go */
};

/* What a problem is about. Fields that do not apply are 0. */
struct check_problem {
	enum check_stage stage;
	int warning;            /* worth saying, but not an error */
	enum check_fix fix;
	struct fs_key key;      /* item involved (for fix) */
	uint64_t value[3];      /* what it should say (for fix) */
	int raw;                /* an error line in the reference's own layout (no prefix) */
	int quiet;              /* for the repair alone (an error said in another line) */
	uint64_t root;          /* tree objectid */
	uint64_t ino;           /* inode (fs roots) */
	uint64_t bytenr;        /* logical address (extent, block, csum range) */
	uint64_t len;
	char msg[400];          /* one line, no "ERROR: " prefix */
};

/* An extent whose extent item or backrefs are wrong, with the references the trees
 * make to it (repair). refs: type (BTRFS_*_REF_KEY), a (root or parent), b, c
 * (objectid, offset of data refs), count. */
struct check_ref { uint64_t a, b, c, count; uint8_t type; };
struct check_extent {
	uint64_t bytenr, size;
	uint64_t generation;    /* tree blocks: the block's; data: the item's (0 none) */
	uint64_t flags;         /* tree blocks walked: as their children were found; else the item's (0: none) */
	int found, meta, level;
	uint32_t nrefs;         /* 0: nothing references it */
	const struct check_ref *refs;
};

/* A qgroup as counted and as its info item says (--qgroup-report). */
struct check_qgroup {
	uint64_t id;                    /* level << 48 | subvolume */
	uint64_t rfer, excl;            /* counted */
	uint64_t disk_rfer, disk_rfer_cmpr, disk_excl, disk_excl_cmpr;
	int rescan, inconsistent;       /* the quota status says so */
};
struct check_opts {
	int check_data_csum;    /* read all data and verify it against the csum tree */
	uint64_t generation;    /* of the filesystem as checked (0: the superblock's) */
	const char *tmpdir;     /* where sorted runs spill (NULL: /tmp) */
	size_t sort_mem;        /* memory shared by the external sorters (0: 80 MiB) */
	int threads;            /* 1: one thread; else a second one where it helps */
	/* stage n begins; free_space_tree says which variant stage 3 checks */
	void (*stage)(void *ctx, enum check_stage stage, int free_space_tree);
	void (*problem)(void *ctx, const struct check_problem *p);
	/* called now and then during long stages (items or blocks done so far) */
	void (*progress)(void *ctx, enum check_stage stage, uint64_t done);
	/* repair: each extent reported with a CHECK_FIX_EXTENT problem, after it (every
	 * extent with all_extents) */
	void (*extent)(void *ctx, const struct check_extent *x);
	int all_extents;
	/* --qgroup-report: each qgroup's numbers after stage 7, in id order, also where they
	 * are not verified (a rescan running, or marked inconsistent) */
	void (*qgroup)(void *ctx, const struct check_qgroup *g);
	void *ctx;
};

/* The totals the reference prints at the end. */
struct check_stats {
	uint64_t bytes_used;            /* sum of all extents' sizes */
	uint64_t total_csum_bytes;      /* bytes of checksum items */
	uint64_t total_tree_bytes;
	uint64_t total_fs_tree_bytes;
	uint64_t total_extent_tree_bytes;
	uint64_t btree_space_waste;
	uint64_t data_bytes_allocated;
	uint64_t data_bytes_referenced;
	uint64_t errors;                /* problems reported that are not warnings */
	uint64_t stage_errors[CHECK_NUM_STAGES + 1];
	int quota_enabled;
};

/* Runs every stage. Returns 0 when the check ran to its end (look at
 * stats->errors), or a negative errno when it could not (fs->err says why). */
int check_fs(struct fs *fs, const struct check_opts *opts, struct check_stats *stats);

#endif
