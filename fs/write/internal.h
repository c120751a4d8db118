/* Shared between the files of fs/write (not a public interface). */
#ifndef FS_WRITE_INTERNAL_H
#define FS_WRITE_INTERNAL_H
#include "build.h"
#include "write.h"

#define HDR_SIZE sizeof(struct btrfs_header)
#define ITEM_SIZE sizeof(struct btrfs_item)
#define PTR_SIZE sizeof(struct btrfs_key_ptr)

/* Sorted, disjoint, merged [start, end) ranges. */
struct range { uint64_t start, end; };
struct ranges { struct range *v; size_t n, cap; };
int ranges_add(struct ranges *r, uint64_t start, uint64_t end);
/* The first range that overlaps [start, end), NULL when none. */
const struct range *ranges_overlap(const struct ranges *r, uint64_t start, uint64_t end);

/* A tree block allocated by the running transaction: its buffer, held until the
 * commit writes it; its extent item is queued until applied. */
struct walloc {
	uint64_t bytenr, owner;
	int level, applied;
	struct fs_block *b;
};
/* A committed tree block given up by the running transaction; of a leaf, the owner its
 * header names and whether a file extent in it references data (0, 0 when unknown). */
/* lost: a block that could not be read (repair): a tree may let go of it though others
 * share it, the references it held are mended by the repair's next round. */
struct wfree { uint64_t bytenr, owner, leaf_owner; int level, data, lost; };
/* Space taken (+1) or given back (-1): block group used, free space tree, bytes_used. */
struct wspace { uint64_t start, len; int sign; };
/* A tree the transaction changed; moved: the root block changed since its root item
 * (or the superblock) was last written. */
struct wroot { uint64_t objectid, offset, bytenr, gen; int level, moved; };

struct fs_undo;

struct fs_wstate {
	struct fs_undo *undo;
	uint64_t transid;                       /* running transaction; 0: none */
	struct btrfs_super_block sb_before;     /* fs->sb at fs_tx_begin, for an abort */
	uint64_t root_before[6];                /* fs->root_*, chunk_root_* at fs_tx_begin */
	struct walloc *allocs;                  /* sorted by bytenr */
	size_t nallocs, cap_allocs;
	struct wfree *frees;
	size_t nfrees, cap_frees;
	struct wspace *space;
	size_t nspace, cap_space;
	struct wroot *roots;
	size_t nroots, cap_roots;
	/* allocator: free = free in the extent tree as opened, outside the superblock
	 * stripes and outside what this handle allocated */
	struct fs_root orig_extent;
	struct ranges taken, sb_stripes;
	uint64_t cursor[2];                     /* metadata, system */
	uint8_t chunk_uuid[BTRFS_UUID_SIZE];
	uint8_t *scratch;                       /* 4 nodesize: leaf and node rebuilds */
	int broken;                             /* a commit failed half-way: no more writes */
	struct fs_error walk_err;               /* first unreadable block of fs_tree_delete */
	int fst_rebuild;                        /* the free space tree is made anew at commit */
	int any_gen;                            /* fs_tree_recow: blocks of any generation */
	int stop_level;                         /* cow_search stops at this level */
	int trust_reserved;                     /* free: what fs_space_reserve left (not the extent tree) */
	int64_t qgroup_blocks;                  /* subvolume tree blocks made less freed... */
	uint64_t qgroup_owners;                 /* ...and the sum of their owners (signed) */
	uint64_t *new_chunks;                   /* logical starts of the chunks this transaction made... */
	size_t nnew_chunks, cap_new_chunks;
	size_t nflushed_chunks;                 /* ...the first ones of them with their items */
	struct btrfs_dev_item *dev_items_before; /* each device's own item at fs_tx_begin */
};

/* wio.c: saves the old bytes of every copy of [logical, +len) to the undo file. */
int wio_save_logical(struct fs *fs, uint64_t logical, size_t len);
/* undo.c */
int undo_save(struct fs *fs, struct fs_device *dev, uint64_t physical, uint64_t len);
/* Records the superblock state the devices are about to have (crc of each primary
 * copy as it will be written), then syncs the undo file. */
