//build:Oz
/* Copy-on-write B-tree changes.
 *
 * A change first copies the path from the root to the leaf (cow_search): each block
 * the transaction did not make is replaced by a new copy, which the parent's pointer
 * then names (with the transaction's generation). The leaf is then rebuilt: its items
 * with the change applied are laid out again in one leaf, or spread evenly over as
 * many as they need (split), or joined with a neighbour's when few are left (merge);
 * the parent's pointers to the old leaves are replaced by pointers to the new ones,
 * which rebuilds the parent the same way, up to the root. A root that overflows gets
 * a new root above it; a root node left with one child is replaced by that child. */
#include "internal.h"
#include "util/le.h"
#include "util/vec.h"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLIT 8



static struct btrfs_header *hdr(struct fs_block *b)
{
	return (struct btrfs_header *)b->data;
}

/* ---- roots ------------------------------------------------------------------ */

struct wroot *wroot_get(struct fs *fs, uint64_t tree)
{
	struct fs_wstate *w = fs->w;
	struct fs_root r;
	struct wroot *wr;

	if (!w || !w->transid) {
		fs_err(&fs->err, -EINVAL, "no transaction is running");
		return NULL;
	}
	for (size_t i = 0; i < w->nroots; i++)
		if (w->roots[i].objectid == tree)
			return &w->roots[i];
	if (fs_root_lookup(fs, tree, &r))
		return NULL;
	if (vec_reserve(&w->roots, &w->cap_roots, w->nroots + 1, sizeof(*w->roots))) {
		fs_err(&fs->err, -ENOMEM, "out of memory");
		return NULL;
	}
	wr = &w->roots[w->nroots++];
	*wr = (struct wroot){ tree, r.offset, r.bytenr, r.generation, r.level, 0 };
	return wr;
}

/* The tree as the read side searches it now. */
static void wroot_as_root(const struct wroot *wr, struct fs_root *r)
{
	memset(r, 0, sizeof(*r));
	r->objectid = wr->objectid;
	r->bytenr = wr->bytenr;
	r->level = wr->level;
	r->generation = wr->gen;
}

int wroot_lookup(struct fs *fs, uint64_t tree, struct fs_root *r)
{
	for (size_t i = 0; fs->w && i < fs->w->nroots; i++)
		if (fs->w->roots[i].objectid == tree) {
			wroot_as_root(&fs->w->roots[i], r);
			return 0;
		}
	return fs_root_lookup(fs, tree, r);
}

const uint8_t *tree_item(struct fs *fs, uint64_t tree, const struct fs_key *key, struct fs_path *p,
			 uint32_t *size)
{
	struct fs_root r;
	int ret = wroot_lookup(fs, tree, &r);

	if (!ret && (ret = fs_lookup(fs, &r, key, p)) == -ENOENT)
		fs_err_at(&fs->err, ret, tree, 0, "item not found");
	fs->err.code = ret ? ret : fs->err.code;
	return ret ? NULL : fs_path_data(p, size);
}

/* b is the tree's new root: the superblock fields or the root item follow. */
static void set_root(struct fs *fs, uint64_t tree, struct fs_block *b)
{
	struct wroot *wr = wroot_get(fs, tree);

	wr->bytenr = b->bytenr;
	wr->gen = fs->w->transid;
	wr->level = fs_block_level(b);
	wr->moved = 1;
	if (tree == BTRFS_ROOT_TREE_OBJECTID) {
		fs->root_bytenr = b->bytenr;
		fs->root_level = wr->level;
		fs->root_gen = fs->w->transid;
	} else if (tree == BTRFS_CHUNK_TREE_OBJECTID) {
		fs->chunk_root_bytenr = b->bytenr;
		fs->chunk_root_level = wr->level;
		fs->chunk_root_gen = fs->w->transid;
	}
}

int is_ours(const struct fs *fs, uint64_t bytenr)
{
	return walloc_find(fs, bytenr) != NULL;
}

struct fs_block *fs_tx_new_block(struct fs *fs, uint64_t bytenr)
{
	struct walloc *a = walloc_find(fs, bytenr);

	if (!a || !a->b)
		return NULL;
	a->b->refs++;
	return a->b;
}

/* The block itself when the transaction made it; else a new copy, the old one freed.
 * The caller's reference moves to the returned block. */
struct fs_block *cow_block(struct fs *fs, struct wroot *wr, struct fs_block *b)
{
	struct fs_block *nb;
	int shared;

