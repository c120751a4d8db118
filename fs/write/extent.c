//build:Oz
/* Space of the write side: allocating tree blocks, their extent items, block group
 * `used`, the superblock's bytes_used, the free space tree, data extent references. */
#include "config.h"
#include "internal.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STRIPE_LEN 65536ULL

/* ---- the allocator ----------------------------------------------------------- */

/* The stripes (64 KiB of logical space) holding a superblock copy are never
 * allocated (the kernel excludes them from every block group). */
int sb_stripes_add(struct fs *fs, const struct fs_chunk *c)
{
	/* nor what lies below the first superblock (old mkfs: a chunk at logical 0) */
	if (c->logical < BTRFS_SUPER_OFFSET &&
	    ranges_add(&fs->w->sb_stripes, c->logical, BTRFS_SUPER_OFFSET))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	for (uint16_t s = 0; s < c->num_stripes; s++)
		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
			uint64_t off = btrfs_super_offset(m), phys = c->stripes[s].offset, nr, lnr;

			if (off < phys || off >= phys + fs_chunk_stripe_length(c))
				continue;
			nr = (off - phys) / STRIPE_LEN;
			if (c->type & BTRFS_BLOCK_GROUP_RAID0)
				lnr = nr * c->num_stripes + s;
			else if (c->type & BTRFS_BLOCK_GROUP_RAID10)
				lnr = nr * (uint64_t)(c->num_stripes / c->sub_stripes) + s / c->sub_stripes;
			else
				lnr = nr;
			if (ranges_add(&fs->w->sb_stripes, c->logical + lnr * STRIPE_LEN,
				       c->logical + (lnr + 1) * STRIPE_LEN))
				return fs_err(&fs->err, -ENOMEM, "out of memory");
		}
	return 0;
}

int walloc_init(struct fs *fs)
{
	struct fs_wstate *w = fs->w;
	struct fs_root r;
	struct fs_block *b;
	int ret;

	if (w->scratch)
		return 0;
	/* a lost extent tree (no root item) leaves allocation to what fs_space_reserve
	 * says is in use: only the extent tree made anew allocates */
	ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &w->orig_extent);
	if (ret == -ENOENT) {
		memset(&w->orig_extent, 0, sizeof(w->orig_extent));
		ret = 0;
	}
	if (!ret)
		ret = fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &r);
	if (ret)
		return ret;
	b = fs_block_read(fs, r.bytenr, &FS_EXPECT_NONE);
	if (!b)
		return fs->err.code;
	memcpy(w->chunk_uuid, fs_block_header(b)->chunk_tree_uuid, BTRFS_UUID_SIZE);
	fs_block_put(fs, b);
	for (int i = 0; i < fs->num_chunks; i++)
		if ((ret = sb_stripes_add(fs, &fs->chunks[i])))
			return ret;
	w->scratch = malloc(cow_scratch_size(fs->nodesize));
	w->dev_items_before = calloc((size_t)fs->num_devs + 1, sizeof(*w->dev_items_before));
	return w->scratch && w->dev_items_before ? 0 : fs_err(&fs->err, -ENOMEM, "out of memory");
}

/* The last extent (EXTENT_ITEM or METADATA_ITEM) of the extent tree as opened that
 * starts below limit: 1 and [*s, *e), 0 none, <0 error. */
