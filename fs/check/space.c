/* Stage 3: the free space a block group records, in the free space tree (v2)
 * or in its free space cache file (v1), must be exactly the gaps between its
 * extents, leaving out the stripes holding superblock copies (never free,
 * never allocated).
 *
 * v2: one pass over the whole tree checks its structure: each
 * FREE_SPACE_INFO belongs to a block group, the entries after it lie inside
 * it, are of the kind its flags say (extents or bitmaps), do not overlap and
 * add up to its extent count. v1: a block group's cache file (named by its
 * FREE_SPACE header in the root tree) is read as the kernel reads it: page
 * checksums, generation, entries, then one page per bitmap; a cache that
 * does not load is not an error (the kernel rebuilds it), one that claims
 * more free space than the block group has is.
 *
 * Then the free ranges (from the tree, or the cache) and the gaps between
 * extent items are produced as coalesced ranges in address order and
 * compared pairwise, as the reference's verify_space_cache does. Only a v1
 * cache file (the kernel sizes them at 64 KiB per 256 MiB) is held in memory.
 * Without CHECK_THOROUGH (tinyconfig) v1 files, superblock stripes and the
 * entry-by-entry checks of the tree are left out. */
//config:config CHECK_THOROUGH
//config:	bool "btrfsck: thorough cross-checks"
//config:	default y
//config:	depends on APPLET_CHECK
//config:	help
//config:	  Read each block group's v1 free space cache as the kernel does and
//config:	  compare it with the extent tree (without it only the cache inodes'
//config:	  mode is checked: the v1 cache is deprecated and the kernel verifies
//config:	  it before use); leave the stripes holding superblock copies out of
//config:	  free space comparisons, as btrfs-progs does; check the entries of the
//config:	  free space tree one by one (kind, place, overlaps, extent counts;
//config:	  without it they are only compared with the extents); check that
//config:	  extent items are aligned and that a tree block's extent item has its
//config:	  generation and level. Also check the items of log trees and
//config:	  relocation trees, the uuid tree, device stats items, directory
//config:	  entries as the kernel validates them and qgroup numbers, and list
//config:	  the holes, mismatched name hashes and full names the reference
//config:	  prints with an inode's errors.
#include "config.h"
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/sort.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FST BTRFS_FREE_SPACE_TREE_OBJECTID
#define V1_MAX_SIZE (8u << 20)          /* larger cache files are not looked at */
#define CACHE_INODE_MODE 0100600        /* S_IFREG | 0600 */

struct span {
	uint64_t start, end;
};

/* ---- free ranges of one block group, in address order -------------------------- */

enum { SRC_EXTENTS, SRC_FST, SRC_V1 };

struct v1_cache;

struct ranges {
	struct check_ctx *c;
	int src, done;
	struct ck_cursor cu;
	uint64_t bg_end, pos;                   /* extents: end of those seen */
	const uint8_t *bits;                    /* the bitmap being read */
	uint64_t bits_start, bits_count, bit;
	struct v1_cache *v1;
	uint64_t ps, pe, cs, ce;                /* next raw range; range being split */
	int pending;
	const struct span *ex;                  /* left out (superblock stripes) */
	int nex;
};

static int bit_set(const uint8_t *bits, uint64_t i)
{
	return bits[i / 8] >> (i % 8) & 1;
}

/* The next run of set bits of the current bitmap (bit i: one sector). */
static int bitmap_run(struct ranges *r, uint64_t *s, uint64_t *e)
{
	uint32_t ss = r->c->fs->sectorsize;

	while (r->bits && r->bit < r->bits_count) {
		uint64_t i = r->bit, j;

		if (!bit_set(r->bits, i)) {
			r->bit++;
			continue;
		}
		for (j = i; j < r->bits_count && bit_set(r->bits, j); j++)
			;
		r->bit = j;
		*s = r->bits_start + i * ss;
		*e = r->bits_start + j * ss;
		return 1;
	}
	r->bits = NULL;
	return 0;
}

static void bitmap_start(struct ranges *r, uint64_t start, const uint8_t *bits, uint64_t count)
{
	r->bits = bits;
	r->bits_start = start;
	r->bits_count = count;
	r->bit = 0;
}

