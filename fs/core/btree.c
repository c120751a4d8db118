/* B-tree search, item iteration across leaves, whole-tree walks and roots. */
#include "fs.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

void fs_path_init(struct fs_path *p)
{
	memset(p, 0, sizeof(*p));
}

void fs_path_release(struct fs *fs, struct fs_path *p)
{
	for (int i = 0; i < p->levels; i++)
		fs_block_put(fs, p->nodes[i]);
	fs_path_init(p);
}

void fs_path_key(const struct fs_path *p, struct fs_key *key)
{
	if (!p->levels || fs_item_key(p->nodes[0], (uint32_t)p->slots[0], key))
		memset(key, 0, sizeof(*key));
}

const uint8_t *fs_path_data(const struct fs_path *p, uint32_t *size)
{
	*size = 0;
	return p->levels ? fs_item_data(p->nodes[0], (uint32_t)p->slots[0], size) : NULL;
}

struct fs_block *fs_read_child(struct fs *fs, const struct fs_block *parent, uint32_t slot, uint64_t tree)
{
	struct fs_key first;
	struct fs_block_expect exp = { fs_node_ptr_generation(parent, slot), fs_block_level(parent) - 1, tree, &first };
	struct fs_block *b;

	fs_node_key(parent, slot, &first);
	b = fs_block_read(fs, fs_node_blockptr(parent, slot), &exp);
	if (!b) {
		fs->err.tree = tree;
		fs->err.has_key = 1;
		fs->err.key = first;
	}
	return b;
}

static struct fs_block *read_root(struct fs *fs, const struct fs_root *root)
{
	struct fs_block_expect exp = { root->generation, root->level, root->objectid, NULL };
	struct fs_block *b = fs_block_read(fs, root->bytenr, &exp);

	if (!b)
		fs->err.tree = root->objectid;
	return b;
}

/* Installs block b at its level of the path (dropping what was there). */
static int path_set(struct fs *fs, struct fs_path *p, struct fs_block *b, int slot)
{
	int level = fs_block_level(b);

	if (level >= BTRFS_MAX_LEVEL) {
		fs_block_put(fs, b);
		return -EUCLEAN;
	}
	if (level < p->levels && p->nodes[level])
		fs_block_put(fs, p->nodes[level]);
	p->nodes[level] = b;
	p->slots[level] = slot;
	return 0;
}

/* Walks down from the node at `level` of p, taking the first (or last) slot at each level below. */
static int descend_edge(struct fs *fs, struct fs_path *p, int level, int last)
{
	while (level > 0) {
		struct fs_block *b = fs_read_child(fs, p->nodes[level], (uint32_t)p->slots[level], p->tree);
		uint32_t n;

		if (!b)
			return fs->err.code ? fs->err.code : -EIO;
		n = fs_block_nritems(b);
		level--;
		path_set(fs, p, b, last && n ? (int)n - 1 : 0);
	}
	return 0;
}

int fs_next(struct fs *fs, struct fs_path *p)
{
	int level = 0, ret;

	if (!p->levels)
		return 1;
	do {
		while (level < p->levels && p->slots[level] + 1 >= (int)fs_block_nritems(p->nodes[level]))
			level++;
		if (level >= p->levels)
			return 1;
		p->slots[level]++;
		ret = descend_edge(fs, p, level, 0);
		if (ret)
			return ret;
		level = 0;
	} while (!fs_block_nritems(p->nodes[0]));    /* skip empty leaves */
	return 0;
}

int fs_prev(struct fs *fs, struct fs_path *p)
{
	int level = 0, ret;

	if (!p->levels)
		return 1;
	do {
		while (level < p->levels && p->slots[level] == 0)
			level++;
		if (level >= p->levels)
			return 1;
		p->slots[level]--;
		ret = descend_edge(fs, p, level, 1);
		if (ret)
			return ret;
		level = 0;
	} while (!fs_block_nritems(p->nodes[0]));
	return 0;
}

