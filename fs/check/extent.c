/* Stage 2: every tree block and data extent that some tree references must have
 * an extent item whose backrefs say exactly who references it, and every extent
 * item must be referenced.
 *
 * One walk visits every tree block once (a bitmap over the metadata chunks
 * remembers which). Each edge found (node -> child block, leaf -> data extent)
 * becomes a "wanted" backref record, each extent item and backref in the extent
 * tree a "found" record; both go to one external sorter and are compared per
 * extent in bytenr order. How a reference is recorded depends on the referencing
 * block: when its extent item has FULL_BACKREF, children are referenced by that
 * block's address (shared refs), else by the block's owner tree (keyed refs). */
#include "config.h"
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/vec.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { XR_HEAD = 0, XR_BAD = 1 };      /* XR_BAD: the extent tree's items of it are damaged */
enum { XR_FOUND = 0, XR_WANT = 1 };

struct xref {
	uint64_t bytenr;
	uint64_t a, b, c;       /* root or parent; objectid; offset (data refs); head: generation */
	uint64_t n;             /* head: extent size; ref: count */
	uint64_t refs;          /* found head: refs of the extent item */
	uint64_t flags;         /* head: the extent item's flags (wanted: as the walk expects them) */
	uint8_t type;           /* XR_HEAD or the backref key type */
	uint8_t src;            /* XR_FOUND / XR_WANT */
	uint8_t level;
	uint8_t meta;
	uint8_t owner_gone;     /* wanted head: FULL_BACKREF because its owner lost it */
	uint8_t pad[3];
};

static int xref_cmp(const void *pa, const void *pb)
{
	const struct xref *x = pa, *y = pb;

#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(bytenr);
	CMP(type);
	CMP(a);
	CMP(b);
	CMP(c);
	CMP(src);
#undef CMP
	return 0;
}

struct walk {
	struct check_ctx *c;
	struct xsort *refs;
	uint64_t tree;                  /* objectid of the tree being walked */
	int dropping;                   /* a deleted tree partly dropped */
	uint64_t last_snapshot, otransid;       /* of the tree being walked (its root item's) */
	struct fs_key drop_key;
	int drop_level;
	uint64_t blocks;
	int err;                        /* sorter failure */
};

static void emit(struct walk *w, const struct xref *r)
{
	int ret;

	if (w->err)
		return;
	ret = xsort_add(w->refs, r);
	if (ret < 0)
		w->err = ret;
}

static void emit_ref(struct walk *w, uint64_t bytenr, uint8_t type, uint64_t a, uint64_t b,
		     uint64_t cc, uint64_t n, uint8_t src)
{
	struct xref r = { .bytenr = bytenr, .type = type, .a = a, .b = b, .c = cc, .n = n, .src = src };

	emit(w, &r);
}

/* ---- which blocks were visited ---------------------------------------------- */

static int build_seen(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	uint64_t devs = 0;

	c->seen = calloc(fs->num_chunks ? fs->num_chunks : 1, sizeof(*c->seen));
	if (!c->seen)
		return -ENOMEM;
	/* a chunk length is read from the disk: the bitmap stops at what the devices hold */
	for (int i = 0; i < fs->num_devs; i++)
		devs += fs->devs[i].size;
	for (int i = 0; i < fs->num_chunks; i++) {
		const struct fs_chunk *ch = &fs->chunks[i];
		struct check_seen *s = &c->seen[c->nseen];

		if (!(ch->type & (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM)))
			continue;
		s->nbits = (ch->length < devs ? ch->length : devs) / fs->sectorsize + 1;
		s->bits = calloc(s->nbits / 8 + 1, 1);
		if (!s->bits)
			return -ENOMEM;
		s->start = ch->logical;
		s->len = ch->length;
		c->nseen++;
	}
	return 0;
}

/* 0: first visit (now marked), 1: seen before, -1: not in a metadata chunk. */
static int seen_mark(struct check_ctx *c, uint64_t bytenr)
{
	for (int i = 0; i < c->nseen; i++) {
		struct check_seen *s = &c->seen[i];
		uint64_t bit;

		if (bytenr < s->start || bytenr - s->start >= s->len)
			continue;
		bit = (bytenr - s->start) / c->fs->sectorsize;
		if (bit >= s->nbits)
			return 0;       /* beyond the devices: its read fails */
		if (s->bits[bit / 8] & (1u << (bit % 8)))
			return 1;
		s->bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
		return 0;
	}
	return -1;
}

/* Flags of the extent item of tree block bytenr (0 when there is none). */
/* The flags of tree block bytenr's extent item (0: none), and (owner_ref, when asked)
 * whether one of its backrefs, inline or keyed, is a TREE_BLOCK_REF of tree owner. */
static uint64_t tree_block_flags(struct check_ctx *c, uint64_t bytenr, uint64_t owner, int *owner_ref)
{
	struct fs_key k = { bytenr, 0, 0 }, found;
	struct fs_extent_info ei;
	struct fs_inline_ref ir;
	struct fs_path p;
	const uint8_t *data;
	uint32_t size, pos;
	uint64_t flags = 0;
	int ret;

	if (!c->have_extent_root)
		return 0;
	for (ret = fs_search(c->fs, &c->extent_root, &k, &p); ret == 0; ret = owner_ref ? fs_next(c->fs, &p) : 1) {
		fs_path_key(&p, &found);
		data = fs_path_data(&p, &size);
		if (found.objectid != bytenr || !data)
			break;
		if (owner_ref && found.type == BTRFS_TREE_BLOCK_REF_KEY && found.offset == owner)
			*owner_ref = 1;
		if ((found.type != BTRFS_EXTENT_ITEM_KEY && found.type != BTRFS_METADATA_ITEM_KEY) ||
		    fs_extent_item(data, size, found.type, &ei))
			continue;
		flags = ei.flags;
		for (pos = ei.refs_start; owner_ref && fs_inline_ref_next(data, size, &pos, &ir) == 1;)
			if (ir.type == BTRFS_TREE_BLOCK_REF_KEY && ir.offset == owner)
				*owner_ref = 1;
	}
	fs_path_release(c->fs, &p);
	return flags;
}

/* Whether an extent item's flags are those of a tree block. */
static int tree_block_flags_valid(uint64_t flags)
{
	return (flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) &&
	       !(flags & ~(BTRFS_EXTENT_FLAG_TREE_BLOCK | BTRFS_BLOCK_FLAG_FULL_BACKREF));
}

/* Whether the children of tree block b (reached from the top of tree w->tree; root: it
 * is that top) are referenced by b's address (FULL_BACKREF) rather than by its owner.
 * Blocks of relocation always are. Else the extent item's flag says, except where it
 * cannot be right. A subvolume's block below its top reached first from another tree
 * than the one that made it (the header's owner: trees are walked oldest first, so
 * that one does not reach it), older than the tree reaching it (a snapshot shares
 * what exists when it is made), is when its owner no longer references it (it copied
 * the block away while the snapshot shared it): *owner_gone, and so whatever the
 * flags say. One newer than the tree reaching it has the wrong owner in its header:
 * *owner_gone -1 (unless the flag says FULL_BACKREF: then trusted). A block reached
 * from its owner after that tree's last snapshot was never shared, so never copied
 * away: it is not. */