static int fst_raw(struct ranges *r, uint64_t *s, uint64_t *e)
{
	uint32_t ss = r->c->fs->sectorsize;
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;

	while (!bitmap_run(r, s, e)) {
		if (!ck_cursor_next(&r->cu, &key, &data, &size) || key.objectid >= r->bg_end)
			return 0;
		if (key.type == BTRFS_FREE_SPACE_EXTENT_KEY && key.offset) {
			*s = key.objectid;
			*e = key.objectid + key.offset;
			return 1;
		}
		if (key.type == BTRFS_FREE_SPACE_BITMAP_KEY) {
			uint64_t count = key.offset / ss;

			bitmap_start(r, key.objectid, data, count < (uint64_t)size * 8 ? count : (uint64_t)size * 8);
		}
	}
	return 1;
}

/* Gaps between the extent items (a METADATA_ITEM covers one tree block). */
static int ext_raw(struct ranges *r, uint64_t *s, uint64_t *e)
{
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;

	while (ck_cursor_next(&r->cu, &key, &data, &size) && key.objectid < r->bg_end) {
		uint64_t ue;

		if (key.type == BTRFS_EXTENT_ITEM_KEY)
			ue = key.objectid + key.offset;
		else if (key.type == BTRFS_METADATA_ITEM_KEY)
			ue = key.objectid + r->c->fs->nodesize;
		else
			continue;
		if (key.objectid > r->pos) {
			*s = r->pos;
			*e = key.objectid;
			r->pos = ue;
			return 1;
		}
		if (ue > r->pos)
			r->pos = ue;
	}
	if (r->pos >= r->bg_end)
		return 0;
	*s = r->pos;
	*e = r->pos = r->bg_end;
	return 1;
}

#if CFG_CHECK_THOROUGH
static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The ranges of bg that hold superblock copies: each copy's device offset
 * mapped back into the chunk, a whole stripe unit around it (the kernel keeps
 * it out of use), in no particular order. *bytes sums them as the reference
 * counts a block group's bytes_super. */
static struct span *super_spans(struct check_ctx *c, const struct check_bg *bg, int *n,
				uint64_t *bytes)
{
	const struct fs_chunk *ch = fs_chunk_find(c->fs, bg->start);
	uint64_t bg_end = bg->start + bg->len, sl, per_dev, rlen, t;
	uint64_t nst, sub, ndata = 1;
	struct span *s;
	int k = 0;

	*n = 0;
	*bytes = 0;
	if (!ch || ch->logical != bg->start || !ch->num_stripes)
		return NULL;
	s = malloc((3 * (size_t)ch->num_stripes + 1) * sizeof(*s));
	if (!s)
		return NULL;
	if (bg->start < BTRFS_SUPER_OFFSET) {
		s[k++] = (struct span){ bg->start, BTRFS_SUPER_OFFSET };
		*bytes += BTRFS_SUPER_OFFSET - bg->start;
	}
	t = ch->type;
	nst = ch->num_stripes;
	sub = ch->sub_stripes ? ch->sub_stripes : 1;
	sl = ch->stripe_len ? ch->stripe_len : 65536;
	if (t & BTRFS_BLOCK_GROUP_RAID10)
		ndata = nst / sub ? nst / sub : 1;
	else if (t & BTRFS_BLOCK_GROUP_RAID0)
		ndata = nst;
	else if (t & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6))
		ndata = nst > 2 ? nst - ((t & BTRFS_BLOCK_GROUP_RAID5) ? 1 : 2) : 1;
	per_dev = ch->length / ndata;
	rlen = (t & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6)) ? sl * ndata : sl;
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
		uint64_t phys = btrfs_super_offset(m);

		for (uint64_t i = 0; i < nst; i++) {
			uint64_t off = ch->stripes[i].offset, nr, log;
			int dup = 0;

			if (off > phys || off + per_dev <= phys)
				continue;
			nr = (phys - off) / sl;
			if (t & BTRFS_BLOCK_GROUP_RAID10)
				nr = (nr * nst + i) / sub;
			else if (t & BTRFS_BLOCK_GROUP_RAID0)
				nr = nr * nst + i;
			log = bg->start + nr * rlen;
			for (int j = 0; j < k; j++)
				dup |= s[j].start == log;
			if (dup || log >= bg_end)
				continue;
			s[k] = (struct span){ log, log + (rlen < bg_end - log ? rlen : bg_end - log) };
			*bytes += s[k].end - s[k].start;
			k++;
		}
	}
	*n = k;
	return s;
}

