//build:Oz
/* A node of a tree no copy of which can be read, made again from its children: the
 * blocks one level down that the extent tree says belong to the tree (their back
 * references name it) and that no readable part of the tree points to. A node whose
 * children's references name it rather than the tree (shared by snapshots, with full
 * back references) is left alone. */
#include "config.h"
#if CFG_CHECK_REPAIR
#include "internal.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct orphans {
	struct fs *fs;
	uint64_t tree;
	int level;                      /* of the children */
	uint64_t *reached;              /* blocks of that level the tree points to */
	size_t nreached, cap_reached;
	struct fs_child *kids;
	size_t nkids, cap_kids;
	uint64_t lost;                  /* the node made again */
	int shared;                     /* a child names the lost node (shared): not done */
	int nomem;
};

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int child_order(const void *a, const void *b)
{
	return fs_key_cmp(&((const struct fs_child *)a)->key, &((const struct fs_child *)b)->key);
}

/* fs_walk_ops: the blocks of the children's level the readable tree reaches. */
static int reached(void *ctx, const struct fs_block *b)
{
	struct orphans *o = ctx;
	uint64_t *r;

	if (fs_block_level(b) != o->level)
		return 0;
	r = vec_push(&o->reached, &o->nreached, &o->cap_reached, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = b->bytenr;
	return 0;
}

static void walk_failed(void *ctx, const struct fs_error *err)
{
	(void)ctx, (void)err;           /* the node being made again, or other damage */
}

static void add_child(struct orphans *o, uint64_t bytenr, uint64_t generation, const struct fs_key *key)
{
	struct fs_child *c = vec_push(&o->kids, &o->nkids, &o->cap_kids, sizeof(*c));

	if (c)
		*c = (struct fs_child){ .bytenr = bytenr, .generation = generation, .key = *key };
	o->nomem |= !c;
}

/* A leaf that does not verify whose checksum is good (its keys damaged in place, as
 * its parent's key was: btrfs-corrupt-block -K does both) is a child too, placed by its
 * first key in order (the second when the first is above it): the next round's check
 * finds it unreadable and salvages its items. */
static void damaged_leaf(struct orphans *o, uint64_t bytenr)
{
	uint8_t *leaf = malloc(o->fs->nodesize);
	const struct btrfs_header *h = (const void *)leaf;
	const struct btrfs_item *it;
	struct fs_key first, second;

	o->nomem |= !leaf;
	if (!leaf)
		return;
	it = (const void *)(h + 1);
	if (!leaf_copy(o->fs, bytenr, leaf, 1) && get_le32(&h->nritems) >= 2 &&
	    get_le32(&h->nritems) <= (o->fs->nodesize - sizeof(*h)) / sizeof(*it)) {
		fs_key_from_disk(&first, &it[0].key);
		fs_key_from_disk(&second, &it[1].key);
		add_child(o, bytenr, get_le64(&h->generation), fs_key_cmp(&first, &second) < 0 ? &first : &second);
	}
	free(leaf);
}

/* A block of the children's level with a reference from the tree: a child when the
 * readable tree does not reach it. */
static void candidate(struct orphans *o, uint64_t bytenr)
{
	/* a block a snapshot shares names the tree it was made in as its owner */
	struct fs_block_expect exp = { 0, o->level, 0, NULL };
	struct fs_block *b;
	struct fs_key key;

	size_t at = lower_bound_u64(o->reached, o->nreached, sizeof(*o->reached), 0, bytenr);

	if (at < o->nreached && o->reached[at] == bytenr)
		return;
	b = fs_block_read(o->fs, bytenr, &exp);
	if (!b && !o->level) {
		fs_err_clear(&o->fs->err);
		damaged_leaf(o, bytenr);
		return;
	}
	if (!b || !fs_block_nritems(b)) {
		fs_block_put(o->fs, b);
		return;                 /* lost with its parent */
	}
	if (o->level)
		fs_node_key(b, 0, &key);
	else
		fs_item_key(b, 0, &key);
	add_child(o, bytenr, fs_block_generation(b), &key);
	fs_block_put(o->fs, b);
}

/* The extent item at key (a tree block's): a candidate when one of its inline refs
 * names the tree; *level gets its level for the keyed refs that follow it. */
static void extent_item(struct orphans *o, const struct fs_key *key, const uint8_t *data, uint32_t size, int *level)
{
	struct fs_extent_info ei;
	struct fs_inline_ref r;
	uint32_t pos;
	int named = 0;

	*level = -1;
	if (fs_extent_item(data, size, key->type, &ei) || !(ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK))
		return;
	*level = key->type == BTRFS_METADATA_ITEM_KEY ? (int)key->offset : ei.tree_level;
	if (*level != o->level)
		return;
	for (pos = ei.refs_start; fs_inline_ref_next(data, size, &pos, &r) == 1;) {
		named |= r.type == BTRFS_TREE_BLOCK_REF_KEY && r.offset == o->tree;
		o->shared |= r.type == BTRFS_SHARED_BLOCK_REF_KEY && r.offset == o->lost;
	}
	if (named)
		candidate(o, key->objectid);
}

/* Every tree block of the children's level the extent tree gives the tree. */
static int find_children(struct orphans *o)
{
	struct fs_key k = { 0, 0, 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = fs_root_lookup(o->fs, BTRFS_EXTENT_TREE_OBJECTID, &root), level = -1;

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(o->fs, &root, &k, &p); !ret && !o->nomem; ret = fs_next(o->fs, &p)) {
		const uint8_t *data;
		uint32_t size;

		fs_path_key(&p, &k);
		data = fs_path_data(&p, &size);
		if (k.type == BTRFS_METADATA_ITEM_KEY || k.type == BTRFS_EXTENT_ITEM_KEY)
			extent_item(o, &k, data, size, &level);
		else if (k.type == BTRFS_TREE_BLOCK_REF_KEY && k.offset == o->tree && level == o->level)
			candidate(o, k.objectid);
		else if (k.type == BTRFS_SHARED_BLOCK_REF_KEY && k.offset == o->lost)
			o->shared = 1;
	}
	fs_path_release(o->fs, &p);
	return ret < 0 ? ret : o->nomem ? -ENOMEM : 0;
}

/* The keys of the leaf bytenr (a copy whose checksum is good) that place it: its first
 * key as its data may say it was (its type alone damaged), its second and its last.
 * 0, or -1 when it has fewer than two items or none reads. */
static int leaf_keys(struct fs *fs, uint64_t bytenr, struct fs_key *first, struct fs_key *second, struct fs_key *last)
{
	uint8_t *leaf = malloc(fs->nodesize);
	const struct btrfs_header *h = (const void *)leaf;
	const struct btrfs_item *it = (const void *)(h + 1);
	uint32_t n, off, size, space = fs->nodesize - (uint32_t)sizeof(*h);
	int ret = -1;

	if (leaf && !leaf_copy(fs, bytenr, leaf, 1) && (n = get_le32(&h->nritems)) >= 2 && n <= space / sizeof(*it)) {
		fs_key_from_disk(first, &it[0].key);
		fs_key_from_disk(second, &it[1].key);
		fs_key_from_disk(last, &it[n - 1].key);
		off = get_le32(&it[0].offset);
		size = get_le32(&it[0].size);
		if (off <= space && size <= space - off && !ck_subvol_key_type(first->type))
			first->type = type_by_data(first, (const uint8_t *)it + off, size);
		ret = 0;
	}
	free(leaf);
	return ret;
}

/* Leaves in the order of their first keys: one whose keys run into the next one's had
 * its first key damaged with its parent's, lower (btrfs-corrupt-block -K on a first
 * item, C10 trial 26). It is placed by its first key as its data says it was, when
 * that goes between the leaf before its second key and that key (the next round's
 * salvage gives it that key); else by its second key. 1 when a key changed (the
 * children are to be sorted again). */
static int place_damaged_first_keys(struct orphans *o)
{
	struct fs_key first, second, last, jfirst, jsecond, before;
	int moved = 0;

	for (size_t i = 0; !o->level && i + 1 < o->nkids; i++) {
		size_t j;

		if (leaf_keys(o->fs, o->kids[i].bytenr, &first, &second, &last) ||
		    fs_key_cmp(&last, &o->kids[i + 1].key) < 0 || fs_key_cmp(&second, &o->kids[i + 1].key) <= 0)
			continue;
		/* the leaf that goes before it: the last one whose first key is below its second */
		for (j = i + 1; j + 1 < o->nkids && fs_key_cmp(&o->kids[j + 1].key, &second) < 0; j++)
			;
		o->kids[i].key = second;
		if (first.type && fs_key_cmp(&first, &second) < 0 &&
		    !leaf_keys(o->fs, o->kids[j].bytenr, &jfirst, &jsecond, &before) &&
		    fs_key_cmp(&before, &first) < 0)
			o->kids[i].key = first;
		moved = 1;
	}
	return moved;
}

int rebuild_node(struct rp *rp, const struct rp_fix *f, int level)
{
	struct orphans o = { .fs = rp->fs, .tree = f->root, .level = level - 1, .lost = f->bytenr };
	struct fs_walk_ops ops = { reached, reached, walk_failed };
	struct fs_root root;
	int ret = fs_root_lookup(rp->fs, f->root, &root);

	if (!ret)
		ret = fs_tree_walk(rp->fs, &root, &ops, &o);
	if (ret == -ENOMEM)
		return fs_err(&rp->fs->err, ret, "out of memory");
	fs_err_clear(&rp->fs->err);
	sort_stable(o.reached, o.nreached, sizeof(*o.reached), u64_order);
	ret = find_children(&o);
	if (!ret && !o.shared && o.nkids) {
		sort_stable(o.kids, o.nkids, sizeof(*o.kids), child_order);
		if (place_damaged_first_keys(&o))
			sort_stable(o.kids, o.nkids, sizeof(*o.kids), child_order);
		ret = fs_tree_put_node(rp->fs, f->root, &f->key, f->bytenr, level, o.kids, (uint32_t)o.nkids);
		if (!ret)
			say(rp, "made node %llu of root %llu again from its %zu children", (unsigned long long)f->bytenr,
			    (unsigned long long)f->root, o.nkids);
	}
	free(o.reached);
	free(o.kids);
	return ret == -ENOENT || ret == -E2BIG ? 0 : ret;
}
#endif