static int full_backref(struct walk *w, const struct fs_block *b, int root, int *owner_gone)
{
	uint64_t owner = fs_block_owner(b), flags;
	int derived = w->tree >= BTRFS_FIRST_FREE_OBJECTID && !root && owner != w->tree && !w->dropping;
	int owner_ref = 0, valid;

	*owner_gone = 0;
	if (w->tree == BTRFS_TREE_RELOC_OBJECTID || (fs_block_flags(b) & BTRFS_HEADER_FLAG_RELOC))
		return 1;
	flags = tree_block_flags(w->c, b->bytenr, owner, derived ? &owner_ref : NULL);
	valid = tree_block_flags_valid(flags);
	if (derived && !owner_ref && (!w->otransid || fs_block_generation(b) <= w->otransid))
		return *owner_gone = 1;
	if (derived && !owner_ref && !(valid && (flags & BTRFS_BLOCK_FLAG_FULL_BACKREF)))
		*owner_gone = -1;
	return valid && (flags & BTRFS_BLOCK_FLAG_FULL_BACKREF) &&
	       (owner != w->tree || fs_block_generation(b) <= w->last_snapshot);
}

/* ---- the extent tree's side -------------------------------------------------- */

/* Inline refs are sorted by type, ascending, then within a type by offset
 * (data refs: by hash), descending: the kernel inserts before the first smaller. */
static uint64_t inline_ref_seq(const struct fs_inline_ref *r)
{
	if (r->type == BTRFS_EXTENT_DATA_REF_KEY)
		return fs_data_ref_hash(r->root, r->objectid, r->file_offset);
	return r->offset;
}

#define CHECK_ROOT_TOPS (CFG_CHECK_THOROUGH || CFG_CHECK_REPAIR)

/* A tree block whose first backref names a subvolume: the highest of them is its root. */
static void note_root_top(struct check_ctx *c, uint64_t root, uint64_t bytenr, uint64_t gen, int level)
{
	size_t lo = 0, hi = c->ntops;
	struct ck_root_top *t;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->tops[mid].root < root)
			lo = mid + 1;
		else
			hi = mid;
	}
	t = &c->tops[lo];
	if (lo == c->ntops || t->root != root) {
		if (vec_reserve(&c->tops, &c->cap_tops, c->ntops + 1, sizeof(*c->tops)))
			return;
		t = &c->tops[lo];
		memmove(t + 1, t, (c->ntops++ - lo) * sizeof(*t));
		t->root = root;
		t->level = -1;
	}
	if (level > t->level)
		*t = (struct ck_root_top){ root, bytenr, gen, level, 1 };
	else if (level == t->level)
		t->count++;
}

static void found_extent_item(struct walk *w, const struct fs_key *key, const uint8_t *data,
			      uint32_t size)
{
	struct check_ctx *c = w->c;
	struct fs_extent_info ei;
	struct fs_inline_ref ir;
	struct xref h = { .bytenr = key->objectid, .type = XR_HEAD, .src = XR_FOUND };
	uint32_t pos;
	int ret, last_type = -1;
	uint64_t last_seq = 0;

	if (fs_extent_item(data, size, key->type, &ei) < 0) {
		ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, 0,
		       "corrupted or unsupported extent item found, item size=%u expect minimal size=%zu (key [%llu,%u,%llu])",
		       size, sizeof(struct btrfs_extent_item), (unsigned long long)key->objectid,
		       key->type, (unsigned long long)key->offset);
		return;
	}
	h.meta = key->type == BTRFS_METADATA_ITEM_KEY || (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK);
	h.n = key->type == BTRFS_METADATA_ITEM_KEY ? c->fs->nodesize : key->offset;
	if (CFG_CHECK_THOROUGH && key->objectid % c->fs->sectorsize)
		ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
		       "ignoring invalid extent, bytenr %llu is not aligned to %u",
		       (unsigned long long)key->objectid, c->fs->sectorsize);
	if (CFG_CHECK_THOROUGH && (h.meta ? h.n != c->fs->nodesize : h.n % c->fs->sectorsize != 0))
		ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
		       "ignore invalid %s extent, length %llu %s %u", h.meta ? "metadata" : "data",
		       (unsigned long long)h.n, h.meta ? "does not equal to" : "is not aligned to",
		       h.meta ? c->fs->nodesize : c->fs->sectorsize);
	h.refs = ei.refs;
	h.flags = ei.flags;
	h.c = ei.generation;
	if (key->type == BTRFS_METADATA_ITEM_KEY) {
		if (key->offset >= BTRFS_MAX_LEVEL)
			ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
			       "tree block %llu has bad backref level, has %llu expect [0, %d]",
			       (unsigned long long)key->objectid, (unsigned long long)key->offset,
			       BTRFS_MAX_LEVEL - 1);
		h.level = (uint8_t)key->offset;
	} else if (ei.has_tree_info) {
		h.level = (uint8_t)ei.tree_level;
	}
	if (!(ei.flags & (BTRFS_EXTENT_FLAG_DATA | BTRFS_EXTENT_FLAG_TREE_BLOCK)) ||
	    ((ei.flags & BTRFS_EXTENT_FLAG_DATA) && (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK)))
		ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
		       "extent [%llu %llu] has invalid flags 0x%llx", (unsigned long long)key->objectid,
		       (unsigned long long)h.n, (unsigned long long)ei.flags);
	if (ei.generation > c->super_gen + 1)
		ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
		       "invalid generation for extent %llu, have %llu expect (0, %llu]",
		       (unsigned long long)key->objectid, (unsigned long long)ei.generation,
		       (unsigned long long)c->super_gen + 1);
	emit(w, &h);

	pos = ei.refs_start;
	if (CHECK_ROOT_TOPS && (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) &&
	    fs_inline_ref_next(data, size, &pos, &ir) == 1 && ir.type == BTRFS_TREE_BLOCK_REF_KEY &&
	    ir.offset >= BTRFS_FIRST_FREE_OBJECTID && ir.offset != BTRFS_TREE_RELOC_OBJECTID)
		note_root_top(c, ir.offset, key->objectid, ei.generation, h.level);
	pos = ei.refs_start;
	while ((ret = fs_inline_ref_next(data, size, &pos, &ir)) == 1) {
		uint64_t seq;

		if (ir.type == FS_EXTENT_OWNER_REF_KEY)
			continue;       /* simple quota owner, not a reference */
		seq = inline_ref_seq(&ir);
		if ((int)ir.type < last_type || ((int)ir.type == last_type && seq > last_seq))
			ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
			       "inline extent refs out of order: key [%llu,%u,%llu]",
			       (unsigned long long)key->objectid, key->type, (unsigned long long)h.n);
		last_type = ir.type;
		last_seq = seq;
		switch (ir.type) {
		case BTRFS_TREE_BLOCK_REF_KEY:
		case BTRFS_SHARED_BLOCK_REF_KEY:
			emit_ref(w, key->objectid, ir.type, ir.offset, 0, 0, 1, XR_FOUND);
			break;
		case BTRFS_SHARED_DATA_REF_KEY:
			emit_ref(w, key->objectid, ir.type, ir.offset, 0, 0, ir.count, XR_FOUND);
			break;
		case BTRFS_EXTENT_DATA_REF_KEY:
			emit_ref(w, key->objectid, ir.type, ir.root, ir.objectid, ir.file_offset,
				 ir.count, XR_FOUND);
			break;
		}
	}
	if (ret < 0)
		ck_err(c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, h.n,
		       "corrupt extent record: key [%llu,%u,%llu] has a bad inline ref",
		       (unsigned long long)key->objectid, key->type, (unsigned long long)h.n);
}

