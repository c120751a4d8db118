//build:Oz
/* Stage 7: qgroup numbers, by the reference's rules.
 *
 * Every extent (tree block or data) counts in the "referenced" bytes of each
 * qgroup that one of the subvolumes reaching it belongs to (a level-0 qgroup
 * is its subvolume, higher levels collect qgroups through relations), and in
 * the "exclusive" bytes of a qgroup when all those subvolumes belong to it.
 * The fs roots pass records (extent, subvolume) pairs while walking the trees;
 * sorted by extent they give each extent's set of subvolumes. With simple
 * quotas an extent counts only for the subvolume that created it (data: the
 * owner ref of its extent item; tree blocks: the block's owner) if it was
 * made after quotas were enabled. Only the qgroups stay in memory. */
#include "config.h"
#include "internal.h"
#include "util/le.h"
#include "util/sort.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define QGROUP_STATUS_FLAG_ON 1ULL
#define QGROUP_STATUS_FLAG_RESCAN 2ULL
#define QGROUP_STATUS_FLAG_INCONSISTENT 4ULL
#define INCOMPAT_SIMPLE_QUOTA (1ULL << 16)
#define QGROUP_LEVEL(id) ((id) >> 48)

struct qrec {
	uint64_t bytenr, root, size;
};

static int qrec_cmp(const void *pa, const void *pb)
{
	const struct qrec *x = pa, *y = pb;

	if (x->bytenr != y->bytenr)
		return x->bytenr < y->bytenr ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return 0;
}

struct qgroup {
	uint64_t id;
	uint64_t rfer, excl;            /* counted */
	uint64_t disk_rfer, disk_excl, disk_rfer_cmpr, disk_excl_cmpr;
	uint64_t seq;                   /* the extent being counted last touched it */
	uint32_t reach;                 /* subvolumes of that extent it holds */
	uint32_t up_start, nup;         /* itself and its ancestors, in ups[] */
};

struct qgroups {
	struct qgroup *g;               /* sorted by id */
	uint32_t n;
	uint32_t *ups;
	uint64_t (*rel)[2];             /* relations (member, parent) while loading */
	uint32_t nrel;
	uint32_t *touched;
	uint64_t seq;
	uint64_t flags, enable_gen;
	uint64_t *roots;                /* subvolumes of the current extent */
	uint32_t nroots, cap_roots;
	uint32_t cap_g, cap_rel;
};