struct v1_bitmap {             /* starts like struct span: sorted by span_cmp */
	uint64_t start;
	const uint8_t *bits;
};

/* A loaded v1 cache file: extent entries and bitmaps, each sorted. */
struct v1_cache {
	uint8_t *buf;
	struct span *ext;
	struct v1_bitmap *bm;
	size_t next, nbm;
	size_t iext, ibm;
	uint64_t rs, re;        /* next bitmap run */
	int run;                /* 0 not read, 1 held, 2 no more */
};

static int v1_run(struct ranges *r, uint64_t *s, uint64_t *e)
{
	struct v1_cache *v = r->v1;
	uint32_t ss = r->c->fs->sectorsize;

	while (!bitmap_run(r, s, e)) {
		if (v->ibm == v->nbm)
			return 0;
		bitmap_start(r, v->bm[v->ibm].start, v->bm[v->ibm].bits, (uint64_t)ss * 8);
		v->ibm++;
	}
	return 1;
}

/* Extent entries and bitmap runs merged in address order. */
static int v1_raw(struct ranges *r, uint64_t *s, uint64_t *e)
{
	struct v1_cache *v = r->v1;

	if (!v->run)
		v->run = v1_run(r, &v->rs, &v->re) ? 1 : 2;
	if (v->iext < v->next && (v->run == 2 || v->ext[v->iext].start <= v->rs)) {
		*s = v->ext[v->iext].start;
		*e = v->ext[v->iext++].end;
		return 1;
	}
	if (v->run == 2)
		return 0;
	*s = v->rs;
	*e = v->re;
	v->run = 0;
	return 1;
}

#endif

static int raw_next(struct ranges *r, uint64_t *s, uint64_t *e)
{
	int ret;

	if (r->done)
		return 0;
#if CFG_CHECK_THOROUGH
	if (r->src == SRC_V1)
		ret = v1_raw(r, s, e);
	else
#endif
		ret = r->src == SRC_EXTENTS ? ext_raw(r, s, e) : fst_raw(r, s, e);
	r->done = !ret;
	return ret;
}

/* The next range: adjacent raw ranges joined, the left-out ranges cut out. */
static int ranges_next(struct ranges *r, uint64_t *s, uint64_t *e)
{
	uint64_t ns, ne;

	for (;;) {
		if (r->cs < r->ce) {
			uint64_t cut = r->ce, skip = 0;

			for (int i = 0; CFG_CHECK_THOROUGH && i < r->nex; i++) {
				if (r->ex[i].start <= r->cs && r->ex[i].end > r->cs)
					skip = r->ex[i].end;
				else if (r->ex[i].start > r->cs && r->ex[i].start < cut)
					cut = r->ex[i].start;
			}
			if (skip) {
				r->cs = skip < r->ce ? skip : r->ce;
				continue;
			}
			*s = r->cs;
			*e = r->cs = cut;
			return 1;
		}
		if (!r->pending && !raw_next(r, &r->ps, &r->pe))
			return 0;
		r->pending = 0;
		r->cs = r->ps;
		r->ce = r->pe;
		while (raw_next(r, &ns, &ne)) {
			if (ns != r->ce) {
				r->ps = ns;
				r->pe = ne;
				r->pending = 1;
				break;
			}
			r->ce = ne;
		}
	}
}

static void ranges_init(struct ranges *r, struct check_ctx *c, int src, const struct fs_root *tree,
			const struct check_bg *bg, const struct span *ex, int nex)
{
	struct fs_key from = { bg->start, 0, 0 };

	memset(r, 0, sizeof(*r));
	r->c = c;
	r->src = src;
	r->bg_end = bg->start + bg->len;
	r->pos = bg->start;
	r->ex = ex;
	r->nex = nex;
	if (tree)
		ck_cursor_init(&r->cu, c, tree, &from);
}

/* Every gap between extents must be one free range of the cache, and the
 * cache must have no other: the reference's words for the first difference. */
static void compare_free(struct check_ctx *c, uint64_t tree, const struct check_bg *bg,
			 struct ranges *cr, struct ranges *er)
{
	uint64_t cs = 0, ce = 0, gs, ge;
	static const char *const msgs[] = {     /* the reference's words, arguments in order */
		"there is no free space entry for %llu-%llu", "wanted offset %llu, found %llu",
		"wanted bytes %llu, found %llu for off %llu",
	};
	int have = ranges_next(cr, &cs, &ce), left = 0, kind;
	char why[120] = "";

