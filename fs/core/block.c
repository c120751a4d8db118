/* Tree blocks: verification, a bounded LRU cache, and field accessors. */
#include "fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HDR_SIZE sizeof(struct btrfs_header)
#define CACHE_BUCKET_BITS 10
#define CACHE_BUCKETS (1 << CACHE_BUCKET_BITS)

struct fs_block_cache {
	struct fs_block *buckets[CACHE_BUCKETS];
	/* the cached blocks nobody holds, head: the last released; a held block
	 * (refs > 0) is out of the list, so that trimming never walks over them */
	struct fs_block *lru_head, *lru_tail;
	size_t bytes, limit;
	struct fs_block *spare;                 /* freed blocks kept for reuse */
	int nspare;
};
/* Reusing a few freed blocks spares the allocator's page returns (costly with
 * musl) when a walk streams through many blocks. */
#define CACHE_SPARES 32

/* ---- verification ------------------------------------------------------- */

/* A subvolume's id as the kernel's owner rule counts them: the top one, and every id
 * from 256 below 2^63 (not the relocation trees' and the other reserved ids above). */
static int owner_is_subvol(uint64_t id)
{
	return id == BTRFS_FS_TREE_OBJECTID || (int64_t)id >= (int64_t)BTRFS_FIRST_FREE_OBJECTID;
}

int fs_owner_fits(uint64_t want, uint64_t found)
{
	if (want == BTRFS_TREE_LOG_OBJECTID || want == BTRFS_TREE_RELOC_OBJECTID)
		return 1;       /* their owner is their key's offset */
	return owner_is_subvol(want) ? owner_is_subvol(found) : found == want;
}

static int check_expect(const struct btrfs_header *h, const struct fs_block_expect *exp,
			const struct fs_key *first, struct fs_error *err)
{
	uint64_t gen = get_le64(&h->generation);

	if (!exp)
		return 0;
	if (exp->generation && gen != exp->generation && exp->owner && !fs_owner_fits(exp->owner, get_le64(&h->owner)))
		/* where a write was lost: what is there is no older copy of the block */
		return fs_err(err, -EUCLEAN, "parent transid verify failed: wanted %llu found %llu" FS_FOREIGN_BLOCK " %llu)",
			      (unsigned long long)exp->generation, (unsigned long long)gen,
			      (unsigned long long)get_le64(&h->owner));
	if (exp->generation && gen != exp->generation)
		return fs_err(err, -EUCLEAN, "parent transid verify failed: wanted %llu found %llu",
			      (unsigned long long)exp->generation, (unsigned long long)gen);
	if (exp->level >= 0 && h->level != exp->level)
		return fs_err(err, -EUCLEAN, "level mismatch: wanted %d found %u", exp->level, h->level);
	if (exp->owner && !fs_owner_fits(exp->owner, get_le64(&h->owner)))
		return fs_err(err, -EUCLEAN, "owner mismatch: wanted %llu found %llu",
			      (unsigned long long)exp->owner, (unsigned long long)get_le64(&h->owner));
	if (exp->first_key && first && fs_key_cmp(exp->first_key, first))
		return fs_err(err, -EUCLEAN, "first key mismatch: parent has (%llu %u %llu) block has (%llu %u %llu)",
			      (unsigned long long)exp->first_key->objectid, exp->first_key->type,
			      (unsigned long long)exp->first_key->offset, (unsigned long long)first->objectid,
			      first->type, (unsigned long long)first->offset);
	return 0;
}

/* Key of item/pointer slot i; the item array layout depends on the level. */
static const struct btrfs_disk_key *slot_key(const uint8_t *buf, int level, uint32_t i)
{
	size_t stride = level ? sizeof(struct btrfs_key_ptr) : sizeof(struct btrfs_item);
	return (const struct btrfs_disk_key *)(buf + HDR_SIZE + i * stride);
}

