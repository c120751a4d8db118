/* Damage-tolerant visit of a key range of one tree (for salvage tools).
 * fs_search/fs_next stop at the first unreadable block; this walk goes around it:
 * each subtree that cannot be read (every copy bad) is reported with the key range
 * it covered, and the visit goes on with the next readable one. At most one block
 * per level is held, whatever the tree size. Engine conventions (fs.h). */
#ifndef FS_RANGE_H
#define FS_RANGE_H
#include "fs.h"

struct fs_range_ops {
	/* Each item with lo <= key <= hi, in key order. Return 0 to go on, anything
	 * else to stop the visit (fs_range_visit returns it). */
	int (*item)(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size);
	/* A subtree that could not be read: it held keys from `from` (inclusive) up
	 * to `to` (exclusive; NULL: the end of the tree); err says why. May be NULL. */
	void (*lost)(void *ctx, const struct fs_key *from, const struct fs_key *to,
		     const struct fs_error *err);
	/* Nonzero: a block that fails only because its generation or owner is not the
	 * one its parent expects (a lost write, a stale copy) is used anyway, and
	 * reported to stale. */
	int lenient;
	void (*stale)(void *ctx, const struct fs_error *err);
};

/* 0 when the range was visited to its end (losses reported through ops->lost),
 * the item callback's nonzero value when it stopped the visit. Never fails on
 * its own: an unreadable root block is one lost range covering everything. */
int fs_range_visit(struct fs *fs, const struct fs_root *root, const struct fs_key *lo,
		   const struct fs_key *hi, const struct fs_range_ops *ops, void *ctx);

#endif