	if (is_ours(fs, b->bytenr))
		return b;
	nb = alloc_tree_block(fs, wr->objectid, fs_block_level(b));
	shared = nb ? share_cow(fs, wr->objectid, b->bytenr, b->data) : -1;
	if (shared < 0 || (!shared && free_tree_block(fs, wr->objectid, b))) {
		fs_block_put(fs, nb);
		fs_block_put(fs, b);
		return NULL;
	}
	memcpy(nb->data + HDR_SIZE, b->data + HDR_SIZE, nb->size - HDR_SIZE);
	put_le32(&hdr(nb)->nritems, fs_block_nritems(b));
	if (!shared && copy_data_refs(fs, b->data, wr->objectid)) {
		fs_block_put(fs, nb);
		nb = NULL;
	}
	fs_block_put(fs, b);
	return nb;
}

/* A child block, verified against its pointer; with any_gen (recow) whatever its
 * generation says: the copy gets the transaction's. */
static struct fs_block *read_child(struct fs *fs, const struct fs_block *b, uint32_t slot, uint64_t tree)
{
	struct fs_key first;
	struct fs_block_expect exp = { 0, fs_block_level(b) - 1, tree, &first };

	if (!fs->w->any_gen)
		return fs_read_child(fs, b, slot, tree);
	fs_node_key(b, slot, &first);
	return fs_block_read(fs, fs_node_blockptr(b, slot), &exp);
}

int cow_search(struct fs *fs, struct wroot *wr, const struct fs_key *key, struct fs_path *p)
{
	struct fs_root r;
	struct fs_block_expect exp;
	struct fs_block *b, *nb;
	int level;

	fs_path_init(p);
	wroot_as_root(wr, &r);
	exp = (struct fs_block_expect){ fs->w->any_gen ? 0 : r.generation, r.level, r.objectid, NULL };
	b = fs_block_read(fs, wr->bytenr, &exp);
	if (!b || !(nb = cow_block(fs, wr, b)))
		return fs->err.code ? fs->err.code : -EIO;
	if (nb != b)
		set_root(fs, wr->objectid, nb);
	b = nb;
	p->tree = wr->objectid;
	level = fs_block_level(b);
	p->levels = level + 1;
	p->nodes[level] = b;
	for (; level > fs->w->stop_level; level--) {
		uint32_t slot = fs_node_child_slot(b, key);
		struct fs_block *child = read_child(fs, b, slot, wr->objectid);
		struct btrfs_key_ptr *kp = (struct btrfs_key_ptr *)(b->data + HDR_SIZE) + slot;

		p->slots[level] = (int)slot;
		if (!child || !(nb = cow_block(fs, wr, child))) {
			fs_path_release(fs, p);
			return fs->err.code ? fs->err.code : -EIO;
		}
		put_le64(&kp->blockptr, nb->bytenr);
		put_le64(&kp->generation, fs->w->transid);
		p->nodes[level - 1] = b = nb;
	}
	if (level) {                    /* stopped above the leaves (stop_level) */
		p->slots[level] = (int)fs_node_child_slot(b, key);
		return 0;
	}
	p->slots[0] = (int)fs_block_lower_bound(b, key);
	if ((uint32_t)p->slots[0] < fs_block_nritems(b)) {
		struct fs_key k;

		fs_item_key(b, (uint32_t)p->slots[0], &k);
		return fs_key_cmp(&k, key) ? 1 : 0;
	}
	return 1;
}

/* ---- rebuilding leaves and nodes -------------------------------------------- */

/* A leaf item (data, size) or a node pointer (data: its blockptr and generation, 16
 * bytes as on disk) on its way into a rebuilt block. */
struct entry { struct fs_key key; const uint8_t *data; uint32_t size; };
#define PTR_DATA 16

static uint32_t cost(int level, const struct entry *e)
{
	return level ? (uint32_t)PTR_SIZE : (uint32_t)ITEM_SIZE + e->size;
}

/* The entries of a block image (a copy: the entries point into it). */
static uint32_t entries_of(const uint8_t *blk, struct entry *v)
{
	const struct btrfs_header *h = (const void *)blk;
	uint32_t n = get_le32(&h->nritems);

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *at = blk + HDR_SIZE + i * (h->level ? PTR_SIZE : ITEM_SIZE);

		fs_key_from_disk(&v[i].key, (const struct btrfs_disk_key *)at);
		v[i].data = h->level ? at + sizeof(struct btrfs_disk_key) :
				       blk + HDR_SIZE + get_le32(at + offsetof(struct btrfs_item, offset));
		v[i].size = h->level ? PTR_DATA : get_le32(at + offsetof(struct btrfs_item, size));
	}
	return n;
}