static void found_keyed_ref(struct walk *w, const struct fs_key *key, const uint8_t *data,
			    uint32_t size)
{
	const struct btrfs_extent_data_ref *dr = (const void *)data;
	const struct btrfs_shared_data_ref *sr = (const void *)data;

	switch (key->type) {
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
		emit_ref(w, key->objectid, key->type, key->offset, 0, 0, 1, XR_FOUND);
		return;
	case BTRFS_EXTENT_DATA_REF_KEY:
		if (size < sizeof(*dr))
			break;
		emit_ref(w, key->objectid, key->type, get_le64(&dr->root), get_le64(&dr->objectid),
			 get_le64(&dr->offset), get_le32(&dr->count), XR_FOUND);
		return;
	case BTRFS_SHARED_DATA_REF_KEY:
		if (size < sizeof(*sr))
			break;
		emit_ref(w, key->objectid, key->type, key->offset, 0, 0, get_le32(&sr->count), XR_FOUND);
		return;
	default:
		return;
	}
	ck_err(w->c, BTRFS_EXTENT_TREE_OBJECTID, 0, key->objectid, 0,
	       "backref item [%llu,%u,%llu] is too short (%u bytes)", (unsigned long long)key->objectid,
	       key->type, (unsigned long long)key->offset, size);
}

/* An item of the extent tree; the repair rewrites an extent whose items are damaged. */
static void found_extent_side(struct walk *w, const struct fs_key *key, const uint8_t *data,
			      uint32_t size)
{
	struct check_ctx *c = w->c;
	uint64_t errors = c->st->errors;

	c->fix_all = CFG_CHECK_REPAIR ? CHECK_FIX_EXTENT : CHECK_FIX_NONE;
	if (key->type == BTRFS_EXTENT_ITEM_KEY || key->type == BTRFS_METADATA_ITEM_KEY)
		found_extent_item(w, key, data, size);
	else
		found_keyed_ref(w, key, data, size);
	c->fix_all = CHECK_FIX_NONE;
	if (CFG_CHECK_REPAIR && c->st->errors != errors)
		emit_ref(w, key->objectid, XR_BAD, 0, 0, 0, 0, XR_FOUND);
}

/* ---- the walk -------------------------------------------------------------------- */

static void count_block(struct check_ctx *c, const struct fs_block *b)
{
	uint64_t owner = fs_block_owner(b);

	c->st->total_tree_bytes += b->size;
	if (ck_is_fstree(owner) || owner == BTRFS_TREE_RELOC_OBJECTID ||
	    owner == BTRFS_DATA_RELOC_TREE_OBJECTID)
		c->st->total_fs_tree_bytes += b->size;
	if (owner == BTRFS_EXTENT_TREE_OBJECTID)
		c->st->total_extent_tree_bytes += b->size;
}

/* Unused bytes of a leaf: between the item array and the item data. */
static uint64_t leaf_free_space(const struct fs_block *b)
{
	uint32_t n = fs_block_nritems(b);
	const struct btrfs_item *items = (const void *)(b->data + sizeof(struct btrfs_header));
	uint64_t data_size = b->size - sizeof(struct btrfs_header), used;

	if (!n)
		return data_size;
	used = (uint64_t)get_le32(&items[0].offset) + get_le32(&items[0].size) -
	       get_le32(&items[n - 1].offset) + (uint64_t)n * sizeof(struct btrfs_item);
	return used > data_size ? 0 : data_size - used;
}

static void leaf_file_extent(struct walk *w, const struct fs_block *b, const struct fs_key *key,
			     const uint8_t *data, uint32_t size, int full_backref)
{
	struct check_ctx *c = w->c;
	struct fs_file_extent fe;
	struct xref h = { .type = XR_HEAD, .src = XR_WANT };

	if (fs_file_extent(data, size, &fe) < 0) {
		ck_err(c, w->tree, key->objectid, b->bytenr, 0,
		       "invalid file extent item size %u in block %llu (root %llu ino %llu offset %llu)",
		       size, (unsigned long long)b->bytenr, (unsigned long long)w->tree,
		       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		/* one of full size still names its extent, as the reference counts it */
		if (size != sizeof(struct btrfs_file_extent_item))
			return;
		fe.type = BTRFS_FILE_EXTENT_REG;
		fe.disk_bytenr = get_le64(data + 21);
		fe.disk_num_bytes = get_le64(data + 29);
		fe.offset = get_le64(data + 37);
		fe.num_bytes = get_le64(data + 45);
	}
	if (fe.type == BTRFS_FILE_EXTENT_INLINE || !fe.disk_bytenr)
		return;
	c->st->data_bytes_allocated += fe.disk_num_bytes;
	c->st->data_bytes_referenced += fe.num_bytes;
	h.bytenr = fe.disk_bytenr;
	h.n = fe.disk_num_bytes;
	emit(w, &h);
	if (full_backref)
		emit_ref(w, fe.disk_bytenr, BTRFS_SHARED_DATA_REF_KEY, b->bytenr, 0, 0, 1, XR_WANT);
	else
		emit_ref(w, fe.disk_bytenr, BTRFS_EXTENT_DATA_REF_KEY, fs_block_owner(b), key->objectid,
			 key->offset - fe.offset, 1, XR_WANT);
}

/* Item data is packed from the end of the leaf down: each item ends where the
 * previous one starts (the kernel refuses leaves with gaps or overlaps). */
void ck_leaf_packing(struct check_ctx *c, uint64_t tree, const struct fs_block *b)
{
	const struct btrfs_item *items = (const void *)(b->data + sizeof(struct btrfs_header));
	uint32_t n = fs_block_nritems(b);
	uint64_t expect = b->size - sizeof(struct btrfs_header);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t end = (uint64_t)get_le32(&items[i].offset) + get_le32(&items[i].size);

		if (end != expect) {
			if (CFG_CHECK_REPAIR && !fs_item_key(b, 0, &c->fix_key))
				c->fix = CHECK_FIX_REPACK;
			ck_err(c, tree, 0, b->bytenr, b->size,
			       "corrupt leaf: root=%llu block=%llu slot=%u, unexpected item end, have %llu expect %llu",
			       (unsigned long long)fs_block_owner(b), (unsigned long long)b->bytenr, i,
			       (unsigned long long)end, (unsigned long long)expect);
			return;
		}
		expect = get_le32(&items[i].offset);
	}
}

