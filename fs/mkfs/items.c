//build:Oz
/* Subvolume tree items of mkfs in bounded memory.
 *
 * Items go through an external sorter (xsort.h) as they are made, each with a
 * sequence number so that equal keys keep the order they were added in. Settling
 * reads them back in (tree, key) order, joins equal keys into one item (hash collisions of
 * names, several names of an inode in one directory), moves INODE_REF names that do
 * not fit a leaf into INODE_EXTREF items, and counts the leaves of each tree. The
 * tree writer then reads the sorter again from the start (no copy of the final
 * items is kept: settling is cheap, writing and reading a copy is not), one tree
 * after the other.
 * RAM: the sorter's budget, one joined item and the extrefs of one inode. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/xsort.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FS_ITEMS_MEM_DEFAULT (64u << 20)

/* Record in the sorter: this header, then size bytes of item data. */
struct rec_hdr {
	uint64_t tree, objectid, offset, seq;
	uint32_t size;
	uint8_t type;
};

struct fs_items {
	struct xsort *sorter;
	uint64_t seq;
	const char *tmpdir;
	uint8_t *rec;               /* one sorter record */
	/* joining */
	uint8_t *join;
	size_t join_cap;
	struct fs_key key;
	uint32_t size;
	/* extrefs of the inode being read, emitted after its INODE_REFs */
	struct item_list ext;
	size_t ext_pos;
	int held;                   /* key/join hold an item read while extrefs wait */
	uint32_t room;              /* largest item data in a leaf */
	int extref_ok;
	uint64_t bad_ino;           /* too many names, no extref feature */
	uint64_t tree;              /* of the items being settled */
	uint64_t *trees;            /* the ids of the trees, in the sorter's order */
	uint64_t *counts;           /* final items of each tree */
	int seg;                    /* index of the tree being settled */
	uint64_t left;              /* items of the tree being read */
};

/* The sorter's records are 8-byte aligned: the fields are read in place (the hottest
 * function of mkfs --rootdir). */
