/* Bounds-checked decoding of leaf items. Records are little-endian and
 * unaligned; the structures come from <linux/btrfs_tree.h>. */
#include "fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The item data when it holds at least `need` bytes. */
static const void *sized(const void *data, uint32_t size, size_t need)
{
	return data && size >= need ? data : NULL;
}

const struct btrfs_inode_item *fs_inode_item(const void *data, uint32_t size)
{ return sized(data, size, sizeof(struct btrfs_inode_item)); }
const struct btrfs_block_group_item *fs_block_group_item(const void *data, uint32_t size)
{ return sized(data, size, sizeof(struct btrfs_block_group_item)); }
const struct btrfs_dev_extent *fs_dev_extent_item(const void *data, uint32_t size)
{ return sized(data, size, sizeof(struct btrfs_dev_extent)); }
const struct btrfs_dev_item *fs_dev_item(const void *data, uint32_t size)
{ return sized(data, size, sizeof(struct btrfs_dev_item)); }

int fs_root_item(const void *data, uint32_t size, struct btrfs_root_item *out)
{
	/* Items written before generation_v2 existed end there; anything shorter
	 * than the fields up to `level` is corrupt. */
	size_t n = size < sizeof(*out) ? size : sizeof(*out);

	memset(out, 0, sizeof(*out));
	if (!data || size < offsetof(struct btrfs_root_item, level) + 1)
		return -EUCLEAN;
	memcpy(out, data, n);
	return 0;
}

uint32_t fs_chunk_item_size(uint32_t num_stripes)
{
	if (!num_stripes || num_stripes > 0xffff)
		return 0;
	return (uint32_t)(sizeof(struct btrfs_chunk) + (num_stripes - 1) * sizeof(struct btrfs_stripe));
}

const struct btrfs_chunk *fs_chunk_item(const void *data, uint32_t size)
{
	const struct btrfs_chunk *c = sized(data, size, sizeof(struct btrfs_chunk));
	uint32_t need;

	if (!c)
		return NULL;
	need = fs_chunk_item_size(get_le16(&c->num_stripes));
	return need && size >= need ? c : NULL;
}

const struct btrfs_stripe *fs_chunk_stripe(const struct btrfs_chunk *c, uint16_t i)
{
	return i < get_le16(&c->num_stripes) ? &c->stripe + i : NULL;
}

uint32_t fs_csum_item_count(uint32_t size, size_t csum_size)
{
	return csum_size ? (uint32_t)(size / csum_size) : 0;
}

/* ---- records with names ------------------------------------------------- */

/* Checks that a fixed header of hdr bytes plus `extra` trailing bytes fits at *pos. */
static int record_fits(uint32_t size, uint32_t pos, size_t hdr, size_t extra)
{
	return pos <= size && hdr <= size - pos && extra <= size - pos - hdr;
}

int fs_dir_entry_next(const void *data, uint32_t size, uint32_t *pos, struct fs_dir_entry *e)
{
	const uint8_t *p = (const uint8_t *)data + *pos;
	const struct btrfs_dir_item *di = (const void *)p;
	size_t hdr = sizeof(*di);

	if (*pos >= size)
		return 0;
	if (!record_fits(size, *pos, hdr, 0))
		return -EUCLEAN;
	e->name_len = get_le16(&di->name_len);
	e->data_len = get_le16(&di->data_len);
	if (!record_fits(size, *pos, hdr, (size_t)e->name_len + e->data_len))
		return -EUCLEAN;
	fs_key_from_disk(&e->location, &di->location);
	e->transid = get_le64(&di->transid);
	e->type = di->type;
	e->name = (const char *)p + hdr;
	e->data = p + hdr + e->name_len;
	*pos += (uint32_t)(hdr + e->name_len + e->data_len);
	return 1;
}

int fs_inode_ref_next(const void *data, uint32_t size, uint32_t *pos, struct fs_inode_ref *r)
{
	const struct btrfs_inode_ref *ir = (const void *)((const uint8_t *)data + *pos);

	if (*pos >= size)
		return 0;
	if (!record_fits(size, *pos, sizeof(*ir), 0))
		return -EUCLEAN;
	r->name_len = get_le16(&ir->name_len);
	if (!record_fits(size, *pos, sizeof(*ir), r->name_len))
		return -EUCLEAN;
	r->parent = 0;
	r->index = get_le64(&ir->index);
	r->name = (const char *)(ir + 1);
	*pos += (uint32_t)(sizeof(*ir) + r->name_len);
	return 1;
}

int fs_inode_extref_next(const void *data, uint32_t size, uint32_t *pos, struct fs_inode_ref *r)
{
	const struct btrfs_inode_extref *er = (const void *)((const uint8_t *)data + *pos);

	if (*pos >= size)
		return 0;
	if (!record_fits(size, *pos, sizeof(*er), 0))
		return -EUCLEAN;
	r->name_len = get_le16(&er->name_len);
	if (!record_fits(size, *pos, sizeof(*er), r->name_len))
		return -EUCLEAN;
	r->parent = get_le64(&er->parent_objectid);
	r->index = get_le64(&er->index);
	r->name = (const char *)er->name;
	*pos += (uint32_t)(sizeof(*er) + r->name_len);
	return 1;
}

