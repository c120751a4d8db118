/* Stage 5: the csum tree. Items are sorted and must not overlap; every range
 * they cover must lie inside data extents; every written data range of a file
 * that has checksums must be covered (the ranges come sorted from stage 4);
 * with --check-data-csum the data itself is read and verified, every copy. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/vec.h"
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

/* What reading a sector of one copy found; DATA_MISSING: no copy is present. */
enum { DATA_UNREADABLE, DATA_MISMATCH, DATA_MISSING };
typedef void (*found_fn)(void *arg, uint64_t logical, int mirror, int kind);

#define VERIFY_BATCH (256u << 10)       /* bytes of all copies read at once */

/* Reads every copy of count sectors from start, a batch at a time, and compares
 * them with sums; tells found() about each bad copy of a sector and each sector
 * with no copy present, in sector order, then copy order. */
static int verify_data(struct fs *fs, uint8_t **buf, size_t *cap, uint64_t start,
		       const uint8_t *sums, uint32_t count, found_fn found, void *arg)
{
	uint32_t ss = fs->sectorsize, per;
	int copies = fs_num_copies(fs, start);

	if (copies < 1)
		copies = 1;
	per = VERIFY_BATCH / ss / (uint32_t)copies;
	if (!per)
		per = 1;
	if (*cap < (size_t)per * ss * copies) {
		free(*buf);
		*cap = (size_t)per * ss * copies;
		if (!(*buf = malloc(*cap)))
			return *cap = 0, -ENOMEM;
	}
	for (uint32_t i = 0; i < count; i += per) {
		uint32_t n = count - i < per ? count - i : per;
		uint64_t at = start + (uint64_t)i * ss;
		unsigned whole = 0;     /* copies read in one go */

		for (int m = 1; n > 1 && m <= copies && m <= 32; m++)
			if (!fs_read_logical(fs, at, *buf + (size_t)(m - 1) * per * ss,
					     (size_t)n * ss, m))
				whole |= 1u << (m - 1);
		for (uint32_t k = 0; k < n; k++) {
			uint64_t logical = at + (uint64_t)k * ss;
			int present = 0;

			for (int m = 1; m <= copies; m++) {
				uint8_t *p = *buf + ((size_t)(m - 1) * per + k) * ss;
				uint8_t got[CSUM_MAX_SIZE];

				if (fs_copy_missing(fs, logical, m))
					continue;
				present = 1;
				if (!(m <= 32 && whole >> (m - 1) & 1) &&
				    fs_read_logical(fs, logical, p, ss, m) < 0) {
					found(arg, logical, m, DATA_UNREADABLE);
					continue;
				}
				csum_compute(fs->csum_type, p, ss, got);
				if (memcmp(got, sums + (size_t)(i + k) * fs->csum_size,
					   fs->csum_size))
					found(arg, logical, m, DATA_MISMATCH);
			}
			if (!present)
				found(arg, logical, 0, DATA_MISSING);
		}
	}
	return 0;
}

/* The number of checksums of a csum item; 0 when it is none or of a bad size. */
static uint32_t csum_item_count(const struct fs *fs, const struct fs_key *key, uint32_t size)
{
	if (key->objectid != BTRFS_EXTENT_CSUM_OBJECTID || key->type != BTRFS_EXTENT_CSUM_KEY ||
	    size % fs->csum_size)
		return 0;
	return fs_csum_item_count(size, fs->csum_size);
}

#if CFG_CHECK_THREADS
//config:config CHECK_THREADS
//config:	bool "btrfsck on two cores"
//config:	default y
//config:	depends on APPLET_CHECK
//config:	help
//config:	  btrfs check on a second thread: the fs roots (stage 4) while the
//config:	  extents are checked, the data (--check-data-csum) meanwhile, half
//config:	  of each sort; the output stays that of one thread, the memory
//config:	  the same. BTRFSBOX_THREADS=1 keeps it to one thread.
#include "util/workq.h"

/* The data verification on a second thread, from the start of the check: it walks
 * the csum tree through its own handle and keeps what it finds, which stage 5 then
 * reports in its place (by item number): the output is that of one thread. Past
 * BG_MAX_FOUND findings it stops; stage 5 verifies the rest itself. */
