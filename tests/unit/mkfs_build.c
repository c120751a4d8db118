/* Write-side pieces of mkfs: the bottom-up tree builder and the chunk allocator. */
#include "unit.h"
#include "fs/core/format.h"
#include "fs/mkfs/alloc.h"
#include "fs/mkfs/mkfs.h"
#include "fs/write/build.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <stdlib.h>
#include <string.h>

struct capture {
	uint8_t *blocks;    /* nodesize bytes per written block, in write order */
	uint64_t addr[256];
	int n;
};

static int capture_block(void *ctx, uint64_t bytenr, const void *buf, uint32_t len)
{
	struct capture *c = ctx;
	if (c->n >= 256)
		return -1;
	c->blocks = realloc(c->blocks, (size_t)(c->n + 1) * len);
	memcpy(c->blocks + (size_t)c->n * len, buf, len);
	c->addr[c->n++] = bytenr;
	return 0;
}

TEST(name_hash_matches_btrfs)
{
	/* the root tree's "default" dir item of every btrfs has this key offset */
	CHECK(btrfs_name_hash("default", 7) == 2378154706u);
}

TEST(empty_tree_is_one_leaf)
{
	struct item_list l = { 0 };
	struct tree_shape s;

	CHECK(tree_shape(&l, 4096, &s) == 0);
	CHECK(s.nblocks == 1 && s.level == 0);
}

TEST(tree_of_many_items_has_nodes_and_valid_blocks)
{
	struct item_list l = { 0 };
	struct tree_shape s;
	struct capture cap = { 0 };
	uint8_t fsid[16] = { 1 }, cuuid[16] = { 2 }, data[100];
	uint64_t addrs[256];
	struct tree_params p = { .nodesize = 4096, .csum_type = CSUM_CRC32C, .owner = 5,
				 .generation = 7, .fsid = fsid, .chunk_tree_uuid = cuuid,
				 .write_block = capture_block, .ctx = &cap };

	memset(data, 0xab, sizeof(data));
	for (int i = 2999; i >= 0; i--)    /* reverse order: the list sorts */
		CHECK(items_add(&l, 256 + (uint64_t)i, 1, 0, data, 100) != NULL);
	items_sort(&l);
	CHECK(l.v[0].key.objectid == 256);
	CHECK(tree_shape(&l, 4096, &s) == 0);
	CHECK(s.level == 1 && s.nblocks <= 256);  /* 3000 * 125 bytes: ~98 leaves, one node */
	CHECK(s.nblocks == s.width[0] + 1);
	CHECK(tree_block_level(&s, 0) == 0 && tree_block_level(&s, s.nblocks - 1) == 1);
	for (uint32_t i = 0; i < s.nblocks; i++)
		addrs[i] = 1048576 + (uint64_t)i * 4096;
	CHECK(tree_write(&l, &p, addrs, s.nblocks) == 0);
	CHECK(cap.n == (int)s.nblocks);
	if (cap.n == (int)s.nblocks) {
		uint8_t *root = cap.blocks + (size_t)(cap.n - 1) * 4096, sum[CSUM_MAX_SIZE];
		const struct btrfs_header *h = (const struct btrfs_header *)root;
		CHECK(h->level == 1);
		CHECK(get_le32(&h->nritems) == s.width[0]);
		CHECK(get_le64(&h->bytenr) == addrs[s.nblocks - 1]);
		csum_compute(CSUM_CRC32C, root + 32, 4096 - 32, sum);
		CHECK(!memcmp(sum, h->csum, 4));
		/* the first pointer leads to the first leaf, whose first key is 256 */
		const struct btrfs_key_ptr *kp = (const struct btrfs_key_ptr *)(root + sizeof(*h));
		CHECK(get_le64(&kp->blockptr) == addrs[0]);
		CHECK(get_le64(&kp->key.objectid) == 256);
	}
	free(cap.blocks);
	items_free(&l);
}

TEST(merge_equal_keys_concatenates)
{
	struct item_list l = { 0 };

	items_add(&l, 5, 12, 1, "ab", 2);
	items_add(&l, 4, 1, 0, "x", 1);
	items_add(&l, 5, 12, 1, "cd", 2);
	items_sort(&l);
	CHECK(items_merge_equal(&l) == 0);
	CHECK(l.n == 2);
	CHECK(l.v[1].size == 4);
	CHECK(!memcmp(item_data(&l, &l.v[1]), "ab", 2) || !memcmp(item_data(&l, &l.v[1]), "cd", 2));
	items_free(&l);
}

TEST(raid10_chunk_layout)
{
	struct alloc a;
	struct alloc_chunk *c;

	alloc_init(&a);
	a.ndevs = 4;
	for (int i = 0; i < 4; i++) {
		a.devs[i].size = 1ULL << 30;
		a.devs[i].devid = (uint64_t)i + 1;
		a.devs[i].next_phys = ALLOC_DEV_START;
	}
	c = alloc_chunk_add(&a, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID10, 8 << 20);
	CHECK(c && c->num_stripes == 4 && c->sub_stripes == 2 && c->length == 16 << 20);
	CHECK(alloc_dev_used(&a, 3) == 8 << 20);
	CHECK(alloc_space(&a, BTRFS_BLOCK_GROUP_DATA, 4096, 4096) == ALLOC_DEV_START);
	/* too big for what is left on the devices */
	CHECK(!alloc_chunk_add(&a, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID10, 1ULL << 30));
	alloc_free(&a);
}

TEST(allocation_skips_superblock_copies)
{
	struct alloc a;
	uint64_t at, got;

	alloc_init(&a);
	a.ndevs = 1;
	a.devs[0].size = 1ULL << 30;
	a.devs[0].next_phys = ALLOC_DEV_START;
	/* single chunk mapped 1:1 over physical 1 MiB .. 129 MiB: covers the copy at 64 MiB */
	CHECK(alloc_chunk_add(&a, BTRFS_BLOCK_GROUP_DATA, 128 << 20) != NULL);
	at = alloc_space_upto(&a, BTRFS_BLOCK_GROUP_DATA, 100 << 20, 4096, &got);
	CHECK(at == ALLOC_DEV_START && at + got == 64 << 20);
	at = alloc_space(&a, BTRFS_BLOCK_GROUP_DATA, 4096, 4096);
	CHECK(at == (64 << 20) + ALLOC_STRIPE_LEN);
	alloc_free(&a);
}
