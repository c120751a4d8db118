//build:Oz
/* Transactions: begin, the fixed-point commit, the write-out, abort. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

int fs_tx_begin(struct fs *fs)
{
	struct fs_wstate *w = fs->w;
	int ret;

	if (!w)
		return fs_err(&fs->err, -EINVAL, "the filesystem is not open for writing");
	if (w->broken)
		return fs_err(&fs->err, -EIO, "an earlier commit failed: no more changes");
	if (w->transid)
		return fs_err(&fs->err, -EBUSY, "a transaction is already running");
	/* a log tree belongs to the transaction after the superblock's: a commit would
	 * orphan it (its blocks no longer match the generation the kernel expects) */
	if (get_le64(&fs->sb.log_root))
		return fs_err(&fs->err, -EAGAIN, "the filesystem has a log tree to replay: mount it once "
			      "(or drop the log with btrfs rescue zero-log) before changing it");
	ret = walloc_init(fs);
	if (ret)
		return ret;
	w->transid = fs->generation + 1;
	w->sb_before = fs->sb;
	w->root_before[0] = fs->root_bytenr;
	w->root_before[1] = (uint64_t)fs->root_level;
	w->root_before[2] = fs->chunk_root_bytenr;
	w->root_before[3] = (uint64_t)fs->chunk_root_level;
	w->root_before[4] = fs->root_gen;
	w->root_before[5] = fs->chunk_root_gen;
	for (int i = 0; i < fs->num_devs; i++)
		w->dev_items_before[i] = fs->devs[i].sb.dev_item;
	return 0;
}

/* Ends the transaction's bookkeeping; the blocks it made are dropped (abort) or kept
 * in the cache as written (commit). */
static void tx_end(struct fs *fs, int keep)
{
	struct fs_wstate *w = fs->w;

	for (size_t i = 0; i < w->nallocs; i++)
		keep ? fs_block_put(fs, w->allocs[i].b) : fs_block_forget(fs, w->allocs[i].b);
	w->nallocs = w->nfrees = w->nspace = w->nroots = 0;
	wchunk_end(fs, keep);
	w->transid = 0;
	w->fst_rebuild = 0;
	w->qgroup_blocks = 0;
	w->qgroup_owners = 0;
}

void fs_tx_abort(struct fs *fs)
{
	struct fs_wstate *w = fs->w;

	if (!w || !w->transid)
		return;
	tx_end(fs, 0);
	fs->sb = w->sb_before;
	fs->root_bytenr = w->root_before[0];
	fs->root_level = (int)w->root_before[1];
	fs->chunk_root_bytenr = w->root_before[2];
	fs->chunk_root_level = (int)w->root_before[3];
	fs->root_gen = w->root_before[4];
	fs->chunk_root_gen = w->root_before[5];
	for (int i = 0; i < fs->num_devs; i++)
		fs->devs[i].sb.dev_item = w->dev_items_before[i];
}

/* With quotas on, the qgroup status names the generation of its counts (the kernel
 * distrusts them otherwise); when subvolume trees grew or shrank, the counts are
 * marked for a rescan. */
static int qgroup_status(struct fs *fs)
{
	struct fs_key k = { 0, BTRFS_QGROUP_STATUS_KEY, 0 };
	struct btrfs_qgroup_status_item *st;
	struct fs_root r;
	uint32_t size;

	if (fs_root_lookup(fs, BTRFS_QUOTA_TREE_OBJECTID, &r))
		return 0;               /* no quotas */
	st = (struct btrfs_qgroup_status_item *)fs_item_mut(fs, BTRFS_QUOTA_TREE_OBJECTID, &k, &size);
	/* a quota tree that cannot be read is left as it is (a repair makes it anew later in
	 * the transaction): its status generation stays behind, which the kernel distrusts */
	if (!st && (fs->err.code == -EUCLEAN || fs->err.code == -EIO))
		return 0;
	if (!st || size < sizeof(*st))
		return st ? fs_err(&fs->err, -EUCLEAN, "qgroup status item too short") : fs->err.code;
	put_le64(&st->generation, fs->w->transid);
	if (fs->w->qgroup_blocks || fs->w->qgroup_owners)
		put_le64(&st->flags, get_le64(&st->flags) | BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT);
	return 0;
}

/* Extent items, block groups, free space, root items: until nothing changes. */
static int settle(struct fs *fs)
{
	struct fs_key first = { 0, 0, 0 };
	struct wroot *wr = wroot_get(fs, BTRFS_ROOT_TREE_OBJECTID);
	struct fs_path p;
	int did, ret, rounds = 0, quota = 0;

	/* the superblock's generation is the root tree root's */
	if (!wr)
		return fs->err.code;
	ret = cow_search(fs, wr, &first, &p);
	if (ret < 0)
		return ret;
	fs_path_release(fs, &p);
	do {
		did = 0;
		ret = run_refs(fs, &did);
		if (!ret)
			ret = run_space(fs, &did);
		if (!ret)
			ret = wroot_update_items(fs, &did);
		if (!ret && ++rounds > 1000)
			ret = fs_err(&fs->err, -ELOOP, "commit does not settle");
		/* a free space tree made anew: from the settled extent tree, then settled itself */
		if (!ret && !did && fs->w->fst_rebuild)
			did = 1, ret = fst_populate(fs);
		if (!ret && !did && !quota++)
			did = 1, ret = qgroup_status(fs);
	} while (!ret && did);
	return ret;
}

