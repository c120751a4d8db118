//build:Oz
/* Stage 2, allocation side: block group items vs chunks, device extents vs
 * chunk stripes, device items vs their extents and the superblock. All of these
 * are small (one chunk per GiB or so), so they are held in memory. */
#include "config.h"
#include "internal.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int bg_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		      uint32_t size, void *arg)
{
	const struct btrfs_block_group_item *bi;
	struct check_bg *bg;
	int *cap = arg;

	if (key->type != BTRFS_BLOCK_GROUP_ITEM_KEY)
		return 0;
	bi = fs_block_group_item(data, size);
	if (!bi || size != sizeof(*bi) || !key->offset) {
		/* the block group items are made anew */
		ck_err(c, fs_block_group_tree_id(c->fs), 0, key->objectid, key->offset,
		       "block group item [%llu %llu] has size %u, not %zu", (unsigned long long)key->objectid,
		       (unsigned long long)key->offset, size, sizeof(*bi));
		return 0;
	}
	if (get_le64(&bi->chunk_objectid) != BTRFS_FIRST_CHUNK_TREE_OBJECTID)
		ck_err_fix(c, CHECK_FIX_SPACE_USED, 0, 0, key->objectid, key->offset,
			   "block group [%llu %llu] invalid chunk objectid, have %llu expect %llu",
			   (unsigned long long)key->objectid, (unsigned long long)key->offset,
			   (unsigned long long)get_le64(&bi->chunk_objectid),
			   (unsigned long long)BTRFS_FIRST_CHUNK_TREE_OBJECTID);
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
		ck_err_fix(c, CHECK_FIX_SPACE_USED, 0, 0, bg->start, bg->len,
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
		/* a lost block group tree is made anew (a lost extent tree said already) */
		if (c->fs->err.code != -ENOENT)
			ck_fs_error(c, &c->fs->err, NULL);
		else if (fs_block_group_tree_id(c->fs) != BTRFS_EXTENT_TREE_OBJECTID)
			ck_err(c, BTRFS_BLOCK_GROUP_TREE_OBJECTID, 0, 0, 0, "no block group tree root item");
		return 0;
	}
	return ck_iterate(c, &r, &from, bg_item_cb, &cap);
}

/* Every chunk has its block group item and the other way round (the
 * reference's words: chunk items are [FIRST_CHUNK_TREE CHUNK_ITEM logical]). */
static void say_mismatch(struct check_ctx *c, const struct fs_chunk *ch, const struct check_bg *bg, enum check_fix fix)
{
	unsigned long long cl = ch->logical;

	ck_err_fix(c, fix, fix == CHECK_FIX_DELETE ? fs_block_group_tree_id(c->fs) : 0, 0, bg->start, bg->len,
		   "Chunk[256, 228, %llu]: length(%llu), offset(%llu), type(%llu) mismatch with block group[%llu, 192, %llu]: offset(%llu), objectid(%llu), flags(%llu)",
		   cl, (unsigned long long)ch->length, cl, (unsigned long long)ch->type, (unsigned long long)bg->start,
		   (unsigned long long)bg->len, (unsigned long long)bg->len, (unsigned long long)bg->start,
		   (unsigned long long)bg->flags);
}

/* Each stripe names a device the kernel finds: its devid with that device's uuid. */
static void check_stripe_devices(struct check_ctx *c)
{
	struct fs *fs = c->fs;

	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++) {
			const struct fs_chunk_stripe *st = &fs->chunks[i].stripes[s];
			const struct fs_device *d = fs_device_by_id(fs, st->devid);

			if (d && memcmp(d->uuid, st->dev_uuid, BTRFS_UUID_SIZE))
				ck_err_fix(c, CHECK_FIX_CHUNK_TREE, BTRFS_CHUNK_TREE_OBJECTID, 0, fs->chunks[i].logical, 0,
					   "Chunk[256, 228, %llu] stripe %d: device %llu has another uuid",
					   (unsigned long long)fs->chunks[i].logical, s, (unsigned long long)st->devid);
		}
}

