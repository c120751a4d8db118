//build:Oz
/* The chunk map recovered from what the devices hold, and the chunk tree made anew from
 * it: for a chunk tree that cannot be read, or whose items no longer match the block
 * groups and device extents (btrfs rescue chunk-recover, and --repair of a filesystem
 * that cannot be opened). Every device is read whole (fs_scan_tree_blocks); the leaves
 * of the chunk, device, extent and block group trees found there give chunk items,
 * device extents and block group items, the copy from the newest leaf winning for each
 * key. A block group's chunk is its chunk item when one matches the block group and its
 * device extents, else one made from them: the stripes of single, DUP and RAID1 chunks
 * are copies in any order; a RAID0/10/5/6 chunk needs its item (the order of its
 * stripes is nowhere else). The system chunks are the superblock's array. */
#include "config.h"
#if CFG_CHECK_REPAIR
#include "internal.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define STRIPE_LEN 65536                /* of every chunk btrfs makes */

struct seen_chunk { uint64_t logical, gen; uint32_t size; uint8_t *item; };
struct seen_bg { uint64_t logical, length, flags, gen; };
struct seen_dext { uint64_t devid, physical, length, chunk_offset, gen; };
/* The keys a leaf of the chunk or device tree held: a key inside a newer leaf's span
 * that is not in that leaf was deleted (a chunk removed), its older copies are stale. */
struct span { uint64_t owner, gen; struct fs_key first, last; };

struct found {
	struct fs *fs;
	struct repair_chunks *out;
	struct seen_chunk *chunks;
	size_t nchunks, cap_chunks;
	struct seen_bg *bgs;
	size_t nbgs, cap_bgs;
	struct seen_dext *dexts;        /* by chunk_offset once the scan is over */
	size_t ndexts, cap_dexts;
	struct span *spans;
	size_t nspans, cap_spans;
	int nomem;
};

/* ---- what the scan finds ------------------------------------------------------------ */

static void seen_item(struct found *f, uint64_t owner, uint64_t gen, const struct fs_key *k,
		      const uint8_t *data, uint32_t size)
{
	if (owner == BTRFS_CHUNK_TREE_OBJECTID && k->type == BTRFS_CHUNK_ITEM_KEY && fs_chunk_item(data, size)) {
		struct seen_chunk *c = vec_push(&f->chunks, &f->nchunks, &f->cap_chunks, sizeof(*c));
		uint8_t *copy = c ? malloc(size) : NULL;

		if (!copy) {
			f->nchunks -= !!c;
			f->nomem = 1;
			return;
		}
		*c = (struct seen_chunk){ k->offset, gen, size, memcpy(copy, data, size) };
	} else if (owner == BTRFS_DEV_TREE_OBJECTID && k->type == BTRFS_DEV_EXTENT_KEY) {
		const struct btrfs_dev_extent *de = fs_dev_extent_item(data, size);
		struct seen_dext *d = de ? vec_push(&f->dexts, &f->ndexts, &f->cap_dexts, sizeof(*d)) : NULL;

		if (d)
			*d = (struct seen_dext){ k->objectid, k->offset, get_le64(&de->length),
						 get_le64(&de->chunk_offset), gen };
		f->nomem |= de && !d;
	} else if ((owner == BTRFS_EXTENT_TREE_OBJECTID || owner == BTRFS_BLOCK_GROUP_TREE_OBJECTID) &&
		   k->type == BTRFS_BLOCK_GROUP_ITEM_KEY) {
		const struct btrfs_block_group_item *bi = fs_block_group_item(data, size);
		struct seen_bg *b = bi ? vec_push(&f->bgs, &f->nbgs, &f->cap_bgs, sizeof(*b)) : NULL;

		if (b)
			*b = (struct seen_bg){ k->objectid, k->offset, get_le64(&bi->flags), gen };
		f->nomem |= bi && !b;
	}
}

/* fs_scan_fn: the items of a leaf of the trees that say where chunks are. Leaves newer
 * than the superblock were never committed. */