/* A root item's two sizes: with the fields from generation_v2 on, or without them (v1). */
static int root_item_sized(uint32_t size)
{
	return size == sizeof(struct btrfs_root_item) || size == offsetof(struct btrfs_root_item, generation_v2);
}

/* What the kernel's tree checker refuses in an item of any type, wherever it is (the
 * sizes of fixed items, where keyed back references point): NULL when nothing. */
static const char *kernel_item_refusal(const struct check_ctx *c, uint64_t tree, const struct fs_key *k,
				       const uint8_t *data, uint32_t size)
{
	uint32_t sectorsize = c->fs->sectorsize;
	struct fs_root_ref rr;
	struct fs_inode_ref ir;
	uint32_t pos = 0;
	int ret;

	switch (k->type) {
	case BTRFS_INODE_ITEM_KEY:
		if (size != sizeof(struct btrfs_inode_item))
			return "invalid inode item size";
		return k->offset || !(ck_valid_ino(k->objectid) || k->objectid == BTRFS_ROOT_TREE_DIR_OBJECTID ||
				      k->objectid == BTRFS_FREE_INO_OBJECTID) ? "invalid inode item key" :
		       /* a free space cache inode's fields: check_cache_inodes' */
		       tree == BTRFS_ROOT_TREE_OBJECTID && ck_is_fstree(k->objectid) ? NULL :
		       ck_inode_item_refusal((const void *)data, c->super_gen);
	case BTRFS_ROOT_ITEM_KEY:
		return root_item_sized(size) ? NULL : "invalid root item size";
	case BTRFS_DEV_ITEM_KEY:
		return size != sizeof(struct btrfs_dev_item) || k->objectid != BTRFS_DEV_ITEMS_OBJECTID ?
		       "invalid device item" : NULL;
	case BTRFS_BLOCK_GROUP_ITEM_KEY:
		return size != sizeof(struct btrfs_block_group_item) || !k->offset ? "invalid block group item" : NULL;
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
	case BTRFS_SHARED_DATA_REF_KEY:
		if (size != (k->type == BTRFS_SHARED_DATA_REF_KEY ? sizeof(struct btrfs_shared_data_ref) : 0))
			return "invalid back reference size";
		return k->objectid % sectorsize || (k->type != BTRFS_TREE_BLOCK_REF_KEY && k->offset % sectorsize) ?
		       "invalid back reference key" : NULL;
	case BTRFS_EXTENT_DATA_REF_KEY:
		return size % sizeof(struct btrfs_extent_data_ref) || k->objectid % sectorsize ?
		       "invalid data back reference" : NULL;
	case BTRFS_ROOT_REF_KEY:
	case BTRFS_ROOT_BACKREF_KEY:
		return fs_root_ref(data, size, &rr) ? "invalid root ref" : NULL;
	case BTRFS_INODE_REF_KEY:       /* names to its end, none cut short */
		while ((ret = fs_inode_ref_next(data, size, &pos, &ir)) == 1)
			;
		return ret ? "invalid inode ref" : NULL;
	}
	return NULL;
}

/* The key types of the root tree's items: root items, refs and backrefs, the directory
 * holding "default", free space cache inodes (their items, headers at type 0), orphans
 * and balance's temporary item. */
static int root_tree_type_known(uint8_t type)
{
	switch (type) {
	case 0: case BTRFS_INODE_ITEM_KEY: case BTRFS_INODE_REF_KEY: case BTRFS_XATTR_ITEM_KEY:
	case BTRFS_ORPHAN_ITEM_KEY: case BTRFS_DIR_ITEM_KEY: case BTRFS_DIR_INDEX_KEY:
	case BTRFS_EXTENT_DATA_KEY: case BTRFS_ROOT_ITEM_KEY: case BTRFS_ROOT_BACKREF_KEY:
	case BTRFS_ROOT_REF_KEY: case BTRFS_TEMPORARY_ITEM_KEY:
		return 1;
	}
	return 0;
}

/* Items of the trees that are not subvolumes' the kernel would refuse: deleted by the
 * repair (what they stood for is made again from the rest, as for a lost item). A
 * subvolume's items have checks of their own. */
static void kernel_item_check(struct walk *w, const struct fs_block *b, uint32_t slot, const struct fs_key *k,
			      const uint8_t *data, uint32_t size)
{
	struct check_ctx *c = w->c;
	const char *why;

	if (w->tree == BTRFS_ROOT_TREE_OBJECTID && !root_tree_type_known(k->type) && root_item_sized(size))
		why = "a root item's size under a key type no root tree item has";
	else if (ck_is_fstree(w->tree) || w->tree == BTRFS_DATA_RELOC_TREE_OBJECTID ||
		 !(why = kernel_item_refusal(c, w->tree, k, data, size)))
		return;
	if (CFG_CHECK_REPAIR)
		c->fix_key = *k;
	/* a root item whose key type was damaged (a root item begins with an inode item):
	 * given back the key of the tree its root block is, else deleted */
	ck_fix(c, w->tree == BTRFS_ROOT_TREE_OBJECTID && root_item_sized(size) ? CHECK_FIX_ROOT_KEY : CHECK_FIX_DELETE);
	ck_err(c, w->tree, 0, b->bytenr, 0,
		   "corrupt leaf: root=%llu block=%llu slot=%u, %s (key %llu %u %llu, size %u)",
		   (unsigned long long)w->tree, (unsigned long long)b->bytenr, slot, why,
		   (unsigned long long)k->objectid, k->type, (unsigned long long)k->offset, size);
}