static void check_chunk_bgs(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	int i = 0, j = 0;

	while (i < fs->num_chunks || j < c->nbgs) {
		const struct fs_chunk *ch = i < fs->num_chunks ? &fs->chunks[i] : NULL;
		struct check_bg *bg = j < c->nbgs ? &c->bgs[j] : NULL;
		unsigned long long cl = ch ? ch->logical : 0, clen = ch ? ch->length : 0;
		unsigned long long ct = ch ? ch->type : 0;

		if (ch && (!bg || ch->logical < bg->start)) {
			/* the block group item is made again for its chunk */
			ck_err_fix(c, CHECK_FIX_SPACE_USED, 0, 0, cl, clen,
			       "Chunk[256, 228, %llu]: length(%llu), offset(%llu), type(%llu) is not found in block group",
			       cl, clen, cl, ct);
			i++;
			continue;
		}
		if (!ch || bg->start < ch->logical) {
			j++;            /* said with the device extents known */
			continue;
		}
		/* a length that differs is said with the device extents known */
		if (ch->length == bg->len && ch->type != bg->flags)
			say_mismatch(c, ch, bg, CHECK_FIX_SPACE_USED);
		i++;
		j++;
	}
}

struct dev_state {
	uint64_t devid, total_bytes, bytes_used;
	uint64_t extents_bytes, last_end;
};

struct devs {
	struct dev_state *d;
	int n, cap;
	uint8_t **matched;      /* per chunk, per stripe */
	uint8_t *bg_named;      /* per block group: a device extent names it */
	uint8_t *len_bad;       /* per chunk: a device extent of another length */
};

static struct dev_state *dev_find(struct devs *ds, uint64_t devid)
{
	for (int i = 0; i < ds->n; i++)
		if (ds->d[i].devid == devid)
			return &ds->d[i];
	return NULL;
}

