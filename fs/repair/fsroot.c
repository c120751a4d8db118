//build:Oz
/* Repair of subvolume trees: an inode made to say what its items say, names completed
 * (dir item, dir index and inode ref) or removed, inodes nothing names linked into
 * lost+found. Each fix works from the items as the transaction has them. */
#include "config.h"
#if CFG_CHECK_REPAIR
#include "internal.h"
#include "fs/write/build.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/vec.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DIR_ITEM_SIZE ((uint32_t)sizeof(struct btrfs_dir_item))
#define REF_SIZE ((uint32_t)sizeof(struct btrfs_inode_ref))
#define LOST_FOUND "lost+found"

struct name {
	char s[BTRFS_NAME_LEN_MAX + 24];
	uint16_t len;
	uint8_t type;
	uint64_t index;
	int subvol;                     /* the entry names a subvolume's root item */
};

/* ---- items ------------------------------------------------------------------------ */

/* A copy of the data of item key of tree (freed by the caller): 0, or -ENOENT... */
static int item_copy(struct fs *fs, uint64_t tree, const struct fs_key *key, uint8_t **buf, uint32_t *size)
{
	struct fs_root r;
	struct fs_path p;
	const uint8_t *d;
	int ret = fs_root_lookup(fs, tree, &r);

	if (!ret)
		ret = fs_lookup(fs, &r, key, &p);
	if (ret)
		return ret;
	d = fs_path_data(&p, size);
	*buf = malloc(*size + 1u);
	if (*buf)
		memcpy(*buf, d, *size);
	fs_path_release(fs, &p);
	return *buf ? 0 : fs_err(&fs->err, -ENOMEM, "out of memory");
}

/* Appends to the item, or makes it (names sharing a dir item hash or an inode's parent). */
static int item_append(struct fs *fs, uint64_t tree, const struct fs_key *key, const void *data, uint32_t len)
{
	uint8_t *old;
	uint32_t size;
	int ret = item_copy(fs, tree, key, &old, &size);

	if (ret == -ENOENT)
		return fs_item_insert(fs, tree, key, data, len);
	if (ret)
		return ret;
	old = realloc(old, size + len);
	if (!old)
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	memcpy(old + size, data, len);
	ret = fs_item_replace(fs, tree, key, old, size + len);
	free(old);
	return ret;
}

/* Takes len bytes at pos out of the item (the item goes when nothing is left). */
static int item_cut(struct fs *fs, uint64_t tree, const struct fs_key *key, uint32_t pos, uint32_t len)
{
	uint8_t *d;
	uint32_t size;
	int ret = item_copy(fs, tree, key, &d, &size);

	if (ret)
		return ret;
	if (pos > size || len > size - pos) {
		free(d);
		return fs_err(&fs->err, -EUCLEAN, "item (%llu %u %llu): %u bytes at %u past its %u",
			      (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset, len,
			      pos, size);
	}
	if (pos + len >= size && !pos) {
		ret = fs_item_delete(fs, tree, key);
	} else {
		memmove(d + pos, d + pos + len, size - pos - len);
		ret = fs_item_replace(fs, tree, key, d, size - len);
	}
	free(d);
	return ret;
}

int leaf_copy(struct fs *fs, uint64_t bytenr, uint8_t *leaf, int good_only)
{
	const struct btrfs_header *h = (const void *)leaf;
	uint8_t csum[CSUM_MAX_SIZE];
	int n = fs_num_copies(fs, bytenr), pass, m;
	struct fs_block *made = fs_tx_new_block(fs, bytenr);

	if (made) {         /* an earlier round's leaf: not on the disk yet */
		memcpy(leaf, made->data, fs->nodesize);
		fs_block_put(fs, made);
		return h->level ? -EUCLEAN : 0;
	}
	for (pass = 0; pass < 2 - !!good_only; pass++)
		for (m = 1; m <= n; m++)
			if (!fs_read_logical(fs, bytenr, leaf, fs->nodesize, m) && !h->level &&
			    get_le64(&h->bytenr) == bytenr && !memcmp(h->fsid, fs->meta_uuid, BTRFS_FSID_SIZE) &&
			    (pass || (!csum_compute(fs->csum_type, leaf + BTRFS_CSUM_START,
						    fs->nodesize - BTRFS_CSUM_START, csum) &&
				      !memcmp(csum, h->csum, csum_size(fs->csum_type)))))
				return 0;
	return -EUCLEAN;
}

/* Whether an item's data reads as what its key type holds, to its last byte, for the
 * types of subvolume trees whose data tells them apart (other types: never). */
static int data_fits_type(uint8_t type, const uint8_t *data, uint32_t size)
{
	struct fs_file_extent fe;
	struct fs_dir_entry de;
	struct fs_inode_ref r;
	uint32_t pos = 0;
	int got = 0, ret;

	switch (type) {
	case BTRFS_INODE_ITEM_KEY:
		return size == sizeof(struct btrfs_inode_item);
	case BTRFS_EXTENT_DATA_KEY:
		return fs_file_extent(data, size, &fe) == 0 &&
		       (fe.type == BTRFS_FILE_EXTENT_INLINE || size == sizeof(struct btrfs_file_extent_item));
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
	case BTRFS_XATTR_ITEM_KEY:
		while ((ret = fs_dir_entry_next(data, size, &pos, &de)) == 1)
			got = 1;
		return got && !ret && pos == size;
	case BTRFS_INODE_REF_KEY:
		while ((ret = fs_inode_ref_next(data, size, &pos, &r)) == 1)
			got = 1;
		return got && !ret && pos == size;
	default:
		return 0;
	}
}

/* Item i, whose data ends short of where the item before it starts (expect), was moved
 * with the items after it, a gap left before them (btrfs-corrupt-block -f shift_items),
 * rather than its size damaged: its data reads as its type's at its size and not at the
 * size that would close the gap. */
static int moved_with_the_rest(const struct btrfs_item *it, uint32_t i, uint32_t expect, uint32_t space)
{
	uint32_t off = get_le32(&it[i].offset), size = get_le32(&it[i].size);
	const uint8_t *data = (const uint8_t *)it;

	return (uint64_t)off + size <= space && off < expect && data_fits_type(it[i].key.type, data + off, size) &&
	       !data_fits_type(it[i].key.type, data + off, expect - off);
}

/* An item whose offset or size field was damaged shows in the chain btrfs packs item
 * data in (each item's ends where the one before it starts, the first's at the leaf's
 * end): the field that makes the chain whole again, through the item after it, is put
 * back (the last item's is left: either field would do). Items moved together are
 * left as they are: the leaf is packed anew. */
static void mend_item_chain(uint8_t *leaf, uint32_t nodesize)
{
	struct btrfs_item *it = (void *)(leaf + sizeof(struct btrfs_header));
	uint32_t space = nodesize - sizeof(struct btrfs_header), expect = space;
	uint32_t n = get_le32(&((struct btrfs_header *)leaf)->nritems);

	if (n > space / sizeof(*it))
		n = space / sizeof(*it);
	for (uint32_t i = 0; i + 1 < n; i++) {
		uint32_t off = get_le32(&it[i].offset), size = get_le32(&it[i].size);
		uint64_t next_end = (uint64_t)get_le32(&it[i + 1].offset) + get_le32(&it[i + 1].size);

		if ((uint64_t)off + size == expect)
			;
		else if (size <= expect && next_end == expect - size)
			put_le32(&it[i].offset, expect - size);         /* its offset was damaged */
		else if (off < expect && next_end == off && !moved_with_the_rest(it, i, expect, space))
			put_le32(&it[i].size, expect - off);            /* its size was */
		else if (!(off < expect && next_end == off))
			return;
		expect = get_le32(&it[i].offset);
	}
}

/* The key offset of a DIR_ITEM or XATTR_ITEM is the hash of its (first) name: the key
 * with that offset, or k itself for other types. */
static struct fs_key key_by_name(struct fs_key k, const uint8_t *data, uint32_t size)
{
	struct fs_dir_entry de;
	uint32_t pos = 0;

	if ((k.type == BTRFS_DIR_ITEM_KEY || k.type == BTRFS_XATTR_ITEM_KEY) &&
	    fs_dir_entry_next(data, size, &pos, &de) == 1)
		k.offset = ck_name_hash(de.name, de.name_len);
	return k;
}

/* Where a file extent of inode ino after item a starts: the end of a's range when a is
 * one of that inode's file extents, else 0 (its first). */
static uint64_t file_extent_after(const uint8_t *leaf, const struct btrfs_item *a, uint32_t space, uint64_t ino)
{
	uint32_t off = get_le32(&a->offset), size = get_le32(&a->size);
	struct fs_file_extent fe;
	struct fs_key k;

	fs_key_from_disk(&k, &a->key);
	if (k.objectid != ino || k.type != BTRFS_EXTENT_DATA_KEY)
		return 0;
	if ((uint64_t)off + size > space ||
	    fs_file_extent(leaf + sizeof(struct btrfs_header) + off, size, &fe))
		return k.offset;
	return k.offset + (fe.type == BTRFS_FILE_EXTENT_INLINE ? fe.ram_bytes : fe.num_bytes);
}

/* An item whose key alone breaks the order of its neighbours (which are in order) had
 * its objectid damaged when one of theirs puts it between them and its data reads as
 * its type's: that objectid is put back (the longest run in order would drop it). A
 * name item's key offset goes back to its name's hash first (damaged with the objectid:
 * the name would be refused); a file extent's offset alone damaged goes back to where
 * the inode's extent before it ends (btrfs-corrupt-block -K KEY -f offset). */
static void mend_item_keys(uint8_t *leaf, uint32_t nodesize)
{
	struct btrfs_item *it = (void *)(leaf + sizeof(struct btrfs_header));
	uint32_t space = nodesize - sizeof(struct btrfs_header);
	uint32_t n = get_le32(&((struct btrfs_header *)leaf)->nritems);

	if (n > space / sizeof(*it))
		n = space / sizeof(*it);
	for (uint32_t i = 1; i + 1 < n; i++) {
		uint32_t off = get_le32(&it[i].offset), size = get_le32(&it[i].size);
		const uint8_t *data;
		struct fs_key a, k, b, named, try[6];

		fs_key_from_disk(&a, &it[i - 1].key);
		fs_key_from_disk(&k, &it[i].key);
		fs_key_from_disk(&b, &it[i + 1].key);
		if (fs_key_cmp(&a, &b) >= 0 || (uint64_t)off + size > space)
			continue;
		data = leaf + sizeof(struct btrfs_header) + off;
		if (!data_fits_type(k.type, data, size))
			continue;
		if (fs_key_cmp(&a, &k) < 0 && fs_key_cmp(&k, &b) < 0)
			continue;
		named = key_by_name(k, data, size);
		try[0] = try[1] = try[2] = named;
		try[1].objectid = try[3].objectid = a.objectid;
		try[2].objectid = try[4].objectid = b.objectid;
		try[3].type = try[4].type = k.type;
		try[3].offset = try[4].offset = k.offset;
		/* a file extent's offset: where the inode's extent before it ends */
		try[5] = k;
		try[5].offset = file_extent_after(leaf, &it[i - 1], space, k.objectid);
		for (int t = 0; t < 6; t++)
			if (fs_key_cmp(&a, &try[t]) < 0 && fs_key_cmp(&try[t], &b) < 0) {
				fs_key_to_disk(&it[i].key, &try[t]);
				break;
			}
	}
}

/* The items of a damaged leaf that still read as items: inside the leaf, keys in order
 * (the longest run in order is kept: one damaged key does not take the others with
 * it), data not overlapping; laid out again from the end of the leaf as btrfs packs them.
 * -EUCLEAN when none is left. */
static int salvage_leaf(struct fs *fs, uint64_t bytenr, uint8_t *leaf, uint32_t *dropped)
{
	struct btrfs_header *h = (void *)leaf;
	struct btrfs_item *it = (void *)(h + 1);
	uint32_t space = fs->nodesize - sizeof(*h), n, kept = 0, at;
	struct fs_block_ctx ctx = { fs->nodesize, fs->csum_type, fs->meta_uuid, bytenr, 1 };
	uint32_t *len, *prev, *order;
	uint8_t *copy;
	struct fs_error err;
	int ret = -ENOMEM;

	if (leaf_copy(fs, bytenr, leaf, 0))
		return -EUCLEAN;
	mend_item_chain(leaf, fs->nodesize);
	mend_item_keys(leaf, fs->nodesize);
	n = get_le32(&h->nritems);
	if (n > space / sizeof(*it))
		n = space / sizeof(*it);
	len = calloc(n + 1, sizeof(*len));
	prev = calloc(n + 1, sizeof(*prev));
	order = calloc(n + 1, sizeof(*order));
	copy = malloc(fs->nodesize);
	if (len && prev && order && copy) {
		/* longest run of keys in order among the items inside the leaf (len[i]: of the
		 * run ending at i, prev[i]: the item before it in that run, n: none); of runs
		 * as long, the one ending last: an item whose key grew past the next one's is
		 * the one left out (not the next) */
		uint32_t best = n;

		memcpy(copy, leaf, fs->nodesize);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t off = get_le32(&it[i].offset), size = get_le32(&it[i].size);
			struct fs_key ki, kj;

			prev[i] = n;
			if (off + size > space || off < n * sizeof(*it))
				continue;
			len[i] = 1;
			fs_key_from_disk(&ki, &it[i].key);
			for (uint32_t j = 0; j < i; j++)
				if (len[j] && len[j] + 1 > len[i] && (fs_key_from_disk(&kj, &it[j].key),
								     fs_key_cmp(&kj, &ki) < 0))
					len[i] = len[j] + 1, prev[i] = j;
			if (best == n || len[i] >= len[best])
				best = i;
		}
		for (uint32_t i = best; i != n; i = prev[i])
			order[kept++] = i;      /* the run, last item first */
		/* the run in key order; an item whose data overlaps one kept before it goes */
		at = space;
		n = kept;
		kept = 0;
		for (uint32_t r = n; r-- > 0;) {
			const struct btrfs_item *src = (const struct btrfs_item *)(copy + sizeof(*h)) + order[r];
			uint32_t off = get_le32(&src->offset), size = get_le32(&src->size), o;

			for (o = n; o-- > r + 1;) {
				const struct btrfs_item *k = (const struct btrfs_item *)(copy + sizeof(*h)) + order[o];

				if (off < get_le32(&k->offset) + get_le32(&k->size) && get_le32(&k->offset) < off + size)
					break;
			}
			if (o != r)
				continue;
			at -= size;
			it[kept] = *src;
			put_le32(&it[kept].offset, at);
			memmove(leaf + sizeof(*h) + at, copy + sizeof(*h) + off, size);
			kept++;
		}
		*dropped = get_le32(&((struct btrfs_header *)copy)->nritems) - kept;
		put_le32(&h->nritems, kept);
		ret = kept && at >= kept * sizeof(*it) && !fs_block_check(leaf, &ctx, &FS_EXPECT_NONE, &err) ?
		      0 : -EUCLEAN;
	}
	free(len);
	free(prev);
	free(order);
	free(copy);
	return ret;
}

/* The trees whose TREE_BLOCK_REFs the extent item of bytenr lists (at most max). */
static int block_trees(struct fs *fs, uint64_t bytenr, uint64_t *trees, int max)
{
	struct fs_key key = { bytenr, BTRFS_METADATA_ITEM_KEY, 0 };
	struct fs_extent_info ei;
	struct fs_inline_ref r;
	uint8_t *d;
	uint32_t size, pos;
	int n = 0;

	if (item_copy(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, &d, &size)) {
		key = (struct fs_key){ bytenr, BTRFS_EXTENT_ITEM_KEY, fs->nodesize };
		if (item_copy(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, &d, &size))
			return 0;
	}
	if (!fs_extent_item(d, size, key.type, &ei))
		for (pos = ei.refs_start; n < max && fs_inline_ref_next(d, size, &pos, &r) == 1;)
			if (r.type == BTRFS_TREE_BLOCK_REF_KEY)
				trees[n++] = r.offset;
	free(d);
	return n;
}

