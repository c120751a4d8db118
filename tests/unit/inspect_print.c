/* dump-tree / dump-super printers on raw blocks: a hand-built leaf prints exactly the
 * btrfs-progs text, and random blocks and superblocks print without reading outside the
 * buffer (run under ASan by `make sanitize`). */
#include "unit.h"
#include "applets/inspect/print.c"
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#if CFG_APPLET_INSPECT
/* Runs fn with stdout going to a temporary file; returns what it printed (malloc'd). */
static char *capture(void (*fn)(const void *), const void *arg)
{
	FILE *tmp = tmpfile();
	int saved;
	long len;
	char *out;

	if (!tmp)
		return NULL;
	fflush(stdout);
	saved = dup(1);
	dup2(fileno(tmp), 1);
	fn(arg);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	len = ftell(tmp);
	out = calloc(1, (size_t)len + 1);
	rewind(tmp);
	if (out && fread(out, 1, (size_t)len, tmp) != (size_t)len)
		out[0] = 0;
	fclose(tmp);
	return out;
}

#define NODESIZE 4096
static const struct print_opts test_po = { NODESIZE, 4096, 4, 0, 0, 0 };

struct leaf_builder {
	uint8_t blk[NODESIZE];
	uint32_t nr, data_end; /* data_end: offset of the lowest item data, from the header end */
};

static void leaf_init(struct leaf_builder *l, uint64_t bytenr, uint64_t owner)
{
	memset(l, 0, sizeof(*l));
	put_le64(l->blk + offsetof(struct btrfs_header, bytenr), bytenr);
	put_le64(l->blk + offsetof(struct btrfs_header, flags),
		 BTRFS_HEADER_FLAG_WRITTEN | BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT);
	put_le64(l->blk + offsetof(struct btrfs_header, generation), 7);
	put_le64(l->blk + offsetof(struct btrfs_header, owner), owner);
	l->data_end = NODESIZE - sizeof(struct btrfs_header);
}

static void leaf_add(struct leaf_builder *l, uint64_t objectid, uint8_t type, uint64_t offset,
		     const void *data, uint32_t size)
{
	uint8_t *it = l->blk + sizeof(struct btrfs_header) + l->nr * sizeof(struct btrfs_item);

	l->data_end -= size;
	put_le64(it + offsetof(struct btrfs_disk_key, objectid), objectid);
	it[offsetof(struct btrfs_disk_key, type)] = type;
	put_le64(it + offsetof(struct btrfs_disk_key, offset), offset);
	put_le32(it + offsetof(struct btrfs_item, offset), l->data_end);
	put_le32(it + offsetof(struct btrfs_item, size), size);
	memcpy(l->blk + sizeof(struct btrfs_header) + l->data_end, data, size);
	put_le32(l->blk + offsetof(struct btrfs_header, nritems), ++l->nr);
}

static void print_leaf_fn(const void *arg)
{
	const struct leaf_builder *l = arg;

	print_tree_block(&test_po, l->blk, get_le64(l->blk + offsetof(struct btrfs_header, bytenr)));
}

TEST(print_known_leaf)
{
	static const char expect[] =
		"leaf 40960 items 3 free space 3849 generation 7 owner FS_TREE\n"
		"leaf 40960 flags 0x1(WRITTEN) backref revision 1\n"
		"fs uuid 00000000-0000-0000-0000-000000000000\n"
		"chunk uuid 00000000-0000-0000-0000-000000000000\n"
		"\titem 0 key (256 INODE_REF 256) itemoff 3983 itemsize 12\n"
		"\t\tindex 0 namelen 2 name: ..\n"
		"\titem 1 key (256 DIR_ITEM 123) itemoff 3950 itemsize 33\n"
		"\t\tlocation key (257 INODE_ITEM 0) type FILE\n"
		"\t\ttransid 9 data_len 0 name_len 3\n"
		"\t\tname: abc\n"
		"\titem 2 key (257 EXTENT_DATA 0) itemoff 3924 itemsize 26\n"
		"\t\tgeneration 9 type 0 (inline)\n"
		"\t\tinline extent data size 5 ram_bytes 5 compression 0 (none)\n";
	struct leaf_builder l;
	uint8_t ref[12] = { 0 }, dir[33] = { 0 }, fe[26] = { 0 };
	char *out;

	leaf_init(&l, 40960, BTRFS_FS_TREE_OBJECTID);
	put_le16(ref + 8, 2);
	memcpy(ref + 10, "..", 2);
	leaf_add(&l, 256, BTRFS_INODE_REF_KEY, 256, ref, sizeof(ref));
	put_le64(dir + offsetof(struct btrfs_dir_item, location), 257);
	dir[offsetof(struct btrfs_dir_item, location) + 8] = BTRFS_INODE_ITEM_KEY;
	put_le64(dir + offsetof(struct btrfs_dir_item, transid), 9);
	put_le16(dir + offsetof(struct btrfs_dir_item, name_len), 3);
	dir[offsetof(struct btrfs_dir_item, type)] = BTRFS_FT_REG_FILE;
	memcpy(dir + sizeof(struct btrfs_dir_item), "abc", 3);
	leaf_add(&l, 256, BTRFS_DIR_ITEM_KEY, 123, dir, sizeof(dir));
	put_le64(fe + offsetof(struct btrfs_file_extent_item, generation), 9);
	put_le64(fe + offsetof(struct btrfs_file_extent_item, ram_bytes), 5);
	memcpy(fe + offsetof(struct btrfs_file_extent_item, disk_bytenr), "hello", 5);
	leaf_add(&l, 257, BTRFS_EXTENT_DATA_KEY, 0, fe, sizeof(fe));
	out = capture(print_leaf_fn, &l);
	CHECK(out && !strcmp(out, expect));
	if (out && strcmp(out, expect))
		fprintf(stderr, "got:\n%s", out);
	free(out);
}