static int extent_before(struct fs *fs, uint64_t limit, uint64_t *s, uint64_t *e)
{
	struct fs_key key = { limit, 0, 0 };
	struct fs_path p;
	int ret = fs_search(fs, &fs->w->orig_extent, &key, &p);

	/* 0: p is on the first item >= key; 1: on the last item (or the tree is empty) */
	if (ret == 1)
		ret = p.levels ? 0 : 1;
	else if (ret == 0)
		ret = fs_prev(fs, &p);
	while (ret == 0) {
		fs_path_key(&p, &key);
		if (key.type == BTRFS_EXTENT_ITEM_KEY || key.type == BTRFS_METADATA_ITEM_KEY) {
			*s = key.objectid;
			*e = key.objectid + (key.type == BTRFS_EXTENT_ITEM_KEY ? key.offset : fs->nodesize);
			ret = 2;
			break;
		}
		ret = fs_prev(fs, &p);
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : ret == 2;
}

/* The first free nodesize block of chunk c at or after *pos: 1 found (*pos), 0 none. */
static int chunk_gap(struct fs *fs, const struct fs_chunk *c, uint64_t *pos)
{
	uint64_t ns = fs->nodesize, end = c->logical + c->length, at = *pos, s = 0, e = 0;
	const struct range *r;
	int ret;

	for (;;) {
		/* aligned to nodesize from the chunk start: never across a stripe */
		at = c->logical + (at - c->logical + ns - 1) / ns * ns;
		if (at + ns > end)
			return 0;
		r = ranges_overlap(&fs->w->taken, at, at + ns);
		if (!r)
			r = ranges_overlap(&fs->w->sb_stripes, at, at + ns);
		if (r) {
			at = r->end;
			continue;
		}
		if (!fs->w->trust_reserved && !fs->w->orig_extent.bytenr)
			return fs_err(&fs->err, -EUCLEAN, "the extent tree is lost: nothing can be allocated "
				      "until it is made anew");
		ret = fs->w->trust_reserved ? 0 : extent_before(fs, at + ns, &s, &e);
		if (ret < 0)
			return ret;
		if (ret && e > at) {
			at = e;
			continue;
		}
		*pos = at;
		return 1;
	}
}

/* Space for a tree block in a chunk of the kind (metadata, or system for the chunk
 * tree), after the cursor first, then from the start: 0, or -ENOSPC (fs->err not set). */
static int find_space_in_chunks(struct fs *fs, int system, uint64_t *out)
{
	uint64_t kind = system ? BTRFS_BLOCK_GROUP_SYSTEM : BTRFS_BLOCK_GROUP_METADATA;
	uint64_t *cursor = &fs->w->cursor[system];

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < fs->num_chunks; i++) {
			const struct fs_chunk *c = &fs->chunks[i];
			uint64_t at = c->logical;
			int ret;

			if (!(c->type & kind) || c->type & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6))
				continue;
			if (!pass && c->logical + c->length <= *cursor)
				continue;
			if (!pass && *cursor > at)
				at = *cursor;
			ret = chunk_gap(fs, c, &at);
			if (ret < 0)
				return ret;
			if (ret) {
				*out = at;
				*cursor = at + fs->nodesize;
				return 0;
			}
		}
	return -ENOSPC;
}

/* Metadata full: a new chunk for it (system chunks are not made: the superblock's
 * array would have to grow). */
static int find_space(struct fs *fs, int system, uint64_t *out)
{
	int ret = find_space_in_chunks(fs, system, out);

	if (ret == -ENOSPC && CFG_WRITE_NEW_CHUNKS && !system && !(ret = wchunk_new(fs, BTRFS_BLOCK_GROUP_METADATA)))
		ret = find_space_in_chunks(fs, system, out);
	if (ret == -ENOSPC)
		ret = fs_err(&fs->err, -ENOSPC, "no free %s space left for tree blocks%s", system ? "system" : "metadata",
			     system ? "" : " and no room on the devices for a new chunk");
	return ret;
}

