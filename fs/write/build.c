//build:Oz
/* Bottom-up tree builder (see build.h). */
#include "build.h"
#include "fs/core/format.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HDR sizeof(struct btrfs_header)
#define ITEM sizeof(struct btrfs_item)
#define KEYPTR sizeof(struct btrfs_key_ptr)

void *items_add(struct item_list *l, uint64_t objectid, uint8_t type, uint64_t offset,
		const void *data, uint32_t size)
{
	struct bitem *it;

	if (vec_reserve(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) ||
	    vec_reserve(&l->arena, &l->arena_cap, l->used + size + 1, 1))
		return NULL;
	it = &l->v[l->n++];
	it->key = (struct fs_key){ objectid, type, offset };
	it->size = size;
	it->data = l->used;
	if (size && data)
		memcpy(l->arena + l->used, data, size);
	else if (size)
		memset(l->arena + l->used, 0, size);
	l->used += size;
	return l->arena + it->data;
}

void *items_extend_last(struct item_list *l, const void *data, uint32_t size)
{
	struct bitem *it = &l->v[l->n - 1];

	if (vec_reserve(&l->arena, &l->arena_cap, l->used + size + 1, 1))
		return NULL;
	/* the last item's data ends at the arena's end */
	memcpy(l->arena + l->used, data, size);
	l->used += size;
	it->size += size;
	return l->arena + it->data;
}

static int bitem_cmp(const void *a, const void *b)
{
	return fs_key_cmp(&((const struct bitem *)a)->key, &((const struct bitem *)b)->key);
}

void items_sort(struct item_list *l)
{
	if (l->n > 1)
		sort_stable(l->v, l->n, sizeof(*l->v), bitem_cmp);
}

int items_merge_equal(struct item_list *l)
{
	size_t out = 0, i = 0;

	while (i < l->n) {
		size_t j = i + 1, total = l->v[i].size;

		while (j < l->n && !fs_key_cmp(&l->v[j].key, &l->v[i].key))
			total += l->v[j++].size;
		l->v[out] = l->v[i];
		if (j > i + 1) {
			/* rare (hash collisions, several links in one directory): the joined
			 * data goes to the end of the arena */
			size_t at = l->used;
			if (vec_reserve(&l->arena, &l->arena_cap, l->used + total + 1, 1))
				return -1;
			for (size_t k = i; k < j; k++) {
				memmove(l->arena + l->used, l->arena + l->v[k].data, l->v[k].size);
				l->used += l->v[k].size;
			}
			l->v[out].data = at;
			l->v[out].size = (uint32_t)total;
		}
		out++;
		i = j;
	}
	l->n = out;
	return 0;
}

void items_free(struct item_list *l)
{
	free(l->v);
	free(l->arena);
	memset(l, 0, sizeof(*l));
}

static int list_next(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	struct list_source *ls = ctx;
	const struct bitem *it;

	if (ls->pos >= ls->l->n)
		return 0;
	it = &ls->l->v[ls->pos++];
	*key = it->key;
	*data = item_data(ls->l, it);
	*size = it->size;
	return 1;
}

struct item_source list_source(struct list_source *ls, const struct item_list *l)
{
	ls->l = l;
	ls->pos = 0;
	return (struct item_source){ list_next, ls };
}

static size_t node_capacity(uint32_t nodesize)
{
	return (nodesize - HDR) / KEYPTR;
}

/* Leaves are filled greedily: an item goes into the current leaf when it fits,
 * else it starts the next one. */
int tree_shape_source(const struct item_source *src, uint32_t nodesize, struct tree_shape *out)
{
	size_t leaves = 0, room = 0, width, total;
	uint8_t level = 0;
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;
	int ret;

	while ((ret = src->next(src->ctx, &key, &data, &size)) == 1) {
		if (ITEM + size > nodesize - HDR)
			return -1;
		if (!leaves || ITEM + size > room) {
			leaves++;
			room = nodesize - HDR;
		}
		room -= ITEM + size;
	}
	if (ret < 0)
		return ret;
	if (!leaves)
		leaves = 1;
	memset(out->width, 0, sizeof(out->width));
	total = width = leaves;
	out->width[0] = (uint32_t)leaves;
	while (width > 1) {
		width = (width + node_capacity(nodesize) - 1) / node_capacity(nodesize);
		total += width;
		if (++level >= BUILD_MAX_LEVEL)
			return -EFBIG;
		out->width[level] = (uint32_t)width;
	}
	out->nblocks = (uint32_t)total;
	out->level = level;
	return 0;
}

int tree_shape(const struct item_list *l, uint32_t nodesize, struct tree_shape *out)
{
	struct list_source ls;
	struct item_source src = list_source(&ls, l);

	return tree_shape_source(&src, nodesize, out) ? -1 : 0;
}

uint8_t tree_block_level(const struct tree_shape *s, uint32_t b)
{
	uint8_t level = 0;

	while (level < s->level && b >= s->width[level])
		b -= s->width[level++];
	return level;
}


