//build:Oz
/* A dump of a filesystem of several devices restored to one device: chunk items made
 * single (or DUP) on it as the blocks are written, then block groups, device extents
 * and device items made to match in one transaction. */
#include "internal.h"
#include "fs/write/write.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEPT_TYPE_BITS (BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_SYSTEM | BTRFS_BLOCK_GROUP_METADATA | \
			BTRFS_BLOCK_GROUP_DUP)

/* A DUP chunk keeps its two stripes (on one device already); every other profile
 * becomes one stripe. */
static uint16_t stripes_kept(const struct btrfs_chunk *c)
{
	return get_le64(&c->type) & BTRFS_BLOCK_GROUP_DUP && get_le16(&c->num_stripes) > 1 ? 2 : 1;
}

/* The stripes of the chunk at logical: on the restored device, where the map puts it. */
static void place_stripes(const struct restorer *r, const struct btrfs_dev_item *dev, uint64_t logical,
			  struct btrfs_chunk *c, uint16_t stripes)
{
	const struct chunk_place *p = map_find(r, logical);

	put_le16(&c->num_stripes, stripes);
	put_le16(&c->sub_stripes, 0);
	for (uint16_t i = 0; i < stripes; i++) {
		struct btrfs_stripe s;

		/* the stripes follow the chunk item's first one (the item has room for them) */
		s.devid = dev->devid;
		memcpy(s.dev_uuid, dev->uuid, BTRFS_UUID_SIZE);
		put_le64(&s.offset, !p ? logical : i ? p->physical_dup : p->physical);
		memcpy((uint8_t *)c + offsetof(struct btrfs_chunk, stripe) + i * sizeof(s), &s, sizeof(s));
	}
}

int onedev_superblock(const struct restorer *r, struct btrfs_super_block *sb)
{
	uint8_t array[sizeof(sb->sys_chunk_array)] = { 0 };
	uint32_t pos = 0, len = 0;
	struct fs_key k;
	const struct btrfs_chunk *c;
	int ret;

	while ((ret = map_sys_array_next(sb, &pos, &k, &c)) == 1) {
		uint16_t stripes = stripes_kept(c);
		struct btrfs_chunk *n = (struct btrfs_chunk *)(array + len + sizeof(struct btrfs_disk_key));

		fs_key_to_disk((struct btrfs_disk_key *)(array + len), &k);
		memcpy(n, c, fs_chunk_item_size(stripes));
		if (stripes == 1)
			put_le64(&n->type, BTRFS_BLOCK_GROUP_SYSTEM);
		place_stripes(r, &sb->dev_item, k.offset, n, stripes);
		len += sizeof(struct btrfs_disk_key) + fs_chunk_item_size(stripes);
	}
	if (ret < 0)
		return fs_err(r->err, ret, "bad chunk in the superblock's sys_array at %u", pos);
	memcpy(sb->sys_chunk_array, array, sizeof(array));
	put_le32(&sb->sys_chunk_array_size, len);
	put_le64(&sb->num_devices, 1);
	if (r->drop_space_cache)
		put_le64(&sb->cache_generation, 0);
	return 0;
}

/* Item slot of the leaf blk cut to size bytes at its end: the data of it and of the
 * items after it (which lie below it) moves up by what is cut. */
static void shrink_item(uint8_t *blk, uint32_t nritems, uint32_t slot, uint32_t size)
{
	struct btrfs_item *items = (struct btrfs_item *)(blk + sizeof(struct btrfs_header));
	uint8_t *data = blk + sizeof(struct btrfs_header);
	uint32_t old = get_le32(&items[slot].size), start = get_le32(&items[slot].offset);
	uint32_t data_end = get_le32(&items[nritems - 1].offset), cut = old - size;

	memmove(data + data_end + cut, data + data_end, start + size - data_end);
	for (uint32_t i = slot; i < nritems; i++)
		put_le32(&items[i].offset, get_le32(&items[i].offset) + cut);
	put_le32(&items[slot].size, size);
}

/* The chunk items of one verified chunk tree leaf made one-device. */
static void fix_chunk_leaf(const struct restorer *r, uint8_t *blk)
{
	uint32_t n = get_le32(&((struct btrfs_header *)blk)->nritems);
	struct btrfs_item *items = (struct btrfs_item *)(blk + sizeof(struct btrfs_header));

	for (uint32_t i = 0; i < n; i++) {
		struct fs_key k;
		uint8_t *data = blk + sizeof(struct btrfs_header) + get_le32(&items[i].offset);
		const struct btrfs_chunk *c = fs_chunk_item(data, get_le32(&items[i].size));
		uint16_t stripes;

		fs_key_from_disk(&k, &items[i].key);
		if (k.type != BTRFS_CHUNK_ITEM_KEY || !c)
			continue;
		stripes = stripes_kept(c);
		if (fs_chunk_item_size(stripes) < get_le32(&items[i].size)) {
			shrink_item(blk, n, i, fs_chunk_item_size(stripes));
			data = blk + sizeof(struct btrfs_header) + get_le32(&items[i].offset);
		}
		put_le64(&((struct btrfs_chunk *)data)->type, get_le64(&((struct btrfs_chunk *)data)->type) & KEPT_TYPE_BITS);
		place_stripes(r, &r->sb.dev_item, k.offset, (struct btrfs_chunk *)data, stripes);
	}
}