static void fill(struct fs_block *b, const struct entry *v, uint32_t n)
{
	int level = fs_block_level(b);
	uint32_t end = b->size - (uint32_t)HDR_SIZE;

	memset(b->data + HDR_SIZE, 0, end);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *at = b->data + HDR_SIZE + i * (level ? PTR_SIZE : ITEM_SIZE);

		fs_key_to_disk((struct btrfs_disk_key *)at, &v[i].key);
		if (level) {
			memcpy(at + sizeof(struct btrfs_disk_key), v[i].data, PTR_DATA);
			continue;
		}
		end -= v[i].size;
		put_le32(at + offsetof(struct btrfs_item, offset), end);
		put_le32(at + offsetof(struct btrfs_item, size), v[i].size);
		memcpy(b->data + HDR_SIZE + end, v[i].data, v[i].size);
	}
	put_le32(&hdr(b)->nritems, n);
}

/* Splits the entries into *k blocks of at most cap bytes, each about as full as the
 * others: start[j] is the first entry of block j. */
static void plan(const struct entry *v, uint32_t n, int level, uint32_t cap, uint32_t *start, int *k)
{
	uint64_t total = 0;
	int kk;

	for (uint32_t i = 0; i < n; i++)
		total += cost(level, &v[i]);
	for (kk = (int)((total + cap - 1) / cap); kk < MAX_SPLIT; kk++) {
		uint64_t left = total;
		uint32_t i = 0;

		for (int j = 0; j < kk; j++) {
			uint64_t acc = 0, target = (left + (uint64_t)(kk - j) - 1) / (uint64_t)(kk - j);

			start[j] = i;
			while (i < n && acc + cost(level, &v[i]) <= cap && (acc < target || j == kk - 1))
				acc += cost(level, &v[i++]);
			left -= acc;
		}
		if (i == n)
			break;
	}
	start[kk < MAX_SPLIT ? kk : 0] = n;
	*k = kk;
}

static int rebuild(struct fs *fs, uint64_t tree, struct fs_path *p, int level, uint32_t first,
		   uint32_t nold, const struct entry *repl, uint32_t nrepl);

/* The blocks out[0..k) take the place of the nsrc blocks at slot first of the parent
 * of level (or become the root, under a new root node when there are several). */
static int link_up(struct fs *fs, uint64_t tree, struct fs_path *p, int level, uint32_t first,
		   uint32_t nsrc, struct fs_block **out, int k)
{
	uint8_t data[MAX_SPLIT][PTR_DATA];
	struct entry ptrs[MAX_SPLIT];
	struct fs_block *root;

	for (int j = 0; j < k; j++) {
		memset(&ptrs[j].key, 0, sizeof(ptrs[j].key));
		if (fs_block_nritems(out[j]))           /* its first key */
			level ? fs_node_key(out[j], 0, &ptrs[j].key) : fs_item_key(out[j], 0, &ptrs[j].key);
		put_le64(data[j], out[j]->bytenr);
		put_le64(data[j] + 8, fs->w->transid);
		ptrs[j].data = data[j];
		ptrs[j].size = PTR_DATA;
		if (j)
			fs_block_put(fs, out[j]);
	}
	if (level + 1 < p->levels)
		return rebuild(fs, tree, p, level + 1, first, nsrc, ptrs, (uint32_t)k);
	if (k <= 1)
		return 0;
	root = alloc_tree_block(fs, tree, level + 1);
	if (!root)
		return fs->err.code;
	fill(root, ptrs, (uint32_t)k);
	set_root(fs, tree, root);
	fs_block_put(fs, root);
	return 0;
}

/* The root node has one child left: the child (copied) becomes the root. */
static int shrink_root(struct fs *fs, uint64_t tree, struct fs_block *node, const struct entry *v)
{
	struct fs_key first = v->key;
	struct fs_block_expect exp = { get_le64(v->data + 8), fs_block_level(node) - 1, tree, &first };
	struct fs_block *child = fs_block_read(fs, get_le64(v->data), &exp);

	if (!child || !(child = cow_block(fs, wroot_get(fs, tree), child)))
		return fs->err.code ? fs->err.code : -EIO;
	set_root(fs, tree, child);
	fs_block_put(fs, child);
	return free_tree_block(fs, tree, node);
}

/* The block at level of p gets entries [first, first + nold) replaced by repl, then is
 * laid out again: in one block, or spread over more (split), or with a neighbour's
 * entries when it is nearly empty (merge); its parent follows. */
