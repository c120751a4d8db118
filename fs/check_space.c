/* Stage 3: the free space tree must describe exactly the gaps between the
 * extents of each block group. Both sides are produced as coalesced free
 * ranges in address order and compared pairwise, so nothing is held in memory
 * but the current range of each. */
#include "check_internal.h"
#include "le.h"
#include <string.h>

/* Free ranges of one block group from the free space tree (extents and bitmaps). */
struct fst_gen {
	struct ck_cursor cu;
	uint64_t bg_end;
	const uint8_t *bits;    /* current bitmap item */
	uint64_t bits_start, bits_count, bit;
	int done;
};

static int fst_raw_next(struct check_ctx *c, struct fst_gen *g, uint64_t *s, uint64_t *e)
{
	uint32_t ss = c->fs->sectorsize;
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;

	for (;;) {
		while (g->bits && g->bit < g->bits_count) {
			uint64_t i = g->bit, j;

			if (!(g->bits[i / 8] & (1u << (i % 8)))) {
				g->bit++;
				continue;
			}
			for (j = i; j < g->bits_count && (g->bits[j / 8] & (1u << (j % 8))); j++)
				;
			g->bit = j;
			*s = g->bits_start + i * ss;
			*e = g->bits_start + j * ss;
			return 1;
		}
		g->bits = NULL;
		if (g->done || !ck_cursor_next(&g->cu, &key, &data, &size) || key.objectid >= g->bg_end) {
			g->done = 1;
			return 0;
		}
		if (key.type == BTRFS_FREE_SPACE_EXTENT_KEY) {
			*s = key.objectid;
			*e = key.objectid + key.offset;
			return 1;
		}
		if (key.type == BTRFS_FREE_SPACE_BITMAP_KEY) {
			uint64_t count = key.offset / ss;

			if (count > (uint64_t)size * 8) {
				ck_err(c, BTRFS_FREE_SPACE_TREE_OBJECTID, 0, key.objectid, key.offset,
				       "free space bitmap [%llu %llu] is too short (%u bytes)",
				       (unsigned long long)key.objectid, (unsigned long long)key.offset, size);
				count = (uint64_t)size * 8;
			}
			g->bits = data;
			g->bits_start = key.objectid;
			g->bits_count = count;
			g->bit = 0;
		}
	}
}

/* Free ranges of one block group from the extent tree: the gaps between extents. */
struct ext_gen {
	struct ck_cursor cu;
	uint64_t pos, bg_end;
	int done;
};

static int ext_raw_next(struct check_ctx *c, struct ext_gen *g, uint64_t *s, uint64_t *e)
{
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;

	while (!g->done) {
		uint64_t us, ue;

		if (!ck_cursor_next(&g->cu, &key, &data, &size) || key.objectid >= g->bg_end) {
			g->done = 1;
			break;
		}
		if (key.type == BTRFS_EXTENT_ITEM_KEY)
			ue = key.objectid + key.offset;
		else if (key.type == BTRFS_METADATA_ITEM_KEY)
			ue = key.objectid + c->fs->nodesize;
		else
			continue;
		us = key.objectid;
		if (us > g->pos) {
			*s = g->pos;
			*e = us;
			g->pos = ue;
			return 1;
		}
		if (ue > g->pos)
			g->pos = ue;
	}
	if (g->pos < g->bg_end) {
		*s = g->pos;
		*e = g->bg_end;
		g->pos = g->bg_end;
		return 1;
	}
	return 0;
}

/* Coalescing wrapper: adjacent ranges become one. */
struct coalesce {
	int (*raw)(struct check_ctx *c, void *g, uint64_t *s, uint64_t *e);
	void *g;
	uint64_t ps, pe;
	int pending;
};