void onedev_chunk_blocks(const struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	struct fs_block_ctx ctx = { r->nodesize, get_le16(&r->sb.csum_type), r->fsid, 0, 0 };

	for (size_t off = 0; off + r->nodesize <= len; off += r->nodesize) {
		uint8_t *blk = buf + off;
		const struct btrfs_header *h = (const struct btrfs_header *)blk;

		ctx.bytenr = logical + off;
		if (get_le64(&h->bytenr) != ctx.bytenr || memcmp(h->fsid, r->fsid, BTRFS_FSID_SIZE))
			break;          /* not a run of tree blocks */
		if (get_le64(&h->owner) != BTRFS_CHUNK_TREE_OBJECTID || h->level ||
		    fs_block_check(blk, &ctx, &FS_EXPECT_NONE, NULL))
			continue;
		fix_chunk_leaf(r, blk);
		csum_stamp(ctx.csum_type, blk, r->nodesize);
	}
}

/* ---- afterwards, through the write side -------------------------------------------- */

/* Each block group of its chunk's profile. */
static int fix_block_groups(struct fs *fs)
{
	for (int i = 0; i < fs->num_chunks; i++) {
		const struct fs_chunk *ch = &fs->chunks[i];
		struct fs_key k = { ch->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, ch->length };
		uint32_t size;
		struct btrfs_block_group_item *bg =
			(struct btrfs_block_group_item *)fs_item_mut(fs, fs_block_group_tree_id(fs), &k, &size);

		if (!bg && fs->err.code != -ENOENT)
			return fs->err.code;
		if (bg && size >= sizeof(*bg))
			put_le64(&bg->flags, ch->type);
	}
	fs_err_clear(&fs->err);
	return 0;
}

/* The device extents made again, one for each stripe; *end: where the last ends,
 * *used: what they cover. */
static int remake_dev_extents(struct fs *fs, uint64_t *end, uint64_t *used)
{
	struct fs_key first = { 1, 0, 0 }, last = { UINT64_MAX, UINT8_MAX, UINT64_MAX };
	struct btrfs_dev_extent de = { 0 };
	struct fs_block *root = fs_block_read(fs, fs->chunk_root_bytenr, &FS_EXPECT_NONE);
	int ret;

	if (!root)
		return fs->err.code;
	memcpy(de.chunk_tree_uuid, fs_block_header(root)->chunk_tree_uuid, BTRFS_UUID_SIZE);
	fs_block_put(fs, root);
	put_le64(&de.chunk_tree, BTRFS_CHUNK_TREE_OBJECTID);
	put_le64(&de.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	if ((ret = fs_items_delete_range(fs, BTRFS_DEV_TREE_OBJECTID, &first, &last, NULL)))
		return ret;
	*end = *used = 0;
	for (int i = 0; i < fs->num_chunks; i++) {
		const struct fs_chunk *ch = &fs->chunks[i];
		uint64_t len = fs_chunk_stripe_length(ch);

		put_le64(&de.chunk_offset, ch->logical);
		put_le64(&de.length, len);
		for (int s = 0; s < ch->num_stripes; s++) {
			struct fs_key k = { ch->stripes[s].devid, BTRFS_DEV_EXTENT_KEY, ch->stripes[s].offset };

			if ((ret = fs_item_insert(fs, BTRFS_DEV_TREE_OBJECTID, &k, &de, sizeof(de))))
				return ret;
			*end = k.offset + len > *end ? k.offset + len : *end;
			*used += len;
		}
	}
	return 0;
}

/* The items of the other devices gone; this one as large as its extents reach. */
static int fix_dev_items(struct fs *fs, uint64_t end, uint64_t used)
{
	struct fs_device *d = &fs->devs[0];
	struct fs_key first = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0 };
	struct fs_key before = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid - 1 };
	struct fs_key after = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid + 1 };
	struct fs_key last = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, UINT64_MAX };
	struct fs_key mine = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid };
	struct btrfs_dev_item *di;
	struct stat st;
	uint32_t size;
	int ret;

	if ((d->devid > 1 && (ret = fs_items_delete_range(fs, BTRFS_CHUNK_TREE_OBJECTID, &first, &before, NULL))) ||
	    (d->devid < UINT64_MAX && (ret = fs_items_delete_range(fs, BTRFS_CHUNK_TREE_OBJECTID, &after, &last, NULL))))
		return ret;
	if (!fstat(d->fd, &st) && S_ISREG(st.st_mode) && ftruncate(d->fd, (off_t)end))
		return fs_err(&fs->err, -errno, "cannot make the image %llu bytes: %s", (unsigned long long)end,
			      strerror(errno));
	if ((ret = fs_device_resize(fs, d, end)))
		return ret;
	if (!(di = (struct btrfs_dev_item *)fs_item_mut(fs, BTRFS_CHUNK_TREE_OBJECTID, &mine, &size)))
		return fs->err.code;
	put_le64(&di->bytes_used, used);
	put_le64(&d->sb.dev_item.bytes_used, used);
	fs->sb.dev_item = d->sb.dev_item;
	put_le64(&fs->sb.total_bytes, end);
	return 0;
}

static int one_device(struct fs *fs, void *ctx)
{
	uint64_t end = 0, used = 0;
	int ret;

	(void)ctx;
	if ((ret = fix_block_groups(fs)) || (ret = remake_dev_extents(fs, &end, &used)))
		return ret;
	return fix_dev_items(fs, end, used);
}

int onedev_finish(const char *path, struct fs_error *err)
{
	struct fs_wopen_opts o;
	struct fs *fs;
	int ret;

	fs_wopen_opts_init(&o);
	o.open.scan = 0;
	o.stale_dev_items = 1;
	if (!(fs = fs_wopen(&path, 1, &o, err))) {
		fs_err_wrap(err, "cannot open the restored image to make it one device: ", NULL);
		return err->code ? err->code : -EIO;
	}
	ret = fs_tx_run(fs, one_device, NULL);
	if (ret) {
		*err = fs->err;
		fs_err_wrap(err, "cannot make the restored image one device: ", NULL);
	}
	fs_wclose(fs);
	return ret;
}
