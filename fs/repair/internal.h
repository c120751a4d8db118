/* Shared by the files of the repair (fs/repair*.c). */
#ifndef FS_REPAIR_INT_H
#define FS_REPAIR_INT_H
#include "repair.h"
#include "fs/check/internal.h"
#include "fs/write/write.h"

/* A change at one place: a block copied anew, a root item, a device extent, checksums,
 * an inode, a name (the fields of the problem it comes from). */
struct rp_fix { enum check_fix kind; uint64_t root, ino, bytenr, len, value[3]; struct fs_key key; };
/* The keys [from, to) of a subvolume leaf dropped (fix_unreadable): back references into
 * them are file extents it held (relink_data_extent). */
struct rp_hole { uint64_t root; struct fs_key from, to; };
struct rp_ext { struct check_extent x; size_t first_ref; int relinked; };

struct rp {
	struct fs *fs;
	const struct repair_opts *o;
	int first;                      /* the first check runs: its output goes to o->check */
	/* the plan of a round */
	struct rp_fix *fixes;
	size_t nfixes, cap_fixes;
	struct rp_ext *ext;
	size_t next, cap_ext;
	struct check_ref *refs;
	size_t nrefs, cap_refs;
	int unreadable, roots, names, imode, space_used, devices, fst;
	int rebuild;                    /* derived trees to make anew (REBUILD_*) */
	int file_extents;               /* file extent items are mended: extent refs wait */
	int recow;                      /* blocks are copied anew: the walk did not see them,
					 * extent refs wait for a check that does */
	int chunks;                     /* chunks are missing or wrong: repair_open_chunks */
	int root_bad;                   /* a root tree block cannot be read */
	int root_recow;                 /* one reads only once copied anew (its generation) */
	int layout;                     /* a root tree leaf is laid out anew, a leaf
					 * loses keys past its bound, or an item gets its
					 * key type back: what their items say is for the
					 * next round's check */
	int root_lost;                  /* a root tree leaf cannot be read nor salvaged */
	int lost_write;                 /* a block holds an older one than its parent wants */
	uint64_t flags_mended_root, flags_mended_ino;   /* the inode whose flags a compressed
					 * extent with checksums put right (its other extents
					 * need nothing) */
	int newest_lost;                /* no copy of a block the last transaction wrote
					 * verifies (a write that was lost where nothing was
					 * before reads as zeros: the state before may be whole) */
	struct rp_hole *holes;          /* the leaves of subvolumes dropped */
	size_t nholes, cap_holes;
	int all_collected;              /* the last check gave every extent (check_opts.all_extents) */
	int init_extent, init_csum;     /* --init-extent-tree, --init-csum-tree still to do */
	uint64_t fixable;
	/* the first check's errors (hashes, sorted), and the last check's not among them */
	uint64_t *sigs;
	size_t nsigs, cap_sigs;
	uint64_t new_errors;
	/* what the last check found, and the changes made, said at the end */
	struct check_problem *left;
	size_t nleft, cap_left;
	char *said;
	size_t nsaid, cap_said;
	uint64_t changes;
	int nomem;
};

/* Derived trees whose damage is mended by making them anew from the other trees (the
 * extent tree with the block group items, the free space tree: rp.init_extent, rp.fst). */
enum { REBUILD_CSUM = 1, REBUILD_UUID = 2, REBUILD_DATA_RELOC = 4, REBUILD_DEV = 8, REBUILD_BLOCK_GROUPS = 16,
       REBUILD_CHUNK = 32, REBUILD_QUOTA = 64 };

/* One line for repair_opts.fixed, given once the change is written. */
void say(struct rp *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fs/repair/fsroot.c: an inode of a subvolume as its items say; a name completed or removed. */
int fix_inode(struct rp *rp, const struct rp_fix *f);
int fix_name(struct rp *rp, const struct rp_fix *f);
/* A malformed file extent item mended from its extent, else deleted. */
int fix_file_extent(struct rp *rp, const struct rp_fix *f);
/* A subvolume item of an unknown key type: a file extent again when its data extent
 * names it, else deleted. */
int fix_unknown_item(struct rp *rp, const struct rp_fix *f);
/* A data extent nothing references any more gets back the file extent items its back
 * references name (1 when one was made). */
int relink_data_extent(struct rp *rp, const struct check_extent *x);
int move_misplaced_extent(struct rp *rp, const struct check_extent *x);
/* The names in the directories of every subvolume tree (their dir index items) but
 * lost+found's below its top directory, unreadable blocks skipped: how much of the
 * filesystem is where it belongs. */
uint64_t count_names(struct fs *fs);
/* A subvolume's link completed, its orphan item, its refs. */
int fix_subvol(struct rp *rp, const struct rp_fix *f);
/* A subvolume whose root item is lost: its root block, the highest (then newest) block
 * the extent tree's back references give it (-ENOENT: none), and its root item made
 * again from the fix (bytenr, value[0] generation, value[1] level). */
int find_lost_root(struct fs *fs, uint64_t id, uint64_t *bytenr, uint64_t *gen, uint64_t *level);
int fix_lost_root(struct rp *rp, const struct rp_fix *f);
/* The leaf holding key laid out again, its items packed. */
int fix_leaf(struct rp *rp, const struct rp_fix *f);
int fix_key_range(struct rp *rp, const struct rp_fix *f);
/* A leaf that cannot be read: mended when only its item offsets are wrong, else dropped. */
int fix_unreadable(struct rp *rp, const struct rp_fix *f);
/* A copy of the leaf bytenr (nodesize bytes) to salvage items from: the one the repair
 * made in an earlier round (not on the disk yet); one whose checksum is good (the
 * damage is in what it says), else, unless good_only, one that is at least this leaf
 * (its address, level and filesystem: the damage is of the disk). 0, or -EUCLEAN: none. */
int leaf_copy(struct fs *fs, uint64_t bytenr, uint8_t *leaf, int good_only);
/* The key type an item of a subvolume had before its type was damaged, when its data
 * and key offset tell one type only (a regular file extent's: by its data extent); 0
 * else. */
uint8_t type_by_data(const struct fs_key *k, const uint8_t *d, uint32_t size);
/* fs/repair/node.c: a node (at level) that cannot be read, made again from its
 * children found through their back references (0 when it cannot be: left as it is). */
int rebuild_node(struct rp *rp, const struct rp_fix *f, int level);

/* fs/repair/rebuild.c: derived trees made anew. salvage: checksums of the old tree that
 * can still be read are kept (else every checksum is computed from the data). */
int rebuild_csum_tree(struct rp *rp, int salvage);
int rebuild_uuid_tree(struct rp *rp);
int rebuild_data_reloc_tree(struct rp *rp);
int rebuild_dev_tree(struct rp *rp);
/* A damaged quota tree: qgroups of the subvolumes, counts marked inconsistent. */
int rebuild_quota_tree(struct rp *rp);
/* The block group tree, empty (init_extent_tree puts the items in). */
int rebuild_block_group_tree(struct rp *rp);

/* fs/repair/chunks.c: the chunk tree made anew from the chunk map (read from it, or
 * recovered by repair_open_chunks) and the devices' superblocks. */
int rebuild_chunk_tree(struct rp *rp);

#endif
