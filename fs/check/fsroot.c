/* Stage 4: the fs trees (top level, subvolumes, snapshots, data reloc tree)
 * and the items of the log trees.
 *
 * Items of an fs tree come sorted by inode number, so everything about one
 * inode (its item, refs, directory entries, file extents) is checked while
 * streaming. What crosses inodes (a directory entry names another inode, an
 * inode ref names its directory) becomes link records sorted by the linked
 * inode, then merged: each name needs its dir item, dir index and inode ref
 * with the same index and file type, the inode must exist, and its nlink must
 * count its names. Problems are worded and numbered like the reference's
 * ("root 5 inode 258 errors 2000, link count wrong" and "unresolved ref"
 * lines), with the reference's error bits. */
#include "config.h"
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/vec.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* LR_DIR_PAIR: a DIR_INDEX and the DIR_ITEM of the same name and child, one record */
enum { LR_INODE, LR_ORPHAN, LR_REF, LR_DIR_ITEM, LR_DIR_INDEX, LR_DIR_PAIR };
#define LR_NAME_KEEP 7    /* name prefix kept for messages: records stay 48 bytes */
#define LR_HAVE_ITEM (1ULL << 31)       /* LR_INODE: the inode item exists */
#define NAME_MAX_LEN 255
#define REFS_KEPT 32      /* an inode's names held back to follow its inode record */

struct lrec {
	uint64_t child;         /* the inode the name leads to */
	uint64_t parent;        /* the directory (0 for LR_INODE/LR_ORPHAN) */
	uint64_t hash;          /* 64-bit hash of the name */
	uint64_t index;         /* dir index (DIR_INDEX, REF); LR_INODE: errors | mode << 32 */
	uint32_t nlink;         /* LR_INODE */
	uint16_t name_len;
	uint8_t kind;
	uint8_t ftype;          /* BTRFS_FT_* (dir entries; the inode's own type for LR_INODE) */
	char name[LR_NAME_KEEP + 1];
};

static int lrec_cmp(const void *pa, const void *pb)
{
	const struct lrec *x = pa, *y = pb;

#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(child);
	CMP(parent);
	CMP(hash);
	CMP(kind);
	CMP(index);
#undef CMP
	return 0;
}

/* Their words, in the order the reference prints them: a letter ('A' + bit)
 * then the words ("%o"/"%d": the mode bits and the nlink follow). */
static const char inode_words[] =
	"Xdeprecated free inode cache\0Ano inode item\0Bno orphan item\0Cdup inode item\0"
	"Ddup dir index\0Eodd dir item\0Fodd file extent\0Gbad file extent\0"
	"Hfile extent overlap\0Pinline file extent too large\0Ifile extent discount\0"
	"Jdir isize wrong\0Knbytes wrong\0Nlink count wrong\0Qodd inode flags\0"
	"Rinvalid inline ram bytes\0Tinvalid inode mode bit 0%o\0"
	"Uinvalid inode generation or transid\0Vdirectory has invalid nlink %d\0"
	"Winvalid xattr\0Ydup filename\0";
/* Everything known about the inode being streamed. */
struct ino_state {
	uint64_t ino;
	int have_item, any;
	uint32_t mode, nlink;
	uint64_t isize, nbytes, flags;
	uint64_t found_size;            /* dir: name lengths; file: what nbytes should be */
	uint64_t extent_start, extent_end, first_gap;
	int found_dir_item, found_file_extent;
	int odd_names;                  /* an INODE_EXTREF or a ref item that did not parse */
	uint64_t reported_before;       /* check_ctx.reported when the inode began */
	uint32_t errors;
};

/* The DIR_ITEM names of the directory being streamed, held back to meet their DIR_INDEX
 * twins (a directory's DIR_ITEM keys, type 84, all come before its DIR_INDEX keys, 96):
 * a pair goes to the sort as one record, half the names to sort. Those left unpaired
 * go to the sort when the directory ends; past HELD_MAX names, at once. */
#define HELD_MAX 4096
#define HELD_SLOTS (2 * HELD_MAX)       /* open addressing, a power of two */
enum { HELD_WAITING, HELD_PAIRED, HELD_ALONE };
struct held_items {
	uint64_t dir;
	size_t n;
	struct lrec *rec;               /* HELD_MAX */
	uint8_t *state;                 /* HELD_MAX */
	uint16_t *slot;                 /* HELD_SLOTS: index + 1 of a held record, 0 free */
	uint16_t *slot_of;              /* HELD_MAX: where each held record's index is */
};

/* The dir entry pairs waiting for their inode (which comes later in the tree: a child's
 * number is mostly above its directory's). An inode with one name, nlink 1 and nothing
 * wrong whose pair waits here sends no record at all: its name is whole (ref, dir item
 * and dir index agree) and it is marked in `fast`. Pairs left go to the sort. */
#define PENDING_MAX 16384
#define PENDING_BITS 15
#define PENDING_BUCKETS (1 << PENDING_BITS)    /* twice PENDING_MAX */
struct pending_pairs {
	size_t n;
	struct lrec *rec;               /* PENDING_MAX, in a bucket chain or free (child 0) */
	int32_t *next;                  /* PENDING_MAX: the bucket chain, or the free list */
	int32_t *bucket;                /* PENDING_BUCKETS: first index + 1, 0 none */
	int32_t free;                   /* index + 1 of the first free record, 0 none */
	int given_up;                   /* no room made: the pairs go to the sort */
};

/* The inodes that sent no records, as ranges of inode numbers in the order of the walk:
 * the merge makes their records again when something else names them. */
#define FAST_RANGES_MAX 262144
struct fast_inodes {
	struct { uint64_t first, last; } *r;
	size_t n, room;
};

struct fsr {
	struct check_ctx *c;
	const struct fs_root *rootp;
	uint64_t root;
	uint64_t root_dirid;
	const char *prefix;             /* "", "log " or "reloc " */
	int accounted;                  /* a subvolume: qgroups and checksums count it */
	struct ino_state in;
	/* NULL for a log tree: items alone are checked. Each inode's record and then its
	 * names (in lrec order) go to ilinks: they come in order, so its runs need no
	 * sort; dir indexes to xlinks (mostly in order: a directory's entries made one
	 * after the other are numbered as their inodes); dir items (in hash order),
	 * orphans and names past REFS_KEPT to links. */
	struct xsort *links, *ilinks, *xlinks;
	struct lrec refs[REFS_KEPT];    /* the names of the inode being streamed */
	int nrefs;
	struct held_items held;
	struct pending_pairs pending;
	struct fast_inodes fast;
	uint64_t last_child;            /* merge: the inode of the last record */
	struct lrec made[4];            /* merge: records made again for a fast inode */
	int nmade, made_at;
	uint64_t leaf;                  /* block of the current item */
	int err;
	uint64_t items;
};

static void add_to(struct fsr *f, struct xsort *xs, const struct lrec *r)
{
	int ret;

	if (f->err || !xs)
		return;
	ret = xsort_add(xs, r);
	if (ret < 0)
		f->err = ret;
}

static void add_link(struct fsr *f, const struct lrec *r)
{
	add_to(f, f->links, r);
}

static void keep_ref(struct fsr *f, const struct lrec *r)
{
	if (f->links && f->nrefs < REFS_KEPT)
		f->refs[f->nrefs++] = *r;
	else
		add_link(f, r);
}

static void held_free(struct held_items *h)
{
	free(h->rec);
	free(h->state);
	free(h->slot);
	free(h->slot_of);
	*h = (struct held_items){ 0 };
}

static int held_alloc(struct held_items *h)
{
	if (h->rec)
		return 0;
	h->rec = malloc(HELD_MAX * sizeof(*h->rec));
	h->state = malloc(HELD_MAX);
	h->slot = calloc(HELD_SLOTS, sizeof(*h->slot));
	h->slot_of = malloc(HELD_MAX * sizeof(*h->slot_of));
	if (h->rec && h->state && h->slot && h->slot_of)
		return 0;
	held_free(h);
	return -ENOMEM;
}

