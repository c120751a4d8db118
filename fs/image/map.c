//build:Oz
/* The chunk map of a restore: the system chunks of the dump's superblock, where every
 * chunk of the dump's chunk tree goes on the one restored device, and the chunks of
 * other devices that overlap one already placed moved past the end of them all. */
#include "internal.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int map_sys_array_next(const struct btrfs_super_block *sb, uint32_t *pos, struct fs_key *k,
		       const struct btrfs_chunk **c)
{
	uint32_t size = get_le32(&sb->sys_chunk_array_size);

	if (*pos >= size)
		return 0;
	if (size > sizeof(sb->sys_chunk_array) || size - *pos < sizeof(struct btrfs_disk_key))
		return -EUCLEAN;
	fs_key_from_disk(k, (const struct btrfs_disk_key *)(sb->sys_chunk_array + *pos));
	*pos += sizeof(struct btrfs_disk_key);
	*c = fs_chunk_item(sb->sys_chunk_array + *pos, size - *pos);
	if (k->type != BTRFS_CHUNK_ITEM_KEY || !*c)
		return -EUCLEAN;
	*pos += fs_chunk_item_size(get_le16(&(*c)->num_stripes));
	return 1;
}

int map_sys_array(struct restorer *r)
{
	uint32_t pos = 0;
	struct fs_key k;
	const struct btrfs_chunk *c;
	int ret;

	while ((ret = map_sys_array_next(&r->sb, &pos, &k, &c)) == 1) {
		if (r->nsys == sizeof(r->sys) / sizeof(r->sys[0]))
			break;
		r->sys[r->nsys++] = (struct chunk_place){ .logical = k.offset, .length = get_le64(&c->length) };
	}
	if (ret < 0)
		return fs_err(r->err, ret, "bad chunk in the superblock's sys_array at %u", pos);
	return r->nsys ? 0 : fs_err(r->err, -EUCLEAN, "no system chunk in the superblock");
}

int map_in_sys_chunk(const struct restorer *r, uint64_t logical, uint64_t len)
{
	for (size_t i = 0; i < r->nsys; i++)
		if (logical < r->sys[i].logical + r->sys[i].length && r->sys[i].logical < logical + len)
			return 1;
	return 0;
}

/* Chunks a dump may name: a filesystem of 4 PiB in 1 GiB chunks. */
#define MAX_CHUNKS (4u << 20)

/* The chunk at logical, where its first stripe (and a DUP chunk's second) lies. */
static int add_chunk(struct restorer *r, uint64_t logical, const struct btrfs_chunk *c)
{
	struct chunk_place p = { logical, get_le64(&c->length), get_le64(&fs_chunk_stripe(c, 0)->offset), 0,
				 get_le64(&c->type), r->nchunks, 0 };

	if (p.type & BTRFS_BLOCK_GROUP_DUP && get_le16(&c->num_stripes) > 1)
		p.physical_dup = get_le64(&fs_chunk_stripe(c, 1)->offset);
	if (!p.length || logical + p.length < logical || p.physical + p.length < p.physical ||
	    p.physical_dup + p.length < p.physical_dup)
		return fs_err(r->err, -EUCLEAN, "chunk at %llu of the dump is out of range",
			      (unsigned long long)logical);
	if (r->nchunks == MAX_CHUNKS)
		return fs_err(r->err, -EFBIG, "the dump names more than %u chunks", MAX_CHUNKS);
	if (vec_reserve(&r->chunks, &r->cap, r->nchunks + 1, sizeof(*r->chunks)))
		return fs_err(r->err, -ENOMEM, "out of memory");
	r->chunks[r->nchunks++] = p;
	return 0;
}

int map_chunk_blocks(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	struct fs_block *b = malloc(sizeof(*b) + r->nodesize);
	struct fs_block_ctx ctx = { r->nodesize, get_le16(&r->sb.csum_type), r->fsid, 0, 0 };
	int ret = b ? 0 : fs_err(r->err, -ENOMEM, "out of memory");

	for (size_t off = 0; !ret && off + r->nodesize <= len; off += r->nodesize) {
		const struct btrfs_header *h = (const struct btrfs_header *)(buf + off);

		ctx.bytenr = logical + off;
		if (!map_in_sys_chunk(r, ctx.bytenr, r->nodesize) || get_le64(&h->owner) != BTRFS_CHUNK_TREE_OBJECTID ||
		    h->level || fs_block_check(buf + off, &ctx, &FS_EXPECT_NONE, NULL))
			continue;
		b->bytenr = ctx.bytenr;
		b->size = r->nodesize;
		memcpy(b->data, buf + off, r->nodesize);
		for (uint32_t i = 0; !ret && i < fs_block_nritems(b); i++) {
			struct fs_key k;
			uint32_t size;
			const uint8_t *data = fs_item_data(b, i, &size);
			const struct btrfs_chunk *c = data ? fs_chunk_item(data, size) : NULL;

			if (fs_item_key(b, i, &k))
				continue;
			if (k.type == BTRFS_CHUNK_ITEM_KEY && c)
				ret = add_chunk(r, k.offset, c);
			if (!ret && r->multi && data)
				ret = multi_keep_item(r, &k, data, size);
		}
	}
	free(b);
	return ret;
}

