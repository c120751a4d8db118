/* Stage 2, device set: the devices that were opened against the device items of
 * the chunk tree (devid, dev uuid, metadata fsid: a seed device's items carry the
 * seed's), and every chunk stripe against a device item. Missing devices are not
 * errors here: the open said which ones, and reads of their copies fail. */
#include "check_internal.h"
#include "le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct dev_rec {
	uint64_t devid, total_bytes, bytes_used;
	uint8_t uuid[BTRFS_UUID_SIZE];
	uint8_t fsid[BTRFS_FSID_SIZE];
};

struct dev_recs {
	struct dev_rec *d;
	int n, cap;
};

static int dev_rec_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		      uint32_t size, void *arg)
{
	struct dev_recs *r = arg;
	const struct btrfs_dev_item *di;
	struct dev_rec *d;

	(void)c;
	if (key->objectid != BTRFS_DEV_ITEMS_OBJECTID || key->type != BTRFS_DEV_ITEM_KEY)
		return key->objectid > BTRFS_DEV_ITEMS_OBJECTID;
	di = fs_dev_item(data, size);
	if (!di)
		return 0;       /* said by the chunk accounting */
	if (r->n == r->cap) {
		int nc = r->cap ? r->cap * 2 : 8;
		void *p = realloc(r->d, (size_t)nc * sizeof(*r->d));
		if (!p)
			return -ENOMEM;
		r->d = p;
		r->cap = nc;
	}
	d = &r->d[r->n++];
	d->devid = get_le64(&di->devid);
	d->total_bytes = get_le64(&di->total_bytes);
	d->bytes_used = get_le64(&di->bytes_used);
	memcpy(d->uuid, di->uuid, BTRFS_UUID_SIZE);
	memcpy(d->fsid, di->fsid, BTRFS_FSID_SIZE);
	return 0;
}

static const struct dev_rec *rec_of(const struct dev_recs *r, uint64_t devid)
{
	for (int i = 0; i < r->n; i++)
		if (r->d[i].devid == devid)
			return &r->d[i];
	return NULL;
}

/* A device's superblock names its own device item (dev_item): it must be one of
 * the chunk tree's, with the same uuid and metadata fsid; the sizes are only
 * warned about, as the reference does (a kernel may not have updated them). */
static void check_opened_device(struct check_ctx *c, const struct dev_recs *r, const struct fs_device *dev)
{
	const struct btrfs_dev_item *sdi = &dev->sb.dev_item;
	const struct dev_rec *d = rec_of(r, dev->devid);

	if (!d) {
		ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
		       "device %s is devid %llu, which has no device item", dev->path,
		       (unsigned long long)dev->devid);
		return;
	}
	if (memcmp(d->uuid, sdi->uuid, BTRFS_UUID_SIZE) || memcmp(d->fsid, sdi->fsid, BTRFS_FSID_SIZE)) {
		ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
		       "device %s is not devid %llu of the filesystem: its %s differs from the device item's",
		       dev->path, (unsigned long long)dev->devid,
		       memcmp(d->uuid, sdi->uuid, BTRFS_UUID_SIZE) ? "dev uuid" : "metadata fsid");
		return;
	}
	if (fs_device_is_seed(c->fs, dev))
		return;         /* its superblock is the seed filesystem's */
	if (get_le64(&sdi->total_bytes) != d->total_bytes)
		ck_warn(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			"device %llu's total_bytes was %llu in tree but %llu in superblock",
			(unsigned long long)d->devid, (unsigned long long)d->total_bytes,
			(unsigned long long)get_le64(&sdi->total_bytes));
	if (get_le64(&sdi->bytes_used) != d->bytes_used)
		ck_warn(c, BTRFS_CHUNK_TREE_OBJECTID, 0, 0, 0,
			"device %llu's bytes_used was %llu in tree but %llu in superblock",
			(unsigned long long)d->devid, (unsigned long long)d->bytes_used,
			(unsigned long long)get_le64(&sdi->bytes_used));
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

int check_device_set(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	struct dev_recs r = { 0 };
	struct fs_key from = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0 };
	struct fs_root chunk_root;
	int ret;

	if (fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk_root) < 0)
		return 0;       /* said by the chunk accounting */
	ret = ck_iterate(c, &chunk_root, &from, dev_rec_cb, &r);
	if (ret >= 0) {
		for (int i = 0; i < fs->num_devs; i++)
			if (fs->devs[i].fd >= 0 && (i == 0 || holds_stripes(fs, &fs->devs[i])))
				check_opened_device(c, &r, &fs->devs[i]);
		for (int i = 0; i < fs->num_chunks; i++)
			for (int s = 0; s < fs->chunks[i].num_stripes; s++)
				if (!rec_of(&r, fs->chunks[i].stripes[s].devid))
					ck_err(c, BTRFS_CHUNK_TREE_OBJECTID, 0, fs->chunks[i].logical, 0,
					       "chunk[%llu %llu] stripe %d is on devid %llu, which has no device item",
					       (unsigned long long)fs->chunks[i].logical,
					       (unsigned long long)(fs->chunks[i].logical + fs->chunks[i].length),
					       s, (unsigned long long)fs->chunks[i].stripes[s].devid);
	}
	free(r.d);
	return ret < 0 ? ret : 0;
}
