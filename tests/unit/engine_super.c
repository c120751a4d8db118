/* Superblock validation and the sys_chunk_array parser on crafted input. */
#include "unit.h"
#include "fs/core/fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void seal(struct btrfs_super_block *sb)
{
	uint8_t c[CSUM_MAX_SIZE];

	csum_compute(get_le16(&sb->csum_type), (uint8_t *)sb + BTRFS_CSUM_START,
		     BTRFS_SUPER_SIZE - BTRFS_CSUM_START, c);
	memcpy(sb->csum, c, csum_size(get_le16(&sb->csum_type)));
}

/* One SINGLE system chunk at logical 1 MiB mapped to physical 1 MiB of devid 1. */
static uint32_t put_sys_chunk(uint8_t *array, uint16_t num_stripes)
{
	struct btrfs_disk_key *k = (void *)array;
	struct btrfs_chunk *c = (void *)(array + sizeof(*k));

	put_le64(&k->objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	k->type = BTRFS_CHUNK_ITEM_KEY;
	put_le64(&k->offset, 1 << 20);
	put_le64(&c->length, 4 << 20);
	put_le64(&c->stripe_len, 65536);
	put_le64(&c->type, BTRFS_BLOCK_GROUP_SYSTEM);
	put_le16(&c->num_stripes, num_stripes);
	put_le64(&c->stripe.devid, 1);
	put_le64(&c->stripe.offset, 1 << 20);
	return (uint32_t)(sizeof(*k) + sizeof(*c));
}

static void make_super(struct btrfs_super_block *sb, int csum_type)
{
	memset(sb, 0, sizeof(*sb));
	put_le64(&sb->magic, BTRFS_MAGIC_LE);
	put_le64(&sb->bytenr, BTRFS_SUPER_OFFSET);
	put_le32(&sb->sectorsize, 4096);
	put_le32(&sb->nodesize, 16384);
	put_le32(&sb->stripesize, 4096);
	put_le64(&sb->num_devices, 1);
	put_le64(&sb->root, 1 << 20);
	put_le64(&sb->chunk_root, 1 << 20);
	put_le16(&sb->csum_type, (uint16_t)csum_type);
	put_le32(&sb->sys_chunk_array_size, put_sys_chunk(sb->sys_chunk_array, 1));
	seal(sb);
}

TEST(super_valid_each_csum)
{
	struct btrfs_super_block sb;
	struct fs_error e;

	for (int t = 0; t < 4; t++) {
		make_super(&sb, t);
		CHECK(fs_super_check(&sb, 0, &e) == 0);
		CHECK(fs_super_check(&sb, 1, &e) == -EUCLEAN);   /* bytenr of copy 0 */
	}
}

TEST(super_rejects_bad_fields)
{
	struct btrfs_super_block sb;
	struct fs_error e;

	make_super(&sb, 0);
	sb.csum[0] ^= 1;
	CHECK(fs_super_check(&sb, 0, &e) == -EUCLEAN && strstr(e.msg, "checksum"));
	make_super(&sb, 0);
	put_le64(&sb.magic, 1);
	CHECK(fs_super_check(&sb, 0, &e) == -EUCLEAN && strstr(e.msg, "magic"));
	make_super(&sb, 0);
	put_le16(&sb.csum_type, 9);
	seal(&sb);
	CHECK(fs_super_check(&sb, 0, &e) == -EUCLEAN);
	make_super(&sb, 0);
	put_le32(&sb.nodesize, 12288);
	seal(&sb);
	CHECK(fs_super_check(&sb, 0, &e) == -EUCLEAN && strstr(e.msg, "nodesize"));
	make_super(&sb, 0);
	put_le32(&sb.sys_chunk_array_size, 4000);
	seal(&sb);
	CHECK(fs_super_check(&sb, 0, &e) == -EUCLEAN && strstr(e.msg, "sys_chunk_array_size"));
	make_super(&sb, 0);
	put_le32(&sb.sectorsize, 2048);
	seal(&sb);
	CHECK(fs_super_check(&sb, 0, &e) == -EUCLEAN);
}

TEST(sys_array_bounds)
{
	struct btrfs_super_block sb;
	struct fs fs;
	uint32_t len;

	make_super(&sb, 0);
	memset(&fs, 0, sizeof(fs));
	len = get_le32(&sb.sys_chunk_array_size);
	CHECK(fs_chunk_load_sys_array(&fs, sb.sys_chunk_array, len) == 0);
	CHECK(fs.num_chunks == 1 && fs_num_copies(&fs, (1 << 20) + 5) == 1);
	CHECK(fs_num_copies(&fs, 5 << 20) == 0);
	/* truncated by one byte, or claiming more stripes than present */
	for (uint32_t cut = 0; cut < len; cut++) {
		struct fs f2;
		memset(&f2, 0, sizeof(f2));
		CHECK(fs_chunk_load_sys_array(&f2, sb.sys_chunk_array, cut) == (cut ? -EUCLEAN : 0));
		free(f2.chunks);
	}
	put_sys_chunk(sb.sys_chunk_array, 200);
	free(fs.chunks[0].stripes);
	free(fs.chunks);
	memset(&fs, 0, sizeof(fs));
	CHECK(fs_chunk_load_sys_array(&fs, sb.sys_chunk_array, len) == -EUCLEAN);
	put_sys_chunk(sb.sys_chunk_array, 0);
	CHECK(fs_chunk_load_sys_array(&fs, sb.sys_chunk_array, len) == -EUCLEAN);
	CHECK(fs_chunk_load_sys_array(&fs, sb.sys_chunk_array, 5000) == -EUCLEAN);
	free(fs.chunks);
}
