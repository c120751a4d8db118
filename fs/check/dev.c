//build:Oz
/* Stage 2, device set: the devices that were opened against the device items of
 * the chunk tree (devid, dev uuid, metadata fsid: a seed device's items carry the
 * seed's). Missing devices are not errors here: the open said which ones, and
 * reads of their copies fail; stripes on devids without a device item have no
 * device extent (the chunk accounting says so). */
#include "internal.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

/* Copies the chunk tree's device item of devid into *out: 1, or 0 when there is
 * none, <0 when it cannot be read (said elsewhere). */
static int dev_item_of(struct check_ctx *c, const struct fs_root *chunk_root, uint64_t devid,
		       struct btrfs_dev_item *out)
{
	struct fs_key key = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, devid };
	const struct btrfs_dev_item *di = NULL;
	const uint8_t *data;
	struct fs_path p;
	uint32_t size;
	int ret;

	fs_path_init(&p);
	ret = fs_lookup(c->fs, chunk_root, &key, &p);
	if (!ret) {
		data = fs_path_data(&p, &size);
		di = fs_dev_item(data, size);
	}
	if (di)
		*out = *di;
	fs_path_release(c->fs, &p);
	return di ? 1 : ret == -ENOENT ? 0 : -1;
}

/* A device's superblock names its own device item (dev_item): it must be one of
 * the chunk tree's, with the same uuid and metadata fsid; the sizes are only
 * warned about, as the reference does (a kernel may not have updated them). */
static void check_opened_device(struct check_ctx *c, const struct fs_root *chunk_root,
				const struct fs_device *dev)
{
	const struct btrfs_dev_item *sdi = &dev->sb.dev_item;
	struct btrfs_dev_item d;
	int found = dev_item_of(c, chunk_root, dev->devid, &d);

	const char *why = !found ? "there is no device item" :
			  memcmp(d.uuid, sdi->uuid, BTRFS_UUID_SIZE) ? "its dev uuid differs" :
			  memcmp(d.fsid, sdi->fsid, BTRFS_FSID_SIZE) ? "its metadata fsid differs" : NULL;

	if (found < 0)
		return;
	if (why) {
		if (!found)     /* the repair makes it again from the device's superblock */
			ck_fix(c, CHECK_FIX_DEVICES);
		ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0, "device %s is not devid %llu of the filesystem: %s",
		       dev->path, (unsigned long long)dev->devid, why);
		return;
	}
	if (fs_device_is_seed(c->fs, dev))
		return;         /* its superblock is the seed filesystem's */
	for (int f = 0; f < 2; f++) {
		uint64_t tree = get_le64(f ? &d.bytes_used : &d.total_bytes);
		uint64_t super = get_le64(f ? &sdi->bytes_used : &sdi->total_bytes);

		if (tree != super)
			ck_warn(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
				"device %llu's %s was %llu in tree but %llu in superblock",
				(unsigned long long)dev->devid, f ? "bytes_used" : "total_bytes",
				(unsigned long long)tree, (unsigned long long)super);
	}
}

/* A scanned device that holds no stripe is not used: stale ones are ignored. */
static int holds_stripes(const struct fs *fs, const struct fs_device *dev)
{
	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++)
			if (fs->chunks[i].stripes[s].dev == dev)
				return 1;
	return 0;
}

void check_device_set(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	struct fs_root chunk_root;

	if (fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk_root) < 0)
		return;         /* said by the chunk accounting */
	for (int i = 0; i < fs->num_devs; i++)
		if (fs->devs[i].fd >= 0 && (i == 0 || holds_stripes(fs, &fs->devs[i])))
			check_opened_device(c, &chunk_root, &fs->devs[i]);
}
