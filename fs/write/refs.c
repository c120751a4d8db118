//build:Oz
/* Back references of extents: one more or one less of any of the four kinds, inline in
 * the extent item or keyed beside it; the data references of a leaf's file extents; and
 * the kernel's rules for copying a tree block that snapshots share. */
#include "config.h"
#include "internal.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

/* One back reference: by tree (TREE_BLOCK_REF: id is the tree), by parent block
 * (SHARED_BLOCK_REF, SHARED_DATA_REF: id is the parent's bytenr) or by file
 * (EXTENT_DATA_REF: tree id, inode and file offset minus the extent offset). */
struct wref { uint8_t type; uint64_t id, ino, offset; };

static int ref_counted(uint8_t type)
{
	return type == BTRFS_EXTENT_DATA_REF_KEY || type == BTRFS_SHARED_DATA_REF_KEY;
}

static int ref_matches(const struct fs_inline_ref *r, const struct wref *ref)
{
	if (r->type != ref->type)
		return 0;
	if (ref->type == BTRFS_EXTENT_DATA_REF_KEY)
		return r->root == ref->id && r->objectid == ref->ino && r->file_offset == ref->offset;
	return r->offset == ref->id;
}

/* Where the count sits: in an inline ref (after its type byte) or a keyed ref's item.
 * btrfs_extent_data_ref: root, objectid, offset, count; a shared data ref: parent
 * (inline only), count. */
static uint32_t count_at(uint8_t type, int is_inline)
{
	if (type == BTRFS_EXTENT_DATA_REF_KEY)
		return (is_inline ? 1 : 0) + 24;
	return is_inline ? 1 + 8 : 0;
}

static struct fs_key keyed_ref_key(uint64_t bytenr, const struct wref *ref)
{
	uint64_t off = ref->type == BTRFS_EXTENT_DATA_REF_KEY ? fs_data_ref_hash(ref->id, ref->ino, ref->offset) :
								 ref->id;

	return (struct fs_key){ bytenr, ref->type, off };
}

static int ref_missing(struct fs *fs, uint64_t bytenr, const struct wref *ref)
{
	return fs_err_at(&fs->err, -EUCLEAN, ref->id, bytenr, "extent reference (type %u) %s", ref->type,
			 ref->type == BTRFS_EXTENT_DATA_REF_KEY ? "not found (or a hash collision)" : "not found");
}

/* The keyed form of ref gains (sign 1) or loses (-1) one. */
static int keyed_ref_change(struct fs *fs, uint64_t bytenr, const struct wref *ref, int sign)
{
	struct fs_key key = keyed_ref_key(bytenr, ref);
	uint32_t size, c = count_at(ref->type, 0);
	uint8_t *d = fs_item_mut(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, &size), item[28];
	uint32_t count;

	if (!d && fs->err.code != -ENOENT)
		return fs->err.code;
	if (d && ref->type == BTRFS_EXTENT_DATA_REF_KEY &&
	    (size < 28 || get_le64(d) != ref->id || get_le64(d + 8) != ref->ino || get_le64(d + 16) != ref->offset))
		return fs_err_at(&fs->err, -ENOTSUP, ref->id, bytenr, "data extent reference hash collision: not supported");
	if (d && ref_counted(ref->type) && size < c + 4)
		return fs_err_at(&fs->err, -EUCLEAN, ref->id, bytenr, "extent reference item too short");
	if (!d && sign < 0)
		return ref_missing(fs, bytenr, ref);
	if (!d) {
		/* a new keyed ref: of data, the ref (by file) and its count; of a tree block, no data */
		if (ref->type == BTRFS_EXTENT_DATA_REF_KEY) {
			put_le64(item, ref->id);
			put_le64(item + 8, ref->ino);
			put_le64(item + 16, ref->offset);
		}
		put_le32(item + c, 1);
		return fs_item_insert(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, item, ref_counted(ref->type) ? c + 4 : 0);
	}
	if (!ref_counted(ref->type)) {
		if (sign > 0)
			return fs_err_at(&fs->err, -EUCLEAN, ref->id, bytenr, "tree block referenced twice by one tree or block");
		return fs_item_delete(fs, BTRFS_EXTENT_TREE_OBJECTID, &key);
	}
	count = get_le32(d + c);
	if (sign < 0 && count <= 1)
		return fs_item_delete(fs, BTRFS_EXTENT_TREE_OBJECTID, &key);
	put_le32(d + c, sign > 0 ? count + 1 : count - 1);
	return 0;
}