/* The slot of the held name of r's child and hash, or the free slot where it goes. */
static size_t held_find(const struct held_items *h, const struct lrec *r)
{
	size_t i = (size_t)((r->child * 0x9e3779b97f4a7c15ULL) ^ r->hash) & (HELD_SLOTS - 1);

	while (h->slot[i]) {
		const struct lrec *x = &h->rec[h->slot[i] - 1];

		if (x->child == r->child && x->hash == r->hash)
			break;
		i = (i + 1) & (HELD_SLOTS - 1);
	}
	return i;
}

/* The held names that met no DIR_INDEX go to the sort; the table is emptied. */
static void held_flush(struct fsr *f)
{
	struct held_items *h = &f->held;

	for (size_t i = 0; i < h->n; i++) {
		if (h->state[i] != HELD_PAIRED)
			add_link(f, &h->rec[i]);
		h->slot[h->slot_of[i]] = 0;
	}
	h->n = 0;
}

/* ---- dir entry pairs waiting for their inode ---------------------------------------- */

static void pending_free(struct pending_pairs *p)
{
	free(p->rec);
	free(p->next);
	free(p->bucket);
	*p = (struct pending_pairs){ 0 };
}

static int pending_alloc(struct pending_pairs *p)
{
	if (p->rec)
		return 0;
	p->rec = calloc(PENDING_MAX, sizeof(*p->rec));
	p->next = malloc(PENDING_MAX * sizeof(*p->next));
	p->bucket = calloc(PENDING_BUCKETS, sizeof(*p->bucket));
	if (!p->rec || !p->next || !p->bucket) {
		pending_free(p);
		return -ENOMEM;
	}
	for (int32_t i = 0; i < PENDING_MAX; i++)
		p->next[i] = i + 1 < PENDING_MAX ? i + 2 : 0;
	p->free = 1;
	return 0;
}

static int32_t *pending_bucket(struct pending_pairs *p, uint64_t child)
{
	return &p->bucket[(child * 0x9e3779b97f4a7c15ULL) >> (64 - PENDING_BITS)];
}

/* The waiting pair at *link (index i) out of the table. */
static void pending_unlink(struct pending_pairs *p, int32_t *link, int32_t i)
{
	*link = p->next[i];
	p->next[i] = p->free;
	p->free = i + 1;
	p->rec[i].child = 0;
	p->n--;
}

/* The waiting pairs whose inode has passed go to the sort. */
static void pending_flush_passed(struct fsr *f)
{
	struct pending_pairs *p = &f->pending;

	for (size_t b = 0; p->n && b < PENDING_BUCKETS; b++)
		for (int32_t *link = &p->bucket[b]; *link;) {
			int32_t i = *link - 1;

			if (p->rec[i].child > f->in.ino) {
				link = &p->next[i];
				continue;
			}
			add_to(f, f->xlinks, &p->rec[i]);
			pending_unlink(p, link, i);
		}
}

/* Every waiting pair to the sort, in the table's order (mostly the order they came in:
 * the sort's runs stay mostly in order), and the table freed. given_up: for this tree. */
static void pending_flush_all(struct fsr *f, int given_up)
{
	struct pending_pairs *p = &f->pending;

	for (size_t i = 0; p->rec && i < PENDING_MAX; i++)
		if (p->rec[i].child)
			add_to(f, f->xlinks, &p->rec[i]);
	pending_free(p);
	p->given_up = given_up;
}

/* Room in a full table: the pairs whose inode has passed go. Too few of those (a
 * directory of more names than the table holds, or directories made long before their
 * files): the table is given up for this tree, its pairs go to the sort. */
static void pending_make_room(struct fsr *f)
{
	pending_flush_passed(f);
	if (f->pending.n > PENDING_MAX / 4 * 3)
		pending_flush_all(f, 1);
}

/* A DIR_INDEX and DIR_ITEM pair waits for its inode, unless that inode has passed or
 * there is no room. */
static void pending_add(struct fsr *f, const struct lrec *r)
{
	struct pending_pairs *p = &f->pending;
	int32_t i, *b;

	if (!p->given_up && p->n == PENDING_MAX)
		pending_make_room(f);
	if (r->child <= f->in.ino || p->given_up || pending_alloc(p) < 0) {
		add_to(f, f->xlinks, r);
		return;
	}
	i = p->free - 1;
	p->free = p->next[i];
	p->rec[i] = *r;
	b = pending_bucket(p, r->child);
	p->next[i] = *b;
	*b = i + 1;
	p->n++;
}

/* The waiting pair of inode ref's name, of file type ftype, taken: 1, or 0 none. */
static int pending_take(struct fsr *f, const struct lrec *ref, uint8_t ftype)
{
	struct pending_pairs *p = &f->pending;

	for (int32_t *link = p->rec ? pending_bucket(p, ref->child) : NULL; link && *link; link = &p->next[*link - 1]) {
		const struct lrec *x = &p->rec[*link - 1];

		if (x->child == ref->child && x->parent == ref->parent && x->hash == ref->hash &&
		    x->index == ref->index && x->ftype == ftype && x->name_len == ref->name_len) {
			pending_unlink(p, link, *link - 1);
			return 1;
		}
	}
	return 0;
}

/* Whether ino can join the fast inodes (they are kept in the order of the walk). */
static int fast_room(struct fast_inodes *s, uint64_t ino)
{
	if (s->n && s->r[s->n - 1].last >= ino)
		return 0;
	if (s->n && s->r[s->n - 1].last + 1 == ino)
		return 1;
	return s->n < FAST_RANGES_MAX && !vec_reserve(&s->r, &s->room, s->n + 1, sizeof(*s->r));
}

static void fast_add(struct fast_inodes *s, uint64_t ino)
{
	if (s->n && s->r[s->n - 1].last + 1 == ino) {
		s->r[s->n - 1].last = ino;
		return;
	}
	s->r[s->n].first = s->r[s->n].last = ino;
	s->n++;
}

static int fast_has(const struct fast_inodes *s, uint64_t ino)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].last < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->r[lo].first <= ino;
}

/* A DIR_ITEM name: held for its DIR_INDEX twin, or (a second one of the same child and
 * hash: neither pairs; no room) to the sort. */
static void hold_dir_item(struct fsr *f, const struct lrec *r)
{
	struct held_items *h = &f->held;
	size_t i;

	if (h->n && h->dir != r->parent)
		held_flush(f);
	if (h->n == HELD_MAX || held_alloc(h) < 0) {
		add_link(f, r);
		return;
	}
	h->dir = r->parent;
	i = held_find(h, r);
	if (h->slot[i]) {
		h->state[h->slot[i] - 1] = HELD_ALONE;
		add_link(f, r);
		return;
	}
	h->rec[h->n] = *r;
	h->state[h->n] = HELD_WAITING;
	h->slot_of[h->n] = (uint16_t)i;
	h->slot[i] = (uint16_t)++h->n;
}

/* A DIR_INDEX name to the sort, as a pair when its DIR_ITEM twin (the same name and type)
 * is held. */
static void add_dir_index(struct fsr *f, struct lrec *r)
{
	struct held_items *h = &f->held;

	if (h->n && h->dir == r->parent) {
		size_t i = held_find(h, r);
		size_t k = h->slot[i] ? h->slot[i] - 1u : 0;

		if (h->slot[i] && h->state[k] == HELD_WAITING && h->rec[k].ftype == r->ftype &&
		    h->rec[k].name_len == r->name_len) {
			h->state[k] = HELD_PAIRED;
			r->kind = LR_DIR_PAIR;
		}
	}
	if (r->kind == LR_DIR_PAIR && f->links)
		pending_add(f, r);
	else
		add_to(f, f->xlinks, r);
}

/* The inode's record, then its names in order (an insertion sort: at most REFS_KEPT). */
static void add_inode_links(struct fsr *f, const struct lrec *r)
{
	add_to(f, f->ilinks, r);
	for (int i = 1; i < f->nrefs; i++)
		for (int j = i; j > 0 && lrec_cmp(&f->refs[j], &f->refs[j - 1]) < 0; j--) {
			struct lrec t = f->refs[j];

			f->refs[j] = f->refs[j - 1];
			f->refs[j - 1] = t;
		}
	for (int i = 0; i < f->nrefs; i++)
		add_to(f, f->ilinks, &f->refs[i]);
	f->nrefs = 0;
}

uint64_t ck_name_hash64(const char *name, size_t len)
{
	return ((uint64_t)ck_name_hash(name, len) << 32) | crc32c_raw(0x5bd1e995u, name, len);
}