	while (!*why && ranges_next(er, &gs, &ge)) {
		while (have && ce <= gs) {
			left = 1;
			have = ranges_next(cr, &cs, &ce);
		}
		if (have && cs == gs && ce == ge) {
			have = ranges_next(cr, &cs, &ce);
			continue;
		}
		kind = !have || cs > gs ? 0 : cs != gs ? 1 : 2;
		snprintf(why, sizeof(why), msgs[kind], (unsigned long long)(kind == 2 ? ge - gs : gs),
			 (unsigned long long)(kind == 0 ? ge : kind == 1 ? cs : ce - cs),
			 (unsigned long long)gs);
	}
	if (!*why && (have || left))
		snprintf(why, sizeof(why), "There are still entries left in the space cache");
	if (*why)
		ck_err(c, tree, 0, bg->start, bg->len, "%s; cache appears valid but isn't %llu", why,
		       (unsigned long long)bg->start);
}

/* ---- free space tree (v2) ------------------------------------------------------------ */

/* The FREE_SPACE_INFO being read and what its entries add up to. */
struct fst_info {
	uint64_t start, end;
	uint64_t prev_start, prev_end;  /* last extent entry */
	uint64_t run_end;               /* end of a bitmap run reaching the end of its bitmap */
	uint32_t count, counted, flags;
	int have;
};

static void fst_info_done(struct check_ctx *c, struct fst_info *fi)
{
	if (CFG_CHECK_THOROUGH && fi->have && fi->counted != fi->count)
		ck_err(c, FST, 0, fi->start, fi->end - fi->start,
		       "free space info recorded %u extents, counted %u", fi->count, fi->counted);
	fi->have = 0;
}

/* A FREE_SPACE_INFO must start a block group (one whose length differs is
 * reported with the block group: its own info is not found). */
static void fst_info_item(struct check_ctx *c, struct fst_info *fi, const struct fs_key *key,
			  const uint8_t *data, uint32_t size)
{
	struct btrfs_free_space_info in = { 0 };

	fst_info_done(c, fi);
	memcpy(&in, data, size < sizeof(in) ? size : sizeof(in));
	memset(fi, 0, sizeof(*fi));
	fi->have = 1;
	fi->start = key->objectid;
	fi->end = key->objectid + key->offset;
	fi->count = get_le32(&in.extent_count);
	fi->flags = get_le32(&in.flags);
	if (!ck_bg_find(c, key->objectid)) {
		/* mkfs.btrfs before 6.3 left the info of its temporary chunks,
		 * below the first block group: harmless, so only a warning */
		int stale = c->nbgs && fi->end <= c->bgs[0].start;

		ck_problem(c, stale, FST, 0, fi->start, key->offset,
			   "Space key logical %llu length %llu has no corresponding block group%s",
			   (unsigned long long)fi->start, (unsigned long long)key->offset,
			   stale ? " (left over by an older mkfs.btrfs)" : "");
	}
}

/* Free extents counted over the bitmaps of an info: runs of set bits, a run
 * going on into the next bitmap when it starts where the last one ended. */
static void fst_bitmap_runs(struct check_ctx *c, struct fst_info *fi, const struct fs_key *key,
			    const uint8_t *data, uint32_t size)
{
	uint64_t count = key->offset / c->fs->sectorsize;
	int prev = fi->run_end && fi->run_end == key->objectid;

	if (count > (uint64_t)size * 8)
		count = (uint64_t)size * 8;     /* the rest is missing free space */
	for (uint64_t i = 0; i < count; i++) {
		int bit = bit_set(data, i);

		fi->counted += bit && !prev;
		prev = bit;
	}
	fi->run_end = prev ? key->objectid + key->offset : 0;
}