#define BG_MAX_FOUND 65536
struct data_finding { uint64_t seq, logical; int32_t mirror, kind; };
struct data_bg {
	struct workq q;
	struct check_ctx c;             /* its own, on a view; reports go nowhere */
	struct check_opts o;
	struct check_stats st;
	uint8_t *buf;
	size_t cap;
	struct data_finding *f;
	size_t n, cap_f;
	uint64_t seq;                   /* items verified */
	int missing_said, full;
};

static void keep_finding(void *arg, uint64_t logical, int mirror, int kind)
{
	struct data_bg *bg = arg;
	struct data_finding *f;

	if (kind == DATA_MISSING && bg->missing_said++)
		return;
	f = bg->n < BG_MAX_FOUND ? vec_push(&bg->f, &bg->n, &bg->cap_f, sizeof(*f)) : NULL;
	if (!f)
		bg->full = 1;
	else
		*f = (struct data_finding){ bg->seq, logical, mirror, kind };
}

static int bg_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		      uint32_t size, void *arg)
{
	struct data_bg *bg = arg;
	uint32_t count = csum_item_count(c->fs, key, size);
	size_t mark = bg->n;

	if (!count)
		return 0;
	if (verify_data(c->fs, &bg->buf, &bg->cap, key->offset, data, count, keep_finding,
			bg) < 0 || bg->full) {
		bg->n = mark;           /* this item and the rest: in stage 5 */
		return 1;
	}
	bg->seq++;
	return 0;
}

static void bg_run(void *ctx, void *rec)
{
	struct data_bg *bg = ctx;
	struct fs_key from = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, 0 };

	(void)rec;
	ck_iterate(&bg->c, &bg->c.csum_root, &from, bg_item_cb, bg);
}

void ck_data_bg_start(struct check_ctx *c)
{
	struct data_bg *bg;

	if (!c->o->check_data_csum || c->o->threads == 1 || !c->have_csum_root || (c->fs->w && c->o->generation) ||
	    !(bg = calloc(1, sizeof(*bg))))
		return;
	bg->c.fs = fs_view(c->fs, 1u << 20);
	bg->c.o = &bg->o;
	bg->c.st = &bg->st;
	bg->c.csum_root = c->csum_root;
	if (!bg->c.fs || workq_start(&bg->q, 64, bg_run, bg) < 0) {
		fs_view_free(bg->c.fs);
		free(bg);
		return;
	}
	workq_reserve(&bg->q, 8);
	workq_commit(&bg->q, 8);
	c->data_bg = bg;
}

void ck_data_bg_free(struct check_ctx *c)
{
	struct data_bg *bg = c->data_bg;

	if (!bg)
		return;
	workq_stop(&bg->q);
	fs_view_free(bg->c.fs);
	free(bg->buf);
	free(bg->f);
	free(bg);
	c->data_bg = NULL;
}
#endif

/* The data extents the log trees' file extents name: the kernel put their checksums
 * in the checksum tree already, their extent items come when the log is replayed. */
struct log_extent { uint64_t start, end; };
struct log_extents { struct log_extent *v; size_t n, cap; };

static int log_file_extent_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			      uint32_t size, void *arg)
{
	struct log_extents *le = arg;
	struct fs_file_extent fe;
	struct log_extent *e;

	(void)c;
	if (key->type != BTRFS_EXTENT_DATA_KEY || fs_file_extent(data, size, &fe) ||
	    fe.type == BTRFS_FILE_EXTENT_INLINE || !fe.disk_bytenr)
		return 0;
	e = vec_push(&le->v, &le->n, &le->cap, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct log_extent){ fe.disk_bytenr, fe.disk_bytenr + fe.disk_num_bytes };
	return 0;
}

static int log_root_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data, uint32_t size,
		       void *arg)
{
	struct fs_root log;

	if (key->objectid != BTRFS_TREE_LOG_OBJECTID || key->type != BTRFS_ROOT_ITEM_KEY ||
	    ck_root_from_item(key, data, size, &log) < 0)
		return 0;
	return ck_iterate(c, &log, &(struct fs_key){ 0, 0, 0 }, log_file_extent_cb, arg) == -ENOMEM ? -ENOMEM : 0;
}

/* [start, end) lies inside a data extent a log tree names. */
static int log_covers(const struct log_extents *le, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < le->n; i++)
		if (le->v[i].start <= start && end <= le->v[i].end)
			return 1;
	return 0;
}

struct csum_pass {
	struct check_ctx *c;
	struct log_extents logged;
	struct runs dr;
	uint64_t prev_end;
	uint8_t *buf;
	size_t buf_len;
	int missing_said;
	uint64_t seq;                   /* items whose data was verified */
	size_t next_found;              /* the second thread's findings reported */
};

