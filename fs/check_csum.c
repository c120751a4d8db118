/* Stage 5: the csum tree. Items are sorted and must not overlap; every range
 * they cover must lie inside data extents; every written data range of a file
 * that has checksums must be covered (the ranges come sorted from stage 4);
 * with --check-data-csum the data itself is read and verified, every copy. */
#include "check_internal.h"
#include "csum.h"
#include "le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ck_range_cmp(const void *pa, const void *pb)
{
	const struct check_range *x = pa, *y = pb;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return 0;
}

/* Coalesced runs of covered bytes read in address order from a tree: data
 * extents from the extent tree, or checksummed ranges from the csum tree. */
struct runs {
	struct ck_cursor cu;
	int (*next)(struct runs *r, uint64_t *start, uint64_t *end);
	uint64_t start, end, next_start, next_end;
	int have_next, done;
};

static int next_data_extent(struct runs *r, uint64_t *start, uint64_t *end)
{
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;

	while (ck_cursor_next(&r->cu, &key, &data, &size)) {
		struct fs_extent_info ei;

		if (key.type != BTRFS_EXTENT_ITEM_KEY)
			continue;
		if (fs_extent_item(data, size, key.type, &ei) < 0 ||
		    !(ei.flags & BTRFS_EXTENT_FLAG_DATA))
			continue;
		*start = key.objectid;
		*end = key.objectid + key.offset;
		return 1;
	}
	return 0;
}

static int next_csum_range(struct runs *r, uint64_t *start, uint64_t *end)
{
	struct check_ctx *c = r->cu.c;
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;

	while (ck_cursor_next(&r->cu, &key, &data, &size)) {
		uint32_t count = fs_csum_item_count(size, c->fs->csum_size);

		if (key.objectid != BTRFS_EXTENT_CSUM_OBJECTID || key.type != BTRFS_EXTENT_CSUM_KEY ||
		    !count)
			continue;
		*start = key.offset;
		*end = key.offset + (uint64_t)count * c->fs->sectorsize;
		return 1;
	}
	return 0;
}

/* Moves to the run reaching past pos (positions only grow); 1 when
 * [pos, pos_end) lies inside it. */
static int runs_cover(struct runs *r, uint64_t pos, uint64_t pos_end)
{
	while (r->end <= pos && !r->done) {
		if (!r->have_next && !r->next(r, &r->next_start, &r->next_end)) {
			r->done = 1;
			break;
		}
		r->start = r->next_start;
		r->end = r->next_end;
		r->have_next = 0;
		for (;;) {
			if (!r->next(r, &r->next_start, &r->next_end)) {
				r->done = 1;
				break;
			}
			if (r->next_start > r->end) {
				r->have_next = 1;
				break;
			}
			if (r->next_end > r->end)
				r->end = r->next_end;
		}
	}
	return r->start <= pos && pos_end <= r->end;
}

struct csum_pass {
	struct runs dr;
	uint64_t prev_end;
	uint8_t *buf;
	size_t buf_len;
	int missing_said;
};

static void verify_data(struct check_ctx *c, struct csum_pass *cp, uint64_t start,
			const uint8_t *sums, uint32_t count)
{
	struct fs *fs = c->fs;
	uint32_t ss = fs->sectorsize;
	int copies = fs_num_copies(fs, start);

	if (cp->buf_len < ss) {
		free(cp->buf);
		cp->buf = malloc(ss);
		cp->buf_len = cp->buf ? ss : 0;
		if (!cp->buf)
			return;
	}
	if (copies < 1)
		copies = 1;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t logical = start + (uint64_t)i * ss;
		const uint8_t *want = sums + (size_t)i * fs->csum_size;

		int present = 0;

		for (int m = 1; m <= copies; m++) {
			uint8_t got[CSUM_MAX_SIZE];

			if (fs_copy_missing(fs, logical, m))
				continue;
			present = 1;
			if (fs_read_logical(fs, logical, cp->buf, ss, m) < 0) {
				ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, logical, ss,
				       "mirror %d bytenr %llu cannot be read", m,
				       (unsigned long long)logical);
				continue;
			}
			csum_compute(fs->csum_type, cp->buf, ss, got);
			if (memcmp(got, want, fs->csum_size))
				ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, logical, ss,
				       "mirror %d bytenr %llu csum mismatch", m,
				       (unsigned long long)logical);
		}
		if (!present && !cp->missing_said++)
			ck_warn(c, BTRFS_CSUM_TREE_OBJECTID, 0, logical, ss,
				"data on missing devices is not verified (first at bytenr %llu)",
				(unsigned long long)logical);
		ck_progress(c, logical / ss);
	}
}

