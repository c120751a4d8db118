//build:Oz
/* The tree log (replayed at the next mount). Its blocks are read and checked
 * like any tree block (checksums, keys, levels, leaf packing); what a log
 * leaves out (links, counts, extent items) is not an error. A logged regular
 * extent of a file with checksums must have them, logged with it or already
 * in the csum tree, or the replay would leave data without checksums. Logs
 * are small (one transaction's fsyncs), so their ranges are kept in memory. */
#include "internal.h"
#include "util/le.h"
#include "util/sort.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct log_range {
	uint64_t start, len, ino, file_offset;
};

struct range_list {
	struct log_range *r;
	size_t n, cap;
};

static int range_add(struct range_list *l, uint64_t start, uint64_t len, uint64_t ino,
		     uint64_t file_offset)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 32;
		void *p = realloc(l->r, nc * sizeof(*l->r));
		if (!p)
			return -ENOMEM;
		l->r = p;
		l->cap = nc;
	}
	l->r[l->n++] = (struct log_range){ start, len, ino, file_offset };
	return 0;
}

struct log_walk {
	struct check_ctx *c;
	uint64_t csum_ino;              /* the last logged inode item, when it has checksums */
	struct range_list need, have;
	int err;
};

static void log_item(struct log_walk *lw, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct check_ctx *c = lw->c;

	if (key->type == BTRFS_INODE_ITEM_KEY) {
		const struct btrfs_inode_item *ii = fs_inode_item(data, size);

		lw->csum_ino = ii && !(get_le64(&ii->flags) & INODE_FLAG_NODATASUM) ? key->objectid : 0;
	} else if (key->type == BTRFS_EXTENT_CSUM_KEY && key->objectid == BTRFS_EXTENT_CSUM_OBJECTID) {
		uint32_t count = fs_csum_item_count(size, c->fs->csum_size);

		if (count && !lw->err)
			lw->err = range_add(&lw->have, key->offset, (uint64_t)count * c->fs->sectorsize,
					    0, 0);
	} else if (key->type == BTRFS_EXTENT_DATA_KEY) {
		struct fs_file_extent fe;

		/* as the reference: extents of an inode logged with its item */
		if (fs_file_extent(data, size, &fe) < 0 || fe.type != BTRFS_FILE_EXTENT_REG ||
		    !fe.disk_bytenr || lw->err || key->objectid != lw->csum_ino)
			return;
		if (fe.compression)
			lw->err = range_add(&lw->need, fe.disk_bytenr, fe.disk_num_bytes, key->objectid,
					    key->offset);
		else
			lw->err = range_add(&lw->need, fe.disk_bytenr + fe.offset, fe.num_bytes,
					    key->objectid, key->offset);
	}
}

static int log_leaf(void *ctx, const struct fs_block *b)
{
	struct log_walk *lw = ctx;
	uint32_t n = fs_block_nritems(b);

	ck_leaf_packing(lw->c, BTRFS_TREE_LOG_OBJECTID, b);

	for (uint32_t i = 0; i < n; i++) {
		struct fs_key key;
		const uint8_t *data;
		uint32_t size;

		fs_item_key(b, i, &key);
		data = fs_item_data(b, i, &size);
		if (data)
			log_item(lw, &key, data, size);
	}
	return lw->err;
}

static void log_error(void *ctx, const struct fs_error *e)
{
	struct log_walk *lw = ctx;

	ck_fs_error(lw->c, e, NULL);
}

static int log_range_cmp(const void *a, const void *b)
{
	const struct log_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts the ranges and joins those that overlap or touch. */
static void merge_ranges(struct range_list *l)
{
	size_t n = 0;

	if (!l->n)
		return;
	sort_stable(l->r, l->n, sizeof(*l->r), log_range_cmp);
	for (size_t i = 1; i < l->n; i++) {
		struct log_range *p = &l->r[n], *r = &l->r[i];

		if (r->start > p->start + p->len)
			l->r[++n] = *r;
		else if (r->start + r->len > p->start + p->len)
			p->len = r->start + r->len - p->start;
	}
	l->n = n + 1;
}

/* End of the checksummed range containing pos (from the log or the csum
 * tree), or pos when none does. */
static uint64_t covered_to(struct log_walk *lw, uint64_t pos)
{
	struct check_ctx *c = lw->c;
	struct fs_key k = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, pos }, found;
	struct fs_path p;
	uint64_t end = pos;

	size_t lo = 0, hi = lw->have.n;

	while (lo < hi) {       /* the last logged range starting at or before pos */
		size_t mid = lo + (hi - lo) / 2;

		if (lw->have.r[mid].start <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && lw->have.r[lo - 1].start + lw->have.r[lo - 1].len > pos)
		return lw->have.r[lo - 1].start + lw->have.r[lo - 1].len;
	if (!c->have_csum_root)
		return end;
	fs_path_init(&p);
	if (fs_search_le(c->fs, &c->csum_root, &k, &p) == 0) {
		const uint8_t *data;
		uint32_t size;

		fs_path_key(&p, &found);
		data = fs_path_data(&p, &size);
		if (data && found.objectid == k.objectid && found.type == k.type) {
			uint64_t e = found.offset +
				     (uint64_t)fs_csum_item_count(size, c->fs->csum_size) * c->fs->sectorsize;
			if (e > pos)
				end = e;
		}
	}
	fs_path_release(c->fs, &p);
	return end;
}

static void check_one_log(struct check_ctx *c, uint64_t root, const struct btrfs_root_item *ri)
{
	struct log_walk lw = { .c = c };
	struct fs_walk_ops ops = { .leaf = log_leaf, .error = log_error };
	struct fs_root log = { .objectid = BTRFS_TREE_LOG_OBJECTID, .bytenr = get_le64(&ri->bytenr),
			       .generation = get_le64(&ri->generation), .level = ri->level };

	fs_tree_walk(c->fs, &log, &ops, &lw);
	merge_ranges(&lw.have);
	for (size_t i = 0; i < lw.need.n && !lw.err; i++) {
		struct log_range *r = &lw.need.r[i];
		uint64_t pos = r->start, to;

		while (pos < r->start + r->len && (to = covered_to(&lw, pos)) > pos)
			pos = to;
		if (pos < r->start + r->len)
			ck_err(c, root, r->ino, r->start, r->len,
			       "csum missing in log (root %llu inode %llu offset %llu address 0x%llx length %llu)",
			       (unsigned long long)root, (unsigned long long)r->ino,
			       (unsigned long long)r->file_offset, (unsigned long long)r->start,
			       (unsigned long long)r->len);
	}
	free(lw.need.r);
	free(lw.have.r);
}

static int log_root_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		       uint32_t size, void *arg)
{
	struct btrfs_root_item ri;

	(void)arg;
	if (key->objectid == BTRFS_TREE_LOG_OBJECTID && key->type == BTRFS_ROOT_ITEM_KEY &&
	    fs_root_item(data, size, &ri) == 0 && ri.level < BTRFS_MAX_LEVEL)
		check_one_log(c, key->offset, &ri);
	return 0;
}

int check_log_csums(struct check_ctx *c)
{
	return ck_iterate_logs(c, log_root_cb, NULL);
}