static size_t walloc_index(const struct fs *fs, uint64_t bytenr)
{
	size_t lo = 0, hi = fs->w->nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fs->w->allocs[mid].bytenr < bytenr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct walloc *walloc_find(const struct fs *fs, uint64_t bytenr)
{
	size_t i;

	if (!fs->w || !fs->w->transid)
		return NULL;
	i = walloc_index(fs, bytenr);
	return i < fs->w->nallocs && fs->w->allocs[i].bytenr == bytenr ? &fs->w->allocs[i] : NULL;
}

struct fs_block *alloc_tree_block(struct fs *fs, uint64_t owner, int level)
{
	struct fs_wstate *w = fs->w;
	struct btrfs_header *h;
	struct fs_block *b;
	uint64_t bytenr = 0;
	size_t i;

	if (find_space(fs, owner == BTRFS_CHUNK_TREE_OBJECTID, &bytenr))
		return NULL;
	if (vec_reserve(&w->allocs, &w->cap_allocs, w->nallocs + 1, sizeof(*w->allocs)) ||
	    ranges_add(&w->taken, bytenr, bytenr + fs->nodesize)) {
		fs_err(&fs->err, -ENOMEM, "out of memory");
		return NULL;
	}
	b = fs_block_create(fs, bytenr);
	if (!b)
		return NULL;
	h = (struct btrfs_header *)b->data;
	memcpy(h->fsid, fs->meta_uuid, BTRFS_FSID_SIZE);
	put_le64(&h->bytenr, bytenr);
	put_le64(&h->flags, BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT);
	memcpy(h->chunk_tree_uuid, w->chunk_uuid, BTRFS_UUID_SIZE);
	put_le64(&h->generation, w->transid);
	put_le64(&h->owner, owner);
	h->level = (uint8_t)level;
	i = walloc_index(fs, bytenr);
	memmove(&w->allocs[i + 1], &w->allocs[i], (w->nallocs - i) * sizeof(*w->allocs));
	w->allocs[i] = (struct walloc){ bytenr, owner, level, 0, b };
	w->nallocs++;
	b->refs++;
	return b;
}

int free_tree_block(struct fs *fs, uint64_t owner, struct fs_block *b)
{
	struct fs_wstate *w = fs->w;
	struct walloc *a = walloc_find(fs, b->bytenr);
	int applied = a && a->applied, level = fs_block_level(b);
	struct wfree f = { b->bytenr, owner, level ? 0 : fs_block_owner(b), level, leaf_data_refs(fs, b->data), 0 };

	if (a) {
		/* never written: forgotten, and its extent item (if already made) goes */
		fs_block_forget(fs, a->b);
		memmove(a, a + 1, (size_t)(&w->allocs[w->nallocs] - (a + 1)) * sizeof(*a));
		w->nallocs--;
		if (!applied)
			return 0;
	}
	return free_tree_extent(fs, &f);
}

int free_tree_extent(struct fs *fs, const struct wfree *f)
{
	struct fs_wstate *w = fs->w;

	if (vec_reserve(&w->frees, &w->cap_frees, w->nfrees + 1, sizeof(*w->frees)))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	w->frees[w->nfrees++] = *f;
	return 0;
}

void fs_space_trust_reserved(struct fs *fs)
{
	fs->w->trust_reserved = 1;
}

int fs_space_reserve(struct fs *fs, uint64_t start, uint64_t len)
{
	if (!fs->w)
		return fs_err(&fs->err, -EINVAL, "the filesystem is not open for writing");
	return ranges_add(&fs->w->taken, start, start + len) ? fs_err(&fs->err, -ENOMEM, "out of memory") : 0;
}

int wspace_add(struct fs *fs, uint64_t start, uint64_t len, int sign)
{
	struct fs_wstate *w = fs->w;
	struct wspace *last = w->nspace ? &w->space[w->nspace - 1] : NULL;

	if (last && last->sign == sign && last->start + last->len == start &&
	    fs_chunk_find(fs, start) == fs_chunk_find(fs, last->start)) {
		last->len += len;
		return 0;
	}
	if (vec_reserve(&w->space, &w->cap_space, w->nspace + 1, sizeof(*w->space)))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	w->space[w->nspace++] = (struct wspace){ start, len, sign };
	return 0;
}

/* ---- extent items of tree blocks ---------------------------------------------- */

static int skinny(const struct fs *fs)
{
	return !!(get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);
}

static int add_tree_ref(struct fs *fs, const struct walloc *a)
{
	uint8_t item[sizeof(struct btrfs_extent_item) + sizeof(struct btrfs_tree_block_info) + 9];
	struct btrfs_extent_item *ei = (void *)item;
	uint8_t *ref = item + sizeof(*ei);
	struct fs_key key = { a->bytenr, BTRFS_METADATA_ITEM_KEY, (uint64_t)a->level };

	memset(item, 0, sizeof(item));
	put_le64(&ei->refs, 1);
	put_le64(&ei->generation, fs->w->transid);
	put_le64(&ei->flags, BTRFS_EXTENT_FLAG_TREE_BLOCK);
	if (!skinny(fs)) {
		struct btrfs_tree_block_info *tb = (void *)ref;
		struct fs_key first = { 0, 0, 0 };

		if (fs_block_nritems(a->b))
			a->level ? fs_node_key(a->b, 0, &first) : fs_item_key(a->b, 0, &first);
		fs_key_to_disk(&tb->key, &first);
		tb->level = (uint8_t)a->level;
		ref += sizeof(*tb);
		key = (struct fs_key){ a->bytenr, BTRFS_EXTENT_ITEM_KEY, fs->nodesize };
	}
	ref[0] = BTRFS_TREE_BLOCK_REF_KEY;
	put_le64(ref + 1, a->owner);
	return fs_item_insert(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, item, (uint32_t)(ref + 9 - item));
}

static int not_exclusive(struct fs *fs, const struct wfree *f)
{
	return fs_err_at(&fs->err, -ENOTSUP, f->owner, f->bytenr,
			 "tree block is shared (snapshot or relocation): changing it is not supported");
}

/* The tree's inline TREE_BLOCK_REF (at offset at) taken out of the extent item of a
 * leaf that other trees keep using (or of a lost block). A leaf its owner gives up is
 * then reached through other trees only: FULL_BACKREF, which changes no reference of
 * its children (it references no data). */
static int drop_shared_ref(struct fs *fs, const struct wfree *f, const struct fs_key *key,
			   uint8_t *item, uint32_t size, uint32_t at)
{
	uint32_t len = fs_inline_ref_size(BTRFS_TREE_BLOCK_REF_KEY);
	struct btrfs_extent_item *ei = (void *)item;
	int ret;

	if (!item)
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	memmove(item + at, item + at + len, size - at - len);
	put_le64(&ei->refs, get_le64(&ei->refs) - 1);
	if (f->owner == f->leaf_owner)
		put_le64(&ei->flags, get_le64(&ei->flags) | BTRFS_BLOCK_FLAG_FULL_BACKREF);
	ret = fs_item_replace(fs, BTRFS_EXTENT_TREE_OBJECTID, key, item, size - len);
	free(item);
	return ret ? ret : 1;
}

/* Deletes the extent item of a tree block only this tree uses (0), or this tree's
 * reference to a leaf without data that others share (1: the block stays in use). */
static int drop_tree_ref(struct fs *fs, const struct wfree *f)
{
	struct fs_key key = { f->bytenr, BTRFS_METADATA_ITEM_KEY, (uint64_t)f->level };
	struct fs_key kref = { f->bytenr, BTRFS_TREE_BLOCK_REF_KEY, f->owner };
	const uint8_t *data;
	struct fs_extent_info ei;
	struct fs_inline_ref r;
	struct fs_path p;
	uint8_t *item;
	uint32_t size, pos, here, at = 0;
	int ret, mine = 0, others = 0, shared;

	data = tree_item(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, &p, &size);
	if (!data && fs->err.code == -ENOENT) {
		key = (struct fs_key){ f->bytenr, BTRFS_EXTENT_ITEM_KEY, fs->nodesize };
		data = tree_item(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, &p, &size);
	}
	if (!data)
		return fs->err.code != -ENOENT ? fs->err.code :
		       fs_err_at(&fs->err, -EUCLEAN, f->owner, f->bytenr, "tree block has no extent item");
	ret = fs_extent_item(data, size, key.type, &ei);
	for (pos = ei.refs_start; !ret && (here = pos, ret = fs_inline_ref_next(data, size, &pos, &r)) == 1; ret = 0) {
		if (r.type == BTRFS_TREE_BLOCK_REF_KEY && r.offset == f->owner) {
			mine++;
			at = here;
		} else if (r.type != FS_EXTENT_OWNER_REF_KEY) {
			others++;
		}
	}
	/* a tree that shares the leaf with its owner gave its copy references of its own;
	 * the owner leaving a leaf that references data would change those: not supported.
	 * (The others' references are inline or keyed items: ei.refs counts both.) */
	shared = !ret && (f->lost || (f->leaf_owner && (f->owner != f->leaf_owner || !f->data))) && mine == 1 &&
		 ei.refs > 1;
	item = shared ? malloc(size) : NULL;
	if (item)
		memcpy(item, data, size);
	fs_path_release(fs, &p);
	if (ret < 0)
		return fs_err_at(&fs->err, -EUCLEAN, f->owner, f->bytenr, "bad extent item of a tree block");
	if (shared)
		return drop_shared_ref(fs, f, &key, item, size, at);
	if (ei.refs != 1 || others || mine > 1 || (f->data && f->owner != f->leaf_owner) ||
	    (ei.flags & BTRFS_BLOCK_FLAG_FULL_BACKREF && !f->lost && (!f->leaf_owner || f->data)))
		return not_exclusive(fs, f);
	if (!mine) {
		/* the reference is a keyed TREE_BLOCK_REF item */
		ret = fs_item_delete(fs, BTRFS_EXTENT_TREE_OBJECTID, &kref);
		if (ret == -ENOENT)
			return not_exclusive(fs, f);
		if (ret)
			return ret;
	}
	return fs_item_delete(fs, BTRFS_EXTENT_TREE_OBJECTID, &key);
}

/* Qgroups count the blocks of subvolume trees: when their number changes, the counts
 * are marked for a rescan (the kernel and btrfs check then expect them to differ). */
static void count_qgroup(struct fs *fs, uint64_t owner, int sign)
{
	if (owner == BTRFS_FS_TREE_OBJECTID || (owner >= BTRFS_FIRST_FREE_OBJECTID && owner <= BTRFS_LAST_FREE_OBJECTID)) {
		fs->w->qgroup_blocks += sign;
		fs->w->qgroup_owners += sign * owner;
	}
}

static int later_tree_first(const void *a, const void *b)
{
	uint64_t x = ((const struct wfree *)a)->owner, y = ((const struct wfree *)b)->owner;

	return (x < y) - (x > y);
}

int run_refs(struct fs *fs, int *did)
{
	struct fs_wstate *w = fs->w;
	int ret;

	for (size_t i = 0; i < w->nallocs; i++) {
		struct walloc a = w->allocs[i];

		if (a.applied)
			continue;
		w->allocs[i].applied = 1;
		/* inserting can add or drop allocations: start over after each */
		count_qgroup(fs, a.owner, 1);
		ret = add_tree_ref(fs, &a);
		if (!ret)
			ret = wspace_add(fs, a.bytenr, fs->nodesize, 1);
		if (ret)
			return ret;
		*did = 1;
		i = (size_t)-1;
	}
	/* a snapshot's id is above its source's: the last tree to give up a leaf they
	 * share is then the owner that made it */
	sort_stable(w->frees, w->nfrees, sizeof(*w->frees), later_tree_first);
	for (size_t i = 0; i < w->nfrees; i++) {
		struct wfree f = w->frees[i];

		count_qgroup(fs, f.owner, -1);
		ret = drop_tree_ref(fs, &f);
		if (!ret)
			ret = wspace_add(fs, f.bytenr, fs->nodesize, -1);
		if (ret < 0)
			return ret;
		*did = 1;
	}
	w->nfrees = 0;
	return 0;
}

/* ---- block group used, bytes_used, free space tree ----------------------------- */

static int change_space(struct fs *fs, const struct wspace *s)
{
	const struct fs_chunk *c = fs_chunk_find(fs, s->start);
	struct btrfs_block_group_item *bg;
	struct fs_key key;
	uint64_t used, total = get_le64(&fs->sb.bytes_used);
	uint32_t size;

	if (!c || s->start + s->len > c->logical + c->length)
		return fs_err_at(&fs->err, -EUCLEAN, 0, s->start, "extent outside every block group");
	key = (struct fs_key){ c->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, c->length };
	bg = (struct btrfs_block_group_item *)fs_item_mut(fs, fs_block_group_tree_id(fs), &key, &size);
	if (!bg || size < sizeof(*bg))
		return bg ? fs_err_at(&fs->err, -EUCLEAN, 0, c->logical, "block group item too short") :
			    fs->err.code;
	used = get_le64(&bg->used);
	if (s->sign < 0 && (used < s->len || total < s->len))
		return fs_err_at(&fs->err, -EUCLEAN, 0, c->logical, "block group used below zero");
	put_le64(&bg->used, s->sign > 0 ? used + s->len : used - s->len);
	put_le64(&fs->sb.bytes_used, s->sign > 0 ? total + s->len : total - s->len);
	if (get_le64(&fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE && !fs->w->fst_rebuild)
		return fst_change(fs, s->start, s->len, s->sign < 0);
	return 0;
}

int run_space(struct fs *fs, int *did)
{
	struct fs_wstate *w = fs->w;

	while (w->nspace) {
		struct wspace s = w->space[0];
		int ret;

		memmove(w->space, w->space + 1, --w->nspace * sizeof(*w->space));
		/* a chunk made since has its block group item first */
		ret = wchunk_flush(fs, did);
		if (!ret)
			ret = change_space(fs, &s);
		if (ret)
			return ret;
		*did = 1;
	}
	return 0;
}

/* ---- data extents ---------------------------------------------------------------- */

/* The csum item covering sector addr or the first one after it below end: 0 and
 * its key and size, 1 none, <0 error. */
static int csum_item_at(struct fs *fs, uint64_t addr, uint64_t end, struct fs_key *key, uint32_t *size)
{
	struct fs_key k = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, addr };
	struct fs_root root;
	struct fs_path p;
	int ret = wroot_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &root);

	if (ret)
		return ret;
	ret = fs_search_le(fs, &root, &k, &p);
	if (ret == 0) {
		fs_path_key(&p, key);
		fs_path_data(&p, size);
		if (key->offset + (uint64_t)(*size / fs->csum_size) * fs->sectorsize <= addr)
			ret = fs_next(fs, &p);
	} else if (ret == -ENOENT) {
		ret = fs_search(fs, &root, &k, &p);
	}
	if (ret == 0) {
		fs_path_key(&p, key);
		fs_path_data(&p, size);
		if (key->objectid != BTRFS_EXTENT_CSUM_OBJECTID || key->type != BTRFS_EXTENT_CSUM_KEY ||
		    key->offset >= end)
			ret = 1;
	}
	fs_path_release(fs, &p);
	return ret;
}