static int seen_block(void *ctx, const struct fs_device *d, uint64_t physical, const uint8_t *block)
{
	struct found *f = ctx;
	const struct btrfs_header *h = (const struct btrfs_header *)block;
	const struct btrfs_item *items = (const struct btrfs_item *)(h + 1);
	uint64_t gen = get_le64(&h->generation);

	uint64_t owner = get_le64(&h->owner);
	uint32_t n = get_le32(&h->nritems);

	(void)d, (void)physical;
	if (h->level || gen > get_le64(&f->fs->sb.generation) || !n)
		return 0;
	if (owner == BTRFS_CHUNK_TREE_OBJECTID || owner == BTRFS_DEV_TREE_OBJECTID) {
		struct span *sp = vec_push(&f->spans, &f->nspans, &f->cap_spans, sizeof(*sp));

		if (!sp)
			return fs_err(&f->fs->err, -ENOMEM, "out of memory for the device scan");
		*sp = (struct span){ .owner = owner, .gen = gen };
		fs_key_from_disk(&sp->first, &items[0].key);
		fs_key_from_disk(&sp->last, &items[n - 1].key);
	}
	/* fs_block_check verified every item's place inside the block */
	for (uint32_t i = 0; i < n && !f->nomem; i++) {
		struct fs_key k;

		fs_key_from_disk(&k, &items[i].key);
		seen_item(f, owner, gen, &k, (const uint8_t *)(h + 1) + get_le32(&items[i].offset),
			  get_le32(&items[i].size));
	}
	return f->nomem ? fs_err(&f->fs->err, -ENOMEM, "out of memory for the device scan") : 0;
}

/* ---- the newest copy of each key ----------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int chunk_order(const void *a, const void *b)
{
	const struct seen_chunk *x = a, *y = b;

	return cmp_u64(x->logical, y->logical) ? cmp_u64(x->logical, y->logical) : cmp_u64(y->gen, x->gen);
}

static int bg_order(const void *a, const void *b)
{
	const struct seen_bg *x = a, *y = b;

	return cmp_u64(x->logical, y->logical) ? cmp_u64(x->logical, y->logical) : cmp_u64(y->gen, x->gen);
}

static int dext_order(const void *a, const void *b)
{
	const struct seen_dext *x = a, *y = b;

	if (x->devid != y->devid)
		return cmp_u64(x->devid, y->devid);
	return cmp_u64(x->physical, y->physical) ? cmp_u64(x->physical, y->physical) : cmp_u64(y->gen, x->gen);
}

static int dext_chunk_order(const void *a, const void *b)
{
	const struct seen_dext *x = a, *y = b;

	if (x->chunk_offset != y->chunk_offset)
		return cmp_u64(x->chunk_offset, y->chunk_offset);
	return x->devid != y->devid ? cmp_u64(x->devid, y->devid) : cmp_u64(x->physical, y->physical);
}

/* Sorted by key, newest first, only the first of each key kept; same(a, b): one key. */
static size_t newest_of_each(void *v, size_t n, size_t size, int (*order)(const void *, const void *),
			     int (*same)(const void *, const void *), void (*drop)(void *))
{
	uint8_t *base = v;
	size_t kept = 0;

	sort_stable(base, n, size, order);
	for (size_t i = 0; i < n; i++) {
		if (kept && same(base + (kept - 1) * size, base + i * size)) {
			if (drop)
				drop(base + i * size);
			continue;
		}
		memmove(base + kept++ * size, base + i * size, size);
	}
	return kept;
}

static int same_chunk(const void *a, const void *b)
{
	return ((const struct seen_chunk *)a)->logical == ((const struct seen_chunk *)b)->logical;
}

static int same_bg(const void *a, const void *b)
{
	return ((const struct seen_bg *)a)->logical == ((const struct seen_bg *)b)->logical;
}

static int same_dext(const void *a, const void *b)
{
	const struct seen_dext *x = a, *y = b;

	return x->devid == y->devid && x->physical == y->physical;
}

static void drop_chunk(void *c)
{
	free(((struct seen_chunk *)c)->item);
}

/* A newer leaf of the tree spans key without holding it: the item was deleted. */
static int deleted_later(const struct found *f, uint64_t owner, const struct fs_key *key, uint64_t gen)
{
	for (size_t i = 0; i < f->nspans; i++) {
		const struct span *sp = &f->spans[i];

		if (sp->owner == owner && sp->gen > gen && fs_key_cmp(&sp->first, key) <= 0 &&
		    fs_key_cmp(key, &sp->last) <= 0)
			return 1;
	}
	return 0;
}

/* The chunk items and device extents that were deleted taken out (their copies in
 * leaves that copy-on-write left behind). */
static void drop_deleted(struct found *f)
{
	size_t kept = 0;

	for (size_t i = 0; i < f->nchunks; i++) {
		struct fs_key k = { BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, f->chunks[i].logical };

		if (deleted_later(f, BTRFS_CHUNK_TREE_OBJECTID, &k, f->chunks[i].gen))
			drop_chunk(&f->chunks[i]);
		else
			f->chunks[kept++] = f->chunks[i];
	}
	f->nchunks = kept;
	kept = 0;
	for (size_t i = 0; i < f->ndexts; i++) {
		struct fs_key k = { f->dexts[i].devid, BTRFS_DEV_EXTENT_KEY, f->dexts[i].physical };

		if (!deleted_later(f, BTRFS_DEV_TREE_OBJECTID, &k, f->dexts[i].gen))
			f->dexts[kept++] = f->dexts[i];
	}
	f->ndexts = kept;
}