/* The level the extent tree gives the tree block bytenr (-1: it has no item). */
static int block_level(struct fs *fs, uint64_t bytenr)
{
	struct fs_key k = { bytenr, BTRFS_EXTENT_ITEM_KEY, 0 };
	struct fs_extent_info ei;
	struct fs_root root;
	struct fs_path p;
	const uint8_t *d;
	uint32_t size;
	int level = -1, ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &root);

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &root, &k, &p); !ret; ret = fs_next(fs, &p)) {
		fs_path_key(&p, &k);
		if (k.objectid != bytenr)
			break;
		d = fs_path_data(&p, &size);
		if ((k.type == BTRFS_METADATA_ITEM_KEY || k.type == BTRFS_EXTENT_ITEM_KEY) &&
		    !fs_extent_item(d, size, k.type, &ei) && (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK)) {
			level = k.type == BTRFS_METADATA_ITEM_KEY ? (int)k.offset : ei.tree_level;
			break;
		}
	}
	fs_path_release(fs, &p);
	return level;
}

/* A subvolume's leaf whose first key is not the one its parent names: when that key
 * is of a type no item of the tree has, or below the parent's (where the leaf before
 * it holds keys), it was damaged, and the parent's is put back if it keeps the order. */
static void adopt_parent_key(uint64_t tree, uint8_t *leaf, const struct fs_key *want)
{
	struct btrfs_item *it = (void *)(leaf + sizeof(struct btrfs_header));
	uint32_t n = get_le32(&((struct btrfs_header *)leaf)->nritems);
	struct fs_key first, second;

	if (!n || !ck_is_fstree(tree) || !ck_subvol_key_type(want->type))
		return;
	fs_key_from_disk(&first, &it[0].key);
	if (ck_subvol_key_type(first.type) && fs_key_cmp(&first, want) >= 0)
		return;
	if (n > 1 && (fs_key_from_disk(&second, &it[1].key), fs_key_cmp(want, &second) >= 0))
		return;
	fs_key_to_disk(&it[0].key, want);
}

/* The keys a leaf of root dropped at from held: up to the next key the tree has now. */
static void note_hole(struct rp *rp, uint64_t root, const struct fs_key *from)
{
	struct rp_hole h = { root, *from, { UINT64_MAX, UINT8_MAX, UINT64_MAX } };
	struct fs_root r;
	struct fs_path p;

	fs_path_init(&p);
	if (!fs_root_lookup(rp->fs, root, &r) && fs_search(rp->fs, &r, from, &p) == 0)
		fs_path_key(&p, &h.to);
	fs_path_release(rp->fs, &p);
	if (vec_reserve((void **)&rp->holes, &rp->cap_holes, rp->nholes + 1, sizeof(h)))
		rp->nomem = 1;
	else
		rp->holes[rp->nholes++] = h;
}

/* Whether subvolume tree reaches the leaf bytenr where key lies, through a node (of its
 * own or one a snapshot shares with it). */
static int tree_reaches_leaf(struct fs *fs, uint64_t tree, const struct fs_key *key, uint64_t bytenr)
{
	struct fs_root r;
	struct fs_block *b = NULL, *child;
	int found = 0;

	if (!fs_root_lookup(fs, tree, &r) && r.level >= 1)
		b = fs_block_read(fs, r.bytenr, &(struct fs_block_expect){ r.generation, r.level, tree, NULL });
	while (b) {
		uint32_t n = fs_block_nritems(b), slot = 0;
		struct fs_key k;

		for (uint32_t i = 1; i < n && (fs_node_key(b, i, &k), fs_key_cmp(&k, key) <= 0); i++)
			slot = i;
		if (fs_block_level(b) == 1) {
			found = n && fs_node_blockptr(b, slot) == bytenr;
			break;
		}
		child = n ? fs_read_child(fs, b, slot, tree) : NULL;
		fs_block_put(fs, b);
		b = child;
	}
	fs_block_put(fs, b);
	return found;
}

static int listed(const uint64_t *trees, int n, uint64_t tree)
{
	for (int i = 0; i < n; i++)
		if (trees[i] == tree)
			return 1;
	return 0;
}

/* A leaf salvaged (salvage_leaf) put in place of the old one in every tree that has it:
 * those its extent item names, and the subvolumes that reach it through a node they
 * share (a snapshot and its source). */
static int put_salvaged(struct rp *rp, const struct rp_fix *f, uint8_t *leaf, uint32_t dropped)
{
	uint64_t trees[16] = { f->root };
	struct btrfs_header *h = (void *)leaf;
	struct btrfs_root_item ri;
	struct fs_key k = { 0, 0, 0 };
	int n, ret = 0;

	/* an owner no block of the tree can have was damaged: the block is the tree's */
	if (!fs_owner_fits(f->root, get_le64(&h->owner)))
		put_le64(&h->owner, f->root);
	adopt_parent_key(f->root, leaf, &f->key);
	n = block_trees(rp->fs, f->bytenr, trees, 16);
	n = n ? n : 1;
	for (int i = 0; i < n && !ret; i++)
		ret = fs_tree_put_leaf(rp->fs, trees[i], &f->key, f->bytenr, leaf);
	while (!ret && ck_is_fstree(f->root) && !fs_next_subvol_root(rp->fs, &k, &ri)) {
		if (!listed(trees, n, k.objectid) && tree_reaches_leaf(rp->fs, k.objectid, &f->key, f->bytenr))
			ret = fs_tree_put_leaf(rp->fs, k.objectid, &f->key, f->bytenr, leaf);
		k = (struct fs_key){ k.objectid + 1, 0, 0 };
	}
	if (!ret)
		say(rp, "laid out the items of leaf %llu anew, %u damaged item%s dropped",
		    (unsigned long long)f->bytenr, dropped, dropped == 1 ? "" : "s");
	return ret;
}

/* A leaf whose item data is not packed as btrfs packs it: laid out anew when every item
 * is kept so (an item's damaged offset or size put back: salvage_leaf), else its items
 * are packed as they read. */
int fix_leaf(struct rp *rp, const struct rp_fix *f)
{
	uint8_t *d, *leaf = malloc(rp->fs->nodesize);
	uint32_t size, dropped = 0;
	int ret;

	if (!leaf)
		return fs_err(&rp->fs->err, -ENOMEM, "out of memory");
	ret = salvage_leaf(rp->fs, f->bytenr, leaf, &dropped);
	if (!ret && !dropped) {
		ret = put_salvaged(rp, f, leaf, 0);
		free(leaf);
		return ret;
	}
	free(leaf);
	if ((ret = item_copy(rp->fs, f->root, &f->key, &d, &size)))
		return ret;
	say(rp, "packed the items of leaf %llu of root %llu", (unsigned long long)f->bytenr,
	    (unsigned long long)f->root);
	ret = fs_item_replace(rp->fs, f->root, &f->key, d, size);
	free(d);
	return ret;
}

/* Item i of a leaf, whose key is not below bound, gets the key its place says when
 * only its objectid (that of the item before it) or, for a name hashed into its key,
 * its offset (the name's hash) was damaged: one below bound, above the key before it,
 * that its data is of. 1 when mended. */
static int mend_key_past_bound(uint8_t *leaf, uint32_t nodesize, uint32_t i, const struct fs_key *bound)
{
	struct btrfs_item *it = (void *)(leaf + sizeof(struct btrfs_header));
	uint32_t off = get_le32(&it[i].offset), size = get_le32(&it[i].size);
	uint32_t space = nodesize - (uint32_t)sizeof(struct btrfs_header);
	const uint8_t *d = (const uint8_t *)it + off;
	struct fs_key prev, k;
	struct fs_dir_entry de;
	uint32_t pos = 0;

	if (!i || off > space || size > space - off)
		return 0;
	fs_key_from_disk(&prev, &it[i - 1].key);
	fs_key_from_disk(&k, &it[i].key);
	if (!data_fits_type(k.type, d, size))
		return 0;
	k.objectid = prev.objectid;
	if ((k.type == BTRFS_DIR_ITEM_KEY || k.type == BTRFS_XATTR_ITEM_KEY) && fs_dir_entry_next(d, size, &pos, &de) == 1)
		k.offset = ck_name_hash(de.name, de.name_len);
	if (fs_key_cmp(&prev, &k) >= 0 || fs_key_cmp(&k, bound) >= 0)
		return 0;
	fs_key_to_disk(&it[i].key, &k);
	return 1;
}

/* A subvolume leaf whose last keys are not below the first key of the leaf after it:
 * searches never reach those items; those whose key its place tells get it
 * (mend_key_past_bound), the others go (a name among them is made again from its other
 * halves by the name checks). */
int fix_key_range(struct rp *rp, const struct rp_fix *f)
{
	struct fs_key bound = { f->value[0], (uint8_t)f->value[1], f->value[2] }, k;
	uint8_t *leaf = malloc(rp->fs->nodesize);
	struct btrfs_header *h = (void *)leaf;
	const struct btrfs_item *it = (const void *)(h + 1);
	uint32_t n, kept, mended = 0;
	int ret;

	if (!leaf)
		return fs_err(&rp->fs->err, -ENOMEM, "out of memory");
	ret = leaf_copy(rp->fs, f->bytenr, leaf, 0);
	n = ret ? 0 : get_le32(&h->nritems);
	if (n > (rp->fs->nodesize - sizeof(*h)) / sizeof(*it))
		n = 0;          /* (a copy that does not verify: not the leaf the check saw) */
	/* the check verified the leaf: its keys are in order, the data packed from the end,
	 * so the items at its end go with their data and the rest stays packed */
	for (kept = n; kept && (fs_key_from_disk(&k, &it[kept - 1].key), fs_key_cmp(&k, &bound) >= 0);)
		kept--;
	while (kept < n && mend_key_past_bound(leaf, rp->fs->nodesize, kept, &bound))
		kept++, mended++;
	if (!ret && kept && (kept < n || mended)) {
		put_le32(&h->nritems, kept);
		ret = put_salvaged(rp, f, leaf, n - kept);
	}
	if (!ret && mended)
		say(rp, "%u key%s of leaf %llu past the next leaf's first key mended", mended, mended == 1 ? "" : "s",
		    (unsigned long long)f->bytenr);
	free(leaf);
	return ret == -EUCLEAN ? 0 : ret;
}

/* A leaf of a subvolume or of the root tree no copy of which can be read: laid out
 * again when only its layout is wrong, in every tree that shares it; else a subvolume's
 * is dropped (what it held is lost), the root tree's kept (its root items are the
 * subvolumes: rp->root_lost, the backup roots are the way then). */
/* The first subvolume whose path to key reaches the leaf bytenr, 0 none. */
static uint64_t subvol_reaching_leaf(struct fs *fs, const struct fs_key *key, uint64_t bytenr)
{
	struct btrfs_root_item ri;
	struct fs_key k = { 0, 0, 0 };

	while (!fs_next_subvol_root(fs, &k, &ri)) {
		if (tree_reaches_leaf(fs, k.objectid, key, bytenr))
			return k.objectid;
		k = (struct fs_key){ k.objectid + 1, 0, 0 };
	}
	return 0;
}

int fix_unreadable(struct rp *rp, const struct rp_fix *f)
{
	uint8_t *leaf;
	uint32_t dropped = 0;
	int ret, level;
	struct fs_root r;
	struct fs_path p;
	struct rp_fix g;

	/* it reads now: what named it wrongly (its root item's level) was put right, or the
	 * tree its header names no longer reaches it (it copied it away): a snapshot does */
	fs_path_init(&p);
	ret = fs_root_lookup(rp->fs, f->root, &r);
	ret = ret ? ret : fs_search(rp->fs, &r, &f->key, &p);
	fs_path_release(rp->fs, &p);
	if (ret >= 0) {
		g = *f;
		g.root = ck_is_fstree(f->root) ? subvol_reaching_leaf(rp->fs, &f->key, f->bytenr) : 0;
		if (!g.root)
			return 0;
		f = &g;
	}
	level = block_level(rp->fs, f->bytenr);
	if (level > 0)          /* a node: made again from its children */
		return rebuild_node(rp, f, level);
	leaf = malloc(rp->fs->nodesize);
	if (!leaf)
		return fs_err(&rp->fs->err, -ENOMEM, "out of memory");
	/* another tree's older block where a write was lost holds nothing of this one (a
	 * block found with no generation did not verify: what verifies of it is salvaged) */
	if ((!f->value[1] || f->value[1] >= f->value[0]) && !salvage_leaf(rp->fs, f->bytenr, leaf, &dropped)) {
		ret = put_salvaged(rp, f, leaf, dropped);
	} else if (f->root == BTRFS_ROOT_TREE_OBJECTID) {
		rp->root_lost = 1;
		ret = 0;
	} else {
		ret = fs_tree_drop_leaf(rp->fs, f->root, &f->key, f->bytenr);
		if (!ret)
			say(rp, "dropped leaf %llu of root %llu: no copy of it can be read",
			    (unsigned long long)f->bytenr, (unsigned long long)f->root);
		if (!ret)
			note_hole(rp, f->root, &f->key);
	}
	free(leaf);
	return ret == -ENOENT ? 0 : ret;
}

/* The inode item of ino, writable (NULL with fs->err). */
static struct btrfs_inode_item *inode_mut(struct fs *fs, uint64_t root, uint64_t ino)
{
	struct fs_key k = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	uint32_t size;
	uint8_t *d = fs_item_mut(fs, root, &k, &size);

	if (d && size < sizeof(struct btrfs_inode_item)) {
		fs_err_at(&fs->err, -EUCLEAN, root, 0, "inode item of %llu too short", (unsigned long long)ino);
		return NULL;
	}
	return (struct btrfs_inode_item *)d;
}

static int new_inode(struct fs *fs, uint64_t root, uint64_t ino, uint32_t mode, uint32_t nlink, uint64_t size,
		     uint64_t nbytes)
{
	struct btrfs_inode_item ii;
	uint64_t gen = fs_tx_generation(fs), now = (uint64_t)time(NULL);

	if (!ck_valid_ino(ino))
		return fs_err_at(&fs->err, -EUCLEAN, root, 0, "%llu is not an inode number: no inode item made",
				 (unsigned long long)ino);
	memset(&ii, 0, sizeof(ii));
	put_le64(&ii.generation, gen);
	put_le64(&ii.transid, gen);
	put_le64(&ii.size, size);
	put_le64(&ii.nbytes, nbytes);
	put_le32(&ii.nlink, nlink);
	put_le32(&ii.mode, mode);
	put_le64(&ii.atime.sec, now);
	put_le64(&ii.ctime.sec, now);
	put_le64(&ii.mtime.sec, now);
	put_le64(&ii.otime.sec, now);
	return fs_item_insert(fs, root, &(struct fs_key){ ino, BTRFS_INODE_ITEM_KEY, 0 }, &ii, sizeof(ii));
}

/* ---- file extents ------------------------------------------------------------------ */

/* A data extent a file extent may be mended from: where, how large, its generation and
 * the file offset of its back reference by (root, ino) nearest at or before pos. */
struct data_ref_hit { uint64_t bytenr, size, gen, ref_offset; int found; };

/* Looks at one item of the extent tree (key, data) for a back reference by (root, ino)
 * at or before pos that lies within its extent, the nearest kept in *h. */
static void data_ref_match(const struct fs_key *k, const uint8_t *d, uint32_t len, uint64_t root, uint64_t ino,
			   uint64_t pos, struct data_ref_hit *h, uint64_t *ext_size, uint64_t *ext_gen)
{
	struct fs_extent_info ei;
	struct fs_inline_ref r;
	uint32_t at;

	if (k->type == BTRFS_EXTENT_ITEM_KEY && !fs_extent_item(d, len, k->type, &ei) &&
	    (ei.flags & BTRFS_EXTENT_FLAG_DATA)) {
		*ext_size = k->offset;
		*ext_gen = ei.generation;
		for (at = ei.refs_start; fs_inline_ref_next(d, len, &at, &r) == 1;)
			if (r.type == BTRFS_EXTENT_DATA_REF_KEY && r.root == root && r.objectid == ino &&
			    r.file_offset <= pos && pos - r.file_offset < k->offset &&
			    (!h->found || r.file_offset > h->ref_offset))
				*h = (struct data_ref_hit){ k->objectid, k->offset, ei.generation, r.file_offset, 1 };
	} else if (k->type == BTRFS_EXTENT_DATA_REF_KEY && len >= sizeof(struct btrfs_extent_data_ref) &&
		   *ext_size) {
		const struct btrfs_extent_data_ref *dr = (const void *)d;
		uint64_t off = get_le64(&dr->offset);

		if (get_le64(&dr->root) == root && get_le64(&dr->objectid) == ino && off <= pos &&
		    pos - off < *ext_size && (!h->found || off > h->ref_offset))
			*h = (struct data_ref_hit){ k->objectid, *ext_size, *ext_gen, off, 1 };
	}
}

