//build:Oz
/* Offline scrub (see scrub.h). */
#include "scrub.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include "util/sort.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WINDOW (1u << 20)               /* bytes read with one pread */
#define WINDOW_GAP (128u << 10)         /* free space read through rather than seeked over */
#define MAX_SECTORS (WINDOW / 4096)
#define MAX_PIECES 256
#define MAX_ROWS (FS_SCRUB_PART / 65536)

/* Sector states while a piece is checked. */
enum { S_READ = 1, S_CSUM = 2, S_VERIFY = 3, S_KIND = 3, S_HAS_CSUM = 4, S_FIXED = 8 };

/* An allocated range on the part: a tree block, or (a slice of) a data extent. */
struct piece {
	uint64_t logical, physical, generation;
	uint32_t len, extents;                  /* extents: counted for the extent (as the kernel
						   does: once per 64 KiB of chunk it touches) */
	uint8_t mirror, meta, level;
};

struct fs_scrub_buf {
	uint8_t data[WINDOW], alt[WINDOW];
	uint8_t sums[MAX_SECTORS][CSUM_MAX_SIZE];
	uint8_t state[MAX_SECTORS];
	struct piece pieces[MAX_PIECES];
	uint8_t rows[MAX_ROWS / 8];             /* RAID5/6 rows of the part holding extents */
	uint8_t *row;                           /* RAID5/6: a full stripe and the parity */
	size_t row_cap;
};

struct run {
	struct fs_scrub *s;
	struct fs *fs;
	struct fs_scrub_buf *b;
	const struct fs_scrub_part *part;
	const struct fs_chunk *chunk;
	int stripe;                             /* index of the part's stripe in the chunk */
	struct fs_device *dev;
	struct btrfs_scrub_progress *p;
	uint64_t span_start, span_end;          /* logical range whose copies the part holds */
	struct fs_root csum_root;
	struct fs_path cpath;                   /* csum cursor, moving forward only */
	int cstate;                             /* 0 not positioned, 1 on an item, 2 past the end */
	uint64_t wstart, wend;                  /* physical window being collected */
	int n;
};

/* ---- layout ---------------------------------------------------------------- */

static int parity_count(const struct fs_chunk *c)
{
	if (c->type & BTRFS_BLOCK_GROUP_RAID5)
		return 1;
	return c->type & BTRFS_BLOCK_GROUP_RAID6 ? 2 : 0;
}

/* Bytes of logical space per byte of one stripe. */
static uint64_t chunk_width(const struct fs_chunk *c)
{
	if (c->type & BTRFS_BLOCK_GROUP_RAID0)
		return c->num_stripes;
	if (c->type & BTRFS_BLOCK_GROUP_RAID10)
		return c->num_stripes / c->sub_stripes;
	if (parity_count(c))
		return (uint64_t)(c->num_stripes - parity_count(c));
	return 1;
}

