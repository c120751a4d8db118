/* Item decoders on crafted and truncated items. */
#include "unit.h"
#include "fs/core/fs.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

static uint32_t put_dir_entry(uint8_t *p, const char *name, const char *data)
{
	struct btrfs_dir_item *d = (void *)p;
	size_t nl = strlen(name), dl = strlen(data);

	memset(d, 0, sizeof(*d));
	put_le64(&d->location.objectid, 257);
	d->location.type = BTRFS_INODE_ITEM_KEY;
	put_le16(&d->name_len, (uint16_t)nl);
	put_le16(&d->data_len, (uint16_t)dl);
	d->type = BTRFS_FT_REG_FILE;
	memcpy(p + sizeof(*d), name, nl);
	memcpy(p + sizeof(*d) + nl, data, dl);
	return (uint32_t)(sizeof(*d) + nl + dl);
}

TEST(dir_entries_multiple_and_truncated)
{
	uint8_t buf[256];
	struct fs_dir_entry e;
	uint32_t size = put_dir_entry(buf, "abc", "");
	uint32_t pos = 0;

	size += put_dir_entry(buf + size, "user.x", "value");
	CHECK(fs_dir_entry_next(buf, size, &pos, &e) == 1 && e.name_len == 3 && !memcmp(e.name, "abc", 3));
	CHECK(e.location.objectid == 257 && e.type == BTRFS_FT_REG_FILE);
	CHECK(fs_dir_entry_next(buf, size, &pos, &e) == 1 && e.data_len == 5 && !memcmp(e.data, "value", 5));
	CHECK(fs_dir_entry_next(buf, size, &pos, &e) == 0);
	for (uint32_t cut = 1; cut < size; cut++) {
		int n = 0, r;
		pos = 0;
		while ((r = fs_dir_entry_next(buf, cut, &pos, &e)) == 1)
			n++;
		CHECK(r == -EUCLEAN || (r == 0 && cut == 33));
		CHECK(n <= 1);
	}
	put_le16(&((struct btrfs_dir_item *)buf)->name_len, 60000);
	pos = 0;
	CHECK(fs_dir_entry_next(buf, size, &pos, &e) == -EUCLEAN);
}

TEST(inode_refs_and_extrefs)
{
	uint8_t buf[64];
	struct btrfs_inode_ref *r = (void *)buf;
	struct btrfs_inode_extref *x = (void *)buf;
	struct fs_inode_ref ref;
	uint32_t pos = 0;

	put_le64(&r->index, 3);
	put_le16(&r->name_len, 2);
	memcpy(buf + sizeof(*r), "ab", 2);
	memcpy(buf + sizeof(*r) + 2, buf, sizeof(*r) + 2);
	CHECK(fs_inode_ref_next(buf, 2 * (sizeof(*r) + 2), &pos, &ref) == 1 && ref.index == 3);
	CHECK(fs_inode_ref_next(buf, 2 * (sizeof(*r) + 2), &pos, &ref) == 1 && !memcmp(ref.name, "ab", 2));
	CHECK(fs_inode_ref_next(buf, 2 * (sizeof(*r) + 2), &pos, &ref) == 0);
	pos = 0;
	CHECK(fs_inode_ref_next(buf, sizeof(*r) + 1, &pos, &ref) == -EUCLEAN);
	memset(buf, 0, sizeof(buf));
	put_le64(&x->parent_objectid, 256);
	put_le16(&x->name_len, 4);
	pos = 0;
	CHECK(fs_inode_extref_next(buf, sizeof(*x) + 4, &pos, &ref) == 1 && ref.parent == 256);
	pos = 0;
	CHECK(fs_inode_extref_next(buf, sizeof(*x) + 3, &pos, &ref) == -EUCLEAN);
}

TEST(file_extent_items)
{
	uint8_t buf[80] = { 0 };
	struct btrfs_file_extent_item *fi = (void *)buf;
	struct fs_file_extent fe;

	fi->type = BTRFS_FILE_EXTENT_INLINE;
	put_le64(&fi->ram_bytes, 5);
	memcpy(buf + 21, "hello", 5);
	CHECK(fs_file_extent(buf, 26, &fe) == 0 && fe.inline_len == 5 && !memcmp(fe.inline_data, "hello", 5));
	CHECK(fs_file_extent(buf, 20, &fe) == -EUCLEAN);
	fi->type = BTRFS_FILE_EXTENT_REG;
	put_le64(&fi->disk_bytenr, 1 << 20);
	put_le64(&fi->num_bytes, 8192);
	CHECK(fs_file_extent(buf, sizeof(*fi), &fe) == 0 && fe.num_bytes == 8192 && fe.disk_bytenr == 1 << 20);
	CHECK(fs_file_extent(buf, sizeof(*fi) - 1, &fe) == -EUCLEAN);
	fi->type = 7;
	CHECK(fs_file_extent(buf, sizeof(*fi), &fe) == -EUCLEAN);
}