/* The data extent at bytenr when it names (root, ino), else (bytenr 0) any data extent
 * that does (the whole extent tree is looked through: a damaged disk_bytenr). */
static int find_data_extent(struct fs *fs, uint64_t bytenr, uint64_t root, uint64_t ino, uint64_t pos,
			    struct data_ref_hit *h)
{
	struct fs_key k = { bytenr, bytenr ? BTRFS_EXTENT_ITEM_KEY : 0, 0 };
	uint64_t ext_size = 0, ext_gen = 0, ext_start = 0;
	struct fs_root er;
	struct fs_path p;
	const uint8_t *d;
	uint32_t len;
	int ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &er);

	memset(h, 0, sizeof(*h));
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &er, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		fs_path_key(&p, &k);
		if (bytenr && k.objectid != bytenr)
			break;
		if (k.objectid != ext_start)
			ext_size = 0, ext_start = k.objectid;
		d = fs_path_data(&p, &len);
		data_ref_match(&k, d, len, root, ino, pos, h, &ext_size, &ext_gen);
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : h->found ? 0 : -ENOENT;
}

/* Whether an item's key offset is what one of type `type` with this data has: 0 for an
 * inode item and an inline file extent, the names' hash for dir and xattr items, an
 * index for a dir index (one name, not at its hash), a directory for an inode ref. */
static int offset_fits_type(uint8_t type, const struct fs_key *k, const uint8_t *d, uint32_t size)
{
	struct fs_file_extent fe;
	struct fs_dir_entry de;
	uint32_t pos = 0, names = 0;
	int hashed = 1, xattr = 1;

	switch (type) {
	case BTRFS_INODE_ITEM_KEY:
		return !k->offset;
	case BTRFS_EXTENT_DATA_KEY:     /* (as the kernel writes inline data: none above a page) */
		return !k->offset && !fs_file_extent(d, size, &fe) && fe.type == BTRFS_FILE_EXTENT_INLINE &&
		       !fe.encryption && !fe.other_encoding && fe.compression <= FS_COMPRESS_ZSTD &&
		       (fe.compression ? fe.ram_bytes <= 65536 : fe.ram_bytes == fe.inline_len);
	case BTRFS_INODE_REF_KEY:
		return k->offset >= BTRFS_FIRST_FREE_OBJECTID;
	default:
		break;
	}
	while (fs_dir_entry_next(d, size, &pos, &de) == 1) {
		names++;
		hashed &= ck_name_hash(de.name, de.name_len) == k->offset;
		xattr &= de.type == BTRFS_FT_XATTR;
	}
	if (type == BTRFS_DIR_INDEX_KEY)
		return names == 1 && !hashed && !xattr && k->offset >= 2;
	return hashed && (type == BTRFS_XATTR_ITEM_KEY) == xattr;
}

uint8_t type_by_data(const struct fs_key *k, const uint8_t *d, uint32_t size)
{
	static const uint8_t types[] = { BTRFS_INODE_ITEM_KEY, BTRFS_INODE_REF_KEY, BTRFS_XATTR_ITEM_KEY,
					 BTRFS_DIR_ITEM_KEY, BTRFS_DIR_INDEX_KEY, BTRFS_EXTENT_DATA_KEY };
	uint8_t found = 0;

	for (size_t i = 0; i < sizeof(types); i++) {
		if (!data_fits_type(types[i], d, size) || !offset_fits_type(types[i], k, d, size))
			continue;
		if (found)
			return 0;
		found = types[i];
	}
	return found;
}

/* An item of a subvolume of a key type no item of it has: a file extent whose data
 * extent names it (root, inode, offset), or an item whose data and offset are of one
 * type only, had its type damaged and is of that type again (unless the inode has that
 * key already); any other goes. */
int fix_unknown_item(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	struct fs_key k = { f->key.objectid, BTRFS_EXTENT_DATA_KEY, f->key.offset };
	struct fs_file_extent fe;
	struct data_ref_hit h;
	uint8_t *d, *other;
	uint32_t size, other_size;
	int ret = item_copy(fs, f->root, &f->key, &d, &size), named;

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = fs_item_delete(fs, f->root, &f->key);
	named = !fs_file_extent(d, size, &fe) && fe.type != BTRFS_FILE_EXTENT_INLINE && fe.disk_bytenr &&
		k.offset >= fe.offset && !find_data_extent(fs, fe.disk_bytenr, f->root, k.objectid, k.offset - fe.offset, &h) &&
		h.bytenr == fe.disk_bytenr && h.ref_offset == k.offset - fe.offset;
	if (!named)
		k.type = type_by_data(&f->key, d, size);
	if (!ret && (named || k.type)) {
		if (!item_copy(fs, f->root, &k, &other, &other_size)) {
			free(other);            /* the inode has an item there: this one goes */
		} else {
			ret = fs_item_insert(fs, f->root, &k, d, size);
			rp->file_extents |= named;      /* the extent references follow in the next round */
			rp->layout |= !named;           /* the names and inodes it is part of too */
			say(rp, "item (%llu %u %llu) of root %llu: key type %u again", (unsigned long long)f->key.objectid,
			    f->key.type, (unsigned long long)f->key.offset, (unsigned long long)f->root, k.type);
			free(d);
			return ret;
		}
	}
	say(rp, "Deleting bogus item [%llu,%u,%llu] of root %llu", (unsigned long long)f->key.objectid,
	    f->key.type, (unsigned long long)f->key.offset, (unsigned long long)f->root);
	free(d);
	return ret;
}

/* Mends the fields of a regular or prealloc extent item from its extent: its size,
 * the offset its back reference gives, a generation not after the extent's; 1 when
 * the result is a file extent the kernel reads, 0 when it cannot be mended. */
static int mend_reg_extent(struct fs *fs, uint64_t root, const struct fs_key *key,
			   struct btrfs_file_extent_item *fi)
{
	uint64_t ss = fs->sectorsize, size, gen, off, num;
	struct data_ref_hit h;

	if (fi->type > BTRFS_FILE_EXTENT_PREALLOC)
		fi->type = BTRFS_FILE_EXTENT_REG;
	if (fi->compression >= 4 || (fi->type == BTRFS_FILE_EXTENT_PREALLOC && fi->compression))
		fi->compression = 0;
	fi->encryption = 0;
	put_le16(&fi->other_encoding, 0);
	if (!get_le64(&fi->disk_bytenr) ||
	    (find_data_extent(fs, get_le64(&fi->disk_bytenr), root, key->objectid, key->offset, &h) &&
	     find_data_extent(fs, 0, root, key->objectid, key->offset, &h)))
		return 0;
	size = h.size;
	gen = h.gen;
	off = key->offset - h.ref_offset;
	put_le64(&fi->disk_bytenr, h.bytenr);
	put_le64(&fi->disk_num_bytes, size);
	if (!fi->compression)
		put_le64(&fi->ram_bytes, size);
	if (off >= get_le64(&fi->ram_bytes) || off % ss || get_le64(&fi->ram_bytes) % ss)
		return 0;
	put_le64(&fi->offset, off);
	num = get_le64(&fi->num_bytes);
	if (!num || num % ss || num > get_le64(&fi->ram_bytes) - off)
		put_le64(&fi->num_bytes, get_le64(&fi->ram_bytes) - off);
	if (get_le64(&fi->generation) > gen || !get_le64(&fi->generation))
		put_le64(&fi->generation, gen);
	return 1;
}

/* Whether the data at logical has a checksum. */
static int has_csum(struct fs *fs, uint64_t logical)
{
	struct fs_key k = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, logical };
	struct fs_root r;
	struct fs_path p;
	uint32_t size;
	int found = 0;

	if (fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &r) || fs_search_le(fs, &r, &k, &p))
		return 0;
	fs_path_data(&p, &size);
	fs_path_key(&p, &k);
	found = k.objectid == BTRFS_EXTENT_CSUM_OBJECTID && k.type == BTRFS_EXTENT_CSUM_KEY &&
		logical - k.offset < (uint64_t)fs_csum_item_count(size, fs->csum_size) * fs->sectorsize;
	fs_path_release(fs, &p);
	return found;
}

/* A compressed extent with checksums in a NODATASUM inode: the inode's flags are what is
 * wrong (the kernel compresses no NODATASUM file and sums none of its data), they lose
 * NODATASUM and NODATACOW. 1 when that was it (the inode's other extents then too), 0
 * when the extent is to be mended. */
static int extent_says_flags_wrong(struct rp *rp, const struct rp_fix *f, const struct btrfs_file_extent_item *fi,
				   uint32_t size)
{
	const uint64_t wrong = INODE_FLAG_NODATASUM | INODE_FLAG_NODATACOW;
	struct fs_key k = { f->key.objectid, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_inode_item *ii;
	uint32_t isize;
	uint8_t *copy;
	uint64_t flags;

	if (rp->flags_mended_root == f->root && rp->flags_mended_ino == f->key.objectid)
		return 1;
	if (size != sizeof(*fi) || fi->type != BTRFS_FILE_EXTENT_REG || !fi->compression ||
	    !get_le64(&fi->disk_bytenr) || !has_csum(rp->fs, get_le64(&fi->disk_bytenr)) ||
	    item_copy(rp->fs, f->root, &k, &copy, &isize))
		return 0;
	flags = isize == sizeof(*ii) ? get_le64(&((struct btrfs_inode_item *)copy)->flags) : 0;
	free(copy);
	if (!(flags & INODE_FLAG_NODATASUM) || !(ii = (void *)fs_item_mut(rp->fs, f->root, &k, &isize)))
		return 0;
	put_le64(&ii->flags, flags & ~wrong);
	rp->flags_mended_root = f->root;
	rp->flags_mended_ino = f->key.objectid;
	say(rp, "reset flags of inode %llu root %llu to 0x%llx: its data is compressed and has checksums",
	    (unsigned long long)k.objectid, (unsigned long long)f->root, (unsigned long long)(flags & ~wrong));
	return 1;
}

static int move_to_ref(struct rp *rp, const struct rp_fix *f, const struct btrfs_file_extent_item *fi);
static int move_file_extent(struct rp *rp, const struct rp_fix *f, const void *d, uint32_t size, uint64_t to,
			    uint64_t len, const char *why);

/* A malformed file extent item: keyed where no file extent can be (unaligned; an inline
 * one not at 0), moved to where its data extent's back reference puts it (an inline one
 * to 0); mended from its extent when it is a regular or prealloc one whose extent item
 * names it, an uncompressed inline one from its size; else deleted (a hole where its
 * data was: the inode's size and bytes follow). */
int fix_file_extent(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint32_t size;
	uint8_t *d;
	struct btrfs_file_extent_item *fi;
	int mended = 0, ret;

	if ((ret = item_copy(fs, f->root, &f->key, &d, &size)))
		return ret == -ENOENT ? 0 : ret;
	ret = extent_says_flags_wrong(rp, f, (void *)d, size);
	fi = (void *)d;
	if (!ret && size == sizeof(*fi) && f->key.offset % fs->sectorsize)
		ret = move_to_ref(rp, f, fi);
	else if (!ret && size > FS_FILE_EXTENT_INLINE_START && fi->type == BTRFS_FILE_EXTENT_INLINE && f->key.offset)
		ret = move_file_extent(rp, f, d, size, 0, get_le64(&fi->ram_bytes), "the only place of an inline one");
	free(d);
	if (ret)
		return ret < 0 ? ret : 0;
	d = fs_item_mut(fs, f->root, &f->key, &size);
	fi = (void *)d;
	if (!d)
		return fs->err.code == -ENOENT ? 0 : fs->err.code;
	if (size >= FS_FILE_EXTENT_INLINE_START && fi->type == BTRFS_FILE_EXTENT_INLINE && !f->key.offset &&
	    !fi->compression && !fi->encryption && size > FS_FILE_EXTENT_INLINE_START) {
		put_le64(&fi->ram_bytes, size - FS_FILE_EXTENT_INLINE_START);
		mended = 1;
	} else if (size == sizeof(*fi) && (f->key.offset % fs->sectorsize) == 0) {
		mended = mend_reg_extent(fs, f->root, &f->key, fi);
	}
	if (mended) {
		say(rp, "mended file extent [%llu %llu] of root %llu from its extent", (unsigned long long)f->key.objectid,
		    (unsigned long long)f->key.offset, (unsigned long long)f->root);
		return 0;
	}
	say(rp, "deleted bad file extent [%llu %llu] of root %llu", (unsigned long long)f->key.objectid,
	    (unsigned long long)f->key.offset, (unsigned long long)f->root);
	ret = fs_item_delete(fs, f->root, &f->key);
	return ret == -ENOENT ? 0 : ret;
}

/* ---- file extents made again from their extent's back references ------------------ */

#define MAX_COMPRESSED (128 * 1024)     /* the most a compressed extent holds, either side */
#define MAX_DATA_EXTENT (128ULL << 20)  /* the largest data extent the kernel writes */

/* The compression of a data extent whose file extent item is lost: the extent item does
 * not say, so each algorithm is tried on the data (zstd and lzo only when the filesystem
 * has used them); one that takes the stream is its compression, *ram the bytes it gives
 * (in sectors). None takes it: stored as it is. */
static int guess_compression(struct fs *fs, uint64_t bytenr, uint64_t size, uint64_t *ram)
{
	uint64_t incompat = get_le64(&fs->sb.incompat_flags), ss = fs->sectorsize;
	const struct { int type; uint64_t flag; } algos[] = {
		{ FS_COMPRESS_ZSTD, BTRFS_FEATURE_INCOMPAT_COMPRESS_ZSTD },
		{ FS_COMPRESS_LZO, BTRFS_FEATURE_INCOMPAT_COMPRESS_LZO },
		{ FS_COMPRESS_ZLIB, 0 },
	};
	struct fs_inflater inf = { 0 };
	uint8_t *in = size <= MAX_COMPRESSED ? malloc(size) : NULL, *out = in ? malloc(MAX_COMPRESSED) : NULL;
	int type = FS_COMPRESS_NONE;

	*ram = size;
	if (out && !fs_read_data(fs, bytenr, in, size, 1))
		for (size_t i = 0; i < sizeof(algos) / sizeof(*algos) && type == FS_COMPRESS_NONE; i++) {
			size_t got = 0;

			if ((incompat & algos[i].flag) == algos[i].flag &&
			    !fs_decompress(&inf, algos[i].type, in, size, out, MAX_COMPRESSED, &got, fs->sectorsize) &&
			    got) {
				type = algos[i].type;
				*ram = (got + ss - 1) / ss * ss;
			}
		}
	fs_inflater_free(&inf);
	free(in);
	free(out);
	return type;
}

/* Bytes of the file a file extent item covers. */
static uint64_t extent_span(const struct fs *fs, const struct fs_file_extent *fe)
{
	uint64_t ss = fs->sectorsize;

	return fe->type == BTRFS_FILE_EXTENT_INLINE ? (fe->ram_bytes + ss - 1) / ss * ss : fe->num_bytes;
}

/* Whether no file extent of ino covers any of [off, off + len) (extents do not overlap:
 * the last one starting before the end is the one to look at). */
static int range_free(struct fs *fs, uint64_t root, uint64_t ino, uint64_t off, uint64_t len)
{
	struct fs_key k = { ino, BTRFS_EXTENT_DATA_KEY, off + len - 1 };
	struct fs_file_extent fe;
	struct fs_root r;
	struct fs_path p;
	const uint8_t *d;
	uint32_t size;
	int free_ = 1;

	if (fs_root_lookup(fs, root, &r) || fs_search_le(fs, &r, &k, &p))
		return 1;
	fs_path_key(&p, &k);
	d = fs_path_data(&p, &size);
	if (k.objectid == ino && k.type == BTRFS_EXTENT_DATA_KEY)
		free_ = !fs_file_extent(d, size, &fe) && k.offset + extent_span(fs, &fe) <= off;
	fs_path_release(fs, &p);
	return free_;
}

/* A file a lost file extent may go back into: a subvolume that is there, an inode
 * number, and an inode item (when there is one) of a regular file. *nodatasum: its flag. */
static int file_target(struct fs *fs, uint64_t root, uint64_t ino, int *nodatasum)
{
	struct fs_key k = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	struct fs_root r;
	struct fs_path p;
	const struct btrfs_inode_item *ii;
	uint32_t size;
	int ok = 1;

	*nodatasum = 0;
	if (!ck_is_fstree(root) || !ck_valid_ino(ino) || fs_root_lookup(fs, root, &r))
		return 0;
	if (fs_lookup(fs, &r, &k, &p))
		return 1;       /* the inode item is lost too: fix_inode makes it */
	ii = (const void *)fs_path_data(&p, &size);
	ok = size >= sizeof(*ii) && S_ISREG(get_le32(&ii->mode));
	*nodatasum = ok && (get_le64(&ii->flags) & BTRFS_INODE_NODATASUM);
	fs_path_release(fs, &p);
	return ok;
}

#define MAX_PIECES 16      /* of one data extent in one file, relinked (a back reference's count) */

/* The pieces of [off, end) that no file extent item of (root, ino) covers, in order (the
 * first max of them in piece): how many there are, or <0 an error. */
static int uncovered(struct fs *fs, uint64_t root, uint64_t ino, uint64_t off, uint64_t end,
		     uint64_t (*piece)[2], int max)
{
	struct fs_key k = { ino, BTRFS_EXTENT_DATA_KEY, off };
	struct fs_file_extent fe;
	struct fs_root r;
	struct fs_path p;
	uint64_t at = off;
	int n = 0, ret = fs_root_lookup(fs, root, &r);

	if (!ret && (ret = fs_search_le(fs, &r, &k, &p)) == -ENOENT)
		ret = fs_search(fs, &r, &k, &p);
	for (; !ret; ret = fs_next(fs, &p)) {
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, &k);
		if (k.objectid != ino || k.type != BTRFS_EXTENT_DATA_KEY || k.offset >= end)
			break;
		if (fs_file_extent(d, size, &fe))
			continue;
		if (k.offset > at && n++ < max)
			memcpy(piece[n - 1], (uint64_t[2]){ at, k.offset }, sizeof(*piece));
		if (k.offset + extent_span(fs, &fe) > at)
			at = k.offset + extent_span(fs, &fe);
	}
	fs_path_release(fs, &p);
	if (ret < 0)
		return ret;
	if (at < end && n++ < max)
		memcpy(piece[n - 1], (uint64_t[2]){ at, end }, sizeof(*piece));
	return n;
}