static void fst_entry(struct check_ctx *c, struct fst_info *fi, const struct fs_key *key,
		      const uint8_t *data, uint32_t size)
{
	int bitmap = fi->flags & BTRFS_FREE_SPACE_USING_BITMAPS;
	uint64_t s = key->objectid, e = s + key->offset;

	if (key->type != (bitmap ? BTRFS_FREE_SPACE_BITMAP_KEY : BTRFS_FREE_SPACE_EXTENT_KEY)) {
		ck_err(c, FST, 0, s, 0, "unexpected key of type %u", key->type);
		return;
	}
	if (s >= fi->end || e > fi->end)
		ck_err(c, FST, 0, s, key->offset,
		       "free space %s %s at %llu, beyond end of block group %llu-%llu",
		       bitmap ? "bitmap" : "extent", s >= fi->end ? "starts" : "ends",
		       (unsigned long long)(s >= fi->end ? s : e), (unsigned long long)fi->start,
		       (unsigned long long)fi->end);
	if (s >= fi->end)
		return;
	if (bitmap) {
		fst_bitmap_runs(c, fi, key, data, size);
		return;
	}
	if (fi->prev_end && s <= fi->prev_end)
		ck_err(c, FST, 0, s, key->offset, "free space extent %llu-%llu %s previous %llu-%llu",
		       (unsigned long long)s, (unsigned long long)e,
		       s < fi->prev_end ? "overlaps with" : "is unmerged with",
		       (unsigned long long)fi->prev_start, (unsigned long long)fi->prev_end);
	fi->prev_start = s;
	fi->prev_end = e;
	fi->counted++;
}

static void check_fst_items(struct check_ctx *c, const struct fs_root *fst)
{
	struct fs_key from = { 0, 0, 0 }, key;
	struct fst_info fi = { 0 };
	struct ck_cursor cu;
	const uint8_t *data;
	uint32_t size;

	ck_cursor_init(&cu, c, fst, &from);
	while (ck_cursor_next(&cu, &key, &data, &size)) {
		if (key.type == BTRFS_FREE_SPACE_INFO_KEY)
			fst_info_item(c, &fi, &key, data, size);
		else if (CFG_CHECK_THOROUGH)
			fst_entry(c, &fi, &key, data, size);
	}
	fst_info_done(c, &fi);
	ck_cursor_release(&cu);
}

static void check_bg_fst(struct check_ctx *c, const struct fs_root *fst, const struct check_bg *bg,
			 const struct span *ex, int nex)
{
	struct fs_key info = { bg->start, BTRFS_FREE_SPACE_INFO_KEY, bg->len };
	struct ranges cr, er;
	struct fs_path p;
	int ret;

	fs_path_init(&p);
	ret = fs_lookup(c->fs, fst, &info, &p);
	fs_path_release(c->fs, &p);
	if (ret < 0) {
		ck_err(c, FST, 0, bg->start, bg->len,
		       "could not load free space tree: block group %llu has no free space info",
		       (unsigned long long)bg->start);
		return;
	}
	ranges_init(&cr, c, SRC_FST, fst, bg, ex, nex);
	ranges_init(&er, c, SRC_EXTENTS, &c->extent_root, bg, ex, nex);
	compare_free(c, FST, bg, &cr, &er);
	ck_cursor_release(&cr.cu);
	ck_cursor_release(&er.cu);
}

#if CFG_CHECK_THOROUGH
/* ---- free space cache (v1) ------------------------------------------------------------- */

static int v1_page_ok(const struct v1_cache *v, uint32_t ss, uint64_t pages, uint64_t pg)
{
	uint32_t skip = pg ? 0 : 4 * (uint32_t)pages;

	return pg < pages && crc32c(v->buf + pg * ss + skip, ss - skip) == get_le32(v->buf + 4 * pg);
}

/* Reads the file's regular extents into v->buf (pages * ss bytes). */
static int v1_read_file(struct check_ctx *c, uint64_t ino, struct v1_cache *v, uint64_t size,
			uint64_t cap)
{
	struct fs_key from = { ino, BTRFS_EXTENT_DATA_KEY, 0 }, key;
	struct fs_file_extent fe;
	struct ck_cursor cu;
	const uint8_t *data;
	uint32_t dsize;
	uint64_t done = 0;
	int ok = 1;

	ck_cursor_init(&cu, c, &c->root_tree, &from);
	while (ok && done < size && ck_cursor_next(&cu, &key, &data, &dsize)) {
		ok = key.objectid == ino && key.type == BTRFS_EXTENT_DATA_KEY &&
		     fs_file_extent(data, dsize, &fe) == 0 && fe.type == BTRFS_FILE_EXTENT_REG &&
		     key.offset <= cap && fe.num_bytes <= cap - key.offset &&
		     (!fe.disk_bytenr || fs_read_logical(c->fs, fe.disk_bytenr + fe.offset,
							 v->buf + key.offset, fe.num_bytes, 0) == 0);
		done += ok ? fe.num_bytes : 0;
	}
	ck_cursor_release(&cu);
	return ok && done >= size;
}