static int superblock_inside(uint64_t physical, uint64_t len)
{
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (btrfs_super_offset(m) >= physical && btrfs_super_offset(m) - physical < len)
			return 1;
	return 0;
}

static int by_logical(const void *a, const void *b)
{
	const struct chunk_place *x = a, *y = b;

	if (x->logical != y->logical)
		return x->logical < y->logical ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct chunk_place *)a)->seq, y = ((const struct chunk_place *)b)->seq;

	return x < y ? -1 : x > y;
}

/* Each chunk found more than once kept once (the first found). */
static void drop_repeats(struct restorer *r)
{
	size_t n = 0;

	sort_stable(r->chunks, r->nchunks, sizeof(*r->chunks), by_logical);
	for (size_t i = 0; i < r->nchunks; i++)
		if (!n || r->chunks[i].logical != r->chunks[n - 1].logical)
			r->chunks[n++] = r->chunks[i];
	r->nchunks = n;
}

/* Chunks of several devices made one device's: each insertion into placed (below) may
 * move all of it, so their number is kept where the worst order still takes seconds. */
#define MAX_ONEDEV_CHUNKS (1u << 17)

/* Marks, in the order they were found, the chunks whose first stripe overlaps one placed
 * before (of another device). placed: the ranges kept, sorted and apart, so that a new
 * one can only overlap its neighbours there. */
static int find_overlaps(struct restorer *r)
{
	struct range { uint64_t start, end; } *placed;
	size_t n = 0;

	if (r->nchunks > MAX_ONEDEV_CHUNKS)
		return fs_err(r->err, -EFBIG, "the dump names %zu chunks, more than %u can be made one device's (-m restores onto several)",
			      r->nchunks, MAX_ONEDEV_CHUNKS);
	if (!(placed = malloc((r->nchunks ? r->nchunks : 1) * sizeof(*placed))))
		return fs_err(r->err, -ENOMEM, "out of memory");
	sort_stable(r->chunks, r->nchunks, sizeof(*r->chunks), by_seq);
	for (size_t i = 0; i < r->nchunks; i++) {
		struct chunk_place *c = &r->chunks[i];
		size_t at = lower_bound_u64(placed, n, sizeof(*placed), offsetof(struct range, start), c->physical);

		c->moved = (at < n && placed[at].start < c->physical + c->length) ||
			   (at > 0 && placed[at - 1].end > c->physical);
		if (c->moved)
			continue;
		memmove(placed + at + 1, placed + at, (n - at) * sizeof(*placed));
		placed[at] = (struct range){ c->physical, c->physical + c->length };
		n++;
	}
	free(placed);
	return 0;
}

/* Chunks that must move go past the end of every chunk, the last found first (as
 * btrfs-progs places them); then the map is sorted for map_find. */
int map_finish(struct restorer *r)
{
	uint64_t end = 0;
	int ret;

	drop_repeats(r);
	if (r->several && !r->multi && (ret = find_overlaps(r)))
		return ret;
	for (size_t i = 0; i < r->nchunks; i++) {
		const struct chunk_place *c = &r->chunks[i];
		uint64_t e = (c->physical_dup > c->physical ? c->physical_dup : c->physical) + c->length;

		end = e > end ? e : end;
	}
	for (size_t i = r->nchunks; i-- > 0;) {
		struct chunk_place *c = &r->chunks[i];

		if (!c->moved)
			continue;
		if (superblock_inside(c->physical, c->length))
			r->drop_space_cache = 1;
		if (end + c->length < end)
			return fs_err(r->err, -EUCLEAN, "chunks of the dump reach past 2^64");
		c->physical = end;
		end += c->length;
	}
	sort_stable(r->chunks, r->nchunks, sizeof(*r->chunks), by_logical);
	return 0;
}

const struct chunk_place *map_find(const struct restorer *r, uint64_t logical)
{
	size_t i = lower_bound_u64(r->chunks, r->nchunks, sizeof(*r->chunks),
				   offsetof(struct chunk_place, logical), logical);

	if (i < r->nchunks && r->chunks[i].logical == logical)
		return &r->chunks[i];
	if (i && logical - r->chunks[i - 1].logical < r->chunks[i - 1].length)
		return &r->chunks[i - 1];
	return NULL;
}
