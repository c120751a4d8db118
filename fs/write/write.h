/* The write side of the engine: changing an existing filesystem, crash-safe.
 *
 * Same conventions as the read core (fs/core/fs.h): never prints, never exits, errors
 * are negative errnos with the details in fs->err.
 *
 * How a change is made:
 *   fs = fs_wopen(paths, n, &opts, &err);     exclusive: refuses mounted devices
 *   fs_tx_begin(fs);
 *   fs_item_insert / fs_item_delete / fs_item_mut / ... (any number, any trees)
 *   fs_tx_commit(fs);                          or fs_tx_abort(fs)
 *   fs_wclose(fs);
 * Superblock-only changes (label, zero-log) edit fs->sb and call fs_super_commit.
 *
 * Copy-on-write: a change never touches a block the last committed superblock
 * references. The blocks it writes are new ones, taken from free metadata space
 * that was free when the filesystem was opened (blocks freed by a transaction are
 * not reused until the handle is closed), kept in memory (pinned in the block
 * cache, so the read side - fs_search, fs_tree_walk... - sees them) until the
 * commit writes them: every copy of every block, a flush, then every superblock
 * copy on every device, a flush. A power cut leaves the old or the new state.
 * Nothing reaches the disk before fs_tx_commit: an error on the way (damage found,
 * no space, a shared block) aborts with the filesystem untouched. A filesystem with a
 * log tree (not cleanly unmounted) is refused (-EAGAIN): a commit would orphan the log.
 *
 * Kept consistent at commit: the extent tree (skinny or not, a TREE_BLOCK_REF per
 * tree block), block group `used`, the free space tree, the superblock's bytes_used,
 * root items (bytenr, level, generation), backup roots, the qgroup status (its
 * generation; counts marked for a rescan when subvolume trees grow or shrink); the
 * v1 space cache is left to the kernel, which drops it since its generation no
 * longer matches. Data is not written (no data allocation yet). A leaf
 * shared by snapshots is copied for the tree that changes it (its data extents get that
 * tree's references); its owner may give it up last, or when it references no data.
 * Not supported (-ENOTSUP, nothing written): other changes of blocks shared by
 * snapshots, RAID5/6 metadata, allocating new chunks (-ENOSPC when metadata is full).
 *
 * The undo file (fs_undo_start) gets the old contents of every byte range
 * before it is first overwritten, and the state of the superblocks after each
 * commit; fs_undo_restore puts them back. */
#ifndef FS_WRITE_H
#define FS_WRITE_H
#include "fs/core/devscan.h"        /* fs_path_mounted */
#include "fs/core/fs.h"

/* ---- exclusive open (write/wopen.c) ------------------------------------- */

struct fs_wopen_opts {
	struct fs_open_opts open;       /* scan is on (writable stays 0) */
	int stale_dev_items;            /* device items of devices no chunk uses may stay
					 * absent (a restored dump made one device) */
};
void fs_wopen_opts_init(struct fs_wopen_opts *o);
/* Opens for writing: every device must be present, unmounted (-EBUSY) and not opened
 * by another writer. */
struct fs *fs_wopen(const char *const *paths, int n, const struct fs_wopen_opts *o,
		    struct fs_error *err);
/* Aborts a transaction left open, closes the undo file and the filesystem. Returns 0
 * or the error of closing the undo file. */
int fs_wclose(struct fs *fs);

/* In a transaction: device d is bytes long (its dev item and its superblock's
 * dev_item), the filesystem's total_bytes changes by as much. A device (image file)
 * grown beforehand gets the superblock copies that now fit. An abort does not undo
 * the dev_item of d->sb: close the handle then. */
int fs_device_resize(struct fs *fs, struct fs_device *d, uint64_t bytes);

/* ---- superblocks and device I/O (write/wio.c) --------------------------- */

/* Writes fs->sb (with each device's own dev_item) to every superblock copy of every
 * device that lies inside the device, flushed, generation unchanged. */
int fs_super_commit(struct fs *fs);
/* Takes each device's newest valid superblock copy as its own and the newest of all
 * as the filesystem's (superblock recovery). */
int fs_super_adopt_newest(struct fs *fs);
/* Writes len bytes at logical address to every copy (single, DUP, RAID0/1/10,
 * RAID1C3/4; -ENOTSUP for RAID5/6), saving the old bytes to the undo file first. */
