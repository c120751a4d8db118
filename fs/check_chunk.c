/* Stage 2, allocation side: block group items vs chunks, device extents vs
 * chunk stripes, device items vs their extents and the superblock. All of these
 * are small (one chunk per GiB or so), so they are held in memory. */
#include "check_internal.h"
#include "le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BG_TYPE_MASK (BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_PROFILE_MASK)

static int bg_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		      uint32_t size, void *arg)
{
	const struct btrfs_block_group_item *bi;
	struct check_bg *bg;
	int *cap = arg;

	if (key->type != BTRFS_BLOCK_GROUP_ITEM_KEY)
		return 0;
	bi = fs_block_group_item(data, size);
	if (!bi) {
		ck_err(c, 0, 0, key->objectid, key->offset, "block group item [%llu %llu] is too short",
		       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		return 0;
	}
	if (c->nbgs == *cap) {
		int nc = *cap ? *cap * 2 : 64;
		void *p = realloc(c->bgs, (size_t)nc * sizeof(*c->bgs));
		if (!p)
			return -ENOMEM;
		c->bgs = p;
		*cap = nc;
	}
	bg = &c->bgs[c->nbgs++];
	bg->start = key->objectid;
	bg->len = key->offset;
	bg->flags = get_le64(&bi->flags);
	bg->used_item = get_le64(&bi->used);
	bg->used_found = 0;
	if (bg->used_item > bg->len)
		ck_err(c, 0, 0, bg->start, bg->len,
		       "block group [%llu %llu] invalid used, have %llu expect [0, %llu)",
		       (unsigned long long)bg->start, (unsigned long long)bg->len,
		       (unsigned long long)bg->used_item, (unsigned long long)bg->len);
	if (c->nbgs > 1 && bg->start < bg[-1].start + bg[-1].len)
		ck_err(c, 0, 0, bg->start, bg->len, "block group [%llu %llu] overlaps the previous one",
		       (unsigned long long)bg->start, (unsigned long long)bg->len);
	return 0;
}

static int load_block_groups(struct check_ctx *c)
{
	struct fs_root r;
	struct fs_key from = { 0, 0, 0 };
	int cap = 0;

	if (fs_root_lookup(c->fs, fs_block_group_tree_id(c->fs), &r) < 0) {
		ck_fs_error(c, &c->fs->err);
		return 0;
	}
	return ck_iterate(c, &r, &from, bg_item_cb, &cap);
}

/* Every chunk has its block group item and the other way round. */
static void check_chunk_bgs(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	int i = 0, j = 0;

	while (i < fs->num_chunks || j < c->nbgs) {
		const struct fs_chunk *ch = i < fs->num_chunks ? &fs->chunks[i] : NULL;
		struct check_bg *bg = j < c->nbgs ? &c->bgs[j] : NULL;

		if (ch && (!bg || ch->logical < bg->start)) {
			ck_err(c, 0, 0, ch->logical, ch->length,
			       "chunk[%llu %llu] has no block group item",
			       (unsigned long long)ch->logical,
			       (unsigned long long)(ch->logical + ch->length));
			i++;
			continue;
		}
		if (!ch || bg->start < ch->logical) {
			ck_err(c, 0, 0, bg->start, bg->len, "block group [%llu %llu] has no chunk",
			       (unsigned long long)bg->start, (unsigned long long)bg->len);
			j++;
			continue;
		}
		if (ch->length != bg->len || (ch->type & BG_TYPE_MASK) != (bg->flags & BG_TYPE_MASK))
			ck_err(c, 0, 0, bg->start, bg->len,
			       "chunk[%llu %llu] type 0x%llx does not match its block group [%llu %llu] flags 0x%llx",
			       (unsigned long long)ch->logical, (unsigned long long)(ch->logical + ch->length),
			       (unsigned long long)ch->type, (unsigned long long)bg->start,
			       (unsigned long long)bg->len, (unsigned long long)bg->flags);
		i++;
		j++;
	}
}

/* Bytes one stripe of a chunk takes on its device. */
static uint64_t stripe_length(const struct fs_chunk *ch)
{
	uint64_t t = ch->type & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	uint64_t n = ch->num_stripes ? ch->num_stripes : 1;

	if (t & BTRFS_BLOCK_GROUP_RAID0)
		return ch->length / n;
	if (t & BTRFS_BLOCK_GROUP_RAID10)
		return ch->length * (ch->sub_stripes ? ch->sub_stripes : 2) / n;
	if (t & BTRFS_BLOCK_GROUP_RAID5)
		return n > 1 ? ch->length / (n - 1) : ch->length;
	if (t & BTRFS_BLOCK_GROUP_RAID6)
		return n > 2 ? ch->length / (n - 2) : ch->length;
	return ch->length;
}

struct dev_state {
	uint64_t devid, total_bytes, bytes_used;
	uint64_t extents_bytes, last_end;
};

struct devs {
	struct dev_state *d;
	int n, cap;
	uint8_t **matched;      /* per chunk, per stripe */
};

static struct dev_state *dev_find(struct devs *ds, uint64_t devid)
{
	for (int i = 0; i < ds->n; i++)
		if (ds->d[i].devid == devid)
			return &ds->d[i];
	return NULL;
}

static int dev_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		       uint32_t size, void *arg)
{
	struct devs *ds = arg;
	const struct btrfs_dev_item *di;
	struct dev_state *d;

	if (key->objectid != BTRFS_DEV_ITEMS_OBJECTID || key->type != BTRFS_DEV_ITEM_KEY)
		return key->objectid > BTRFS_DEV_ITEMS_OBJECTID;
	di = fs_dev_item(data, size);
	if (!di) {
		ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0, "device item %llu is too short",
		       (unsigned long long)key->offset);
		return 0;
	}
	if (ds->n == ds->cap) {
		int nc = ds->cap ? ds->cap * 2 : 8;
		void *p = realloc(ds->d, (size_t)nc * sizeof(*ds->d));
		if (!p)
			return -ENOMEM;
		ds->d = p;
		ds->cap = nc;
	}
	d = &ds->d[ds->n++];
	memset(d, 0, sizeof(*d));
	d->devid = get_le64(&di->devid);
	d->total_bytes = get_le64(&di->total_bytes);
	d->bytes_used = get_le64(&di->bytes_used);
	if (d->devid != key->offset)
		ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0, "device item %llu says devid %llu",
		       (unsigned long long)key->offset, (unsigned long long)d->devid);
	return 0;
}