/* Loads bg's cache as the reference does; 1 loaded, 0 absent or not loadable. */
static int v1_load(struct check_ctx *c, const struct check_bg *bg, struct v1_cache *v,
		   uint64_t *free_bytes)
{
	struct fs_key k = { BTRFS_FREE_SPACE_OBJECTID, 0, bg->start }, loc;
	const struct btrfs_free_space_header *h;
	struct btrfs_inode_item ii;
	struct fs_path p;
	uint32_t ss = c->fs->sectorsize, dsize, pos;
	uint64_t gen, entries, nbitmaps, size, pages, pg = 0;

	fs_path_init(&p);
	h = fs_lookup(c->fs, &c->root_tree, &k, &p) ? NULL : (const void *)fs_path_data(&p, &dsize);
	if (h && dsize >= sizeof(*h)) {
		fs_key_from_disk(&loc, &h->location);
		gen = get_le64(&h->generation);
		entries = get_le64(&h->num_entries);
		nbitmaps = get_le64(&h->num_bitmaps);
	} else {
		h = NULL;
	}
	fs_path_release(c->fs, &p);
	if (!h || loc.type != BTRFS_INODE_ITEM_KEY ||
	    fs_inode_get(c->fs, &c->root_tree, loc.objectid, &ii) < 0)
		return 0;
	size = get_le64(&ii.size);
	if (!size || size > V1_MAX_SIZE || get_le64(&ii.generation) != gen || !gen || !entries ||
	    entries > size / sizeof(struct btrfs_free_space_entry) || nbitmaps > size / ss)
		return 0;
	pages = (size + ss - 1) / ss;
	pos = 4 * (uint32_t)pages + 8;
	v->buf = calloc(pages, ss);
	v->ext = malloc(entries * sizeof(*v->ext));
	v->bm = malloc((nbitmaps + 1) * sizeof(*v->bm));
	if (!v->buf || !v->ext || !v->bm || pos > ss ||
	    !v1_read_file(c, loc.objectid, v, size, pages * ss) || !v1_page_ok(v, ss, pages, 0) ||
	    get_le64(v->buf + pos - 8) != gen)
		return 0;
	*free_bytes = 0;
	while (entries--) {
		const struct btrfs_free_space_entry *e;
		uint64_t off, bytes;

		if (ss - pos < sizeof(*e)) {
			if (!v1_page_ok(v, ss, pages, ++pg))
				return 0;
			pos = 0;
		}
		e = (const void *)(v->buf + pg * ss + pos);
		pos += sizeof(*e);
		off = get_le64(&e->offset);
		bytes = get_le64(&e->bytes);
		if (!bytes || off + bytes < off)
			return 0;
		if (e->type == BTRFS_FREE_SPACE_EXTENT) {
			v->ext[v->next++] = (struct span){ off, off + bytes };
			*free_bytes += bytes;
		} else if (v->nbm < nbitmaps) {
			v->bm[v->nbm++].start = off;
		} else {
			return 0;
		}
	}
	/* the bitmaps follow, a page each, in the order of their entries */
	for (size_t i = 0; i < v->nbm; i++) {
		if (!v1_page_ok(v, ss, pages, ++pg))
			return 0;
		v->bm[i].bits = v->buf + pg * ss;
		for (uint32_t b = 0; b < ss; b++)
			*free_bytes += (uint64_t)__builtin_popcount(v->bm[i].bits[b]) * ss;
	}
	sort_stable(v->ext, v->next, sizeof(*v->ext), span_cmp);
	sort_stable(v->bm, v->nbm, sizeof(*v->bm), span_cmp);
	for (size_t i = 1; i < v->next; i++)
		if (v->ext[i].start == v->ext[i - 1].start)
			return 0;       /* duplicate entries: the kernel drops the cache */
	for (size_t i = 1; i < v->nbm; i++)
		if (v->bm[i].start == v->bm[i - 1].start)
			return 0;
	return 1;
}