int fs_csum_delete(struct fs *fs, uint64_t start, uint64_t len)
{
	uint64_t end = start + len, ss = fs->sectorsize;
	struct fs_key key;
	uint32_t size;
	int ret;

	while ((ret = csum_item_at(fs, start, end, &key, &size)) == 0) {
		uint64_t is = key.offset, ie = is + size / fs->csum_size * ss;
		uint64_t cut_s = is > start ? is : start, cut_e = ie < end ? ie : end;
		uint32_t keep_front = (uint32_t)((cut_s - is) / ss * fs->csum_size);
		uint32_t keep_back = (uint32_t)((ie - cut_e) / ss * fs->csum_size);
		uint8_t *d, *tail = NULL;

		if (keep_back) {
			/* the part after the range becomes its own item */
			d = fs_item_mut(fs, BTRFS_CSUM_TREE_OBJECTID, &key, &size);
			tail = d ? malloc(keep_back) : NULL;
			if (!tail)
				return d ? fs_err(&fs->err, -ENOMEM, "out of memory") : fs->err.code;
			memcpy(tail, d + size - keep_back, keep_back);
		}
		ret = keep_front ? fs_item_resize(fs, BTRFS_CSUM_TREE_OBJECTID, &key, keep_front) :
				   fs_item_delete(fs, BTRFS_CSUM_TREE_OBJECTID, &key);
		if (!ret && tail)
			ret = fs_item_insert(fs, BTRFS_CSUM_TREE_OBJECTID,
					     &(struct fs_key){ key.objectid, key.type, cut_e }, tail, keep_back);
		free(tail);
		if (ret)
			return ret;
		start = cut_e;
	}
	return ret < 0 ? ret : 0;
}