static void report_finding(void *arg, uint64_t logical, int mirror, int kind)
{
	struct csum_pass *cp = arg;
	struct check_ctx *c = cp->c;
	uint32_t ss = c->fs->sectorsize;

	if (kind == DATA_MISSING) {
		if (!cp->missing_said++)
			ck_warn(c, BTRFS_CSUM_TREE_OBJECTID, 0, logical, ss,
				"data on missing devices is not verified (first at bytenr %llu)",
				(unsigned long long)logical);
		return;
	}
	ck_err(c, BTRFS_CSUM_TREE_OBJECTID, 0, logical, ss,
	       kind == DATA_MISMATCH ? "mirror %d bytenr %llu csum mismatch" :
	       "mirror %d bytenr %llu cannot be read", mirror, (unsigned long long)logical);
}

/* The data of a csum item: what the second thread found, or read now. */
static void check_item_data(struct check_ctx *c, struct csum_pass *cp, uint64_t start,
			    const uint8_t *sums, uint32_t count)
{
	uint32_t ss = c->fs->sectorsize;
#if CFG_CHECK_THREADS
	struct data_bg *bg = c->data_bg;

	if (bg && cp->seq < bg->seq)
		for (struct data_finding *f = bg->f + cp->next_found;
		     f < bg->f + bg->n && f->seq == cp->seq; f++, cp->next_found++)
			report_finding(cp, f->logical, f->mirror, f->kind);
	else
#endif
		verify_data(c->fs, &cp->buf, &cp->buf_len, start, sums, count, report_finding, cp);
	cp->seq++;
	for (uint32_t i = 0; i < count; i++)
		ck_progress(c, start / ss + i);
}

static int csum_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			uint32_t size, void *arg)
{
	struct csum_pass *cp = arg;
	uint32_t ss = c->fs->sectorsize, count;
	uint64_t end;

	if (key->objectid != BTRFS_EXTENT_CSUM_OBJECTID || key->type != BTRFS_EXTENT_CSUM_KEY)
		return 0;
	count = csum_item_count(c->fs, key, size);
	if (!count) {
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
	if (c->have_extent_root && !runs_cover(&cp->dr, key->offset, end) && !log_covers(&cp->logged, key->offset, end)) {
		if (CFG_CHECK_REPAIR)
			c->fix_value[0] = 1;
		ck_err_fix(c, CHECK_FIX_CSUMS, BTRFS_CSUM_TREE_OBJECTID, 0, key->offset, end - key->offset,
			   "csum exists for %llu-%llu but there is no extent record",
			   (unsigned long long)key->offset, (unsigned long long)end);
	}
	if (c->o->check_data_csum)
		check_item_data(c, cp, key->offset, data, count);
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
				ck_err_fix(c, CHECK_FIX_CSUMS, r.root, r.ino, r.start, r.len,
				       "root %llu inode %llu: odd csum item: data [%llu %llu] of a nodatasum file has checksums",
				       (unsigned long long)r.root, (unsigned long long)r.ino,
				       (unsigned long long)r.start, (unsigned long long)r.len);
			continue;
		}
		if (covered)
			continue;
		/* the kernel cannot read such data: the checksum tree is made anew (the lost
		 * checksums from the data) */
		if (CFG_CHECK_REPAIR)
			c->fix_value[0] = BTRFS_CSUM_TREE_OBJECTID;
		ck_err_fix(c, CHECK_FIX_REMAKE, r.root, r.ino, r.start, r.len,
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
	cp.c = c;
#if CFG_CHECK_THREADS
	if (c->data_bg)
		workq_stop(&c->data_bg->q);     /* its findings are all there */
#endif
	if (c->have_csum_root) {
		ck_iterate_logs(c, log_root_cb, &cp.logged);
		ck_cursor_init(&cp.dr.cu, c, &c->extent_root, &efrom);
		cp.dr.next = next_data_extent;
		ck_iterate(c, &c->csum_root, &from, csum_item_cb, &cp);
		ck_cursor_release(&cp.dr.cu);
		free(cp.logged.v);
		free(cp.buf);
	}
	ret = check_coverage(c);
	if (ret < 0)
		fs_err(&c->fs->err, ret, "cannot sort checksum ranges in %s",
		       c->o->tmpdir ? c->o->tmpdir : "/tmp");
	return ret;
}