static int check_items(const uint8_t *buf, uint32_t nodesize, struct fs_error *err)
{
	const struct btrfs_header *h = (const void *)buf;
	uint32_t nr = get_le32(&h->nritems), space = nodesize - (uint32_t)HDR_SIZE;
	size_t stride = h->level ? sizeof(struct btrfs_key_ptr) : sizeof(struct btrfs_item);
	struct fs_key prev = { 0, 0, 0 }, cur;

	if (nr > space / stride)
		return fs_err(err, -EUCLEAN, "nritems %u too large for nodesize %u", nr, nodesize);
	if (h->level && !nr)
		return fs_err(err, -EUCLEAN, "node with no pointers");
	for (uint32_t i = 0; i < nr; i++) {
		fs_key_from_disk(&cur, slot_key(buf, h->level, i));
		if (i && fs_key_cmp(&prev, &cur) >= 0) {
			fs_err(err, -EUCLEAN, "keys out of order at slot %u", i);
			return fs_err_key(err, &cur);
		}
		prev = cur;
		if (!h->level) {
			const struct btrfs_item *it = (const void *)slot_key(buf, 0, i);
			uint32_t off = get_le32(&it->offset), size = get_le32(&it->size);
			if (off > space || size > space - off || off < nr * stride) {
				fs_err(err, -EUCLEAN, "item %u data (offset %u size %u) outside the leaf", i, off, size);
				return fs_err_key(err, &cur);
			}
		}
	}
	return 0;
}

/* Whether the block is one this filesystem wrote at this place: its checksum, address
 * and fsid (what was there before anything was written, zeros, is none). */
static int check_written_here(const uint8_t *buf, const struct fs_block_ctx *ctx, struct fs_error *err)
{
	const struct btrfs_header *h = (const void *)buf;
	uint8_t csum[CSUM_MAX_SIZE];

	if (!ctx->skip_csum) {
		if (csum_compute(ctx->csum_type, buf + BTRFS_CSUM_START, ctx->nodesize - BTRFS_CSUM_START, csum))
			return fs_err(err, -ENOTSUP, "unsupported csum type %d", ctx->csum_type);
		if (memcmp(csum, h->csum, csum_size(ctx->csum_type)))
			return fs_err(err, -EUCLEAN, "bad tree block checksum");
	}
	if (get_le64(&h->bytenr) != ctx->bytenr)
		return fs_err(err, -EUCLEAN, "bad tree block bytenr %llu",
			      (unsigned long long)get_le64(&h->bytenr));
	if (ctx->fsid && memcmp(h->fsid, ctx->fsid, BTRFS_FSID_SIZE))
		return fs_err(err, -EUCLEAN, "tree block fsid does not match the filesystem");
	return 0;
}

static int check_block(const uint8_t *buf, const struct fs_block_ctx *ctx,
		       const struct fs_block_expect *exp, struct fs_error *err)
{
	const struct btrfs_header *h = (const void *)buf;
	struct fs_key first;
	int ret;

	if (h->level >= BTRFS_MAX_LEVEL)
		return fs_err(err, -EUCLEAN, "bad tree block level %u", h->level);
	if (!get_le64(&h->owner))
		return fs_err(err, -EUCLEAN, "tree block owner is 0");
	ret = check_items(buf, ctx->nodesize, err);
	if (ret)
		return ret;
	if (get_le32(&h->nritems))
		fs_key_from_disk(&first, slot_key(buf, h->level, 0));
	return check_expect(h, exp, get_le32(&h->nritems) ? &first : NULL, err);
}

/* The tree a bad block is reported in: its owner, or the tree that wanted it when the
 * owner could not be in that tree (the block is another tree's). */
static uint64_t error_tree(const struct btrfs_header *h, const struct fs_block_expect *exp)
{
	uint64_t owner = get_le64(&h->owner);

	return exp && exp->owner && !fs_owner_fits(exp->owner, owner) ? exp->owner : owner;
}

int fs_block_check(const uint8_t *buf, const struct fs_block_ctx *ctx,
		   const struct fs_block_expect *exp, struct fs_error *err)
{
	int ret;

	if (ctx->nodesize < 4096 || ctx->nodesize > 65536)
		return fs_err(err, -EINVAL, "bad nodesize %u", ctx->nodesize);
	ret = check_written_here(buf, ctx, err);
	if (ret && err)
		err->wanted_gen = exp ? exp->generation : 0;
	else if (!ret)
		ret = check_block(buf, ctx, exp, err);
	if (ret && err) {
		err->logical = ctx->bytenr;
		err->tree = error_tree((const struct btrfs_header *)buf, exp);
	}
	return ret;
}

/* ---- cache -------------------------------------------------------------- */