int fs_inode_delete(struct fs *fs, uint64_t tree, uint64_t ino)
{
	struct fs_key k = { ino, BTRFS_EXTENT_DATA_KEY, 0 }, from = { ino, 0, 0 }, to = { ino, 255, UINT64_MAX };
	int ret;

	/* the data extents its file extents use lose a reference each */
	while (!(ret = tree_near(fs, tree, &k, 1)) && k.objectid == ino && k.type == BTRFS_EXTENT_DATA_KEY) {
		struct fs_file_extent fe;
		struct fs_path p;
		uint32_t size;
		const uint8_t *data = tree_item(fs, tree, &k, &p, &size);

		if (!data)
			return fs->err.code;
		ret = fs_file_extent(data, size, &fe);
		fs_path_release(fs, &p);
		if (ret)
			return fs_err_at(&fs->err, -EUCLEAN, tree, 0, "bad file extent of inode %llu",
					 (unsigned long long)ino);
		if (fe.type != BTRFS_FILE_EXTENT_INLINE && fe.disk_bytenr &&
		    (ret = fs_data_unref(fs, fe.disk_bytenr, fe.disk_num_bytes, tree, ino, k.offset - fe.offset)))
			return ret;
		if (++k.offset == 0)
			break;
	}
	return ret < 0 ? ret : fs_items_delete_range(fs, tree, &from, &to, NULL);
}