static int csum_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			uint32_t size, void *arg)
{
	struct csum_pass *cp = arg;
	uint32_t ss = c->fs->sectorsize, count;
	uint64_t end;

	if (key->objectid != BTRFS_EXTENT_CSUM_OBJECTID || key->type != BTRFS_EXTENT_CSUM_KEY)
		return 0;
	count = fs_csum_item_count(size, c->fs->csum_size);
	if (size % c->fs->csum_size || !count) {
		ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, key->offset, 0,
		       "csum item at %llu has bad size %u", (unsigned long long)key->offset, size);
		return 0;
	}
	end = key->offset + (uint64_t)count * ss;
	if (key->offset % ss)
		ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, key->offset, end - key->offset,
		       "csum item at %llu is not sector aligned", (unsigned long long)key->offset);
	if (key->offset < cp->prev_end)
		ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, key->offset, end - key->offset,
		       "csum overlap, current bytenr=%llu prev_end=%llu",
		       (unsigned long long)key->offset, (unsigned long long)cp->prev_end);
	if (end > cp->prev_end)
		cp->prev_end = end;
	if (c->have_extent_root && !runs_cover(&cp->dr, key->offset, end))
		ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, key->offset, end - key->offset,
		       "csum exists for %llu-%llu but there is no extent record",
		       (unsigned long long)key->offset, (unsigned long long)end);
	if (c->o->check_data_csum)
		verify_data(c, cp, key->offset, data, count);
	return 0;
}

static int check_coverage(struct check_ctx *c)
{
	struct fs_key from = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, 0 };
	struct runs cr;
	struct check_range r;
	int ret;

	memset(&cr, 0, sizeof(cr));
	ret = xsort_finish(c->csum_need);
	if (ret < 0)
		return ret;
	if (!c->have_csum_root) {
		while ((ret = xsort_next(c->csum_need, &r)) == 1)
			if (!r.no_csum) {
				ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, 0, 0,
				       "no csum tree but data needs checksums");
				break;
			}
		return ret < 0 ? ret : 0;
	}
	ck_cursor_init(&cr.cu, c, &c->csum_root, &from);
	cr.next = next_csum_range;
	while ((ret = xsort_next(c->csum_need, &r)) == 1) {
		int covered = runs_cover(&cr, r.start, r.start + r.len);

		if (r.no_csum) {
			/* cr is now the first run ending after r.start */
			if (cr.end > r.start && cr.start < r.start + r.len)
				ck_err(c, r.root, r.ino, r.start, r.len,
				       "root %llu inode %llu: odd csum item: data [%llu %llu] of a nodatasum file has checksums",
				       (unsigned long long)r.root, (unsigned long long)r.ino,
				       (unsigned long long)r.start, (unsigned long long)r.len);
			continue;
		}
		if (!covered)
			ck_err(c, r.root, r.ino, r.start, r.len,
			       "root %llu inode %llu: some csum missing for data [%llu %llu]",
			       (unsigned long long)r.root, (unsigned long long)r.ino,
			       (unsigned long long)r.start, (unsigned long long)r.len);
	}
	ck_cursor_release(&cr.cu);
	return ret;
}

int check_csums(struct check_ctx *c)
{
	struct fs_key from = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, 0 };
	struct fs_key efrom = { 0, 0, 0 };
	struct csum_pass cp;
	int ret = 0;

	memset(&cp, 0, sizeof(cp));
	if (c->have_csum_root) {
		ck_cursor_init(&cp.dr.cu, c, &c->extent_root, &efrom);
		cp.dr.next = next_data_extent;
		ck_iterate(c, &c->csum_root, &from, csum_item_cb, &cp);
		ck_cursor_release(&cp.dr.cu);
		free(cp.buf);
	}
	ret = check_coverage(c);
	if (ret < 0)
		fs_err(&c->fs->err, ret, "cannot sort checksum ranges in %s",
		       c->o->tmpdir ? c->o->tmpdir : "/tmp");
	return ret;
}