static struct fs_block_cache *cache_of(struct fs *fs)
{
	if (!fs->cache) {
		fs->cache = calloc(1, sizeof(*fs->cache));
		if (fs->cache)
			fs->cache->limit = FS_DEFAULT_CACHE;
	}
	return fs->cache;
}

static void lru_unlink(struct fs_block_cache *c, struct fs_block *b)
{
	if (!b->lru_prev && c->lru_head != b)
		return;                 /* not in the list */
	if (b->lru_prev) b->lru_prev->lru_next = b->lru_next; else c->lru_head = b->lru_next;
	if (b->lru_next) b->lru_next->lru_prev = b->lru_prev; else c->lru_tail = b->lru_prev;
	b->lru_prev = b->lru_next = NULL;
}

static void lru_push_head(struct fs_block_cache *c, struct fs_block *b)
{
	b->lru_prev = NULL;
	b->lru_next = c->lru_head;
	if (c->lru_head)
		c->lru_head->lru_prev = b;
	c->lru_head = b;
	if (!c->lru_tail)
		c->lru_tail = b;
}

static struct fs_block **bucket(struct fs_block_cache *c, uint64_t bytenr)
{
	/* Fibonacci hashing: tree blocks are nodesize-aligned, so the low bits of
	 * bytenr >> 12 alone would leave most buckets empty. */
	return &c->buckets[((bytenr >> 12) * 0x9E3779B97F4A7C15ull) >> (64 - CACHE_BUCKET_BITS)];
}

static void cache_remove(struct fs_block_cache *c, struct fs_block *b)
{
	struct fs_block **pp = bucket(c, b->bytenr);

	while (*pp && *pp != b)
		pp = &(*pp)->hash_next;
	if (*pp)
		*pp = b->hash_next;
	lru_unlink(c, b);
	c->bytes -= b->size;
	b->cached = 0;
}

static void block_recycle(struct fs_block_cache *c, struct fs_block *b)
{
	if (c && c->nspare < CACHE_SPARES) {
		b->hash_next = c->spare;
		c->spare = b;
		c->nspare++;
		return;
	}
	free(b);
}

/* Drops unused blocks from the cold end until the cache fits its limit. */
static void cache_shrink(struct fs_block_cache *c)
{
	while (c->lru_tail && c->bytes > c->limit) {
		struct fs_block *b = c->lru_tail;

		cache_remove(c, b);
		block_recycle(c, b);
	}
}

static struct fs_block *cache_lookup(struct fs_block_cache *c, uint64_t bytenr)
{
	for (struct fs_block *b = *bucket(c, bytenr); b; b = b->hash_next)
		if (b->bytenr == bytenr)
			return b;
	return NULL;
}

static void cache_insert(struct fs_block_cache *c, struct fs_block *b)
{
	struct fs_block **pp = bucket(c, b->bytenr);

	b->hash_next = *pp;
	*pp = b;
	c->bytes += b->size;    /* held by its maker: in the list when released */
	b->cached = 1;
	cache_shrink(c);
}

void fs_cache_set_limit(struct fs *fs, size_t bytes)
{
	struct fs_block_cache *c = cache_of(fs);

	if (!c)
		return;
	c->limit = bytes ? bytes : FS_DEFAULT_CACHE;
	cache_shrink(c);
}

void fs_block_cache_free(struct fs *fs)
{
	struct fs_block_cache *c = fs->cache;

	if (!c)
		return;
	for (size_t i = 0; i < CACHE_BUCKETS; i++)
		while (c->buckets[i]) {
			struct fs_block *b = c->buckets[i];

			cache_remove(c, b);
			if (!b->refs)
				free(b);
		}
	while (c->spare) {
		struct fs_block *b = c->spare;
		c->spare = b->hash_next;
		free(b);
	}
	free(c);
	fs->cache = NULL;
}

void fs_block_put(struct fs *fs, struct fs_block *b)
{
	if (!b)
		return;
	if (--b->refs > 0)
		return;
	if (!b->cached) {
		block_recycle(fs->cache, b);
	} else if (fs->cache) {
		lru_push_head(fs->cache, b);
		cache_shrink(fs->cache);
	}
}

/* ---- reading ------------------------------------------------------------ */

