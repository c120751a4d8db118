//build:Oz
/* The free space tree kept in step with allocations. Each block group has a
 * FREE_SPACE_INFO (start, 198, length) with the number of free extents, then either
 * FREE_SPACE_EXTENT items (start, 199, length) or, with USING_BITMAPS, bitmaps
 * (start, 200, length) with a bit per sector, set when free. The representation is
 * kept as it is (the kernel converts between them when it wants). */
#include "internal.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

#define FST BTRFS_FREE_SPACE_TREE_OBJECTID

static int fst_damaged(struct fs *fs, uint64_t start, const char *what)
{
	return fs_err_at(&fs->err, -EUCLEAN, FST, start, "free space tree: %s", what);
}

/* ---- bitmaps ---------------------------------------------------------------------- */

/* The key of the bitmap holding the sector at addr. */
static int bitmap_key(struct fs *fs, uint64_t addr, struct fs_key *k)
{
	*k = (struct fs_key){ addr, BTRFS_FREE_SPACE_BITMAP_KEY, UINT64_MAX };
	if (tree_near(fs, FST, k, 0) || k->type != BTRFS_FREE_SPACE_BITMAP_KEY || k->objectid > addr ||
	    addr - k->objectid >= k->offset)
		return fst_damaged(fs, addr, "no bitmap covers the address");
	return 0;
}

static int bitmap_short(struct fs *fs, const struct fs_key *k, uint32_t size)
{
	return (k->offset / fs->sectorsize + 7) / 8 > size ? fst_damaged(fs, k->objectid, "bitmap too short") : 0;
}

/* Is the sector at addr free? 0/1, <0 error. */
static int bit_free(struct fs *fs, uint64_t addr)
{
	struct fs_path p;
	struct fs_key k;
	const uint8_t *d;
	uint64_t bit;
	uint32_t size;
	int ret = bitmap_key(fs, addr, &k);

	if (ret || !(d = tree_item(fs, FST, &k, &p, &size)))
		return ret ? ret : fs->err.code;
	bit = (addr - k.objectid) / fs->sectorsize;
	ret = bitmap_short(fs, &k, size);
	if (!ret)
		ret = d[bit / 8] >> (bit % 8) & 1;
	fs_path_release(fs, &p);
	return ret;
}

static int bits_set(struct fs *fs, uint64_t start, uint64_t end, int val)
{
	while (start < end) {
		struct fs_key k;
		uint32_t size;
		uint8_t *d = bitmap_key(fs, start, &k) ? NULL : fs_item_mut(fs, FST, &k, &size);
		uint64_t stop;

		if (!d || bitmap_short(fs, &k, size))
			return fs->err.code;
		stop = k.objectid + k.offset < end ? k.objectid + k.offset : end;
		for (; start < stop; start += fs->sectorsize) {
			uint64_t bit = (start - k.objectid) / fs->sectorsize;
			uint8_t mask = (uint8_t)(1u << (bit % 8));

			if (!!(d[bit / 8] & mask) == val)
				return fst_damaged(fs, start, val ? "freed space already free" : "allocated space not free");
			d[bit / 8] ^= mask;
		}
	}
	return 0;
}

static int bitmap_change(struct fs *fs, const struct fs_chunk *c, uint64_t start, uint64_t end,
			 int make_free, int *delta)
{
	uint64_t ss = fs->sectorsize;
	int before = start > c->logical ? bit_free(fs, start - ss) : 0;
	int after = end < c->logical + c->length ? bit_free(fs, end) : 0;

	if (before < 0 || after < 0)
		return fs->err.code;
	/* a run appears (or goes) between its neighbours, joining (or splitting) them */
	*delta = make_free ? 1 - before - after : before + after - 1;
	return bits_set(fs, start, end, make_free);
}

/* ---- extents ----------------------------------------------------------------------- */

static int put_extent(struct fs *fs, uint64_t start, uint64_t len)
{
	return len ? fs_item_insert(fs, FST, &(struct fs_key){ start, BTRFS_FREE_SPACE_EXTENT_KEY, len },
				    NULL, 0) : 0;
}