/* ---- chunks from what was found ------------------------------------------------------ */

/* The device extents of the chunk at logical: [*first, *first + return). */
static size_t dexts_of(const struct found *f, uint64_t logical, size_t *first)
{
	size_t lo = lower_bound_u64(f->dexts, f->ndexts, sizeof(*f->dexts), offsetof(struct seen_dext, chunk_offset),
				    logical), n = 0;

	*first = lo;
	while (lo + n < f->ndexts && f->dexts[lo + n].chunk_offset == logical)
		n++;
	return n;
}

/* A found chunk item of logical whose stripes are all among its device extents (and
 * its length and type the block group's, when there is one). */
static const struct seen_chunk *matching_item(const struct found *f, uint64_t logical, const struct seen_bg *bg)
{
	size_t first, n = dexts_of(f, logical, &first);
	size_t lo = lower_bound_u64(f->chunks, f->nchunks, sizeof(*f->chunks), offsetof(struct seen_chunk, logical), logical);
	const struct btrfs_chunk *c;

	if (lo == f->nchunks || f->chunks[lo].logical != logical)
		return NULL;
	c = fs_chunk_item(f->chunks[lo].item, f->chunks[lo].size);
	if (bg && (get_le64(&c->length) != bg->length || get_le64(&c->type) != bg->flags))
		return NULL;
	if (get_le16(&c->num_stripes) != n)
		return NULL;
	for (uint16_t s = 0; s < n; s++) {
		const struct btrfs_stripe *st = fs_chunk_stripe(c, s);
		size_t i = 0;

		while (i < n && (f->dexts[first + i].devid != get_le64(&st->devid) ||
				 f->dexts[first + i].physical != get_le64(&st->offset)))
			i++;
		if (i == n)
			return NULL;
	}
	return &f->chunks[lo];
}

/* Stripes a chunk of these flags has when its copies are all its stripes (0: others). */
static int copies_profile_stripes(uint64_t flags)
{
	uint64_t p = flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (!p)
		return 1;
	if (p == BTRFS_BLOCK_GROUP_DUP || p == BTRFS_BLOCK_GROUP_RAID1)
		return 2;
	if (p == BTRFS_BLOCK_GROUP_RAID1C3)
		return 3;
	return p == BTRFS_BLOCK_GROUP_RAID1C4 ? 4 : 0;
}

/* The chunk of a block group made from its device extents: 0 added, 1 it cannot be. */
static int chunk_from_dexts(struct found *f, const struct seen_bg *bg)
{
	struct fs *fs = f->fs;
	struct fs_chunk_stripe stripes[4];
	struct fs_chunk ch = { bg->logical, bg->length, bg->flags, STRIPE_LEN, 0, 1, stripes };
	uint8_t item[sizeof(struct btrfs_chunk) + 3 * sizeof(struct btrfs_stripe)];
	size_t first, n = dexts_of(f, bg->logical, &first);
	int want = copies_profile_stripes(bg->flags);

	if (!want || n != (size_t)want)
		return 1;
	for (size_t i = 0; i < n; i++) {
		const struct seen_dext *d = &f->dexts[first + i];
		struct fs_device *dev = fs_device_by_id(fs, d->devid);

		/* DUP keeps both copies on one device, RAID1 each on its own */
		if (!dev || d->length != bg->length ||
		    (i && !!(bg->flags & BTRFS_BLOCK_GROUP_DUP) != (d->devid == d[-1].devid)))
			return 1;
		stripes[i] = (struct fs_chunk_stripe){ d->devid, d->physical, { 0 }, dev };
		memcpy(stripes[i].dev_uuid, dev->sb.dev_item.uuid, BTRFS_UUID_SIZE);
	}
	ch.num_stripes = (uint16_t)n;
	return fs_chunk_add(fs, ch.logical, (struct btrfs_chunk *)item, fs_chunk_encode(&ch, fs->sectorsize, item)) ? 1 : 0;
}

/* The chunk of a block group (bg) or of a chunk item without one (bg NULL). */
static void add_chunk(struct found *f, uint64_t logical, const struct seen_bg *bg)
{
	const struct seen_chunk *c;

	if (fs_chunk_find(f->fs, logical))
		return;                 /* a system chunk, or one already added */
	c = matching_item(f, logical, bg);
	if (c && !fs_chunk_add(f->fs, logical, (const struct btrfs_chunk *)c->item, c->size)) {
		f->out->from_items++;
		return;
	}
	if (bg && !chunk_from_dexts(f, bg))
		f->out->made++;
}

/* Block groups still without a chunk: one without device extents was removed (a stale
 * copy) or is beyond reach; one with some is lost. */