static void check_bg_v1(struct check_ctx *c, const struct check_bg *bg, const struct span *ex,
			int nex, uint64_t bytes_super)
{
	struct v1_cache v = { 0 };
	struct ranges cr, er;
	uint64_t free_bytes = 0, bg_free = bg->len - bg->used_item - bytes_super;

	if (bg->used_item + bytes_super > bg->len || !v1_load(c, bg, &v, &free_bytes)) {
		/* not loadable: the kernel throws it away */
	} else if (free_bytes != bg_free) {
		ck_problem(c, free_bytes < bg_free, BTRFS_ROOT_TREE_OBJECTID, 0, bg->start, bg->len,
			   "block group %llu has wrong amount of free space, free space cache has %llu block group has %llu%s",
			   (unsigned long long)bg->start, (unsigned long long)free_bytes,
			   (unsigned long long)bg_free,
			   free_bytes < bg_free ? "" : "; free space cache has more free space than block group item, this could leads to serious corruption");
	} else {
		ranges_init(&cr, c, SRC_V1, NULL, bg, NULL, 0);
		cr.v1 = &v;
		ranges_init(&er, c, SRC_EXTENTS, &c->extent_root, bg, ex, nex);
		compare_free(c, BTRFS_ROOT_TREE_OBJECTID, bg, &cr, &er);
		ck_cursor_release(&er.cu);
	}
	free(v.buf);
	free(v.ext);
	free(v.bm);
}

#endif

int check_free_space(struct check_ctx *c)
{
	uint64_t ro = get_le64(&c->fs->sb.compat_ro_flags);
	uint64_t cache_gen = get_le64(&c->fs->sb.cache_generation);
	int fst = (ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE) != 0;
	struct fs_root fst_root;

	if (!c->have_extent_root || (fst && !(ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID)))
		return 0;
	if (fst && fs_root_lookup(c->fs, FST, &fst_root) < 0) {
		ck_err(c, FST, 0, 0, 0, "free space tree enabled but missing");
		return 0;
	}
	if (fst) {
		check_fst_items(c, &fst_root);
	} else if (cache_gen != (uint64_t)-1 && cache_gen && cache_gen != c->super_gen) {
		ck_warn(c, 0, 0, 0, 0,
			"cache and super generation don't match, space cache will be invalidated");
		return 0;
	}
	for (int i = 0; i < c->nbgs; i++) {
		int nex = 0;
		struct span *ex = NULL;

#if CFG_CHECK_THOROUGH
		uint64_t bytes_super = 0;

		ex = super_spans(c, &c->bgs[i], &nex, &bytes_super);
		if (!fst)
			check_bg_v1(c, &c->bgs[i], ex, nex, bytes_super);
#endif
		if (fst)
			check_bg_fst(c, &fst_root, &c->bgs[i], ex, nex);
		free(ex);
		ck_progress(c, (uint64_t)i);
	}
	return 0;
}

/* Free space cache inodes live in the root tree under objectids of fs
 * trees; the reference checks their mode (it checks the fs roots), the kernel's
 * tree checker the rest of an inode's fields too. */
static int cache_inode_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			  uint32_t size, void *arg)
{
	const struct btrfs_inode_item *ii;
	const char *why;

	(void)arg;
	if (key->objectid > BTRFS_LAST_FREE_OBJECTID)
		return 1;
	/* (an inode item of another size is refused as a whole: the extent walk says it) */
	if (key->type != BTRFS_INODE_ITEM_KEY || !ck_is_fstree(key->objectid) || size != sizeof(*ii))
		return 0;
	ii = (const struct btrfs_inode_item *)data;
	why = ck_inode_item_refusal(ii, c->super_gen);
	if (get_le32(&ii->mode) == CACHE_INODE_MODE && !why)
		return 0;
	c->fix_key = *key;
	c->fix_value[0] = CACHE_INODE_MODE;
	if (get_le32(&ii->mode) != CACHE_INODE_MODE)
		ck_err_fix(c, CHECK_FIX_CACHE_MODE, BTRFS_ROOT_TREE_OBJECTID, key->objectid, 0, 0,
			   "free space cache inode %llu has invalid mode: has 0%o expect 0%o",
			   (unsigned long long)key->objectid, get_le32(&ii->mode), CACHE_INODE_MODE);
	else
		ck_err_fix(c, CHECK_FIX_CACHE_MODE, BTRFS_ROOT_TREE_OBJECTID, key->objectid, 0, 0,
			   "free space cache inode %llu: %s", (unsigned long long)key->objectid, why);
	return 0;
}

int check_cache_inodes(struct check_ctx *c)
{
	struct fs_key from = { BTRFS_FS_TREE_OBJECTID, 0, 0 };

	return ck_iterate(c, &c->root_tree, &from, cache_inode_cb, NULL);
}
