/* Stage 4: the fs trees (top level, subvolumes, snapshots, data reloc tree).
 *
 * Items of an fs tree come sorted by inode number, so everything about one
 * inode (its item, refs, directory entries, file extents) is checked while
 * streaming. What crosses inodes (a directory entry names another inode, an
 * inode ref names its directory) becomes link records sorted by the linked
 * inode, then merged: each name needs its dir item, dir index and inode ref,
 * the inode must exist, and its nlink must count its names. */
#include "check_internal.h"
#include "csum.h"
#include "le.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { LR_INODE, LR_ORPHAN, LR_REF, LR_DIR_ITEM, LR_DIR_INDEX };
#define LR_NAME_KEEP 7    /* name prefix kept for messages: records stay 48 bytes */

struct lrec {
	uint64_t child;         /* the inode the name leads to */
	uint64_t parent;        /* the directory (0 for LR_INODE/LR_ORPHAN) */
	uint64_t hash;          /* 64-bit hash of the name */
	uint64_t index;         /* dir index (DIR_INDEX, REF) */
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

/* Everything known about the inode being streamed. */
struct ino_state {
	uint64_t ino;
	int have_item, any;
	uint32_t mode, nlink;
	uint64_t isize, nbytes, flags;
	uint64_t dir_names;             /* sum of dir item + dir index name lengths */
	uint64_t found_size;            /* what nbytes should be */
	uint64_t extent_start, extent_end, first_gap;
	int found_dir_item, found_file_extent;
	int orphan;                     /* nlink 0 with an orphan item: being deleted */
	uint32_t errors;
};

/* Inode error bits, worded like the reference. */
enum {
	IE_NO_INODE_ITEM = 1 << 0, IE_FILE_EXTENT_OVERLAP = 1 << 1, IE_FILE_EXTENT_DISCOUNT = 1 << 2,
	IE_DIR_ISIZE_WRONG = 1 << 3, IE_NBYTES_WRONG = 1 << 4, IE_ODD_DIR_ITEM = 1 << 5,
	IE_ODD_FILE_EXTENT = 1 << 6, IE_BAD_FILE_EXTENT = 1 << 7, IE_LINK_COUNT = 1 << 8,
	IE_NO_ORPHAN = 1 << 9, IE_ODD_FLAGS = 1 << 10, IE_INVALID_MODE = 1 << 11,
	IE_INVALID_NLINK = 1 << 12, IE_INVALID_GEN = 1 << 13, IE_TOO_LARGE = 1 << 14,
	IE_INLINE_RAM = 1 << 15, IE_NOT_LINKED = 1 << 16,
};
static const char *const ie_names[] = {
	"no inode item", "file extent overlap", "file extent discount", "dir isize wrong",
	"nbytes wrong", "odd dir item", "odd file extent", "bad file extent", "link count wrong",
	"no orphan item", "odd inode flags", "invalid inode mode", "directory has invalid nlink",
	"invalid inode generation or transid", "inline file extent too large",
	"inline file extent ram_bytes wrong", "not linked from any directory",
};

struct fsr {
	struct check_ctx *c;
	const struct fs_root *rootp;
	uint64_t root;
	uint64_t root_dirid;
	struct ino_state in;
	struct xsort *links;
	int err;
	uint64_t items;
};

static void report_inode(struct fsr *f, uint64_t ino, uint32_t errors)
{
	char buf[200];
	size_t n = 0;

	if (!errors)
		return;
	buf[0] = 0;
	for (unsigned i = 0; i < sizeof(ie_names) / sizeof(ie_names[0]); i++)
		if (errors & (1u << i))
			n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, ", %s",
					      ie_names[i]);
	ck_err(f->c, f->root, ino, 0, 0, "root %llu inode %llu errors %x%s",
	       (unsigned long long)f->root, (unsigned long long)ino, errors, buf);
}

static void add_link(struct fsr *f, struct lrec *r)
{
	int ret;

	if (f->err)
		return;
	ret = xsort_add(f->links, r);
	if (ret < 0)
		f->err = ret;
}

static uint64_t name_hash64(const char *name, size_t len)
{
	return ((uint64_t)ck_name_hash(name, len) << 32) | crc32c_raw(0x5bd1e995u, name, len);
}

