/* Logical -> physical mapping for every profile. */
#include "unit.h"
#include "fs/core/fs.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1ULL << 20)
#define SL 65536ULL

static void add_chunk(struct fs *fs, uint64_t logical, uint64_t type, uint16_t num, uint16_t sub)
{
	uint8_t buf[sizeof(struct btrfs_chunk) + 8 * sizeof(struct btrfs_stripe)];
	struct btrfs_chunk *c = (void *)buf;

	memset(buf, 0, sizeof(buf));
	put_le64(&c->length, 64 * MIB);
	put_le64(&c->stripe_len, SL);
	put_le32(&c->sector_size, 4096);
	put_le64(&c->type, type);
	put_le16(&c->num_stripes, num);
	put_le16(&c->sub_stripes, sub);
	for (uint16_t i = 0; i < num; i++) {
		struct btrfs_stripe *s = (struct btrfs_stripe *)&c->stripe + i;
		put_le64(&s->devid, i + 1);
		put_le64(&s->offset, (i + 1) * 1000 * MIB);
	}
	CHECK(fs_chunk_add(fs, logical, c, fs_chunk_item_size(num)) == 0);
}

static void expect(struct fs *fs, uint64_t logical, int mirror, uint64_t devid, uint64_t phys)
{
	struct fs_phys p;

	CHECK(fs_map(fs, logical, mirror, &p) == 0);
	CHECK(p.devid == devid);
	CHECK(p.physical == phys);
	if (p.devid != devid || p.physical != phys)
		fprintf(stderr, "  logical %llu mirror %d: devid %llu phys %llu\n", (unsigned long long)logical,
			mirror, (unsigned long long)p.devid, (unsigned long long)p.physical);
}

static void free_map(struct fs *fs)
{
	for (int i = 0; i < fs->num_chunks; i++)
		free(fs->chunks[i].stripes);
	free(fs->chunks);
}

TEST(map_profiles)
{
	struct fs fs;
	const uint64_t D = BTRFS_BLOCK_GROUP_DATA;

	memset(&fs, 0, sizeof(fs));
	add_chunk(&fs, 0, D, 1, 0);                                  /* single */
	add_chunk(&fs, 100 * MIB, D | BTRFS_BLOCK_GROUP_DUP, 2, 0);
	add_chunk(&fs, 200 * MIB, D | BTRFS_BLOCK_GROUP_RAID0, 3, 0);
	add_chunk(&fs, 300 * MIB, D | BTRFS_BLOCK_GROUP_RAID10, 4, 2);
	add_chunk(&fs, 400 * MIB, D | BTRFS_BLOCK_GROUP_RAID5, 3, 0);
	add_chunk(&fs, 500 * MIB, D | BTRFS_BLOCK_GROUP_RAID6, 4, 0);
	add_chunk(&fs, 600 * MIB, D | BTRFS_BLOCK_GROUP_RAID1C3, 3, 0);

	expect(&fs, 12345, 0, 1, 1000 * MIB + 12345);
	CHECK(fs_num_copies(&fs, 100 * MIB) == 2);
	expect(&fs, 100 * MIB + 7, 2, 2, 2000 * MIB + 7);
	/* RAID0: stripe 4 of 3 devices -> device 2, second row */
	expect(&fs, 200 * MIB + 4 * SL + 9, 1, 2, 2000 * MIB + SL + 9);
	/* RAID10 with 2 groups: stripe 3 -> group 1, second row; mirror 2 = second device of group */
	CHECK(fs_num_copies(&fs, 300 * MIB) == 2);
	expect(&fs, 300 * MIB + 3 * SL, 1, 3, 3000 * MIB + SL);
	expect(&fs, 300 * MIB + 3 * SL, 2, 4, 4000 * MIB + SL);
	/* RAID5 on 3 devices: 2 data stripes per row, rotating by the row number */
	expect(&fs, 400 * MIB, 1, 1, 1000 * MIB);
	expect(&fs, 400 * MIB + SL, 1, 2, 2000 * MIB);
	expect(&fs, 400 * MIB + 2 * SL, 1, 2, 2000 * MIB + SL);
	expect(&fs, 400 * MIB + 3 * SL, 1, 3, 3000 * MIB + SL);
	/* RAID6 on 4: 2 data stripes per row */
	expect(&fs, 500 * MIB + 5 * SL, 1, 4, 4000 * MIB + 2 * SL);
	CHECK(fs_num_copies(&fs, 600 * MIB) == 3);
	expect(&fs, 600 * MIB + 1, 3, 3, 3000 * MIB + 1);
	{
		struct fs_phys p;
		CHECK(fs_map(&fs, 600 * MIB, 4, &p) == -EINVAL);
		CHECK(fs_map(&fs, 90 * MIB, 1, &p) == -ENOENT);
		CHECK(fs_map(&fs, 200 * MIB + 10, 1, &p) == 0 && p.len == SL - 10);
	}
	free_map(&fs);
}