static int coalesced_next(struct check_ctx *c, struct coalesce *co, uint64_t *s, uint64_t *e)
{
	uint64_t ns, ne;

	if (!co->pending && !co->raw(c, co->g, &co->ps, &co->pe))
		return 0;
	co->pending = 0;
	*s = co->ps;
	*e = co->pe;
	while (co->raw(c, co->g, &ns, &ne)) {
		if (ns != *e) {
			co->ps = ns;
			co->pe = ne;
			co->pending = 1;
			break;
		}
		*e = ne;
	}
	return 1;
}

static int fst_raw(struct check_ctx *c, void *g, uint64_t *s, uint64_t *e)
{
	return fst_raw_next(c, g, s, e);
}

static int ext_raw(struct check_ctx *c, void *g, uint64_t *s, uint64_t *e)
{
	return ext_raw_next(c, g, s, e);
}

static void check_bg_free_space(struct check_ctx *c, const struct fs_root *fst,
				const struct check_bg *bg)
{
	struct fs_key info = { bg->start, BTRFS_FREE_SPACE_INFO_KEY, bg->len };
	struct fs_key from = { bg->start, 0, 0 };
	struct fst_gen fg;
	struct ext_gen eg;
	struct coalesce fc = { fst_raw, &fg, 0, 0, 0 }, ec = { ext_raw, &eg, 0, 0, 0 };
	struct fs_path p;
	uint64_t fs_, fe, es, ee;
	int fr, er;

	fs_path_init(&p);
	if (fs_lookup(c->fs, fst, &info, &p) < 0) {
		fs_path_release(c->fs, &p);
		ck_err(c, BTRFS_FREE_SPACE_TREE_OBJECTID, 0, bg->start, bg->len,
		       "block group [%llu %llu] has no free space info item",
		       (unsigned long long)bg->start, (unsigned long long)bg->len);
		return;
	}
	fs_path_release(c->fs, &p);
	memset(&fg, 0, sizeof(fg));
	memset(&eg, 0, sizeof(eg));
	ck_cursor_init(&fg.cu, c, fst, &from);
	fg.bg_end = bg->start + bg->len;
	ck_cursor_init(&eg.cu, c, &c->extent_root, &from);
	eg.pos = bg->start;
	eg.bg_end = bg->start + bg->len;
	for (;;) {
		fr = coalesced_next(c, &fc, &fs_, &fe);
		er = coalesced_next(c, &ec, &es, &ee);
		if (!fr && !er)
			break;
		if (fr != er || fs_ != es || fe != ee) {
			ck_err(c, BTRFS_FREE_SPACE_TREE_OBJECTID, 0, bg->start, bg->len,
			       "free space tree of block group [%llu %llu] says %s%llu-%llu free, the extent tree %s%llu-%llu",
			       (unsigned long long)bg->start, (unsigned long long)bg->len,
			       fr ? "" : "nothing after ", (unsigned long long)(fr ? fs_ : 0),
			       (unsigned long long)(fr ? fe : 0), er ? "" : "nothing after ",
			       (unsigned long long)(er ? es : 0), (unsigned long long)(er ? ee : 0));
			break;
		}
	}
	ck_cursor_release(&fg.cu);
	ck_cursor_release(&eg.cu);
}

int check_free_space(struct check_ctx *c)
{
	uint64_t ro = get_le64(&c->fs->sb.compat_ro_flags);
	struct fs_root fst;

	if (!(ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE) ||
	    !(ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID) || !c->have_extent_root)
		return 0;       /* the v1 cache is only a cache: the kernel rebuilds it */
	if (fs_root_lookup(c->fs, BTRFS_FREE_SPACE_TREE_OBJECTID, &fst) < 0) {
		ck_err(c, BTRFS_FREE_SPACE_TREE_OBJECTID, 0, 0, 0, "free space tree enabled but missing");
		return 0;
	}
	for (int i = 0; i < c->nbgs; i++) {
		check_bg_free_space(c, &fst, &c->bgs[i]);
		ck_progress(c, (uint64_t)i);
	}
	return 0;
}