TEST(extent_items_inline_refs)
{
	uint8_t buf[128] = { 0 };
	struct btrfs_extent_item *ei = (void *)buf;
	struct fs_extent_info info;
	struct fs_inline_ref r;
	uint32_t pos, size;
	uint8_t *p;

	put_le64(&ei->refs, 2);
	put_le64(&ei->flags, BTRFS_EXTENT_FLAG_TREE_BLOCK);
	p = buf + sizeof(*ei) + sizeof(struct btrfs_tree_block_info);
	p[0] = BTRFS_TREE_BLOCK_REF_KEY;
	put_le64(p + 1, 5);
	p[9] = BTRFS_SHARED_BLOCK_REF_KEY;
	put_le64(p + 10, 1 << 20);
	size = (uint32_t)(p + 18 - buf);
	CHECK(fs_extent_item(buf, size, BTRFS_EXTENT_ITEM_KEY, &info) == 0 && info.has_tree_info);
	pos = info.refs_start;
	CHECK(fs_inline_ref_next(buf, size, &pos, &r) == 1 && r.type == BTRFS_TREE_BLOCK_REF_KEY && r.offset == 5);
	CHECK(fs_inline_ref_next(buf, size, &pos, &r) == 1 && r.offset == 1 << 20);
	CHECK(fs_inline_ref_next(buf, size, &pos, &r) == 0);
	pos = info.refs_start;
	CHECK(fs_inline_ref_next(buf, size - 1, &pos, &r) == 1 && fs_inline_ref_next(buf, size - 1, &pos, &r) == -EUCLEAN);
	/* skinny metadata: refs follow the extent item directly */
	CHECK(fs_extent_item(buf, size, BTRFS_METADATA_ITEM_KEY, &info) == 0 && info.refs_start == sizeof(*ei));
	/* data ref */
	memset(buf, 0, sizeof(buf));
	p = buf + sizeof(*ei);
	p[0] = BTRFS_EXTENT_DATA_REF_KEY;
	put_le64(p + 1, 5);
	put_le64(p + 9, 257);
	put_le32(p + 25, 1);
	size = sizeof(*ei) + 29;
	CHECK(fs_extent_item(buf, size, BTRFS_EXTENT_ITEM_KEY, &info) == 0);
	pos = info.refs_start;
	CHECK(fs_inline_ref_next(buf, size, &pos, &r) == 1 && r.root == 5 && r.objectid == 257 && r.count == 1);
	p[0] = 99;
	pos = info.refs_start;
	CHECK(fs_inline_ref_next(buf, size, &pos, &r) == -EUCLEAN);
	CHECK(fs_extent_item(buf, 8, BTRFS_EXTENT_ITEM_KEY, &info) == -EUCLEAN);
}

TEST(root_item_old_and_short)
{
	uint8_t buf[sizeof(struct btrfs_root_item)];
	struct btrfs_root_item ri;

	memset(buf, 0xab, sizeof(buf));
	CHECK(fs_root_item(buf, 239, &ri) == 0 && ri.generation_v2 == 0 && ri.level == 0xab);
	CHECK(fs_root_item(buf, sizeof(buf), &ri) == 0 && ri.generation_v2 != 0);
	CHECK(fs_root_item(buf, 100, &ri) == -EUCLEAN);
}

TEST(chunk_and_misc_items)
{
	uint8_t buf[sizeof(struct btrfs_chunk) + sizeof(struct btrfs_stripe)] = { 0 };
	struct btrfs_chunk *c = (void *)buf;
	struct fs_root_ref rr;
	uint8_t refbuf[sizeof(struct btrfs_root_ref) + 3] = { 0 };

	put_le16(&c->num_stripes, 2);
	CHECK(fs_chunk_item(buf, sizeof(buf)) != NULL && fs_chunk_stripe(c, 1) && !fs_chunk_stripe(c, 2));
	CHECK(fs_chunk_item(buf, sizeof(buf) - 1) == NULL);
	put_le16(&c->num_stripes, 0);
	CHECK(fs_chunk_item(buf, sizeof(buf)) == NULL);
	CHECK(fs_inode_item(buf, 10) == NULL);
	CHECK(fs_csum_item_count(40, 4) == 10);
	put_le16(&((struct btrfs_root_ref *)refbuf)->name_len, 3);
	CHECK(fs_root_ref(refbuf, sizeof(refbuf), &rr) == 0 && rr.name_len == 3);
	CHECK(fs_root_ref(refbuf, sizeof(refbuf) - 1, &rr) == -EUCLEAN);
	put_le16(&((struct btrfs_root_ref *)refbuf)->name_len, 2);     /* the item is longer than its name */
	CHECK(fs_root_ref(refbuf, sizeof(refbuf), &rr) == -EUCLEAN);
}