static void count_lost(struct found *f)
{
	for (size_t i = 0; i < f->nbgs; i++)
		if (!fs_chunk_find(f->fs, f->bgs[i].logical) && dexts_of(f, f->bgs[i].logical, &(size_t){ 0 }) &&
		    !f->out->lost++)
			f->out->first_lost = f->bgs[i].logical;
}

static int all_devices_open(struct fs *fs)
{
	uint64_t n = 0;

	for (int i = 0; i < fs->num_devs; i++)
		n += fs->devs[i].fd >= 0 && !fs_device_is_seed(fs, &fs->devs[i]);
	return n == get_le64(&fs->sb.num_devices);
}

static int repair_add_chunks(struct fs *fs, void *ctx)
{
	struct found f = { .fs = fs, .out = ctx };
	int ret = 0;

	memset(f.out, 0, sizeof(*f.out));
	if (!all_devices_open(fs))
		return fs_err(&fs->err, -ENODEV, "every device must be present to recover the chunk tree");
	for (int i = 0; i < fs->num_devs && !ret; i++)
		if (fs->devs[i].fd >= 0)
			ret = fs_scan_tree_blocks(fs, &fs->devs[i], seen_block, &f);
	if (!ret) {
		f.nchunks = newest_of_each(f.chunks, f.nchunks, sizeof(*f.chunks), chunk_order, same_chunk, drop_chunk);
		f.nbgs = newest_of_each(f.bgs, f.nbgs, sizeof(*f.bgs), bg_order, same_bg, NULL);
		f.ndexts = newest_of_each(f.dexts, f.ndexts, sizeof(*f.dexts), dext_order, same_dext, NULL);
		drop_deleted(&f);
		sort_stable(f.dexts, f.ndexts, sizeof(*f.dexts), dext_chunk_order);
		for (size_t i = 0; i < f.nbgs; i++)
			add_chunk(&f, f.bgs[i].logical, &f.bgs[i]);
		/* block group items lost with their leaf, or wrong: the chunk items that agree
		 * with their device extents */
		for (size_t i = 0; i < f.nchunks; i++)
			add_chunk(&f, f.chunks[i].logical, NULL);
		count_lost(&f);
		fs_err_clear(&fs->err);
	}
	for (size_t i = 0; i < f.nchunks; i++)
		free(f.chunks[i].item);
	free(f.chunks);
	free(f.bgs);
	free(f.dexts);
	free(f.spans);
	return ret;
}

struct fs *repair_open_chunks(const char *const *paths, int n, const struct fs_wopen_opts *opts,
			      struct repair_chunks *found, struct fs_error *err)
{
	struct fs_wopen_opts o = *opts;

	o.open.add_chunks = repair_add_chunks;
	o.open.add_chunks_ctx = found;
	return fs_wopen(paths, n, &o, err);
}

/* ---- the chunk tree made anew ---------------------------------------------------------- */

static uint64_t device_bytes_used(const struct fs *fs, uint64_t devid)
{
	uint64_t used = 0;

	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++)
			if (fs->chunks[i].stripes[s].devid == devid)
				used += fs_chunk_stripe_length(&fs->chunks[i]);
	return used;
}

int rebuild_chunk_tree(struct rp *rp)
{
	struct fs *fs = rp->fs;
	uint8_t *item = malloc(fs_chunk_item_size(0xffff));
	int ret = item ? fs_tree_renew(fs, BTRFS_CHUNK_TREE_OBJECTID) : fs_err(&fs->err, -ENOMEM, "out of memory");

	for (int i = 0; i < fs->num_devs && !ret; i++) {
		const struct fs_device *d = &fs->devs[i];
		struct btrfs_dev_item di = d->sb.dev_item;

		if (d->fd < 0 || fs_device_is_seed(fs, d))
			continue;
		put_le64(&di.bytes_used, device_bytes_used(fs, d->devid));
		ret = fs_item_insert(fs, BTRFS_CHUNK_TREE_OBJECTID,
				     &(struct fs_key){ BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid }, &di, sizeof(di));
	}
	/* a stripe names its device by devid and uuid: the device's uuid (the kernel finds
	 * no device by another) */
	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++) {
			const struct fs_device *d = fs_device_by_id(fs, fs->chunks[i].stripes[s].devid);

			if (d)
				memcpy(fs->chunks[i].stripes[s].dev_uuid, d->uuid, BTRFS_UUID_SIZE);
		}
	for (int i = 0; i < fs->num_chunks && !ret; i++)
		ret = fs_item_insert(fs, BTRFS_CHUNK_TREE_OBJECTID,
				     &(struct fs_key){ BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, fs->chunks[i].logical },
				     item, fs_chunk_encode(&fs->chunks[i], fs->sectorsize, item));
	free(item);
	if (!ret)
		say(rp, "chunk tree made anew: %d chunks, %d devices", fs->num_chunks, fs->num_devs);
	return ret;
}
#endif
