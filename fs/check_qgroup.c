/* Stage 7: level-0 qgroup numbers. Every extent (tree block or data) reachable
 * from a subvolume counts once in its "referenced", and in its "exclusive" when
 * no other subvolume reaches it. The fs roots pass records (extent, subvolume)
 * pairs; sorted by extent they give, per extent, the set of subvolumes. Only
 * the per-subvolume totals stay in memory. */
#include "check_internal.h"
#include "le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define QGROUP_STATUS_FLAG_ON 1ULL
#define QGROUP_STATUS_FLAG_RESCAN 2ULL
#define QGROUP_STATUS_FLAG_INCONSISTENT 4ULL

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

struct qtotal {
	uint64_t root, rfer, excl;
};

static int status_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		     uint32_t size, void *arg)
{
	const struct btrfs_qgroup_status_item *si = (const void *)data;
	uint64_t *flags = arg;

	(void)c;
	if (key->type == BTRFS_QGROUP_STATUS_KEY && size >= sizeof(*si))
		*flags = get_le64(&si->flags);
	return 1;
}

int ck_qgroup_init(struct check_ctx *c)
{
	struct fs_key from = { 0, BTRFS_QGROUP_STATUS_KEY, 0 };
	uint64_t flags = 0;

	if (fs_root_lookup(c->fs, BTRFS_QUOTA_TREE_OBJECTID, &c->quota_root) < 0)
		return 0;
	c->st->quota_enabled = 1;
	ck_iterate(c, &c->quota_root, &from, status_cb, &flags);
	/* numbers being rebuilt or already known to be wrong: nothing to verify; simple
	 * quotas count only what was made since they were enabled, not all extents */
	if (!(flags & QGROUP_STATUS_FLAG_ON) ||
	    (flags & (QGROUP_STATUS_FLAG_RESCAN | QGROUP_STATUS_FLAG_INCONSISTENT |
		      BTRFS_QGROUP_STATUS_FLAG_SIMPLE)))
		return 0;
	c->qgroups = ck_sorter(c, sizeof(struct qrec), qrec_cmp, 4);
	return c->qgroups ? 0 : -ENOMEM;
}

void ck_qgroup_add(struct check_ctx *c, uint64_t bytenr, uint64_t root, uint64_t size)
{
	struct qrec r = { bytenr, root, size };

	if (c->qgroups && !c->qgroup_err)
		c->qgroup_err = xsort_add(c->qgroups, &r);
}

static struct qtotal *total_for(struct qtotal **t, int *n, int *cap, uint64_t root)
{
	for (int i = 0; i < *n; i++)
		if ((*t)[i].root == root)
			return &(*t)[i];
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		void *p = realloc(*t, (size_t)nc * sizeof(**t));
		if (!p)
			return NULL;
		*t = p;
		*cap = nc;
	}
	(*t)[*n] = (struct qtotal){ root, 0, 0 };
	return &(*t)[(*n)++];
}

struct compare_arg {
	struct qtotal *t;
	int n;
};

static int qgroup_info_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			  uint32_t size, void *arg)
{
	const struct btrfs_qgroup_info_item *qi = (const void *)data;
	struct compare_arg *ca = arg;
	uint64_t rfer = 0, excl = 0, drfer, dexcl;

	if (key->type != BTRFS_QGROUP_INFO_KEY)
		return key->type > BTRFS_QGROUP_INFO_KEY;
	if (key->offset >> 48 || size < sizeof(*qi))
		return 0;       /* higher levels are sums of these */
	for (int i = 0; i < ca->n; i++)
		if (ca->t[i].root == key->offset) {
			rfer = ca->t[i].rfer;
			excl = ca->t[i].excl;
		}
	drfer = get_le64(&qi->rfer);
	dexcl = get_le64(&qi->excl);
	if (rfer != drfer || excl != dexcl)
		ck_err(c, key->offset, 0, 0, 0,
		       "Counts for qgroup id: 0/%llu are different: our referenced %llu exclusive %llu, disk referenced %llu exclusive %llu",
		       (unsigned long long)key->offset, (unsigned long long)rfer,
		       (unsigned long long)excl, (unsigned long long)drfer, (unsigned long long)dexcl);
	return 0;
}

/* An extent reached from exactly one subvolume is exclusive to it. */
static int finish_extent(struct qtotal **t, int *n, int *cap, uint64_t roots, uint64_t root,
			 uint64_t size)
{
	struct qtotal *q;

	if (roots != 1)
		return 0;
	q = total_for(t, n, cap, root);
	if (!q)
		return -ENOMEM;
	q->excl += size;
	return 0;
}

int check_qgroups(struct check_ctx *c)
{
	struct fs_key from = { 0, BTRFS_QGROUP_INFO_KEY, 0 };
	struct qtotal *t = NULL, *q;
	struct compare_arg ca;
	struct qrec r, prev = { 0, 0, 0 };
	uint64_t roots = 0;
	int n = 0, cap = 0, ret;

	if (!c->qgroups)
		return 0;
	ret = c->qgroup_err ? c->qgroup_err : xsort_finish(c->qgroups);
	while (ret >= 0 && (ret = xsort_next(c->qgroups, &r)) == 1) {
		if (roots && r.bytenr == prev.bytenr && r.root == prev.root)
			continue;       /* reached twice from one subvolume */
		if (roots && r.bytenr != prev.bytenr) {
			ret = finish_extent(&t, &n, &cap, roots, prev.root, prev.size);
			roots = 0;
			if (ret < 0)
				break;
		}
		q = total_for(&t, &n, &cap, r.root);
		if (!q) {
			ret = -ENOMEM;
			break;
		}
		q->rfer += r.size;
		roots++;
		prev = r;
	}
	if (ret >= 0 && roots)
		ret = finish_extent(&t, &n, &cap, roots, prev.root, prev.size);
	if (ret >= 0) {
		ca.t = t;
		ca.n = n;
		ck_iterate(c, &c->quota_root, &from, qgroup_info_cb, &ca);
	}
	free(t);
	return ret < 0 ? ret : 0;
}