static void fill_name(struct lrec *r, const char *name, uint16_t len)
{
	size_t keep = len < LR_NAME_KEEP ? len : LR_NAME_KEEP;

	r->hash = ck_name_hash64(name, len);
	r->name_len = len;
	memcpy(r->name, name, keep);
	r->name[keep] = 0;
}

static uint8_t mode_to_ftype(uint32_t mode)
{
	static const uint8_t types[16] = {
		[S_IFREG >> 12] = BTRFS_FT_REG_FILE, [S_IFDIR >> 12] = BTRFS_FT_DIR,
		[S_IFCHR >> 12] = BTRFS_FT_CHRDEV, [S_IFBLK >> 12] = BTRFS_FT_BLKDEV,
		[S_IFIFO >> 12] = BTRFS_FT_FIFO, [S_IFSOCK >> 12] = BTRFS_FT_SOCK,
		[S_IFLNK >> 12] = BTRFS_FT_SYMLINK,
	};
	return types[(mode & S_IFMT) >> 12];
}

static const char *trunc_name(char *buf, size_t size, const char *name, size_t len)
{
	snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), name);
	return buf;
}

/* ---- one inode's report --------------------------------------------------------- */

/* "Found file extent holes:" and "Dir items with mismatch hash:" lists follow
 * the inode line: rare, so the items are read again. */
static uint64_t extent_len(const struct fs_file_extent *fe, uint32_t sectorsize)
{
	if (fe->type == BTRFS_FILE_EXTENT_INLINE)
		return (fe->ram_bytes + sectorsize - 1) & ~(uint64_t)(sectorsize - 1);
	return fe->num_bytes;
}

static void list_holes(struct fsr *f, uint64_t ino)
{
	struct fs_key from = { ino, BTRFS_INODE_ITEM_KEY, 0 }, key;
	struct ck_cursor cu;
	const uint8_t *data;
	uint32_t size, ss = f->c->fs->sectorsize;
	uint64_t start = (uint64_t)-1, end = 0, isize = 0;
	int found = 0;

	ck_raw(f->c, f->root, ino, "Found file extent holes:");
	ck_cursor_init(&cu, f->c, f->rootp, &from);
	while (ck_cursor_next(&cu, &key, &data, &size) && key.objectid == ino) {
		const struct btrfs_inode_item *ii;
		struct fs_file_extent fe;

		if (key.type == BTRFS_INODE_ITEM_KEY && (ii = fs_inode_item(data, size)))
			isize = get_le64(&ii->size);
		if (key.type != BTRFS_EXTENT_DATA_KEY)
			continue;
		if (start == (uint64_t)-1)
			start = end = key.offset;
		if (end < key.offset) {
			ck_raw(f->c, f->root, ino, "\tstart: %llu, len: %llu", (unsigned long long)end,
			       (unsigned long long)(key.offset - end));
			found = 1;
		}
		end = key.offset + (fs_file_extent(data, size, &fe) < 0 ? 0 : extent_len(&fe, ss));
	}
	ck_cursor_release(&cu);
	if (!found && end < isize)
		ck_raw(f->c, f->root, ino, "\tstart: %llu, len: %llu", (unsigned long long)end,
		       (unsigned long long)(((isize + ss - 1) & ~(uint64_t)(ss - 1)) - end));
	else if (!found)
		ck_raw(f->c, f->root, ino, "\tstart: 0, len: %llu", (unsigned long long)start);
}

static void list_bad_hashes(struct fsr *f, uint64_t ino)
{
	struct fs_key from = { ino, BTRFS_DIR_ITEM_KEY, 0 }, key;
	struct ck_cursor cu;
	const uint8_t *data;
	uint32_t size;

	ck_raw(f->c, f->root, ino, "Dir items with mismatch hash:");
	ck_cursor_init(&cu, f->c, f->rootp, &from);
	while (ck_cursor_next(&cu, &key, &data, &size) && key.objectid == ino &&
	       key.type == BTRFS_DIR_ITEM_KEY) {
		struct fs_dir_entry de;
		uint32_t pos = 0;

		while (fs_dir_entry_next(data, size, &pos, &de) == 1) {
			uint32_t h = ck_name_hash(de.name, de.name_len);

			if (h != key.offset)
				ck_raw(f->c, f->root, ino, "\tname: %.*s namelen: %u wanted 0x%08x has 0x%08llx",
				       de.name_len, de.name, de.name_len, h, (unsigned long long)key.offset);
		}
	}
	ck_cursor_release(&cu);
}

/* "root R inode I errors X, word, word" and the lists some errors come with. */
static void report_inode(struct fsr *f, uint64_t ino, uint32_t errors, uint32_t mode, uint32_t nlink)
{
	char buf[360];
	size_t n;

	if (!errors)
		return;
	n = (size_t)snprintf(buf, sizeof(buf), "%sroot %llu inode %llu errors %x", f->prefix,
			     (unsigned long long)f->root, (unsigned long long)ino, errors);
	for (const char *w = inode_words; *w && n < sizeof(buf); w += strlen(w) + 1) {
		if (!(errors & (1u << (*w - 'A'))))
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, ", ");
		if (n < sizeof(buf))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, w + 1,
					      *w == 'T' ? mode & ~07777u : nlink);
	}
	ck_raw(f->c, f->root, ino, "%s", buf);
	if (CFG_CHECK_THOROUGH && (errors & I_FILE_EXTENT_DISCOUNT))
		list_holes(f, ino);
	if (CFG_CHECK_THOROUGH && (errors & I_MISMATCH_DIR_HASH))
		list_bad_hashes(f, ino);
}

/* ---- streaming: one inode --------------------------------------------------------- */

/* An inode with nothing wrong, nlink 1 and one name whose dir entry pair waits: it sends
 * no record (struct pending_pairs). r: its record. */
static int fast_inode(struct fsr *f, const struct lrec *r)
{
	const struct ino_state *in = &f->in;

	if (r->index != (LR_HAVE_ITEM | (uint64_t)in->mode << 32) || in->nlink != 1 || f->nrefs != 1 ||
	    in->odd_names || f->c->reported != in->reported_before || in->ino == f->root_dirid ||
	    !fast_room(&f->fast, in->ino) || !pending_take(f, &f->refs[0], r->ftype))
		return 0;
	fast_add(&f->fast, in->ino);
	return 1;
}

static void inode_finish(struct fsr *f)
{
	struct ino_state *in = &f->in;
	uint32_t e = in->errors;
	struct lrec r = { .child = in->ino, .kind = LR_INODE };

	held_flush(f);
	if (!in->any)
		return;
	if (in->have_item && S_ISDIR(in->mode)) {
		if (in->found_size != in->isize)
			e |= I_DIR_ISIZE_WRONG;
		if (in->found_file_extent)
			e |= I_ODD_FILE_EXTENT;
	} else if (in->have_item && (S_ISREG(in->mode) || S_ISLNK(in->mode))) {
		if (in->found_dir_item)
			e |= I_ODD_DIR_ITEM;
		/* unlinked inodes being deleted have any nbytes */
		if (in->nlink > 0 && in->found_size != in->nbytes)
			e |= I_NBYTES_WRONG;
		if (in->nlink > 0 && !f->c->no_holes && in->isize &&
		    (in->extent_end < in->isize || in->extent_start != 0 || in->first_gap < in->isize))
			e |= I_FILE_EXTENT_DISCOUNT;
	}
	if (!f->links) {
		/* a log tree holds a part of each inode: only what one item says */
		report_inode(f, in->ino, e & ~(I_DIR_ISIZE_WRONG | I_NBYTES_WRONG | I_FILE_EXTENT_DISCOUNT),
			     in->mode, in->nlink);
		return;
	}
	r.index = e | (in->have_item ? LR_HAVE_ITEM : 0) | (uint64_t)in->mode << 32;
	r.nlink = in->nlink;
	r.ftype = mode_to_ftype(in->mode);
	if (fast_inode(f, &r))
		f->nrefs = 0;
	else
		add_inode_links(f, &r);
}

static void inode_start(struct fsr *f, uint64_t ino)
{
	inode_finish(f);
	memset(&f->in, 0, sizeof(f->in));
	f->in.ino = ino;
	f->in.reported_before = f->c->reported;
	f->in.extent_start = (uint64_t)-1;
	f->in.first_gap = (uint64_t)-1;
}