/* The extent item at ekey gets one reference of kind ref more (sign 1) or less (-1):
 * an inline ref's count changes or it goes, else the keyed one. *left: the extent's
 * references after. */
static int ref_change(struct fs *fs, const struct fs_key *ekey, const struct wref *ref, int sign, uint64_t *left)
{
	uint32_t size, pos, here = 0;
	uint8_t *d = fs_item_mut(fs, BTRFS_EXTENT_TREE_OBJECTID, ekey, &size);
	struct fs_extent_info ei;
	struct fs_inline_ref r;
	int ret, found = 0;

	if (!d)
		return fs->err.code == -ENOENT ? fs_err_at(&fs->err, -EUCLEAN, ref->id, ekey->objectid,
							  "extent has no extent item") : fs->err.code;
	ret = fs_extent_item(d, size, ekey->type, &ei);
	for (pos = ei.refs_start; !ret && !found && (here = pos, ret = fs_inline_ref_next(d, size, &pos, &r)) == 1; ret = 0)
		found = ref_matches(&r, ref);
	if (ret < 0 || (sign < 0 && !ei.refs) ||
	    !(ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) != (ref->type == BTRFS_EXTENT_DATA_REF_KEY ||
							  ref->type == BTRFS_SHARED_DATA_REF_KEY))
		return fs_err_at(&fs->err, -EUCLEAN, ref->id, ekey->objectid, "bad extent item");
	*left = sign > 0 ? ei.refs + 1 : ei.refs - 1;
	put_le64(&((struct btrfs_extent_item *)d)->refs, *left);
	if (!found)
		return keyed_ref_change(fs, ekey->objectid, ref, sign);
	if (ref_counted(ref->type) && (sign > 0 || r.count > 1)) {
		put_le32(d + here + count_at(ref->type, 1), sign > 0 ? r.count + 1 : r.count - 1);
		return 0;
	}
	if (sign > 0)
		return fs_err_at(&fs->err, -EUCLEAN, ref->id, ekey->objectid, "tree block referenced twice by one tree or block");
	memmove(d + here, d + here + r.size, size - here - r.size);
	return fs_item_resize(fs, BTRFS_EXTENT_TREE_OBJECTID, ekey, size - r.size);
}

/* ---- data extents ---------------------------------------------------------------- */

/* The data extent [bytenr, +num_bytes) gains or loses ref; without references left it
 * goes, with its checksums and its space. */
static int data_ref_change(struct fs *fs, uint64_t bytenr, uint64_t num_bytes, const struct wref *ref, int sign)
{
	struct fs_key key = { bytenr, BTRFS_EXTENT_ITEM_KEY, num_bytes };
	uint64_t left = 1;
	int ret = ref_change(fs, &key, ref, sign, &left);

	if (ret || left)
		return ret;
	ret = fs_item_delete(fs, BTRFS_EXTENT_TREE_OBJECTID, &key);
	if (!ret)
		ret = fs_csum_delete(fs, bytenr, num_bytes);
	return ret ? ret : wspace_add(fs, bytenr, num_bytes, -1);
}

int fs_data_unref(struct fs *fs, uint64_t bytenr, uint64_t num_bytes, uint64_t root,
		  uint64_t ino, uint64_t offset)
{
	return data_ref_change(fs, bytenr, num_bytes, &(struct wref){ BTRFS_EXTENT_DATA_REF_KEY, root, ino, offset }, -1);
}

/* Each file extent of the leaf blk that references data: counted, and with how given a
 * reference of its own (tree: how->id; parent: the kind and id) or one taken (sign -1). */