/* The lost file extent items of data extent x that back reference r of it counts (the
 * extent placed at file offset r->file_offset of (root, ino)): one for each piece of
 * its range no file extent covers, when there are as many as were lost (the newer
 * extents placed first have taken what overwrote it). Data without checksums in a file
 * that has them was never written there (prealloc: reads zeros). 1 when made. */
static int put_file_extents(struct rp *rp, const struct fs_inline_ref *r, const struct check_extent *x, uint64_t gen,
			    int nodatasum, int lost)
{
	struct fs *fs = rp->fs;
	struct btrfs_file_extent_item fi;
	uint64_t ram, off = r->file_offset, piece[MAX_PIECES][2];
	int n, ret = 0;

	memset(&fi, 0, sizeof(fi));
	fi.compression = (uint8_t)guess_compression(fs, x->bytenr, x->size, &ram);
	fi.type = fi.compression || nodatasum || has_csum(fs, x->bytenr) ? BTRFS_FILE_EXTENT_REG
									 : BTRFS_FILE_EXTENT_PREALLOC;
	put_le64(&fi.generation, gen);
	put_le64(&fi.ram_bytes, ram);
	put_le64(&fi.disk_bytenr, x->bytenr);
	put_le64(&fi.disk_num_bytes, x->size);
	n = uncovered(fs, r->root, r->objectid, off, off + ram, piece, MAX_PIECES);
	if (n != lost)
		return n < 0 ? n : 0;
	for (int i = 0; i < n && !ret; i++) {
		put_le64(&fi.offset, piece[i][0] - off);
		put_le64(&fi.num_bytes, piece[i][1] - piece[i][0]);
		ret = fs_item_insert(fs, r->root, &(struct fs_key){ r->objectid, BTRFS_EXTENT_DATA_KEY, piece[i][0] },
				     &fi, sizeof(fi));
		if (!ret)
			say(rp, "made the file extent [%llu %llu] of root %llu again from extent %llu",
			    (unsigned long long)r->objectid, (unsigned long long)piece[i][0],
			    (unsigned long long)r->root, (unsigned long long)x->bytenr);
	}
	return ret ? ret : 1;
}

/* How many file extents answer back reference r of data extent x (x->refs: what the
 * trees reference). */
static uint64_t ref_answered(const struct check_extent *x, const struct fs_inline_ref *r)
{
	uint64_t have = 0;

	for (size_t i = 0; i < x->nrefs; i++)
		if (x->refs[i].type == BTRFS_EXTENT_DATA_REF_KEY && x->refs[i].a == r->root &&
		    x->refs[i].b == r->objectid && x->refs[i].c == r->file_offset)
			have += x->refs[i].count;
	return have;
}

/* A fix of this round mends or deletes an item of (root, ino): one that may give its
 * file extent back (its type or fields damaged). */
static int item_fix_planned(const struct rp *rp, uint64_t root, uint64_t ino)
{
	for (size_t i = 0; i < rp->nfixes; i++)
		if (rp->fixes[i].root == root && rp->fixes[i].key.objectid == ino &&
		    (rp->fixes[i].kind == CHECK_FIX_DELETE || rp->fixes[i].kind == CHECK_FIX_FILE_EXTENT))
			return 1;
	return 0;
}

struct facts;
static int inode_facts(struct fs *fs, uint64_t root, uint64_t ino, struct facts *fa);
static int extents_short(struct fs *fs, uint64_t root, uint64_t ino);

/* How many of the file extents back reference r of data extent x counts were lost: no
 * tree references the extent any more, or fewer file extents than it counts answer r
 * (others, the snapshots', do) and r's key is in a dropped leaf's keys or its file's
 * extents hold fewer bytes than its inode counts (an item of them deleted). */
static uint64_t refs_lost(const struct rp *rp, const struct check_extent *x, const struct fs_inline_ref *r)
{
	struct fs_key k = { r->objectid, BTRFS_EXTENT_DATA_KEY, r->file_offset };
	uint64_t have = ref_answered(x, r), lost = r->count > have ? r->count - have : 0;
	size_t i;

	if (!x->nrefs || !lost)
		return lost;
	for (i = 0; i < rp->nholes; i++)
		if (rp->holes[i].root == r->root && fs_key_cmp(&rp->holes[i].from, &k) <= 0 &&
		    fs_key_cmp(&k, &rp->holes[i].to) < 0)
			return lost;
	return ck_is_fstree(r->root) && ck_valid_ino(r->objectid) && !item_fix_planned(rp, r->root, r->objectid) &&
	       extents_short(rp->fs, r->root, r->objectid) ? lost : 0;
}

/* The file extent of back reference r of data extent x (gen: the extent's), when it was
 * lost and its file can take it; 1 when made. */
static int relink_ref(struct rp *rp, const struct check_extent *x, const struct fs_inline_ref *r, uint64_t gen)
{
	struct fs *fs = rp->fs;
	uint64_t lost;
	int nodatasum;

	/* (file offsets end below 2^63, the kernel's largest file; the extent's range must fit) */
	if (r->type != BTRFS_EXTENT_DATA_REF_KEY || !(lost = refs_lost(rp, x, r)) || lost > MAX_PIECES ||
	    r->file_offset % fs->sectorsize || r->file_offset > (uint64_t)INT64_MAX - MAX_COMPRESSED - x->size ||
	    !file_target(fs, r->root, r->objectid, &nodatasum))
		return 0;
	return put_file_extents(rp, r, x, gen, nodatasum, (int)lost);
}

/* Calls fn for each back reference of the data extent at bytenr (size bytes), inline
 * or an item of its own, with the extent's generation, until fn returns nonzero: that
 * value (<0 an error), 0 when none did. */
static int each_data_ref(struct fs *fs, uint64_t bytenr, uint64_t size,
			 int (*fn)(void *ctx, const struct fs_inline_ref *r, uint64_t gen), void *ctx)
{
	struct fs_key k = { bytenr, BTRFS_EXTENT_ITEM_KEY, size };
	struct fs_extent_info ei = { 0 };
	struct fs_root er;
	struct fs_path p;
	int ret, stop = 0;

	if (fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &er) || fs_lookup(fs, &er, &k, &p))
		return 0;
	for (ret = 0; ret == 0 && !stop; ret = stop ? 0 : fs_next(fs, &p)) {
		struct fs_inline_ref r;
		uint32_t len, at;
		const uint8_t *d = fs_path_data(&p, &len);

		fs_path_key(&p, &k);
		if (k.objectid != bytenr)
			break;
		if (k.type == BTRFS_EXTENT_ITEM_KEY) {
			if (fs_extent_item(d, len, k.type, &ei) || !(ei.flags & BTRFS_EXTENT_FLAG_DATA))
				break;
			for (at = ei.refs_start; !stop && fs_inline_ref_next(d, len, &at, &r) == 1;)
				stop = fn(ctx, &r, ei.generation);
		} else if (k.type == BTRFS_EXTENT_DATA_REF_KEY && len >= sizeof(struct btrfs_extent_data_ref)) {
			const struct btrfs_extent_data_ref *dr = (const void *)d;

			r = (struct fs_inline_ref){ .type = BTRFS_EXTENT_DATA_REF_KEY, .root = get_le64(&dr->root),
						    .objectid = get_le64(&dr->objectid),
						    .file_offset = get_le64(&dr->offset), .count = get_le32(&dr->count) };
			stop = fn(ctx, &r, ei.generation);
		}
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : stop;
}

/* Where in (root, ino) a back reference puts a file extent that starts offset bytes into
 * the data extent: an aligned place no file extent item of it holds (found). */
struct ref_place { struct fs *fs; uint64_t root, ino, offset, found; };

static int ref_place_free(void *ctx, const struct fs_inline_ref *r, uint64_t gen)
{
	struct ref_place *pl = ctx;
	struct fs_key k = { pl->ino, BTRFS_EXTENT_DATA_KEY, r->file_offset + pl->offset };
	uint8_t *d;
	uint32_t size;

	(void)gen;
	if (r->type != BTRFS_EXTENT_DATA_REF_KEY || r->root != pl->root || r->objectid != pl->ino ||
	    k.offset < r->file_offset || k.offset % pl->fs->sectorsize)
		return 0;
	if (!item_copy(pl->fs, pl->root, &k, &d, &size)) {
		free(d);
		return 0;
	}
	pl->found = k.offset;
	return 1;
}

/* The file extent item at f's key (data d, size bytes, len bytes of the file) moved to
 * file offset to, when the file has nothing in [to, to + len) but it; 1 when moved. */
static int move_file_extent(struct rp *rp, const struct rp_fix *f, const void *d, uint32_t size, uint64_t to,
			    uint64_t len, const char *why)
{
	struct fs_key k = { f->key.objectid, BTRFS_EXTENT_DATA_KEY, to };
	int ret = fs_item_delete(rp->fs, f->root, &f->key);

	if (ret)
		return ret;
	if (!range_free(rp->fs, f->root, f->key.objectid, to, len))
		return fs_item_insert(rp->fs, f->root, &f->key, d, size);
	if ((ret = fs_item_insert(rp->fs, f->root, &k, d, size)))
		return ret;
	rp->file_extents = 1;           /* the extent references follow in the next round */
	say(rp, "moved file extent [%llu %llu] of root %llu to offset %llu, %s", (unsigned long long)f->key.objectid,
	    (unsigned long long)f->key.offset, (unsigned long long)f->root, (unsigned long long)to, why);
	return 1;
}

static int move_to_ref(struct rp *rp, const struct rp_fix *f, const struct btrfs_file_extent_item *fi)
{
	struct ref_place place = { rp->fs, f->root, f->key.objectid, get_le64(&fi->offset), 0 };

	if (fi->type == BTRFS_FILE_EXTENT_INLINE || !get_le64(&fi->disk_bytenr) ||
	    each_data_ref(rp->fs, get_le64(&fi->disk_bytenr), get_le64(&fi->disk_num_bytes), ref_place_free,
			  &place) != 1)
		return 0;
	return move_file_extent(rp, f, fi, sizeof(*fi), place.found, get_le64(&fi->num_bytes),
				"where its data extent's back reference puts it");
}

struct relink { struct rp *rp; const struct check_extent *x; int made; };

static int relink_one(void *ctx, const struct fs_inline_ref *r, uint64_t gen)
{
	struct relink *rl = ctx;
	int ret = relink_ref(rl->rp, rl->x, r, gen);

	rl->made |= ret > 0;
	return ret < 0 ? ret : 0;
}

/* Each back reference of data extent x that no file extent answers any more (a leaf of
 * the subvolume lost: refs_lost), inline or an item of its own, gets its file extent items
 * again when the file is there or can be made again (fix_inode: a named inode without
 * its item) and what of its range is free comes in as many pieces as it counts (the
 * items' offsets into the extent went with them: a piece starts where the file's extent
 * before it ends). 1 when one was made, 0 none, <0 error. */
int relink_data_extent(struct rp *rp, const struct check_extent *x)
{
	struct relink rl = { rp, x, 0 };
	int ret;

	if (x->meta || !x->found || x->bytenr % rp->fs->sectorsize ||
	    x->size % rp->fs->sectorsize || x->size > MAX_DATA_EXTENT)
		return 0;
	ret = each_data_ref(rp->fs, x->bytenr, x->size, relink_one, &rl);
	return ret < 0 ? ret : rl.made;
}

/* The back references of a data extent of one file (root, ino): the one at offset
 * (have), and those no file extent answers (n of them, the last in lost). */
struct file_refs { const struct check_extent *x; uint64_t root, ino, offset; int have, n; struct fs_inline_ref lost; };

static int file_ref(void *ctx, const struct fs_inline_ref *r, uint64_t gen)
{
	struct file_refs *fr = ctx;

	(void)gen;
	if (r->type != BTRFS_EXTENT_DATA_REF_KEY || r->root != fr->root || r->objectid != fr->ino)
		return 0;
	fr->have |= r->file_offset == fr->offset;
	if (r->count == 1 && !ref_answered(fr->x, r))
		fr->lost = *r, fr->n++;
	return 0;
}

/* The file extent item of (root, ino) that references data extent bytenr with back
 * reference offset ref (its key offset less its offset into the extent): -ENOENT if
 * none. */
static int find_file_extent(struct fs *fs, uint64_t root, uint64_t ino, uint64_t bytenr, uint64_t ref,
			    struct fs_key *key, struct btrfs_file_extent_item *fi)
{
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, root, &r), found = 0;

	*key = (struct fs_key){ ino, BTRFS_EXTENT_DATA_KEY, 0 };
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &r, key, &p); ret == 0 && !found; ret = found ? 0 : fs_next(fs, &p)) {
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, key);
		if (key->objectid != ino || key->type != BTRFS_EXTENT_DATA_KEY)
			break;
		memcpy(fi, d, size < sizeof(*fi) ? size : sizeof(*fi));
		found = size == sizeof(*fi) && fi->type != BTRFS_FILE_EXTENT_INLINE && get_le64(&fi->disk_bytenr) == bytenr &&
			key->offset - get_le64(&fi->offset) == ref;
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : found ? 0 : -ENOENT;
}

/* A file extent of data extent x past its file's end whose back reference the extent
 * item lacks, while the item has one reference of that file that no file extent
 * answers, inside the file: the file extent's key was damaged, not the reference. It is
 * moved where the reference puts it (when that range is free); 1 when one was. */