/* The fsid tree block headers carry: a seed device's blocks have the seed's. */
static const uint8_t *block_fsid(struct fs *fs, uint64_t bytenr, int mirror)
{
	struct fs_phys ph;

	if (fs->num_seeds && !fs_map(fs, bytenr, mirror, &ph) && ph.dev && fs_device_is_seed(fs, ph.dev))
		return ph.dev->sb.dev_item.fsid;
	return fs->meta_uuid;
}

static int read_verify(struct fs *fs, struct fs_block *b, int mirror, const struct fs_block_expect *exp)
{
	struct fs_block_ctx ctx = { fs->nodesize, fs->csum_type, block_fsid(fs, b->bytenr, mirror),
				    b->bytenr, 0 };
	int ret = fs_read_logical(fs, b->bytenr, b->data, b->size, mirror);

	/* an fsid change cut short: the new fsid is as good as the old one */
	if (!ret && fs->changing_fsid && !memcmp(((const struct btrfs_header *)b->data)->fsid, fs->fsid,
						 BTRFS_FSID_SIZE))
		ctx.fsid = fs->fsid;
	if (!ret)
		ret = fs_block_check(b->data, &ctx, exp, &fs->err);
	if (ret) {
		fs->err.logical = b->bytenr;
		fs->err.mirror = mirror;
	}
	b->mirror = mirror;
	return ret;
}

static struct fs_block *block_alloc(struct fs *fs, uint64_t bytenr)
{
	struct fs_block_cache *c = fs->cache;
	struct fs_block *b;

	if (c && c->spare && c->spare->size == fs->nodesize) {
		b = c->spare;
		c->spare = b->hash_next;
		c->nspare--;
	} else {
		b = malloc(sizeof(*b) + fs->nodesize);
	}
	if (!b) {
		fs_err_at(&fs->err, -ENOMEM, 0, bytenr, "out of memory for a tree block");
		return NULL;
	}
	memset(b, 0, sizeof(*b));       /* the data is read in full before use */
	b->bytenr = bytenr;
	b->size = fs->nodesize;
	b->refs = 1;
	return b;
}

struct fs_block *fs_block_read_mirror(struct fs *fs, uint64_t bytenr, int mirror,
				      const struct fs_block_expect *exp)
{
	struct fs_block *b;

	if (bytenr % fs->sectorsize) {
		fs_err_at(&fs->err, -EUCLEAN, 0, bytenr, "tree block not aligned to sectorsize");
		return NULL;
	}
	b = block_alloc(fs, bytenr);
	if (b && read_verify(fs, b, mirror, exp)) {
		block_recycle(fs->cache, b);
		return NULL;
	}
	return b;
}

static int cached_expect_ok(struct fs *fs, struct fs_block *b, const struct fs_block_expect *exp)
{
	struct fs_key first;
	int ret;

	if (fs_block_nritems(b))
		fs_block_level(b) ? fs_node_key(b, 0, &first) : fs_item_key(b, 0, &first);
	ret = check_expect(fs_block_header(b), exp, fs_block_nritems(b) ? &first : NULL, &fs->err);
	if (ret) {
		fs->err.logical = b->bytenr;
		fs->err.tree = error_tree(fs_block_header(b), exp);
	}
	return ret;
}

/* Tries every copy in turn; each bad copy is reported before the next. */
static struct fs_block *read_any_copy(struct fs *fs, uint64_t bytenr, const struct fs_block_expect *exp)
{
	int copies = fs_num_copies(fs, bytenr), first_missing = 0;
	struct fs_error first_err;
	struct fs_block *b;

	if (!copies) {
		fs_err_at(&fs->err, -EUCLEAN, 0, bytenr, "tree block address not mapped by any chunk");
		return NULL;
	}
	for (int m = 1; m <= copies; m++) {
		b = fs_block_read_mirror(fs, bytenr, m, exp);
		if (b)
			return b;
		fs_copy_failed(fs, bytenr, m, &first_err, &first_missing);
	}
	fs->err = first_err;
	return NULL;
}

struct fs_block *fs_block_read(struct fs *fs, uint64_t bytenr, const struct fs_block_expect *exp)
{
	struct fs_block_cache *c = cache_of(fs);
	struct fs_block *b = c ? cache_lookup(c, bytenr) : NULL;

	if (b) {
		if (cached_expect_ok(fs, b, exp))
			return NULL;
		if (!b->refs++)
			lru_unlink(c, b);
		return b;
	}
	b = read_any_copy(fs, bytenr, exp);
	if (b && c)
		cache_insert(c, b);
	return b;
}

