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
#include "wint.h"
#include "le.h"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLIT 8

struct vitem { struct fs_key key; const uint8_t *data; uint32_t size; };
struct vptr { struct fs_key key; uint64_t blockptr, gen; };

static void put_key(struct btrfs_disk_key *d, const struct fs_key *k)
{
	put_le64(&d->objectid, k->objectid);
	d->type = k->type;
	put_le64(&d->offset, k->offset);
}

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
	if (grow_array((void **)&w->roots, &w->cap_roots, w->nroots + 1, sizeof(*w->roots))) {
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

/* The block itself when the transaction made it; else a new copy, the old one freed.
 * The caller's reference moves to the returned block. */
struct fs_block *cow_block(struct fs *fs, struct wroot *wr, struct fs_block *b)
{
	struct fs_block *nb;

	if (is_ours(fs, b->bytenr))
		return b;
	nb = alloc_tree_block(fs, wr->objectid, fs_block_level(b));
	if (!nb || free_tree_block(fs, wr->objectid, b)) {
		fs_block_put(fs, nb);
		fs_block_put(fs, b);
		return NULL;
	}
	memcpy(nb->data + HDR_SIZE, b->data + HDR_SIZE, nb->size - HDR_SIZE);
	put_le32(&hdr(nb)->nritems, fs_block_nritems(b));
	fs_block_put(fs, b);
	return nb;
}

int cow_search(struct fs *fs, struct wroot *wr, const struct fs_key *key, struct fs_path *p)
{
	struct fs_root r;
	struct fs_block_expect exp;
	struct fs_block *b, *nb;
	int level;

	fs_path_init(p);
	wroot_as_root(wr, &r);
	exp = (struct fs_block_expect){ r.generation, r.level, r.objectid, NULL };
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
	for (; level > 0; level--) {
		uint32_t slot = fs_node_child_slot(b, key);
		struct fs_block *child = fs_read_child(fs, b, slot, wr->objectid);
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
	p->slots[0] = (int)fs_block_lower_bound(b, key);
	if ((uint32_t)p->slots[0] < fs_block_nritems(b)) {
		struct fs_key k;

		fs_item_key(b, (uint32_t)p->slots[0], &k);
		return fs_key_cmp(&k, key) ? 1 : 0;
	}
	return 1;
}

/* ---- rebuilding leaves and nodes -------------------------------------------- */

static uint32_t leaf_items(const uint8_t *leaf, struct vitem *v)
{
	const struct btrfs_header *h = (const void *)leaf;
	const struct btrfs_item *it = (const void *)(leaf + HDR_SIZE);
	uint32_t n = get_le32(&h->nritems);

	for (uint32_t i = 0; i < n; i++) {
		fs_key_from_disk(&v[i].key, &it[i].key);
		v[i].data = leaf + HDR_SIZE + get_le32(&it[i].offset);
		v[i].size = get_le32(&it[i].size);
	}
	return n;
}

static void leaf_fill(struct fs_block *b, const struct vitem *v, uint32_t n)
{
	struct btrfs_item *it = (struct btrfs_item *)(b->data + HDR_SIZE);
	uint32_t end = b->size - (uint32_t)HDR_SIZE;

	memset(b->data + HDR_SIZE, 0, b->size - HDR_SIZE);
	for (uint32_t i = 0; i < n; i++) {
		end -= v[i].size;
		put_key(&it[i].key, &v[i].key);
		put_le32(&it[i].offset, end);
		put_le32(&it[i].size, v[i].size);
		memcpy(b->data + HDR_SIZE + end, v[i].data, v[i].size);
	}
	put_le32(&hdr(b)->nritems, n);
}

static uint32_t node_ptrs(const struct fs_block *b, struct vptr *v)
{
	uint32_t n = fs_block_nritems(b);

	for (uint32_t i = 0; i < n; i++) {
		fs_node_key(b, i, &v[i].key);
		v[i].blockptr = fs_node_blockptr(b, i);
		v[i].gen = fs_node_ptr_generation(b, i);
	}
	return n;
}

static void node_fill(struct fs_block *b, const struct vptr *v, uint32_t n)
{
	struct btrfs_key_ptr *kp = (struct btrfs_key_ptr *)(b->data + HDR_SIZE);

	memset(b->data + HDR_SIZE, 0, b->size - HDR_SIZE);
	for (uint32_t i = 0; i < n; i++) {
		put_key(&kp[i].key, &v[i].key);
		put_le64(&kp[i].blockptr, v[i].blockptr);
		put_le64(&kp[i].generation, v[i].gen);
	}
	put_le32(&hdr(b)->nritems, n);
}

/* Splits n items of the given sizes into *k leaves of at most cap bytes, each about
 * as full as the others: start[j] is the first item of leaf j. */
static void plan_leaves(const struct vitem *v, uint32_t n, uint32_t cap, uint32_t *start, int *k)
{
	uint64_t total = 0;
	int kk;

	for (uint32_t i = 0; i < n; i++)
		total += ITEM_SIZE + v[i].size;
	for (kk = n ? (int)((total + cap - 1) / cap) : 0; kk < MAX_SPLIT; kk++) {
		uint64_t left = total;
		uint32_t i = 0;

		for (int j = 0; j < kk; j++) {
			uint64_t acc = 0, target = (left + (uint64_t)(kk - j) - 1) / (uint64_t)(kk - j);

			start[j] = i;
			while (i < n && acc + ITEM_SIZE + v[i].size <= cap && (acc < target || j == kk - 1))
				acc += ITEM_SIZE + v[i++].size;
			left -= acc;
		}
		if (i == n)
			break;
	}
	*k = kk;
}

/* The sibling next to slot of parent (the left one when there is one), or -1. */
static int sibling_slot(const struct fs_block *parent, int slot)
{
	if (slot > 0)
		return slot - 1;
	return slot + 1 < (int)fs_block_nritems(parent) ? slot + 1 : -1;
}

/* Output blocks for k pieces: the block being rebuilt first, then new ones. */
static int outputs(struct fs *fs, uint64_t tree, struct fs_block *first, int k, struct fs_block **out)
{
	out[0] = first;
	for (int j = 1; j < k; j++)
		if (!(out[j] = alloc_tree_block(fs, tree, fs_block_level(first)))) {
			while (--j > 0)
				fs_block_put(fs, out[j]);
			return fs->err.code;
		}
	return 0;
}

static void ptr_of(struct fs *fs, struct fs_block *b, struct vptr *v)
{
	if (fs_block_nritems(b))
		fs_block_level(b) ? fs_node_key(b, 0, &v->key) : fs_item_key(b, 0, &v->key);
	else
		memset(&v->key, 0, sizeof(v->key));
	v->blockptr = b->bytenr;
	v->gen = fs->w->transid;
}

static int node_change(struct fs *fs, uint64_t tree, struct fs_path *p, int level, int first,
		       int nold, const struct vptr *repl, int nrepl);

/* Replaces the pointers to the nsrc old blocks at first of the parent of level with
 * pointers to out[0..k) (or makes them the root). */
static int link_up(struct fs *fs, uint64_t tree, struct fs_path *p, int level, int first, int nsrc,
		   struct fs_block **out, int k)
{
	struct vptr ptrs[MAX_SPLIT];
	struct fs_block *root;

	for (int j = 0; j < k; j++)
		ptr_of(fs, out[j], &ptrs[j]);
	for (int j = 1; j < k; j++)
		fs_block_put(fs, out[j]);
	if (level + 1 < p->levels)
		return node_change(fs, tree, p, level + 1, first, nsrc, ptrs, k);
	if (k <= 1)
		return 0;
	/* the root split: a new root above */
	root = alloc_tree_block(fs, tree, level + 1);
	if (!root)
		return fs->err.code;
	node_fill(root, ptrs, (uint32_t)k);
	set_root(fs, tree, root);
	fs_block_put(fs, root);
	return 0;
}

/* The neighbour of the block at level of p, read (not copied), or NULL when none. */
static struct fs_block *read_sibling(struct fs *fs, struct fs_path *p, int level, int *sslot)
{
	struct fs_block *parent = p->nodes[level + 1];

	*sslot = sibling_slot(parent, p->slots[level + 1]);
	return *sslot < 0 ? NULL : fs_read_child(fs, parent, (uint32_t)*sslot, p->tree);
}

/* Root node with one child left: the child (copied) becomes the root. */
static int shrink_root(struct fs *fs, uint64_t tree, struct fs_block *node, const struct vptr *v)
{
	struct fs_key first = v->key;
	struct fs_block_expect exp = { v->gen, fs_block_level(node) - 1, tree, &first };
	struct fs_block *child = fs_block_read(fs, v->blockptr, &exp);
	struct wroot *wr = wroot_get(fs, tree);

	if (!child || !(child = cow_block(fs, wr, child)))
		return fs->err.code ? fs->err.code : -EIO;
	set_root(fs, tree, child);
	fs_block_put(fs, child);
	return free_tree_block(fs, tree, node);
}

static int node_change(struct fs *fs, uint64_t tree, struct fs_path *p, int level, int first,
		       int nold, const struct vptr *repl, int nrepl)
{
	struct fs_wstate *w = fs->w;
	struct fs_block *node = p->nodes[level], *sib = NULL, *out[MAX_SPLIT];
	uint32_t cap = (uint32_t)((fs->nodesize - HDR_SIZE) / PTR_SIZE);
	struct vptr *v = (struct vptr *)w->scratch;
	uint32_t n = node_ptrs(node, v);
	int nsrc = 1, pfirst = level + 1 < p->levels ? p->slots[level + 1] : 0, sslot, k, ret;

	memmove(&v[first + nrepl], &v[first + nold], (n - (uint32_t)first - (uint32_t)nold) * sizeof(*v));
	memcpy(&v[first], repl, (size_t)nrepl * sizeof(*v));
	n = n - (uint32_t)nold + (uint32_t)nrepl;
	if (level + 1 == p->levels) {           /* the root */
		if (n == 1)
			return shrink_root(fs, tree, node, v);
		if (!n) {
			struct fs_block *leaf = alloc_tree_block(fs, tree, 0);

			if (!leaf)
				return fs->err.code;
			set_root(fs, tree, leaf);
			fs_block_put(fs, leaf);
			return free_tree_block(fs, tree, node);
		}
	} else if (n < cap / 4 && (sib = read_sibling(fs, p, level, &sslot)) &&
		   n + fs_block_nritems(sib) <= cap) {
		uint32_t sn = fs_block_nritems(sib);

		if (sslot < pfirst) {
			memmove(&v[sn], v, n * sizeof(*v));
			node_ptrs(sib, v);
			pfirst = sslot;
		} else {
			node_ptrs(sib, v + n);
		}
		n += sn;
		nsrc = 2;
		ret = free_tree_block(fs, tree, sib);
		fs_block_put(fs, sib);
		if (ret)
			return ret;
	} else if (sib) {
		fs_block_put(fs, sib);
	}
	k = (int)((n + cap - 1) / cap);
	if (!k) {
		ret = free_tree_block(fs, tree, node);
		return ret ? ret : link_up(fs, tree, p, level, pfirst, nsrc, out, 0);
	}
	if (k > MAX_SPLIT)
		return fs_err(&fs->err, -EOVERFLOW, "node split too wide");
	ret = outputs(fs, tree, node, k, out);
	if (ret)
		return ret;
	for (int j = 0; j < k; j++) {
		uint32_t a = n * (uint32_t)j / (uint32_t)k, b = n * (uint32_t)(j + 1) / (uint32_t)k;

		node_fill(out[j], v + a, b - a);
	}
	return link_up(fs, tree, p, level, pfirst, nsrc, out, k);
}

enum edit_op { ED_INSERT, ED_DELETE, ED_RESIZE, ED_SET };
struct edit {
	enum edit_op op;
	uint32_t slot, count;           /* count: items deleted */
	struct fs_key key;
	const void *data;               /* NULL: zeros */
	uint32_t size;
};

/* The leaf's items with the edit applied, in v; new data copied to buf. */
static uint32_t edited_items(const uint8_t *leaf, const struct edit *e, struct vitem *v, uint8_t *buf)
{
	uint32_t n = leaf_items(leaf, v), keep;

	switch (e->op) {
	case ED_INSERT:
		memmove(&v[e->slot + 1], &v[e->slot], (n - e->slot) * sizeof(*v));
		v[e->slot].key = e->key;
		n++;
		/* fall through */
	case ED_SET:
		e->data ? memcpy(buf, e->data, e->size) : memset(buf, 0, e->size);
		v[e->slot].data = buf;
		v[e->slot].size = e->size;
		break;
	case ED_RESIZE:
		keep = e->size < v[e->slot].size ? e->size : v[e->slot].size;
		memcpy(buf, v[e->slot].data, keep);
		memset(buf + keep, 0, e->size - keep);
		v[e->slot].data = buf;
		v[e->slot].size = e->size;
		break;
	case ED_DELETE:
		memmove(&v[e->slot], &v[e->slot + e->count], (n - e->slot - e->count) * sizeof(*v));
		n -= e->count;
		break;
	}
	return n;
}

static uint32_t items_bytes(const struct vitem *v, uint32_t n)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += (uint32_t)ITEM_SIZE + v[i].size;
	return total;
}

static int leaf_change(struct fs *fs, uint64_t tree, struct fs_path *p, const struct edit *e)
{
	uint32_t ns = fs->nodesize, cap = ns - (uint32_t)HDR_SIZE, n, start[MAX_SPLIT];
	uint8_t *cur = fs->w->scratch, *sibc = cur + ns, *buf = cur + 2 * ns;
	struct vitem *v = (struct vitem *)(cur + 3 * ns);
	struct fs_block *leaf = p->nodes[0], *sib = NULL, *out[MAX_SPLIT];
	int nsrc = 1, first = p->levels > 1 ? p->slots[1] : 0, sslot, k, ret;

	memcpy(cur, leaf->data, ns);
	n = edited_items(cur, e, v, buf);
	if (p->levels > 1 && items_bytes(v, n) < cap / 4 && (sib = read_sibling(fs, p, 0, &sslot))) {
		uint32_t sn;

		memcpy(sibc, sib->data, ns);
		sn = fs_block_nritems(sib);
		if (sslot < first) {
			memmove(&v[sn], v, n * sizeof(*v));
			leaf_items(sibc, v);
			first = sslot;
		} else {
			leaf_items(sibc, v + n);
		}
		n += sn;
		nsrc = 2;
		ret = free_tree_block(fs, tree, sib);
		fs_block_put(fs, sib);
		if (ret)
			return ret;
	}
	plan_leaves(v, n, cap, start, &k);
	if (k >= MAX_SPLIT)
		return fs_err(&fs->err, -EOVERFLOW, "leaf split too wide");
	if (!k && p->levels == 1)
		k = 1;                  /* an empty tree is one empty leaf */
	if (!k) {
		ret = free_tree_block(fs, tree, leaf);
		return ret ? ret : link_up(fs, tree, p, 0, first, nsrc, out, 0);
	}
	ret = outputs(fs, tree, leaf, k, out);
	if (ret)
		return ret;
	start[k] = n;
	for (int j = 0; j < k; j++)
		leaf_fill(out[j], v + start[j], start[j + 1] - start[j]);
	return link_up(fs, tree, p, 0, first, nsrc, out, k);
}

size_t cow_scratch_size(uint32_t nodesize)
{
	size_t items = 2 * (nodesize / ITEM_SIZE) + 4, ptrs = 2 * (nodesize / PTR_SIZE) + MAX_SPLIT;
	size_t leafs = 3 * (size_t)nodesize + items * sizeof(struct vitem);

	return leafs > ptrs * sizeof(struct vptr) ? leafs : ptrs * sizeof(struct vptr);
}

/* ---- item operations ------------------------------------------------------- */

/* Applies one edit to the item at key of tree: op INSERT needs it absent, the others
 * present; SET inserts when absent. Root items are not brought up to date. */
static int item_edit(struct fs *fs, uint64_t tree, const struct fs_key *key, enum edit_op op,
		     const void *data, uint32_t size)
{
	struct wroot *wr = wroot_get(fs, tree);
	struct edit e = { op, 0, 1, *key, data, size };
	struct fs_path p;
	int ret;

	if (!wr)
		return fs->err.code;
	if (op != ED_DELETE && ITEM_SIZE + size > fs->nodesize - HDR_SIZE)
		return fs_err(&fs->err, -EOVERFLOW, "item of %u bytes does not fit in a leaf", size);
	ret = cow_search(fs, wr, key, &p);
	if (ret < 0)
		return ret;
	e.slot = (uint32_t)p.slots[0];
	if (ret == 0 && op == ED_INSERT)
		ret = fs_err_at(&fs->err, -EEXIST, tree, 0, "item exists");
	else if (ret == 1 && op != ED_INSERT && op != ED_SET)
		ret = fs_err_at(&fs->err, -ENOENT, tree, 0, "item not found");
	else {
		if (ret == 1)
			e.op = ED_INSERT;
		ret = leaf_change(fs, tree, &p, &e);
	}
	if (ret == -EEXIST || ret == -ENOENT)
		fs_err_key(&fs->err, key);
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
	int ret = fs_root_lookup(fs, tree, &root);

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
			  const struct fs_key *to, uint64_t *count)
{
	struct wroot *wr = wroot_get(fs, tree);
	struct fs_key at = *from, k = *from;
	int ret = wr ? tree_near(fs, tree, &k, 1) : fs->err.code;

	if (count)
		*count = 0;
	/* nothing to delete: nothing copied */
	if (ret == 1 || (!ret && fs_key_cmp(&k, to) > 0))
		return 0;
	while (!ret) {
		struct fs_path p;
		struct edit e = { ED_DELETE, 0, 0, at, NULL, 0 };
		uint32_t nr;

		ret = cow_search(fs, wr, &at, &p);
		if (ret < 0)
			break;
		e.slot = (uint32_t)p.slots[0];
		nr = fs_block_nritems(p.nodes[0]);
		while (e.slot + e.count < nr && !fs_item_key(p.nodes[0], e.slot + e.count, &k) &&
		       fs_key_cmp(&k, to) <= 0)
			e.count++;
		if (e.count) {
			ret = leaf_change(fs, tree, &p, &e);
			if (count)
				*count += e.count;
		} else if (e.slot < nr) {
			ret = 1;                /* the next item is past the range */
		} else {
			/* past this leaf's last item: the range goes on at the next leaf */
			ret = fs_next(fs, &p);
			fs_path_key(&p, &at);
			if (!ret && fs_key_cmp(&at, to) > 0)
				ret = 1;
		}
		fs_path_release(fs, &p);
		wr = wroot_get(fs, tree);
	}
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

int fs_tree_delete(struct fs *fs, uint64_t tree)
{
	struct fs_wstate *w = fs->w;
	struct fs_walk_ops ops = { free_walked, free_walked, walk_failed };
	struct wroot *wr = wroot_get(fs, tree);
	struct fs_key key;
	struct fs_root r;
	int ret;

	if (!wr)
		return fs->err.code;
	if (tree == BTRFS_ROOT_TREE_OBJECTID || tree == BTRFS_CHUNK_TREE_OBJECTID)
		return fs_err(&fs->err, -EINVAL, "the root and chunk trees cannot be deleted");
	key = (struct fs_key){ tree, BTRFS_ROOT_ITEM_KEY, wr->offset };
	wroot_as_root(wr, &r);
	memset(&w->walk_err, 0, sizeof(w->walk_err));
	ret = fs_tree_walk(fs, &r, &ops, fs);
	if (!ret && w->walk_err.code)
		ret = (fs->err = w->walk_err).code;     /* a block that cannot be read is not freed */
	wr->moved = 0;
	*wr = w->roots[--w->nroots];
	return ret ? ret : finish(fs, item_edit(fs, BTRFS_ROOT_TREE_OBJECTID, &key, ED_DELETE, NULL, 0));
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
	if (!fs_root_lookup(fs, tree, &(struct fs_root){ 0 }))
		return fs_err_at(&fs->err, -EEXIST, tree, 0, "the tree exists");
	if (grow_array((void **)&w->roots, &w->cap_roots, w->nroots + 1, sizeof(*w->roots)))
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