int fs_root_ref(const void *data, uint32_t size, struct fs_root_ref *r)
{
	const struct btrfs_root_ref *rr = data;

	if (!record_fits(size, 0, sizeof(*rr), 0))
		return -EUCLEAN;
	r->name_len = get_le16(&rr->name_len);
	/* the kernel's tree checker wants the item to end with its name, exactly */
	if (!r->name_len || r->name_len > BTRFS_NAME_LEN_MAX || size != sizeof(*rr) + r->name_len)
		return -EUCLEAN;
	r->dirid = get_le64(&rr->dirid);
	r->sequence = get_le64(&rr->sequence);
	r->name = (const char *)(rr + 1);
	return 0;
}

/* ---- file extents ------------------------------------------------------- */

int fs_file_extent(const void *data, uint32_t size, struct fs_file_extent *fe)
{
	const struct btrfs_file_extent_item *fi = data;

	memset(fe, 0, sizeof(*fe));
	if (!data || size < FS_FILE_EXTENT_INLINE_START)
		return -EUCLEAN;
	fe->generation = get_le64(&fi->generation);
	fe->ram_bytes = get_le64(&fi->ram_bytes);
	fe->compression = fi->compression;
	fe->encryption = fi->encryption;
	fe->other_encoding = get_le16(&fi->other_encoding);
	fe->type = fi->type;
	if (fe->type == BTRFS_FILE_EXTENT_INLINE) {
		fe->inline_data = (const uint8_t *)data + FS_FILE_EXTENT_INLINE_START;
		fe->inline_len = size - FS_FILE_EXTENT_INLINE_START;
		return 0;
	}
	if (fe->type != BTRFS_FILE_EXTENT_REG && fe->type != BTRFS_FILE_EXTENT_PREALLOC)
		return -EUCLEAN;
	if (size < sizeof(*fi))
		return -EUCLEAN;
	fe->disk_bytenr = get_le64(&fi->disk_bytenr);
	fe->disk_num_bytes = get_le64(&fi->disk_num_bytes);
	fe->offset = get_le64(&fi->offset);
	fe->num_bytes = get_le64(&fi->num_bytes);
	return 0;
}

/* ---- extent items and their inline refs --------------------------------- */

int fs_extent_item(const void *data, uint32_t size, uint8_t key_type, struct fs_extent_info *ei)
{
	const struct btrfs_extent_item *e = data;
	uint32_t pos = sizeof(*e);

	memset(ei, 0, sizeof(*ei));
	if (!data || size < sizeof(*e))
		return -EUCLEAN;        /* includes pre-2.6.31 v0 items (8 bytes) */
	ei->refs = get_le64(&e->refs);
	ei->generation = get_le64(&e->generation);
	ei->flags = get_le64(&e->flags);
	if (key_type == BTRFS_EXTENT_ITEM_KEY && (ei->flags & BTRFS_EXTENT_FLAG_TREE_BLOCK)) {
		const struct btrfs_tree_block_info *tb = (const void *)((const uint8_t *)data + pos);
		if (size - pos < sizeof(*tb))
			return -EUCLEAN;
		ei->has_tree_info = 1;
		fs_key_from_disk(&ei->tree_key, &tb->key);
		ei->tree_level = tb->level;
		pos += sizeof(*tb);
	}
	ei->refs_start = pos;
	return 0;
}

uint32_t fs_inline_ref_size(uint8_t type)
{
	switch (type) {
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
	case FS_EXTENT_OWNER_REF_KEY:
		return 1 + 8;
	case BTRFS_EXTENT_DATA_REF_KEY:
		return 1 + sizeof(struct btrfs_extent_data_ref);
	case BTRFS_SHARED_DATA_REF_KEY:
		return 1 + 8 + sizeof(struct btrfs_shared_data_ref);
	}
	return 0;
}

int fs_inline_ref_next(const void *data, uint32_t size, uint32_t *pos, struct fs_inline_ref *r)
{
	const uint8_t *p = (const uint8_t *)data + *pos;

	if (*pos >= size)
		return 0;
	memset(r, 0, sizeof(*r));
	r->type = p[0];
	r->size = fs_inline_ref_size(r->type);
	if (!r->size || r->size > size - *pos)
		return -EUCLEAN;
	if (r->type == BTRFS_EXTENT_DATA_REF_KEY) {
		const struct btrfs_extent_data_ref *d = (const void *)(p + 1);
		r->root = get_le64(&d->root);
		r->objectid = get_le64(&d->objectid);
		r->file_offset = get_le64(&d->offset);
		r->count = get_le32(&d->count);
	} else {
		r->offset = get_le64(p + 1);
		if (r->type == BTRFS_SHARED_DATA_REF_KEY)
			r->count = get_le32(p + 9);
	}
	*pos += r->size;
	return 1;
}

uint64_t fs_data_ref_hash(uint64_t root, uint64_t objectid, uint64_t offset)
{
	uint32_t high = ~0u, low = ~0u;
	uint8_t v[8];

	put_le64(v, root);
	high = crc32c_raw(high, v, sizeof(v));
	put_le64(v, objectid);
	low = crc32c_raw(low, v, sizeof(v));
	put_le64(v, offset);
	low = crc32c_raw(low, v, sizeof(v));
	return ((uint64_t)high << 31) ^ (uint64_t)low;
}
