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
#include "fs.h"

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

/* What a problem is about. Fields that do not apply are 0. */
struct check_problem {
	enum check_stage stage;
	int warning;            /* worth saying, but not an error */
	int raw;                /* an error line in the reference's own layout (no prefix) */
	uint64_t root;          /* tree objectid */
	uint64_t ino;           /* inode (fs roots) */
	uint64_t bytenr;        /* logical address (extent, block, csum range) */
	uint64_t len;
	char msg[400];          /* one line, no "ERROR: " prefix */
};

struct check_opts {
	int check_data_csum;    /* read all data and verify it against the csum tree */
	const char *tmpdir;     /* where sorted runs spill (NULL: /tmp) */
	size_t sort_mem;        /* memory shared by the external sorters (0: 80 MiB) */
	/* stage n begins; free_space_tree says which variant stage 3 checks */
	void (*stage)(void *ctx, enum check_stage stage, int free_space_tree);
	void (*problem)(void *ctx, const struct check_problem *p);
	/* called now and then during long stages (items or blocks done so far) */
	void (*progress)(void *ctx, enum check_stage stage, uint64_t done);
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