static void match_dev_extent(struct check_ctx *c, struct devs *ds, uint64_t devid, uint64_t physical,
			     uint64_t chunk_offset, uint64_t length)
{
	struct fs *fs = c->fs;

	for (int i = 0; i < fs->num_chunks; i++) {
		const struct fs_chunk *ch = &fs->chunks[i];

		if (ch->logical != chunk_offset)
			continue;
		for (int s = 0; s < ch->num_stripes; s++) {
			if (ch->stripes[s].devid != devid || ch->stripes[s].offset != physical)
				continue;
			if (ds->matched[i][s])
				break;
			ds->matched[i][s] = 1;
			if (length != stripe_length(ch))
				ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, chunk_offset, length,
				       "device extent [%llu, %llu, %llu] length does not match chunk %llu stripe length %llu",
				       (unsigned long long)devid, (unsigned long long)physical,
				       (unsigned long long)length, (unsigned long long)chunk_offset,
				       (unsigned long long)stripe_length(ch));
			return;
		}
		break;
	}
	ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, chunk_offset, length,
	       "device extent [%llu, %llu, %llu] has no matching chunk stripe (chunk %llu)",
	       (unsigned long long)devid, (unsigned long long)physical, (unsigned long long)length,
	       (unsigned long long)chunk_offset);
}

static int dev_extent_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			 uint32_t size, void *arg)
{
	struct devs *ds = arg;
	const struct btrfs_dev_extent *de;
	struct dev_state *d;
	uint64_t len;

	if (key->type != BTRFS_DEV_EXTENT_KEY)
		return 0;
	de = fs_dev_extent_item(data, size);
	if (!de) {
		ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, 0, 0, "device extent [%llu %llu] is too short",
		       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		return 0;
	}
	len = get_le64(&de->length);
	d = dev_find(ds, key->objectid);
	if (!d) {
		ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, key->offset, len,
		       "device extent [%llu %llu] belongs to no device item",
		       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		return 0;
	}
	if (key->offset < d->last_end)
		ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, key->offset, len,
		       "device extent [%llu %llu] overlaps the previous one ending at %llu",
		       (unsigned long long)key->objectid, (unsigned long long)key->offset,
		       (unsigned long long)d->last_end);
	if (key->offset + len > d->total_bytes)
		ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, key->offset, len,
		       "device extent [%llu %llu %llu] goes beyond the device size %llu",
		       (unsigned long long)key->objectid, (unsigned long long)key->offset,
		       (unsigned long long)len, (unsigned long long)d->total_bytes);
	d->last_end = key->offset + len;
	d->extents_bytes += len;
	match_dev_extent(c, ds, key->objectid, key->offset, get_le64(&de->chunk_offset), len);
	return 0;
}