static int each_data_ref(struct fs *fs, const uint8_t *blk, const struct wref *how, int sign)
{
	const struct btrfs_header *h = (const void *)blk;
	const struct btrfs_item *it = (const void *)(blk + HDR_SIZE);
	struct fs_file_extent fe;
	struct fs_key k;
	int n = 0, ret;

	for (uint32_t i = 0; !h->level && i < get_le32(&h->nritems); i++) {
		struct wref ref;

		if (it[i].key.type != BTRFS_EXTENT_DATA_KEY)
			continue;
		ret = fs_file_extent(blk + HDR_SIZE + get_le32(&it[i].offset), get_le32(&it[i].size), &fe);
		if (!ret && (fe.type == BTRFS_FILE_EXTENT_INLINE || !fe.disk_bytenr))
			continue;
		n++;
		if (!how)
			continue;
		fs_key_from_disk(&k, &it[i].key);
		ref = *how;
		if (ref.type == BTRFS_EXTENT_DATA_REF_KEY) {
			ref.ino = k.objectid;
			ref.offset = k.offset - fe.offset;
		}
		if (ret || (ret = data_ref_change(fs, fe.disk_bytenr, fe.disk_num_bytes, &ref, sign)))
			return ret < 0 ? ret : fs_err_at(&fs->err, -EUCLEAN, how->id, h->bytenr, "bad file extent");
	}
	return n;
}

int leaf_data_refs(struct fs *fs, const uint8_t *blk)
{
	return each_data_ref(fs, blk, NULL, 0);
}

/* The extent tree is changed in the middle of a search of another tree: the search's
 * settings are put aside meanwhile. */
struct search_settings { int any_gen, stop_level; };

static struct search_settings settings_aside(struct fs *fs)
{
	struct search_settings s = { fs->w->any_gen, fs->w->stop_level };

	fs->w->any_gen = fs->w->stop_level = 0;
	return s;
}

static int settings_back(struct fs *fs, struct search_settings s, int ret)
{
	fs->w->any_gen = s.any_gen;
	fs->w->stop_level = s.stop_level;
	return ret;
}

int copy_data_refs(struct fs *fs, const uint8_t *blk, uint64_t tree)
{
	struct search_settings s;
	int ret;

	if (get_le64(&((const struct btrfs_header *)blk)->owner) == tree)
		return 0;
	s = settings_aside(fs);
	ret = each_data_ref(fs, blk, &(struct wref){ BTRFS_EXTENT_DATA_REF_KEY, tree, 0, 0 }, 1);
	return settings_back(fs, s, ret < 0 ? ret : 0);
}

/* ---- tree blocks that snapshots share -------------------------------------------- */

/* The key of the extent item of the tree block bytenr at level (a METADATA_ITEM with
 * skinny metadata, else an EXTENT_ITEM), its refs and flags. */
static int block_extent(struct fs *fs, uint64_t bytenr, int level, struct fs_key *key, uint64_t *refs,
			uint64_t *flags)
{
	struct fs_extent_info ei;
	struct fs_path p;
	uint32_t size;
	const uint8_t *d;
	int ret;

	*key = (struct fs_key){ bytenr, BTRFS_METADATA_ITEM_KEY, (uint64_t)level };
	d = tree_item(fs, BTRFS_EXTENT_TREE_OBJECTID, key, &p, &size);
	if (!d && fs->err.code == -ENOENT) {
		*key = (struct fs_key){ bytenr, BTRFS_EXTENT_ITEM_KEY, fs->nodesize };
		d = tree_item(fs, BTRFS_EXTENT_TREE_OBJECTID, key, &p, &size);
	}
	if (!d)
		return fs->err.code;
	ret = fs_extent_item(d, size, key->type, &ei);
	fs_path_release(fs, &p);
	if (ret || !(ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK))
		return fs_err_at(&fs->err, -EUCLEAN, 0, bytenr, "bad extent item of a tree block");
	*refs = ei.refs;
	*flags = ei.flags;
	return 0;
}

/* The tree block bytenr at level gains or loses ref; without references left it goes. */
static int block_ref_change(struct fs *fs, uint64_t bytenr, int level, const struct wref *ref, int sign)
{
	struct fs_key key;
	uint64_t refs, flags, left = 1;
	int ret = block_extent(fs, bytenr, level, &key, &refs, &flags);

	if (!ret)
		ret = ref_change(fs, &key, ref, sign, &left);
	if (ret || left)
		return ret;
	ret = fs_item_delete(fs, BTRFS_EXTENT_TREE_OBJECTID, &key);
	return ret ? ret : wspace_add(fs, bytenr, fs->nodesize, -1);
}

/* The header of the tree block image blk. */
static const struct btrfs_header *header(const uint8_t *blk)
{
	return (const struct btrfs_header *)blk;
}

/* Each child of the block bytenr, image blk (tree blocks of a node, data of a leaf),
 * gains or loses a reference: by tree (by_parent 0) or by the block as their parent. */