static int extent_take(struct fs *fs, uint64_t start, uint64_t end, int *delta)
{
	struct fs_key k = { start, BTRFS_FREE_SPACE_EXTENT_KEY, UINT64_MAX };
	int ret = tree_near(fs, FST, &k, 0);

	if (ret < 0)
		return ret;
	if (ret || k.type != BTRFS_FREE_SPACE_EXTENT_KEY || k.objectid + k.offset < end)
		return fst_damaged(fs, start, "allocated space not free");
	ret = fs_item_delete(fs, FST, &k);
	if (!ret)
		ret = put_extent(fs, k.objectid, start - k.objectid);
	if (!ret)
		ret = put_extent(fs, end, k.objectid + k.offset - end);
	*delta = (start > k.objectid) + (k.objectid + k.offset > end) - 1;
	return ret;
}

static int extent_give(struct fs *fs, const struct fs_chunk *c, uint64_t start, uint64_t end, int *delta)
{
	struct fs_key left = { start - 1, BTRFS_FREE_SPACE_EXTENT_KEY, UINT64_MAX };
	struct fs_key right = { start, BTRFS_FREE_SPACE_EXTENT_KEY, 0 };
	int rl = tree_near(fs, FST, &left, 0), rr = rl < 0 ? rl : tree_near(fs, FST, &right, 1), ret = 0;
	uint64_t s = start, e = end;

	if (rr < 0)
		return rr;
	rl = !rl && left.type == BTRFS_FREE_SPACE_EXTENT_KEY && left.objectid >= c->logical;
	rr = !rr && right.type == BTRFS_FREE_SPACE_EXTENT_KEY && right.objectid < c->logical + c->length;
	if ((rl && left.objectid + left.offset > start) || (rr && right.objectid < end))
		return fst_damaged(fs, start, "freed space already free");
	*delta = 1;
	if (rl && left.objectid + left.offset == start) {
		s = left.objectid;
		ret = fs_item_delete(fs, FST, &left);
		(*delta)--;
	}
	if (!ret && rr && right.objectid == end) {
		e = end + right.offset;
		ret = fs_item_delete(fs, FST, &right);
		(*delta)--;
	}
	return ret ? ret : put_extent(fs, s, e - s);
}

int fst_change(struct fs *fs, uint64_t start, uint64_t len, int make_free)
{
	const struct fs_chunk *c = fs_chunk_find(fs, start);
	struct fs_key key;
	struct btrfs_free_space_info *info;
	uint32_t size;
	int delta = 0, ret;

	if (!c)
		return fst_damaged(fs, start, "address outside every block group");
	key = (struct fs_key){ c->logical, BTRFS_FREE_SPACE_INFO_KEY, c->length };
	info = (struct btrfs_free_space_info *)fs_item_mut(fs, FST, &key, &size);
	if (!info || size < sizeof(*info))
		return info ? fst_damaged(fs, c->logical, "free space info too short") :
			      fst_damaged(fs, c->logical, "block group has no free space info");
	if (get_le32(&info->flags) & BTRFS_FREE_SPACE_USING_BITMAPS)
		ret = bitmap_change(fs, c, start, start + len, make_free, &delta);
	else
		ret = make_free ? extent_give(fs, c, start, start + len, &delta) :
				  extent_take(fs, start, start + len, &delta);
	if (ret)
		return ret;
	info = (struct btrfs_free_space_info *)fs_item_mut(fs, FST, &key, &size);
	if (!info)
		return fs->err.code;
	if ((int64_t)get_le32(&info->extent_count) + delta < 0)
		return fst_damaged(fs, c->logical, "extent count below zero");
	put_le32(&info->extent_count, (uint32_t)((int64_t)get_le32(&info->extent_count) + delta));
	return 0;
}

/* ---- rebuilding ----------------------------------------------------------------- */

int fs_fst_rebuild(struct fs *fs)
{
	struct fs_root r;
	int ret = 0;

	if (!wroot_lookup(fs, FST, &r))
		ret = fs_tree_drop(fs, FST);
	if (!ret)
		fs->w->fst_rebuild = 1;
	return ret;
}

/* Free extents for [start, end) but the superblock stripes; *count gets how many. */
static int add_free(struct fs *fs, uint64_t start, uint64_t end, uint32_t *count)
{
	while (start < end) {
		const struct range *r = ranges_overlap(&fs->w->sb_stripes, start, end);
		uint64_t stop = r && r->start > start ? r->start : end;
		int ret;

		if (r && r->start <= start) {
			start = r->end;
			continue;
		}
		ret = put_extent(fs, start, stop - start);
		if (ret)
			return ret;
		(*count)++;
		start = stop;
	}
	return 0;
}