struct fs_block *fs_block_create(struct fs *fs, uint64_t bytenr)
{
	struct fs_block_cache *c = cache_of(fs);
	struct fs_block *b = c ? cache_lookup(c, bytenr) : NULL;

	if (b) {
		/* a tree uses the block that the extent tree says is free */
		fs_err_at(&fs->err, -EUCLEAN, fs_block_owner(b), bytenr,
			  "block in use by a tree is free in the extent tree");
		return NULL;
	}
	b = c ? block_alloc(fs, bytenr) : NULL;
	if (!b)
		return NULL;
	memset(b->data, 0, b->size);
	cache_insert(c, b);
	return b;
}

void fs_block_forget(struct fs *fs, struct fs_block *b)
{
	if (b->cached && fs->cache)
		cache_remove(fs->cache, b);
	fs_block_put(fs, b);
}

/* ---- accessors ---------------------------------------------------------- */

uint32_t fs_block_nritems(const struct fs_block *b) { return get_le32(&fs_block_header(b)->nritems); }
int fs_block_level(const struct fs_block *b) { return fs_block_header(b)->level; }
uint64_t fs_block_generation(const struct fs_block *b) { return get_le64(&fs_block_header(b)->generation); }
uint64_t fs_block_owner(const struct fs_block *b) { return get_le64(&fs_block_header(b)->owner); }
uint64_t fs_block_flags(const struct fs_block *b) { return get_le64(&fs_block_header(b)->flags); }

static const struct btrfs_item *leaf_item(const struct fs_block *b, uint32_t slot)
{
	if (fs_block_level(b) || slot >= fs_block_nritems(b))
		return NULL;
	return (const struct btrfs_item *)slot_key(b->data, 0, slot);
}

static const struct btrfs_key_ptr *node_ptr(const struct fs_block *b, uint32_t slot)
{
	if (!fs_block_level(b) || slot >= fs_block_nritems(b))
		return NULL;
	return (const struct btrfs_key_ptr *)slot_key(b->data, 1, slot);
}

int fs_item_key(const struct fs_block *b, uint32_t slot, struct fs_key *key)
{
	const struct btrfs_item *it = leaf_item(b, slot);

	if (!it)
		return -EINVAL;
	fs_key_from_disk(key, &it->key);
	return 0;
}

const uint8_t *fs_item_data(const struct fs_block *b, uint32_t slot, uint32_t *size)
{
	const struct btrfs_item *it = leaf_item(b, slot);

	if (!it)
		return NULL;
	*size = get_le32(&it->size);
	return b->data + HDR_SIZE + get_le32(&it->offset);
}

int fs_node_key(const struct fs_block *b, uint32_t slot, struct fs_key *key)
{
	const struct btrfs_key_ptr *p = node_ptr(b, slot);

	if (!p)
		return -EINVAL;
	fs_key_from_disk(key, &p->key);
	return 0;
}

/* Key of item or pointer slot, whichever b holds. */
static int block_key(const struct fs_block *b, uint32_t slot, struct fs_key *k)
{
	return fs_block_level(b) ? fs_node_key(b, slot, k) : fs_item_key(b, slot, k);
}

uint32_t fs_block_lower_bound(const struct fs_block *b, const struct fs_key *key)
{
	uint32_t lo = 0, hi = fs_block_nritems(b);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct fs_key k;

		if (block_key(b, mid, &k) || fs_key_cmp(&k, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t fs_node_child_slot(const struct fs_block *b, const struct fs_key *key)
{
	uint32_t slot = fs_block_lower_bound(b, key);
	struct fs_key k;

	if (slot == fs_block_nritems(b) || fs_node_key(b, slot, &k) || fs_key_cmp(&k, key) > 0)
		slot = slot ? slot - 1 : 0;
	return slot;
}

uint64_t fs_node_blockptr(const struct fs_block *b, uint32_t slot)
{
	const struct btrfs_key_ptr *p = node_ptr(b, slot);
	return p ? get_le64(&p->blockptr) : 0;
}

uint64_t fs_node_ptr_generation(const struct fs_block *b, uint32_t slot)
{
	const struct btrfs_key_ptr *p = node_ptr(b, slot);
	return p ? get_le64(&p->generation) : 0;
}