static int part_cmp(const void *a, const void *b)
{
	const struct fs_scrub_part *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int fs_scrub_parts(const struct fs *fs, uint64_t devid, struct fs_scrub_part **parts, size_t *n)
{
	struct fs_scrub_part *v = NULL;
	size_t cnt = 0, cap = 0;

	for (int i = 0; i < fs->num_chunks; i++) {
		const struct fs_chunk *c = &fs->chunks[i];
		uint64_t plen = c->length / chunk_width(c);
		uint64_t step = (FS_SCRUB_PART + c->stripe_len - 1) / c->stripe_len * c->stripe_len;

		for (int s = 0; s < c->num_stripes; s++) {
			const struct fs_chunk_stripe *st = &c->stripes[s];
			/* a damaged chunk item may claim more than the device holds */
			uint64_t len = !st->dev || st->offset >= st->dev->size ? 0 :
				       plen < st->dev->size - st->offset ? plen : st->dev->size - st->offset;

			if (st->devid != devid)
				continue;
			for (uint64_t o = 0; o < len; o += step) {
				if (cnt == cap) {
					struct fs_scrub_part *nv = realloc(v, (cap = cap * 2 + 16) * sizeof(*v));
					if (!nv) {
						free(v);
						return -ENOMEM;
					}
					v = nv;
				}
				v[cnt++] = (struct fs_scrub_part){ devid, st->offset + o,
					st->offset + (len - o < step ? len : o + step), c->logical };
			}
		}
	}
	if (cnt)
		sort_stable(v, cnt, sizeof(*v), part_cmp);
	*parts = v;
	*n = cnt;
	return 0;
}

/* ---- the write side ------------------------------------------------------------- */

int fs_scrub_open_rw(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return -errno;
	fd = open(path, O_RDWR | O_CLOEXEC | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	return fd < 0 ? -errno : fd;
}

int fs_scrub_rewrite(int fd, uint64_t physical, const void *buf, size_t len)
{
	int ret = pio_dev_write(fd, buf, len, (off_t)physical);     /* the crash tests' log sees it */

	return ret ? ret : pio_dev_sync(fd);
}

/* ---- checksums -------------------------------------------------------------------- */

/* Copies the checksum of the data sector at logical into out; 1 found, 0 none, <0 error.
 * Calls come in increasing order of logical within a run. */
static int csum_find(struct run *r, uint64_t logical, uint8_t *out)
{
	struct fs *fs = r->fs;
	struct fs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, logical };
	int ret = 0;

	if (!r->cstate) {
		r->cstate = 2;
		if (fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &r->csum_root))
			return 0;
		ret = fs_search_le(fs, &r->csum_root, &key, &r->cpath);
		if (ret == -ENOENT)
			ret = fs_search(fs, &r->csum_root, &key, &r->cpath);
		if (ret < 0)
			return ret;
		r->cstate = r->cpath.levels ? 1 : 2;
	}
	while (r->cstate == 1) {
		uint32_t size;
		const uint8_t *sums = fs_path_data(&r->cpath, &size);
		uint64_t end;

		fs_path_key(&r->cpath, &key);
		end = key.offset + (uint64_t)fs_csum_item_count(size, fs->csum_size) * fs->sectorsize;
		if (key.objectid != BTRFS_EXTENT_CSUM_OBJECTID || key.type != BTRFS_EXTENT_CSUM_KEY ||
		    key.offset > logical)
			return 0;
		if (logical < end) {
			memcpy(out, sums + (logical - key.offset) / fs->sectorsize * fs->csum_size, fs->csum_size);
			return 1;
		}
		ret = fs_next(fs, &r->cpath);
		if (ret)
			r->cstate = 2;
	}
	return ret < 0 ? ret : 0;
}

static int sector_ok(const struct fs *fs, const uint8_t *data, const uint8_t *sum)
{
	uint8_t c[CSUM_MAX_SIZE];

	csum_compute(fs->csum_type, data, fs->sectorsize, c);
	return !memcmp(c, sum, fs->csum_size);
}

static int block_ok(const struct fs *fs, const struct piece *pc, const uint8_t *buf)
{
	struct fs_block_ctx ctx = { fs->nodesize, fs->csum_type, fs->meta_uuid, pc->logical, 0 };
	struct fs_block_expect exp = { pc->generation, pc->level, 0, NULL };

	return pc->len == fs->nodesize && !fs_block_check(buf, &ctx, &exp, NULL);
}

/* ---- RAID5/6 rebuild ------------------------------------------------------------- */

/* GF(2^8) multiplication by 2 (polynomial 0x11d) of each byte: RAID6 syndrome. */
static void gf_mul2(uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(b[i] << 1 ^ (b[i] & 0x80 ? 0x1d : 0));
}

/* Reads len bytes at offset `off` of the stripe element of row `row`, column `col`
 * (0..data-1 data, data: P, data+1: Q) of chunk c. */
