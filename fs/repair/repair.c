//build:Oz
/* btrfs check --repair (repair.h): a plan from the check's findings, the changes in
 * one transaction, checks of the changed filesystem, then the commit or nothing.
 *
 * Each problem the check reports says what would fix it (check_problem.fix): copying
 * blocks anew (generation damage), rewriting an extent item from the references the
 * trees make to the extent (check_opts.extent gives them), counting block group and
 * device usage again, making the free space tree anew. A round applies the plan,
 * brings the transaction's bookkeeping up to date and checks again; the next round
 * fixes what that check finds, until nothing more is fixed. */
//config:config CHECK_REPAIR
//config:	bool "btrfsck --repair"
//config:	default y
//config:	depends on APPLET_CHECK
//config:	help
//config:	  btrfs check --repair: fix what the check finds and knows how to
//config:	  fix, in one crash-safe transaction that is written only when a
//config:	  check of its result finds no new error (with an undo file by
//config:	  default).
#include "config.h"
#if CFG_CHECK_REPAIR
#include "internal.h"
#include "fs/write/build.h"
#include "fs/write/write.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 8
#define EXTENT_TREE BTRFS_EXTENT_TREE_OBJECTID

/* Room for need elements in *p: 1, or 0 when out of memory (rp->nomem set). */
static int grow(struct rp *rp, void **p, size_t *cap, size_t need, size_t elem)
{
	if (vec_reserve(p, cap, need, elem)) {
		rp->nomem = 1;
		return 0;
	}
	return 1;
}

