/* Keys: the (objectid, type, offset) triple every tree is sorted by, its order, and its
 * on-disk form (struct btrfs_disk_key: three little-endian fields, 17 bytes, unaligned). */
#include "fs.h"
#include "util/le.h"

void fs_key_from_disk(struct fs_key *k, const struct btrfs_disk_key *d)
{
	k->objectid = get_le64(&d->objectid);
	k->type = d->type;
	k->offset = get_le64(&d->offset);
}

void fs_key_to_disk(struct btrfs_disk_key *d, const struct fs_key *k)
{
	put_le64(&d->objectid, k->objectid);
	d->type = k->type;
	put_le64(&d->offset, k->offset);
}

int fs_key_cmp(const struct fs_key *a, const struct fs_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

void fs_key_next(struct fs_key *k)
{
	if (k->offset != UINT64_MAX) {
		k->offset++;
	} else if (k->type != UINT8_MAX) {
		k->type++;
		k->offset = 0;
	} else if (k->objectid != UINT64_MAX) {
		k->objectid++;
		k->type = 0;
		k->offset = 0;
	}
}