static int chunk_tree_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		       uint32_t size, void *arg)
{
	struct devs *ds = arg;
	const struct btrfs_dev_item *di;
	struct dev_state *d;

	if (key->objectid == BTRFS_FIRST_CHUNK_TREE_OBJECTID && key->type == BTRFS_CHUNK_ITEM_KEY)
		return 0;       /* in the chunk map: the open read them */
	if (key->objectid != BTRFS_DEV_ITEMS_OBJECTID || key->type != BTRFS_DEV_ITEM_KEY) {
		ck_err_fix(c, CHECK_FIX_CHUNK_TREE, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			   "chunk tree item (%llu %u %llu) is neither a device nor a chunk item",
			   (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset);
		return 0;
	}
	di = fs_dev_item(data, size);
	if (!di) {
		ck_err_fix(c, CHECK_FIX_CHUNK_TREE, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0, "device item %llu is too short",
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
		ck_err_fix(c, CHECK_FIX_CHUNK_TREE, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0, "device item %llu says devid %llu",
		       (unsigned long long)key->offset, (unsigned long long)d->devid);
	return 0;
}

#define PROBE_BLOCKS 64

/* How many of the first PROBE_BLOCKS tree blocks of a stripe of metadata chunk ch verify
 * when the stripe starts at physical on the device (a copy of a SINGLE, DUP or RAID1*
 * chunk: its block at stripe offset x has bytenr logical + x); -1: not a chunk whose
 * blocks can be found so (data, striped, or on no known device). */
static int chunk_blocks_at(struct fs *fs, const struct fs_chunk *ch, uint64_t devid, uint64_t physical)
{
	uint64_t whole = BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID10 | BTRFS_BLOCK_GROUP_RAID5 |
			 BTRFS_BLOCK_GROUP_RAID6;
	struct fs_device *dev = fs_device_by_id(fs, devid);
	uint8_t *buf;
	int found = 0;

	if (!dev || (ch->type & whole) || !(ch->type & (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM)) ||
	    !(buf = malloc(fs->nodesize)))
		return -1;
	for (uint64_t x = 0; x < ch->length && x < (uint64_t)PROBE_BLOCKS * fs->nodesize; x += fs->nodesize) {
		struct fs_block_ctx ctx = { fs->nodesize, fs->csum_type, fs->meta_uuid, ch->logical + x, 0 };

		found += !fs_read_phys(dev, physical + x, buf, fs->nodesize) && !fs_block_check(buf, &ctx, NULL, NULL);
	}
	free(buf);
	return found;
}

/* A device extent that names its chunk at another place on the device than the chunk's
 * stripes there: either key may be damaged. The extent's is taken for damaged when none
 * of the chunk's blocks verify at its place and they do at one of the chunk's stripes. */
static int chunk_stripe_holds(struct check_ctx *c, const struct fs_chunk *ch, uint64_t devid, uint64_t physical)
{
	if (chunk_blocks_at(c->fs, ch, devid, physical) != 0)
		return 0;
	for (int s = 0; s < ch->num_stripes; s++)
		if (ch->stripes[s].devid == devid && ch->stripes[s].offset != physical &&
		    chunk_blocks_at(c->fs, ch, devid, ch->stripes[s].offset) > 0)
			return 1;
	return 0;
}

/* The chunk stripe a device extent stands for (found through its chunk). misplaced:
 * the extent names no device or its key is suspect (dev_extent_cb), or (found here, for
 * the repair's choice) its chunk's blocks are where the chunk says, not where the extent
 * does. */
static void match_dev_extent(struct check_ctx *c, struct devs *ds, uint64_t devid, uint64_t physical,
			     uint64_t chunk_offset, uint64_t length, int misplaced)
{
	struct fs *fs = c->fs;
	const struct fs_chunk *ch = fs_chunk_find(fs, chunk_offset);
	const struct check_bg *bg;

	if (ch && ch->logical == chunk_offset) {
		for (int s = 0; s < ch->num_stripes; s++) {
			uint8_t *m = &ds->matched[ch - fs->chunks][s];

			if (ch->stripes[s].devid != devid || ch->stripes[s].offset != physical || *m)
				continue;
			*m = 1;
			ds->len_bad[ch - fs->chunks] |= length != fs_chunk_stripe_length(ch);
			if (CFG_CHECK_REPAIR && length != fs_chunk_stripe_length(ch)) {
				c->fix_key = (struct fs_key){ devid, BTRFS_DEV_EXTENT_KEY, physical };
				c->fix_value[0] = fs_chunk_stripe_length(ch);
			}
			if (length != fs_chunk_stripe_length(ch))
				ck_err_fix(c, CHECK_FIX_DEV_EXTENT, BTRFS_DEV_TREE_OBJECTID, 0, chunk_offset, length,
				       "Chunk[256, 228, %llu] stripe[%llu, %llu] mismatch dev extent[%llu, %llu, %llu]",
				       (unsigned long long)chunk_offset, (unsigned long long)devid,
				       (unsigned long long)physical, (unsigned long long)devid,
				       (unsigned long long)physical, (unsigned long long)length);
			return;
		}
	}
	/* a block group there: the chunk is what is wrong or missing, unless the chunk is
	 * there and the extent's key is suspect (the device tree is made anew from the
	 * chunks) */
	bg = ck_bg_find(c, chunk_offset);
	if (bg && bg->start == chunk_offset && ds->bg_named)
		ds->bg_named[bg - c->bgs] = 1;
	if (CFG_CHECK_REPAIR && ch && ch->logical == chunk_offset && !misplaced)
		misplaced = chunk_stripe_holds(c, ch, devid, physical);
	ck_err_fix(c, bg && bg->start == chunk_offset && !(misplaced && ch && ch->logical == chunk_offset) ?
		      CHECK_FIX_CHUNKS : CHECK_FIX_DEV_TREE,
		   BTRFS_DEV_TREE_OBJECTID, 0, chunk_offset, length,
	       "Device extent[%llu, %llu, %llu] didn't find the relative chunk.",
	       (unsigned long long)devid, (unsigned long long)physical, (unsigned long long)length);
}

static int dev_extent_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			 uint32_t size, void *arg)
{
	struct devs *ds = arg;
	const struct btrfs_dev_extent *de;
	struct dev_state *d;
	unsigned long long devid = key->objectid, phys = key->offset, len;
	int misplaced, past_end;

	if (key->type != BTRFS_DEV_EXTENT_KEY)
		return 0;
	de = fs_dev_extent_item(data, size);
	if (!de) {
		ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, 0, 0, "device extent [%llu %llu] is too short",
		       devid, phys);
		return 0;
	}
	len = get_le64(&de->length);
	/* the kernel's tree checker refuses the leaf */
	if (get_le64(&de->chunk_tree) != BTRFS_CHUNK_TREE_OBJECTID ||
	    get_le64(&de->chunk_objectid) != BTRFS_FIRST_CHUNK_TREE_OBJECTID ||
	    get_le64(&de->chunk_offset) % c->fs->sectorsize || phys % c->fs->sectorsize || len % c->fs->sectorsize)
		ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, phys, len,
			   "device extent [%llu %llu]: invalid chunk tree %llu, chunk objectid %llu or "
			   "unaligned offset %llu / length %llu", devid, phys,
			   (unsigned long long)get_le64(&de->chunk_tree),
			   (unsigned long long)get_le64(&de->chunk_objectid),
			   (unsigned long long)get_le64(&de->chunk_offset), len);
	d = dev_find(ds, devid);
	if (!d) {
		ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, phys, len,
		       "Device extent[%llu, %llu, %llu] didn't find its device.", devid, phys, len);
		/* the device item is what is wrong when a chunk names the extent */
		match_dev_extent(c, ds, devid, phys, get_le64(&de->chunk_offset), len, 1);
		return 0;
	}
	/* its key is suspect when it overlaps the one before, is not aligned or runs past
	 * the device's end */
	past_end = phys > d->total_bytes || len > d->total_bytes - phys;       /* (no wrap past 2^64) */
	misplaced = phys < d->last_end || phys % c->fs->sectorsize || past_end;
	if (phys < d->last_end)
		ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, phys, len,
		       "dev extent devid %llu physical offset %llu overlap with previous dev extent end %llu",
		       devid, phys, (unsigned long long)d->last_end);
	if (past_end)
		ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, phys, len,
		       "dev extent devid %llu physical offset %llu len %llu is beyond device boundary %llu",
		       devid, phys, len, (unsigned long long)d->total_bytes);
	d->last_end = phys + len;
	d->extents_bytes += len;
	match_dev_extent(c, ds, devid, phys, get_le64(&de->chunk_offset), len, misplaced);
	return 0;
}

