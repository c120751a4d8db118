//build:Oz
/* New chunks for tree blocks when the metadata block groups are full.
 *
 * A chunk (CHUNK_ITEM in the chunk tree) maps logical space onto one stripe per copy;
 * each stripe is a device extent (DEV_EXTENT in the device tree) that its device item
 * counts in bytes_used; its block group (BLOCK_GROUP_ITEM) counts what is used and,
 * with the free space tree, a FREE_SPACE_INFO and free extents say what is free.
 * wchunk_new puts the chunk in the chunk map at once, so that the allocation that
 * needed it goes on; wchunk_flush makes its items at the next step of the commit,
 * when no change of another tree is half done. */
//config:config WRITE_NEW_CHUNKS
//config:	bool "New metadata chunks when metadata is full"
//config:	default y
//config:	help
//config:	  Changes of an unmounted filesystem (check --repair, rescue, resize)
//config:	  that need more tree blocks than the metadata block groups hold get a
//config:	  new chunk on the devices' free space (single, DUP, RAID1/1C3/1C4);
//config:	  without it they stop with "no free metadata space". mkfs sizes its
//config:	  own chunks and does not need it.
#include "config.h"
#include "internal.h"
#include "util/le.h"
#include "util/vec.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1ULL << 20)
#define DEV_RESERVED MIB                /* the kernel allocates nothing below 1 MiB */
#define STRIPE_LEN 65536ULL

/* Where device d has room: outside the stripes of the chunk map and the device
 * extents of the device tree (orphans too), from 1 MiB to the size its item gives.
 * The largest free range [*start, +*len). */