/* ---- where the block group items live ---------------------------------------------- */

/* 1 when tree holds the item at k, 0 when not, <0 on error. */
static int tree_has(struct fs *fs, uint64_t tree, const struct fs_key *k)
{
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, tree, &r);

	if (!ret)
		ret = fs_lookup(fs, &r, k, &p);
	if (ret == 0)
		fs_path_release(fs, &p);
	return ret == 0 ? 1 : ret == -ENOENT ? 0 : ret;
}

/* Each chunk's block group item moved from tree `from` to tree `to` (where those that
 * a conversion cut short moved already stay). */
static int move_block_groups(struct fs *fs, uint64_t from, uint64_t to)
{
	int ret = 0;

	for (int i = 0; i < fs->num_chunks && !ret; i++) {
		struct fs_key k = { fs->chunks[i].logical, BTRFS_BLOCK_GROUP_ITEM_KEY, fs->chunks[i].length };
		struct btrfs_block_group_item bg;
		struct fs_root r;
		struct fs_path p;
		uint32_t size;
		const uint8_t *d;

		if ((ret = tree_has(fs, to, &k)) == 1 && !(ret = tree_has(fs, from, &k)))
			continue;
		if (ret < 0 || (ret = fs_root_lookup(fs, from, &r)) || (ret = fs_lookup(fs, &r, &k, &p)))
			return fs_err_at(&fs->err, ret < 0 ? ret : -ENOENT, from, k.objectid,
					 "block group %llu has no item", (unsigned long long)k.objectid);
		d = fs_path_data(&p, &size);
		memset(&bg, 0, sizeof(bg));
		memcpy(&bg, d, size < sizeof(bg) ? size : sizeof(bg));
		fs_path_release(fs, &p);
		ret = fs_item_delete(fs, from, &k);
		if (!ret)
			ret = fs_item_insert(fs, to, &k, &bg, sizeof(bg));
	}
	return ret;
}