static int rebuild(struct fs *fs, uint64_t tree, struct fs_path *p, int level, uint32_t first,
		   uint32_t nold, const struct entry *repl, uint32_t nrepl)
{
	struct fs_block *b = p->nodes[level], *sib = NULL, *out[MAX_SPLIT];
	uint32_t ns = fs->nodesize, cap = ns - (uint32_t)HDR_SIZE, n, total = 0, start[MAX_SPLIT];
	uint32_t nsrc = 1, pfirst = level + 1 < p->levels ? (uint32_t)p->slots[level + 1] : 0;
	uint8_t *copy = fs->w->scratch;         /* the block, its neighbour, new data, entries */
	struct entry *v = (struct entry *)(copy + 3 * ns);
	int root = level + 1 == p->levels, sslot, k, ret;

	memcpy(copy, b->data, ns);
	n = entries_of(copy, v);
	memmove(&v[first + nrepl], &v[first + nold], (n - first - nold) * sizeof(*v));
	if (nrepl)
		memcpy(&v[first], repl, nrepl * sizeof(*v));
	n = n - nold + nrepl;
	for (uint32_t i = 0; i < n; i++)
		total += cost(level, &v[i]);
	if (root && level && n == 1)
		return shrink_root(fs, tree, b, v);
	if (root && level && !n) {              /* every leaf gone: an empty leaf is the root */
		struct fs_block *leaf = alloc_tree_block(fs, tree, 0);

		if (!leaf)
			return fs->err.code;
		set_root(fs, tree, leaf);
		fs_block_put(fs, leaf);
		return free_tree_block(fs, tree, b);
	}
	if (!root && total < cap / 4) {
		/* nearly empty: joined with a neighbour (the left one when there is one) */
		struct fs_block *parent = p->nodes[level + 1];

		sslot = pfirst ? (int)pfirst - 1 : pfirst + 1 < fs_block_nritems(parent) ? (int)pfirst + 1 : -1;
		sib = sslot < 0 ? NULL : fs_read_child(fs, parent, (uint32_t)sslot, tree);
		if (sslot >= 0 && !sib)
			return fs->err.code;
	}
	if (sib) {
		uint32_t sn = fs_block_nritems(sib);

		memcpy(copy + ns, sib->data, ns);
		if (sslot < (int)pfirst) {
			memmove(&v[sn], v, n * sizeof(*v));
			entries_of(copy + ns, v);
			pfirst = (uint32_t)sslot;
		} else {
			entries_of(copy + ns, v + n);
		}
		n += sn;
		nsrc = 2;
		ret = free_tree_block(fs, tree, sib);
		fs_block_put(fs, sib);
		if (ret)
			return ret;
	}
	plan(v, n, level, cap, start, &k);
	if (k >= MAX_SPLIT)
		return fs_err(&fs->err, -EOVERFLOW, "block split too wide");
	if (!k && root) {
		k = 1;                  /* an empty tree is one empty leaf */
		start[0] = start[1] = 0;
	}
	out[0] = b;
	for (int j = 1; j < k; j++)
		if (!(out[j] = alloc_tree_block(fs, tree, level))) {
			while (--j > 0)
				fs_block_put(fs, out[j]);
			return fs->err.code;
		}
	if (!k && (ret = free_tree_block(fs, tree, b)))
		return ret;
	for (int j = 0; j < k; j++)
		fill(out[j], v + start[j], start[j + 1] - start[j]);
	return link_up(fs, tree, p, level, pfirst, nsrc, out, k);
}

size_t cow_scratch_size(uint32_t nodesize)
{
	return 3 * (size_t)nodesize + (2 * (nodesize / ITEM_SIZE) + MAX_SPLIT) * sizeof(struct entry);
}

/* ---- item operations ------------------------------------------------------- */

enum edit_op { ED_INSERT, ED_DELETE, ED_RESIZE, ED_SET };

/* Applies one edit to the item at key of tree: INSERT needs it absent, the others
 * present; SET inserts when absent. Root items are not brought up to date. */
static int item_edit(struct fs *fs, uint64_t tree, const struct fs_key *key, enum edit_op op,
		     const void *data, uint32_t size)
{
	struct wroot *wr = wroot_get(fs, tree);
	uint8_t *buf = fs->w->scratch + 2 * fs->nodesize;       /* rebuild's new data (the caller's may be in the leaf) */
	struct entry e = { *key, buf, size };
	struct fs_path p;
	uint32_t old;
	int ret;

	if (!wr)
		return fs->err.code;
	if (op != ED_DELETE && ITEM_SIZE + size > fs->nodesize - HDR_SIZE)
		return fs_err(&fs->err, -EOVERFLOW, "item of %u bytes does not fit in a leaf", size);
	ret = cow_search(fs, wr, key, &p);
	if (ret < 0)
		return ret;
	if (ret == 0 && op == ED_INSERT)
		ret = -EEXIST;
	else if (ret == 1 && op != ED_INSERT && op != ED_SET)
		ret = -ENOENT;
	else {
		old = ret ? 0 : 1;
		if (op == ED_RESIZE) {
			const uint8_t *d = fs_item_data(p.nodes[0], (uint32_t)p.slots[0], &old);

			memcpy(buf, d, old < size ? old : size);
			memset(buf + old, 0, old < size ? size - old : 0);
			old = 1;
		} else if (data) {
			memcpy(buf, data, size);
		} else {
			memset(buf, 0, size);
		}
		ret = rebuild(fs, tree, &p, 0, (uint32_t)p.slots[0], old, &e, op != ED_DELETE);
	}
	if (ret == -EEXIST || ret == -ENOENT) {
		fs_err_at(&fs->err, ret, tree, 0, ret == -EEXIST ? "item exists" : "item not found");
		fs_err_key(&fs->err, key);
	}
	fs_path_release(fs, &p);
	return ret;
}