void tree_block_finish(uint8_t *block, const struct tree_params *p, uint64_t bytenr,
		       uint32_t nritems, uint8_t level)
{
	struct btrfs_header *h = (struct btrfs_header *)block;

	memcpy(h->fsid, p->fsid, BTRFS_FSID_SIZE);
	put_le64(&h->bytenr, bytenr);
	put_le64(&h->flags, BTRFS_HEADER_FLAG_WRITTEN |
		 BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT);
	memcpy(h->chunk_tree_uuid, p->chunk_tree_uuid, BTRFS_UUID_SIZE);
	put_le64(&h->generation, p->generation);
	put_le64(&h->owner, p->owner);
	put_le32(&h->nritems, nritems);
	h->level = level;
	csum_stamp(p->csum_type, block, p->nodesize);
}

/* First keys of the blocks of the level being written, for the level above. */
struct level_keys {
	struct fs_key *key;
	size_t n;
};

/* Writes the leaf being filled (n items, data packed from the end down to end). */
static int flush_leaf(uint8_t *block, const struct tree_params *p, const uint64_t *addrs,
		      size_t *b, uint32_t n, uint32_t nblocks)
{
	if (*b >= nblocks)
		return -EINVAL;     /* more leaves than the shape said */
	tree_block_finish(block, p, addrs[*b], n, 0);
	return p->write_block(p->ctx, addrs[(*b)++], block, p->nodesize);
}

static int write_leaves(const struct item_source *src, const struct tree_params *p,
			const uint64_t *addrs, uint32_t nblocks, uint8_t *block,
			struct level_keys *out)
{
	struct btrfs_item *items = (struct btrfs_item *)(block + HDR);
	uint32_t end = 0, n = 0;    /* item data offsets are from the header end */
	size_t b = 0;
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;
	int ret, started = 0;

	while ((ret = src->next(src->ctx, &key, &data, &size)) == 1) {
		if (ITEM + size > p->nodesize - HDR)
			return -EINVAL;
		if (started && (size_t)(n + 1) * ITEM + size > end) {
			ret = flush_leaf(block, p, addrs, &b, n, nblocks);
			if (ret)
				return ret;
			started = 0;
		}
		if (!started) {
			memset(block, 0, p->nodesize);
			end = p->nodesize - HDR;
			n = 0;
			out->key[b] = key;
			started = 1;
		}
		end -= size;
		fs_key_to_disk(&items[n].key, &key);
		put_le32(&items[n].offset, end);
		put_le32(&items[n].size, size);
		memcpy(block + HDR + end, data, size);
		n++;
	}
	if (ret < 0)
		return ret;
	if (!started) {             /* an empty tree is one empty leaf */
		memset(block, 0, p->nodesize);
		out->key[b] = (struct fs_key){ 0, 0, 0 };
	}
	ret = flush_leaf(block, p, addrs, &b, n, nblocks);
	out->n = b;
	return ret;
}

int tree_write_source(const struct item_source *src, const struct tree_params *p,
		      const uint64_t *addrs, uint32_t nblocks)
{
	struct level_keys keys = { calloc(nblocks, sizeof(struct fs_key)), 0 };
	uint8_t *block = malloc(p->nodesize);
	size_t cap = node_capacity(p->nodesize), next = 0, first;
	uint8_t level = 0;
	int ret = -ENOMEM;

	if (!keys.key || !block)
		goto out;
	ret = write_leaves(src, p, addrs, nblocks, block, &keys);
	first = 0;
	next = keys.n;
	while (!ret && keys.n > 1) {
		size_t nodes = (keys.n + cap - 1) / cap;
		level++;
		for (size_t b = 0; b < nodes && !ret; b++) {
			size_t n = keys.n - b * cap < cap ? keys.n - b * cap : cap;
			struct btrfs_key_ptr *kp = (struct btrfs_key_ptr *)(block + HDR);
			memset(block, 0, p->nodesize);
			for (size_t k = 0; k < n; k++) {
				fs_key_to_disk(&kp[k].key, &keys.key[b * cap + k]);
				put_le64(&kp[k].blockptr, addrs[first + b * cap + k]);
				put_le64(&kp[k].generation, p->generation);
			}
			keys.key[b] = keys.key[b * cap];
			tree_block_finish(block, p, addrs[next + b], (uint32_t)n, level);
			ret = p->write_block(p->ctx, addrs[next + b], block, p->nodesize);
		}
		first = next;
		next += nodes;
		keys.n = nodes;
	}
	if (!ret && next != nblocks)
		ret = -EINVAL;
out:
	free(keys.key);
	free(block);
	return ret;
}

int tree_write(const struct item_list *l, const struct tree_params *p, const uint64_t *addrs,
	       uint32_t nblocks)
{
	struct list_source ls;
	struct item_source src = list_source(&ls, l);

	return tree_write_source(&src, p, addrs, nblocks);
}