/* Device items against their extents, the devices and the superblock (a
 * superblock total above the devices' is only a warning, as in 6.19). */
static void check_devices(struct check_ctx *c, struct devs *ds)
{
	struct fs *fs = c->fs;
	uint64_t sum = 0, super_devs = get_le64(&fs->sb.num_devices);
	unsigned long long super_total = get_le64(&fs->sb.total_bytes);

	for (int i = 0; i < ds->n; i++) {
		struct dev_state *d = &ds->d[i];
		struct fs_device *fd = fs_device_by_id(fs, d->devid);
		unsigned long long id = d->devid, used = d->bytes_used, total = d->total_bytes;

		sum += d->total_bytes;
		if (used > total)
			ck_err_fix(c, CHECK_FIX_DEVICES, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			       "device %llu has incorrect used bytes %llu > total bytes %llu", id, used, total);
		else if (d->extents_bytes != used)
			ck_err_fix(c, CHECK_FIX_DEVICES, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			       "Dev extent's total-byte(%llu) is not equal to byte-used(%llu) in dev[1, 216, %llu]",
			       (unsigned long long)d->extents_bytes, used, id);
		if (total % fs->sectorsize)
			ck_fix(c, CHECK_FIX_DEVICES), ck_warn(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
				"unaligned total_bytes detected for devid %llu, have %llu should be aligned to %u",
				id, total, fs->sectorsize);
		if (fd && fd->fd >= 0 && fd->size && total > fd->size)
			ck_err_fix(c, CHECK_FIX_DEVICES, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			       "block device size is smaller than total_bytes in device item, has %llu expect >= %llu",
			       (unsigned long long)fd->size, total);
	}
	if (super_devs != (uint64_t)ds->n)
		ck_err_fix(c, CHECK_FIX_DEVICES, 0, 0, 0, 0, "super num devices mismatch, have %llu expect %d",
		       (unsigned long long)super_devs, ds->n);
	if (ds->n && super_total < sum)
		ck_err_fix(c, CHECK_FIX_DEVICES, 0, 0, 0, 0, "super total bytes %llu smaller than real device(s) size %llu",
		       super_total, (unsigned long long)sum);
	else if (CFG_CHECK_THOROUGH && ds->n && (super_total != sum || super_total % fs->sectorsize) &&
		 !(get_le64(&fs->sb.flags) & (BTRFS_SUPER_FLAG_METADUMP | BTRFS_SUPER_FLAG_METADUMP_V2)))
		ck_fix(c, CHECK_FIX_DEVICES), ck_warn(c, 0, 0, 0, 0,
			"minor unaligned/mismatch device size detected: super block total bytes=%llu found total bytes=%llu",
			super_total, (unsigned long long)sum);
	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++)
			if (!ds->matched[i][s])
				ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, fs->chunks[i].logical, 0,
				       "Chunk[256, 228, %llu] stripe[%llu, %llu] is not found in dev extent",
				       (unsigned long long)fs->chunks[i].logical,
				       (unsigned long long)fs->chunks[i].stripes[s].devid,
				       (unsigned long long)fs->chunks[i].stripes[s].offset);
}