static void walk_leaf(struct walk *w, const struct fs_block *b, int full_backref)
{
	struct check_ctx *c = w->c;
	uint32_t n = fs_block_nritems(b);

	c->st->btree_space_waste += leaf_free_space(b);
	ck_leaf_packing(c, w->tree, b);
	for (uint32_t i = 0; i < n; i++) {
		struct fs_key key;
		const uint8_t *data;
		uint32_t size;

		fs_item_key(b, i, &key);
		data = fs_item_data(b, i, &size);
		if (!data)
			continue;
		kernel_item_check(w, b, i, &key, data, size);
		switch (key.type) {
		case BTRFS_EXTENT_ITEM_KEY:
		case BTRFS_METADATA_ITEM_KEY:
		case BTRFS_TREE_BLOCK_REF_KEY:
		case BTRFS_SHARED_BLOCK_REF_KEY:
		case BTRFS_EXTENT_DATA_REF_KEY:
		case BTRFS_SHARED_DATA_REF_KEY:
			if (w->tree == BTRFS_EXTENT_TREE_OBJECTID)
				found_extent_side(w, &key, data, size);
			break;
		case BTRFS_EXTENT_CSUM_KEY:
			c->st->total_csum_bytes += size;
			break;
		case BTRFS_EXTENT_DATA_KEY:
			leaf_file_extent(w, b, &key, data, size, full_backref);
			break;
		}
	}
}

static int key_before(const struct fs_key *a, const struct fs_key *b)
{
	return fs_key_cmp(a, b) < 0;
}

/* Where the keys of a block must end: the first key of the block after it (its parent's
 * next pointer, or an ancestor's), at bytenr. */
struct key_bound { struct fs_key key; uint64_t bytenr; };

static void walk_block(struct walk *w, uint64_t bytenr, uint64_t gen, int level,
		       const struct fs_key *first_key, const struct key_bound *limit);

static void walk_node(struct walk *w, const struct fs_block *b, int full_backref, const struct key_bound *limit)
{
	struct check_ctx *c = w->c;
	uint32_t n = fs_block_nritems(b), i = 0;
	int level = fs_block_level(b);

	c->st->btree_space_waste += (uint64_t)((b->size - sizeof(struct btrfs_header)) /
					      sizeof(struct btrfs_key_ptr) - n) *
				    sizeof(struct btrfs_key_ptr);
	/* A tree being dropped: what lies before drop_key at drop_level is gone. */
	if (w->dropping && level > w->drop_level) {
		while (i + 1 < n) {
			struct fs_key next;

			fs_node_key(b, i + 1, &next);
			if (fs_key_cmp(&next, &w->drop_key) > 0)
				break;
			i++;
		}
	}
	for (; i < n; i++) {
		struct fs_key key;
		struct key_bound next;
		uint64_t child = fs_node_blockptr(b, i);

		fs_node_key(b, i, &key);
		if (i + 1 < n) {
			fs_node_key(b, i + 1, &next.key);
			next.bytenr = fs_node_blockptr(b, i + 1);
		}
		if (w->dropping && level == w->drop_level && key_before(&key, &w->drop_key))
			continue;
		if (full_backref)
			emit_ref(w, child, BTRFS_SHARED_BLOCK_REF_KEY, b->bytenr, 0, 0, 1, XR_WANT);
		else
			emit_ref(w, child, BTRFS_TREE_BLOCK_REF_KEY, fs_block_owner(b), 0, 0, 1, XR_WANT);
		walk_block(w, child, fs_node_ptr_generation(b, i), level - 1, &key, i + 1 < n ? &next : limit);
	}
}

/* The last key of b must be below the first key of the block after it, which the
 * parent names: else searches never find the keys past it (a key damaged in place,
 * its checksum made valid). The next block is read to see that it does start there (a
 * parent's damaged key is another problem). A subvolume leaf loses those items
 * (CHECK_FIX_KEY_RANGE, value[] the bound). */
static void check_key_bound(struct walk *w, const struct fs_block *b, const struct fs_key *first_key,
			    const struct key_bound *limit)
{
	struct check_ctx *c = w->c;
	uint32_t n = fs_block_nritems(b);
	struct fs_key last, next_first;
	struct fs_block *next;
	int level = fs_block_level(b);

	if (!limit || !n)
		return;
	level ? fs_node_key(b, n - 1, &last) : fs_item_key(b, n - 1, &last);
	if (fs_key_cmp(&last, &limit->key) < 0 || !(next = fs_block_read(c->fs, limit->bytenr, &FS_EXPECT_NONE)))
		return;
	if (fs_block_nritems(next))
		fs_block_level(next) ? fs_node_key(next, 0, &next_first) : fs_item_key(next, 0, &next_first);
	if (fs_block_nritems(next) && !fs_key_cmp(&next_first, &limit->key)) {
		if (!level && ck_is_fstree(w->tree) && first_key) {
			ck_fix(c, CHECK_FIX_KEY_RANGE);
			if (CFG_CHECK_REPAIR) {
				c->fix_key = *first_key;
				c->fix_value[0] = limit->key.objectid;
				c->fix_value[1] = limit->key.type;
				c->fix_value[2] = limit->key.offset;
			}
		}
		ck_err(c, w->tree, 0, b->bytenr, b->size,
		       "tree block %llu: key (%llu %u %llu) is not below the first key of the next block (%llu %u %llu)",
		       (unsigned long long)b->bytenr, (unsigned long long)last.objectid, last.type,
		       (unsigned long long)last.offset, (unsigned long long)limit->key.objectid, limit->key.type,
		       (unsigned long long)limit->key.offset);
	}
	fs_block_put(c->fs, next);
}

static void walk_block(struct walk *w, uint64_t bytenr, uint64_t gen, int level,
		       const struct fs_key *first_key, const struct key_bound *limit)
{
	struct check_ctx *c = w->c;
	struct fs_block_expect exp = { gen, level, w->tree, first_key };
	struct xref h = { .bytenr = bytenr, .type = XR_HEAD, .src = XR_WANT, .meta = 1 };
	struct fs_block *b;
	int full = 0, s;

	if (bytenr % c->fs->sectorsize) {
		ck_err(c, w->tree, 0, bytenr, 0, "tree block %llu is not aligned to sectorsize %u",
		       (unsigned long long)bytenr, c->fs->sectorsize);
		return;
	}
	s = seen_mark(c, bytenr);
	if (s < 0) {
		ck_err(c, w->tree, 0, bytenr, 0, "tree block %llu is not in a metadata block group",
		       (unsigned long long)bytenr);
		return;
	}
	if (s)
		return;
	h.n = c->fs->nodesize;
	h.level = (uint8_t)(level < 0 ? 0 : level);
	b = fs_block_read(c->fs, bytenr, &exp);
	h.c = b ? fs_block_generation(b) : 0;
	if (b) {
		int owner_gone;

		full = full_backref(w, b, !first_key, &owner_gone);
		h.flags = BTRFS_EXTENT_FLAG_TREE_BLOCK | (full ? BTRFS_BLOCK_FLAG_FULL_BACKREF : 0);
		h.owner_gone = owner_gone > 0;
		if (owner_gone < 0) {
			/* the path to it copied anew: the copy is the tree's own */
			ck_fix(c, CHECK_FIX_RECOW);
			if (CFG_CHECK_REPAIR)
				c->fix_key = *first_key;
			ck_err(c, w->tree, 0, bytenr, b->size, "owner ref check failed [%llu %u]",
			       (unsigned long long)bytenr, b->size);
		}
	}
	emit(w, &h);
	if (!b) {
		struct fs_error e = c->fs->err;

		if (!e.tree)
			e.tree = w->tree;
		if (first_key && !e.has_key)
			fs_err_key(&e, first_key);
		ck_fs_error(c, &e, first_key);
		return;
	}
	ck_progress(c, ++w->blocks);
	count_block(c, b);
	if (fs_block_generation(b) > c->super_gen) {
		ck_fix(c, CHECK_FIX_RECOW);
		if (CFG_CHECK_REPAIR && first_key)
			c->fix_key = *first_key;
		ck_err(c, w->tree, 0, bytenr, b->size,
		       "tree block %llu has generation %llu, newer than the filesystem (%llu)",
		       (unsigned long long)bytenr, (unsigned long long)fs_block_generation(b),
		       (unsigned long long)c->super_gen);
	}
	if (first_key && !fs_block_nritems(b)) {
		/* only a root may be empty: the key pointing here names nothing (dropped) */
		ck_fix(c, CHECK_FIX_UNREADABLE);
		if (CFG_CHECK_REPAIR)
			c->fix_key = *first_key;
		ck_err(c, w->tree, 0, bytenr, b->size,
		       "Wrong key of child node/leaf, wanted: (%llu, %u, %llu), have: (0, 0, 0)",
		       (unsigned long long)first_key->objectid, first_key->type,
		       (unsigned long long)first_key->offset);
	}
	check_key_bound(w, b, first_key, limit);
	if (fs_block_level(b) == 0)
		walk_leaf(w, b, full);
	else
		walk_node(w, b, full, limit);
	fs_block_put(c->fs, b);
}