static void check_devices(struct check_ctx *c, struct devs *ds)
{
	struct fs *fs = c->fs;
	uint64_t sum = 0, super_devs = get_le64(&fs->sb.num_devices);

	for (int i = 0; i < ds->n; i++) {
		struct dev_state *d = &ds->d[i];
		struct fs_device *fd = fs_device_by_id(fs, d->devid);

		sum += d->total_bytes;
		if (d->extents_bytes != d->bytes_used)
			ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			       "device %llu bytes_used %llu does not match its device extents (%llu)",
			       (unsigned long long)d->devid, (unsigned long long)d->bytes_used,
			       (unsigned long long)d->extents_bytes);
		if (d->total_bytes % fs->sectorsize)
			ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			       "unaligned total_bytes detected for devid %llu, have %llu should be aligned to %u",
			       (unsigned long long)d->devid, (unsigned long long)d->total_bytes,
			       fs->sectorsize);
		if (fd && fd->fd >= 0 && fd->size && d->total_bytes > fd->size)
			ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			       "device %llu is %llu bytes but its item says %llu",
			       (unsigned long long)d->devid, (unsigned long long)fd->size,
			       (unsigned long long)d->total_bytes);
	}
	if (super_devs != (uint64_t)ds->n)
		ck_err(c, 0, 0, 0, 0, "super num devices mismatch, have %llu expect %d",
		       (unsigned long long)super_devs, ds->n);
	if (ds->n && sum != get_le64(&fs->sb.total_bytes))
		ck_err(c, 0, 0, 0, 0, "super total bytes %llu does not match the devices' total %llu",
		       (unsigned long long)get_le64(&fs->sb.total_bytes), (unsigned long long)sum);
	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++)
			if (!ds->matched[i][s])
				ck_err(c, BTRFS_DEV_TREE_OBJECTID, 0, fs->chunks[i].logical, 0,
				       "chunk[%llu %llu] stripe %d (devid %llu offset %llu) has no device extent",
				       (unsigned long long)fs->chunks[i].logical,
				       (unsigned long long)(fs->chunks[i].logical + fs->chunks[i].length),
				       s, (unsigned long long)fs->chunks[i].stripes[s].devid,
				       (unsigned long long)fs->chunks[i].stripes[s].offset);
}

int check_chunks_and_devices(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	struct devs ds = { 0 };
	struct fs_root chunk_root, dev_root;
	struct fs_key from = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0 };
	struct fs_key zero = { 0, 0, 0 };
	int ret;

	ret = load_block_groups(c);
	if (ret < 0)
		return ret;
	check_chunk_bgs(c);
	if (fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk_root) < 0 ||
	    fs_root_lookup(fs, BTRFS_DEV_TREE_OBJECTID, &dev_root) < 0) {
		ck_fs_error(c, &fs->err);
		return 0;
	}
	ds.matched = calloc(fs->num_chunks ? fs->num_chunks : 1, sizeof(*ds.matched));
	if (!ds.matched)
		return -ENOMEM;
	for (int i = 0; i < fs->num_chunks; i++) {
		ds.matched[i] = calloc(fs->chunks[i].num_stripes + 1, 1);
		if (!ds.matched[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = ck_iterate(c, &chunk_root, &from, dev_item_cb, &ds);
	if (ret >= 0)
		ret = ck_iterate(c, &dev_root, &zero, dev_extent_cb, &ds);
	if (ret >= 0)
		check_devices(c, &ds);
out:
	for (int i = 0; i < fs->num_chunks; i++)
		free(ds.matched[i]);
	free(ds.matched);
	free(ds.d);
	return ret < 0 ? ret : 0;
}