static void fill_name(struct lrec *r, const char *name, uint16_t len)
{
	size_t keep = len < LR_NAME_KEEP ? len : LR_NAME_KEEP;

	r->hash = name_hash64(name, len);
	r->name_len = len;
	memcpy(r->name, name, keep);
	r->name[keep] = 0;
}

static uint8_t mode_to_ftype(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return BTRFS_FT_REG_FILE;
	case S_IFDIR: return BTRFS_FT_DIR;
	case S_IFCHR: return BTRFS_FT_CHRDEV;
	case S_IFBLK: return BTRFS_FT_BLKDEV;
	case S_IFIFO: return BTRFS_FT_FIFO;
	case S_IFSOCK: return BTRFS_FT_SOCK;
	case S_IFLNK: return BTRFS_FT_SYMLINK;
	}
	return BTRFS_FT_UNKNOWN;
}

/* ---- one inode ------------------------------------------------------------------ */

static void inode_finish(struct fsr *f)
{
	struct ino_state *in = &f->in;
	struct check_ctx *c = f->c;
	uint32_t e = in->errors;

	if (!in->any)
		return;
	if (!in->have_item) {
		if (in->ino >= BTRFS_FIRST_FREE_OBJECTID && in->ino <= BTRFS_LAST_FREE_OBJECTID)
			e |= IE_NO_INODE_ITEM;
	} else if (S_ISDIR(in->mode)) {
		if (in->dir_names != in->isize && !in->orphan)
			e |= IE_DIR_ISIZE_WRONG;
		if (in->found_file_extent)
			e |= IE_ODD_FILE_EXTENT;
	} else if (S_ISREG(in->mode) || S_ISLNK(in->mode)) {
		if (in->found_dir_item)
			e |= IE_ODD_DIR_ITEM;
		if (in->nlink > 0 && in->found_size != in->nbytes)
			e |= IE_NBYTES_WRONG;
		if (in->nlink > 0 && !c->no_holes && in->isize &&
		    (in->extent_end < in->isize || in->extent_start != 0 || in->first_gap < in->isize))
			e |= IE_FILE_EXTENT_DISCOUNT;
	}
	report_inode(f, in->ino, e);
}

static void inode_start(struct fsr *f, uint64_t ino)
{
	inode_finish(f);
	memset(&f->in, 0, sizeof(f->in));
	f->in.ino = ino;
	f->in.extent_start = (uint64_t)-1;
	f->in.first_gap = (uint64_t)-1;
}

static int valid_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFCHR: case S_IFBLK:
	case S_IFIFO: case S_IFSOCK: case S_IFLNK:
		return 1;
	}
	return 0;
}

/* An unlinked inode waiting for deletion has an orphan item (sorted at the
 * end of the tree, so looked up directly; such inodes are rare). */
static int has_orphan_item(struct fsr *f, uint64_t ino)
{
	struct fs_key k = { BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino };
	struct fs_path p;
	int ret;

	fs_path_init(&p);
	ret = fs_lookup(f->c->fs, f->rootp, &k, &p);
	fs_path_release(f->c->fs, &p);
	return ret == 0;
}

static void inode_item(struct fsr *f, const uint8_t *data, uint32_t size)
{
	const struct btrfs_inode_item *ii = fs_inode_item(data, size);
	struct ino_state *in = &f->in;
	struct lrec r = { .child = in->ino, .kind = LR_INODE };
	uint64_t limit = f->c->super_gen + 1;

	if (!ii) {
		ck_err(f->c, f->root, in->ino, 0, 0, "root %llu inode %llu: inode item too short (%u bytes)",
		       (unsigned long long)f->root, (unsigned long long)in->ino, size);
		return;
	}
	if (in->have_item) {
		ck_err(f->c, f->root, in->ino, 0, 0, "root %llu inode %llu: duplicate inode item",
		       (unsigned long long)f->root, (unsigned long long)in->ino);
		return;
	}
	in->have_item = 1;
	in->mode = get_le32(&ii->mode);
	in->nlink = get_le32(&ii->nlink);
	in->isize = get_le64(&ii->size);
	in->nbytes = get_le64(&ii->nbytes);
	in->flags = get_le64(&ii->flags);
	if (!valid_mode(in->mode))
		in->errors |= IE_INVALID_MODE;
	if (S_ISLNK(in->mode) && (in->flags & (INODE_FLAG_IMMUTABLE | INODE_FLAG_APPEND)))
		in->errors |= IE_ODD_FLAGS;
	if (S_ISDIR(in->mode) && in->nlink >= 2)
		in->errors |= IE_INVALID_NLINK;
	if (get_le64(&ii->generation) > limit || get_le64(&ii->transid) > limit)
		in->errors |= IE_INVALID_GEN;
	if (in->nlink == 0)
		in->orphan = has_orphan_item(f, in->ino);
	r.nlink = in->nlink;
	r.ftype = mode_to_ftype(in->mode);
	add_link(f, &r);
}