int fs_search(struct fs *fs, const struct fs_root *root, const struct fs_key *key, struct fs_path *p)
{
	struct fs_block *b = read_root(fs, root);
	int level;

	fs_path_init(p);
	if (!b)
		return fs->err.code ? fs->err.code : -EIO;
	p->tree = root->objectid;
	p->levels = fs_block_level(b) + 1;
	path_set(fs, p, b, 0);
	for (level = p->levels - 1; level > 0; level--) {
		const struct fs_block *node = p->nodes[level];
		uint32_t slot = fs_node_child_slot(node, key);

		p->slots[level] = (int)slot;
		b = fs_read_child(fs, node, slot, p->tree);
		if (!b)
			return fs->err.code ? fs->err.code : -EIO;
		path_set(fs, p, b, 0);
	}
	p->slots[0] = (int)fs_block_lower_bound(p->nodes[0], key);
	if (p->slots[0] < (int)fs_block_nritems(p->nodes[0]))
		return 0;
	if (!fs_block_nritems(p->nodes[0]) && p->levels == 1) {
		fs_path_release(fs, p);
		return 1;
	}
	p->slots[0] = fs_block_nritems(p->nodes[0]) ? (int)fs_block_nritems(p->nodes[0]) - 1 : 0;
	level = fs_next(fs, p);
	return level;   /* 0: moved into the next leaf; 1: stays on the last item */
}

int fs_lookup(struct fs *fs, const struct fs_root *root, const struct fs_key *key, struct fs_path *p)
{
	struct fs_key found;
	int ret = fs_search(fs, root, key, p);

	if (ret < 0) {
		fs_path_release(fs, p);
		return ret;
	}
	fs_path_key(p, &found);
	if (ret == 0 && !fs_key_cmp(&found, key))
		return 0;
	fs_path_release(fs, p);
	return -ENOENT;
}

int fs_search_le(struct fs *fs, const struct fs_root *root, const struct fs_key *key, struct fs_path *p)
{
	struct fs_key found;
	int ret = fs_search(fs, root, key, p);

	if (ret < 0) {
		fs_path_release(fs, p);
		return ret;
	}
	fs_path_key(p, &found);
	if (ret == 0 && fs_key_cmp(&found, key) > 0) {
		ret = fs_prev(fs, p);
		if (ret < 0) {
			fs_path_release(fs, p);
			return ret;
		}
		fs_path_key(p, &found);         /* unchanged when nothing precedes it */
	}
	if (p->levels && found.objectid == key->objectid && found.type == key->type &&
	    found.offset <= key->offset)
		return 0;
	fs_path_release(fs, p);
	return -ENOENT;
}

/* ---- roots -------------------------------------------------------------- */