int fs_block_group_tree_convert(struct fs *fs, int to_own_tree)
{
	uint64_t ro = get_le64(&fs->sb.compat_ro_flags);
	int ret;

	if (to_own_tree) {
		/* btrfs-progs converts in several transactions: the tree of one cut short is
		 * there, with some of the items */
		uint64_t flags = get_le64(&fs->sb.flags);

		ret = flags & BTRFS_SUPER_FLAG_CHANGING_BG_TREE ? 0 : fs_tree_create(fs, BTRFS_BLOCK_GROUP_TREE_OBJECTID);
		if (!ret)
			ret = move_block_groups(fs, BTRFS_EXTENT_TREE_OBJECTID, BTRFS_BLOCK_GROUP_TREE_OBJECTID);
		put_le64(&fs->sb.compat_ro_flags, ro | BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE);
		put_le64(&fs->sb.flags, flags & ~BTRFS_SUPER_FLAG_CHANGING_BG_TREE);
		return ret;
	}
	ret = move_block_groups(fs, BTRFS_BLOCK_GROUP_TREE_OBJECTID, BTRFS_EXTENT_TREE_OBJECTID);
	put_le64(&fs->sb.compat_ro_flags, ro & ~(uint64_t)BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE);
	return ret ? ret : fs_tree_delete(fs, BTRFS_BLOCK_GROUP_TREE_OBJECTID);
}