static int valid_mode(uint32_t mode)
{
	return !(mode & ~(S_IFMT | 07777u)) && (mode_to_ftype(mode) != BTRFS_FT_UNKNOWN);
}

/* What the kernel's tree checker refuses in an inode item of any tree (a directory with
 * more than one link, an unknown mode or flag, a generation from the future): NULL when
 * nothing. */
const char *ck_inode_item_refusal(const struct btrfs_inode_item *ii, uint64_t super_gen)
{
	uint32_t mode = get_le32(&ii->mode);

	if (get_le64(&ii->generation) > super_gen + 1 || get_le64(&ii->transid) > super_gen + 1)
		return "invalid inode generation";
	if (!valid_mode(mode))
		return "invalid inode mode";
	if (S_ISDIR(mode) && get_le32(&ii->nlink) > 1)
		return "invalid nlink for a directory";
	return get_le64(&ii->flags) & ~INODE_FLAGS_KNOWN ? "invalid inode flags" : NULL;
}

static void inode_item(struct fsr *f, const uint8_t *data, uint32_t size)
{
	const struct btrfs_inode_item *ii = fs_inode_item(data, size);
	struct ino_state *in = &f->in;
	uint64_t limit = f->c->super_gen + 1;

	if (!ii) {
		ck_err(f->c, f->root, in->ino, 0, 0, "%sroot %llu inode %llu: inode item too short (%u bytes)",
		       f->prefix, (unsigned long long)f->root, (unsigned long long)in->ino, size);
		return;
	}
	if (in->have_item) {
		in->errors |= I_DUP_INODE_ITEM;
		return;
	}
	in->have_item = 1;
	in->mode = get_le32(&ii->mode);
	in->nlink = get_le32(&ii->nlink);
	in->isize = get_le64(&ii->size);
	in->nbytes = get_le64(&ii->nbytes);
	in->flags = get_le64(&ii->flags);
	if (!valid_mode(in->mode))
		in->errors |= I_INVALID_IMODE;
	if ((S_ISLNK(in->mode) && (in->flags & (INODE_FLAG_IMMUTABLE | INODE_FLAG_APPEND))) ||
	    (in->flags & ~INODE_FLAGS_KNOWN))
		in->errors |= I_ODD_INODE_FLAGS;
	if (S_ISDIR(in->mode) && in->nlink >= 2)
		in->errors |= I_INVALID_NLINK;
	if (get_le64(&ii->generation) > limit || get_le64(&ii->transid) > limit)
		in->errors |= I_INVALID_GEN;
}

/* Repair: the next problem is an item that is better gone (its name is rebuilt from
 * the others of it). */
static void fix_delete(struct fsr *f, const struct fs_key *key)
{
	if (CFG_CHECK_REPAIR && !*f->prefix && f->links) {
		f->c->fix = CHECK_FIX_DELETE;
		f->c->fix_key = *key;
	}
}

/* INODE_EXTREF keys: the offset is crc32c of the name seeded with the parent. */
static uint64_t extref_hash(uint64_t parent, const char *name, size_t len)
{
	return crc32c_raw((uint32_t)parent, name, len);
}

static void inode_refs(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct fs_inode_ref ref;
	uint32_t pos = 0;
	int ret;

	f->in.odd_names |= key->type == BTRFS_INODE_EXTREF_KEY;
	for (;;) {
		struct lrec r = { .child = key->objectid, .kind = LR_REF };

		ret = key->type == BTRFS_INODE_REF_KEY ? fs_inode_ref_next(data, size, &pos, &ref)
						       : fs_inode_extref_next(data, size, &pos, &ref);
		if (ret <= 0)
			break;
		r.parent = key->type == BTRFS_INODE_REF_KEY ? key->offset : ref.parent;
		r.index = ref.index;
		fill_name(&r, ref.name, ref.name_len);
		if (!ck_valid_ino(r.parent)) {
			fix_delete(f, key);     /* the entries of the real parent make it again */
			ck_err(f->c, f->root, key->objectid, 0, 0,
			       "%sroot %llu inode %llu: inode ref names parent %llu, not an inode number",
			       f->prefix, (unsigned long long)f->root, (unsigned long long)key->objectid,
			       (unsigned long long)r.parent);
			break;
		}
		if (CFG_CHECK_THOROUGH && key->type == BTRFS_INODE_EXTREF_KEY &&
		    extref_hash(ref.parent, ref.name, ref.name_len) != key->offset) {
			char name[64];

			fix_delete(f, key);
			ck_err(f->c, f->root, key->objectid, 0, 0,
			       "%sroot %llu INODE_EXTREF[%llu %llu] name %s parent %llu mismatch with its hash, wanted %llu",
			       f->prefix, (unsigned long long)f->root, (unsigned long long)key->objectid,
			       (unsigned long long)key->offset,
			       trunc_name(name, sizeof(name), ref.name, ref.name_len),
			       (unsigned long long)ref.parent,
			       (unsigned long long)extref_hash(ref.parent, ref.name, ref.name_len));
			continue;       /* not found by the kernel: as if missing */
		}
		keep_ref(f, &r);
	}
	f->in.odd_names |= ret < 0;
	if (ret < 0)
		fix_delete(f, key);     /* its names are made again from the dir entries */
	if (ret < 0)
		ck_err(f->c, f->root, key->objectid, 0, 0,
		       "%sroot %llu inode %llu: corrupt inode ref item (key offset %llu)", f->prefix,
		       (unsigned long long)f->root, (unsigned long long)key->objectid,
		       (unsigned long long)key->offset);
}

/* Two entries of one DIR_ITEM (names whose hashes collide) with the same name. */
static int dup_names(const uint8_t *data, uint32_t size)
{
	struct fs_dir_entry a, b;
	uint32_t pa = 0, pb;

	while (fs_dir_entry_next(data, size, &pa, &a) == 1)
		for (pb = pa; fs_dir_entry_next(data, size, &pb, &b) == 1;)
			if (a.name_len == b.name_len && !memcmp(a.name, b.name, a.name_len))
				return 1;
	return 0;
}

/* What the kernel refuses in a directory entry, whatever the rest says. */
static void dir_entry_sanity(struct fsr *f, const struct fs_key *key, const struct fs_dir_entry *de)
{
	int xattr = key->type == BTRFS_XATTR_ITEM_KEY;
	const char *what = xattr ? "XATTR_ITEM" : key->type == BTRFS_DIR_ITEM_KEY ? "DIR_ITEM" : "DIR_INDEX";
	const char *why = NULL;

	if (!xattr && de->data_len)
		why = "has data";
	else if (de->type == BTRFS_FT_UNKNOWN || de->type >= BTRFS_FT_MAX ||
		 (de->type == BTRFS_FT_XATTR) != xattr)
		why = "has an invalid type";
	else if (!xattr && de->location.type == BTRFS_INODE_ITEM_KEY && de->location.offset)
		why = "has an inode location with an offset";
	else if (!xattr && de->location.type != BTRFS_INODE_ITEM_KEY &&
		 de->location.type != BTRFS_ROOT_ITEM_KEY) {
		fix_delete(f, key);     /* the names come back from the other halves */
		ck_raw(f->c, f->root, key->objectid, "unknown location type %d in DIR_ITEM[%llu %llu]",
		       de->location.type, (unsigned long long)key->objectid,
		       (unsigned long long)key->offset);
	} else if (xattr && (de->location.objectid || de->location.type || de->location.offset)) {
		why = "has a location";         /* the kernel wants an xattr's all zeros */
		if (CFG_CHECK_REPAIR && !*f->prefix) {
			f->c->fix = CHECK_FIX_XATTR_LOCATION;
			f->c->fix_key = *key;
		}
	}
	if (why && !xattr)
		fix_delete(f, key);
	if (why)
		ck_err(f->c, f->root, key->objectid, 0, 0,
		       "%sroot %llu %s[%llu %llu] %s (type %u, location type %u, data_len %u)", f->prefix,
		       (unsigned long long)f->root, what, (unsigned long long)key->objectid,
		       (unsigned long long)key->offset, why, de->type, de->location.type, de->data_len);
}

