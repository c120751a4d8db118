/* Tree block verification and accessors on crafted and mutated leaves/nodes. */
#include "unit.h"
#include "fs/core/fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NS 4096
static const uint8_t fsid[16] = { 1, 2, 3, 4 };

static void seal(uint8_t *b)
{
	uint8_t c[CSUM_MAX_SIZE];
	csum_compute(0, b + BTRFS_CSUM_START, NS - BTRFS_CSUM_START, c);
	memcpy(b, c, 4);
}

/* A leaf at bytenr 64K with n items (objectid i+1), each 10 bytes of data. */
static void make_leaf(uint8_t *b, uint32_t n)
{
	struct btrfs_header *h = (void *)b;
	uint32_t off = NS - sizeof(*h);

	memset(b, 0, NS);
	memcpy(h->fsid, fsid, 16);
	put_le64(&h->bytenr, 65536);
	put_le64(&h->owner, 5);
	put_le64(&h->generation, 7);
	put_le32(&h->nritems, n);
	for (uint32_t i = 0; i < n; i++) {
		struct btrfs_item *it = (struct btrfs_item *)(b + sizeof(*h)) + i;
		put_le64(&it->key.objectid, i + 1);
		it->key.type = BTRFS_INODE_ITEM_KEY;
		off -= 10;
		put_le32(&it->offset, off);
		put_le32(&it->size, 10);
	}
	seal(b);
}

static struct fs_block_ctx ctx = { NS, 0, fsid, 65536, 0 };

TEST(block_valid_leaf_and_expectations)
{
	uint8_t *b = malloc(NS);
	struct fs_block_expect exp = FS_EXPECT_NONE;
	struct fs_key first = { 1, BTRFS_INODE_ITEM_KEY, 0 };
	struct fs_error e;

	make_leaf(b, 20);
	CHECK(fs_block_check(b, &ctx, &exp, &e) == 0);
	exp.generation = 8;
	CHECK(fs_block_check(b, &ctx, &exp, &e) == -EUCLEAN && strstr(e.msg, "transid"));
	exp = FS_EXPECT_NONE;
	exp.level = 1;
	CHECK(fs_block_check(b, &ctx, &exp, &e) == -EUCLEAN);
	exp = FS_EXPECT_NONE;
	exp.first_key = &first;
	CHECK(fs_block_check(b, &ctx, &exp, &e) == 0);
	first.objectid = 2;
	CHECK(fs_block_check(b, &ctx, &exp, &e) == -EUCLEAN);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == 0);
	free(b);
}

TEST(block_rejects_corruption)
{
	uint8_t *b = malloc(NS);
	struct btrfs_header *h = (void *)b;
	struct btrfs_item *it = (void *)(b + sizeof(*h));
	struct fs_error e;

	make_leaf(b, 3);
	b[200] ^= 1;
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN && strstr(e.msg, "checksum"));
	CHECK(e.logical == 65536);
	make_leaf(b, 3);
	put_le32(&it[1].offset, NS);
	seal(b);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN && e.has_key && e.key.objectid == 2);
	make_leaf(b, 3);
	put_le64(&it[2].key.objectid, 1);
	seal(b);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN && strstr(e.msg, "order"));
	make_leaf(b, 3);
	put_le32(&h->nritems, 1000);
	seal(b);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN && strstr(e.msg, "nritems"));
	make_leaf(b, 3);
	put_le64(&h->bytenr, 4096);
	seal(b);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN);
	make_leaf(b, 3);
	h->fsid[0] = 9;
	seal(b);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN && strstr(e.msg, "fsid"));
	make_leaf(b, 3);
	h->level = 1;           /* a node needs nritems key ptrs that fit */
	put_le32(&h->nritems, 0);
	seal(b);
	CHECK(fs_block_check(b, &ctx, NULL, &e) == -EUCLEAN);
	free(b);
}

/* Random byte mutations of a valid leaf (checksum not checked): whatever
 * passes must have every item inside the block. */
TEST(block_mutations_stay_in_bounds)
{
	struct fs_block_ctx nocsum = ctx;
	struct fs_block *blk = malloc(sizeof(*blk) + NS);
	uint32_t seed = 12345, passed = 0;

	nocsum.skip_csum = 1;
	for (int round = 0; round < 20000; round++) {
		make_leaf(blk->data, 1 + round % 40);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245 + 12345;
			blk->data[32 + (seed >> 8) % 1200] ^= (uint8_t)(seed >> 20);
		}
		if (fs_block_check(blk->data, &nocsum, NULL, NULL))
			continue;
		passed++;
		for (uint32_t i = 0; i < fs_block_nritems(blk); i++) {
			uint32_t size;
			struct fs_key k;
			const uint8_t *d = fs_block_level(blk) ? NULL : fs_item_data(blk, i, &size);
			if (d)
				CHECK(d >= blk->data + sizeof(struct btrfs_header) && d + size <= blk->data + NS);
			CHECK(fs_block_level(blk) ? fs_node_key(blk, i, &k) == 0 : fs_item_key(blk, i, &k) == 0);
		}
	}
	CHECK(passed > 0);
	free(blk);
}
