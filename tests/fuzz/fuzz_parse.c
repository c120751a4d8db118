/* libFuzzer harness for the parsers that see raw disk bytes: the superblock check,
 * the tree block verifier, and every item decoder on the items of a block that passed.
 * Built and run by tests/fuzz/run.sh (clang -fsanitize=fuzzer,address,undefined). */
#include "fs/core/fs.h"
#include "util/le.h"
#include <stdlib.h>
#include <string.h>

#define NODESIZE 4096

static void decode_item(uint8_t type, const uint8_t *data, uint32_t size)
{
	struct btrfs_root_item ri;
	struct fs_dir_entry de;
	struct fs_inode_ref ir;
	struct fs_root_ref rr;
	struct fs_file_extent fe;
	struct fs_extent_info ei;
	struct fs_inline_ref ref;
	const struct btrfs_chunk *c;
	uint32_t pos = 0;

	switch (type) {
	case BTRFS_DIR_ITEM_KEY: case BTRFS_DIR_INDEX_KEY: case BTRFS_XATTR_ITEM_KEY:
		while (fs_dir_entry_next(data, size, &pos, &de) > 0)
			;
		break;
	case BTRFS_INODE_REF_KEY:
		while (fs_inode_ref_next(data, size, &pos, &ir) > 0)
			;
		break;
	case BTRFS_INODE_EXTREF_KEY:
		while (fs_inode_extref_next(data, size, &pos, &ir) > 0)
			;
		break;
	case BTRFS_ROOT_REF_KEY: case BTRFS_ROOT_BACKREF_KEY:
		fs_root_ref(data, size, &rr);
		break;
	case BTRFS_ROOT_ITEM_KEY:
		fs_root_item(data, size, &ri);
		break;
	case BTRFS_EXTENT_DATA_KEY:
		fs_file_extent(data, size, &fe);
		break;
	case BTRFS_EXTENT_ITEM_KEY: case BTRFS_METADATA_ITEM_KEY:
		if (fs_extent_item(data, size, type, &ei) == 0)
			for (pos = ei.refs_start; fs_inline_ref_next(data, size, &pos, &ref) > 0;)
				;
		break;
	case BTRFS_CHUNK_ITEM_KEY:
		if ((c = fs_chunk_item(data, size)))
			for (uint16_t i = 0; i < get_le16(&c->num_stripes); i++)
				fs_chunk_stripe(c, i);
		break;
	default:
		fs_inode_item(data, size);
		fs_block_group_item(data, size);
		fs_dev_extent_item(data, size);
		fs_dev_item(data, size);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct fs_error err = { 0 };
	struct btrfs_super_block sb;
	struct fs_block *b;
	struct fs_block_ctx ctx = { NODESIZE, 0, NULL, 0, 1 };
	struct fs_key key;
	uint32_t size;

	if (len >= sizeof(sb)) {
		memcpy(&sb, data, sizeof(sb));
		fs_super_check(&sb, -1, &err);
	}
	if (len < NODESIZE)
		return 0;
	b = calloc(1, sizeof(*b) + NODESIZE);
	if (!b)
		return 0;
	memcpy(b->data, data, NODESIZE);
	b->size = NODESIZE;
	ctx.bytenr = get_le64(&((struct btrfs_header *)b->data)->bytenr);
	if (fs_block_check(b->data, &ctx, &FS_EXPECT_NONE, &err) == 0 && fs_block_level(b) == 0) {
		for (uint32_t i = 0; i < fs_block_nritems(b); i++) {
			const uint8_t *item = fs_item_data(b, i, &size);

			if (item && fs_item_key(b, i, &key) == 0)
				decode_item(key.type, item, size);
		}
	}
	free(b);
	return 0;
}