static int read_element(const struct fs_chunk *c, uint64_t row, int col, uint64_t off,
			void *buf, size_t len)
{
	const struct fs_chunk_stripe *st = &c->stripes[(row + (uint64_t)col) % c->num_stripes];

	if (!st->dev)
		return -EIO;
	return fs_read_phys(st->dev, st->offset + row * c->stripe_len + off, buf, len);
}

/* P (and Q into q when not NULL) of `len` bytes at `off` of row `row` from its data
 * elements; or with skip >= 0, the data element `skip` rebuilt from the others and P.
 * The elements are read into tmp, or with elems, taken from there (element col at
 * elems + col * stripe_len). */
static int compute_parity(const struct fs_chunk *c, uint64_t row, int skip, uint64_t off,
			  uint8_t *p, uint8_t *q, uint8_t *tmp, size_t len, const uint8_t *elems)
{
	int data = c->num_stripes - parity_count(c);

	memset(p, 0, len);
	if (q)
		memset(q, 0, len);
	for (int col = skip >= 0 ? data : data - 1; col >= 0; col--) {
		const uint8_t *src = tmp;

		if (q)
			gf_mul2(q, len);
		if (col == skip)
			continue;
		if (elems)
			src = elems + (size_t)col * c->stripe_len + off;
		else if (read_element(c, row, col, off, tmp, len))
			return -EIO;
		for (size_t i = 0; i < len; i++) {
			p[i] ^= src[i];
			if (q)
				q[i] ^= src[i];
		}
	}
	return 0;
}

static int row_buffer(struct fs_scrub_buf *b, size_t len)
{
	if (b->row_cap >= len)
		return 0;
	free(b->row);
	b->row = malloc(len);
	b->row_cap = b->row ? len : 0;
	return b->row ? 0 : -ENOMEM;
}

/* The RAID5/6 rebuild of one data sector from the rest of its row and P into out. */
static int rebuild_sector(struct run *r, uint64_t logical, uint8_t *out)
{
	const struct fs_chunk *c = r->chunk;
	uint64_t off = logical - c->logical, nr = off / c->stripe_len, data = chunk_width(c);

	return row_buffer(r->b, r->fs->sectorsize) ?:
	       compute_parity(c, nr / data, (int)(nr % data), off % c->stripe_len, out, NULL, r->b->row,
			      r->fs->sectorsize, NULL);
}

static void report(struct run *r, uint64_t logical, uint64_t physical, uint32_t len, int kind,
		   int meta, int fixed, int werr)
{
	struct fs_scrub_error e = { logical, physical, r->part->devid, len, kind, meta, fixed, werr };

	if (r->s->report)
		r->s->report(r->s->ctx, r->fs, &e);
}

/* Puts back good bytes (unless read-only) and counts a run of repaired or bad sectors. */
static void settle(struct run *r, uint64_t logical, uint64_t physical, const uint8_t *good,
		   uint32_t len, int kind, int meta, int fixed)
{
	struct fs *fs = r->fs;
	uint32_t nsec = len / fs->sectorsize;
	int werr = 0;

	if (fixed && !r->s->readonly)
		werr = fs_scrub_rewrite(r->s->write_fd[r->dev - fs->devs], physical, good, len);
	if (fixed && !werr)
		r->p->corrected_errors += nsec;
	else
		r->p->uncorrectable_errors += nsec;
	report(r, logical, physical, len, kind, meta, fixed, werr);
}

/* ---- checking and repairing the pieces of a window ------------------------------ */

/* Re-reads a piece sector by sector after a failed read, marking the sectors that fail. */
static void read_sectors(struct run *r, const struct piece *pc, uint8_t *data)
{
	uint32_t ss = r->fs->sectorsize;

	for (uint32_t i = 0; i < pc->len / ss; i++)
		if (fs_read_phys(r->dev, pc->physical + (uint64_t)i * ss, data + (size_t)i * ss, ss))
			r->b->state[i] = S_READ;
}

/* Fills alt with another version of pc: copy m (1..copies), or for m past the copies
 * of a RAID5/6 chunk, the bad sectors rebuilt from the rest of their rows. 0 or -EIO. */