int move_misplaced_extent(struct rp *rp, const struct check_extent *x)
{
	struct fs *fs = rp->fs;

	for (uint32_t i = 0; i < x->nrefs && !x->meta; i++) {
		const struct check_ref *f = &x->refs[i];
		struct file_refs fr = { x, f->a, f->b, f->c, 0, 0, { 0 } };
		struct btrfs_inode_item *ii;
		struct btrfs_file_extent_item fi;
		struct rp_fix at = { .root = f->a };
		uint64_t isize, to;
		uint32_t size;
		uint8_t *d;
		int ret;

		if (f->type != BTRFS_EXTENT_DATA_REF_KEY || f->count != 1 || !ck_is_fstree(f->a) ||
		    (ret = each_data_ref(fs, x->bytenr, x->size, file_ref, &fr)) < 0)
			continue;
		if (fr.have || fr.n != 1 || find_file_extent(fs, f->a, f->b, x->bytenr, f->c, &at.key, &fi) ||
		    item_copy(fs, f->a, &(struct fs_key){ f->b, BTRFS_INODE_ITEM_KEY, 0 }, &d, &size))
			continue;
		ii = (void *)d;
		isize = size == sizeof(*ii) ? get_le64(&ii->size) : 0;
		free(d);
		to = fr.lost.file_offset + get_le64(&fi.offset);
		if (at.key.offset / fs->sectorsize < (isize + fs->sectorsize - 1) / fs->sectorsize || to >= isize ||
		    to < fr.lost.file_offset || to % fs->sectorsize)
			continue;
		ret = move_file_extent(rp, &at, &fi, sizeof(fi), to, get_le64(&fi.num_bytes),
				       "where its data extent's back reference puts it (it was past the file's end)");
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- names -------------------------------------------------------------------------- */

struct name_count { uint64_t n, skip; };

static int count_leaf_names(void *ctx, const struct fs_block *b)
{
	struct name_count *nc = ctx;
	struct fs_key k;

	for (uint32_t i = 0; i < fs_block_nritems(b); i++)
		if (!fs_item_key(b, i, &k) && k.type == BTRFS_DIR_INDEX_KEY && k.objectid != nc->skip)
			nc->n++;
	return 0;
}

static void skip_error(void *ctx, const struct fs_error *err)
{
	(void)ctx;
	(void)err;
}

static uint64_t lookup_dir(struct fs *fs, uint64_t root, uint64_t dir, const struct name *n);

uint64_t count_names(struct fs *fs)
{
	struct fs_walk_ops ops = { NULL, count_leaf_names, skip_error };
	struct fs_key k = { 0, BTRFS_ROOT_ITEM_KEY, 0 };
	struct name lf = { .s = LOST_FOUND, .len = sizeof(LOST_FOUND) - 1, .type = BTRFS_FT_DIR };
	struct name_count nc = { 0, 0 };
	struct fs_root r;
	struct fs_path p;

	if (fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &r))
		return 0;
	fs_path_init(&p);
	for (int ret = fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		struct fs_root t;

		fs_path_key(&p, &k);
		if (k.type != BTRFS_ROOT_ITEM_KEY || !ck_is_fstree(k.objectid) || fs_root_lookup(fs, k.objectid, &t))
			continue;
		nc.skip = lookup_dir(fs, k.objectid, get_le64(&t.item.root_dirid), &lf);
		fs_tree_walk(fs, &t, &ops, &nc);
	}
	fs_path_release(fs, &p);
	return nc.n;
}

/* The entry of child named n in the dir item or dir index item at key: its position and
 * size in the item, or -ENOENT. */
static int find_entry(struct fs *fs, uint64_t root, const struct fs_key *key, uint64_t child,
		      const struct name *n, uint32_t *pos, uint32_t *len)
{
	uint8_t *d;
	uint32_t size, at = 0;
	struct fs_dir_entry de;
	int ret = item_copy(fs, root, key, &d, &size);

	if (ret)
		return ret;
	while ((ret = fs_dir_entry_next(d, size, &at, &de)) == 1)
		if (de.location.objectid == child && de.name_len == n->len && !memcmp(de.name, n->s, n->len))
			break;
	*len = ret == 1 ? DIR_ITEM_SIZE + de.name_len + de.data_len : 0;
	*pos = at - *len;
	free(d);
	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

static uint64_t dir_item_hash(const struct name *n)
{
	return ck_name_hash(n->s, n->len);
}

static int add_entry(struct fs *fs, uint64_t root, const struct fs_key *key, uint64_t child, const struct name *n)
{
	uint8_t buf[DIR_ITEM_SIZE + BTRFS_NAME_LEN_MAX + 24];
	struct btrfs_dir_item *di = (void *)buf;

	memset(di, 0, sizeof(*di));
	put_le64(&di->location.objectid, child);
	di->location.type = n->subvol ? BTRFS_ROOT_ITEM_KEY : BTRFS_INODE_ITEM_KEY;
	put_le64(&di->location.offset, n->subvol ? UINT64_MAX : 0);
	put_le64(&di->transid, fs_tx_generation(fs));
	put_le16(&di->name_len, n->len);
	di->type = n->type;
	memcpy(buf + DIR_ITEM_SIZE, n->s, n->len);
	return key->type == BTRFS_DIR_INDEX_KEY ? fs_item_insert(fs, root, key, buf, DIR_ITEM_SIZE + n->len) :
						  item_append(fs, root, key, buf, DIR_ITEM_SIZE + n->len);
}

/* An inode ref, or an extended one when the inode's refs from parent fill a leaf. */
static int add_ref(struct fs *fs, uint64_t root, uint64_t parent, uint64_t child, const struct name *n)
{
	uint8_t buf[8 + REF_SIZE + BTRFS_NAME_LEN_MAX + 24], *old;
	struct fs_key k = { child, BTRFS_INODE_REF_KEY, parent };
	uint32_t size = 0, max = fs->nodesize - (uint32_t)(sizeof(struct btrfs_header) + 2 * sizeof(struct btrfs_item));

	if (!item_copy(fs, root, &k, &old, &size))
		free(old);
	if (size + REF_SIZE + n->len > max) {
		k = (struct fs_key){ child, BTRFS_INODE_EXTREF_KEY, crc32c_raw((uint32_t)parent, n->s, n->len) };
		put_le64(buf, parent);
	}
	put_le64(buf + (k.type == BTRFS_INODE_EXTREF_KEY) * 8, n->index);
	put_le16(buf + (k.type == BTRFS_INODE_EXTREF_KEY) * 8 + 8, n->len);
	size = (k.type == BTRFS_INODE_EXTREF_KEY) * 8 + REF_SIZE;
	memcpy(buf + size, n->s, n->len);
	return item_append(fs, root, &k, buf, size + n->len);
}

/* The directory's size: two entries of each name (none without its inode item: one
 * made anew counts its entries). */
static int grow_dir(struct fs *fs, uint64_t root, uint64_t dir, int64_t bytes)
{
	struct btrfs_inode_item *ii = inode_mut(fs, root, dir);

	if (!ii)
		return fs->err.code == -ENOENT ? 0 : fs->err.code;
	put_le64(&ii->size, get_le64(&ii->size) + (uint64_t)bytes);
	return 0;
}

/* The next free dir index of dir. */
static uint64_t next_index(struct fs *fs, uint64_t root, uint64_t dir)
{
	struct fs_key k = { dir, BTRFS_DIR_INDEX_KEY, UINT64_MAX };
	struct fs_root r;
	struct fs_path p;
	uint64_t next = 2;

	if (!fs_root_lookup(fs, root, &r) && !fs_search_le(fs, &r, &k, &p)) {
		fs_path_key(&p, &k);
		next = k.offset + 1 > 2 ? k.offset + 1 : 2;
		fs_path_release(fs, &p);
	}
	return next;
}

/* A new name of child in dir: dir item, dir index, inode ref, the directory's size. */
static int link_name(struct fs *fs, uint64_t root, uint64_t dir, uint64_t child, struct name *n)
{
	int ret;

	n->index = next_index(fs, root, dir);
	ret = add_entry(fs, root, &(struct fs_key){ dir, BTRFS_DIR_ITEM_KEY, dir_item_hash(n) }, child, n);
	if (!ret)
		ret = add_entry(fs, root, &(struct fs_key){ dir, BTRFS_DIR_INDEX_KEY, n->index }, child, n);
	if (!ret)
		ret = add_ref(fs, root, dir, child, n);
	return ret ? ret : grow_dir(fs, root, dir, 2 * (int64_t)n->len);
}

/* The directory named name in dir (0 none). */
static uint64_t lookup_dir(struct fs *fs, uint64_t root, uint64_t dir, const struct name *n)
{
	struct fs_key k = { dir, BTRFS_DIR_ITEM_KEY, dir_item_hash(n) };
	struct fs_dir_entry de;
	uint32_t size, pos = 0;
	uint64_t found = 0;
	uint8_t *d;

	if (item_copy(fs, root, &k, &d, &size))
		return 0;
	while (!found && fs_dir_entry_next(d, size, &pos, &de) == 1)
		if (de.name_len == n->len && !memcmp(de.name, n->s, n->len))
			found = de.type == BTRFS_FT_DIR ? de.location.objectid : UINT64_MAX;
	free(d);
	return found;
}

/* lost+found below the tree's top directory, made when there is none. */
static int lost_found(struct rp *rp, uint64_t root, uint64_t top, uint64_t *dir)
{
	struct fs *fs = rp->fs;
	struct name n = { .s = LOST_FOUND, .len = sizeof(LOST_FOUND) - 1, .type = BTRFS_FT_DIR };
	struct fs_key k = { BTRFS_LAST_FREE_OBJECTID + 1, 0, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret;

	*dir = lookup_dir(fs, root, top, &n);
	if (*dir == UINT64_MAX)
		return fs_err_at(&fs->err, -EEXIST, root, 0, "%s is not a directory", LOST_FOUND);
	if (*dir)
		return 0;
	/* a new inode number: after the last one (the items below the special objectids) */
	ret = fs_root_lookup(fs, root, &r);
	fs_path_init(&p);
	if (!ret && (ret = fs_search(fs, &r, &k, &p)) == 0)
		ret = fs_prev(fs, &p);
	if (ret >= 0 && p.levels)
		fs_path_key(&p, &k);
	fs_path_release(fs, &p);
	if (ret < 0)
		return ret;
	*dir = k.objectid < BTRFS_FIRST_FREE_OBJECTID || k.objectid > BTRFS_LAST_FREE_OBJECTID ?
		BTRFS_FIRST_FREE_OBJECTID + 1 : k.objectid + 1;
	ret = new_inode(fs, root, *dir, S_IFDIR | 0700, 1, 0, 0);
	return ret ? ret : link_name(fs, root, top, *dir, &n);
}

/* A name for an inode nothing names: its number (and again when that is taken). */
static int link_lost(struct rp *rp, uint64_t root, uint64_t top, uint64_t ino, uint8_t type)
{
	struct fs *fs = rp->fs;
	struct name n = { .type = type };
	uint64_t dir;
	int ret = lost_found(rp, root, top, &dir);

	n.len = (uint16_t)snprintf(n.s, sizeof(n.s), "%llu", (unsigned long long)ino);
	if (!ret && lookup_dir(fs, root, dir, &n))
		n.len = (uint16_t)snprintf(n.s, sizeof(n.s), "%llu.%llu", (unsigned long long)ino,
					   (unsigned long long)fs_tx_generation(fs));
	if (!ret)
		ret = link_name(fs, root, dir, ino, &n);
	if (!ret)
		say(rp, "Moving file '%s' to '%s' dir since it has no valid backref", n.s, LOST_FOUND);
	return ret;
}

/* The name of the problem: from the inode ref, the dir item or the dir index. */
static int find_name(struct fs *fs, const struct rp_fix *f, struct name *n)
{
	struct fs_key keys[3] = {
		{ f->ino, BTRFS_INODE_REF_KEY, f->key.objectid },
		{ f->key.objectid, BTRFS_DIR_ITEM_KEY, f->value[0] >> 32 },
		{ f->key.objectid, BTRFS_DIR_INDEX_KEY, f->value[2] },
	};

	for (int i = 0; i < 3; i++) {
		uint32_t size, pos = 0;
		uint8_t *d;
		int ret;

		if (item_copy(fs, f->root, &keys[i], &d, &size))
			continue;
		for (;;) {
			struct fs_inode_ref r;
			struct fs_dir_entry de;

			ret = i ? fs_dir_entry_next(d, size, &pos, &de) : fs_inode_ref_next(d, size, &pos, &r);
			if (ret != 1)
				break;
			if (i) {
				r.name = de.name, r.name_len = de.name_len, r.index = 0;
				if (de.location.objectid != f->ino)
					continue;
			}
			if (r.name_len > BTRFS_NAME_LEN_MAX || ck_name_hash64(r.name, r.name_len) != f->value[0])
				continue;
			memcpy(n->s, r.name, r.name_len);
			n->len = r.name_len;
			free(d);
			return 0;
		}
		free(d);
	}
	return fs_err_at(&fs->err, -ENOENT, f->root, 0, "name of inode %llu in %llu not found",
			 (unsigned long long)f->ino, (unsigned long long)f->key.objectid);
}

/* Takes the name's dir item or dir index entry out. */
static int drop_entry(struct fs *fs, uint64_t root, const struct fs_key *key, uint64_t child, const struct name *n)
{
	uint32_t pos, len;
	int ret = find_entry(fs, root, key, child, n, &pos, &len);

	return ret ? ret : item_cut(fs, root, key, pos, len);
}

/* The type of the name's dir item and dir index entries becomes the inode's. */
static int retype(struct fs *fs, const struct rp_fix *f, const struct name *n)
{
	struct fs_key keys[2] = { { f->key.objectid, BTRFS_DIR_ITEM_KEY, dir_item_hash(n) },
				  { f->key.objectid, BTRFS_DIR_INDEX_KEY, f->value[2] } };
	for (int i = 0; i < 2; i++) {
		uint32_t pos, len, size;
		uint8_t *d;

		if (find_entry(fs, f->root, &keys[i], f->ino, n, &pos, &len))
			continue;
		d = fs_item_mut(fs, f->root, &keys[i], &size);
		if (!d)
			return fs->err.code;
		((struct btrfs_dir_item *)(d + pos))->type = n->type;
	}
	return 0;
}

/* A dir index item at index of dir. */
static int index_taken(struct fs *fs, uint64_t root, uint64_t dir, uint64_t index)
{
	uint8_t *d;
	uint32_t size;

	if (item_copy(fs, root, &(struct fs_key){ dir, BTRFS_DIR_INDEX_KEY, index }, &d, &size))
		return 0;
	free(d);
	return 1;
}

/* Takes the name out of child's inode ref item from dir. */
static int drop_ref(struct fs *fs, uint64_t root, uint64_t dir, uint64_t child, const struct name *n)
{
	struct fs_key k = { child, BTRFS_INODE_REF_KEY, dir };
	struct fs_inode_ref r;
	uint32_t size, pos = 0, at = 0;
	uint8_t *d;
	int ret = item_copy(fs, root, &k, &d, &size);

	while (!ret && (at = pos, ret = fs_inode_ref_next(d, size, &pos, &r)) == 1)
		if (r.name_len == n->len && !memcmp(r.name, n->s, n->len))
			break;
	if (ret == 1)
		ret = item_cut(fs, root, &k, at, pos - at);
	if (ret >= 0)
		free(d);
	return ret < 0 ? ret : 0;
}

/* Any item of inode ino in the tree. */
/* The index of the inode ref n of child in dir becomes index (its dir item and dir
 * index agree on another than the ref's). */
static int reindex_ref(struct fs *fs, uint64_t root, uint64_t dir, uint64_t child, const struct name *n,
		       uint64_t index)
{
	struct fs_key k = { child, BTRFS_INODE_REF_KEY, dir };
	struct fs_inode_ref r;
	uint32_t size, pos = 0;
	uint8_t *d = fs_item_mut(fs, root, &k, &size);
	int ret;

	if (!d)
		return fs->err.code;
	while ((ret = fs_inode_ref_next(d, size, &pos, &r)) == 1)
		if (r.name_len == n->len && !memcmp(r.name, n->s, n->len))
			break;
	if (ret != 1)
		return ret < 0 ? ret : -ENOENT;
	put_le64(&((struct btrfs_inode_ref *)(d + pos - REF_SIZE - n->len))->index, index);
	return 0;
}

/* Whether inode ino has items (of key type `type`; 0: of any type). */
static int has_items(struct fs *fs, uint64_t root, uint64_t ino, uint8_t type)
{
	struct fs_key k = { ino, type, 0 };
	struct fs_root r;
	struct fs_path p;
	int found = 0;

	fs_path_init(&p);
	if (!fs_root_lookup(fs, root, &r) && !fs_search(fs, &r, &k, &p)) {
		fs_path_key(&p, &k);
		found = k.objectid == ino && (!type || k.type == type);
	}
	fs_path_release(fs, &p);
	return found;
}

/* Dir entry types whose inodes hold file extents. */
static int holds_data(uint8_t type)
{
	return type == BTRFS_FT_REG_FILE || type == BTRFS_FT_SYMLINK;
}

/* The inode's mode gets the type of its names (BTRFS_FT_REG_FILE or SYMLINK). */
static int remode(struct fs *fs, uint64_t root, uint64_t ino, uint8_t type)
{
	struct btrfs_inode_item *ii = inode_mut(fs, root, ino);

	if (!ii)
		return fs->err.code;
	put_le32(&ii->mode, (get_le32(&ii->mode) & 07777) | (type == BTRFS_FT_SYMLINK ? S_IFLNK : S_IFREG));
	return 0;
}

static int fix_name1(struct rp *rp, const struct rp_fix *f);

/* A name's items that collide with what another fix of the round has yet to take
 * away wait for the next round. */
int fix_name(struct rp *rp, const struct rp_fix *f)
{
	int ret = fix_name1(rp, f);

	return ret == -EEXIST ? 0 : ret;
}

/* The dir index item at key when its entry names child: gone, the directory smaller. */
static int drop_index(struct rp *rp, uint64_t root, const struct fs_key *key, uint64_t child)
{
	struct fs *fs = rp->fs;
	struct fs_dir_entry de;
	uint32_t size, pos = 0;
	uint8_t *d;
	int ret = item_copy(fs, root, key, &d, &size), len;

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = fs_dir_entry_next(d, size, &pos, &de) == 1 && de.location.objectid == child;
	len = ret ? de.name_len : 0;
	free(d);
	if (!ret)
		return 0;
	say(rp, "Deleting bad dir index [%llu,%u,%llu] root %llu", (unsigned long long)key->objectid,
	    BTRFS_DIR_INDEX_KEY, (unsigned long long)key->offset, (unsigned long long)root);
	ret = fs_item_delete(fs, root, key);
	return ret ? ret : grow_dir(fs, root, key->objectid, -(int64_t)len);
}

/* Whether another inode's name in f's directory has its inode ref but lacks the part
 * missing (2 << 16 its dir item, 4 << 16 its dir index, as CHECK_FIX_NAME's value[1]):
 * that name matched by its ref's index (*index) or, index NULL, by f's name hash. The
 * part of f's name that is there is the other name's, with a damaged key or location. */
static int name_claimed(const struct rp *rp, const struct rp_fix *f, uint64_t missing, const uint64_t *index)
{
	for (size_t i = 0; i < rp->nfixes; i++) {
		const struct rp_fix *g = &rp->fixes[i];

		if (g->kind == CHECK_FIX_NAME && g->root == f->root && g->key.objectid == f->key.objectid &&
		    g->ino != f->ino && (g->value[1] & 1 << 16) && !(g->value[1] & missing) &&
		    (index ? g->key.offset == *index : g->value[0] == f->value[0]))
			return 1;
	}
	return 0;
}

/* Whether f's inode has another name (another fix of the round) held as dir item and
 * dir index without an inode ref: in another directory with f's name (its hash) at the
 * index of f's inode ref, or in f's directory. f's ref, which has neither, is that
 * name's ref with its key (directory) or its name and index damaged. */
static int name_elsewhere(const struct rp *rp, const struct rp_fix *f)
{
	for (size_t i = 0; i < rp->nfixes; i++) {
		const struct rp_fix *g = &rp->fixes[i];
		uint64_t v = g->value[1];

		if (g->kind == CHECK_FIX_NAME && g->root == f->root && g->ino == f->ino &&
		    !(v & 1 << 16) && (v & 2 << 16) && (v & 4 << 16) &&
		    (g->key.objectid == f->key.objectid ||
		     (g->value[0] == f->value[0] && g->value[2] == f->key.offset)))
			return 1;
	}
	return 0;
}

static int fix_name1(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint64_t v = f->value[1], dir = f->key.objectid;
	int ref = !!(v & 1 << 16), item = !!(v & 2 << 16), index = !!(v & 4 << 16), have = !!(v & 8 << 16);
	uint8_t itype = (uint8_t)(v >> 32), etype = (uint8_t)(v >> 40);
	struct name n = { .type = have ? itype : etype ? etype : BTRFS_FT_REG_FILE, .index = f->key.offset };
	struct fs_key kitem, kindex = { dir, BTRFS_DIR_INDEX_KEY, f->value[2] };
	int ret;

	/* a ref whose index is not the one its dir item and dir index agree on is the
	 * damaged part; else an index alone, or with a ref of another index, is */
	if (ref && item && index && (v & REF_INDEX_UNMATCH) && !find_name(fs, f, &n) &&
	    name_claimed(rp, f, 4 << 16, &f->value[2])) {
		say(rp, "moved dir index %llu of %.*s in %llu root %llu to %llu, its inode ref's (the other is "
			"another name's)", (unsigned long long)f->value[2], n.len, n.s, (unsigned long long)dir,
		    (unsigned long long)f->root, (unsigned long long)n.index);
		ret = drop_entry(fs, f->root, &kindex, f->ino, &n);
		return ret ? ret : add_entry(fs, f->root, &(struct fs_key){ dir, BTRFS_DIR_INDEX_KEY, n.index }, f->ino, &n);
	}
	if (ref && item && index && (v & REF_INDEX_UNMATCH) && !find_name(fs, f, &n)) {
		say(rp, "reset the index of inode ref %.*s of inode %llu in %llu root %llu to %llu", n.len, n.s,
		    (unsigned long long)f->ino, (unsigned long long)dir, (unsigned long long)f->root,
		    (unsigned long long)f->value[2]);
		return reindex_ref(fs, f->root, dir, f->ino, &n, f->value[2]);
	}
	if (index && ((!ref && !item) || (ref && (v & REF_INDEX_UNMATCH))))
		return drop_index(rp, f->root, &kindex, f->ino);
	ret = find_name(fs, f, &n);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	/* an inode with items but no inode item gets one made anew: it is there */
	if (!have && has_items(fs, f->root, f->ino, 0))
		have = 1, n.type = etype ? etype : BTRFS_FT_REG_FILE;
	kitem = (struct fs_key){ dir, BTRFS_DIR_ITEM_KEY, dir_item_hash(&n) };
	if (index && !ref && !have)
		return drop_index(rp, f->root, &kindex, f->ino);
	if (item && !ref && !index && (!have || name_claimed(rp, f, 2 << 16, NULL))) {
		say(rp, "Deleting dir item of %.*s in %llu root %llu: %s", n.len, n.s, (unsigned long long)dir,
		    (unsigned long long)f->root, have ? "the name is another inode's" : "it names no inode");
		ret = drop_entry(fs, f->root, &kitem, f->ino, &n);
		return ret ? ret : grow_dir(fs, f->root, dir, -(int64_t)n.len);
	}
	if (!ref && have) {
		n.index = index ? f->value[2] : next_index(fs, f->root, dir);
		say(rp, "Added INODE_REF for root %llu ino %llu parent %llu index %llu name %.*s",
		    (unsigned long long)f->root, (unsigned long long)f->ino, (unsigned long long)dir,
		    (unsigned long long)n.index, n.len, n.s);
		ret = add_ref(fs, f->root, dir, f->ino, &n);
		if (!ret && !index)
			ret = add_entry(fs, f->root, &(struct fs_key){ dir, BTRFS_DIR_INDEX_KEY, n.index }, f->ino, &n);
		return ret ? ret : grow_dir(fs, f->root, dir, index ? 0 : (int64_t)n.len);
	}
	if (ref && !item && !index && name_elsewhere(rp, f)) {
		say(rp, "Deleting inode ref %.*s of inode %llu in %llu root %llu: the inode's name without a ref "
			"is this ref's, damaged (that name gets the ref)", n.len, n.s,
		    (unsigned long long)f->ino, (unsigned long long)dir, (unsigned long long)f->root);
		return drop_ref(fs, f->root, dir, f->ino, &n);
	}
	if (ref && !item && !index && index_taken(fs, f->root, dir, n.index)) {
		say(rp, "Deleting inode ref %.*s of inode %llu in %llu root %llu: its index is another name's",
		    n.len, n.s, (unsigned long long)f->ino, (unsigned long long)dir, (unsigned long long)f->root);
		return drop_ref(fs, f->root, dir, f->ino, &n);
	}
	if (ref && (!item || !index)) {
		if (!item && !index && lookup_dir(fs, f->root, dir, &n))
			return 0;       /* the name is another inode's: the link count fix decides */
		say(rp, !item && !index ? "adding missing dir index/item pair for inode %llu" :
			!index ? "repairing missing dir index item for inode %llu" :
			"repairing missing dir item for inode %llu", (unsigned long long)f->ino);
		ret = item ? 0 : add_entry(fs, f->root, &kitem, f->ino, &n);
		if (!ret && !index)
			ret = add_entry(fs, f->root, &(struct fs_key){ dir, BTRFS_DIR_INDEX_KEY, n.index }, f->ino, &n);
		return ret ? ret : grow_dir(fs, f->root, dir, (int64_t)n.len * (2 - item - index));
	}
	if (have && (v & REF_FILETYPE_UNMATCH) && !rp->imode && holds_data(etype) && !holds_data(itype) &&
	    has_items(fs, f->root, f->ino, BTRFS_EXTENT_DATA_KEY)) {
		say(rp, "reset the mode of inode %llu root %llu to the type of its names: it holds file extents",
		    (unsigned long long)f->ino, (unsigned long long)f->root);
		return remode(fs, f->root, f->ino, etype);
	}
	if (have && (v & REF_FILETYPE_UNMATCH) && !rp->imode) {
		say(rp, "reset the type of %.*s in %llu root %llu to the inode's", n.len, n.s,
		    (unsigned long long)dir, (unsigned long long)f->root);
		return retype(fs, f, &n);
	}
	return 0;
}

/* ---- subvolumes ----------------------------------------------------------------------- */

/* The name of subvolume child in tree parent as its ROOT_BACKREF or ROOT_REF says,
 * copied to buf; 0 or -ENOENT. */
static int subvol_ref(struct fs *fs, uint64_t child, uint64_t parent, int ref_first, uint8_t **buf, uint32_t *size)
{
	struct fs_key back = { child, BTRFS_ROOT_BACKREF_KEY, parent }, ref = { parent, BTRFS_ROOT_REF_KEY, child };
	int ret = item_copy(fs, BTRFS_ROOT_TREE_OBJECTID, ref_first ? &ref : &back, buf, size);

	if (ret == -ENOENT)
		ret = item_copy(fs, BTRFS_ROOT_TREE_OBJECTID, ref_first ? &back : &ref, buf, size);
	if (!ret && *size < sizeof(struct btrfs_root_ref) + get_le16(*buf + 16)) {
		free(*buf);
		ret = fs_err(&fs->err, -EUCLEAN, "root ref of %llu too short", (unsigned long long)child);
	}
	return ret;
}

/* The item key holds data: inserted, or put in place of what is there. */
static int put_item(struct fs *fs, uint64_t tree, const struct fs_key *key, const void *data, uint32_t size)
{
	int ret = fs_item_insert(fs, tree, key, data, size);

	return ret == -EEXIST ? fs_item_replace(fs, tree, key, data, size) : ret;
}

/* The index of subvolume child's ROOT_BACKREF, when the directory has an index entry
 * of that name there (then n->index gets it). */
static int backref_index_named(struct fs *fs, const struct rp_fix *f, uint64_t child, struct name *n)
{
	uint8_t *back;
	uint32_t size, at, len;
	uint64_t index;

	if (item_copy(fs, BTRFS_ROOT_TREE_OBJECTID, &(struct fs_key){ child, BTRFS_ROOT_BACKREF_KEY, f->key.objectid },
		      &back, &size))
		return 0;
	index = size >= sizeof(struct btrfs_root_ref) ? get_le64(back + 8) : 0;
	free(back);
	if (!index || find_entry(fs, f->key.objectid, &(struct fs_key){ f->key.offset, BTRFS_DIR_INDEX_KEY, index },
				 child, n, &at, &len))
		return 0;
	n->index = index;
	return 1;
}

/* The entry named n of subvolume child in tree parent's directory, at key (a dir item
 * or a dir index): an entry of that name there gets the subvolume's location back (its
 * location was damaged), else it is added; a dir index of another name stays (0). */
static int link_subvol_entry(struct fs *fs, uint64_t parent, const struct fs_key *key, uint64_t child,
			     const struct name *n)
{
	struct fs_dir_entry de;
	uint32_t size, at = 0;
	uint8_t *d;
	int ret = item_copy(fs, parent, key, &d, &size);

	if (ret == -ENOENT) {
		ret = add_entry(fs, parent, key, child, n);
		return ret ? ret : grow_dir(fs, parent, key->objectid, n->len);
	}
	if (ret)
		return ret;
	while ((ret = fs_dir_entry_next(d, size, &at, &de)) == 1 &&
	       (de.name_len != n->len || memcmp(de.name, n->s, n->len)))
		;
	if (ret == 1) {
		struct btrfs_dir_item *di = (void *)(d + at - (DIR_ITEM_SIZE + de.name_len + de.data_len));

		put_le64(&di->location.objectid, child);
		di->location.type = BTRFS_ROOT_ITEM_KEY;
		put_le64(&di->location.offset, UINT64_MAX);
		di->type = BTRFS_FT_DIR;
		ret = fs_item_replace(fs, parent, key, d, size);
	} else if (!ret && key->type == BTRFS_DIR_ITEM_KEY) {   /* other names of the same hash */
		ret = add_entry(fs, parent, key, child, n);
		ret = ret ? ret : grow_dir(fs, parent, key->objectid, n->len);
	}
	free(d);
	return ret < 0 ? ret : 0;
}

int fix_subvol(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint64_t child = f->root, parent = f->key.objectid, e = f->value[0];
	struct name n = { .type = BTRFS_FT_DIR, .index = f->value[1], .subvol = 1 };
	struct btrfs_root_item *ri;
	struct fs_root r;
	uint32_t size;
	uint8_t *ref;
	int ret;

	if (f->value[2] == 1) {
		say(rp, "added the orphan item of deleted subvolume %llu", (unsigned long long)child);
		return fs_item_insert(fs, BTRFS_ROOT_TREE_OBJECTID,
				      &(struct fs_key){ BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, child }, NULL, 0);
	}
	if (f->value[2] == 2) {
		if ((ret = fs_root_lookup(fs, child, &r)))
			return ret;
		ri = (void *)fs_item_mut(fs, BTRFS_ROOT_TREE_OBJECTID,
					 &(struct fs_key){ child, BTRFS_ROOT_ITEM_KEY, r.offset }, &size);
		if (!ri)
			return fs->err.code;
		say(rp, "reset the refs of subvolume %llu to %llu", (unsigned long long)child,
		    (unsigned long long)f->value[1]);
		put_le32(&ri->refs, (uint32_t)f->value[1]);
		return 0;
	}
	/* the half that is missing (or names another place) is copied from the other */
	if ((ret = subvol_ref(fs, child, parent, !!(e & REF_NO_ROOT_BACKREF), &ref, &size)))
		return ret == -ENOENT ? 0 : ret;
	n.len = get_le16(ref + 16);
	if (n.len > BTRFS_NAME_LEN_MAX) {
		free(ref);
		return 0;
	}
	memcpy(n.s, ref + sizeof(struct btrfs_root_ref), n.len);
	say(rp, "completed the link of subvolume %llu in root %llu: %.*s", (unsigned long long)child,
	    (unsigned long long)parent, n.len, n.s);
	if ((e & (REF_INDEX_UNMATCH | REF_NO_DIR_INDEX)) == (REF_INDEX_UNMATCH | REF_NO_DIR_INDEX) &&
	    backref_index_named(fs, f, child, &n)) {
		/* the directory's index agrees with the backref: the ROOT_REF is the odd one */
		e &= ~(uint64_t)(REF_INDEX_UNMATCH | REF_NO_DIR_INDEX);
		e |= REF_NO_ROOT_REF;
	}
	put_le64(ref + 8, n.index);
	ret = e & REF_INDEX_UNMATCH ? fs_item_replace(fs, BTRFS_ROOT_TREE_OBJECTID,
						      &(struct fs_key){ child, BTRFS_ROOT_BACKREF_KEY, parent }, ref, size) : 0;
	if (!ret && (e & REF_NO_ROOT_REF))
		ret = put_item(fs, BTRFS_ROOT_TREE_OBJECTID, &(struct fs_key){ parent, BTRFS_ROOT_REF_KEY, child },
			       ref, size);
	if (!ret && (e & REF_NO_ROOT_BACKREF))
		ret = put_item(fs, BTRFS_ROOT_TREE_OBJECTID, &(struct fs_key){ child, BTRFS_ROOT_BACKREF_KEY, parent },
			       ref, size);
	if (!ret && (e & REF_NO_DIR_ITEM))
		ret = link_subvol_entry(fs, parent, &(struct fs_key){ f->key.offset, BTRFS_DIR_ITEM_KEY, dir_item_hash(&n) },
					child, &n);
	if (!ret && (e & REF_NO_DIR_INDEX))
		ret = link_subvol_entry(fs, parent, &(struct fs_key){ f->key.offset, BTRFS_DIR_INDEX_KEY, n.index }, child, &n);
	free(ref);
	return ret;
}

/* ---- a subvolume's lost root item ------------------------------------------------- */

/* Whether the back references of tree block item (key, d) name tree id: inline (d), or
 * a keyed TREE_BLOCK_REF. *level: the block's level, from the item. */
static int names_tree(const struct fs_key *k, const uint8_t *d, uint32_t size, uint64_t id, uint64_t *level)
{
	struct fs_extent_info ei;
	struct fs_inline_ref r;
	uint32_t at;

	if (k->type == BTRFS_TREE_BLOCK_REF_KEY)
		return k->offset == id;
	if ((k->type != BTRFS_METADATA_ITEM_KEY && k->type != BTRFS_EXTENT_ITEM_KEY) ||
	    fs_extent_item(d, size, k->type, &ei) || !(ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK))
		return 0;
	*level = k->type == BTRFS_METADATA_ITEM_KEY ? k->offset : (uint64_t)ei.tree_level;
	for (at = ei.refs_start; fs_inline_ref_next(d, size, &at, &r) == 1;)
		if (r.type == BTRFS_TREE_BLOCK_REF_KEY && r.offset == id)
			return 1;
	return 0;
}

/* A block of tree id at bytenr that verifies: the root if it is higher, or as high and
 * newer, than the best so far. */
static void consider_root(struct fs *fs, uint64_t id, uint64_t bytenr, uint64_t *best, uint64_t *gen,
			  uint64_t *level)
{
	struct fs_block *b = fs_block_read(fs, bytenr, &FS_EXPECT_NONE);

	if (!b)
		return;
	if (fs_block_owner(b) == id &&
	    (!*best || (uint64_t)fs_block_level(b) > *level ||
	     ((uint64_t)fs_block_level(b) == *level && fs_block_generation(b) > *gen))) {
		*best = bytenr;
		*gen = fs_block_generation(b);
		*level = (uint64_t)fs_block_level(b);
	}
	fs_block_put(fs, b);
}

/* The devices scanned for the root of tree id, as btrfs-find-root does: of the blocks
 * the tree owns that read at their address, the newest (a change of any block copies
 * the root), the highest of those. */
struct root_scan { struct fs *fs; uint64_t id, bytenr, gen, level; };

static int scanned_block(void *ctx, const struct fs_device *d, uint64_t physical, const uint8_t *block)
{
	struct root_scan *s = ctx;
	const struct btrfs_header *h = (const void *)block;
	uint64_t gen = get_le64(&h->generation);
	struct fs_block *b;

	(void)d;
	(void)physical;
	if (get_le64(&h->owner) != s->id || gen < s->gen || (gen == s->gen && h->level <= s->level))
		return 0;
	b = fs_block_read(s->fs, get_le64(&h->bytenr), &FS_EXPECT_NONE);
	if (b && fs_block_owner(b) == s->id && fs_block_generation(b) == gen) {
		s->bytenr = get_le64(&h->bytenr);
		s->gen = gen;
		s->level = h->level;
	}
	if (b)
		fs_block_put(s->fs, b);
	return 0;
}

static int scan_for_root(struct fs *fs, uint64_t id, uint64_t *bytenr, uint64_t *gen, uint64_t *level)
{
	struct root_scan s = { fs, id, 0, 0, 0 };
	int ret = 0;

	for (int i = 0; i < fs->num_devs && !ret; i++)
		if (fs->devs[i].fd >= 0)
			ret = fs_scan_tree_blocks(fs, &fs->devs[i], scanned_block, &s);
	*bytenr = s.bytenr;
	*gen = s.gen;
	*level = s.level;
	return ret < 0 ? ret : s.bytenr ? 0 : -ENOENT;
}

int find_lost_root(struct fs *fs, uint64_t id, uint64_t *bytenr, uint64_t *gen, uint64_t *level)
{
	struct fs_key k = { 0, 0, 0 };
	struct fs_root er;
	struct fs_path p;
	uint64_t ext_level = 0;
	int ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &er);

	*bytenr = *gen = *level = 0;
	if (!ck_is_fstree(id))
		return -ENOENT;
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &er, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, &k);
		if (names_tree(&k, d, size, id, &ext_level) && (!*bytenr || ext_level >= *level))
			consider_root(fs, id, k.objectid, bytenr, gen, level);
	}
	fs_path_release(fs, &p);
	/* the extent tree does not name it (lost or damaged too): the devices are read */
	return *bytenr ? 0 : scan_for_root(fs, id, bytenr, gen, level);
}