static int largest_hole(struct fs *fs, const struct fs_device *d, uint64_t *start, uint64_t *len)
{
	struct fs_key k = { d->devid, BTRFS_DEV_EXTENT_KEY, 0 };
	uint64_t end = get_le64(&d->sb.dev_item.total_bytes), pos = DEV_RESERVED;
	struct ranges used = { 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = 0;

	for (int i = 0; i < fs->num_chunks && !ret; i++)
		for (uint16_t s = 0; s < fs->chunks[i].num_stripes && !ret; s++)
			if (fs->chunks[i].stripes[s].devid == d->devid)
				ret = ranges_add(&used, fs->chunks[i].stripes[s].offset,
						 fs->chunks[i].stripes[s].offset + fs_chunk_stripe_length(&fs->chunks[i]));
	fs_path_init(&p);
	if (!ret && !(ret = fs_root_lookup(fs, BTRFS_DEV_TREE_OBJECTID, &root)))
		for (ret = fs_search(fs, &root, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
			const struct btrfs_dev_extent *de;
			uint32_t size;
			uint64_t len;

			fs_path_key(&p, &k);
			if (k.objectid != d->devid || k.type != BTRFS_DEV_EXTENT_KEY)
				break;
			de = fs_dev_extent_item(fs_path_data(&p, &size), size);
			len = de ? get_le64(&de->length) : 0;
			/* (a damaged length reaches no further than the end of the address space) */
			if (len > UINT64_MAX - k.offset)
				len = UINT64_MAX - k.offset;
			if (de && (ret = ranges_add(&used, k.offset, k.offset + len)))
				break;
		}
	fs_path_release(fs, &p);
	*len = 0;
	for (size_t i = 0; ret >= 0 && i <= used.n; i++) {
		uint64_t stop = i < used.n ? used.v[i].start : end;

		if (stop > pos && stop - pos > *len) {
			*start = pos;
			*len = stop - pos;
		}
		if (i < used.n && used.v[i].end > pos)
			pos = used.v[i].end;
	}
	free(used.v);
	return ret == -ENOMEM ? fs_err(&fs->err, -ENOMEM, "out of memory") : ret < 0 ? ret : 0;
}

/* The newest chunk of the kind: its type is the new one's (mixed groups stay mixed). */
static const struct fs_chunk *newest_of_kind(const struct fs *fs, uint64_t kind)
{
	const struct fs_chunk *c = NULL;

	for (int i = 0; i < fs->num_chunks; i++)
		if (fs->chunks[i].type & kind && !(fs->chunks[i].type & BTRFS_BLOCK_GROUP_SYSTEM))
			c = &fs->chunks[i];
	return c;
}

/* Copies of the profile: how many devices, stripes on each. 0: not made here. */
static int profile_copies(uint64_t type, int *devices, int *per_device)
{
	uint64_t p = type & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	*per_device = p == BTRFS_BLOCK_GROUP_DUP ? 2 : 1;
	*devices = !p || p == BTRFS_BLOCK_GROUP_DUP ? 1 : p == BTRFS_BLOCK_GROUP_RAID1 ? 2 :
		   p == BTRFS_BLOCK_GROUP_RAID1C3 ? 3 : p == BTRFS_BLOCK_GROUP_RAID1C4 ? 4 : 0;
	return *devices;
}

/* As the kernel sizes metadata chunks: 256 MiB (1 GiB above 50 GiB), at most a tenth
 * of the filesystem. */
static uint64_t wanted_stripe(const struct fs *fs)
{
	uint64_t total = get_le64(&fs->sb.total_bytes);
	uint64_t want = total > (50ULL << 30) ? 1ULL << 30 : 256 * MIB;

	if (want > total / 10)
		want = total / 10 / MIB * MIB;
	return want;
}

struct pick { struct fs_device *d; uint64_t start, len; };

/* best[] (at most max, largest hole first) with p in it if it is among the largest. */
static void keep_largest(struct pick *best, int *n, int max, struct pick p)
{
	int at = *n;

	if (at == max) {
		if (best[max - 1].len >= p.len)
			return;
		at = max - 1;
	} else {
		(*n)++;
	}
	for (; at > 0 && best[at - 1].len < p.len; at--)
		best[at] = best[at - 1];
	best[at] = p;
}

/* The devices with the most room, one per copy (DUP: both stripes on one, one after
 * the other); stripes as large as wanted and as the smallest of those holes allows. */
static int place_stripes(struct fs *fs, struct fs_chunk *c, int ndev, int per_dev)
{
	uint64_t stripe = wanted_stripe(fs);
	struct pick best[4];
	int n = 0, ret;

	for (int i = 0; i < fs->num_devs; i++) {
		struct pick p = { &fs->devs[i], 0, 0 };
		uint64_t skip;

		if (p.d->fd < 0 || fs_device_is_seed(fs, p.d))
			continue;
		if ((ret = largest_hole(fs, p.d, &p.start, &p.len)))
			return ret;
		skip = (STRIPE_LEN - p.start % STRIPE_LEN) % STRIPE_LEN;
		if (p.len <= skip)
			continue;
		p.start += skip;
		p.len -= skip;
		keep_largest(best, &n, ndev, p);
	}
	if (n < ndev)
		return -ENOSPC;
	for (int i = 0; i < ndev; i++)
		if (best[i].len / (uint64_t)per_dev < stripe)
			stripe = best[i].len / (uint64_t)per_dev / MIB * MIB;
	if (stripe < MIB || stripe < 16ULL * fs->nodesize)
		return -ENOSPC;
	c->num_stripes = (uint16_t)(ndev * per_dev);
	c->sub_stripes = 1;
	c->stripes = calloc(c->num_stripes, sizeof(*c->stripes));
	if (!c->stripes)
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	for (int i = 0; i < c->num_stripes; i++) {
		const struct pick *p = &best[i / per_dev];

		c->stripes[i].devid = p->d->devid;
		c->stripes[i].offset = p->start + (uint64_t)(i % per_dev) * stripe;
		memcpy(c->stripes[i].dev_uuid, p->d->uuid, BTRFS_UUID_SIZE);
	}
	c->length = stripe;
	return 0;
}

int wchunk_new(struct fs *fs, uint64_t kind)
{
	struct fs_wstate *w = fs->w;
	const struct fs_chunk *like = newest_of_kind(fs, kind);
	struct fs_chunk c = { 0 };
	uint8_t item[sizeof(struct btrfs_chunk) + 8 * sizeof(struct btrfs_stripe)];
	uint32_t size;
	int ndev, per_dev, ret;

	if (!like || !profile_copies(like->type, &ndev, &per_dev))
		return -ENOSPC;
	c.type = like->type;
	c.stripe_len = STRIPE_LEN;
	ret = place_stripes(fs, &c, ndev, per_dev);
	if (ret)
		return ret;
	/* logical space after every chunk */
	for (int i = 0; i < fs->num_chunks; i++)
		if (fs->chunks[i].logical + fs->chunks[i].length > c.logical)
			c.logical = fs->chunks[i].logical + fs->chunks[i].length;
	size = fs_chunk_encode(&c, fs->sectorsize, item);
	free(c.stripes);
	ret = vec_reserve(&w->new_chunks, &w->cap_new_chunks, w->nnew_chunks + 1, sizeof(*w->new_chunks)) ?
	      fs_err(&fs->err, -ENOMEM, "out of memory") :
	      fs_chunk_add(fs, c.logical, (const struct btrfs_chunk *)item, size);
	if (!ret)
		w->new_chunks[w->nnew_chunks++] = c.logical;
	return ret ? ret : sb_stripes_add(fs, fs_chunk_find(fs, c.logical));
}

/* ---- the items of a new chunk ------------------------------------------------------- */

static int add_dev_extent(struct fs *fs, const struct fs_chunk *c, const struct fs_chunk_stripe *s)
{
	struct fs_key k = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, s->devid };
	uint64_t len = fs_chunk_stripe_length(c);
	struct btrfs_dev_extent de = { 0 };
	struct btrfs_dev_item *di;
	struct fs_device *d;
	uint32_t size;
	int ret;

	put_le64(&de.chunk_tree, BTRFS_CHUNK_TREE_OBJECTID);
	put_le64(&de.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	put_le64(&de.chunk_offset, c->logical);
	put_le64(&de.length, len);
	memcpy(de.chunk_tree_uuid, fs->w->chunk_uuid, BTRFS_UUID_SIZE);
	ret = fs_item_insert(fs, BTRFS_DEV_TREE_OBJECTID, &(struct fs_key){ s->devid, BTRFS_DEV_EXTENT_KEY, s->offset },
			     &de, sizeof(de));
	if (ret)
		return ret;
	di = (struct btrfs_dev_item *)fs_item_mut(fs, BTRFS_CHUNK_TREE_OBJECTID, &k, &size);
	if (!di || size < sizeof(*di))
		return di ? fs_err(&fs->err, -EUCLEAN, "device item %llu too short", (unsigned long long)s->devid) :
			    fs->err.code;
	put_le64(&di->bytes_used, get_le64(&di->bytes_used) + len);
	/* each device's superblock holds a copy of its own item */
	d = fs_device_by_id(fs, s->devid);
	if (d)
		d->sb.dev_item = *di;
	if (get_le64(&fs->sb.dev_item.devid) == s->devid)
		fs->sb.dev_item = *di;
	return 0;
}

static int add_chunk_items(struct fs *fs, const struct fs_chunk *c)
{
	uint8_t item[sizeof(struct btrfs_chunk) + 8 * sizeof(struct btrfs_stripe)];
	struct btrfs_block_group_item bg = { 0 };
	int ret = fs_item_insert(fs, BTRFS_CHUNK_TREE_OBJECTID,
				 &(struct fs_key){ BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, c->logical },
				 item, fs_chunk_encode(c, fs->sectorsize, item));

	for (uint16_t s = 0; s < c->num_stripes && !ret; s++)
		ret = add_dev_extent(fs, c, &c->stripes[s]);
	put_le64(&bg.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	put_le64(&bg.flags, c->type);
	if (!ret)
		ret = fs_item_insert(fs, fs_block_group_tree_id(fs),
				     &(struct fs_key){ c->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, c->length }, &bg, sizeof(bg));
	/* all free; what is allocated in it is taken by the space changes that follow */
	if (!ret && get_le64(&fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE && !fs->w->fst_rebuild)
		ret = fst_add_group(fs, c);
	return ret;
}

int wchunk_flush(struct fs *fs, int *did)
{
	struct fs_wstate *w = fs->w;
	int ret = 0;

	while (w->nflushed_chunks < w->nnew_chunks && !ret) {
		const struct fs_chunk *c = fs_chunk_find(fs, w->new_chunks[w->nflushed_chunks++]);

		ret = c ? add_chunk_items(fs, c) : fs_err(&fs->err, -EUCLEAN, "new chunk lost from the map");
		*did = 1;
	}
	return ret;
}

void wchunk_end(struct fs *fs, int keep)
{
	struct fs_wstate *w = fs->w;

	for (size_t i = 0; !keep && i < w->nnew_chunks; i++)
		fs_chunk_remove(fs, w->new_chunks[i]);
	w->nnew_chunks = w->nflushed_chunks = 0;
}