void say(struct rp *rp, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !grow(rp, (void **)&rp->said, &rp->cap_said, rp->nsaid + (size_t)n + 1, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(rp->said + rp->nsaid, (size_t)n + 1, fmt, ap);
	va_end(ap);
	rp->nsaid += (size_t)n + 1;
	rp->changes++;
}

/* ---- the check's findings ------------------------------------------------------ */

/* What a problem says, for telling new ones: its place and each of its comma separated
 * words (an inode's line loses some as they are fixed) without the numbers (which say
 * the generation, which the transaction moves on; and the block, which a copy moves,
 * of an inode's item). Calls cb with the hash of each word; 1 when cb said so. */
static uint64_t mix(uint64_t h, const char **s)
{
	for (; **s && !((*s)[0] == ',' && (*s)[1] == ' '); (*s)++)
		if (**s < '0' || **s > '9')
			h = (h ^ (uint8_t)**s) * 0x100000001b3ULL;
	return h;
}

static int signatures(const struct check_problem *p, int (*cb)(struct rp *rp, uint64_t sig), struct rp *rp)
{
	uint64_t v[4] = { p->stage, p->root, p->ino, p->ino ? 0 : p->bytenr }, place = 0xcbf29ce484222325ULL;
	const char *s = p->msg;

	for (size_t i = 0; i < sizeof(v); i++)
		place = (place ^ ((const uint8_t *)v)[i]) * 0x100000001b3ULL;
	place = mix(place, &s);         /* the first word is the place of the others */
	if (cb(rp, place))
		return 1;
	while (*s) {
		s += 2;
		if (cb(rp, mix(place, &s)))
			return 1;
	}
	return 0;
}

static int keep_sig(struct rp *rp, uint64_t sig)
{
	if (grow(rp, (void **)&rp->sigs, &rp->cap_sigs, rp->nsigs + 1, sizeof(sig)))
		rp->sigs[rp->nsigs++] = sig;
	return 0;
}

static int u64_cmp(const void *a, const void *b);

static int unknown_sig(struct rp *rp, uint64_t sig)
{
	return !rp->nsigs || !bsearch(&sig, rp->sigs, rp->nsigs, sizeof(sig), u64_cmp);
}

/* An error the first check did not find. */
static int is_new(struct rp *rp, const struct check_problem *p)
{
	return !p->warning && signatures(p, unknown_sig, rp);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A fix at one place (once). */
static void add_fix(struct rp *rp, const struct check_problem *p)
{
	for (size_t i = 0; i < rp->nfixes; i++)
		if (rp->fixes[i].kind == p->fix && rp->fixes[i].bytenr == p->bytenr && rp->fixes[i].root == p->root &&
		    rp->fixes[i].ino == p->ino && rp->fixes[i].value[0] == p->value[0] &&
		    !fs_key_cmp(&rp->fixes[i].key, &p->key))
			return;
	if (grow(rp, (void **)&rp->fixes, &rp->cap_fixes, rp->nfixes + 1, sizeof(*rp->fixes)))
		rp->fixes[rp->nfixes++] = (struct rp_fix){ p->fix, p->root, p->ino, p->bytenr, p->len,
							   { p->value[0], p->value[1], p->value[2] }, p->key };
}

/* A tree that is made anew from the others when it is damaged: 1 when tree is one. */
static int plan_rebuild(struct rp *rp, uint64_t tree)
{
	switch (tree) {
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID:
		/* its items are made with the extent tree: their usage comes from the extents */
		rp->rebuild |= REBUILD_BLOCK_GROUPS;
		/* fall through */
	case BTRFS_EXTENT_TREE_OBJECTID:
		rp->init_extent = 1;
		return 1;
	case BTRFS_FREE_SPACE_TREE_OBJECTID:
		rp->fst = 1;
		return 1;
	case BTRFS_CSUM_TREE_OBJECTID:
		rp->rebuild |= REBUILD_CSUM;
		return 1;
	case BTRFS_UUID_TREE_OBJECTID:
		rp->rebuild |= REBUILD_UUID;
		return 1;
	case BTRFS_DATA_RELOC_TREE_OBJECTID:
		rp->rebuild |= REBUILD_DATA_RELOC;
		return 1;
	case BTRFS_DEV_TREE_OBJECTID:
		rp->rebuild |= REBUILD_DEV;
		return 1;
	case BTRFS_QUOTA_TREE_OBJECTID:
		/* a block that cannot be read: the counts are made again by a rescan */
		rp->rebuild |= REBUILD_QUOTA;
		return 1;
	case BTRFS_CHUNK_TREE_OBJECTID:
		/* read whole into the chunk map at open: its items are made again from it */
		rp->rebuild |= REBUILD_CHUNK;
		return 1;
	}
	return 0;
}

/* bytenr is the root block of tree (its path needs no key). */
static int is_tree_root(struct fs *fs, uint64_t tree, uint64_t bytenr)
{
	struct fs_root r;

	return bytenr && !fs_root_lookup(fs, tree, &r) && r.bytenr == bytenr;
}

static void plan(struct rp *rp, const struct check_problem *p)
{
	int fst = !!(get_le64(&rp->fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);

	/* a derived tree whose blocks or items are damaged is made anew as a whole (the
	 * uuid and data relocation trees whatever is wrong in them; a block holding an
	 * older one of the tree's own where a write was lost: copied anew, the old content
	 * would be the tree's again) */
	if (!p->warning && (p->fix == CHECK_FIX_NONE || p->fix == CHECK_FIX_REPACK ||
			    p->fix == CHECK_FIX_UNREADABLE || p->root == BTRFS_UUID_TREE_OBJECTID ||
			    p->root == BTRFS_DATA_RELOC_TREE_OBJECTID ||
			    (p->fix == CHECK_FIX_RECOW && p->value[1] < p->value[0])) &&
	    plan_rebuild(rp, p->root)) {
		rp->fixable++;
		return;
	}
	if (p->fix == CHECK_FIX_REMAKE && plan_rebuild(rp, p->value[0])) {
		rp->fixable++;
		return;
	}

	switch (p->fix) {
	case CHECK_FIX_UNREADABLE:
		/* a subvolume's leaf that no copy of is good is dropped; the other trees'
		 * walks are incomplete (another tree's older block where a write was lost:
		 * the state before may be whole) */
		rp->unreadable = 1;
		rp->lost_write |= p->value[1] && p->value[1] < p->value[0];
		rp->newest_lost |= !p->value[1] && p->value[0] == rp->fs->generation;
		/* which trees there are waits for the root tree's leaf (as for root items) */
		rp->root_bad |= p->root == BTRFS_ROOT_TREE_OBJECTID;
		rp->roots |= rp->root_bad;
		if ((!ck_is_fstree(p->root) && p->root != BTRFS_ROOT_TREE_OBJECTID) ||
		    (!p->key.objectid && !is_tree_root(rp->fs, p->root, p->bytenr)))
			return;
		add_fix(rp, p);
		break;
	case CHECK_FIX_ROOT_ITEM:
	case CHECK_FIX_ROOT_KEY:
		rp->roots = 1;
		add_fix(rp, p);
		break;
	case CHECK_FIX_ROOT_LOST: {
		/* the others wait for the tree (its blocks are not unreferenced) */
		struct check_problem q = *p;

		if (find_lost_root(rp->fs, p->key.objectid, &q.bytenr, &q.value[0], &q.value[1]))
			return;
		rp->roots = 1;
		add_fix(rp, &q);
		break;
	}
	case CHECK_FIX_NAME:
		/* names changed change their inodes: those wait for the next round */
		rp->names |= !!(p->value[1] & 0xffff & ~(uint64_t)REF_FILETYPE_UNMATCH);
		add_fix(rp, p);
		break;
	case CHECK_FIX_INODE:
		rp->imode |= !!(p->value[0] & I_INVALID_IMODE);
		add_fix(rp, p);
		break;
	case CHECK_FIX_RECOW:
		rp->recow = 1;
		rp->lost_write |= p->value[1] < p->value[0];
		/* a root tree block read only once copied anew: which trees there are waits */
		rp->root_recow |= p->root == BTRFS_ROOT_TREE_OBJECTID;
		rp->roots |= rp->root_recow;
		add_fix(rp, p);
		break;
	case CHECK_FIX_DEV_EXTENT:
		rp->devices = 1;
		/* fall through */
	case CHECK_FIX_ROOT_FIELDS:
		/* a tree read with the wrong level: the rest waits for it to read right */
		rp->roots |= !!p->value[1];
		/* fall through */
	case CHECK_FIX_REPACK:
		/* what the root tree's items say waits for their leaf laid out right */
		rp->layout |= p->root == BTRFS_ROOT_TREE_OBJECTID;
		/* fall through */
	case CHECK_FIX_BAD_COPY:
	case CHECK_FIX_XATTR_LOCATION:
	case CHECK_FIX_CACHE_MODE:
	case CHECK_FIX_CSUMS:
	case CHECK_FIX_QGROUP:
	case CHECK_FIX_SUBVOL:
		add_fix(rp, p);
		break;
	case CHECK_FIX_KEY_RANGE:
		/* as a leaf laid out anew: the rest waits for a check of it */
		rp->layout = 1;
		add_fix(rp, p);
		break;
	case CHECK_FIX_DELETE:
		rp->names = 1;
		add_fix(rp, p);
		break;
	case CHECK_FIX_SPACE_USED:
		rp->space_used = 1;
		break;
	case CHECK_FIX_REMAKE:          /* a tree plan_rebuild does not make */
		break;
	case CHECK_FIX_DEVICES:
		rp->devices = 1;
		break;
	case CHECK_FIX_EXTENT:  /* check_opts.extent says which */
		break;
	case CHECK_FIX_DEV_TREE:
		plan_rebuild(rp, BTRFS_DEV_TREE_OBJECTID);
		break;
	case CHECK_FIX_CHUNK_TREE:
		plan_rebuild(rp, BTRFS_CHUNK_TREE_OBJECTID);
		break;
	case CHECK_FIX_CHUNKS:
		/* a handle whose chunk map was recovered has every chunk that can be made */
		if (rp->o->rebuild_chunks)
			return;
		rp->chunks = 1;
		break;
	case CHECK_FIX_FILE_EXTENT:
		rp->file_extents = 1;
		add_fix(rp, p);
		break;
	case CHECK_FIX_NONE:
		if (p->stage != CHECK_STAGE_FREE_SPACE || !fst || p->warning)
			return;
		rp->fst = 1;
		break;
	}
	rp->fixable++;
}

static void on_problem(void *ctx, const struct check_problem *p)
{
	struct rp *rp = ctx;

	plan(rp, p);
	if (p->quiet)
		return;
	if (rp->first) {
		if (rp->o->check.problem)
			rp->o->check.problem(rp->o->check.ctx, p);
		if (!p->warning)
			signatures(p, keep_sig, rp);
		return;
	}
	rp->new_errors += is_new(rp, p);
	if (grow(rp, (void **)&rp->left, &rp->cap_left, rp->nleft + 1, sizeof(*p)))
		rp->left[rp->nleft++] = *p;
}

/* A tree block's backrefs name the tree its header names (among others, when it is
 * shared), unless that tree copied it away (FULL_BACKREF): else the header is the
 * damage, and rewriting the item would not help. */
static int owner_named(struct fs *fs, const struct check_extent *x)
{
	struct fs_block *b;
	uint64_t owner;
	int named = 0;

	if (!x->meta || !x->nrefs || (x->flags & BTRFS_BLOCK_FLAG_FULL_BACKREF))
		return 1;
	b = fs_block_read(fs, x->bytenr, &FS_EXPECT_NONE);
	if (!b)
		return 1;
	owner = fs_block_owner(b);
	fs_block_put(fs, b);
	for (uint32_t i = 0; i < x->nrefs; i++)
		named |= x->refs[i].type != BTRFS_TREE_BLOCK_REF_KEY || x->refs[i].a == owner;
	return named;
}

/* What an extent (referenced, or an item of the old extent tree: what an unreadable
 * leaf referenced stays) takes of its chunk: [bytenr, +size) cut at the chunk's end (a
 * damaged size names more); nothing outside the chunks. */
static int reserve_extent(struct fs *fs, const struct check_extent *x)
{
	const struct fs_chunk *c = fs_chunk_find(fs, x->bytenr);
	uint64_t end = c ? c->logical + c->length : 0;

	if (!c)
		return 0;
	return fs_space_reserve(fs, x->bytenr, x->size < end - x->bytenr ? x->size : end - x->bytenr);
}

static void on_extent(void *ctx, const struct check_extent *x)
{
	struct rp *rp = ctx;

	/* the extent tree made anew says nothing of blocks in use until then: those the
	 * trees and the extent tree know of now are never allocated */
	if (rp->init_extent && reserve_extent(rp->fs, x))
		rp->nomem = 1;          /* (data too: mixed block groups hold both) */
	if (!rp->init_extent && !owner_named(rp->fs, x))
		return;
	if (!grow(rp, (void **)&rp->ext, &rp->cap_ext, rp->next + 1, sizeof(*rp->ext)) ||
	    !grow(rp, (void **)&rp->refs, &rp->cap_refs, rp->nrefs + x->nrefs, sizeof(*rp->refs)))
		return;
	rp->ext[rp->next++] = (struct rp_ext){ *x, rp->nrefs, 0 };
	if (x->nrefs)
		memcpy(rp->refs + rp->nrefs, x->refs, x->nrefs * sizeof(*x->refs));
	rp->nrefs += x->nrefs;
	rp->fixable++;
}

static void on_stage(void *ctx, enum check_stage s, int fst)
{
	struct rp *rp = ctx;

	if (rp->first && rp->o->check.stage)
		rp->o->check.stage(rp->o->check.ctx, s, fst);
}

static void on_progress(void *ctx, enum check_stage s, uint64_t done)
{
	struct rp *rp = ctx;

	if (rp->first && rp->o->check.progress)
		rp->o->check.progress(rp->o->check.ctx, s, done);
}

/* Runs the check (in the transaction when one runs), the plan of the next round. */
static int run_check(struct rp *rp, struct check_stats *st)
{
	struct check_opts co = rp->o->check;

	rp->nfixes = rp->next = rp->nrefs = rp->nleft = 0;
	rp->unreadable = rp->roots = rp->layout = rp->names = rp->imode = rp->space_used = rp->devices = rp->fst = 0;
	rp->rebuild = rp->file_extents = rp->recow = rp->chunks = rp->root_bad = rp->root_recow = 0;
	rp->all_collected = rp->init_extent;
	rp->fixable = rp->new_errors = 0;
	co.generation = fs_tx_generation(rp->fs);
	co.all_extents = rp->init_extent;
	co.problem = on_problem;
	co.extent = on_extent;
	co.stage = on_stage;
	co.progress = on_progress;
	co.ctx = rp;
	return check_fs(rp->fs, &co, st);
}

/* ---- extent items ---------------------------------------------------------------- */

static uint64_t ref_seq(const struct check_ref *r)
{
	return r->type == BTRFS_EXTENT_DATA_REF_KEY ? fs_data_ref_hash(r->a, r->b, r->c) : r->a;
}

/* Inline refs: by type, then by offset (data refs: hash) from the largest. */
static int ref_order(const void *pa, const void *pb)
{
	const struct check_ref *x = pa, *y = pb;
	uint64_t sx = ref_seq(x), sy = ref_seq(y);

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return sx == sy ? 0 : sx > sy ? -1 : 1;
}

/* The bytes of ref r as an inline ref (type first) or, from p + 1, a keyed ref's data. */
static uint32_t encode_ref(const struct check_ref *r, uint8_t *p)
{
	p[0] = r->type;
	put_le64(p + 1, r->a);
	if (r->type == BTRFS_EXTENT_DATA_REF_KEY) {
		put_le64(p + 9, r->b);
		put_le64(p + 17, r->c);
		put_le32(p + 25, (uint32_t)r->count);
	} else if (r->type == BTRFS_SHARED_DATA_REF_KEY) {
		put_le32(p + 9, (uint32_t)r->count);
	}
	return fs_inline_ref_size(r->type);
}

/* A backref that does not fit in the extent item: an item of its own. */
static int keyed_ref(struct fs *fs, uint64_t bytenr, const struct check_ref *r)
{
	uint8_t buf[32];
	uint32_t size = encode_ref(r, buf) - 1;
	struct fs_key k = { bytenr, r->type, r->a };
	int ret;

	switch (r->type) {
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
		size = 0;
		break;
	case BTRFS_SHARED_DATA_REF_KEY:   /* the key holds the parent, the item the count */
		memmove(buf + 1, buf + 9, 4);
		size = 4;
		break;
	case BTRFS_EXTENT_DATA_REF_KEY:   /* by hash; a taken hash goes one up */
		k.offset = fs_data_ref_hash(r->a, r->b, r->c);
		while ((ret = fs_item_insert(fs, EXTENT_TREE, &k, buf + 1, size)) == -EEXIST)
			k.offset++;
		return ret;
	}
	return fs_item_insert(fs, EXTENT_TREE, &k, buf + 1, size);
}

/* The first key of tree block bytenr (zero when it cannot be read). */
static struct fs_key block_first_key(struct fs *fs, uint64_t bytenr)
{
	struct fs_key k = { 0, 0, 0 };
	struct fs_block *b = fs_block_read(fs, bytenr, &FS_EXPECT_NONE);

	if (b && fs_block_nritems(b))
		fs_block_level(b) ? fs_node_key(b, 0, &k) : fs_item_key(b, 0, &k);
	fs_block_put(fs, b);
	return k;
}

/* The FULL_BACKREF flag of a tree block whose extent item is gone: a block its owner
 * (the header's) no longer references was copied away by the owner while shared,
 * which set the flag. */
static uint64_t full_backref(struct fs *fs, const struct check_extent *x, const struct check_ref *refs)
{
	struct fs_block *b = fs_block_read(fs, x->bytenr, &FS_EXPECT_NONE);
	uint64_t owner;

	if (!b)
		return 0;
	owner = fs_block_owner(b);
	fs_block_put(fs, b);
	for (uint32_t i = 0; i < x->nrefs; i++)
		if (refs[i].type == BTRFS_TREE_BLOCK_REF_KEY && refs[i].a == owner)
			return 0;
	return BTRFS_BLOCK_FLAG_FULL_BACKREF;
}

static int insert_extent(struct rp *rp, const struct check_extent *x, struct check_ref *refs)
{
	struct fs *fs = rp->fs;
	int skinny = !!(get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);
	uint32_t max = (uint32_t)((fs->nodesize - sizeof(struct btrfs_header)) >> 4) - sizeof(struct btrfs_item);
	uint8_t *item = calloc(1, max + 32);
	struct btrfs_extent_item *ei = (void *)item;
	struct fs_key key = { x->bytenr, BTRFS_EXTENT_ITEM_KEY, x->size };
	uint64_t total = 0, gen = x->generation && x->generation <= fs_tx_generation(fs) ? x->generation :
				 fs_tx_generation(fs);
	uint32_t len = sizeof(*ei), i;
	int ret = 0;

	if (!item)
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	sort_stable(refs, x->nrefs, sizeof(*refs), ref_order);
	if (x->meta && skinny) {
		key = (struct fs_key){ x->bytenr, BTRFS_METADATA_ITEM_KEY, (uint64_t)x->level };
	} else if (x->meta) {
		struct btrfs_tree_block_info *tb = (void *)(item + len);
		struct fs_key first = block_first_key(fs, x->bytenr);

		fs_key_to_disk(&tb->key, &first);
		tb->level = (uint8_t)x->level;
		len += sizeof(*tb);
	}
	for (i = 0; i < x->nrefs && len + fs_inline_ref_size(refs[i].type) <= max; i++)
		len += encode_ref(&refs[i], item + len);
	for (uint32_t j = 0; j < x->nrefs; j++)
		total += refs[j].count;
	put_le64(&ei->refs, total);
	put_le64(&ei->generation, gen);
	put_le64(&ei->flags, !x->meta ? BTRFS_EXTENT_FLAG_DATA : BTRFS_EXTENT_FLAG_TREE_BLOCK |
			     (x->flags ? x->flags & BTRFS_BLOCK_FLAG_FULL_BACKREF : full_backref(fs, x, refs)));
	ret = fs_item_insert(fs, EXTENT_TREE, &key, item, len);
	for (; !ret && i < x->nrefs; i++)
		ret = keyed_ref(fs, x->bytenr, &refs[i]);
	free(item);
	return ret;
}

/* Every item of the extent in the extent tree goes; a new one says who uses it. */
static int rewrite_extent(struct rp *rp, const struct rp_ext *e)
{
	const struct check_extent *x = &e->x;
	struct fs_key from = { x->bytenr, BTRFS_EXTENT_ITEM_KEY, 0 };
	struct fs_key to = { x->bytenr, BTRFS_SHARED_DATA_REF_KEY, UINT64_MAX };
	int ret = fs_items_delete_range(rp->fs, EXTENT_TREE, &from, &to, NULL);

	if (ret)
		return ret;
	if (!x->nrefs) {
		say(rp, "deleted extent record [%llu %llu]: nothing references it",
		    (unsigned long long)x->bytenr, (unsigned long long)x->size);
		return 0;
	}
	ret = insert_extent(rp, x, rp->refs + e->first_ref);
	if (!ret)
		say(rp, "repaired extent references for %llu (%u reference%s)", (unsigned long long)x->bytenr,
		    x->nrefs, x->nrefs > 1 ? "s" : "");
	return ret;
}

/* ---- counters --------------------------------------------------------------------- */

/* The block group item of a chunk that has none (its used counted after). */
static int insert_bg(struct rp *rp, const struct fs_chunk *c, uint64_t used)
{
	struct btrfs_block_group_item bg = { 0 };

	put_le64(&bg.used, used);
	put_le64(&bg.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	put_le64(&bg.flags, c->type);
	say(rp, "added the block group item [%llu %llu] of its chunk", (unsigned long long)c->logical,
	    (unsigned long long)c->length);
	return fs_item_insert(rp->fs, fs_block_group_tree_id(rp->fs),
			      &(struct fs_key){ c->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, c->length }, &bg, sizeof(bg));
}

/* The block group item of chunk c says used, and the chunk's type (none: left as the
 * check reported it). */
static int set_bg_used(struct rp *rp, const struct fs_chunk *c, uint64_t used)
{
	struct fs *fs = rp->fs;
	uint64_t tree = fs_block_group_tree_id(fs);
	struct fs_key k = { c->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, c->length };
	struct btrfs_block_group_item *bg;
	uint32_t size;
	struct fs_root root;
	struct fs_path p;
	int same;

	if (fs_root_lookup(fs, tree, &root) || fs_lookup(fs, &root, &k, &p))
		return 0;       /* add_missing_bgs made the missing ones */
	bg = (void *)fs_path_data(&p, &size);
	same = size < sizeof(*bg) || (get_le64(&bg->used) == used && get_le64(&bg->flags) == c->type &&
				      get_le64(&bg->chunk_objectid) == BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	fs_path_release(fs, &p);
	if (same)
		return 0;
	bg = (void *)fs_item_mut(fs, tree, &k, &size);
	if (!bg)
		return fs->err.code;
	say(rp, "reset block group [%llu %llu] used to %llu, flags to %llu", (unsigned long long)c->logical,
	    (unsigned long long)c->length, (unsigned long long)used, (unsigned long long)c->type);
	put_le64(&bg->used, used);
	put_le64(&bg->flags, c->type);
	put_le64(&bg->chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	return 0;
}

/* used[i]: the bytes of chunk i's extents in the extent tree as the transaction has
 * it now. */
static int count_used(struct fs *fs, uint64_t *used)
{
	struct fs_key k = { 0, 0, 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = fs_root_lookup(fs, EXTENT_TREE, &root);

	memset(used, 0, (size_t)fs->num_chunks * sizeof(*used));
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &root, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		const struct fs_chunk *c;

		fs_path_key(&p, &k);
		c = fs_chunk_find(fs, k.objectid);
		if (c && (k.type == BTRFS_EXTENT_ITEM_KEY || k.type == BTRFS_METADATA_ITEM_KEY))
			used[c - fs->chunks] += k.type == BTRFS_EXTENT_ITEM_KEY ? k.offset : fs->nodesize;
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

/* The block group items of chunks that have none, first, with what the extent tree
 * says they hold (counted into used[] when one is missing): the transaction's own space
 * accounting moves it from there (frees of blocks in them too: a mixed block group's
 * metadata). */
static int add_missing_bgs(struct rp *rp, uint64_t *used)
{
	struct fs *fs = rp->fs;
	int ret = 0, counted = 0;

	for (int i = 0; i < fs->num_chunks && !ret; i++) {
		struct fs_key k = { fs->chunks[i].logical, BTRFS_BLOCK_GROUP_ITEM_KEY, fs->chunks[i].length };
		struct fs_root root;
		struct fs_path p;

		ret = fs_root_lookup(fs, fs_block_group_tree_id(fs), &root);
		if (!ret && (ret = fs_lookup(fs, &root, &k, &p)) == 0)
			fs_path_release(fs, &p);
		if (ret != -ENOENT)
			continue;
		ret = counted++ ? 0 : count_used(fs, used);
		if (!ret)
			ret = insert_bg(rp, &fs->chunks[i], used[i]);
	}
	return ret;
}

/* Block group used and super bytes_used from the extent tree as the transaction has
 * it now: what the transaction changes later moves them from there. */
static int recount_space(struct rp *rp)
{
	struct fs *fs = rp->fs;
	uint64_t *used = calloc((size_t)fs->num_chunks + 1, sizeof(*used)), total = 0;
	int ret = !used ? fs_err(&fs->err, -ENOMEM, "out of memory") : add_missing_bgs(rp, used);

	if (!ret)
		ret = fs_tx_settle(fs);
	if (!ret)
		ret = count_used(fs, used);
	for (int i = 0; !ret && i < fs->num_chunks; i++) {
		ret = set_bg_used(rp, &fs->chunks[i], used[i]);
		total += used[i];
	}
	if (!ret && get_le64(&fs->sb.bytes_used) != total) {
		say(rp, "reset super bytes used to %llu", (unsigned long long)total);
		put_le64(&fs->sb.bytes_used, total);
	}
	free(used);
	return ret;
}

/* Bytes of device extents of devid, and where the last one ends. */
static int dev_extents(struct fs *fs, uint64_t devid, uint64_t *bytes, uint64_t *end)
{
	struct fs_key k = { devid, BTRFS_DEV_EXTENT_KEY, 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_DEV_TREE_OBJECTID, &root);

	*bytes = *end = 0;
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &root, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		const struct btrfs_dev_extent *de;
		const uint8_t *data;
		uint32_t size;

		fs_path_key(&p, &k);
		if (k.objectid != devid || k.type != BTRFS_DEV_EXTENT_KEY)
			break;
		data = fs_path_data(&p, &size);
		de = fs_dev_extent_item(data, size);
		if (!de) {
			ret = fs_err_at(&fs->err, -EUCLEAN, BTRFS_DEV_TREE_OBJECTID, 0, "device extent too short");
			break;
		}
		*bytes += get_le64(&de->length);
		*end = k.offset + get_le64(&de->length);
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

/* A device item as its device extents and the device say: bytes used, total bytes
 * aligned and not beyond the device. Its size, or 0 with fs->err. */
static uint64_t fix_device(struct rp *rp, const struct fs_key *key)
{
	struct fs *fs = rp->fs;
	struct fs_device *dev = fs_device_by_id(fs, key->offset);
	uint64_t ss = fs->sectorsize, used, end, total, want;
	struct btrfs_dev_item *di;
	uint32_t size;

	if (dev_extents(fs, key->offset, &used, &end))
		return 0;
	di = (void *)fs_item_mut(fs, BTRFS_CHUNK_TREE_OBJECTID, key, &size);
	if (!di || size < sizeof(*di)) {
		fs_err(&fs->err, di ? -EUCLEAN : fs->err.code, "device item %llu", (unsigned long long)key->offset);
		return 0;
	}
	total = get_le64(&di->total_bytes);
	want = total / ss * ss;
	if (dev && dev->fd >= 0 && dev->size && want > dev->size / ss * ss && end <= dev->size / ss * ss)
		want = dev->size / ss * ss;
	if (get_le64(&di->bytes_used) != used)
		say(rp, "reset devid %llu bytes_used to %llu", (unsigned long long)key->offset,
		    (unsigned long long)used);
	if (want != total)
		say(rp, "Fixed device size for devid %llu, old size: %llu new size: %llu",
		    (unsigned long long)key->offset, (unsigned long long)total, (unsigned long long)want);
	put_le64(&di->bytes_used, used);
	put_le64(&di->total_bytes, want);
	if (dev) {
		dev->total_bytes = want;
		dev->sb.dev_item = *di;
	}
	return want;
}

/* A device of the filesystem without its device item gets the one its superblock
 * holds (dev_item: the copy each device keeps of its own). */
static int add_device_items(struct rp *rp)
{
	struct fs *fs = rp->fs;
	int ret = 0;

	for (int i = 0; i < fs->num_devs && !ret; i++) {
		const struct fs_device *d = &fs->devs[i];
		struct fs_key k = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid };
		struct fs_root root;
		struct fs_path p;

		if (d->fd < 0 || fs_device_is_seed(fs, d) || (ret = fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &root)))
			continue;
		ret = fs_lookup(fs, &root, &k, &p);
		fs_path_release(fs, &p);
		if (ret != -ENOENT)
			continue;
		say(rp, "added the device item of devid %llu from its superblock", (unsigned long long)d->devid);
		ret = fs_item_insert(fs, BTRFS_CHUNK_TREE_OBJECTID, &k, &d->sb.dev_item, sizeof(d->sb.dev_item));
	}
	return ret == -ENOENT ? 0 : ret;
}

/* Device items, and the superblock's total bytes and number of devices from them. */
static int fix_devices(struct rp *rp)
{
	struct fs *fs = rp->fs;
	struct fs_key k = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0 };
	uint64_t total = 0, n = 0, size;
	struct fs_root root;
	struct fs_path p;
	int ret = add_device_items(rp);

	if (ret)
		return ret;

	for (;;) {
		ret = fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &root);
		if (ret || (ret = fs_search(fs, &root, &k, &p)))
			break;
		fs_path_key(&p, &k);
		fs_path_release(fs, &p);
		if (k.objectid != BTRFS_DEV_ITEMS_OBJECTID || k.type != BTRFS_DEV_ITEM_KEY)
			break;
		if (!(size = fix_device(rp, &k)))
			return fs->err.code ? fs->err.code : -EUCLEAN;
		total += size;
		n++;
		k.offset++;
	}
	if (ret < 0)
		return ret;
	if (!n)         /* never a filesystem without devices */
		return fs_err(&fs->err, -EUCLEAN, "the chunk tree has no device item");
	if (get_le64(&fs->sb.num_devices) != n)
		say(rp, "Successfully reset super num devices to %llu", (unsigned long long)n);
	if (get_le64(&fs->sb.total_bytes) != total)
		say(rp, "Fixed super total bytes, old size: %llu new size: %llu",
		    (unsigned long long)get_le64(&fs->sb.total_bytes), (unsigned long long)total);
	put_le64(&fs->sb.num_devices, n);
	put_le64(&fs->sb.total_bytes, total);
	return 0;
}

/* ---- places -------------------------------------------------------------------------- */

/* A subvolume's root item names the root block its extent items say. */
static int fix_root_item(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint32_t size;
	struct btrfs_root_item *ri = (void *)fs_item_mut(fs, BTRFS_ROOT_TREE_OBJECTID, &f->key, &size);

	if (!ri)
		return fs->err.code;
	if (size < offsetof(struct btrfs_root_item, level) + 1)
		return fs_err_at(&fs->err, -EUCLEAN, f->root, 0, "root item too short");
	say(rp, "fixing root item for root %llu, current bytenr %llu, current gen %llu, current level %u, new bytenr %llu, new gen %llu, new level %u",
	    (unsigned long long)f->root, (unsigned long long)get_le64(&ri->bytenr),
	    (unsigned long long)get_le64(&ri->generation), ri->level, (unsigned long long)f->bytenr,
	    (unsigned long long)f->value[0], (unsigned)f->value[1]);
	put_le64(&ri->bytenr, f->bytenr);
	put_le64(&ri->generation, f->value[0]);
	ri->level = (uint8_t)f->value[1];
	if (size >= offsetof(struct btrfs_root_item, generation_v2) + 8)
		put_le64(&ri->generation_v2, f->value[0]);
	return 0;
}

/* A root item's fields the kernel refuses: flags it does not know cleared; the v2
 * generation, the last snapshot's (never above the root's own: blocks older than it
 * count as shared, the safe side) and the drop level within bounds. */
static int fix_root_fields(struct rp *rp, const struct rp_fix *f)
{
	uint32_t size;
	struct btrfs_root_item *ri = (void *)fs_item_mut(rp->fs, BTRFS_ROOT_TREE_OBJECTID, &f->key, &size);
	uint64_t gen;

	if (!ri)
		return rp->fs->err.code;
	if (size < offsetof(struct btrfs_root_item, generation_v2))
		return fs_err_at(&rp->fs->err, -EUCLEAN, f->root, 0, "root item too short");
	gen = get_le64(&ri->generation);
	put_le64(&ri->flags, get_le64(&ri->flags) & CK_ROOT_FLAGS);
	if (size >= sizeof(*ri) && get_le64(&ri->generation_v2) > gen)
		put_le64(&ri->generation_v2, gen);
	if (get_le64(&ri->last_snapshot) > gen)
		put_le64(&ri->last_snapshot, gen);
	if (f->value[1])        /* the level of its root block (check: root_block_level) */
		ri->level = (uint8_t)f->value[0];
	/* a drop progress at level 0 (the kernel refuses it): no drop under way */
	if (ri->drop_level >= BTRFS_MAX_LEVEL || ri->drop_level == 0) {
		ri->drop_level = 0;
		memset(&ri->drop_progress, 0, sizeof(ri->drop_progress));
	}
	say(rp, "root item of root %llu: level, flags, generations and drop level the kernel accepts",
	    (unsigned long long)f->root);
	return 0;
}

/* The key the root item at key belongs at, from its root block's owner: (owner,
 * ROOT_ITEM, 0), a subvolume's with the key's offset (its snapshot generation). Objectid
 * 0 when the block does not verify or its tree has another root item. */
static struct fs_key root_key_from_block(struct fs *fs, const struct fs_key *key, const struct btrfs_root_item *ri)
{
	struct fs_block *b = fs_block_read(fs, get_le64(&ri->bytenr), &FS_EXPECT_NONE);
	uint64_t owner = b ? fs_block_owner(b) : 0;
	struct fs_key to = { 0, BTRFS_ROOT_ITEM_KEY, 0 };
	struct fs_root r;
	int ret;

	if (b)
		fs_block_put(fs, b);
	if (!ck_is_tree_id(owner) || owner == BTRFS_TREE_RELOC_OBJECTID)
		return to;
	/* the item itself (a global tree's at a wrong offset) is not another */
	ret = fs_root_lookup(fs, owner, &r);
	if (ret != -ENOENT && !(ret == 0 && owner == key->objectid && r.offset == key->offset))
		return to;
	to.objectid = owner;
	/* (the kernel searches a subvolume's at (u64)-1: none may be there) */
	to.offset = ck_is_fstree(owner) && key->offset != UINT64_MAX ? key->offset : 0;
	return to;
}

/* A root item keyed where the kernel finds no tree: given the key of its root block's
 * owner, else deleted. What the tree's blocks are referenced as follows in the next
 * round. */
static int fix_root_key(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	struct btrfs_root_item ri;
	struct fs_key to;
	char type[16] = "ROOT_ITEM";
	uint32_t size;
	const uint8_t *d = fs_item_mut(fs, BTRFS_ROOT_TREE_OBJECTID, &f->key, &size);
	int ret;

	if (!d)
		return fs->err.code;
	memset(&ri, 0, sizeof(ri));
	size = size < sizeof(ri) ? size : (uint32_t)sizeof(ri);
	memcpy(&ri, d, size);
	to = root_key_from_block(fs, &f->key, &ri);
	ret = fs_item_delete(fs, BTRFS_ROOT_TREE_OBJECTID, &f->key);
	if (ret || !to.objectid) {
		say(rp, "Deleting bogus item [%llu,%u,%llu] of root 1", (unsigned long long)f->key.objectid,
		    f->key.type, (unsigned long long)f->key.offset);
		return ret;
	}
	if (f->key.type != BTRFS_ROOT_ITEM_KEY)         /* (its key type damaged) */
		snprintf(type, sizeof(type), "type %u", f->key.type);
	say(rp, "moved the root item at (%llu %s %llu) to (%llu ROOT_ITEM %llu), its root block's tree",
	    (unsigned long long)f->key.objectid, type, (unsigned long long)f->key.offset,
	    (unsigned long long)to.objectid, (unsigned long long)to.offset);
	return fs_item_insert(fs, BTRFS_ROOT_TREE_OBJECTID, &to, &ri, size);
}

/* An inode item keyed with an offset (the kernel wants 0): moved to offset 0; 1 when it
 * cannot be (another size, or the inode has an item there): the caller deletes it. */
static int fix_inode_key(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	struct btrfs_inode_item ii;
	struct fs_key to = { f->key.objectid, BTRFS_INODE_ITEM_KEY, 0 };
	uint32_t size;
	const uint8_t *d = fs_item_mut(fs, f->root, &f->key, &size);
	int ret;

	if (!d)
		return fs->err.code;
	if (size != sizeof(ii))
		return 1;
	memcpy(&ii, d, sizeof(ii));
	ret = fs_item_insert(fs, f->root, &to, &ii, sizeof(ii));
	if (ret)
		return ret == -EEXIST ? 1 : ret;
	say(rp, "moved the inode item of %llu in root %llu to key offset 0", (unsigned long long)to.objectid,
	    (unsigned long long)f->root);
	return fs_item_delete(fs, f->root, &f->key);
}

/* A device extent as long as its chunk's stripe. */
static int fix_dev_extent(struct rp *rp, const struct rp_fix *f)
{
	uint32_t size;
	struct btrfs_dev_extent *de = (void *)fs_item_mut(rp->fs, BTRFS_DEV_TREE_OBJECTID, &f->key, &size);

	if (!de || size < sizeof(*de))
		return de ? fs_err(&rp->fs->err, -EUCLEAN, "device extent too short") : rp->fs->err.code;
	say(rp, "reset device extent [%llu %llu] length to %llu", (unsigned long long)f->key.objectid,
	    (unsigned long long)f->key.offset, (unsigned long long)f->value[0]);
	put_le64(&de->length, f->value[0]);
	return 0;
}

/* The entries of an xattr item with a location (struct btrfs_dir_item's first 17 bytes,
 * all zeros in an xattr's): zeroed. */
static int fix_xattr_location(struct rp *rp, const struct rp_fix *f)
{
	uint32_t size, pos = 0, start = 0;
	uint8_t *d = fs_item_mut(rp->fs, f->root, &f->key, &size);
	struct fs_dir_entry de;

	if (!d)         /* a corrupt one is deleted by then */
		return rp->fs->err.code == -ENOENT ? 0 : rp->fs->err.code;
	for (; fs_dir_entry_next(d, size, &pos, &de) == 1; start = pos)
		memset(d + start, 0, sizeof(struct btrfs_disk_key));
	say(rp, "cleared the location of xattr item [%llu %llu] of root %llu", (unsigned long long)f->key.objectid,
	    (unsigned long long)f->key.offset, (unsigned long long)f->root);
	return 0;
}

/* A qgroup's counts as the check found them (compressed or not: the same). */
static int fix_qgroup(struct rp *rp, const struct rp_fix *f)
{
	uint32_t size;
	struct btrfs_qgroup_info_item *qi = (void *)fs_item_mut(rp->fs, BTRFS_QUOTA_TREE_OBJECTID, &f->key, &size);

	if (!qi || size < sizeof(*qi))
		return qi ? fs_err(&rp->fs->err, -EUCLEAN, "qgroup info item too short") : rp->fs->err.code;
	say(rp, "Repair qgroup %llu/%llu", (unsigned long long)(f->key.offset >> 48),
	    (unsigned long long)(f->key.offset & ((1ULL << 48) - 1)));
	put_le64(&qi->generation, fs_tx_generation(rp->fs));
	put_le64(&qi->rfer, f->value[0]);
	put_le64(&qi->rfer_cmpr, f->value[0]);
	put_le64(&qi->excl, f->value[1]);
	put_le64(&qi->excl_cmpr, f->value[1]);
	return 0;
}

/* No checksums for [start, end), or for what of it no data extent holds (value[0]). */
static int drop_csums(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint64_t at = f->bytenr, end = f->bytenr + f->len;
	struct fs_key k = { at, BTRFS_EXTENT_ITEM_KEY, 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = 0;

	say(rp, "deleted checksums of [%llu %llu)%s", (unsigned long long)at, (unsigned long long)end,
	    f->value[0] ? " but for data extents" : "");
	if (!f->value[0])
		return fs_csum_delete(fs, at, f->len);
	/* the extent that may start before at */
	if ((ret = fs_root_lookup(fs, EXTENT_TREE, &root)))
		return ret;
	k.objectid = 0;
	fs_path_init(&p);
	for (ret = fs_search(fs, &root, &k, &p); ret == 0 && at < end; ret = fs_next(fs, &p)) {
		fs_path_key(&p, &k);
		if (k.type != BTRFS_EXTENT_ITEM_KEY || k.objectid + k.offset <= at)
			continue;
		if (k.objectid >= end)
			break;
		if (k.objectid > at && (ret = fs_csum_delete(fs, at, k.objectid - at)))
			break;
		at = k.objectid + k.offset;
	}
	fs_path_release(fs, &p);
	if (ret >= 0 && at < end)
		ret = fs_csum_delete(fs, at, end - at);
	return ret < 0 ? ret : 0;
}

/* A free space cache inode's mode (the kernel reads its data as a regular file's). */
static int fix_cache_mode(struct rp *rp, const struct rp_fix *f)
{
	uint32_t size;
	struct btrfs_inode_item *ii = (void *)fs_item_mut(rp->fs, f->root, &f->key, &size);

	uint64_t gen = get_le64(&rp->fs->sb.generation);

	if (!ii || size < sizeof(*ii))
		return ii ? 0 : rp->fs->err.code;
	put_le32(&ii->mode, (uint32_t)f->value[0]);
	/* the rest as the kernel wants it (a generation not the cache's: the kernel makes
	 * the cache again) */
	put_le32(&ii->nlink, 1);
	put_le64(&ii->flags, get_le64(&ii->flags) & INODE_FLAGS_KNOWN);
	if (get_le64(&ii->generation) > gen)
		put_le64(&ii->generation, gen);
	if (get_le64(&ii->transid) > gen)
		put_le64(&ii->transid, gen);
	say(rp, "reset the mode of free space cache inode %llu to 0%o (and its fields the kernel refuses)",
	    (unsigned long long)f->key.objectid, (unsigned)f->value[0]);
	return 0;
}

/* A bad copy of a tree block (a lost write on one mirror, a bad checksum) written
 * from a good one, in its place. */
static int fix_bad_copy(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	struct fs_block_expect exp = { f->value[1], -1, 0, NULL };
	struct fs_block *b = fs_block_read(fs, f->bytenr, &exp);
	struct fs_phys ph;
	int ret;

	if (!b)
		return 0;       /* no good copy now: the check says so */
	ret = b->mirror == (int)f->value[0] ? 0 : fs_map(fs, f->bytenr, (int)f->value[0], &ph);
	if (!ret && b->mirror != (int)f->value[0] && ph.dev) {
		ret = fs_write_phys(fs, ph.dev, ph.physical, b->data, b->size);
		if (!ret)
			say(rp, "rewrote copy %d of tree block %llu from copy %d", (int)f->value[0],
			    (unsigned long long)f->bytenr, b->mirror);
	}
	fs_block_put(fs, b);
	return ret;
}

/* The subvolumes whose search for key stops at the block bytenr (its generation is
 * what is wrong): those sharing it with root. */
static int trees_reaching(struct fs *fs, uint64_t root, const struct fs_key *key, uint64_t bytenr,
			  uint64_t **ids, size_t *n)
{
	struct btrfs_root_item ri;
	struct fs_key k = { 0, 0, 0 };
	size_t cap = 0;
	int ret;

	while (!(ret = fs_next_subvol_root(fs, &k, &ri))) {
		struct fs_root t;
		struct fs_path p;
		uint64_t *id;
		int stop = 0;

		if (k.objectid != root && !fs_root_lookup(fs, k.objectid, &t)) {
			fs_path_init(&p);
			stop = fs_search(fs, &t, key, &p) < 0 && fs->err.logical == bytenr;
			fs_path_release(fs, &p);
			fs_err_clear(&fs->err);
		}
		if (stop && !(id = vec_push(ids, n, &cap, sizeof(**ids))))
			return fs_err(&fs->err, -ENOMEM, "out of memory");
		if (stop)
			*id = k.objectid;
		k = (struct fs_key){ k.objectid + 1, 0, 0 };
	}
	return ret < 0 ? ret : 0;
}

/* A block copied anew because its generation was wrong is copied anew in the snapshots
 * that share it too (each tree's path to it goes through it). */
static int recow_in_sharing_trees(struct rp *rp, const struct rp_fix *f)
{
	uint64_t *ids = NULL;
	size_t n = 0;
	int ret = ck_is_fstree(f->root) ? trees_reaching(rp->fs, f->root, &f->key, f->bytenr, &ids, &n) : 0;

	for (size_t i = 0; i < n && !ret; i++)
		ret = fs_tree_recow(rp->fs, ids[i], &f->key);
	free(ids);
	return ret;
}

static int fix_place(struct rp *rp, const struct rp_fix *f)
{
	int ret;

	switch (f->kind) {
	case CHECK_FIX_ROOT_ITEM:
		return fix_root_item(rp, f);
	case CHECK_FIX_DEV_EXTENT:
		return fix_dev_extent(rp, f);
	case CHECK_FIX_CSUMS:
		/* (a nodatasum file's: its flags were what was wrong, fix_file_extent) */
		if (f->ino && f->ino == rp->flags_mended_ino && f->root == rp->flags_mended_root)
			return 0;
		return drop_csums(rp, f);
	case CHECK_FIX_NAME:
		return fix_name(rp, f);
	case CHECK_FIX_QGROUP:
		return fix_qgroup(rp, f);
	case CHECK_FIX_REPACK:
		return fix_leaf(rp, f);
	case CHECK_FIX_KEY_RANGE:
		return fix_key_range(rp, f);
	case CHECK_FIX_SUBVOL:
		return fix_subvol(rp, f);
	case CHECK_FIX_ROOT_LOST:
		return fix_lost_root(rp, f);
	case CHECK_FIX_ROOT_KEY:
		return fix_root_key(rp, f);
	case CHECK_FIX_ROOT_FIELDS:
		return fix_root_fields(rp, f);
	case CHECK_FIX_XATTR_LOCATION:
		return fix_xattr_location(rp, f);
	case CHECK_FIX_BAD_COPY:
		return fix_bad_copy(rp, f);
	case CHECK_FIX_DELETE:
		if (ck_is_fstree(f->root) && !ck_subvol_key_type(f->key.type))
			return fix_unknown_item(rp, f);
		if (f->key.type == BTRFS_INODE_ITEM_KEY && f->key.offset && (ret = fix_inode_key(rp, f)) != 1)
			return ret;
		say(rp, "Deleting bogus item [%llu,%u,%llu] of root %llu", (unsigned long long)f->key.objectid,
		    f->key.type, (unsigned long long)f->key.offset, (unsigned long long)f->root);
		ret = fs_item_delete(rp->fs, f->root, &f->key);
		return ret == -ENOENT ? 0 : ret;
	case CHECK_FIX_UNREADABLE:
		return fix_unreadable(rp, f);
	case CHECK_FIX_CACHE_MODE:
		return fix_cache_mode(rp, f);
	case CHECK_FIX_FILE_EXTENT:
		return fix_file_extent(rp, f);
	case CHECK_FIX_INODE:
		if (rp->names) {        /* names first: what they change changes the inode */
			struct rp_fix g = *f;

			g.value[0] &= I_NO_INODE_ITEM;
			return g.value[0] ? fix_inode(rp, &g) : 0;
		}
		return fix_inode(rp, f);
	default:
		ret = fs_tree_recow(rp->fs, f->root, &f->key);
		if (!ret)
			ret = recow_in_sharing_trees(rp, f);
		if (!ret)
			say(rp, "Recowing metadata block %llu", (unsigned long long)f->bytenr);
		return ret;
	}
}

/* ---- --init-extent-tree ----------------------------------------------------------------- */

/* A tree block of the extent tree alone: the old extent tree's, left behind. */
static int extent_tree_block(const struct check_extent *x, const struct check_ref *refs)
{
	for (uint32_t i = 0; i < x->nrefs; i++)
		if (refs[i].type != BTRFS_TREE_BLOCK_REF_KEY || refs[i].a != EXTENT_TREE)
			return 0;
	return x->meta;
}

/* The extent tree made anew from what the first check's walk found every tree to
 * reference (check_opts.all_extents), with a block group item per chunk (counted after). */
static int init_extent_tree(struct rp *rp)
{
	struct fs *fs = rp->fs;
	uint64_t bg_tree = fs_block_group_tree_id(fs);
	int ret;

	/* a lost root item: the tree is made with a new one */
	ret = fs_root_lookup(fs, EXTENT_TREE, &(struct fs_root){ 0 }) == -ENOENT ? fs_tree_create(fs, EXTENT_TREE) :
									    fs_tree_reset(fs, EXTENT_TREE);
	if (!ret && bg_tree != EXTENT_TREE && rp->rebuild & REBUILD_BLOCK_GROUPS)
		ret = rebuild_block_group_tree(rp);
	for (size_t i = 0; i < rp->next && !ret; i++) {
		struct rp_ext *e = &rp->ext[i];

		if (e->x.nrefs && !extent_tree_block(&e->x, rp->refs + e->first_ref))
			ret = insert_extent(rp, &e->x, rp->refs + e->first_ref);
	}
	for (int i = 0; i < fs->num_chunks && !ret && (bg_tree == EXTENT_TREE || rp->rebuild & REBUILD_BLOCK_GROUPS); i++) {
		const struct fs_chunk *c = &fs->chunks[i];
		struct btrfs_block_group_item bg = { 0 };
		uint64_t used = 0;

		/* what the new items say is used (the transaction moves it on from there) */
		for (size_t j = 0; j < rp->next; j++) {
			struct rp_ext *e = &rp->ext[j];

			if (e->x.nrefs && e->x.bytenr - c->logical < c->length &&
			    !extent_tree_block(&e->x, rp->refs + e->first_ref))
				used += e->x.size;
		}
		put_le64(&bg.used, used);
		put_le64(&bg.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
		put_le64(&bg.flags, fs->chunks[i].type);
		ret = fs_item_insert(fs, bg_tree, &(struct fs_key){ fs->chunks[i].logical, BTRFS_BLOCK_GROUP_ITEM_KEY,
									fs->chunks[i].length }, &bg, sizeof(bg));
	}
	if (!ret && (get_le64(&fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE))
		ret = fs_fst_rebuild(fs);
	if (!ret)
		ret = recount_space(rp);
	if (!ret)
		say(rp, "extent tree made anew from the references of every tree");
	return ret;
}

/* ---- a round ------------------------------------------------------------------------ */

/* Derived trees made anew (the extent tree apart: init_extent_tree). */
static int rebuild(struct rp *rp)
{
	int ret = 0;

	if (rp->rebuild & REBUILD_CHUNK)
		ret = rebuild_chunk_tree(rp);
	if (!ret && rp->rebuild & REBUILD_DEV)
		ret = rebuild_dev_tree(rp);
	if (!ret && rp->rebuild & REBUILD_QUOTA)
		ret = rebuild_quota_tree(rp);
	if (!ret && rp->rebuild & REBUILD_DATA_RELOC)
		ret = rebuild_data_reloc_tree(rp);
	if (!ret && rp->rebuild & REBUILD_UUID)
		ret = rebuild_uuid_tree(rp);
	if (!ret && rp->rebuild & REBUILD_CSUM)
		ret = rebuild_csum_tree(rp, 1);
	return ret;
}

/* Root items, blocks copied anew, names (a subvolume's too: their indexes are taken
 * before lost+found takes the next free one), the rest. */
/* Checksums without an extent go last: an extent item the walk found references of
 * is back by then, and its checksums stay. */
static int fix_order(const struct rp_fix *f)
{
	enum check_fix kind = f->kind;

	/* an item of a key type no subvolume item has may get its type back first */
	if (kind == CHECK_FIX_DELETE && ck_is_fstree(f->root) && !ck_subvol_key_type(f->key.type))
		return -1;
	return kind == CHECK_FIX_REPACK || kind == CHECK_FIX_KEY_RANGE ? -1 :
	       kind == CHECK_FIX_ROOT_ITEM || kind == CHECK_FIX_ROOT_LOST || kind == CHECK_FIX_ROOT_KEY ||
	       kind == CHECK_FIX_ROOT_FIELDS ? 0 :
	       kind == CHECK_FIX_RECOW || kind == CHECK_FIX_UNREADABLE ? 1 :
	       kind == CHECK_FIX_NAME || kind == CHECK_FIX_DELETE || kind == CHECK_FIX_SUBVOL ? 2 :
	       kind == CHECK_FIX_CSUMS ? 4 : 3;
}

static int apply_fixes(struct rp *rp, int order)
{
	int ret = 0;

	for (size_t i = 0; i < rp->nfixes && !ret; i++)
		if (fix_order(&rp->fixes[i]) == order)
			ret = fix_place(rp, &rp->fixes[i]);
	return ret;
}

/* Newer extents first, of one transaction the smaller (one that overwrote part of
 * another is inside its range). */
static int newer_first(const void *a, const void *b)
{
	const struct check_extent *x = &(*(struct rp_ext *const *)a)->x, *y = &(*(struct rp_ext *const *)b)->x;

	if (x->generation != y->generation)
		return x->generation > y->generation ? -1 : 1;
	return (x->size > y->size) - (x->size < y->size);
}

/* Each data extent whose back references name file extents a lost leaf held gets them
 * back (relink_data_extent), one whose file extent's key was damaged has it moved back
 * (move_misplaced_extent); those are not rewritten after. The newer extents first: of
 * a file's range that two name, the one written last holds it (newer_first). */
static int relink_extents(struct rp *rp)
{
	struct rp_ext **order = malloc((rp->next + 1) * sizeof(*order));
	int ret = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < rp->next; i++)
		order[i] = &rp->ext[i];
	sort_stable(order, rp->next, sizeof(*order), newer_first);
	for (size_t i = 0; i < rp->next && ret >= 0; i++) {
		struct check_extent x = order[i]->x;

		x.refs = rp->refs + order[i]->first_ref;        /* (the check's are gone) */
		ret = relink_data_extent(rp, &x);
		if (!ret)
			ret = move_misplaced_extent(rp, &x);
		order[i]->relinked = ret > 0;
	}
	free(order);
	return ret < 0 ? ret : 0;
}

static int apply(struct rp *rp)
{
	struct fs *fs = rp->fs;
	int ret = 0;

	/* root items and blocks first: which trees there are decides the rest; a walk
	 * that could not see everything (a block unreadable, or one read only once
	 * copied anew: its generation wrong), or saw the wrong trees, is not a plan for
	 * the others: the next round's check is */
	/* leaves laid out as btrfs packs them first: their items read right then (those
	 * of the root tree say which trees there are: the rest waits for a check) */
	ret = apply_fixes(rp, -1);
	for (int k = 0; k < 4 && !rp->layout; k++) {
		/* a damaged free space tree (its root item put right by then) is not kept in
		 * step with the fixes: it is made anew from the extent tree as the round
		 * settles (a damaged extent tree is made anew first, with it) */
		if (!ret && k == 1 && rp->fst && !rp->init_extent && !rp->root_recow) {
			ret = fs_fst_rebuild(fs);
			say(rp, "free space tree made anew");
		}
		/* file extents a lost leaf held come back before the inodes are mended */
		if (!ret && k == 2 && !(rp->unreadable || rp->roots || rp->file_extents || rp->recow))
			ret = relink_extents(rp);
		if (!ret && (k < 2 || !(rp->unreadable || rp->roots || rp->recow)))
			ret = apply_fixes(rp, k);
	}
	if (ret || rp->unreadable || rp->roots || rp->layout || rp->recow)
		return ret;
	ret = rebuild(rp);
	/* extent refs follow file extents (those being mended change them) and the walk (one
	 * that could not read blocks copied anew did not see their references) */
	for (size_t i = 0; i < rp->next && !ret && !rp->file_extents && !rp->recow; i++)
		if (!rp->ext[i].relinked)
			ret = rewrite_extent(rp, &rp->ext[i]);
	if (!ret)
		ret = apply_fixes(rp, 4);
	if (!ret && rp->devices)
		ret = fix_devices(rp);
	if (!ret && (rp->space_used || rp->next))
		ret = recount_space(rp);
	return ret;
}

/* The free space tree follows the extents changed by hand; blocks the extent tree
 * did not know are never allocated. */
static int prepare(struct rp *rp)
{
	int fst = !!(get_le64(&rp->fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
	int ret = 0;

	for (size_t i = 0; i < rp->next && !ret; i++) {
		const struct check_extent *x = &rp->ext[i].x;

		rp->fst |= fst && x->found != !!x->nrefs;
		if (!x->found && x->nrefs)
			ret = fs_space_reserve(rp->fs, x->bytenr, x->size);
	}
	return ret;
}

/* ---- a root tree from the backup roots ------------------------------------------------ */

static void walk_error(void *ctx, const struct fs_error *err)
{
	(void)err;
	*(int *)ctx = 1;
}

/* Every block of the handle's root tree reads well (all_trees: of every tree it names). */
static int trees_whole(struct fs *fs, int all_trees)
{
	struct fs_walk_ops ops = { NULL, NULL, walk_error };
	struct fs_key k = { 0, BTRFS_ROOT_ITEM_KEY, 0 };
	struct fs_root r;
	struct fs_path p;
	int bad = 0, ret;

	if (fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &r) || fs_tree_walk(fs, &r, &ops, &bad) || bad)
		return 0;
	fs_path_init(&p);
	for (ret = all_trees ? fs_search(fs, &r, &k, &p) : 1; ret == 0 && !bad; ret = fs_next(fs, &p)) {
		struct fs_root t;

		fs_path_key(&p, &k);
		/* (a deleted subvolume's blocks go as it is dropped) */
		if (k.type == BTRFS_ROOT_ITEM_KEY && !fs_root_lookup(fs, k.objectid, &t) &&
		    (!t.item_size || get_le32(&t.item.refs)))
			bad = fs_tree_walk(fs, &t, &ops, &bad) || bad;
	}
	fs_path_release(fs, &p);
	return !bad && ret >= 0;
}

struct fs *repair_open_backup(const char *const *paths, int n, const struct fs_wopen_opts *opts,
			      int all_trees, uint64_t min_names, uint64_t *generation, struct fs_error *err)
{
	struct fs_wopen_opts o = *opts;
	struct btrfs_super_block sb;
	uint64_t tried = UINT64_MAX;
	int ret = fs_super_read(paths[0], opts->open.super_mirror < 0 ? 0 : opts->open.super_mirror, &sb, err);

	if (ret)
		return NULL;
	fs_err(err, -ENOENT, all_trees ? "no backup root has trees that can be read whole and as many names"
				       : "no backup root has a root tree that can be read");
	for (;;) {
		uint64_t best = 0;
		int slot = -1;
		struct fs *fs;

		for (int i = 0; i < BTRFS_NUM_BACKUP_ROOTS; i++) {
			uint64_t g = get_le64(&sb.super_roots[i].tree_root_gen);

			if (g > best && g < tried && get_le64(&sb.super_roots[i].tree_root))
				best = g, slot = i;
		}
		if (slot < 0)
			return NULL;
		tried = best;
		o.open.backup_root = slot;
		fs = fs_wopen(paths, n, &o, err);
		if (fs && trees_whole(fs, all_trees) && (!min_names || count_names(fs) >= min_names)) {
			*generation = best;
			return fs;
		}
		if (fs)
			fs_wclose(fs);
	}
}

/* Blocks the last transaction wrote are lost (no copy verifies): the state before that
 * transaction may be whole (repair_open_backup), and better than what the repair in place
 * makes (it failed, left errors, or kept fewer names: repair_result.names). */
static int back_before_last(const struct rp *rp, const struct repair_opts *o, int ret)
{
	return rp->newest_lost && !o->adopt_root && !o->in_place && ret != -ENOMEM;
}

int repair_fs(struct fs *fs, const struct repair_opts *o, struct repair_result *r)
{
	struct rp rp = { .fs = fs, .o = o, .first = 1, .init_extent = o->init_extent_tree,
			 .init_csum = o->init_csum_tree };
	uint64_t fixable, changes, in_place_names = 0;
	int ret, round = 0;

	memset(r, 0, sizeof(*r));
	ret = run_check(&rp, &r->first);
	rp.first = 0;
	if (!ret && rp.nomem)
		ret = fs_err(&fs->err, -ENOMEM, "out of memory");
	if (rp.nsigs)
		sort_stable(rp.sigs, rp.nsigs, sizeof(*rp.sigs), u64_cmp);
	r->last = r->first;
	r->need_chunks = rp.chunks;
	if (ret || rp.chunks || (!rp.fixable && !o->init_csum_tree && !o->init_extent_tree && !o->adopt_root &&
		    !o->rebuild_chunks)) {
		r->nothing = !ret && r->first.errors;
		goto out;
	}
	if (rp.lost_write && !o->adopt_root && !o->in_place) {
		/* blocks of a later transaction never reached the disk: the state before it
		 * may be whole (repair_open_backup) */
		r->need_backup = r->lost_writes = 1;
		r->names = count_names(fs);
		goto out;
	}
	ret = fs_tx_begin(fs);
	if (ret && rp.root_bad && !o->adopt_root) {
		/* the root tree leaf lost held what a transaction starts from */
		r->need_backup = 1;
		ret = 0;
		goto out;
	}
	if (!ret && o->adopt_root) {
		/* its root block copied: the commit makes it the filesystem's */
		ret = fs_tree_recow(fs, BTRFS_ROOT_TREE_OBJECTID, &(struct fs_key){ 0, 0, 0 });
		say(&rp, "the root tree of generation %llu is the filesystem's again",
		    (unsigned long long)o->adopt_root);
	}
	if (!ret && o->rebuild_chunks && !(ret = rebuild_chunk_tree(&rp)) && !(ret = fs_tx_settle(fs)))
		ret = run_check(&rp, &r->last);         /* what is left to fix with the new chunk tree */
	fixable = rp.fixable;
	while (!ret && (rp.fixable || rp.init_extent || rp.init_csum) && round++ < MAX_ROUNDS) {
		changes = rp.changes;
		/* the extent tree made anew comes first, from a walk that gave every extent the
		 * trees reference (and saw the right trees): the other fixes would change it */
		if (rp.init_extent && !rp.all_collected)
			ret = run_check(&rp, &r->last);
		/* every extent in use is reserved: the fixes before it allocate around them */
		if (rp.init_extent)
			fs_space_trust_reserved(fs);
		if (!ret && rp.init_extent && !rp.roots) {
			rp.init_extent = 0;
			ret = init_extent_tree(&rp);
			if (!ret)
				ret = rebuild(&rp);
		} else if (!ret && !(ret = prepare(&rp))) {
			ret = apply(&rp);
		}
		if (!ret && rp.root_lost)
			break;          /* nothing settles without the root tree */
		if (!ret && rp.init_csum && !rp.init_extent) {
			rp.init_csum = 0;
			ret = rebuild_csum_tree(&rp, 0);
		}
		if (!ret && !(ret = fs_tx_settle(fs)))
			ret = run_check(&rp, &r->last);
		if (!ret && rp.nomem)
			ret = fs_err(&fs->err, -ENOMEM, "out of memory");
		if (ret || rp.changes == changes)
			break;          /* nothing more it can do */
	}
	if (!ret && rp.root_lost && !o->adopt_root) {
		/* a leaf of the root tree is lost: the newest backup root whose root tree is
		 * whole is the way (repair_open_backup) */
		fs_tx_abort(fs);
		r->need_backup = 1;
		r->last = r->first;
		goto out;
	}
	if (back_before_last(&rp, o, ret)) {
		/* a backup root is taken when it has more names than the repair in place keeps
		 * (done again in place otherwise) */
		if (!ret && !r->last.errors)
			in_place_names = count_names(fs) + 1;
		fs_tx_abort(fs);
		goto out;
	}
	/* written when it is better: fewer errors (or problems it fixes), none new */
	if (!ret && (rp.new_errors || !rp.changes ||
		     (r->last.errors >= r->first.errors && rp.fixable >= fixable && !o->init_csum_tree &&
		      !o->init_extent_tree && !o->adopt_root && !o->rebuild_chunks))) {
		r->refused = !!rp.new_errors;
		fs_tx_abort(fs);
	} else if (!ret) {
		ret = fs_tx_commit(fs);
		r->written = !ret;
	} else {
		fs_tx_abort(fs);
	}
	if (r->written) {
		r->changes = rp.changes;
		for (size_t i = 0; i < rp.nsaid && o->fixed; i += strlen(rp.said + i) + 1)
			o->fixed(o->check.ctx, rp.said + i);
		for (size_t i = 0; i < rp.nleft && o->left; i++)
			o->left(o->check.ctx, &rp.left[i]);
	} else {
		/* what the changes would have broken, said */
		for (size_t i = 0; i < rp.nleft && o->left && r->refused; i++)
			if (is_new(&rp, &rp.left[i]))
				o->left(o->check.ctx, &rp.left[i]);
		r->last = r->first;
	}
out:
	if (!r->written && !r->need_backup && !r->need_chunks && back_before_last(&rp, o, ret)) {
		r->need_backup = r->lost_writes = 1;
		r->nothing = 0;
		r->names = in_place_names ? in_place_names : count_names(fs);
		r->last = r->first;
		ret = 0;
	}
	free(rp.fixes);
	free(rp.ext);
	free(rp.refs);
	free(rp.sigs);
	free(rp.left);
	free(rp.said);
	free(rp.holes);
	return ret;
}
#endif