static int other_copy(struct run *r, const struct piece *pc, const uint8_t *data, uint8_t *alt, int m)
{
	uint32_t ss = r->fs->sectorsize;

	if (m <= fs_num_copies(r->fs, pc->logical))
		return fs_read_logical(r->fs, pc->logical, alt, pc->len, m);
	memcpy(alt, data, pc->len);
	for (uint32_t i = 0; i < pc->len / ss; i++)
		if ((r->b->state[i] & S_KIND) && rebuild_sector(r, pc->logical + (uint64_t)i * ss, alt + (size_t)i * ss))
			return -EIO;
	return 0;
}

/* Repairs the bad sectors of pc from the other copies (or the RAID5/6 rebuild). */
static void repair(struct run *r, const struct piece *pc, uint8_t *data)
{
	struct fs *fs = r->fs;
	uint8_t *st = r->b->state, *alt = r->b->alt;
	uint32_t ss = fs->sectorsize, nsec = pc->len / ss, i, j;
	int sources = fs_num_copies(fs, pc->logical) + !!parity_count(r->chunk);

	for (int m = 1; m <= sources; m++) {
		int alt_block_ok;

		if (m == pc->mirror || other_copy(r, pc, data, alt, m))
			continue;
		alt_block_ok = pc->meta && block_ok(fs, pc, alt);
		for (i = 0; i < nsec; i++) {
			uint8_t *d = data + (size_t)i * ss, *a = alt + (size_t)i * ss;

			if (!(st[i] & S_KIND) || (st[i] & S_FIXED))
				continue;
			if (pc->meta ? alt_block_ok : !(st[i] & S_HAS_CSUM) || sector_ok(fs, a, r->b->sums[i])) {
				memcpy(d, a, ss);
				st[i] |= S_FIXED;
			}
		}
	}
	for (i = 0; i < nsec; i = j) {
		for (j = i + 1; j < nsec && st[j] == st[i]; j++)
			;
		if (st[i] & S_KIND)
			settle(r, pc->logical + (uint64_t)i * ss, pc->physical + (uint64_t)i * ss,
			       data + (size_t)i * ss, (j - i) * ss, st[i] & S_KIND, pc->meta, st[i] & S_FIXED);
	}
}

static int check_piece(struct run *r, const struct piece *pc, uint8_t *data, int read_failed)
{
	struct fs *fs = r->fs;
	struct btrfs_scrub_progress *p = r->p;
	uint8_t *st = r->b->state;
	uint32_t ss = fs->sectorsize, nsec = pc->len / ss, bad = 0;

	memset(st, 0, nsec);
	if (read_failed)
		read_sectors(r, pc, data);
	if (pc->meta) {
		p->tree_extents_scrubbed += pc->extents;
		p->tree_bytes_scrubbed += pc->len;
	} else {
		p->data_extents_scrubbed += pc->extents;
		p->data_bytes_scrubbed += pc->len;
	}
	for (uint32_t i = 0; i < nsec; i++) {
		int ret = pc->meta ? 0 : csum_find(r, pc->logical + (uint64_t)i * ss, r->b->sums[i]);

		if (ret < 0)
			return ret;
		if (ret)
			st[i] |= S_HAS_CSUM;
		else if (!pc->meta)
			p->no_csum++;
		if ((st[i] & S_KIND) == S_READ) {
			p->read_errors++;
			bad++;
		} else if (ret && !sector_ok(fs, data + (size_t)i * ss, r->b->sums[i])) {
			st[i] |= S_CSUM;
			p->csum_errors++;
			bad++;
		}
	}
	if (pc->meta && (bad || !block_ok(fs, pc, data))) {
		/* a tree block is good or bad as a whole */
		for (uint32_t i = 0; i < nsec; i++)
			st[i] = (st[i] & S_KIND) == S_READ ? S_READ : S_VERIFY;
		p->verify_errors += nsec - bad;
		bad = nsec;
	}
	if (bad)
		repair(r, pc, data);
	return 0;
}