/* The uuid the uuid tree gives subvolume id under key type (its own, or received):
 * zero when none does. */
static void uuid_of(struct fs *fs, uint64_t id, uint8_t type, uint8_t *uuid)
{
	struct fs_key k = { 0, 0, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_UUID_TREE_OBJECTID, &r);

	memset(uuid, 0, BTRFS_UUID_SIZE);
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, &k);
		for (uint32_t at = 0; k.type == type && at + 8 <= size; at += 8)
			if (get_le64(d + at) == id) {
				put_le64(uuid, k.objectid);     /* (uuid bytes 0-7, type, bytes 8-15) */
				put_le64(uuid + 8, k.offset);
			}
	}
	fs_path_release(fs, &p);
}

int fix_lost_root(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint64_t id = f->key.objectid, gen = f->value[0], now = (uint64_t)time(NULL);
	struct btrfs_root_item ri;
	struct fs_root r;

	if (!fs_root_lookup(fs, id, &r))
		return 0;       /* its own item is back under its key (fix_root_key) */
	memset(&ri, 0, sizeof(ri));
	put_le64(&ri.inode.generation, 1);
	put_le64(&ri.inode.size, 3);
	put_le64(&ri.inode.nbytes, fs->nodesize);
	put_le32(&ri.inode.nlink, 1);
	put_le32(&ri.inode.mode, 040755);
	put_le64(&ri.generation, gen);
	put_le64(&ri.generation_v2, gen);
	put_le64(&ri.root_dirid, BTRFS_FIRST_FREE_OBJECTID);
	put_le64(&ri.bytenr, f->bytenr);
	put_le64(&ri.bytes_used, fs->nodesize);
	put_le32(&ri.refs, 1);
	ri.level = (uint8_t)f->value[1];
	put_le64(&ri.ctransid, gen);
	put_le64(&ri.ctime.sec, now);
	uuid_of(fs, id, BTRFS_UUID_KEY_SUBVOL, ri.uuid);
	uuid_of(fs, id, BTRFS_UUID_KEY_RECEIVED_SUBVOL, ri.received_uuid);
	say(rp, "made the root item of subvolume %llu again: its tree is at %llu (level %llu, generation %llu)",
	    (unsigned long long)id, (unsigned long long)f->bytenr, (unsigned long long)f->value[1],
	    (unsigned long long)gen);
	return fs_item_insert(fs, BTRFS_ROOT_TREE_OBJECTID, &f->key, &ri, sizeof(ri));
}

