//build:Oz
/* Back references of data extents and inode paths (see backref.h). */
#include "backref.h"
#include "util/le.h"
#include <errno.h>
#include <string.h>

/* The file extent items of leaf `parent` that point at the extent. */
static int shared_refs(struct fs *fs, uint64_t parent, uint64_t bytenr, fs_data_ref_fn cb, void *ctx)
{
	struct fs_block *b = fs_block_read(fs, parent, &FS_EXPECT_NONE);
	int ret = 0;

	if (!b)
		return fs->err.code ? fs->err.code : -EIO;
	for (uint32_t i = 0; i < fs_block_nritems(b) && !ret && !fs_block_level(b); i++) {
		struct fs_file_extent fe;
		struct fs_key key;
		uint32_t size;
		const uint8_t *data = fs_item_data(b, i, &size);

		fs_item_key(b, i, &key);
		if (key.type == BTRFS_EXTENT_DATA_KEY && !fs_file_extent(data, size, &fe) &&
		    fe.type != BTRFS_FILE_EXTENT_INLINE && fe.disk_bytenr == bytenr)
			ret = cb(ctx, &(struct fs_data_ref){ bytenr, fs_block_owner(b), key.objectid, key.offset - fe.offset });
	}
	fs_block_put(fs, b);
	return ret;
}

static int data_ref(uint64_t bytenr, const struct btrfs_extent_data_ref *d, fs_data_ref_fn cb, void *ctx)
{
	return cb(ctx, &(struct fs_data_ref){ bytenr, get_le64(&d->root), get_le64(&d->objectid),
					      get_le64(&d->offset) });
}

/* Positions p on the data extent item holding logical: 0, 1 none, <0 error. */
static int extent_holding(struct fs *fs, const struct fs_root *root, uint64_t logical, struct fs_path *p)
{
	struct fs_key key = { logical, UINT8_MAX, UINT64_MAX };
	int ret = fs_search(fs, root, &key, p);

	if (ret < 0 || !p->levels)
		return ret < 0 ? ret : 1;
	/* on the first item past logical, or (1) on the last one of the tree */
	for (ret = ret ? 0 : fs_prev(fs, p); !ret; ret = fs_prev(fs, p)) {
		fs_path_key(p, &key);
		if (key.type == BTRFS_EXTENT_ITEM_KEY)
			return logical - key.objectid < key.offset ? 0 : 1;
		if (key.type <= BTRFS_METADATA_ITEM_KEY)
			return 1;       /* back references and block groups sort after their extent */
	}
	return ret;
}

int fs_data_refs(struct fs *fs, uint64_t logical, fs_data_ref_fn cb, void *ctx)
{
	struct fs_key key;
	struct fs_root root;
	struct fs_path p;
	uint64_t bytenr = 0;
	int ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &root), stop = 0;

	fs_path_init(&p);
	if (ret || (ret = extent_holding(fs, &root, logical, &p)))
		goto out;
	for (; !ret && !stop; ret = fs_next(fs, &p)) {
		struct fs_extent_info ei;
		struct fs_inline_ref r;
		uint32_t size, pos;
		const uint8_t *data = fs_path_data(&p, &size);

		fs_path_key(&p, &key);
		if (bytenr && key.objectid != bytenr)
			break;
		bytenr = key.objectid;
		if (key.type == BTRFS_EXTENT_DATA_REF_KEY && size >= sizeof(struct btrfs_extent_data_ref))
			stop = data_ref(bytenr, (const void *)data, cb, ctx);
		else if (key.type == BTRFS_SHARED_DATA_REF_KEY)
			stop = shared_refs(fs, key.offset, bytenr, cb, ctx);
		else if (key.type == BTRFS_EXTENT_ITEM_KEY && !fs_extent_item(data, size, key.type, &ei))
			for (pos = ei.refs_start; !stop && fs_inline_ref_next(data, size, &pos, &r) == 1;)
				stop = r.type == BTRFS_EXTENT_DATA_REF_KEY ?
				       data_ref(bytenr, (const void *)(data + pos - r.size + 1), cb, ctx) :
				       r.type == BTRFS_SHARED_DATA_REF_KEY ? shared_refs(fs, r.offset, bytenr, cb, ctx) : 0;
	}
out:
	fs_path_release(fs, &p);
	return stop ? stop : ret < 0 ? ret : 0;
}

int fs_ino_first_ref(struct fs *fs, const struct fs_root *root, uint64_t ino, uint64_t *parent,
		     char *name)
{
	struct fs_key key = { ino, BTRFS_INODE_REF_KEY, 0 };
	struct fs_inode_ref r;
	struct fs_path p;
	uint32_t size, pos = 0;
	const uint8_t *data;
	int ret = fs_search(fs, root, &key, &p), found = -ENOENT;

	if (ret < 0) {
		fs_path_release(fs, &p);
		return ret;
	}
	fs_path_key(&p, &key);
	data = fs_path_data(&p, &size);
	if (!ret && key.objectid == ino && key.type == BTRFS_INODE_REF_KEY)
		found = fs_inode_ref_next(data, size, &pos, &r);
	else if (!ret && key.objectid == ino && key.type == BTRFS_INODE_EXTREF_KEY)
		found = fs_inode_extref_next(data, size, &pos, &r);
	ret = 0;
	if (found == 1) {
		*parent = key.type == BTRFS_INODE_REF_KEY ? key.offset : r.parent;
		memcpy(name, r.name, r.name_len);
		name[r.name_len] = 0;
	} else {
		ret = fs_err_at(&fs->err, found == -ENOENT ? -ENOENT : -EUCLEAN, root->objectid, 0,
				"inode %llu has no name", (unsigned long long)ino);
	}
	fs_path_release(fs, &p);
	return ret;
}

int fs_ino_path(struct fs *fs, const struct fs_root *root, uint64_t ino, char *buf, size_t size)
{
	char name[BTRFS_NAME_LEN_MAX + 1];
	size_t pos = size - 1, len;
	uint64_t top = fs_root_dir(root);
	int depth = 0, ret;

	buf[pos] = 0;
	for (; ino != top; depth++) {
		if (depth > 4096)
			return -ELOOP;
		if ((ret = fs_ino_first_ref(fs, root, ino, &ino, name)))
			return ret;
		len = strlen(name);
		if (len + 1 > pos)
			return -ENAMETOOLONG;
		if (pos != size - 1)
			buf[--pos] = '/';
		pos -= len;
		memcpy(buf + pos, name, len);
	}
	memmove(buf, buf + pos, size - pos);
	return 0;
}