static int flush(struct run *r)
{
	struct fs_scrub_buf *b = r->b;
	int failed, ret = 0;

	if (!r->n)
		return 0;
	failed = fs_read_phys(r->dev, r->wstart, b->data, r->wend - r->wstart);
	for (int i = 0; i < r->n && !ret; i++)
		ret = check_piece(r, &b->pieces[i], b->data + (b->pieces[i].physical - r->wstart), failed);
	r->p->last_physical = r->wend;
	r->n = 0;
	if (!ret && r->s->cancel && *r->s->cancel)
		ret = -ECANCELED;
	return ret;
}

static int add_piece(struct run *r, const struct piece *pc)
{
	int ret;

	if (r->n && (r->n == MAX_PIECES || pc->physical < r->wend || pc->physical > r->wend + WINDOW_GAP ||
		     pc->physical + pc->len - r->wstart > WINDOW) && (ret = flush(r)))
		return ret;
	if (!r->n)
		r->wstart = pc->physical;
	r->b->pieces[r->n++] = *pc;
	r->wend = pc->physical + pc->len;
	return 0;
}

/* The extent tree's tree blocks and data extents, one at a time: pc has the kind, level
 * and generation of the extent [start, +len). Nonzero stops the walk. */
typedef int extent_fn(struct run *r, uint64_t start, uint64_t len, struct piece pc, void *arg);

/* extent_fn: adds the parts of the extent that the part holds a copy of. */
static int add_extent(struct run *r, uint64_t start, uint64_t len, struct piece pc, void *unused)
{
	struct fs *fs = r->fs;
	uint64_t x = start > r->span_start ? start : r->span_start;
	uint64_t end = start + len < r->span_end ? start + len : r->span_end;
	int ret;

	(void)unused;
	if (parity_count(r->chunk))
		for (uint64_t row = (x - r->span_start) / r->chunk->stripe_len / chunk_width(r->chunk);
		     row * r->chunk->stripe_len * chunk_width(r->chunk) < end - r->span_start && row < MAX_ROWS; row++)
			r->b->rows[row / 8] |= (uint8_t)(1 << row % 8);
	while (x < end) {
		struct fs_phys ph;
		uint64_t step;
		int copies = fs_num_copies(fs, x), m;

		if (fs_map(fs, x, 1, &ph))
			return 0;
		step = ph.len < end - x ? ph.len : end - x;
		for (m = 1; m <= copies && (m == 1 || !fs_map(fs, x, m, &ph)); m++) {
			if (ph.dev != r->dev || ph.physical < r->part->start || ph.physical >= r->part->end)
				continue;
			pc.extents = (uint32_t)(((x + step - 1 - r->chunk->logical) >> 16) -
						((x - r->chunk->logical) >> 16) + 1);
			for (uint64_t o = 0; o < step; o += WINDOW) {
				pc.logical = x + o;
				pc.physical = ph.physical + o;
				pc.len = (uint32_t)(step - o < WINDOW ? step - o : WINDOW);
				pc.mirror = (uint8_t)m;
				if ((ret = add_piece(r, &pc)))
					return ret;
				pc.extents = 0;
			}
			break;
		}
		x += step;
	}
	return 0;
}

/* Calls fn for the extent items overlapping the logical range [start, end), in order;
 * the nonzero value that stopped it, 1 at the end of the tree, 0, or <0. */