/* ---- inodes -------------------------------------------------------------------------- */

/* What the items of an inode say. */
struct facts {
	int have_item, dir_entries, extents, normal_extents;
	struct btrfs_inode_item ii;
	uint64_t dir_names;             /* name bytes of its dir items and dir indexes */
	uint64_t found_size;            /* data bytes of its file extents */
	uint64_t end;                   /* where its last file extent ends */
	uint64_t first_data;            /* where its first regular extent is on disk (0: none) */
	uint8_t ref_type;               /* the type its first parent's entry gives it */
};

static int inode_facts(struct fs *fs, uint64_t root, uint64_t ino, struct facts *fa)
{
	struct fs_key k = { ino, 0, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, root, &r);

	memset(fa, 0, sizeof(*fa));
	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		struct fs_file_extent fe;
		struct fs_dir_entry de;
		const uint8_t *d;
		uint32_t size, pos = 0;

		fs_path_key(&p, &k);
		if (k.objectid != ino)
			break;
		d = fs_path_data(&p, &size);
		if (k.type == BTRFS_INODE_ITEM_KEY && size >= sizeof(fa->ii)) {
			fa->have_item = 1;
			memcpy(&fa->ii, d, sizeof(fa->ii));
		} else if (k.type == BTRFS_DIR_ITEM_KEY || k.type == BTRFS_DIR_INDEX_KEY) {
			fa->dir_entries = 1;
			while (fs_dir_entry_next(d, size, &pos, &de) == 1)
				fa->dir_names += de.name_len;
		} else if (k.type == BTRFS_EXTENT_DATA_KEY && !fs_file_extent(d, size, &fe)) {
			fa->extents = 1;
			fa->normal_extents |= fe.type != BTRFS_FILE_EXTENT_INLINE;
			if (fe.type == BTRFS_FILE_EXTENT_INLINE)
				fa->found_size += fe.ram_bytes;
			else if (fe.disk_bytenr)
				fa->found_size += fe.num_bytes;
			if (fe.type == BTRFS_FILE_EXTENT_INLINE || fe.disk_bytenr)
				fa->end = k.offset + (fe.type == BTRFS_FILE_EXTENT_INLINE ? fe.ram_bytes : fe.num_bytes);
			if (fe.type != BTRFS_FILE_EXTENT_INLINE && !fa->first_data)
				fa->first_data = fe.disk_bytenr;
		} else if (k.type == BTRFS_INODE_REF_KEY && !fa->ref_type) {
			struct fs_inode_ref ref;
			struct name n = { .len = 0 };
			uint32_t at, len;

			if (fs_inode_ref_next(d, size, &pos, &ref) == 1 && ref.name_len <= BTRFS_NAME_LEN_MAX) {
				memcpy(n.s, ref.name, n.len = ref.name_len);
				if (!find_entry(fs, root, &(struct fs_key){ k.offset, BTRFS_DIR_INDEX_KEY, ref.index },
						ino, &n, &at, &len)) {
					uint8_t *e;

					if (!item_copy(fs, root, &(struct fs_key){ k.offset, BTRFS_DIR_INDEX_KEY, ref.index },
						       &e, &size)) {
						fa->ref_type = ((struct btrfs_dir_item *)(e + at))->type;
						free(e);
					}
				}
			}
		}
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

/* The file extents of (root, ino) hold fewer bytes than its inode item counts. */
static int extents_short(struct fs *fs, uint64_t root, uint64_t ino)
{
	struct facts fa;

	return !inode_facts(fs, root, ino, &fa) && fa.have_item && get_le64(&fa.ii.nbytes) > fa.found_size;
}

static const uint32_t ftype_mode[] = {
	[BTRFS_FT_REG_FILE] = S_IFREG, [BTRFS_FT_DIR] = S_IFDIR, [BTRFS_FT_CHRDEV] = S_IFCHR,
	[BTRFS_FT_BLKDEV] = S_IFBLK, [BTRFS_FT_FIFO] = S_IFIFO, [BTRFS_FT_SOCK] = S_IFSOCK,
	[BTRFS_FT_SYMLINK] = S_IFLNK,
};

/* The type an inode's items show: its entry in a directory, entries of its own, data. */
static uint32_t detect_type(const struct facts *fa, uint64_t ino, uint64_t top)
{
	if (ino == top || fa->dir_entries)
		return S_IFDIR;
	if (fa->ref_type && fa->ref_type < sizeof(ftype_mode) / sizeof(*ftype_mode) && ftype_mode[fa->ref_type])
		return ftype_mode[fa->ref_type];
	if (fa->extents)
		return S_IFREG;
	return get_le64(&fa->ii.rdev) ? S_IFBLK : S_IFREG;
}

/* Whether subvolumes a and b (root items) share a history: one is a snapshot of the
 * other, or both are of the same one. */
static int related(const struct btrfs_root_item *a, const struct btrfs_root_item *b)
{
	static const uint8_t none[BTRFS_UUID_SIZE];

	return !memcmp(a->parent_uuid, b->uuid, BTRFS_UUID_SIZE) || !memcmp(b->parent_uuid, a->uuid, BTRFS_UUID_SIZE) ||
	       (memcmp(a->parent_uuid, none, BTRFS_UUID_SIZE) && !memcmp(a->parent_uuid, b->parent_uuid, BTRFS_UUID_SIZE));
}

/* The inode item of inode ino of root (what remains of it: fa, of type `type`) as a
 * related subvolume holds it: the same type, for a file with data the same first data
 * extent, the same generation unless gen is 0 (the inode as it was when the snapshot
 * was taken); of several, the one changed last. That subvolume with *ii, else 0. */
static uint64_t inode_in_relative(struct fs *fs, uint64_t root, uint64_t ino, uint32_t type, const struct facts *fa,
				  uint64_t gen, struct btrfs_inode_item *ii)
{
	struct btrfs_root_item ri;
	struct fs_key k = { 0, 0, 0 };
	struct fs_root r;
	struct facts other;
	uint64_t from = 0;

	memset(ii, 0, sizeof(*ii));
	if (fs_root_lookup(fs, root, &r))
		return 0;
	for (; !fs_next_subvol_root(fs, &k, &ri); k = (struct fs_key){ k.objectid + 1, 0, 0 }) {
		if (k.objectid == root || !related(&r.item, &ri) || inode_facts(fs, k.objectid, ino, &other) ||
		    !other.have_item || (get_le32(&other.ii.mode) & S_IFMT) != type ||
		    (type == S_IFREG && other.first_data != fa->first_data) ||
		    (gen && get_le64(&other.ii.generation) != gen) ||
		    (from && get_le64(&other.ii.transid) <= get_le64(&ii->transid)))
			continue;
		*ii = other.ii;
		from = k.objectid;
	}
	return from;
}

/* The inode item of ino, made anew, takes what a related subvolume's copy says of it
 * (mode, owner, times, flags; a file's size when it ends in the same last sector). */
static int inode_like(struct fs *fs, uint64_t root, uint64_t ino, const struct btrfs_inode_item *like,
		      const struct facts *fa)
{
	struct btrfs_inode_item *ii = inode_mut(fs, root, ino);
	uint64_t size = get_le64(&like->size), ss = fs->sectorsize;

	if (!ii)
		return fs->err.code;
	/* uid, gid, mode, rdev, flags; the four times (struct btrfs_inode_item) */
	memcpy(&ii->uid, &like->uid, offsetof(struct btrfs_inode_item, sequence) - offsetof(struct btrfs_inode_item, uid));
	memcpy(&ii->atime, &like->atime, sizeof(*ii) - offsetof(struct btrfs_inode_item, atime));
	if (S_ISREG(get_le32(&like->mode)) && size <= fa->end && size + ss > fa->end)
		ii->size = like->size;
	return 0;
}

/* File ino of root, without file extents, gets the inline one its copy in the related
 * subvolume `from` (inode item like) holds when that is the whole file: 1, or 0 when
 * there is none such (an empty file: its other fixes go on). */
static int inline_from(struct rp *rp, uint64_t root, uint64_t ino, uint64_t from, const struct btrfs_inode_item *like)
{
	struct fs *fs = rp->fs;
	struct fs_key k = { ino, BTRFS_EXTENT_DATA_KEY, 0 };
	struct btrfs_inode_item *ii;
	struct fs_file_extent fe;
	uint32_t size;
	uint8_t *d;
	int ret = item_copy(fs, from, &k, &d, &size);

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	if (fs_file_extent(d, size, &fe) || fe.type != BTRFS_FILE_EXTENT_INLINE || fe.ram_bytes != get_le64(&like->size)) {
		free(d);
		return 0;
	}
	ret = fs_item_insert(fs, root, &k, d, size);
	free(d);
	if (ret)
		return ret;
	if (!(ii = inode_mut(fs, root, ino)))
		return fs->err.code;
	ii->size = like->size;
	put_le64(&ii->nbytes, fe.ram_bytes);
	say(rp, "root %llu inode %llu: its inline data taken from root %llu", (unsigned long long)root,
	    (unsigned long long)ino, (unsigned long long)from);
	return 1;
}

/* Hole extents for what no file extent covers, up to the size (no-holes off). */
static int fill_holes(struct rp *rp, uint64_t root, uint64_t ino, uint64_t isize)
{
	struct fs *fs = rp->fs;
	uint64_t ss = fs->sectorsize, end = (isize + ss - 1) / ss * ss, at = 0, *holes = NULL;
	int unknown = 0;
	size_t n = 0, cap = 0;
	struct fs_key k = { ino, BTRFS_EXTENT_DATA_KEY, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, root, &r);

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		struct fs_file_extent fe;
		const uint8_t *d;
		uint32_t size;

		fs_path_key(&p, &k);
		if (k.objectid != ino || k.type != BTRFS_EXTENT_DATA_KEY)
			break;
		d = fs_path_data(&p, &size);
		if (fs_file_extent(d, size, &fe)) {
			unknown = 1;    /* where it ends is unknown: no holes guessed */
			break;
		}
		if (k.offset > at && k.offset <= end && vec_reserve(&holes, &cap, n + 2, sizeof(*holes)) == 0)
			holes[n++] = at, holes[n++] = k.offset;
		k.offset += fe.type == BTRFS_FILE_EXTENT_INLINE ? (fe.ram_bytes + ss - 1) / ss * ss : fe.num_bytes;
		at = k.offset > at ? k.offset : at;
	}
	fs_path_release(fs, &p);
	if (ret >= 0 && at < end && !unknown && vec_reserve(&holes, &cap, n + 2, sizeof(*holes)) == 0)
		holes[n++] = at, holes[n++] = end;
	for (size_t i = 0; ret >= 0 && !unknown && i < n; i += 2) {
		struct btrfs_file_extent_item fi;

		memset(&fi, 0, sizeof(fi));
		put_le64(&fi.generation, fs_tx_generation(fs));
		put_le64(&fi.ram_bytes, holes[i + 1] - holes[i]);
		fi.type = BTRFS_FILE_EXTENT_REG;
		put_le64(&fi.num_bytes, holes[i + 1] - holes[i]);
		ret = fs_item_insert(fs, root, &(struct fs_key){ ino, BTRFS_EXTENT_DATA_KEY, holes[i] }, &fi, sizeof(fi));
	}
	free(holes);
	return ret < 0 ? ret : 0;
}