static void dir_entries(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct ino_state *in = &f->in;
	struct fs_dir_entry de;
	uint32_t pos = 0;
	int ret, count = 0, misnamed = 0, xattr = key->type == BTRFS_XATTR_ITEM_KEY;

	if (!xattr) {
		in->found_dir_item = 1;
		if (in->have_item && in->nlink == 0)
			return;         /* a deleted directory's leftovers */
	}
	while ((ret = fs_dir_entry_next(data, size, &pos, &de)) == 1) {
		struct lrec r = { .parent = key->objectid, .ftype = de.type };

		count++;
		if (CFG_CHECK_THOROUGH)
			dir_entry_sanity(f, key, &de);
		if (xattr) {
			if (de.name_len > NAME_MAX_LEN) {
				ck_raw(f->c, f->root, key->objectid, "inode %llu has overlong xattr name %.*s",
				       (unsigned long long)key->objectid, de.name_len, de.name);
				in->errors |= I_INVALID_XATTR;
			}
			if (ck_name_hash(de.name, de.name_len) != (uint32_t)key->offset)
				in->errors |= I_INVALID_XATTR;
			continue;
		}
		in->found_size += de.name_len;
		if (key->type == BTRFS_DIR_ITEM_KEY &&
		    ck_name_hash(de.name, de.name_len) != key->offset) {
			in->errors |= I_MISMATCH_DIR_HASH;
			misnamed = 1;
			continue;
		}
		if (de.location.type != BTRFS_INODE_ITEM_KEY)
			continue;       /* a subvolume: checked with the root refs */
		r.child = de.location.objectid;
		r.kind = key->type == BTRFS_DIR_ITEM_KEY ? LR_DIR_ITEM : LR_DIR_INDEX;
		r.index = key->type == BTRFS_DIR_INDEX_KEY ? key->offset : 0;
		fill_name(&r, de.name, de.name_len);
		if (r.kind == LR_DIR_INDEX)
			add_dir_index(f, &r);
		else if (f->links)
			hold_dir_item(f, &r);
	}
	if (misnamed && ret >= 0) {     /* a damaged name: it comes back from the other halves */
		fix_delete(f, key);
		ck_problem(f->c, CK_FIX, f->root, key->objectid, 0, 0, "dir item with a name of another hash");
	}
	if (ret < 0)
		fix_delete(f, key);     /* its names are made again from the other halves */
	if (ret < 0)
		ck_err(f->c, f->root, key->objectid, 0, 0,
		       "%sroot %llu inode %llu: corrupt dir item (key type %u offset %llu)", f->prefix,
		       (unsigned long long)f->root, (unsigned long long)key->objectid, key->type,
		       (unsigned long long)key->offset);
	else if (key->type == BTRFS_DIR_INDEX_KEY && count > 1)
		in->errors |= I_DUP_DIR_INDEX;
	else if (key->type == BTRFS_DIR_ITEM_KEY && count > 1 && dup_names(data, size))
		in->errors |= I_DUP_FILENAME;
}

static void need_csum(struct fsr *f, uint64_t start, uint64_t len, int no_csum)
{
	struct check_range r = { start, len, f->root, f->in.ino, (uint64_t)no_csum };
	int ret;

	if (f->err || !len)
		return;
	ret = xsort_add(f->c->csum_need, &r);
	if (ret < 0)
		f->err = ret;
}

#define COMPRESS_TYPES 4        /* none, zlib, lzo, zstd */

/* A malformed file extent item: the inode's error, and the item for the repair. */
static void bad_file_extent(struct fsr *f, const struct fs_key *key)
{
	f->in.errors |= I_BAD_FILE_EXTENT;
	if (CFG_CHECK_REPAIR && !*f->prefix && f->links) {
		f->c->fix = CHECK_FIX_FILE_EXTENT;
		f->c->fix_key = *key;
		ck_problem(f->c, CK_FIX, f->root, key->objectid, 0, 0, "bad file extent at %llu",
			   (unsigned long long)key->offset);
	}
}

/* Whether a regular or prealloc extent's fields are of a file extent the kernel reads:
 * sector aligned, within its extent (an extent on the disk has a size; the part of an
 * uncompressed one a file uses lies inside it), of a generation not after the
 * filesystem's. */
static int reg_extent_ok(const struct fsr *f, const struct fs_file_extent *fe)
{
	uint32_t mask = f->c->fs->sectorsize - 1;

	return fe->num_bytes && !((fe->num_bytes | fe->ram_bytes | fe->disk_bytenr | fe->disk_num_bytes |
				   fe->offset) & mask) && fe->num_bytes + fe->offset <= fe->ram_bytes &&
	       fe->num_bytes + fe->offset >= fe->num_bytes &&
	       (!fe->disk_bytenr || (fe->disk_num_bytes &&
				     (fe->compression || fe->num_bytes + fe->offset <= fe->disk_num_bytes))) &&
	       !(fe->type == BTRFS_FILE_EXTENT_PREALLOC && (fe->compression || fe->other_encoding)) &&
	       fe->generation <= f->c->super_gen + 1;
}

/* [start, start + len) lies inside one chunk that holds data. */
static int in_data_chunk(const struct fs *fs, uint64_t start, uint64_t len)
{
	const struct fs_chunk *ch = fs_chunk_find(fs, start);

	return ch && (ch->type & BTRFS_BLOCK_GROUP_DATA) && len <= ch->logical + ch->length - start;
}

/* NODATASUM, from flags that are not garbage (bits no kernel sets: the data's
 * checksums decide, and the repair resets the flags from them). */
static int no_datasum(const struct ino_state *in)
{
	return (in->flags & INODE_FLAG_NODATASUM) && !(in->flags & ~INODE_FLAGS_KNOWN);
}

static void file_extent(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct ino_state *in = &f->in;
	struct fs_file_extent fe;
	uint32_t sectorsize = f->c->fs->sectorsize, mask = sectorsize - 1;
	uint64_t num_bytes;
	int bad;

	in->found_file_extent = 1;
	if (in->extent_start == (uint64_t)-1) {
		in->extent_start = key->offset;
		in->extent_end = key->offset;
	}
	if (in->extent_end > key->offset)
		in->errors |= I_FILE_EXTENT_OVERLAP;
	else if (in->extent_end < key->offset && in->first_gap == (uint64_t)-1)
		in->first_gap = in->extent_end;
	if (fs_file_extent(data, size, &fe) < 0 || fe.type > BTRFS_FILE_EXTENT_PREALLOC) {
		bad_file_extent(f, key);
		return;
	}
	bad = (key->offset & mask) || fe.compression >= COMPRESS_TYPES || fe.encryption;
	if (fe.type == BTRFS_FILE_EXTENT_INLINE) {
		uint32_t max_inline = f->c->fs->nodesize - sizeof(struct btrfs_header) -
				      sizeof(struct btrfs_item) - FS_FILE_EXTENT_INLINE_START;

		if (max_inline > mask)
			max_inline = mask;
		num_bytes = fe.ram_bytes;
		bad |= !num_bytes || key->offset;
		if (fe.compression) {
			if (fe.inline_len > max_inline || num_bytes > sectorsize)
				in->errors |= I_FILE_EXTENT_TOO_LARGE;
		} else {
			if (num_bytes > max_inline)
				in->errors |= I_FILE_EXTENT_TOO_LARGE;
			if (fe.inline_len != num_bytes)
				in->errors |= I_INLINE_RAM_BYTES;
		}
		if (bad)
			bad_file_extent(f, key);
		in->found_size += num_bytes;
		in->extent_end = key->offset + extent_len(&fe, sectorsize);
		return;
	}
	num_bytes = fe.num_bytes;
	bad |= !reg_extent_ok(f, &fe) || (fe.compression && no_datasum(in)) ||
	       (fe.disk_bytenr && !in_data_chunk(f->c->fs, fe.disk_bytenr, fe.disk_num_bytes));
	if (bad)
		bad_file_extent(f, key);
	/* a symlink's target is always inline */
	if (S_ISLNK(in->mode))
		in->errors |= I_FILE_EXTENT_TOO_LARGE;
	if (fe.disk_bytenr) {
		in->found_size += num_bytes;
		if (f->accounted)
			ck_qgroup_add(f->c, fe.disk_bytenr, f->root, fe.disk_num_bytes);
	}
	in->extent_end = key->offset + num_bytes;
	/* Data reloc inodes copy whole extents, written or not: no csums promised. */
	if (fe.disk_bytenr && fe.type == BTRFS_FILE_EXTENT_REG && in->have_item && f->accounted) {
		int no_csum = no_datasum(in);

		if (fe.compression)
			need_csum(f, fe.disk_bytenr, fe.disk_num_bytes, no_csum);
		else
			need_csum(f, fe.disk_bytenr + fe.offset, num_bytes, no_csum);
	}
}