static int for_each_extent(struct run *r, uint64_t start, uint64_t end, extent_fn *fn, void *arg)
{
	struct fs *fs = r->fs;
	struct fs_key key = { start, 0, 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &root);

	fs_path_init(&p);
	if (!ret && (ret = fs_search(fs, &root, &key, &p)) < 0)
		fs_path_release(fs, &p);
	if (ret < 0)
		return ret;
	/* an extent starting before the span may reach into it */
	while (p.levels && (ret = fs_prev(fs, &p)) == 0) {
		fs_path_key(&p, &key);
		if (key.type == BTRFS_EXTENT_ITEM_KEY || key.type == BTRFS_METADATA_ITEM_KEY)
			break;
	}
	for (ret = ret < 0 ? ret : !p.levels; !ret; ret = fs_next(fs, &p)) {
		struct fs_extent_info ei;
		struct piece pc = { 0 };
		uint32_t size;
		const uint8_t *data = fs_path_data(&p, &size);
		uint64_t len;

		fs_path_key(&p, &key);
		if (key.objectid >= end)
			break;
		if ((key.type != BTRFS_EXTENT_ITEM_KEY && key.type != BTRFS_METADATA_ITEM_KEY) ||
		    fs_extent_item(data, size, key.type, &ei))
			continue;
		pc.meta = key.type == BTRFS_METADATA_ITEM_KEY || (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK);
		pc.level = (uint8_t)(key.type == BTRFS_METADATA_ITEM_KEY ? key.offset : (uint64_t)ei.tree_level);
		pc.generation = ei.generation;
		len = pc.meta ? fs->nodesize : key.offset;
		if (key.objectid + len > start && (ret = fn(r, key.objectid, len, pc, arg)))
			break;
	}
	fs_path_release(fs, &p);
	return ret;
}

/* Collects and checks the pieces of every extent in the part's logical span. */
static int walk_extents(struct run *r)
{
	int ret = for_each_extent(r, r->span_start, r->span_end, add_extent, NULL);

	return ret < 0 ? ret : flush(r);
}

/* ---- RAID5/6 parity ------------------------------------------------------------- */

/* The data elements of a row, read into memory in logical order. */
struct row_copy {
	const uint8_t *data;
	uint64_t logical, len;
	int bad;                        /* an extent in it does not verify */
};

/* extent_fn: stops with bad set when a tree block or a checksummed data sector of the
 * extent does not verify in the row's bytes (a tree block reaching out of the row
 * cannot be checked there: it counts as bad). */
static int row_extent_check(struct run *r, uint64_t start, uint64_t len, struct piece pc, void *arg)
{
	struct row_copy *row = arg;
	struct fs *fs = r->fs;
	uint64_t end = row->logical + row->len, a = start > row->logical ? start : row->logical;
	uint8_t sum[CSUM_MAX_SIZE];
	int ret;

	if (pc.meta) {
		pc.logical = start;
		pc.len = (uint32_t)len;
		row->bad = start < row->logical || start + len > end ||
			   !block_ok(fs, &pc, row->data + (start - row->logical));
		return row->bad;
	}
	for (; a < start + len && a < end; a += fs->sectorsize) {
		if ((ret = csum_find(r, a, sum)) < 0)
			return ret;
		if (ret && !sector_ok(fs, row->data + (a - row->logical), sum))
			return row->bad = 1;
	}
	return 0;
}

/* Checks the parity element of row `row` held by the part against the row's data. A
 * wrong one is rewritten only when every extent of the row verifies in the very bytes
 * the parity was computed from: when one does not, the data is what is wrong (its own
 * part repairs it from this parity), and data repaired meanwhile by another thread is
 * never mixed with what was read before. */