/* The item's data in the transaction's copy of its leaf. */
static uint8_t *item_mut(struct fs *fs, uint64_t tree, const struct fs_key *key, uint32_t *size)
{
	struct wroot *wr = wroot_get(fs, tree);
	struct fs_path p;
	uint8_t *data = NULL;
	int ret = wr ? cow_search(fs, wr, key, &p) : fs->err.code;

	if (ret == 1) {
		fs_err_at(&fs->err, -ENOENT, tree, 0, "item not found");
		fs_err_key(&fs->err, key);
	}
	if (!ret)
		data = (uint8_t *)fs_item_data(p.nodes[0], (uint32_t)p.slots[0], size);
	if (ret >= 0)
		fs_path_release(fs, &p);
	return data;
}

/* Root items of the trees whose root moved. */
int wroot_update_items(struct fs *fs, int *did)
{
	struct fs_wstate *w = fs->w;

	for (size_t i = 0; i < w->nroots; i++) {
		struct wroot r = w->roots[i];
		struct fs_key key = { r.objectid, BTRFS_ROOT_ITEM_KEY, r.offset };
		struct btrfs_root_item *ri;
		uint32_t size;

		if (!r.moved || r.objectid == BTRFS_ROOT_TREE_OBJECTID || r.objectid == BTRFS_CHUNK_TREE_OBJECTID)
			continue;
		w->roots[i].moved = 0;
		ri = (struct btrfs_root_item *)item_mut(fs, BTRFS_ROOT_TREE_OBJECTID, &key, &size);
		if (!ri)
			return fs->err.code;
		if (size < offsetof(struct btrfs_root_item, level) + 1)
			return fs_err_at(&fs->err, -EUCLEAN, BTRFS_ROOT_TREE_OBJECTID, 0, "root item too short");
		put_le64(&ri->bytenr, r.bytenr);
		put_le64(&ri->generation, r.gen);
		ri->level = (uint8_t)r.level;
		if (size >= offsetof(struct btrfs_root_item, generation_v2) + 8)
			put_le64(&ri->generation_v2, r.gen);
		if (did)
			*did = 1;
	}
	return 0;
}

static int finish(struct fs *fs, int ret)
{
	return ret ? ret : wroot_update_items(fs, NULL);
}

int fs_item_insert(struct fs *fs, uint64_t tree, const struct fs_key *key, const void *data,
		   uint32_t size)
{
	return finish(fs, item_edit(fs, tree, key, ED_INSERT, data, size));
}

int fs_item_delete(struct fs *fs, uint64_t tree, const struct fs_key *key)
{
	return finish(fs, item_edit(fs, tree, key, ED_DELETE, NULL, 0));
}

int fs_item_resize(struct fs *fs, uint64_t tree, const struct fs_key *key, uint32_t size)
{
	return finish(fs, item_edit(fs, tree, key, ED_RESIZE, NULL, size));
}

int fs_item_replace(struct fs *fs, uint64_t tree, const struct fs_key *key, const void *data,
		    uint32_t size)
{
	return finish(fs, item_edit(fs, tree, key, ED_SET, data, size));
}

int fs_tree_recow(struct fs *fs, uint64_t tree, const struct fs_key *key)
{
	struct wroot *wr = wroot_get(fs, tree);
	struct fs_path p;
	int ret;

	if (!wr)
		return fs->err.code;
	fs->w->any_gen = 1;
	ret = cow_search(fs, wr, key, &p);
	fs->w->any_gen = 0;
	if (ret >= 0)
		fs_path_release(fs, &p);
	return finish(fs, ret < 0 ? ret : 0);
}

/* The path of tree to the parent of the leaf bytenr on the way to key, copied. */
static int leaf_parent(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr,
		       struct fs_path *p)
{
	struct wroot *wr = wroot_get(fs, tree);
	int ret;

