/* Damage-tolerant key range visit (see range.h). */
#include "range.h"
#include <string.h>

struct range_walk {
	struct fs *fs;
	uint64_t tree;
	const struct fs_key *lo, *hi;
	const struct fs_range_ops *ops;
	void *ctx;
};

static void report_lost(const struct range_walk *w, const struct fs_key *from, const struct fs_key *to)
{
	if (w->ops->lost)
		w->ops->lost(w->ctx, fs_key_cmp(from, w->lo) < 0 ? w->lo : from, to, &w->fs->err);
}

/* Trees below the first free objectid own all their blocks; subvolume blocks may
 * be shared with (and owned by) a snapshot's source, so their owner is not known. */
static uint64_t expected_owner(uint64_t tree)
{
	return tree < BTRFS_FIRST_FREE_OBJECTID ? tree : 0;
}

/* Reads a block as exp says; when lenient, a block that is fine but for its
 * generation or owner is taken on a second try (fs->err keeps the first failure). */
static struct fs_block *read_block(const struct range_walk *w, uint64_t bytenr,
				   const struct fs_block_expect *exp)
{
	struct fs_block *b = fs_block_read(w->fs, bytenr, exp);
	struct fs_block_expect loose = *exp;
	struct fs_error first;

	if (b || !w->ops->lenient || (!exp->generation && !exp->owner))
		return b;
	first = w->fs->err;
	loose.generation = 0;
	loose.owner = 0;
	b = fs_block_read(w->fs, bytenr, &loose);
	if (!b) {
		w->fs->err = first;
		return NULL;
	}
	if (w->ops->stale)
		w->ops->stale(w->ctx, &first);
	return b;
}

static int visit_leaf(const struct range_walk *w, const struct fs_block *b)
{
	uint32_t n = fs_block_nritems(b);

	for (uint32_t slot = fs_block_lower_bound(b, w->lo); slot < n; slot++) {
		struct fs_key k;
		const uint8_t *data;
		uint32_t size;
		int ret;

		if (fs_item_key(b, slot, &k))
			break;
		if (fs_key_cmp(&k, w->hi) > 0)
			return 0;
		data = fs_item_data(b, slot, &size);
		ret = w->ops->item(w->ctx, &k, data, size);
		if (ret)
			return ret;
	}
	return 0;
}

/* Visits block b, whose keys are below `upper` (NULL: no bound). */
static int visit_block(const struct range_walk *w, const struct fs_block *b, const struct fs_key *upper)
{
	uint32_t n = fs_block_nritems(b);
	int level = fs_block_level(b);

	if (!level)
		return visit_leaf(w, b);
	for (uint32_t s = fs_node_child_slot(b, w->lo); s < n; s++) {
		struct fs_key first, next;
		const struct fs_key *bound = upper;
		struct fs_block *child;
		int ret;

		if (fs_node_key(b, s, &first))
			break;
		if (fs_key_cmp(&first, w->hi) > 0)
			break;
		if (s + 1 < n && !fs_node_key(b, s + 1, &next))
			bound = &next;
		struct fs_block_expect exp = {
			fs_node_ptr_generation(b, s), level - 1, expected_owner(w->tree), &first
		};
		child = read_block(w, fs_node_blockptr(b, s), &exp);
		if (!child) {
			w->fs->err.tree = w->tree;
			report_lost(w, &first, bound);
			continue;
		}
		ret = visit_block(w, child, bound);
		fs_block_put(w->fs, child);
		if (ret)
			return ret;
	}
	return 0;
}

int fs_range_visit(struct fs *fs, const struct fs_root *root, const struct fs_key *lo,
		   const struct fs_key *hi, const struct fs_range_ops *ops, void *ctx)
{
	struct range_walk w = { fs, root->objectid, lo, hi, ops, ctx };
	struct fs_block_expect exp = { root->generation, root->level, expected_owner(root->objectid), NULL };
	struct fs_block *b;
	int ret;

	if (fs_key_cmp(lo, hi) > 0)
		return 0;
	b = read_block(&w, root->bytenr, &exp);
	if (!b) {
		fs->err.tree = root->objectid;
		report_lost(&w, lo, NULL);
		return 0;
	}
	ret = visit_block(&w, b, NULL);
	fs_block_put(fs, b);
	return ret;
}