static int check_parity(struct run *r, uint64_t row)
{
	const struct fs_chunk *c = r->chunk;
	struct fs *fs = r->fs;
	int data = c->num_stripes - parity_count(c);
	int col = (int)((r->stripe + c->num_stripes - row % c->num_stripes) % c->num_stripes);
	size_t len = c->stripe_len, ss = fs->sectorsize;
	uint64_t phys = c->stripes[r->stripe].offset + row * len;
	struct row_copy copy = { NULL, c->logical + row * len * (uint64_t)data, len * (uint64_t)data, 0 };
	uint8_t *mine, *want, *other, *elems;
	int ret, failed, trusted = -1;

	if (col < data)
		return 0;
	if ((ret = row_buffer(r->b, (3 + (size_t)data) * len)))
		return ret;
	mine = r->b->row, want = mine + len, other = want + len, elems = other + len;
	failed = fs_read_phys(r->dev, phys, mine, len);
	for (int i = 0; i < data && !failed; i++)
		failed = read_element(c, row, i, 0, elems + (size_t)i * len, len);
	if (failed) {
		r->p->read_errors += len / ss;
		return 0;
	}
	compute_parity(c, row, -1, 0, col == data ? want : other, col == data ? NULL : want, NULL, len, elems);
	copy.data = elems;
	for (size_t o = 0; o < len; o += ss) {
		if (!memcmp(mine + o, want + o, ss))
			continue;
		if (trusted < 0)
			trusted = for_each_extent(r, copy.logical, copy.logical + copy.len, row_extent_check, &copy) >= 0 &&
				  !copy.bad;
		if (!trusted)
			return 0;
		r->p->csum_errors++;
		settle(r, copy.logical + o, phys + o, want + o, (uint32_t)ss, FS_SCRUB_PARITY, 0, 1);
	}
	return 0;
}

int fs_scrub_run(struct fs_scrub *s, const struct fs_scrub_part *part, struct btrfs_scrub_progress *p)
{
	struct run r = { .s = s, .fs = s->fs, .part = part, .p = p };
	const struct fs_chunk *c = fs_chunk_find(s->fs, part->logical);
	uint64_t rows, width;
	int ret = 0;

	if (!c)
		return fs_err_at(&s->fs->err, -ENOENT, 0, part->logical, "chunk not found");
	if (!s->b && !(s->b = calloc(1, sizeof(*s->b))))
		return fs_err(&s->fs->err, -ENOMEM, "out of memory");
	r.b = s->b;
	r.chunk = c;
	for (r.stripe = 0; r.stripe < c->num_stripes; r.stripe++)
		if (c->stripes[r.stripe].devid == part->devid && c->stripes[r.stripe].offset <= part->start &&
		    part->start < c->stripes[r.stripe].offset + c->length / chunk_width(c))
			break;
	if (r.stripe == c->num_stripes || !(r.dev = c->stripes[r.stripe].dev))
		return fs_err_at(&s->fs->err, -ENODEV, 0, part->logical, "device %llu not present",
				 (unsigned long long)part->devid);
	width = chunk_width(c);
	r.span_start = c->logical + (part->start - c->stripes[r.stripe].offset) * width;
	r.span_end = c->logical + (part->end - c->stripes[r.stripe].offset) * width;
	memset(r.b->rows, 0, sizeof(r.b->rows));
	fs_path_init(&r.cpath);
	ret = walk_extents(&r);
	/* the parity checks look checksums up again from the start of the span */
	fs_path_release(s->fs, &r.cpath);
	r.cstate = 0;
	rows = (part->end - part->start) / c->stripe_len;
	for (uint64_t row = 0; !ret && parity_count(c) && row < rows && row < MAX_ROWS; row++)
		if (r.b->rows[row / 8] & (1 << row % 8))
			ret = check_parity(&r, (part->start - c->stripes[r.stripe].offset) / c->stripe_len + row);
	fs_path_release(s->fs, &r.cpath);
	if (!ret)
		p->last_physical = part->end;
	return ret;
}

void fs_scrub_free(struct fs_scrub *s)
{
	if (s->b)
		free(s->b->row);
	free(s->b);
	s->b = NULL;
}

void fs_scrub_supers(struct fs *fs, const struct fs_device *d, struct btrfs_scrub_progress *p)
{
	struct btrfs_super_block sb;

	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
		if (btrfs_super_offset(m) + BTRFS_SUPER_SIZE > d->total_bytes)
			break;
		if (fs_super_read_fd(d->fd, m, &sb, NULL) || get_le64(&sb.generation) != fs->generation ||
		    memcmp(sb.fsid, fs->fsid, BTRFS_FSID_SIZE))
			p->super_errors++;
	}
}