/* Block groups without their chunk: the chunk is recovered when device extents name
 * the block group (ds NULL: unknown, so taken as named); else nothing can map it, and
 * its item goes. A chunk of another length: the item goes when the chunk's device
 * extents agree with the chunk (the item of the chunk's length is made again), else the
 * chunk is recovered from the block group and its device extents. */
static void check_bgs_without_chunk(struct check_ctx *c, const struct devs *ds)
{
	for (int i = 0; i < c->nbgs; i++) {
		const struct check_bg *bg = &c->bgs[i];
		const struct fs_chunk *ch = fs_chunk_find(c->fs, bg->start);
		int recover = !ds || ds->bg_named[i];

		c->fix_key = (struct fs_key){ bg->start, BTRFS_BLOCK_GROUP_ITEM_KEY, bg->len };
		if (ch && ch->logical == bg->start && ch->length != bg->len)
			say_mismatch(c, ch, bg, ds && !ds->len_bad[ch - c->fs->chunks] ? CHECK_FIX_DELETE : CHECK_FIX_CHUNKS);
		if (ch && ch->logical == bg->start)
			continue;
		ck_err_fix(c, recover ? CHECK_FIX_CHUNKS : CHECK_FIX_DELETE, recover ? 0 : fs_block_group_tree_id(c->fs),
			   0, bg->start, bg->len, "Block group[%llu, %llu] (flags = %llu) didn't find the relative chunk.",
			   (unsigned long long)bg->start, (unsigned long long)bg->len, (unsigned long long)bg->flags);
	}
}

int check_chunks_and_devices(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	struct devs ds = { 0 };
	struct fs_root chunk_root, dev_root;
	struct fs_key zero = { 0, 0, 0 };
	int ret;

	ret = load_block_groups(c);
	if (ret < 0)
		return ret;
	check_chunk_bgs(c);
	check_stripe_devices(c);
	if (fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk_root) < 0 ||
	    fs_root_lookup(fs, BTRFS_DEV_TREE_OBJECTID, &dev_root) < 0) {
		if (fs->err.code == -ENOENT)    /* the device tree's root item: made anew */
			ck_err_fix(c, CHECK_FIX_DEV_TREE, BTRFS_DEV_TREE_OBJECTID, 0, 0, 0, "no root item for the device tree");
		else
			ck_fs_error(c, &fs->err, NULL);
		check_bgs_without_chunk(c, NULL);
		return 0;
	}
	ds.bg_named = calloc(c->nbgs ? (size_t)c->nbgs : 1, 1);
	ds.len_bad = calloc(fs->num_chunks ? (size_t)fs->num_chunks : 1, 1);
	ds.matched = calloc(fs->num_chunks ? fs->num_chunks : 1, sizeof(*ds.matched));
	if (!ds.matched || !ds.bg_named || !ds.len_bad) {
		free(ds.matched);
		free(ds.bg_named);
		free(ds.len_bad);
		return -ENOMEM;
	}
	for (int i = 0; i < fs->num_chunks; i++) {
		ds.matched[i] = calloc(fs->chunks[i].num_stripes + 1, 1);
		if (!ds.matched[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = ck_iterate(c, &chunk_root, &zero, chunk_tree_item_cb, &ds);
	if (ret >= 0)
		ret = ck_iterate(c, &dev_root, &zero, dev_extent_cb, &ds);
	if (ret >= 0)
		check_devices(c, &ds);
	check_bgs_without_chunk(c, ret >= 0 ? &ds : NULL);
out:
	for (int i = 0; i < fs->num_chunks; i++)
		free(ds.matched[i]);
	free(ds.matched);
	free(ds.bg_named);
	free(ds.len_bad);
	free(ds.d);
	return ret < 0 ? ret : 0;
}