TEST(chunk_rejects_bad_shapes)
{
	struct fs fs;
	uint8_t buf[sizeof(struct btrfs_chunk) + sizeof(struct btrfs_stripe)];
	struct btrfs_chunk *c = (void *)buf;

	memset(&fs, 0, sizeof(fs));
	memset(buf, 0, sizeof(buf));
	put_le64(&c->length, MIB);
	put_le64(&c->stripe_len, SL);
	put_le64(&c->type, BTRFS_BLOCK_GROUP_RAID10);
	put_le16(&c->num_stripes, 2);
	CHECK(fs_chunk_add(&fs, 0, c, sizeof(buf)) == -EUCLEAN);       /* sub_stripes 0 */
	put_le64(&c->type, BTRFS_BLOCK_GROUP_RAID1);
	CHECK(fs_chunk_add(&fs, 0, c, sizeof(buf) - 1) == -EUCLEAN);   /* short item */
	put_le64(&c->stripe_len, 0);
	CHECK(fs_chunk_add(&fs, 0, c, sizeof(buf)) == -EUCLEAN);
	add_chunk(&fs, 0, BTRFS_BLOCK_GROUP_DATA, 1, 0);
	add_chunk(&fs, 0, BTRFS_BLOCK_GROUP_DATA, 1, 0);     /* same chunk twice: accepted once */
	CHECK(fs.num_chunks == 1);
	put_le64(&c->stripe_len, SL);
	put_le16(&c->num_stripes, 1);
	put_le64(&c->type, BTRFS_BLOCK_GROUP_DATA);
	CHECK(fs_chunk_add(&fs, MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);     /* overlaps */
	fs.sectorsize = 4096;
	put_le64(&c->length, MIB + 512);
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);       /* unaligned length */
	put_le64(&c->length, MIB);
	CHECK(fs_chunk_add(&fs, 512 * MIB + 512, c, fs_chunk_item_size(1)) == -EUCLEAN); /* unaligned start */
	put_le64(&c->length, 1ULL << 48);
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);       /* 2^32 stripes */
	put_le64(&c->length, MIB);
	put_le32(&c->sector_size, 4096);
	put_le64(&c->type, 0);
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);       /* no kind of block group */
	put_le64(&c->type, BTRFS_BLOCK_GROUP_SYSTEM | BTRFS_BLOCK_GROUP_DATA);
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);       /* system with data */
	put_le64(&c->type, BTRFS_BLOCK_GROUP_DATA | (1ULL << 20));
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);       /* a bit it does not know */
	put_le64(&c->type, BTRFS_BLOCK_GROUP_DATA);
	put_le32(&c->sector_size, 512);
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == -EUCLEAN);       /* not the fs's sector size */
	put_le32(&c->sector_size, 4096);
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1) + 1) == -EUCLEAN); /* item longer than its stripes */
	CHECK(fs_chunk_add(&fs, 512 * MIB, c, fs_chunk_item_size(1)) == 0);
	CHECK(fs.num_chunks == 2);
	free_map(&fs);
}

/* A chunk of the map written back as an item is the chunk again. */
TEST(chunk_encode_round_trip)
{
	struct fs fs;
	uint8_t buf[sizeof(struct btrfs_chunk) + 3 * sizeof(struct btrfs_stripe)];

	memset(&fs, 0, sizeof(fs));
	fs.sectorsize = 4096;
	add_chunk(&fs, 0, BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_RAID1C3, 3, 0);
	CHECK(fs_chunk_encode(&fs.chunks[0], 4096, buf) == fs_chunk_item_size(3));
	free_map(&fs);
	memset(&fs, 0, sizeof(fs));
	fs.sectorsize = 4096;
	CHECK(fs_chunk_add(&fs, 0, (struct btrfs_chunk *)buf, fs_chunk_item_size(3)) == 0);
	CHECK(fs.num_chunks == 1 && fs.chunks[0].num_stripes == 3 && fs.chunks[0].stripes[2].devid == 3 &&
	      fs.chunks[0].stripes[2].offset == 3000 * MIB && fs.chunks[0].length == 64 * MIB);
	free_map(&fs);
}