	if (!wr)
		return fs->err.code;
	fs->w->stop_level = 1;
	ret = cow_search(fs, wr, key, p);
	fs->w->stop_level = 0;
	if (ret < 0)
		return ret;
	if (p->levels < 2 || fs_node_blockptr(p->nodes[1], (uint32_t)p->slots[1]) != bytenr) {
		fs_path_release(fs, p);
		return fs_err_at(&fs->err, -ENOENT, tree, bytenr, "not a leaf of the tree");
	}
	return 0;
}

/* The tree is the one leaf bytenr (its root). */
static int is_root_leaf(struct fs *fs, uint64_t tree, uint64_t bytenr, int *ret)
{
	struct wroot *wr = wroot_get(fs, tree);

	*ret = wr ? 0 : fs->err.code;
	return wr && wr->bytenr == bytenr && !wr->level;
}

int fs_tree_drop_leaf(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr)
{
	struct fs_path p;
	int ret;

	if (is_root_leaf(fs, tree, bytenr, &ret))      /* the tree starts again empty */
		return (ret = free_tree_extent(fs, &(struct wfree){ bytenr, tree, 0, 0, 0, 1 })) ? ret : fs_tree_reset(fs, tree);
	if (ret || (ret = leaf_parent(fs, tree, key, bytenr, &p)))
		return ret;
	if (!(ret = free_tree_extent(fs, &(struct wfree){ bytenr, tree, 0, 0, 0, 1 })))
		ret = rebuild(fs, tree, &p, 1, (uint32_t)p.slots[1], 1, NULL, 0);
	fs_path_release(fs, &p);
	return finish(fs, ret);
}

/* The pointers on path p from level up to the block below them name first as its
 * first key (as far up as the block is the first child). */
static void name_first_key(struct fs_path *p, int level, const struct fs_key *first)
{
	for (; level < p->levels; level++) {
		struct btrfs_key_ptr *kp = (struct btrfs_key_ptr *)(p->nodes[level]->data + HDR_SIZE) + p->slots[level];

		fs_key_to_disk(&kp->key, first);
		if (p->slots[level])
			break;
	}
}

/* tree lets go of the committed leaf bytenr for the new image `leaf`: when snapshots
 * share it, its references follow the kernel's rules (share_cow: 1), its children those
 * of the old block, or of the new image when the old one does not verify (every tree
 * sharing it then puts the same salvaged image in its place); else it is freed with the
 * data references it held, which the new one holds (0). */
static int leaf_let_go(struct fs *fs, uint64_t tree, uint64_t bytenr, const uint8_t *leaf)
{
	struct fs_block *old = fs_block_read(fs, bytenr, &(struct fs_block_expect){ 0, 0, 0, NULL });
	int ret = share_cow(fs, tree, bytenr, old ? old->data : leaf);

	fs_block_put(fs, old);
	if (ret)
		return ret;
	ret = free_tree_extent(fs, &(struct wfree){ bytenr, tree, get_le64(&((const struct btrfs_header *)leaf)->owner),
						  0, leaf_data_refs(fs, leaf), 0 });
	return ret ? ret : copy_data_refs(fs, leaf, tree);
}

/* A new block holding the leaf image `leaf`, which takes the place of the block bytenr:
 * NULL with fs->err. (References the new image lacks are the next check's to mend.) */
static struct fs_block *leaf_anew(struct fs *fs, uint64_t tree, uint64_t bytenr, const uint8_t *leaf)
{
	struct fs_block *nb = alloc_tree_block(fs, tree, 0);
	int ret = nb ? leaf_let_go(fs, tree, bytenr, leaf) : fs->err.code;

	if (ret < 0) {
		fs_block_put(fs, nb);
		return NULL;
	}
	memcpy(nb->data + HDR_SIZE, leaf + HDR_SIZE, nb->size - HDR_SIZE);
	put_le32(&hdr(nb)->nritems, get_le32(&((const struct btrfs_header *)leaf)->nritems));
	return nb;
}

int fs_tree_put_leaf(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr,
		     const uint8_t *leaf)
{
	struct fs_block *nb;
	struct fs_path p;
	struct fs_key first;
	int ret, root = is_root_leaf(fs, tree, bytenr, &ret);

	if (ret || (!root && (ret = leaf_parent(fs, tree, key, bytenr, &p))))
		return ret;
	nb = leaf_anew(fs, tree, bytenr, leaf);
	if (nb && root) {
		set_root(fs, tree, nb);
	} else if (nb) {
		struct btrfs_key_ptr *kp = (struct btrfs_key_ptr *)(p.nodes[1]->data + HDR_SIZE) + p.slots[1];

		put_le64(&kp->blockptr, nb->bytenr);
		put_le64(&kp->generation, fs->w->transid);
		/* the first key may have gone: the pointers above name the new one */
		fs_item_key(nb, 0, &first);
		name_first_key(&p, 1, &first);
	}
	ret = nb ? 0 : fs->err.code;
	fs_block_put(fs, nb);
	if (!root)
		fs_path_release(fs, &p);
	return finish(fs, ret);
}