/* The free space of one block group, from its extent items. */
static int populate(struct fs *fs, const struct fs_root *extent, const struct fs_chunk *c)
{
	struct btrfs_free_space_info info = { 0 };
	struct fs_key k = { c->logical, 0, 0 };
	uint64_t pos = c->logical, end = c->logical + c->length;
	uint32_t count = 0;
	struct fs_path p;
	int ret;

	for (ret = fs_search(fs, extent, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		fs_path_key(&p, &k);
		if (k.objectid >= end)
			break;
		if (k.type != BTRFS_EXTENT_ITEM_KEY && k.type != BTRFS_METADATA_ITEM_KEY)
			continue;
		if (k.objectid > pos && (ret = add_free(fs, pos, k.objectid, &count)))
			break;
		k.offset = k.type == BTRFS_EXTENT_ITEM_KEY ? k.offset : fs->nodesize;
		if (k.objectid + k.offset > pos)
			pos = k.objectid + k.offset;
	}
	fs_path_release(fs, &p);
	if (ret < 0 || (pos < end && (ret = add_free(fs, pos, end, &count))))
		return ret;
	put_le32(&info.extent_count, count);
	return fs_item_insert(fs, FST, &(struct fs_key){ c->logical, BTRFS_FREE_SPACE_INFO_KEY, c->length },
			      &info, sizeof(info));
}

int fst_add_group(struct fs *fs, const struct fs_chunk *c)
{
	struct btrfs_free_space_info info = { 0 };
	uint32_t count = 0;
	int ret = add_free(fs, c->logical, c->logical + c->length, &count);

	put_le32(&info.extent_count, count);
	return ret ? ret : fs_item_insert(fs, FST, &(struct fs_key){ c->logical, BTRFS_FREE_SPACE_INFO_KEY, c->length },
					  &info, sizeof(info));
}

/* At commit, once the extent tree is settled: the new tree, from it (a chunk made
 * meanwhile gets its info from wchunk_flush). */
int fst_populate(struct fs *fs)
{
	struct fs_root extent;
	int ret = fs_tree_create(fs, FST), n = fs->num_chunks;

	fs->w->fst_rebuild = 0;
	if (!ret)
		ret = wroot_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &extent);
	for (int i = 0; i < n && !ret; i++)
		ret = populate(fs, &extent, &fs->chunks[i]);
	put_le64(&fs->sb.compat_ro_flags, get_le64(&fs->sb.compat_ro_flags) |
		 BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE | BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID);
	return ret;
}

/* ---- the v1 space cache ------------------------------------------------------------ */

int fs_space_cache_v1_clear(struct fs *fs)
{
	int ret = 0;

	for (int i = 0; i < fs->num_chunks && !ret; i++) {
		struct fs_key k = { BTRFS_FREE_SPACE_OBJECTID, 0, fs->chunks[i].logical };
		const struct btrfs_free_space_header *h;
		struct fs_root root;
		struct fs_path p;
		uint32_t size;
		uint64_t ino;

		ret = fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &root);
		if (!ret && (ret = fs_lookup(fs, &root, &k, &p)) == -ENOENT) {
			ret = 0;                /* no cache for this block group */
			continue;
		}
		if (ret)
			break;
		h = (const void *)fs_path_data(&p, &size);
		ino = size >= sizeof(*h) ? get_le64(&h->location.objectid) : 0;
		fs_path_release(fs, &p);
		if (ino < BTRFS_FIRST_FREE_OBJECTID || ino > BTRFS_LAST_FREE_OBJECTID)
			return fs_err_at(&fs->err, -EUCLEAN, BTRFS_ROOT_TREE_OBJECTID, 0, "bad free space cache header");
		if (!(ret = fs_item_delete(fs, BTRFS_ROOT_TREE_OBJECTID, &k)))
			ret = fs_inode_delete(fs, BTRFS_ROOT_TREE_OBJECTID, ino);
	}
	put_le64(&fs->sb.cache_generation, (uint64_t)-1);
	return ret;
}