static int qg_cmp(const void *a, const void *b)
{
	const struct qgroup *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct qgroup *qg_find(struct qgroups *q, uint64_t id)
{
	struct qgroup key = { .id = id };

	return q->n ? bsearch(&key, q->g, q->n, sizeof(*q->g), qg_cmp) : NULL;
}

static int grow(void **p, uint32_t n, uint32_t *cap, size_t size)
{
	void *np;

	if (n < *cap)
		return 0;
	np = realloc(*p, (size_t)(*cap ? *cap * 2 : 16) * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

static int quota_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			 uint32_t size, void *arg)
{
	struct qgroups *q = arg;

	(void)c;
	if (key->type == BTRFS_QGROUP_STATUS_KEY && size >= 24) {
		q->flags = get_le64(data + 16);
		q->enable_gen = size >= 40 ? get_le64(data + 32) : 0;
	} else if (key->type == BTRFS_QGROUP_INFO_KEY && size >= sizeof(struct btrfs_qgroup_info_item)) {
		const struct btrfs_qgroup_info_item *qi = (const void *)data;

		if (grow((void **)&q->g, q->n, &q->cap_g, sizeof(*q->g)) < 0)
			return -ENOMEM;
		q->g[q->n++] = (struct qgroup){ .id = key->offset, .disk_rfer = get_le64(&qi->rfer),
						.disk_excl = get_le64(&qi->excl),
						.disk_rfer_cmpr = get_le64(&qi->rfer_cmpr),
						.disk_excl_cmpr = get_le64(&qi->excl_cmpr) };
	} else if (key->type == BTRFS_QGROUP_RELATION_KEY && key->objectid < key->offset) {
		if (grow((void **)&q->rel, q->nrel, &q->cap_rel, sizeof(*q->rel)) < 0)
			return -ENOMEM;
		q->rel[q->nrel][0] = key->objectid;
		q->rel[q->nrel++][1] = key->offset;
	}
	return 0;
}

/* Each qgroup's closure over the relations (itself first), as index lists. */
static int qg_closures(struct qgroups *q)
{
	uint32_t nups = 0, cap = 0;

	sort_stable(q->g, q->n, sizeof(*q->g), qg_cmp);
	q->touched = calloc(q->n ? q->n : 1, sizeof(*q->touched));
	if (!q->touched)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->n; i++) {
		q->g[i].up_start = nups;
		if (grow((void **)&q->ups, nups, &cap, sizeof(*q->ups)) < 0)
			return -ENOMEM;
		q->ups[nups++] = i;
		/* breadth first: every member of the list brings its parents */
		for (uint32_t k = q->g[i].up_start; k < nups; k++)
			for (uint32_t r = 0; r < q->nrel; r++) {
				struct qgroup *p;
				uint32_t pi, seen = 0;

				if (q->rel[r][0] != q->g[q->ups[k]].id || !(p = qg_find(q, q->rel[r][1])))
					continue;
				pi = (uint32_t)(p - q->g);
				for (uint32_t s = q->g[i].up_start; s < nups; s++)
					seen |= q->ups[s] == pi;
				if (seen)
					continue;
				if (grow((void **)&q->ups, nups, &cap, sizeof(*q->ups)) < 0)
					return -ENOMEM;
				q->ups[nups++] = pi;
			}
		q->g[i].nup = nups - q->g[i].up_start;
	}
	return 0;
}

int ck_qgroup_init(struct check_ctx *c)
{
	struct fs_key from = { 0, 0, 0 };
	struct qgroups *q;
	int ret;

	if (fs_root_lookup(c->fs, BTRFS_QUOTA_TREE_OBJECTID, &c->quota_root) < 0)
		return 0;
	c->st->quota_enabled = 1;
	if (!CFG_CHECK_THOROUGH) {
		ck_warn(c, BTRFS_QUOTA_TREE_OBJECTID, 0, 0, 0,
			"qgroup numbers not verified (built without CHECK_THOROUGH)");
		return 0;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	c->qg = q;
	ret = ck_iterate(c, &c->quota_root, &from, quota_item_cb, q);
	if (ret < 0 && ret != -ENOMEM) {
		c->qgroup_skip = 1;     /* a block that cannot be read (reported): nothing to verify */
		return 0;
	}
	if (ret >= 0)
		ret = qg_closures(q);
	if (ret < 0)
		return ret;
	/* numbers being rebuilt or already known to be wrong: nothing to verify (but to
	 * report, when asked) */
	if (!(q->flags & QGROUP_STATUS_FLAG_ON) || (!c->o->qgroup &&
	    (q->flags & (QGROUP_STATUS_FLAG_RESCAN | QGROUP_STATUS_FLAG_INCONSISTENT)))) {
		c->qgroup_skip = 1;
		return 0;
	}
	if (get_le64(&c->fs->sb.incompat_flags) & INCOMPAT_SIMPLE_QUOTA)
		return 0;       /* counted from the extent tree */
	c->qgroups = ck_sorter(c, sizeof(struct qrec), qrec_cmp, 4);
	return c->qgroups ? 0 : -ENOMEM;
}

void ck_qgroup_add(struct check_ctx *c, uint64_t bytenr, uint64_t root, uint64_t size)
{
	struct qrec r = { bytenr, root, size };

	if (c->qgroups && !c->qgroup_err)
		c->qgroup_err = xsort_add(c->qgroups, &r);
}

/* The extent of size bytes reached by q->roots: referenced by every qgroup
 * holding one of them, exclusive to those holding all. */
static void count_extent(struct qgroups *q, uint64_t size)
{
	uint32_t nt = 0;

	q->seq++;
	for (uint32_t r = 0; r < q->nroots; r++) {
		struct qgroup *g = qg_find(q, q->roots[r]);

		for (uint32_t k = 0; g && k < g->nup; k++) {
			struct qgroup *a = &q->g[q->ups[g->up_start + k]];

			if (a->seq != q->seq) {
				a->seq = q->seq;
				a->reach = 0;
				q->touched[nt++] = (uint32_t)(a - q->g);
			}
			a->reach++;
		}
	}
	for (uint32_t t = 0; t < nt; t++) {
		struct qgroup *a = &q->g[q->touched[t]];

		a->rfer += size;
		if (a->reach == q->nroots)
			a->excl += size;
	}
}

static int add_root(struct qgroups *q, uint64_t root)
{
	if (q->nroots && q->roots[q->nroots - 1] == root)
		return 0;       /* reached twice from one subvolume */
	if (grow((void **)&q->roots, q->nroots, &q->cap_roots, sizeof(*q->roots)) < 0)
		return -ENOMEM;
	q->roots[q->nroots++] = root;
	return 0;
}

static int count_walked(struct check_ctx *c, struct qgroups *q)
{
	struct qrec r, prev = { 0, 0, 0 };
	int ret = c->qgroup_err ? c->qgroup_err : xsort_finish(c->qgroups);

	while (ret >= 0 && (ret = xsort_next(c->qgroups, &r)) == 1) {
		if (q->nroots && r.bytenr != prev.bytenr) {
			count_extent(q, prev.size);
			q->nroots = 0;
		}
		ret = add_root(q, r.root);
		prev = r;
	}
	if (ret >= 0 && q->nroots)
		count_extent(q, prev.size);
	return ret;
}

/* Simple quotas: one extent item at a time. */
static int squota_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		     uint32_t size, void *arg)
{
	struct qgroups *q = arg;
	struct fs_extent_info ei;
	struct fs_inline_ref ir;
	uint64_t root = 0, bytes = key->offset;
	uint32_t pos;

	if ((key->type != BTRFS_EXTENT_ITEM_KEY && key->type != BTRFS_METADATA_ITEM_KEY) ||
	    fs_extent_item(data, size, key->type, &ei) < 0 || ei.generation < q->enable_gen)
		return 0;
	if (key->type == BTRFS_METADATA_ITEM_KEY || (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK)) {
		struct fs_block *b = fs_block_read(c->fs, key->objectid, NULL);

		if (!b)
			return 0;       /* reported by the extent pass */
		root = get_le64(&fs_block_header(b)->owner);
		bytes = b->size;
		fs_block_put(c->fs, b);
	} else {
		pos = ei.refs_start;
		if (fs_inline_ref_next(data, size, &pos, &ir) == 1 && ir.type == FS_EXTENT_OWNER_REF_KEY)
			root = ir.offset;
	}
	if (!ck_is_fstree(root))
		return 0;
	q->nroots = 0;
	if (add_root(q, root) < 0)
		return -ENOMEM;
	count_extent(q, bytes);
	return 0;
}

/* Every qgroup to the --qgroup-report callback. */
static void report_all(struct check_ctx *c, const struct qgroups *q)
{
	for (uint32_t i = 0; i < q->n; i++) {
		const struct qgroup *g = &q->g[i];
		struct check_qgroup r = { g->id, g->rfer, g->excl, g->disk_rfer, g->disk_rfer_cmpr, g->disk_excl,
					  g->disk_excl_cmpr, !!(q->flags & QGROUP_STATUS_FLAG_RESCAN),
					  !!(q->flags & QGROUP_STATUS_FLAG_INCONSISTENT) };

		c->o->qgroup(c->o->ctx, &r);
	}
}

static void report(struct check_ctx *c, const struct qgroups *q)
{
	if (c->o->qgroup) {
		report_all(c, q);
		if (q->flags & (QGROUP_STATUS_FLAG_RESCAN | QGROUP_STATUS_FLAG_INCONSISTENT))
			return;         /* numbers not expected to match */
	}
	for (uint32_t i = 0; i < q->n; i++) {
		const struct qgroup *g = &q->g[i];

		if (g->rfer == g->disk_rfer && g->excl == g->disk_excl)
			continue;
		if (CFG_CHECK_REPAIR) {
			c->fix_key = (struct fs_key){ 0, BTRFS_QGROUP_INFO_KEY, g->id };
			c->fix_value[0] = g->rfer;
			c->fix_value[1] = g->excl;
		}
		ck_err_fix(c, CHECK_FIX_QGROUP, g->id & ((1ULL << 48) - 1), 0, 0, 0,
			       "Counts for qgroup id: %llu/%llu are different: our referenced %llu exclusive %llu, disk referenced %llu exclusive %llu",
			       (unsigned long long)QGROUP_LEVEL(g->id),
			       (unsigned long long)(g->id & ((1ULL << 48) - 1)),
			       (unsigned long long)g->rfer, (unsigned long long)g->excl,
			       (unsigned long long)g->disk_rfer, (unsigned long long)g->disk_excl);
	}
}

int check_qgroups(struct check_ctx *c)
{
	struct qgroups *q = c->qg;
	struct fs_key from = { 0, 0, 0 };
	int ret = 0;

	if (!CFG_CHECK_THOROUGH || !q || c->qgroup_skip)
		return 0;
	if (c->qgroup_dropping) {
		ck_warn(c, c->qgroup_dropping, 0, 0, 0,
			"qgroup numbers not verified: subvolume %llu is being dropped",
			(unsigned long long)c->qgroup_dropping);
		return 0;
	}
	if (c->qgroups)
		ret = count_walked(c, q);
	else if (c->have_extent_root)
		ret = ck_iterate(c, &c->extent_root, &from, squota_cb, q);
	if (ret >= 0)
		report(c, q);
	return ret < 0 ? ret : 0;
}

void ck_qgroup_free(struct check_ctx *c)
{
	struct qgroups *q = c->qg;

	xsort_free(c->qgroups);
	if (!q)
		return;
	free(q->g);
	free(q->ups);
	free(q->rel);
	free(q->touched);
	free(q->roots);
	free(q);
}