/* The length of an inline extent's data: its bytes, or what they decompress to (a
 * compressed inline extent holds a sector at most); -1 when they do not decompress. */
static int64_t inline_length(struct fs *fs, const struct fs_file_extent *fe)
{
	struct fs_inflater inf = { 0 };
	uint8_t *out = fe->compression ? malloc(fs->sectorsize + 1) : NULL;
	size_t got = 0;
	int bad = !out || fs_decompress(&inf, fe->compression, fe->inline_data, fe->inline_len, out,
					fs->sectorsize + 1, &got, fs->sectorsize) || got > fs->sectorsize;

	fs_inflater_free(&inf);
	free(out);
	return !fe->compression ? fe->inline_len : bad ? -1 : (int64_t)got;
}

struct ref_match { uint64_t root, ino, offset; };

static int ref_matches(void *ctx, const struct fs_inline_ref *r, uint64_t gen)
{
	const struct ref_match *m = ctx;

	(void)gen;
	return r->type == BTRFS_EXTENT_DATA_REF_KEY && r->root == m->root && r->objectid == m->ino &&
	       r->file_offset == m->offset;
}

/* The type file ino's first extent item had when an uncompressed inline one of a
 * regular extent's size holds a regular extent's fields naming a data extent whose back
 * reference names it (its type alone damaged); 0 else. */
static uint8_t regular_type(struct fs *fs, uint64_t root, uint64_t ino, const uint8_t *d, uint32_t size)
{
	const struct btrfs_file_extent_item *fi = (const void *)d;
	uint64_t bytenr, len;
	struct ref_match m = { root, ino, 0 };
	int nodatasum;

	if (size != sizeof(*fi))
		return 0;
	bytenr = get_le64(&fi->disk_bytenr);
	len = get_le64(&fi->disk_num_bytes);
	m.offset = 0 - get_le64(&fi->offset);
	if (fi->compression || !bytenr || (bytenr | len) % fs->sectorsize ||
	    len > MAX_DATA_EXTENT || each_data_ref(fs, bytenr, len, ref_matches, &m) != 1 ||
	    !file_target(fs, root, ino, &nodatasum))
		return 0;
	return nodatasum || has_csum(fs, bytenr) ? BTRFS_FILE_EXTENT_REG : BTRFS_FILE_EXTENT_PREALLOC;
}

/* The ram bytes of file ino's inline extent made its data's length (the kernel fails a
 * read of a compressed one that gives fewer bytes than they say, and cuts one that
 * gives more), or its type given back when it was a regular one (regular_type: the
 * extent references wait for the next round): 1 when changed. */
static int inline_ram(struct rp *rp, uint64_t root, uint64_t ino)
{
	struct fs *fs = rp->fs;
	struct fs_key k = { ino, BTRFS_EXTENT_DATA_KEY, 0 };
	struct fs_file_extent fe;
	int64_t len = -1;
	uint8_t type = 0;
	uint32_t size;
	uint8_t *d;
	int ret = item_copy(fs, root, &k, &d, &size);

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	if (!fs_file_extent(d, size, &fe) && fe.type == BTRFS_FILE_EXTENT_INLINE &&
	    !(type = regular_type(fs, root, ino, d, size)))
		len = inline_length(fs, &fe);
	free(d);
	if (!type && (len < 0 || (uint64_t)len == fe.ram_bytes))
		return 0;
	if (!(d = fs_item_mut(fs, root, &k, &size)))
		return fs->err.code;
	if (type) {
		((struct btrfs_file_extent_item *)d)->type = type;
		rp->file_extents = 1;
		say(rp, "file extent [%llu 0] of root %llu: its type %u again", (unsigned long long)ino,
		    (unsigned long long)root, type);
		return 1;
	}
	put_le64(d + 8, (uint64_t)len);
	say(rp, "Repaired inline ram_bytes for root %llu ino %llu", (unsigned long long)root, (unsigned long long)ino);
	return 1;
}

/* The size of a file whose inode item was lost (made with size end): where its data
 * ends, less the zeros after the last byte that is not one in its last sector (the
 * kernel writes a file's last sector out with zeros past its end). Not for a file held
 * inline: its extent's length is its size, trailing zeros and all. */
static int trim_lost_file(struct fs *fs, uint64_t root, uint64_t ino, uint64_t end)
{
	uint64_t ss = fs->sectorsize, from = (end - 1) / ss * ss;
	uint8_t *buf = malloc(ss);
	struct btrfs_inode_item *ii;
	struct fs_root r;
	struct fs_file file;
	ssize_t n = -1;

	if (buf && !fs_root_lookup(fs, root, &r) && !fs_file_open(fs, &r, ino, &file)) {
		n = fs_file_pread(&file, buf, (size_t)(end - from), from);
		fs_file_close(&file);
	}
	while (n > 0 && !buf[n - 1])
		n--;
	free(buf);
	if (n <= 0)
		return 0;
	if (!(ii = inode_mut(fs, root, ino)))
		return fs->err.code;
	put_le64(&ii->size, from + (uint64_t)n);
	return 0;
}

int fix_inode(struct rp *rp, const struct rp_fix *f)
{
	struct fs *fs = rp->fs;
	uint64_t e = f->value[0], root = f->root, ino = f->key.objectid, top = f->value[2], from;
	uint32_t links = (uint32_t)f->value[1], mode, size;
	struct btrfs_inode_item *ii, like;
	struct facts fa;
	int ret, csummed;

	if (e & I_DEPRECATED_FREE_INO) {        /* the old inode number cache: it goes */
		struct fs_key from = { BTRFS_FREE_SPACE_OBJECTID, 0, 0 }, to = { BTRFS_FREE_SPACE_OBJECTID, 255, UINT64_MAX };

		say(rp, "removed the deprecated inode cache of root %llu", (unsigned long long)root);
		ret = fs_inode_delete(fs, root, ino);
		return ret ? ret : fs_items_delete_range(fs, root, &from, &to, NULL);
	}
	/* a number no inode can have (a damaged dir entry's): its names go with the names' fixes */
	if (!ck_valid_ino(ino))
		return 0;
	ret = inode_facts(fs, root, ino, &fa);
	if (!ret && (e & I_NO_INODE_ITEM) && !fa.have_item) {
		mode = detect_type(&fa, ino, top);

		say(rp, "root %llu inode %llu recreating inode item, this may be incomplete, please check "
			"permissions and content after the fsck completes.", (unsigned long long)root,
		    (unsigned long long)ino);
		ret = new_inode(fs, root, ino, mode | 0755, ino == top || !links ? 1 : links,
				mode == S_IFDIR ? fa.dir_names : mode == S_IFREG ? fa.end : fa.found_size, fa.found_size);
		if (!ret && mode == S_IFREG && fa.end && fa.normal_extents)
			ret = trim_lost_file(fs, root, ino, fa.end);
		if (!ret && (from = inode_in_relative(fs, root, ino, mode, &fa, 0, &like))) {
			say(rp, "root %llu inode %llu: mode, owner and times taken from root %llu", (unsigned long long)root,
			    (unsigned long long)ino, (unsigned long long)from);
			ret = inode_like(fs, root, ino, &like, &fa);
		}
		if (!ret && ino != top && !links)
			ret = link_lost(rp, root, top, ino, BTRFS_FT_REG_FILE + (mode == S_IFDIR));
		if (!ret)
			ret = inode_facts(fs, root, ino, &fa);
	}
	if (ret || !fa.have_item)
		return ret;
	/* a small file whose extent a lost leaf held: as its snapshot holds it (the rest of
	 * its fixes are the next round's) */
	if (S_ISREG(get_le32(&fa.ii.mode)) && !fa.extents && (e & (I_NO_INODE_ITEM | I_NBYTES_WRONG | I_FILE_EXTENT_DISCOUNT)) &&
	    (from = inode_in_relative(fs, root, ino, S_IFREG, &fa, (e & I_NO_INODE_ITEM) ? 0 : get_le64(&fa.ii.generation), &like)) &&
	    (ret = inline_from(rp, root, ino, from, &like)))
		return ret < 0 ? ret : 0;
	/* (a size beyond any file's is damage of its own: no holes up to it) */
	if ((e & I_FILE_EXTENT_DISCOUNT) && get_le64(&fa.ii.size) <= INT64_MAX) {
		say(rp, "Fixed discount file extents for inode: %llu in root: %llu", (unsigned long long)ino,
		    (unsigned long long)root);
		ret = fill_holes(rp, root, ino, get_le64(&fa.ii.size));
	}
	/* (nbytes wrong: a compressed inline extent's ram bytes may be what is) */
	if (!ret && (e & (I_INLINE_RAM_BYTES | I_NBYTES_WRONG)) && (ret = inline_ram(rp, root, ino)) > 0) {
		ret = inode_facts(fs, root, ino, &fa);
		if (fa.found_size == get_le64(&fa.ii.nbytes))
			e &= ~(uint64_t)I_NBYTES_WRONG;
	}
	if (!ret && ino == top && (e & I_ODD_DIR_ITEM)) {
		struct name dotdot = { .s = "..", .len = 2 };
		uint8_t *d;

		if (item_copy(fs, root, &(struct fs_key){ ino, BTRFS_INODE_REF_KEY, ino }, &d, &size)) {
			say(rp, "added the '..' ref of the top directory of root %llu", (unsigned long long)root);
			ret = add_ref(fs, root, ino, ino, &dotdot);
		} else {
			free(d);
		}
	}
	mode = e & I_INVALID_IMODE ? detect_type(&fa, ino, top) | 0700 : get_le32(&fa.ii.mode);
	if (!ret && (e & I_LINK_COUNT_WRONG) && ino != top && !links)
		ret = link_lost(rp, root, top, ino, S_ISDIR(mode) ? BTRFS_FT_DIR : BTRFS_FT_REG_FILE);
	/* flags with bits no kernel sets are garbage as a whole: its data's checksums say
	 * whether it has any */
	csummed = (e & I_ODD_INODE_FLAGS) && fa.first_data && has_csum(fs, fa.first_data);
	if (ret || !(ii = inode_mut(fs, root, ino)))
		return ret ? ret : fs->err.code;
	if (e & I_INVALID_IMODE) {
		say(rp, "reset mode of inode %llu root %llu to 0%o", (unsigned long long)ino,
		    (unsigned long long)root, mode);
		put_le32(&ii->mode, mode);
	}
	/* (a file whose damaged mode said directory: the size it was checked by is not its) */
	if ((e & I_DIR_ISIZE_WRONG) && S_ISDIR(mode)) {
		say(rp, "reset isize for dir %llu root %llu", (unsigned long long)ino, (unsigned long long)root);
		put_le64(&ii->size, fa.dir_names);
	}
	if (e & I_NBYTES_WRONG) {
		say(rp, "reset nbytes for ino %llu root %llu", (unsigned long long)ino, (unsigned long long)root);
		put_le64(&ii->nbytes, fa.found_size);
	}
	if (e & (I_LINK_COUNT_WRONG | I_INVALID_NLINK)) {
		say(rp, "Fixed the nlink of inode %llu", (unsigned long long)ino);
		put_le32(&ii->nlink, ino == top || S_ISDIR(mode) ? 1 : links ? links : 1);
	}
	if (e & I_ODD_INODE_FLAGS) {
		uint64_t old = get_le64(&ii->flags), flags = old & INODE_FLAGS_KNOWN;

		/* one bit no kernel sets is a flipped bit; more are a field of garbage: only
		 * what the data says stays (data without checksums: NODATASUM, NODATACOW) */
		if (__builtin_popcountll(old & ~INODE_FLAGS_KNOWN) > 1)
			flags &= fa.first_data && !csummed ? INODE_FLAG_NODATASUM | INODE_FLAG_NODATACOW : 0;
		if (csummed)
			flags &= ~(INODE_FLAG_NODATASUM | INODE_FLAG_NODATACOW);
		if (S_ISLNK(mode))
			flags &= ~(INODE_FLAG_IMMUTABLE | INODE_FLAG_APPEND);
		say(rp, "reset flags of inode %llu root %llu to 0x%llx", (unsigned long long)ino,
		    (unsigned long long)root, (unsigned long long)flags);
		put_le64(&ii->flags, flags);
	}
	if (e & I_INVALID_GEN) {
		say(rp, "resetting inode generation/transid to %llu for ino %llu",
		    (unsigned long long)fs_tx_generation(fs), (unsigned long long)ino);
		put_le64(&ii->generation, fs_tx_generation(fs));
		put_le64(&ii->transid, fs_tx_generation(fs));
	}
	if ((e & I_NO_ORPHAN_ITEM) && !get_le32(&ii->nlink))
		ret = fs_item_insert(fs, root, &(struct fs_key){ BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino },
				     NULL, 0);
	return ret;
}
#endif