int fs_tx_settle(struct fs *fs)
{
	if (!fs->w || !fs->w->transid)
		return fs_err(&fs->err, -EINVAL, "no transaction is running");
	return settle(fs);
}

int fs_tx_run(struct fs *fs, int (*change)(struct fs *fs, void *ctx), void *ctx)
{
	int ret = fs_tx_begin(fs);

	if (!ret && (ret = change(fs, ctx)))
		fs_tx_abort(fs);
	else if (!ret)
		ret = fs_tx_commit(fs);
	return ret;
}

uint64_t fs_tx_generation(const struct fs *fs)
{
	return fs->w ? fs->w->transid : 0;
}

/* The backup root slot after the one of the current generation, filled with the new roots. */
static int backup_roots(struct fs *fs)
{
	static const uint64_t trees[] = { BTRFS_EXTENT_TREE_OBJECTID, BTRFS_FS_TREE_OBJECTID,
					  BTRFS_DEV_TREE_OBJECTID, BTRFS_CSUM_TREE_OBJECTID };
	struct btrfs_super_block *sb = &fs->sb;
	struct btrfs_root_backup *b;
	uint64_t best = 0;
	int slot = 0;

	for (int i = 0; i < BTRFS_NUM_BACKUP_ROOTS; i++) {
		uint64_t g = get_le64(&sb->super_roots[i].tree_root_gen);

		if (g >= best && g < fs->w->transid) {
			best = g;
			slot = (i + 1) % BTRFS_NUM_BACKUP_ROOTS;
		}
	}
	b = &sb->super_roots[slot];
	memset(b, 0, sizeof(*b));
	put_le64(&b->tree_root, fs->root_bytenr);
	put_le64(&b->tree_root_gen, fs->root_gen);
	b->tree_root_level = (uint8_t)fs->root_level;
	put_le64(&b->chunk_root, fs->chunk_root_bytenr);
	put_le64(&b->chunk_root_gen, get_le64(&sb->chunk_root_generation));
	b->chunk_root_level = (uint8_t)fs->chunk_root_level;
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		struct fs_root r;
		__le64 *at = &b->extent_root + 2 * i;   /* extent, fs, dev, csum: root, gen */
		uint8_t *level = &b->extent_root_level + i;

		if (fs_root_lookup(fs, trees[i], &r))
			continue;       /* no such tree (no csum tree...): the slot stays 0 */
		put_le64(at, r.bytenr);
		put_le64(at + 1, r.generation);
		*level = (uint8_t)r.level;
	}
	put_le64(&b->total_bytes, get_le64(&sb->total_bytes));
	put_le64(&b->bytes_used, get_le64(&sb->bytes_used));
	put_le64(&b->num_devices, get_le64(&sb->num_devices));
	return 0;
}

static void new_super(struct fs *fs)
{
	struct btrfs_super_block *sb = &fs->sb;
	uint64_t old = get_le64(&sb->generation);

	put_le64(&sb->generation, fs->w->transid);
	put_le64(&sb->root, fs->root_bytenr);
	sb->root_level = (uint8_t)fs->root_level;
	put_le64(&sb->chunk_root, fs->chunk_root_bytenr);
	sb->chunk_root_level = (uint8_t)fs->chunk_root_level;
	put_le64(&sb->chunk_root_generation, fs->chunk_root_gen);
	/* the uuid tree stays as valid as it was */
	if (get_le64(&sb->uuid_tree_generation) == old)
		put_le64(&sb->uuid_tree_generation, fs->w->transid);
	backup_roots(fs);
}

/* Every block of the transaction, each copy: old bytes to the undo file first. */
static int write_blocks(struct fs *fs)
{
	struct fs_wstate *w = fs->w;
	int ret = 0;

	for (size_t i = 0; i < w->nallocs && !ret; i++) {
		struct fs_block *b = w->allocs[i].b;
		struct btrfs_header *h = (struct btrfs_header *)b->data;

		put_le64(&h->flags, get_le64(&h->flags) | BTRFS_HEADER_FLAG_WRITTEN);
		csum_stamp(fs->csum_type, b->data, b->size);
		if (w->undo)
			ret = wio_save_logical(fs, b->bytenr, b->size);
	}
	if (!ret && w->undo)
		ret = undo_sync(fs);
	for (size_t i = 0; i < w->nallocs && !ret; i++)
		ret = fs_write_logical(fs, w->allocs[i].b->bytenr, w->allocs[i].b->data, fs->nodesize);
	return ret;
}

int fs_tx_commit(struct fs *fs)
{
	struct fs_wstate *w = fs->w;
	int ret;

	if (!w || !w->transid)
		return fs_err(&fs->err, -EINVAL, "no transaction is running");
	if (!w->nallocs && !w->nfrees && !w->nspace && !w->fst_rebuild &&
	    !memcmp(&fs->sb, &w->sb_before, sizeof(fs->sb))) {
		tx_end(fs, 1);          /* nothing changed: nothing to write */
		return 0;
	}
	ret = settle(fs);
	if (ret) {
		fs_tx_abort(fs);
		return ret;
	}
	new_super(fs);
	ret = write_blocks(fs);
	if (!ret)
		ret = fs_super_commit(fs);
	if (ret) {
		/* the old superblocks may still be the ones on disk: no more writes */
		w->broken = 1;
		fs_tx_abort(fs);
		return ret;
	}
	fs->generation = w->transid;
	tx_end(fs, 1);
	return 0;
}