int undo_state(struct fs *fs, const uint32_t *crcs);
int undo_sync(struct fs *fs);
int undo_close(struct fs *fs);
uint32_t undo_super_crc(const struct btrfs_super_block *sb);

/* cow.c */
struct wroot *wroot_get(struct fs *fs, uint64_t tree);
/* The data of an item of tree as the transaction left it, p positioned on it (release
 * it after); NULL with fs->err set (-ENOENT when absent). */
const uint8_t *tree_item(struct fs *fs, uint64_t tree, const struct fs_key *key, struct fs_path *p,
			 uint32_t *size);
/* The tree as the transaction left it (its root item may lag behind). */
int wroot_lookup(struct fs *fs, uint64_t tree, struct fs_root *r);
int wroot_update_items(struct fs *fs, int *did);
/* Copies the path from the root to key for a change: 0 key found, 1 not (the slot
 * where it would go), <0 error. Release p after. */
int cow_search(struct fs *fs, struct wroot *wr, const struct fs_key *key, struct fs_path *p);
size_t cow_scratch_size(uint32_t nodesize);
int is_ours(const struct fs *fs, uint64_t bytenr);
/* The item of tree (as the transaction left it) with the greatest key <= *key (ge 0),
 * or the smallest >= *key (ge 1): 0 and *key set to it, 1 none, <0 error. */
int tree_near(struct fs *fs, uint64_t tree, struct fs_key *key, int ge);
struct fs_block *cow_block(struct fs *fs, struct wroot *wr, struct fs_block *b);

/* extent.c */
/* A new block of tree owner at level: header filled, zero items, a reference for the
 * caller (the transaction holds another until the commit). */
struct fs_block *alloc_tree_block(struct fs *fs, uint64_t owner, int level);
/* A tree block of the tree no longer used: cancelled when the transaction made it,
 * else queued for the extent tree. */
int free_tree_block(struct fs *fs, uint64_t owner, struct fs_block *b);
/* The extent of a committed tree block queued for the extent tree. */
int free_tree_extent(struct fs *fs, const struct wfree *f);
int walloc_init(struct fs *fs);
/* The logical ranges of chunk c holding a superblock copy: never allocated. */
int sb_stripes_add(struct fs *fs, const struct fs_chunk *c);
int run_refs(struct fs *fs, int *did);
int run_space(struct fs *fs, int *did);
struct walloc *walloc_find(const struct fs *fs, uint64_t bytenr);
int wspace_add(struct fs *fs, uint64_t start, uint64_t len, int sign);

/* refs.c */
/* The file extents of the leaf blk that reference data: how many (0 for a node). */
int leaf_data_refs(struct fs *fs, const uint8_t *blk);
/* A copy of the leaf blk made for tree, which blk's owner shares with it (a snapshot):
 * the data its file extents reference gets a reference from tree. */
int copy_data_refs(struct fs *fs, const uint8_t *blk, uint64_t tree);
/* tree copies its committed block bytenr, whose children are those of the image blk:
 * when other trees share it (or shared it), the references of its children are made
 * right for it and the copy, and tree's reference to it goes at once: 1; 0: the block
 * is tree's alone (free it the usual way); <0 error. */
int share_cow(struct fs *fs, uint64_t tree, uint64_t bytenr, const uint8_t *blk);

/* fst.c: the free space tree for [start, start + len) of one block group. */
int fst_change(struct fs *fs, uint64_t start, uint64_t len, int make_free);
int fst_populate(struct fs *fs);
/* The free space info of a new, empty block group, and its free extents. */
int fst_add_group(struct fs *fs, const struct fs_chunk *c);

/* chunk.c: a new chunk of the kind (BTRFS_BLOCK_GROUP_METADATA), the newest such
 * chunk's profile, in the chunk map: 0, -ENOSPC (no room on the devices, or a profile
 * not made here) or another negative errno. */
int wchunk_new(struct fs *fs, uint64_t kind);
/* The items of the new chunks that have none yet (*did set when any). */
int wchunk_flush(struct fs *fs, int *did);
/* The transaction ends: its new chunks stay in the map (keep) or leave it. */
void wchunk_end(struct fs *fs, int keep);

#endif