int ck_subvol_key_type(uint8_t type)
{
	switch (type) {
	case BTRFS_INODE_ITEM_KEY: case BTRFS_INODE_REF_KEY: case BTRFS_INODE_EXTREF_KEY:
	case BTRFS_XATTR_ITEM_KEY: case BTRFS_VERITY_DESC_ITEM_KEY: case BTRFS_VERITY_MERKLE_ITEM_KEY:
	case BTRFS_DIR_ITEM_KEY: case BTRFS_DIR_INDEX_KEY: case BTRFS_EXTENT_DATA_KEY:
	case BTRFS_ORPHAN_ITEM_KEY:
		return 1;
	}
	return 0;
}

static int fs_item_type_known(const struct fsr *f, uint8_t type)
{
	if (type == BTRFS_DIR_LOG_ITEM_KEY || type == BTRFS_DIR_LOG_INDEX_KEY)
		return !f->links;
	return ck_subvol_key_type(type) && type != BTRFS_ORPHAN_ITEM_KEY;
}

static void fs_item(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	if (key->type == BTRFS_ORPHAN_ITEM_KEY) {
		struct lrec r = { .child = key->offset, .kind = LR_ORPHAN };

		if (key->objectid == BTRFS_ORPHAN_OBJECTID)
			add_link(f, &r);
		return;
	}
	if (key->objectid == BTRFS_FREE_SPACE_OBJECTID ||
	    (key->objectid == BTRFS_EXTENT_CSUM_OBJECTID && !f->links))
		return;         /* old free space cache; a log's checksums */
	if (!ck_valid_ino(key->objectid) && key->objectid != BTRFS_FREE_INO_OBJECTID) {
		fix_delete(f, key);
		ck_err(f->c, f->root, key->objectid, 0, 0, "%sroot %llu: key (%llu %u %llu) in leaf %llu is not of an inode",
		       f->prefix, (unsigned long long)f->root, (unsigned long long)key->objectid, key->type,
		       (unsigned long long)key->offset, (unsigned long long)f->leaf);
		return;
	}
	if (!fs_item_type_known(f, key->type)) {
		fix_delete(f, key);
		ck_err(f->c, f->root, key->objectid, 0, 0, "unknown key (%llu %u %llu) found in leaf %llu",
		       (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset,
		       (unsigned long long)f->leaf);
		return;
	}
	if (key->objectid != f->in.ino || !f->in.any)
		inode_start(f, key->objectid);
	f->in.any = 1;
	switch (key->type) {
	case BTRFS_INODE_ITEM_KEY:
		if (key->offset) {      /* the kernel's tree checker wants 0 */
			fix_delete(f, key);
			ck_err(f->c, f->root, key->objectid, 0, 0, "%sroot %llu inode %llu: inode item key offset %llu, not 0",
			       f->prefix, (unsigned long long)f->root, (unsigned long long)key->objectid,
			       (unsigned long long)key->offset);
		}
		inode_item(f, data, size);
		break;
	case BTRFS_INODE_REF_KEY:
	case BTRFS_INODE_EXTREF_KEY:
		inode_refs(f, key, data, size);
		break;
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
	case BTRFS_XATTR_ITEM_KEY:
		dir_entries(f, key, data, size);
		break;
	case BTRFS_EXTENT_DATA_KEY:
		file_extent(f, key, data, size);
		break;
	}
}

static int fsr_node(void *ctx, const struct fs_block *b)
{
	struct fsr *f = ctx;

	if (f->accounted)
		ck_qgroup_add(f->c, b->bytenr, f->root, b->size);
	return 0;
}

static int fsr_leaf(void *ctx, const struct fs_block *b)
{
	struct fsr *f = ctx;
	uint32_t n = fs_block_nritems(b);

	fsr_node(ctx, b);
	f->leaf = b->bytenr;
	for (uint32_t i = 0; i < n; i++) {
		struct fs_key key;
		const uint8_t *data;
		uint32_t size;

		fs_item_key(b, i, &key);
		data = fs_item_data(b, i, &size);
		if (data)
			fs_item(f, &key, data, size);
		ck_progress(f->c, ++f->items);
	}
	return f->err;
}

static void fsr_error(void *ctx, const struct fs_error *e)
{
	struct fsr *f = ctx;
	struct fs_error copy = *e;

	if (!copy.tree)
		copy.tree = f->root;
	ck_fs_error(f->c, &copy, NULL);
}

/* ---- the links, merged per inode ------------------------------------------------ */

struct name_group {
	struct lrec first;
	int ref, item, index;
	uint64_t ref_index, dir_index;
	int ftype_bad;
	uint32_t errors;
};

/* The names of one inode kept for its report (a file may have thousands of
 * names: the first few are listed). */
#define GROUPS_LISTED 16

struct inode_links {
	uint64_t ino;
	int have_inode, orphan, any;
	uint32_t nlink, errors, mode;
	uint8_t ftype;
	uint64_t found_link;            /* dir items naming it */
	int ngroups, bad_groups, more;
	struct name_group groups[GROUPS_LISTED];
};

/* The full name of a group, read again from the ref or the dir item (only
 * for reports). */
static void group_name(struct fsr *f, const struct name_group *g, char *buf, size_t size)
{
	struct fs_key k = { g->first.child, BTRFS_INODE_REF_KEY, g->first.parent };
	struct fs_path p;
	const uint8_t *data;
	uint32_t len, pos = 0;

	snprintf(buf, size, "%s", g->first.name);
	if (!CFG_CHECK_THOROUGH || g->first.name_len <= LR_NAME_KEEP)
		return;
	if (!g->ref)
		k = (struct fs_key){ g->first.parent, BTRFS_DIR_ITEM_KEY, g->first.hash >> 32 };
	fs_path_init(&p);
	if (fs_lookup(f->c->fs, f->rootp, &k, &p) == 0 && (data = fs_path_data(&p, &len))) {
		struct fs_dir_entry de;
		struct fs_inode_ref r;

		while (k.type == BTRFS_INODE_REF_KEY ? fs_inode_ref_next(data, len, &pos, &r) == 1
						     : fs_dir_entry_next(data, len, &pos, &de) == 1) {
			if (k.type != BTRFS_INODE_REF_KEY)
				r.name = de.name, r.name_len = de.name_len;
			if (ck_name_hash64(r.name, r.name_len) == g->first.hash) {
				trunc_name(buf, size, r.name, r.name_len);
				break;
			}
		}
	}
	fs_path_release(f->c->fs, &p);
}

/* Repair: what the next report (of inode ino, or of a name of it) is about. */
static void fix_links(struct fsr *f, uint64_t ino, const struct inode_links *il, const struct name_group *g,
		      uint32_t e)
{
	struct check_ctx *c = f->c;

	if (!CFG_CHECK_REPAIR || *f->prefix || !e)
		return;
	c->fix = g ? CHECK_FIX_NAME : CHECK_FIX_INODE;
	c->fix_key = (struct fs_key){ g ? g->first.parent : ino, 0, g ? g->ref_index : 0 };
	c->fix_value[0] = g ? g->first.hash : e;
	c->fix_value[1] = !g ? il->found_link : e | (uint64_t)!!g->ref << 16 | (uint64_t)!!g->item << 17 |
		(uint64_t)!!g->index << 18 | (uint64_t)il->have_inode << 19 | (uint64_t)il->ftype << 32 |
		(uint64_t)(g->first.kind == LR_REF ? 0 : g->first.ftype) << 40 | (uint64_t)g->first.name_len << 48;
	c->fix_value[2] = g ? g->dir_index : f->root_dirid;
}

static void report_group(struct fsr *f, const struct inode_links *il, const struct name_group *g)
{
	char name[NAME_MAX_LEN + 1], words[160];

	fix_links(f, g->first.child, il, g, g->errors);
	group_name(f, g, name, sizeof(name));
	ck_raw(f->c, f->root, g->first.child,
	       "\tunresolved ref dir %llu index %llu namelen %u name %s filetype %d errors %x%s",
	       (unsigned long long)g->first.parent,
	       (unsigned long long)(g->index ? g->dir_index : g->ref_index), g->first.name_len, name,
	       g->first.kind == LR_REF ? 0 : g->first.ftype, g->errors,
	       ck_ref_words(words, sizeof(words), g->errors));
}

static void fix_links(struct fsr *f, uint64_t ino, const struct inode_links *il, const struct name_group *g,
		      uint32_t e);

static void finish_name(struct fsr *f, struct inode_links *il, struct name_group *g)
{
	uint32_t e = 0;

	if (!g->item)
		e |= REF_NO_DIR_ITEM;
	if (!g->index)
		e |= REF_NO_DIR_INDEX;
	if (!g->ref)
		e |= REF_NO_INODE_REF;
	e |= (g->item > 1 ? REF_DUP_DIR_ITEM : 0) | (g->index > 1 ? REF_DUP_DIR_INDEX : 0) |
	     (g->ref > 1 ? REF_DUP_INODE_REF : 0);
	if (g->ref && g->index && g->ref_index != g->dir_index)
		e |= REF_INDEX_UNMATCH;
	if (g->ftype_bad || (il->have_inode && (g->item || g->index) && g->first.ftype != il->ftype))
		e |= REF_FILETYPE_UNMATCH;
	if (g->first.name_len > NAME_MAX_LEN)
		e |= REF_NAME_TOO_LONG;
	g->errors = e;
	il->found_link += (uint64_t)g->item;
	/* keep the listed names, the bad ones first */
	il->bad_groups += e != 0;
	if (il->ngroups < GROUPS_LISTED) {
		il->groups[il->ngroups++] = *g;
		return;
	}
	il->more++;
	for (int i = 0; e && i < GROUPS_LISTED; i++)
		if (!il->groups[i].errors) {
			il->groups[i] = *g;
			return;
		}
	/* not listed: the repair still hears of it */
	if (CFG_CHECK_REPAIR && e) {
		fix_links(f, g->first.child, il, g, e);
		ck_problem(f->c, CK_FIX, f->root, g->first.child, 0, 0, "unlisted name");
	}
}

/* The top directory of a tree: one ".." ref to itself with index 0, nlink 1,
 * and no directory entry naming it. */
static uint32_t root_dir_errors(const struct inode_links *il)
{
	int dotdot = 0;

	if (il->errors)
		return 0;       /* reported as they are */
	if (!il->have_inode)
		return I_NO_INODE_ITEM;
	if (il->nlink != 1 || il->found_link)
		return I_LINK_COUNT_WRONG;
	for (int i = 0; i < il->ngroups; i++) {
		const struct name_group *g = &il->groups[i];

		if (g->first.parent == il->ino && g->ref && !g->index && !g->item)
			dotdot = g->ref_index == 0 && g->first.name_len == 2 && !memcmp(g->first.name, "..", 2);
	}
	return dotdot ? 0 : I_ODD_DIR_ITEM;
}

static void finish_links(struct fsr *f, struct inode_links *il, int *root_dir_seen)
{
	uint32_t e = il->errors;
	int list_all;

	if (il->ino == f->root_dirid) {
		*root_dir_seen = 1;
		e |= root_dir_errors(il);
		fix_links(f, il->ino, il, NULL, e);
		report_inode(f, il->ino, e, il->mode, il->nlink);
		return;
	}
	if (!il->any)
		return;         /* only an orphan item: the kernel drops it */
	if (il->ino == BTRFS_FREE_INO_OBJECTID)
		e |= I_DEPRECATED_FREE_INO;
	if (!il->have_inode)
		e |= I_NO_INODE_ITEM;
	else if (il->nlink == 0 && !il->orphan)
		e |= I_NO_ORPHAN_ITEM;
	if (il->found_link != il->nlink)
		e |= I_LINK_COUNT_WRONG;
	/* the data reloc tree's inodes have no names (nlink 1, an orphan item) */
	if (f->root == BTRFS_DATA_RELOC_TREE_OBJECTID && il->have_inode && !il->found_link &&
	    !il->ngroups)
		e &= ~I_LINK_COUNT_WRONG;
	fix_links(f, il->ino, il, NULL, e);
	report_inode(f, il->ino, e, il->mode, il->nlink);
	list_all = (e & I_LINK_COUNT_WRONG) != 0;
	for (int i = 0; i < il->ngroups; i++)
		if (list_all || il->groups[i].errors)
			report_group(f, il, &il->groups[i]);
	if (il->more && (list_all || il->bad_groups > GROUPS_LISTED))
		ck_raw(f->c, f->root, il->ino, "\t(%d more names of inode %llu not listed)", il->more,
		       (unsigned long long)il->ino);
}

/* The records a fast inode would have sent (its item, its ref and its dir entry pair),
 * made again from its items into f->made when other records name it. */
static int remake_fast(struct fsr *f, uint64_t ino)
{
	struct fs *fs = f->c->fs;
	struct fs_key k = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	const struct btrfs_inode_item *ii;
	struct fs_inode_ref ref;
	struct lrec *m = f->made;
	const uint8_t *data;
	uint32_t size, pos = 0;
	struct fs_path p;
	int ret;

	fs_path_init(&p);
	ret = fs_lookup(fs, f->rootp, &k, &p);
	if (!ret && (data = fs_path_data(&p, &size)) && (ii = fs_inode_item(data, size))) {
		uint32_t mode = get_le32(&ii->mode);

		m[0] = (struct lrec){ .child = ino, .kind = LR_INODE, .nlink = get_le32(&ii->nlink),
				      .index = LR_HAVE_ITEM | (uint64_t)mode << 32, .ftype = mode_to_ftype(mode) };
	} else if (!ret) {
		ret = -EUCLEAN;
	}
	fs_path_release(fs, &p);
	k = (struct fs_key){ ino, BTRFS_INODE_REF_KEY, (uint64_t)-1 };
	fs_path_init(&p);
	if (!ret)
		ret = fs_search_le(fs, f->rootp, &k, &p);
	if (!ret && (data = fs_path_data(&p, &size)) && fs_inode_ref_next(data, size, &pos, &ref) == 1) {
		fs_path_key(&p, &k);
		m[1] = (struct lrec){ .child = ino, .kind = LR_REF, .parent = k.offset, .index = ref.index };
		fill_name(&m[1], ref.name, ref.name_len);
		m[2] = m[1];
		m[2].kind = LR_DIR_PAIR;
		m[2].ftype = m[0].ftype;
		f->nmade = 3;
		f->made_at = 0;
	} else if (!ret) {
		ret = -EUCLEAN;
	}
	fs_path_release(fs, &p);
	return ret;
}

/* The next record of the three sorted streams and of the records made again. */
static int next_link(struct fsr *f, struct lrec *r)
{
	struct xsort *from[3] = { f->links, f->ilinks, f->xlinks }, *min = f->links;
	const struct lrec *least = xsort_peek(min);
	int ret;

	for (int i = 1; i < 3; i++) {
		const struct lrec *p = xsort_peek(from[i]);

		if (p && (!least || lrec_cmp(p, least) < 0)) {
			least = p;
			min = from[i];
		}
	}
	if (f->made_at < f->nmade && (!least || lrec_cmp(&f->made[f->made_at], least) <= 0)) {
		*r = f->made[f->made_at++];
		return 1;
	}
	ret = xsort_next(min, r);
	if (ret != 1 || r->child == f->last_child)
		return ret;
	f->last_child = r->child;
	if (r->kind != LR_INODE && fast_has(&f->fast, r->child) && !remake_fast(f, r->child)) {
		/* r goes among them, in order */
		int at = f->nmade++;

		for (; at > 0 && lrec_cmp(r, &f->made[at - 1]) < 0; at--)
			f->made[at] = f->made[at - 1];
		f->made[at] = *r;
		*r = f->made[f->made_at++];
	}
	return ret;
}

static int merge_links(struct fsr *f)
{
	struct lrec r;
	struct inode_links *il = calloc(1, sizeof(*il));
	struct name_group g;
	int have_il = 0, have_g = 0, root_dir_seen = 0, ret;

	if (!il)
		return -ENOMEM;
	while ((ret = next_link(f, &r)) == 1) {
		if (have_g && (r.child != g.first.child || r.parent != g.first.parent ||
			       r.hash != g.first.hash)) {
			finish_name(f, il, &g);
			have_g = 0;
		}
		if (have_il && r.child != il->ino) {
			finish_links(f, il, &root_dir_seen);
			have_il = 0;
		}
		if (!have_il) {
			memset(il, 0, offsetof(struct inode_links, groups));
			il->ino = r.child;
			have_il = 1;
		}
		switch (r.kind) {
		case LR_INODE:
			il->any = 1;
			il->errors |= (uint32_t)r.index & ~(uint32_t)LR_HAVE_ITEM;
			if (!(r.index & LR_HAVE_ITEM))
				continue;
			il->have_inode = 1;
			il->nlink = r.nlink;
			il->ftype = r.ftype;
			il->mode = (uint32_t)(r.index >> 32);
			continue;
		case LR_ORPHAN:
			il->orphan = 1;
			continue;
		}
		il->any = 1;
		if (!have_g) {
			memset(&g, 0, sizeof(g));
			g.first = r;
			have_g = 1;
		}
		if (r.kind == LR_REF) {
			g.ref++;
			g.ref_index = r.index;
			continue;
		}
		if (r.kind == LR_DIR_ITEM)
			g.item++;
		else {
			g.item += r.kind == LR_DIR_PAIR;
			g.index++;
			g.dir_index = r.index;
		}
		/* the type of each entry must agree; the last one is named */
		if (g.first.kind != LR_REF && r.ftype != g.first.ftype)
			g.ftype_bad = 1;
		g.first.ftype = r.ftype;
		g.first.kind = r.kind;
	}
	if (have_g)
		finish_name(f, il, &g);
	if (have_il)
		finish_links(f, il, &root_dir_seen);
	if (ret >= 0 && !root_dir_seen) {
		struct inode_links none = { .found_link = 1 };

		fix_links(f, f->root_dirid, &none, NULL, I_NO_INODE_ITEM);
		ck_raw(f->c, f->root, f->root_dirid, "%sroot %llu root dir %llu not found", f->prefix,
		       (unsigned long long)f->root, (unsigned long long)f->root_dirid);
	}
	free(il);
	return ret;
}

static int walk_root(struct fsr *f, const struct fs_root *root)
{
	struct fs_walk_ops ops = { .node = fsr_node, .leaf = fsr_leaf, .error = fsr_error };
	int ret;

	inode_start(f, 0);
	ret = fs_tree_walk(f->c->fs, root, &ops, f);
	inode_finish(f);
	return f->err ? f->err : ret;
}

/* A third of the memory of the link records (ordered by child first). */
static struct xsort *link_sorter(struct check_ctx *c)
{
	struct xsort *s = ck_sorter(c, sizeof(struct lrec), lrec_cmp, 3);

	if (s)
		xsort_set_key(s, offsetof(struct lrec, child));
	return s;
}

/* A subvolume, the data reloc tree, or a relocation tree (a subvolume's
 * copy being relocated, reported under the subvolume's number). */
static int check_one_root(struct check_ctx *c, const struct fs_root *root)
{
	int reloc = root->objectid == BTRFS_TREE_RELOC_OBJECTID;
	struct fsr f = { .c = c, .rootp = root, .root = reloc ? root->offset : root->objectid,
			 .prefix = reloc ? "reloc " : "", .accounted = ck_is_fstree(root->objectid) };
	int ret;

	f.root_dirid = get_le64(&root->item.root_dirid);
	if (!f.root_dirid)
		f.root_dirid = BTRFS_FIRST_FREE_OBJECTID;
	f.links = link_sorter(c);
	f.ilinks = link_sorter(c);
	f.xlinks = link_sorter(c);
	ret = f.links && f.ilinks && f.xlinks ? walk_root(&f, root) : -ENOMEM;
	pending_flush_all(&f, 0);
	if (ret >= 0 || ret == -EIO || ret == -EUCLEAN)
		ret = xsort_finish(f.links);
	if (ret >= 0)
		ret = xsort_finish(f.ilinks);
	if (ret >= 0)
		ret = xsort_finish(f.xlinks);
	if (ret >= 0)
		ret = merge_links(&f);
	xsort_free(f.links);
	xsort_free(f.ilinks);
	xsort_free(f.xlinks);
	held_free(&f.held);
	free(f.fast.r);
	return ret < 0 && ret != -EIO && ret != -EUCLEAN ? ret : 0;
}

/* A deleted subvolume still counts in the qgroups until its tree is gone:
 * whole while queued, unknown once partly dropped. */
static int dead_leaf(void *ctx, const struct fs_block *b)
{
	struct fsr *f = ctx;
	uint32_t n = fs_block_nritems(b);

	fsr_node(ctx, b);
	for (uint32_t i = 0; i < n; i++) {
		struct fs_key key;
		struct fs_file_extent fe;
		const uint8_t *data;
		uint32_t size;

		fs_item_key(b, i, &key);
		data = fs_item_data(b, i, &size);
		if (key.type == BTRFS_EXTENT_DATA_KEY && data && fs_file_extent(data, size, &fe) == 0 &&
		    fe.type != BTRFS_FILE_EXTENT_INLINE && fe.disk_bytenr)
			ck_qgroup_add(f->c, fe.disk_bytenr, f->root, fe.disk_num_bytes);
	}
	return 0;
}

static void account_dead_root(struct check_ctx *c, const struct fs_root *root)
{
	struct fsr f = { .c = c, .rootp = root, .root = root->objectid, .accounted = 1 };
	struct fs_walk_ops ops = { .node = fsr_node, .leaf = dead_leaf, .error = fsr_error };

	if (!c->qgroups || !ck_is_fstree(root->objectid))
		return;
	if (get_le64(&root->item.drop_progress.objectid))
		c->qgroup_dropping = root->objectid;
	else
		fs_tree_walk(c->fs, root, &ops, &f);
}

static int fs_root_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		      uint32_t size, void *arg)
{
	struct fs_root root;
	int ret;

	(void)arg;
	if (key->type != BTRFS_ROOT_ITEM_KEY)
		return 0;
	if (!ck_is_fstree(key->objectid) && key->objectid != BTRFS_DATA_RELOC_TREE_OBJECTID &&
	    (!CFG_CHECK_THOROUGH || key->objectid != BTRFS_TREE_RELOC_OBJECTID))
		return 0;
	if (ck_root_from_item(key, data, size, &root) < 0)
		return 0;
	if (get_le64(&root.item.drop_progress.objectid) != 0 ||
	    (get_le32(&root.item.refs) == 0 && key->objectid != BTRFS_FS_TREE_OBJECTID)) {
		account_dead_root(c, &root);
		return 0;       /* deleted, being dropped */
	}
	ret = check_one_root(c, &root);
	if (ret < 0)
		fs_err(&c->fs->err, ret, "cannot sort the links of root %llu in %s",
		       (unsigned long long)key->objectid, c->o->tmpdir ? c->o->tmpdir : "/tmp");
	return ret;
}

int check_fs_roots(struct check_ctx *c)
{
	struct fs_key from = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	int ret = ck_iterate(c, &c->root_tree, &from, fs_root_cb, NULL);

	/* a root tree block that cannot be read is reported: the other stages go on */
	return ret == -ENOMEM ? ret : 0;
}

/* ---- log trees: each item must be valid on its own -------------------------------- */

static int log_root_items_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			     uint32_t size, void *arg)
{
	struct fsr f = { .c = c, .root = key->offset, .prefix = "log " };
	struct fs_root log;

	(void)arg;
	if (key->objectid != BTRFS_TREE_LOG_OBJECTID || key->type != BTRFS_ROOT_ITEM_KEY ||
	    ck_root_from_item(key, data, size, &log) < 0)
		return 0;
	f.rootp = &log;
	walk_root(&f, &log);
	return 0;
}

int check_log_trees(struct check_ctx *c)
{
	return CFG_CHECK_THOROUGH ? ck_iterate_logs(c, log_root_items_cb, NULL) : 0;
}