int fs_tree_put_node(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr, int level,
		     const struct fs_child *children, uint32_t n)
{
	struct wroot *wr = wroot_get(fs, tree);
	struct btrfs_key_ptr *kp;
	struct fs_block *nb;
	struct fs_path p;
	int ret, root = wr && wr->bytenr == bytenr && wr->level == level;

	if (!wr)
		return fs->err.code;
	if (!n || level < 1 || level >= BTRFS_MAX_LEVEL ||
	    n > (fs->nodesize - HDR_SIZE) / sizeof(struct btrfs_key_ptr))
		return fs_err_at(&fs->err, -E2BIG, tree, bytenr, "%u children do not make one node", n);
	if (!root) {
		fs->w->stop_level = level + 1;
		ret = cow_search(fs, wr, key, &p);
		fs->w->stop_level = 0;
		if (ret < 0)
			return ret;
		if (p.levels < level + 2 || fs_node_blockptr(p.nodes[level + 1], (uint32_t)p.slots[level + 1]) != bytenr) {
			fs_path_release(fs, &p);
			return fs_err_at(&fs->err, -ENOENT, tree, bytenr, "not a node of the tree at level %d", level);
		}
	}
	nb = alloc_tree_block(fs, tree, level);
	ret = nb ? free_tree_extent(fs, &(struct wfree){ bytenr, tree, 0, level, 0, 1 }) : fs->err.code;
	if (!ret) {
		kp = (struct btrfs_key_ptr *)(nb->data + HDR_SIZE);
		for (uint32_t i = 0; i < n; i++) {
			fs_key_to_disk(&kp[i].key, &children[i].key);
			put_le64(&kp[i].blockptr, children[i].bytenr);
			put_le64(&kp[i].generation, children[i].generation);
		}
		put_le32(&hdr(nb)->nritems, n);
		if (root) {
			set_root(fs, tree, nb);
		} else {
			kp = (struct btrfs_key_ptr *)(p.nodes[level + 1]->data + HDR_SIZE) + p.slots[level + 1];
			put_le64(&kp->blockptr, nb->bytenr);
			put_le64(&kp->generation, fs->w->transid);
			name_first_key(&p, level + 1, &children[0].key);
		}
	}
	fs_block_put(fs, nb);
	if (!root)
		fs_path_release(fs, &p);
	return finish(fs, ret);
}

uint8_t *fs_item_mut(struct fs *fs, uint64_t tree, const struct fs_key *key, uint32_t *size)
{
	uint8_t *data = item_mut(fs, tree, key, size);

	return data && !wroot_update_items(fs, NULL) ? data : NULL;
}

int tree_near(struct fs *fs, uint64_t tree, struct fs_key *key, int ge)
{
	struct fs_root root;
	struct fs_path p;
	struct fs_key k;
	int ret = wroot_lookup(fs, tree, &root);

	if (ret)
		return ret;
	ret = fs_search(fs, &root, key, &p);
	if (!ge && ret == 1)
		ret = p.levels ? 0 : 1;         /* on the last item: below the key */
	else if (!ge && ret == 0 && (fs_path_key(&p, &k), fs_key_cmp(&k, key) > 0))
		ret = fs_prev(fs, &p);
	if (ret == 0)
		fs_path_key(&p, key);
	fs_path_release(fs, &p);
	return ret;
}

int fs_items_delete_range(struct fs *fs, uint64_t tree, const struct fs_key *from,
			  const struct fs_key *to, uint64_t *total)
{
	struct fs_key k = *from;
	uint64_t n = 0;
	int ret;

	/* one at a time: when there is nothing to delete, nothing is copied */
	while (!(ret = tree_near(fs, tree, &k, 1)) && fs_key_cmp(&k, to) <= 0 &&
	       !(ret = item_edit(fs, tree, &k, ED_DELETE, NULL, 0)))
		n++;
	if (total)
		*total = n;
	return finish(fs, ret < 0 ? ret : 0);
}

/* ---- whole trees ----------------------------------------------------------- */

static int free_walked(void *ctx, const struct fs_block *b)
{
	struct fs *fs = ctx;

	return free_tree_block(fs, fs_block_owner(b), (struct fs_block *)b);
}