static void walk_tree(struct walk *w, uint64_t tree, uint64_t bytenr, uint64_t gen, int level)
{
	struct fs_block_expect exp = { gen, level, 0, NULL };
	struct fs_block *b;
	uint64_t rev;

	w->tree = tree;
	/* The root block is referenced by its tree, or by itself for reloc trees
	 * and blocks of the old backref format. */
	b = fs_block_read(w->c->fs, bytenr, &exp);
	rev = b ? fs_block_flags(b) >> BTRFS_BACKREF_REV_SHIFT : BTRFS_MIXED_BACKREF_REV;
	if (b)
		fs_block_put(w->c->fs, b);
	if (tree == BTRFS_TREE_RELOC_OBJECTID || rev < BTRFS_MIXED_BACKREF_REV)
		emit_ref(w, bytenr, BTRFS_SHARED_BLOCK_REF_KEY, bytenr, 0, 0, 1, XR_WANT);
	else
		emit_ref(w, bytenr, BTRFS_TREE_BLOCK_REF_KEY, tree, 0, 0, 1, XR_WANT);
	walk_block(w, bytenr, gen, level, NULL, NULL);
}

struct roots_arg {
	struct walk *w;
	int dropping;           /* this pass walks the trees being dropped */
};

static int walk_root_item(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			  uint32_t size, void *arg)
{
	struct roots_arg *ra = arg;
	struct btrfs_root_item ri;
	int dropping;

	if (key->type != BTRFS_ROOT_ITEM_KEY || fs_root_item(data, size, &ri) < 0)
		return 0;
	dropping = get_le64(&ri.drop_progress.objectid) != 0;
	if (dropping != ra->dropping)
		return 0;
	ra->w->dropping = dropping;
	ra->w->last_snapshot = get_le64(&ri.last_snapshot);
	ra->w->otransid = get_le64(&ri.otransid);
	if (dropping) {
		fs_key_from_disk(&ra->w->drop_key, &ri.drop_progress);
		ra->w->drop_level = ri.drop_level;
	}
	if (ri.level >= BTRFS_MAX_LEVEL)
		return 0;       /* reported with the root items */
	walk_tree(ra->w, key->objectid, get_le64(&ri.bytenr), get_le64(&ri.generation), ri.level);
	(void)c;
	return ra->w->err;
}

/* ---- comparing -------------------------------------------------------------------- */

struct xgroup {
	uint64_t bytenr;
	uint64_t errors;                /* the check's count when the group began */
	int found, want, damaged;
	uint64_t fsize, frefs, fflags, wflags, wsize, fgen, wgen;
	int owner_gone;
	int fmeta, wmeta, flevel, wlevel;
	uint64_t fsum, wsum;
	int bad_refs;
};

static const char *ref_name(uint8_t type)
{
	switch (type) {
	case BTRFS_TREE_BLOCK_REF_KEY: return "tree backref";
	case BTRFS_SHARED_BLOCK_REF_KEY: return "shared tree backref";
	case BTRFS_EXTENT_DATA_REF_KEY: return "data backref";
	default: return "shared data backref";
	}
}

/* Repair: the references of the group, for check_opts.extent. */
static void keep_ref(struct check_ctx *c, const struct xref *r, uint64_t count)
{
	if (!c->o->extent || !count)
		return;
	if (vec_reserve(&c->xrefs, &c->cap_xrefs, c->nxrefs + 1, sizeof(*c->xrefs)) == 0)
		c->xrefs[c->nxrefs++] = (struct check_ref){ r->a, r->b, r->c, count, r->type };
	else
		c->st->errors++;        /* cannot say it: the extent is not repaired */
}

static void compare_ref(struct check_ctx *c, struct xgroup *g, const struct xref *r,
			uint64_t fcount, uint64_t wcount)
{
	uint64_t size = g->found ? g->fsize : g->wsize;

	if (CFG_CHECK_REPAIR)
		keep_ref(c, r, wcount);
	g->fsum += fcount;
	g->wsum += wcount;
	if (fcount == wcount)
		return;
	g->bad_refs = 1;
	if (!g->found || !g->want)
		return;         /* said once for the whole extent */
	if (r->type == BTRFS_EXTENT_DATA_REF_KEY)
		ck_err(c, r->a, r->b, r->bytenr, size,
		       "data extent[%llu, %llu] referencer count mismatch (root %llu owner %llu offset %llu) wanted %llu have %llu",
		       (unsigned long long)r->bytenr, (unsigned long long)size,
		       (unsigned long long)r->a, (unsigned long long)r->b, (unsigned long long)r->c,
		       (unsigned long long)fcount, (unsigned long long)wcount);
	else if (r->type == BTRFS_SHARED_DATA_REF_KEY)
		ck_err(c, 0, 0, r->bytenr, size,
		       "data extent[%llu, %llu] referencer count mismatch (parent %llu) wanted %llu have %llu",
		       (unsigned long long)r->bytenr, (unsigned long long)size, (unsigned long long)r->a,
		       (unsigned long long)fcount, (unsigned long long)wcount);
	else
		ck_err(c, r->type == BTRFS_TREE_BLOCK_REF_KEY ? r->a : 0, 0, r->bytenr, size,
		       "%s %llu %s %llu %s", ref_name(r->type), (unsigned long long)r->bytenr,
		       r->type == BTRFS_TREE_BLOCK_REF_KEY ? "root" : "parent", (unsigned long long)r->a,
		       wcount ? "not found in extent tree" : "not referenced back");
}