TEST(print_keys_and_flags)
{
	static const struct { uint64_t oid; uint8_t type; uint64_t off; const char *text; } keys[] = {
		{ 1, BTRFS_DEV_ITEM_KEY, 1, "key (DEV_ITEMS DEV_ITEM 1)" },
		{ 256, BTRFS_CHUNK_ITEM_KEY, 22020096, "key (FIRST_CHUNK_TREE CHUNK_ITEM 22020096)" },
		{ (uint64_t)-8, BTRFS_ROOT_ITEM_KEY, 5, "key (TREE_RELOC ROOT_ITEM FS_TREE)" },
		{ 0, BTRFS_PERSISTENT_ITEM_KEY, 1, "key (DEV_STATS PERSISTENT_ITEM 1)" },
		{ (uint64_t)-11, 0, 7, "key (FREE_SPACE UNTYPED 7)" },
		{ 0, BTRFS_QGROUP_RELATION_KEY, (1ULL << 48) | 5, "key (0/0 QGROUP_RELATION 1/5)" },
		{ 0x1122, BTRFS_UUID_KEY_SUBVOL, 0xab, "key (0x0000000000001122 UUID_KEY_SUBVOL 0x00000000000000ab)" },
		{ 5, 99, (uint64_t)-1, "key (FS_TREE UNKNOWN.99 -1)" },
	};
	char buf[80];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct btrfs_disk_key k;
		char *out;

		put_le64(&k.objectid, keys[i].oid);
		k.type = keys[i].type;
		put_le64(&k.offset, keys[i].off);
		out = capture((void (*)(const void *))print_disk_key, &k);
		CHECK(out && !strcmp(out, keys[i].text));
		free(out);
	}
	bg_flags_str(buf, sizeof(buf), BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA);
	CHECK(!strcmp(buf, "DATA|METADATA|single"));
	bg_flags_str(buf, sizeof(buf), BTRFS_BLOCK_GROUP_SYSTEM | BTRFS_BLOCK_GROUP_DUP);
	CHECK(!strcmp(buf, "SYSTEM|DUP"));
	extent_flags_str(buf, sizeof(buf), BTRFS_EXTENT_FLAG_TREE_BLOCK | BTRFS_BLOCK_FLAG_FULL_BACKREF);
	CHECK(!strcmp(buf, "TREE_BLOCK|FULL_BACKREF"));
}

static uint64_t rnd_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void print_super_fn(const void *arg)
{
	print_superblock(arg, 1);
}

/* Random item headers (most pointing inside the block) and random item bodies of every
 * printable type, random nodes and superblocks: printing must stay inside the buffers. */
TEST(print_random_blocks_stay_in_bounds)
{
	static const uint8_t types[] = {
		0, 1, 12, 13, 24, 48, 60, 72, 84, 96, 108, 120, 128, 132, 144, 156, 168, 169,
		176, 178, 180, 182, 184, 192, 198, 199, 200, 204, 216, 228, 240, 242, 244, 246,
		248, 249, 250, 251, 252, 253,
	};
	static struct btrfs_super_block sb;
	uint8_t *blk = malloc(NODESIZE);
	int devnull = open("/dev/null", O_WRONLY), saved, saved_err;

	CHECK(blk && devnull >= 0);
	if (!blk || devnull < 0)
		return;
	fflush(stdout);
	saved = dup(1);
	saved_err = dup(2);
	dup2(devnull, 1);
	dup2(devnull, 2);
	for (int round = 0; round < 3000; round++) {
		uint32_t nr = rnd() % 40;

		for (size_t i = 0; i < NODESIZE; i += 8)
			put_le64(blk + i, rnd());
		put_le32(blk + offsetof(struct btrfs_header, nritems), round % 50 ? nr : (uint32_t)rnd());
		blk[offsetof(struct btrfs_header, level)] = round % 7 ? 0 : (uint8_t)(rnd() % 9);
		for (uint32_t i = 0; i < nr; i++) {
			uint8_t *it = blk + sizeof(struct btrfs_header) + i * sizeof(struct btrfs_item);
			uint32_t size = rnd() % 300;

			it[offsetof(struct btrfs_disk_key, type)] = types[rnd() % sizeof(types)];
			if (rnd() % 4)
				put_le64(it + offsetof(struct btrfs_disk_key, objectid), rnd() % 300);
			put_le32(it + offsetof(struct btrfs_item, size), size);
			put_le32(it + offsetof(struct btrfs_item, offset),
				 rnd() % 64 ? (uint32_t)(rnd() % (NODESIZE - sizeof(struct btrfs_header) - size))
					    : (uint32_t)rnd());
		}
		print_tree_block(&test_po, blk, 0);
		memcpy(&sb, blk, NODESIZE);
		put_le32(&sb.sys_chunk_array_size, (uint32_t)(rnd() % 2200));
		put_le64(&sb.incompat_flags, rnd() % 2 ? rnd() : BTRFS_FEATURE_INCOMPAT_METADATA_UUID);
		sb.sys_chunk_array[offsetof(struct btrfs_disk_key, type)] = BTRFS_CHUNK_ITEM_KEY;
		put_le16(sb.sys_chunk_array + 17 + offsetof(struct btrfs_chunk, num_stripes),
			 (uint16_t)(rnd() % 80));
		put_le16(&sb.csum_type, (uint16_t)(rnd() % 5));
		print_super_fn(&sb);
	}
	fflush(stdout);
	dup2(saved, 1);
	dup2(saved_err, 2);
	close(saved);
	close(saved_err);
	close(devnull);
	free(blk);
}
#endif