static int children_refs(struct fs *fs, uint64_t bytenr, const uint8_t *blk, uint64_t tree, int by_parent, int sign)
{
	const struct btrfs_key_ptr *kp = (const void *)(blk + HDR_SIZE);
	uint32_t n = get_le32(&header(blk)->nritems);
	int level = header(blk)->level, ret;
	struct wref ref;

	if (!level) {
		ref = by_parent ? (struct wref){ BTRFS_SHARED_DATA_REF_KEY, bytenr, 0, 0 } :
				  (struct wref){ BTRFS_EXTENT_DATA_REF_KEY, tree, 0, 0 };
		ret = each_data_ref(fs, blk, &ref, sign);
		return ret < 0 ? ret : 0;
	}
	ref = by_parent ? (struct wref){ BTRFS_SHARED_BLOCK_REF_KEY, bytenr, 0, 0 } :
			  (struct wref){ BTRFS_TREE_BLOCK_REF_KEY, tree, 0, 0 };
	for (uint32_t i = 0; i < n && i < (fs->nodesize - HDR_SIZE) / PTR_SIZE; i++)
		if ((ret = block_ref_change(fs, get_le64(&kp[i].blockptr), level - 1, &ref, sign)))
			return ret;
	return 0;
}

static int set_full_backref(struct fs *fs, uint64_t bytenr, int level)
{
	struct fs_key key;
	uint64_t refs, flags;
	uint32_t size;
	struct btrfs_extent_item *ei;
	int ret = block_extent(fs, bytenr, level, &key, &refs, &flags);

	if (ret)
		return ret;
	ei = (struct btrfs_extent_item *)fs_item_mut(fs, BTRFS_EXTENT_TREE_OBJECTID, &key, &size);
	if (!ei)
		return fs->err.code;
	put_le64(&ei->flags, flags | BTRFS_BLOCK_FLAG_FULL_BACKREF);
	return 0;
}

static int is_subvolume_tree(uint64_t tree)
{
	return tree == BTRFS_FS_TREE_OBJECTID || (tree >= BTRFS_FIRST_FREE_OBJECTID && tree <= BTRFS_LAST_FREE_OBJECTID);
}

/* What the kernel does when a subvolume tree copies a block other trees reach too
 * (extent refs > 1) or reached (FULL_BACKREF: its children are referenced by it as
 * their parent):
 *  - the tree that made it, copying it while others still use it: the copy keeps the
 *    children's references by tree; the old block is marked FULL_BACKREF and its
 *    children get a reference by parent each;
 *  - any other tree: the copy's children get references by this tree; when this was
 *    the last tree using a FULL_BACKREF block, its children lose the references by it.
 * In both the tree's reference to the old block goes. */
static int copy_shared(struct fs *fs, uint64_t tree, uint64_t bytenr, const uint8_t *blk, uint64_t refs,
		       uint64_t flags)
{
	int level = header(blk)->level, ret;

	if (refs > 1 && get_le64(&header(blk)->owner) == tree && !(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF)) {
		ret = children_refs(fs, bytenr, blk, tree, 1, 1);
		if (!ret)
			ret = set_full_backref(fs, bytenr, level);
	} else {
		ret = children_refs(fs, bytenr, blk, tree, 0, 1);
		if (!ret && refs == 1)
			ret = children_refs(fs, bytenr, blk, tree, 1, -1);
	}
	return ret ? ret : block_ref_change(fs, bytenr, level, &(struct wref){ BTRFS_TREE_BLOCK_REF_KEY, tree, 0, 0 }, -1);
}

int share_cow(struct fs *fs, uint64_t tree, uint64_t bytenr, const uint8_t *blk)
{
	struct search_settings s;
	struct fs_key key;
	uint64_t refs, flags;
	int ret;

	if (!is_subvolume_tree(tree))
		return 0;
	s = settings_aside(fs);
	ret = block_extent(fs, bytenr, header(blk)->level, &key, &refs, &flags);
	if (ret == -ENOENT)     /* the queued free says so */
		return settings_back(fs, s, 0);
	if (!ret && refs == 1 && !(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF))
		return settings_back(fs, s, 0);
	if (!ret)
		ret = copy_shared(fs, tree, bytenr, blk, refs, flags);
	return settings_back(fs, s, ret ? ret : 1);
}