/* Scrub reads metadata one 64 KiB stripe at a time (offsets from the block group
 * start): a tree block must not cross a stripe. Blocks not nodesize aligned
 * would cross pages on 64K page systems. */
static void check_tree_block_place(struct check_ctx *c, uint64_t bytenr, uint64_t size, uint64_t bg_start)
{
	uint64_t off = bytenr - bg_start, stripe = 64 * 1024;

	if (bytenr % c->fs->nodesize)
		ck_warn(c, 0, 0, bytenr, size,
			"tree block [%llu, %llu) is not nodesize aligned, may cause problem for 64K page system",
			(unsigned long long)bytenr, (unsigned long long)(bytenr + size));
	if (off / stripe != (off + c->fs->nodesize - 1) / stripe)
		ck_err(c, 0, 0, bytenr, size, "bad metadata [%llu, %llu) crossing stripe boundary",
		       (unsigned long long)bytenr, (unsigned long long)(bytenr + size));
}

static void check_group(struct check_ctx *c, struct xgroup *g, uint64_t *prev_end);

/* Repair: a group with errors goes to check_opts.extent with its references. */
static void finish_group(struct check_ctx *c, struct xgroup *g, uint64_t *prev_end)
{
	struct check_extent x = {
		g->bytenr, g->want ? g->wsize : g->fsize, g->fmeta || g->wmeta ? g->wgen : g->fgen,
		g->wflags ? g->wflags : g->fflags, g->found, g->want ? g->wmeta : g->fmeta, g->want ? g->wlevel : g->flevel,
		c->nxrefs, c->xrefs,
	};

	check_group(c, g, prev_end);
	if (CFG_CHECK_REPAIR && c->o->extent && (g->damaged || c->st->errors != g->errors || c->o->all_extents))
		c->o->extent(c->o->ctx, &x);
	c->nxrefs = 0;
}

static void check_group(struct check_ctx *c, struct xgroup *g, uint64_t *prev_end)
{
	uint64_t size = g->found ? g->fsize : g->wsize;
	struct check_bg *bg;

	if (!g->found && !g->want)
		return;
	c->st->bytes_used += size;
	if (!g->found) {
		ck_err(c, 0, 0, g->bytenr, size, "ref mismatch on [%llu %llu] extent item 0, found %llu",
		       (unsigned long long)g->bytenr, (unsigned long long)size,
		       (unsigned long long)g->wsum);
		ck_err(c, 0, 0, g->bytenr, size, "backpointer mismatch on [%llu %llu]",
		       (unsigned long long)g->bytenr, (unsigned long long)size);
		return;
	}
	if (g->frefs != g->wsum)
		ck_err(c, 0, 0, g->bytenr, size, "ref mismatch on [%llu %llu] extent item %llu, found %llu",
		       (unsigned long long)g->bytenr, (unsigned long long)size,
		       (unsigned long long)g->frefs, (unsigned long long)g->wsum);
	if (g->frefs != g->fsum)
		ck_err(c, 0, 0, g->bytenr, size,
		       "extent [%llu %llu] item says %llu refs but its backrefs count %llu",
		       (unsigned long long)g->bytenr, (unsigned long long)size,
		       (unsigned long long)g->frefs, (unsigned long long)g->fsum);
	if (g->bad_refs)
		ck_err(c, 0, 0, g->bytenr, size, "backpointer mismatch on [%llu %llu]",
		       (unsigned long long)g->bytenr, (unsigned long long)size);
	if (g->want && g->wsize != g->fsize)
		ck_err(c, 0, 0, g->bytenr, size,
		       "extent [%llu %llu] is referenced with size %llu",
		       (unsigned long long)g->bytenr, (unsigned long long)g->fsize,
		       (unsigned long long)g->wsize);
	if (CFG_CHECK_THOROUGH && g->want && g->wmeta && g->fmeta && g->wlevel != g->flevel)
		ck_err(c, 0, 0, g->bytenr, size, "metadata level mismatch on [%llu, %llu]",
		       (unsigned long long)g->bytenr, (unsigned long long)size);
	/* a tree block's extent item is made with it: same transaction */
	if (CFG_CHECK_THOROUGH && g->want && g->wmeta && g->fmeta && g->wgen && g->wgen != g->fgen)
		ck_err(c, 0, 0, g->bytenr, size,
		       "extent[%llu %llu] backref generation mismatch, wanted: %llu, have: %llu",
		       (unsigned long long)g->bytenr, (unsigned long long)size,
		       (unsigned long long)g->wgen, (unsigned long long)g->fgen);
	if (g->want && g->wflags && tree_block_flags_valid(g->fflags) &&
	    (g->wflags ^ g->fflags) & BTRFS_BLOCK_FLAG_FULL_BACKREF) {
		if (g->owner_gone)
			ck_err(c, 0, 0, g->bytenr, size, "owner ref check failed [%llu %llu]",
			       (unsigned long long)g->bytenr, (unsigned long long)size);
		else
			ck_err(c, 0, 0, g->bytenr, size, "bad full backref, on [%llu]",
			       (unsigned long long)g->bytenr);
	}
	if (g->want && g->wmeta != g->fmeta)
		ck_err(c, 0, 0, g->bytenr, size, "extent [%llu %llu] is used as %s but its item says %s",
		       (unsigned long long)g->bytenr, (unsigned long long)size,
		       g->wmeta ? "a tree block" : "data", g->fmeta ? "tree block" : "data");
	if (g->bytenr < *prev_end)
		ck_err(c, 0, 0, g->bytenr, size, "extent [%llu %llu] overlaps an extent ending at %llu",
		       (unsigned long long)g->bytenr, (unsigned long long)size,
		       (unsigned long long)*prev_end);
	if (g->bytenr + size > *prev_end)
		*prev_end = g->bytenr + size;
	bg = ck_bg_find(c, g->bytenr);
	if (!bg) {
		ck_err(c, 0, 0, g->bytenr, size, "extent [%llu %llu] is not inside any block group",
		       (unsigned long long)g->bytenr, (unsigned long long)size);
		return;
	}
	bg->used_found += size;
	if (g->fmeta)
		check_tree_block_place(c, g->bytenr, size, bg->start);
	if (g->fmeta ? !(bg->flags & (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM))
		     : !(bg->flags & BTRFS_BLOCK_GROUP_DATA))
		ck_err(c, 0, 0, g->bytenr, size, "bad extent [%llu, %llu), type mismatch with chunk",
		       (unsigned long long)g->bytenr, (unsigned long long)(g->bytenr + size));
	else if (g->bytenr + size > bg->start + bg->len)
		ck_err(c, 0, 0, g->bytenr, size, "extent [%llu %llu] crosses the end of its block group",
		       (unsigned long long)g->bytenr, (unsigned long long)size);
}