static void walk_failed(void *ctx, const struct fs_error *err)
{
	struct fs *fs = ctx;

	if (!fs->w->walk_err.code)
		fs->w->walk_err = *err;
}

/* Takes the tree out of the filesystem, freeing its blocks on the way (strict: every
 * block must be read, else nothing is taken out). */
static int tree_remove(struct fs *fs, uint64_t tree, const struct fs_walk_ops *walk, int strict)
{
	struct fs_wstate *w = fs->w;
	struct wroot *wr = wroot_get(fs, tree);
	struct fs_key key;
	struct fs_root r;
	int ret = 0;

	if (!wr)
		return fs->err.code;
	if (tree == BTRFS_ROOT_TREE_OBJECTID || tree == BTRFS_CHUNK_TREE_OBJECTID)
		return fs_err(&fs->err, -EINVAL, "the root and chunk trees cannot be deleted");
	key = (struct fs_key){ tree, BTRFS_ROOT_ITEM_KEY, wr->offset };
	wroot_as_root(wr, &r);
	memset(&w->walk_err, 0, sizeof(w->walk_err));
	ret = fs_tree_walk(fs, &r, walk, fs);
	if (!strict && w->walk_err.code && ret == w->walk_err.code)
		ret = 0;                                /* the root block itself cannot be read */
	if (!ret && strict && w->walk_err.code)
		ret = (fs->err = w->walk_err).code;     /* a block that cannot be read is not freed */
	wr = wroot_get(fs, tree);               /* freeing may have grown w->roots */
	if (!wr)
		return fs->err.code;
	wr->moved = 0;
	*wr = w->roots[--w->nroots];
	return ret ? ret : finish(fs, item_edit(fs, BTRFS_ROOT_TREE_OBJECTID, &key, ED_DELETE, NULL, 0));
}

int fs_tree_delete(struct fs *fs, uint64_t tree)
{
	struct fs_walk_ops ops = { free_walked, free_walked, walk_failed };

	return tree_remove(fs, tree, &ops, 1);
}

int fs_tree_drop(struct fs *fs, uint64_t tree)
{
	struct fs_walk_ops ops = { free_walked, free_walked, walk_failed };

	return tree_remove(fs, tree, &ops, 0);
}

int fs_tree_reset(struct fs *fs, uint64_t tree)
{
	struct fs_block *b = wroot_get(fs, tree) ? alloc_tree_block(fs, tree, 0) : NULL;

	if (!b)
		return fs->err.code;
	set_root(fs, tree, b);
	fs_block_put(fs, b);
	return finish(fs, 0);
}

int fs_tree_renew(struct fs *fs, uint64_t tree)
{
	struct fs_walk_ops ops = { free_walked, free_walked, walk_failed };
	struct wroot *wr = wroot_get(fs, tree);
	struct fs_root r;
	int ret;

	if (!wr)
		return fs->err.code;
	wroot_as_root(wr, &r);
	memset(&fs->w->walk_err, 0, sizeof(fs->w->walk_err));
	ret = fs_tree_walk(fs, &r, &ops, fs);
	if (ret && ret == fs->w->walk_err.code)
		ret = 0;                /* what cannot be read stays allocated */
	return ret ? ret : fs_tree_reset(fs, tree);
}

int fs_tree_create(struct fs *fs, uint64_t tree)
{
	struct fs_wstate *w = fs->w;
	struct btrfs_root_item ri;
	struct fs_key key = { tree, BTRFS_ROOT_ITEM_KEY, 0 };
	struct fs_block *b;
	int ret;

	if (!wroot_get(fs, BTRFS_ROOT_TREE_OBJECTID))
		return fs->err.code;
	if (!wroot_lookup(fs, tree, &(struct fs_root){ 0 }))
		return fs_err_at(&fs->err, -EEXIST, tree, 0, "the tree exists");
	if (vec_reserve(&w->roots, &w->cap_roots, w->nroots + 1, sizeof(*w->roots)))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	b = alloc_tree_block(fs, tree, 0);
	if (!b)
		return fs->err.code;
	memset(&ri, 0, sizeof(ri));
	put_le64(&ri.bytenr, b->bytenr);
	put_le64(&ri.generation, w->transid);
	put_le64(&ri.generation_v2, w->transid);
	put_le32(&ri.refs, 1);
	put_le64(&ri.bytes_used, fs->nodesize);
	w->roots[w->nroots++] = (struct wroot){ tree, 0, b->bytenr, w->transid, 0, 0 };
	fs_block_put(fs, b);
	ret = item_edit(fs, BTRFS_ROOT_TREE_OBJECTID, &key, ED_INSERT, &ri, sizeof(ri));
	return finish(fs, ret);
}