int fs_write_logical(struct fs *fs, uint64_t logical, const void *buf, size_t len);
/* The same at a physical offset of one device. */
int fs_write_phys(struct fs *fs, struct fs_device *dev, uint64_t physical, const void *buf,
		  size_t len);
/* Flushes every device (fsync). */
int fs_flush(struct fs *fs);

/* ---- undo files (write/undo.c) ------------------------------------------ */

/* Starts saving what is overwritten to a new file at path (never an existing one); when it
 * fails nothing is started (another path may be tried). */
int fs_undo_start(struct fs *fs, const char *path);
/* Puts back what the undo file saved on the devices at paths (all devices of the
 * filesystem), after checking that they are the ones it was written for and that
 * their superblocks are still in a state the undo file recorded (nothing changed
 * them since). *restored gets the number of byte ranges written back. */
int fs_undo_restore(const char *file, const char *const *paths, int n, uint64_t *restored,
		    struct fs_error *err);

/* ---- transactions (write/tx.c) ------------------------------------------ */

int fs_tx_begin(struct fs *fs);
/* Brings the extent tree, free space tree, block group items, root items and
 * superblock up to date, writes (see above). Ends the transaction either way;
 * on error nothing of the superblocks was written when fs->err says so. */
int fs_tx_commit(struct fs *fs);
void fs_tx_abort(struct fs *fs);
/* A transaction around change(fs, ctx): committed when it returns 0, else aborted.
 * Returns 0 or the error. */
int fs_tx_run(struct fs *fs, int (*change)(struct fs *fs, void *ctx), void *ctx);
/* Brings the bookkeeping up to date as the commit would, without writing: the read
 * side (a check) then sees a consistent filesystem of generation fs_tx_generation.
 * On error the caller aborts. */
int fs_tx_settle(struct fs *fs);
/* The running transaction's generation, 0 when none runs. */
uint64_t fs_tx_generation(const struct fs *fs);

/* ---- items (write/cow.c) ------------------------------------------------ */
/* tree: the tree's objectid (ROOT_TREE, CHUNK_TREE, or one with a ROOT_ITEM). */

/* -EEXIST when the key is there. data may be NULL (zero-filled item). */
int fs_item_insert(struct fs *fs, uint64_t tree, const struct fs_key *key, const void *data,
		   uint32_t size);
/* -ENOENT when the key is not there. */
int fs_item_delete(struct fs *fs, uint64_t tree, const struct fs_key *key);
/* Grows (zero-filled at the end) or shrinks (cut at the end) the item's data. */
int fs_item_resize(struct fs *fs, uint64_t tree, const struct fs_key *key, uint32_t size);
/* Inserts the item or replaces the data of the one there. */
int fs_item_replace(struct fs *fs, uint64_t tree, const struct fs_key *key, const void *data,
		    uint32_t size);
/* The data of the item, writable (its leaf is copied for the transaction); valid
 * until the next change. NULL with fs->err set (-ENOENT) when absent. */
uint8_t *fs_item_mut(struct fs *fs, uint64_t tree, const struct fs_key *key, uint32_t *size);
/* Deletes every item with from <= key <= to; *count (may be NULL) gets how many. */
int fs_items_delete_range(struct fs *fs, uint64_t tree, const struct fs_key *from,
			  const struct fs_key *to, uint64_t *count);

/* Copies the path from the tree's root to the leaf holding key, accepting blocks
 * whose generation does not match their parent pointer or root item (transid
 * damage): the copies carry the transaction's generation. */
int fs_tree_recow(struct fs *fs, uint64_t tree, const struct fs_key *key);
/* Takes the leaf bytenr on the way to key out of the tree without reading it (its
 * copies are all bad: what it held is lost), -ENOENT when it is not a leaf there. */
int fs_tree_drop_leaf(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr);
/* The block at bytenr when the running transaction made it (a reference to put), else
 * NULL: until the commit its image is in memory only, the disk holds what the place
 * held before. */
struct fs_block *fs_tx_new_block(struct fs *fs, uint64_t bytenr);
/* Puts a new copy of the leaf image `leaf` (nodesize bytes, valid items; its header is
 * made anew) in place of the leaf bytenr on the way to key, which is not read (its
 * items are laid out wrongly). Other trees sharing bytenr keep it, as a change of a
 * shared leaf does (above). */