static int rec_cmp(const void *a, const void *b)
{
	const struct rec_hdr *x = a, *y = b;

	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	if (x->objectid != y->objectid)
		return x->objectid < y->objectid ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct fs_items *fs_items_new(size_t mem, const char *tmpdir)
{
	struct fs_items *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->tmpdir = tmpdir ? tmpdir : "/tmp";
	f->sorter = xsort_new(0, rec_cmp, mem ? mem : FS_ITEMS_MEM_DEFAULT, f->tmpdir);
	f->rec = malloc(XSORT_MAX_REC);
	if (!f->sorter || !f->rec) {
		fs_items_free(f);
		return NULL;
	}
	return f;
}

void fs_items_free(struct fs_items *f)
{
	if (!f)
		return;
	xsort_free(f->sorter);
	free(f->rec);
	free(f->join);
	free(f->trees);
	free(f->counts);
	items_free(&f->ext);
	free(f);
}

int fs_items_add(struct fs_items *f, uint64_t tree, uint64_t objectid, uint8_t type,
		 uint64_t offset, const void *data, uint32_t size)
{
	struct rec_hdr h;

	memset(&h, 0, sizeof(h));
	h.tree = tree;
	h.objectid = objectid;
	h.offset = offset;
	h.seq = f->seq++;
	h.size = size;
	h.type = type;

	if (sizeof(h) + size > XSORT_MAX_REC)
		return -E2BIG;
	memcpy(f->rec, &h, sizeof(h));
	if (size)
		memcpy(f->rec + sizeof(h), data, size);
	return xsort_add_var(f->sorter, f->rec, sizeof(h) + size);
}

static int join_append(struct fs_items *f, const void *data, uint32_t size)
{
	if ((size_t)f->size + size > UINT32_MAX)
		return -E2BIG;
	if (f->size + size > f->join_cap) {
		size_t nc = f->join_cap ? f->join_cap : 4096;
		void *p;

		while (nc < f->size + size)
			nc *= 2;
		if (!(p = realloc(f->join, nc)))
			return -ENOMEM;
		f->join = p;
		f->join_cap = nc;
	}
	memcpy(f->join + f->size, data, size);
	f->size += size;
	return 0;
}

/* The next item of tree f->tree with all records of its key joined into f->join:
 * 1, 0 at the end of the tree, negative errno. */
static int next_joined(struct fs_items *f)
{
	struct rec_hdr h;
	const void *p;
	int ret, first = 1;

	f->size = 0;
	while ((p = xsort_peek(f->sorter))) {
		struct fs_key k;

		memcpy(&h, p, sizeof(h));
		k = (struct fs_key){ h.objectid, h.type, h.offset };
		if (h.tree != f->tree || (!first && fs_key_cmp(&k, &f->key)))
			break;
		f->key = k;
		first = 0;
		ret = join_append(f, (const uint8_t *)p + sizeof(h), h.size);
		if (ret < 0 || (ret = xsort_next(f->sorter, NULL)) < 0)
			return ret;
	}
	return first ? 0 : 1;
}

/* An INODE_REF too large for a leaf keeps the names that fit (the first ones); the
 * rest become INODE_EXTREF items keyed by a hash of the parent and the name, as
 * the kernel does with the extref feature. */
static int split_inode_ref(struct fs_items *f)
{
	uint64_t parent = f->key.offset, ino = f->key.objectid;
	uint32_t pos = 0, keep = 0;

	if (!f->extref_ok) {
		f->bad_ino = ino;
		return -EMLINK;
	}
	while (pos + 10 <= f->size) {
		const uint8_t *ref = f->join + pos;
		uint16_t len = get_le16(ref + 8);
		uint32_t rsize = 10 + len;

		if (keep == pos && keep + rsize <= f->room) {
			keep += rsize;
		} else {
			uint8_t buf[sizeof(struct btrfs_inode_extref) + BTRFS_NAME_LEN_MAX];
			struct btrfs_inode_extref *x = (struct btrfs_inode_extref *)buf;

			put_le64(&x->parent_objectid, parent);
			put_le64(&x->index, get_le64(ref));
			put_le16(&x->name_len, len);
			memcpy(buf + sizeof(*x), ref + 10, len);
			if (!items_add(&f->ext, ino, BTRFS_INODE_EXTREF_KEY,
				       crc32c_raw((uint32_t)parent, ref + 10, len), buf,
				       (uint32_t)(sizeof(*x) + len)))
				return -ENOMEM;
		}
		pos += rsize;
	}
	f->size = keep;
	return 0;
}

/* Extrefs waiting: they go out once the stream is past the INODE_EXTREF keys of
 * their inode. */
static int ext_due(const struct fs_items *f, int have_item)
{
	const struct fs_key *last;

	if (!f->ext.n)
		return 0;
	if (!have_item)
		return 1;
	last = &f->ext.v[0].key;
	return f->key.objectid > last->objectid ||
	       (f->key.objectid == last->objectid && f->key.type > BTRFS_INODE_EXTREF_KEY);
}

/* The final items, in key order. */
static int final_next(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	struct fs_items *f = ctx;
	int ret;

	if (f->ext_pos < f->ext.n) {
		const struct bitem *it = &f->ext.v[f->ext_pos++];

		*key = it->key;
		*data = item_data(&f->ext, it);
		*size = it->size;
		return 1;
	}
	if (f->ext.n) {
		items_free(&f->ext);
		f->ext_pos = 0;
	}
	if (f->held) {
		f->held = 0;
		ret = 1;
	} else {
		ret = next_joined(f);
		if (ret < 0)
			return ret;
	}
	if (ext_due(f, ret)) {
		items_sort(&f->ext);
		if (items_merge_equal(&f->ext))
			return -ENOMEM;
		f->held = ret;
		return final_next(f, key, data, size);
	}
	if (!ret)
		return 0;
	if (f->key.type == BTRFS_INODE_REF_KEY && f->size > f->room &&
	    (ret = split_inode_ref(f)) < 0)
		return ret;
	*key = f->key;
	*data = f->join;
	*size = f->size;
	return 1;
}

/* final_next, the items counted. */
static int count_next(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	struct fs_items *f = ctx;
	int ret = final_next(f, key, data, size);

	if (ret == 1)
		f->counts[f->seg]++;
	return ret;
}

int fs_items_settle(struct mkfs_ctx *c, struct tree_shape *shapes, int ntrees)
{
	struct fs_items *f = c->fs;
	struct item_source src = { count_next, f };
	int ret = 0;

	f->room = c->cfg->nodesize - (uint32_t)(sizeof(struct btrfs_header) + sizeof(struct btrfs_item));
	f->extref_ok = !!(c->cfg->incompat & BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF);
	f->counts = calloc((size_t)ntrees, sizeof(*f->counts));
	f->trees = calloc((size_t)ntrees, sizeof(*f->trees));
	if (!f->counts || !f->trees)
		return mkfs_fail(c, "out of memory");
	ret = xsort_finish(f->sorter);
	for (int i = 0; i < ntrees && ret >= 0; i++) {
		f->tree = f->trees[i] = c->sv[i].id;
		f->seg = i;
		ret = tree_shape_source(&src, c->cfg->nodesize, &shapes[i]);
		if (ret == -1)
			return mkfs_fail(c, "an item of the fs tree does not fit in a node");
		if (ret == -EMLINK)
			return mkfs_fail(c, "too many names for inode %llu in one directory (needs the extref feature)",
					 (unsigned long long)f->bad_ino);
	}
	if (ret >= 0)
		ret = xsort_rewind(f->sorter);
	if (ret < 0)
		return mkfs_fail(c, "cannot sort the items in %s: %s", f->tmpdir, strerror(-ret));
	return 0;
}

/* final_next, at most the items counted for the tree. */
static int again_next(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	struct fs_items *f = ctx;

	if (!f->left)
		return 0;
	f->left--;
	return final_next(f, key, data, size);
}

struct item_source fs_items_source(struct fs_items *f, int i)
{
	f->tree = f->trees[i];
	f->left = f->counts[i];
	return (struct item_source){ again_next, f };
}