/* Same extent and same backref (found and wanted records of it are compared). */
static int same_ref(const struct xref *x, const struct xref *y)
{
	return x->bytenr == y->bytenr && x->type == y->type && x->a == y->a && x->b == y->b &&
	       x->c == y->c;
}

static int compare_refs(struct check_ctx *c, struct xsort *s)
{
	struct xref r, run;
	struct xgroup g = { 0 };
	uint64_t fcount = 0, wcount = 0, prev_end = 0;
	int have_run = 0, have_group = 0, ret;

	c->fix_all = CFG_CHECK_REPAIR ? CHECK_FIX_EXTENT : CHECK_FIX_NONE;
	while ((ret = xsort_next(s, &r)) == 1) {
		if (have_run && !same_ref(&r, &run)) {
			compare_ref(c, &g, &run, fcount, wcount);
			have_run = 0;
		}
		if (have_group && r.bytenr != g.bytenr) {
			finish_group(c, &g, &prev_end);
			have_group = 0;
		}
		if (!have_group) {
			memset(&g, 0, sizeof(g));
			g.bytenr = r.bytenr;
			g.errors = c->st->errors;
			have_group = 1;
		}
		if (r.type == XR_BAD) {
			g.damaged = 1;
			continue;
		}
		if (r.type == XR_HEAD) {
			if (r.src == XR_FOUND) {
				if (g.found)
					ck_err(c, 0, 0, r.bytenr, r.n, "extent item %llu has multiple extent items",
					       (unsigned long long)r.bytenr);
				g.found = 1;
				g.fsize = r.n;
				g.frefs = r.refs;
				g.fflags = r.flags;
				g.fmeta = r.meta;
				g.flevel = r.level;
				g.fgen = r.c;
			} else {
				g.want = 1;
				if (r.n > g.wsize)
					g.wsize = r.n;
				g.wmeta = r.meta;
				g.wflags = r.flags;
				g.owner_gone = r.owner_gone;
				g.wlevel = r.level;
				g.wgen = r.c;
			}
			continue;
		}
		if (!have_run) {
			run = r;
			fcount = wcount = 0;
			have_run = 1;
		}
		if (r.src == XR_FOUND)
			fcount += r.n;
		else
			wcount += r.n;
	}
	if (have_run)
		compare_ref(c, &g, &run, fcount, wcount);
	if (have_group)
		finish_group(c, &g, &prev_end);
	c->fix_all = CHECK_FIX_NONE;
	return ret;
}

/* Block group items' used bytes, and their sum the superblock's. */
static void check_block_group_usage(struct check_ctx *c)
{
	uint64_t used = 0, super_used = get_le64(&c->fs->sb.bytes_used);

	for (int i = 0; i < c->nbgs; i++) {
		struct check_bg *bg = &c->bgs[i];

		used += bg->used_found;
		if (bg->used_found != bg->used_item)
			ck_err_fix(c, CHECK_FIX_SPACE_USED, 0, 0, bg->start, bg->len,
			       "block group [%llu %llu] used %llu but extent items used %llu",
			       (unsigned long long)bg->start, (unsigned long long)bg->len,
			       (unsigned long long)bg->used_item, (unsigned long long)bg->used_found);
	}
	if (used != super_used)
		ck_err_fix(c, CHECK_FIX_SPACE_USED, 0, 0, 0, 0, "super bytes used %llu mismatches actual used %llu",
		       (unsigned long long)super_used, (unsigned long long)used);
}

/* A subvolume's root item must name the root block its extent items say (kernel 3.17
 * left snapshots naming an older one). */
static int root_top_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		       uint32_t size, void *arg)
{
	struct btrfs_root_item ri;
	struct ck_root_top *t = NULL;

	(void)arg;
	if (key->type != BTRFS_ROOT_ITEM_KEY || key->objectid == BTRFS_TREE_RELOC_OBJECTID ||
	    fs_root_item(data, size, &ri) < 0)
		return 0;
	for (size_t i = 0; i < c->ntops && !t; i++)
		if (c->tops[i].root == key->objectid)
			t = &c->tops[i];
	if (!t || t->count != 1 || t->gen < get_le64(&ri.generation) ||
	    (t->bytenr == get_le64(&ri.bytenr) && t->level == ri.level && t->gen == get_le64(&ri.generation)))
		return 0;
	if (CFG_CHECK_REPAIR) {
		c->fix_key = *key;
		c->fix_value[0] = t->gen;
		c->fix_value[1] = (uint64_t)t->level;
	}
	ck_err_fix(c, CHECK_FIX_ROOT_ITEM, key->objectid, 0, t->bytenr, 0,
		   "root item for root %llu, current bytenr %llu, current gen %llu, current level %u, new bytenr %llu, new gen %llu, new level %u",
		   (unsigned long long)key->objectid, (unsigned long long)get_le64(&ri.bytenr),
		   (unsigned long long)get_le64(&ri.generation), ri.level, (unsigned long long)t->bytenr,
		   (unsigned long long)t->gen, t->level);
	return 0;
}

int check_extents(struct check_ctx *c)
{
	struct walk w = { .c = c };
	struct roots_arg ra = { .w = &w };
	struct fs_key from = { 0, BTRFS_ROOT_ITEM_KEY, 0 };
	struct fs *fs = c->fs;
	int ret;

	ret = build_seen(c);
	if (ret < 0)
		return ret;
	w.refs = ck_sorter(c, sizeof(struct xref), xref_cmp, 16);
	if (!w.refs)
		return -ENOMEM;
	walk_tree(&w, BTRFS_ROOT_TREE_OBJECTID, fs->root_bytenr, fs->root_gen, fs->root_level);
	walk_tree(&w, BTRFS_CHUNK_TREE_OBJECTID, fs->chunk_root_bytenr, fs->chunk_root_gen,
		  fs->chunk_root_level);
	w.dropping = 0;
	ck_iterate(c, &c->root_tree, &from, walk_root_item, &ra);
	ra.dropping = 1;
	ck_iterate(c, &c->root_tree, &from, walk_root_item, &ra);
	ret = w.err;
	if (!ret)
		ret = xsort_finish(w.refs);
	if (!ret)
		ret = compare_refs(c, w.refs);
	xsort_free(w.refs);
	if (ret < 0) {
		fs_err(&fs->err, ret, "cannot sort extent references in %s",
		       c->o->tmpdir ? c->o->tmpdir : "/tmp");
		return ret;
	}
	check_block_group_usage(c);
	if (CHECK_ROOT_TOPS) {
		struct fs_key first = { BTRFS_FIRST_FREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };

		ck_iterate(c, &c->root_tree, &first, root_top_cb, NULL);
	}
	return 0;
}
