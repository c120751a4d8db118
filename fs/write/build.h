/* Write side: bulk-loading a btrfs tree bottom-up from sorted items.
 * Leaves are filled greedily in key order, then each node level over the one below,
 * until one block (the root) remains. Used by mkfs and by rebuilds of whole trees. */
#ifndef FS_BUILD_H
#define FS_BUILD_H
#include <stddef.h>
#include <stdint.h>
#include "fs/core/fs.h"           /* struct fs_key, fs_key_cmp */

#define BUILD_MAX_LEVEL 8

struct bitem {
	struct fs_key key;
	uint32_t size;
	size_t data;        /* offset into item_list.arena */
};


/* A growable set of items; data lives in one arena. */
struct item_list {
	struct bitem *v;
	size_t n, cap;
	uint8_t *arena;
	size_t used, arena_cap;
};

/* Adds an item (data copied; data may be NULL for size 0). Returns a pointer to the
 * item's data in the arena (valid until the next add) or NULL when out of memory. */
void *items_add(struct item_list *l, uint64_t objectid, uint8_t type, uint64_t offset,
		const void *data, uint32_t size);
/* Appends bytes to the data of the last item added (merging items with one key). */
void *items_extend_last(struct item_list *l, const void *data, uint32_t size);
void items_sort(struct item_list *l);
/* After sorting: items with equal keys become one item holding their data one after
 * the other (how btrfs stores hash collisions of names and several inode refs).
 * Returns 0 or -1 when out of memory. */
int items_merge_equal(struct item_list *l);
void items_free(struct item_list *l);
static inline uint8_t *item_data(const struct item_list *l, const struct bitem *it)
{ return l->arena + it->data; }


/* Items in key order from anywhere (a sorted item_list, a stream from disk). next
 * gives the next item: 1 (key, data and size valid until the following call), 0 at
 * the end, or a negative errno. */
struct item_source {
	int (*next)(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size);
	void *ctx;
};
/* A source over a sorted list; pos is the cursor. */
struct list_source {
	const struct item_list *l;
	size_t pos;
};
struct item_source list_source(struct list_source *ls, const struct item_list *l);

/* How many blocks a tree of these items needs and its root level. Returns -1 when an
 * item does not fit in a leaf. */
struct tree_shape {
	uint32_t nblocks;
	uint8_t level;
	uint32_t width[BUILD_MAX_LEVEL];    /* blocks on each level, 0 = leaves */
};
/* Level of the b-th block in tree_write's order. */
uint8_t tree_block_level(const struct tree_shape *s, uint32_t b);
int tree_shape(const struct item_list *l, uint32_t nodesize, struct tree_shape *out);
/* The same from a source: -1 when an item does not fit, else 0 or a negative errno
 * from the source (-EFBIG: more levels than BUILD_MAX_LEVEL). */
int tree_shape_source(const struct item_source *src, uint32_t nodesize, struct tree_shape *out);

/* Writes the tree into blocks at addrs[0..nblocks) (leaves first in key order, then
 * each node level; the root is addrs[nblocks-1]). The block is checksummed and passed
 * to write_block. Returns 0 or the negative errno from write_block. */
struct tree_params {
	uint32_t nodesize;
	int csum_type;
	uint64_t owner;
	uint64_t generation;
	const uint8_t *fsid;
	const uint8_t *chunk_tree_uuid;
	int (*write_block)(void *ctx, uint64_t bytenr, const void *buf, uint32_t len);
	void *ctx;
};
int tree_write(const struct item_list *l, const struct tree_params *p, const uint64_t *addrs,
	       uint32_t nblocks);
int tree_write_source(const struct item_source *src, const struct tree_params *p,
		      const uint64_t *addrs, uint32_t nblocks);

/* Fills the header fields and checksum of a finished tree block. */
void tree_block_finish(uint8_t *block, const struct tree_params *p, uint64_t bytenr,
		       uint32_t nritems, uint8_t level);

#endif