int fs_tree_put_leaf(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr,
		     const uint8_t *leaf);

/* A child pointer of a node made anew (fs_tree_put_node). */
struct fs_child { struct fs_key key; uint64_t bytenr, generation; };
/* Puts a new node of level `level` holding children[0..n) (sorted by key) in place of
 * the node bytenr on the way to key, which is not read (no copy of it is good): its
 * children are found again through their back references (repair). The children's
 * references name the tree, not the node (not for blocks shared by snapshots).
 * -ENOENT when bytenr is not on the way to key at that level, -E2BIG when they do not
 * fit one node. */
int fs_tree_put_node(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr, int level,
		     const struct fs_child *children, uint32_t n);

/* The tree starts again empty, its blocks left as they are (not freed through the
 * extent tree: for making the extent tree itself anew). */
int fs_tree_reset(struct fs *fs, uint64_t tree);

/* The tree starts again empty, the blocks of the old one that can be read freed (the
 * others stay allocated, as fs_tree_drop leaves them): for the chunk tree made anew. */
int fs_tree_renew(struct fs *fs, uint64_t tree);

/* A new empty tree with a root item (-EEXIST when there is one). */
int fs_tree_create(struct fs *fs, uint64_t tree);
/* Frees every block of the tree and deletes its root item (not for the root and
 * chunk trees). */
int fs_tree_delete(struct fs *fs, uint64_t tree);
/* fs_tree_delete for a damaged tree: the blocks that can be read are freed, the others
 * (and what hangs below them) stay allocated in the extent tree, for the extent tree
 * made anew or the next check to find unreferenced. */
int fs_tree_drop(struct fs *fs, uint64_t tree);
/* Replaces the free space tree by one made at commit from the extent tree. */
int fs_fst_rebuild(struct fs *fs);
/* The v1 space cache goes: the cache inode of each block group (root tree items: a
 * FREE_SPACE header naming an inode, the inode with its file extents) and the data
 * extents they use; the superblock's cache_generation says none is valid. */
int fs_space_cache_v1_clear(struct fs *fs);

/* ---- extents (write/extent.c) ------------------------------------------- */

/* The block group items moved into a block group tree of their own (to_own_tree: the
 * tree made, the compat_ro flag set), or back into the extent tree (the tree deleted). */
int fs_block_group_tree_convert(struct fs *fs, int to_own_tree);

/* ---- quotas (write/quota.c) ---------------------------------------------- */

/* Into an empty quota tree: the status (on; simple quotas from this transaction on, or
 * counts inconsistent for a rescan) and a qgroup 0/ID with zero counts for each
 * subvolume (*count of them). */
int fs_quota_fill(struct fs *fs, int simple, int *count);
/* btrfstune --enable-simple-quota: the quota tree made and filled, SIMPLE_QUOTA set. */
int fs_simple_quota_enable(struct fs *fs);
/* --remove-simple-quota: the owner references out of the extent items, the quota tree
 * deleted, SIMPLE_QUOTA cleared. */
int fs_simple_quota_remove(struct fs *fs);

/* Never allocates tree blocks in [start, start + len) while the handle is open (space in
 * use that the extent tree does not record: repair). */
int fs_space_reserve(struct fs *fs, uint64_t start, uint64_t len);
/* From now on the space fs_space_reserve left is free, whatever the extent tree says
 * (it is being made anew: the caller reserves every block in use). */
void fs_space_trust_reserved(struct fs *fs);

/* Drops one reference of root's file ino at file offset (key offset - extent
 * offset) to the data extent [bytenr, +num_bytes); the last one frees the extent and
 * deletes its checksums. */
int fs_data_unref(struct fs *fs, uint64_t bytenr, uint64_t num_bytes, uint64_t root,
		  uint64_t ino, uint64_t offset);
/* Deletes every item of inode ino in tree; the data extents of its file extents
 * lose their references. */
int fs_inode_delete(struct fs *fs, uint64_t tree, uint64_t ino);
/* Deletes the data checksums of [start, start + len) from the csum tree. */
int fs_csum_delete(struct fs *fs, uint64_t start, uint64_t len);

#endif