static void inode_refs(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct fs_inode_ref ref;
	uint32_t pos = 0;
	int ret;

	for (;;) {
		struct lrec r = { .child = key->objectid, .kind = LR_REF };

		ret = key->type == BTRFS_INODE_REF_KEY ? fs_inode_ref_next(data, size, &pos, &ref)
						       : fs_inode_extref_next(data, size, &pos, &ref);
		if (ret <= 0)
			break;
		r.parent = key->type == BTRFS_INODE_REF_KEY ? key->offset : ref.parent;
		r.index = ref.index;
		fill_name(&r, ref.name, ref.name_len);
		add_link(f, &r);
	}
	if (ret < 0)
		ck_err(f->c, f->root, key->objectid, 0, 0,
		       "root %llu inode %llu: corrupt inode ref item (key offset %llu)",
		       (unsigned long long)f->root, (unsigned long long)key->objectid,
		       (unsigned long long)key->offset);
}

static void dir_entries(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct fs_dir_entry de;
	uint32_t pos = 0;
	int ret, count = 0;

	while ((ret = fs_dir_entry_next(data, size, &pos, &de)) == 1) {
		struct lrec r = { .parent = key->objectid, .ftype = de.type };

		count++;
		if (key->type == BTRFS_XATTR_ITEM_KEY) {
			if (ck_name_hash(de.name, de.name_len) != (uint32_t)key->offset)
				ck_err(f->c, f->root, key->objectid, 0, 0,
				       "root %llu inode %llu: xattr item hash mismatch (key offset %llu)",
				       (unsigned long long)f->root, (unsigned long long)key->objectid,
				       (unsigned long long)key->offset);
			continue;
		}
		f->in.dir_names += de.name_len;
		f->in.found_dir_item = 1;
		if (f->in.orphan)
			continue;       /* a deleted directory's leftovers */
		if (key->type == BTRFS_DIR_ITEM_KEY &&
		    ck_name_hash(de.name, de.name_len) != (uint32_t)key->offset)
			ck_err(f->c, f->root, key->objectid, 0, 0,
			       "root %llu dir %llu: dir item name hash mismatch (key offset %llu)",
			       (unsigned long long)f->root, (unsigned long long)key->objectid,
			       (unsigned long long)key->offset);
		if (key->type == BTRFS_DIR_INDEX_KEY && count > 1)
			ck_err(f->c, f->root, key->objectid, 0, 0,
			       "root %llu dir %llu: dir index %llu holds more than one entry",
			       (unsigned long long)f->root, (unsigned long long)key->objectid,
			       (unsigned long long)key->offset);
		if (de.location.type == BTRFS_ROOT_ITEM_KEY)
			continue;       /* a subvolume: checked with the root refs */
		if (de.location.type != BTRFS_INODE_ITEM_KEY) {
			ck_err(f->c, f->root, key->objectid, 0, 0,
			       "root %llu dir %llu: entry points to a key of type %u",
			       (unsigned long long)f->root, (unsigned long long)key->objectid,
			       de.location.type);
			continue;
		}
		r.child = de.location.objectid;
		r.kind = key->type == BTRFS_DIR_ITEM_KEY ? LR_DIR_ITEM : LR_DIR_INDEX;
		r.index = key->type == BTRFS_DIR_INDEX_KEY ? key->offset : 0;
		fill_name(&r, de.name, de.name_len);
		add_link(f, &r);
	}
	if (ret < 0)
		ck_err(f->c, f->root, key->objectid, 0, 0,
		       "root %llu inode %llu: corrupt dir item (key type %u offset %llu)",
		       (unsigned long long)f->root, (unsigned long long)key->objectid, key->type,
		       (unsigned long long)key->offset);
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

static void file_extent(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct ino_state *in = &f->in;
	struct fs_file_extent fe;
	uint32_t sectorsize = f->c->fs->sectorsize, mask = sectorsize - 1;
	uint64_t num_bytes;

	in->found_file_extent = 1;
	if (in->extent_start == (uint64_t)-1) {
		in->extent_start = key->offset;
		in->extent_end = key->offset;
	}
	if (in->extent_end > key->offset)
		in->errors |= IE_FILE_EXTENT_OVERLAP;
	else if (in->extent_end < key->offset && in->first_gap == (uint64_t)-1)
		in->first_gap = in->extent_end;
	if (fs_file_extent(data, size, &fe) < 0) {
		in->errors |= IE_BAD_FILE_EXTENT;
		return;
	}
	if (fe.type == BTRFS_FILE_EXTENT_INLINE) {
		uint32_t max_inline = f->c->fs->nodesize - sizeof(struct btrfs_header) -
				      sizeof(struct btrfs_item) - FS_FILE_EXTENT_INLINE_START;

		if (max_inline > mask)
			max_inline = mask;
		num_bytes = fe.ram_bytes;
		if (!num_bytes)
			in->errors |= IE_BAD_FILE_EXTENT;
		if (fe.compression) {
			if (fe.inline_len > max_inline || num_bytes > sectorsize)
				in->errors |= IE_TOO_LARGE;
		} else {
			if (num_bytes > max_inline)
				in->errors |= IE_TOO_LARGE;
			if (fe.inline_len != num_bytes)
				in->errors |= IE_INLINE_RAM;
		}
		in->found_size += num_bytes;
		in->extent_end = key->offset + ((num_bytes + mask) & ~(uint64_t)mask);
		return;
	}
	if (fe.type != BTRFS_FILE_EXTENT_REG && fe.type != BTRFS_FILE_EXTENT_PREALLOC) {
		in->errors |= IE_BAD_FILE_EXTENT;
		in->extent_end = key->offset;
		return;
	}
	num_bytes = fe.num_bytes;
	if (!num_bytes || (num_bytes & mask) || num_bytes + fe.offset > fe.ram_bytes ||
	    (key->offset & mask))
		in->errors |= IE_BAD_FILE_EXTENT;
	if (fe.type == BTRFS_FILE_EXTENT_PREALLOC &&
	    (fe.compression || fe.encryption || fe.other_encoding))
		in->errors |= IE_BAD_FILE_EXTENT;
	if (fe.compression && (in->flags & INODE_FLAG_NODATASUM))
		in->errors |= IE_BAD_FILE_EXTENT;
	if (fe.disk_bytenr) {
		in->found_size += num_bytes;
		ck_qgroup_add(f->c, fe.disk_bytenr, f->root, fe.disk_num_bytes);
	}
	in->extent_end = key->offset + num_bytes;
	/* Data reloc inodes copy whole extents, written or not: no csums promised. */
	if (fe.disk_bytenr && fe.type == BTRFS_FILE_EXTENT_REG && in->have_item &&
	    f->root != BTRFS_DATA_RELOC_TREE_OBJECTID) {
		int no_csum = (in->flags & INODE_FLAG_NODATASUM) != 0;

		if (fe.compression)
			need_csum(f, fe.disk_bytenr, fe.disk_num_bytes, no_csum);
		else
			need_csum(f, fe.disk_bytenr + fe.offset, num_bytes, no_csum);
	}
}

static int fs_item_type_known(uint8_t type)
{
	switch (type) {
	case BTRFS_INODE_ITEM_KEY: case BTRFS_INODE_REF_KEY: case BTRFS_INODE_EXTREF_KEY:
	case BTRFS_XATTR_ITEM_KEY: case BTRFS_VERITY_DESC_ITEM_KEY: case BTRFS_VERITY_MERKLE_ITEM_KEY:
	case BTRFS_ORPHAN_ITEM_KEY: case BTRFS_DIR_LOG_ITEM_KEY: case BTRFS_DIR_LOG_INDEX_KEY:
	case BTRFS_DIR_ITEM_KEY: case BTRFS_DIR_INDEX_KEY: case BTRFS_EXTENT_DATA_KEY:
		return 1;
	}
	return 0;
}

static void fs_item(struct fsr *f, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	if (key->objectid == BTRFS_ORPHAN_OBJECTID && key->type == BTRFS_ORPHAN_ITEM_KEY) {
		struct lrec r = { .child = key->offset, .kind = LR_ORPHAN };

		inode_finish(f);
		f->in.any = 0;
		add_link(f, &r);
		return;
	}
	if (!fs_item_type_known(key->type)) {
		ck_err(f->c, f->root, key->objectid, 0, 0,
		       "root %llu has an item of unknown type: key (%llu %u %llu)",
		       (unsigned long long)f->root, (unsigned long long)key->objectid, key->type,
		       (unsigned long long)key->offset);
		return;
	}
	if (key->objectid != f->in.ino || !f->in.any)
		inode_start(f, key->objectid);
	f->in.any = 1;
	switch (key->type) {
	case BTRFS_INODE_ITEM_KEY:
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

	ck_qgroup_add(f->c, b->bytenr, f->root, b->size);
	return 0;
}

static int fsr_leaf(void *ctx, const struct fs_block *b)
{
	struct fsr *f = ctx;
	uint32_t n = fs_block_nritems(b);

	ck_qgroup_add(f->c, b->bytenr, f->root, b->size);
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
	ck_fs_error(f->c, &copy);
}

/* ---- the links, merged per inode ------------------------------------------------ */

struct name_group {
	struct lrec first;
	int ref, item, index;
	uint64_t ref_index, dir_index;
	int ftype_bad;
};

static void finish_name(struct fsr *f, const struct name_group *g, int have_inode, uint8_t ftype)
{
	char why[120];
	size_t n = 0;
	int self = g->first.parent == g->first.child && g->first.child == f->root_dirid;
	uint32_t errs = 0;

	why[0] = 0;
	if (self)
		return;         /* the ".." ref of a tree's top directory */
	if (!g->item)
		errs |= 1, n += (size_t)snprintf(why + n, sizeof(why) - n, ", no dir item");
	if (!g->index && n < sizeof(why))
		errs |= 2, n += (size_t)snprintf(why + n, sizeof(why) - n, ", no dir index");
	if (!g->ref && n < sizeof(why))
		errs |= 4, n += (size_t)snprintf(why + n, sizeof(why) - n, ", no inode ref");
	if (g->ref && g->index && g->ref_index != g->dir_index && n < sizeof(why))
		errs |= 8, n += (size_t)snprintf(why + n, sizeof(why) - n, ", index mismatch");
	if (have_inode && (g->item || g->index) && (g->ftype_bad || g->first.ftype != ftype) &&
	    n < sizeof(why))
		errs |= 0x80, n += (size_t)snprintf(why + n, sizeof(why) - n, ", filetype mismatch");
	if (!errs)
		return;
	ck_err(f->c, f->root, g->first.child, 0, 0,
	       "root %llu unresolved ref dir %llu index %llu namelen %u name %s%s filetype %u errors %x%s",
	       (unsigned long long)f->root, (unsigned long long)g->first.parent,
	       (unsigned long long)(g->index ? g->dir_index : g->ref_index), g->first.name_len,
	       g->first.name, g->first.name_len > LR_NAME_KEEP ? "..." : "", g->first.ftype, errs, why);
}

struct inode_links {
	uint64_t ino;
	int have_inode, orphan;
	uint32_t nlink;
	uint8_t ftype;
	uint64_t refs;
	int any_dirent;
};

static void finish_links(struct fsr *f, const struct inode_links *il)
{
	uint32_t e = 0;

	if (il->ino < BTRFS_FIRST_FREE_OBJECTID || il->ino > BTRFS_LAST_FREE_OBJECTID)
		return;
	if (!il->have_inode) {
		if (il->refs || il->any_dirent)
			report_inode(f, il->ino, IE_NO_INODE_ITEM);
		return;
	}
	if (f->root == BTRFS_DATA_RELOC_TREE_OBJECTID)
		return;
	if (il->nlink == 0) {
		if (!il->orphan)
			e |= IE_NO_ORPHAN;
		if (il->refs)
			e |= IE_LINK_COUNT;
	} else if (il->ftype == BTRFS_FT_DIR) {
		if (il->ino != f->root_dirid && il->refs != 1)
			e |= il->refs ? IE_LINK_COUNT : IE_NOT_LINKED;
	} else if (il->refs != il->nlink) {
		e |= il->refs ? IE_LINK_COUNT : IE_NOT_LINKED;
	}
	report_inode(f, il->ino, e);
}

static int merge_links(struct fsr *f)
{
	struct lrec r;
	struct inode_links il = { 0 };
	struct name_group g;
	int have_il = 0, have_g = 0, ret;

	while ((ret = xsort_next(f->links, &r)) == 1) {
		if (have_g && (r.child != g.first.child || r.parent != g.first.parent ||
			       r.hash != g.first.hash)) {
			finish_name(f, &g, il.have_inode, il.ftype);
			have_g = 0;
		}
		if (have_il && r.child != il.ino) {
			finish_links(f, &il);
			have_il = 0;
		}
		if (!have_il) {
			memset(&il, 0, sizeof(il));
			il.ino = r.child;
			have_il = 1;
		}
		switch (r.kind) {
		case LR_INODE:
			il.have_inode = 1;
			il.nlink = r.nlink;
			il.ftype = r.ftype;
			continue;
		case LR_ORPHAN:
			il.orphan = 1;
			continue;
		}
		if (!have_g) {
			memset(&g, 0, sizeof(g));
			g.first = r;
			have_g = 1;
		}
		if (r.kind == LR_REF) {
			g.ref++;
			g.ref_index = r.index;
			il.refs++;
		} else {
			il.any_dirent = 1;
			if (r.kind == LR_DIR_ITEM)
				g.item++;
			else {
				g.index++;
				g.dir_index = r.index;
			}
			if (g.first.kind == LR_REF)
				g.first.ftype = r.ftype, g.first.kind = r.kind;
			else if (r.ftype != g.first.ftype)
				g.ftype_bad = 1;
		}
	}
	if (have_g)
		finish_name(f, &g, il.have_inode, il.ftype);
	if (have_il)
		finish_links(f, &il);
	return ret;
}

static int check_one_root(struct check_ctx *c, const struct fs_root *root)
{
	struct fsr f = { .c = c, .rootp = root, .root = root->objectid };
	struct fs_walk_ops ops = { .node = fsr_node, .leaf = fsr_leaf, .error = fsr_error };
	int ret;

	f.root_dirid = get_le64(&root->item.root_dirid);
	if (!f.root_dirid)
		f.root_dirid = BTRFS_FIRST_FREE_OBJECTID;
	f.links = ck_sorter(c, sizeof(struct lrec), lrec_cmp, 9);
	if (!f.links)
		return -ENOMEM;
	inode_start(&f, 0);
	ret = fs_tree_walk(c->fs, root, &ops, &f);
	inode_finish(&f);
	if (f.err)
		ret = f.err;
	if (ret >= 0 || ret == -EIO || ret == -EUCLEAN)
		ret = xsort_finish(f.links);
	if (ret >= 0)
		ret = merge_links(&f);
	xsort_free(f.links);
	return ret < 0 && ret != -EIO && ret != -EUCLEAN ? ret : 0;
}

static int fs_root_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		      uint32_t size, void *arg)
{
	struct fs_root root;
	int ret;

	(void)arg;
	if (key->type != BTRFS_ROOT_ITEM_KEY)
		return 0;
	if (!ck_is_fstree(key->objectid) && key->objectid != BTRFS_DATA_RELOC_TREE_OBJECTID)
		return 0;
	memset(&root, 0, sizeof(root));
	if (fs_root_item(data, size, &root.item) < 0)
		return 0;
	if (get_le64(&root.item.drop_progress.objectid) != 0 ||
	    (get_le32(&root.item.refs) == 0 && key->objectid != BTRFS_FS_TREE_OBJECTID))
		return 0;       /* deleted, being dropped */
	if (root.item.level >= BTRFS_MAX_LEVEL)
		return 0;
	root.objectid = key->objectid;
	root.offset = key->offset;
	root.bytenr = get_le64(&root.item.bytenr);
	root.generation = get_le64(&root.item.generation);
	root.level = root.item.level;
	root.item_size = size;
	ret = check_one_root(c, &root);
	if (ret < 0)
		fs_err(&c->fs->err, ret, "cannot sort the links of root %llu in %s",
		       (unsigned long long)key->objectid, c->o->tmpdir ? c->o->tmpdir : "/tmp");
	return ret;
}

int check_fs_roots(struct check_ctx *c)
{
	struct fs_key from = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };

	return ck_iterate(c, &c->root_tree, &from, fs_root_cb, NULL);
}