uint64_t fs_block_group_tree_id(const struct fs *fs)
{
	return get_le64(&fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE ?
		BTRFS_BLOCK_GROUP_TREE_OBJECTID : BTRFS_EXTENT_TREE_OBJECTID;
}

static void fixed_root(struct fs_root *r, uint64_t objectid, uint64_t bytenr, uint64_t gen, int level)
{
	memset(r, 0, sizeof(*r));
	r->objectid = objectid;
	r->bytenr = bytenr;
	r->generation = gen;
	r->level = level;
}

int fs_root_lookup(struct fs *fs, uint64_t objectid, struct fs_root *root)
{
	struct fs_key key = { objectid, BTRFS_ROOT_ITEM_KEY, UINT64_MAX }, found;
	struct fs_root tree_root;
	struct fs_path p;
	const uint8_t *data;
	uint32_t size;
	int ret;

	fixed_root(&tree_root, BTRFS_ROOT_TREE_OBJECTID, fs->root_bytenr, fs->root_gen, fs->root_level);
	if (objectid == BTRFS_ROOT_TREE_OBJECTID) {
		*root = tree_root;
		return 0;
	}
	if (objectid == BTRFS_CHUNK_TREE_OBJECTID) {
		fixed_root(root, objectid, fs->chunk_root_bytenr, fs->chunk_root_gen, fs->chunk_root_level);
		return 0;
	}
	ret = fs_search_le(fs, &tree_root, &key, &p);
	if (ret == -ENOENT)
		return fs_err_at(&fs->err, -ENOENT, BTRFS_ROOT_TREE_OBJECTID, 0,
				 "no root item for tree %llu", (unsigned long long)objectid);
	if (ret)
		return ret;
	fs_path_key(&p, &found);
	data = fs_path_data(&p, &size);
	memset(root, 0, sizeof(*root));
	ret = fs_root_item(data, size, &root->item);
	fs_path_release(fs, &p);
	if (ret) {
		fs_err_at(&fs->err, ret, BTRFS_ROOT_TREE_OBJECTID, 0, "root item of tree %llu too short (%u bytes)",
			  (unsigned long long)objectid, size);
		fs->err.has_key = 1;
		fs->err.key = found;
		return ret;
	}
	root->objectid = objectid;
	root->offset = found.offset;
	root->item_size = size;
	root->bytenr = get_le64(&root->item.bytenr);
	root->generation = get_le64(&root->item.generation);
	root->level = root->item.level;
	return 0;
}

/* ---- whole-tree walk ---------------------------------------------------- */

static void walk_report(const struct fs_walk_ops *ops, void *ctx, struct fs *fs)
{
	if (ops->error)
		ops->error(ctx, &fs->err);
}

/* A tree cannot hold more blocks than the metadata chunks have room for;
 * past that, pointers must be looping through shared blocks. */
static uint64_t metadata_blocks(const struct fs *fs)
{
	uint64_t bytes = 0;

	for (int i = 0; i < fs->num_chunks; i++)
		if (fs->chunks[i].type & (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM))
			bytes += fs->chunks[i].length;
	return bytes / fs->nodesize + 1;
}

struct walk {
	struct fs *fs;
	uint64_t tree, budget;
	const struct fs_walk_ops *ops;
	void *ctx;
};

static int walk_block(struct walk *w, struct fs_block *b)
{
	uint32_t n = fs_block_nritems(b);
	int ret;

	if (!w->budget--) {
		fs_err_at(&w->fs->err, -ELOOP, w->tree, b->bytenr, "tree has more blocks than metadata space");
		walk_report(w->ops, w->ctx, w->fs);
		return -ELOOP;
	}
	if (!fs_block_level(b))
		return w->ops->leaf ? w->ops->leaf(w->ctx, b) : 0;
	ret = w->ops->node ? w->ops->node(w->ctx, b) : 0;
	if (ret)
		return ret > 0 ? 0 : ret;
	for (uint32_t i = 0; i < n; i++) {
		struct fs_block *child = fs_read_child(w->fs, b, i, w->tree);

		if (!child) {
			walk_report(w->ops, w->ctx, w->fs);
			continue;
		}
		ret = walk_block(w, child);
		fs_block_put(w->fs, child);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int fs_tree_walk(struct fs *fs, const struct fs_root *root, const struct fs_walk_ops *ops, void *ctx)
{
	struct walk w = { fs, root->objectid, metadata_blocks(fs), ops, ctx };
	struct fs_block *b = read_root(fs, root);
	int ret;

	if (!b) {
		walk_report(ops, ctx, fs);
		return fs->err.code;
	}
	ret = walk_block(&w, b);
	fs_block_put(fs, b);
	return ret;
}

int fs_next_subvol_root(struct fs *fs, struct fs_key *k, struct btrfs_root_item *ri)
{
	struct fs_root root;
	struct fs_path p;
	const uint8_t *data;
	uint32_t size;
	int ret = fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &root);

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &root, k, &p); ret == 0; ret = fs_next(fs, &p)) {
		fs_path_key(&p, k);
		if (k->type == BTRFS_ROOT_ITEM_KEY && (k->objectid == BTRFS_FS_TREE_OBJECTID ||
		    (k->objectid >= BTRFS_FIRST_FREE_OBJECTID && k->objectid <= BTRFS_LAST_FREE_OBJECTID)))
			break;
	}
	data = ret ? NULL : fs_path_data(&p, &size);
	if (data && fs_root_item(data, size, ri))
		memset(ri, 0, sizeof(*ri));
	fs_path_release(fs, &p);
	return ret;
}
