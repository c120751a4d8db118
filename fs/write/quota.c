//build:Oz
/* Quotas switched on and off on an unmounted filesystem: the quota tree's first items
 * (repair's new quota tree, btrfstune --enable-simple-quota), and simple quotas taken
 * away again (--remove-simple-quota). */
#include "write.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fs_quota_fill(struct fs *fs, int simple, int *count)
{
	struct btrfs_qgroup_status_v2 st = { 0 };
	struct btrfs_qgroup_info_item info = { 0 };
	struct btrfs_qgroup_limit_item limit = { 0 };
	struct fs_key rk = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	struct btrfs_root_item ri;
	uint64_t gen = fs_tx_generation(fs);
	int ret;

	put_le64(&st.version, BTRFS_QGROUP_STATUS_VERSION);
	put_le64(&st.generation, gen);
	put_le64(&st.flags, BTRFS_QGROUP_STATUS_FLAG_ON |
		 (simple ? BTRFS_QGROUP_STATUS_FLAG_SIMPLE : BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT));
	put_le64(&st.enable_gen, gen);
	put_le64(&info.generation, gen);
	*count = 0;
	/* the status item of simple quotas is the longer one, with enable_gen */
	ret = fs_item_insert(fs, BTRFS_QUOTA_TREE_OBJECTID, &(struct fs_key){ 0, BTRFS_QGROUP_STATUS_KEY, 0 },
			     &st, simple ? sizeof(st) : sizeof(struct btrfs_qgroup_status_item));
	while (!ret && !(ret = fs_next_subvol_root(fs, &rk, &ri))) {
		ret = fs_item_insert(fs, BTRFS_QUOTA_TREE_OBJECTID, &(struct fs_key){ 0, BTRFS_QGROUP_INFO_KEY, rk.objectid },
				     &info, sizeof(info));
		if (!ret)
			ret = fs_item_insert(fs, BTRFS_QUOTA_TREE_OBJECTID,
					     &(struct fs_key){ 0, BTRFS_QGROUP_LIMIT_KEY, rk.objectid }, &limit, sizeof(limit));
		(*count)++;
		rk.objectid++;
		rk.offset = 0;
	}
	return ret < 0 ? ret : 0;
}

int fs_simple_quota_enable(struct fs *fs)
{
	int n, ret = fs_tree_create(fs, BTRFS_QUOTA_TREE_OBJECTID);

	if (ret == -EEXIST)
		return fs_err(&fs->err, ret, "quotas are enabled already");
	if (!ret)
		ret = fs_quota_fill(fs, 1, &n);
	if (!ret)
		put_le64(&fs->sb.incompat_flags,
			 get_le64(&fs->sb.incompat_flags) | BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT);
	return ret;
}

/* The next extent item at or after *k whose first inline reference is an owner
 * reference (simple quotas put it there); 1 when there is none. */
static int next_owned_extent(struct fs *fs, struct fs_key *k)
{
	struct fs_root er;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &er);

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &er, k, &p); ret == 0; ret = fs_next(fs, &p)) {
		struct fs_extent_info ei;
		struct fs_inline_ref ir;
		uint32_t size, pos;
		const uint8_t *data = fs_path_data(&p, &size);

		fs_path_key(&p, k);
		if (k->type != BTRFS_EXTENT_ITEM_KEY || fs_extent_item(data, size, k->type, &ei))
			continue;
		pos = ei.refs_start;
		if (fs_inline_ref_next(data, size, &pos, &ir) == 1 && ir.type == FS_EXTENT_OWNER_REF_KEY)
			break;
	}
	fs_path_release(fs, &p);
	return ret;
}

/* Owner references out of every extent item, then the quota tree and the flag. */
int fs_simple_quota_remove(struct fs *fs)
{
	struct fs_key k = { 0, BTRFS_EXTENT_ITEM_KEY, 0 };
	uint32_t len = fs_inline_ref_size(FS_EXTENT_OWNER_REF_KEY);
	int ret;

	if (!(get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT))
		return fs_err(&fs->err, -EINVAL, "simple quotas are not enabled");
	while (!(ret = next_owned_extent(fs, &k))) {
		struct fs_extent_info ei;
		uint32_t size;
		uint8_t *item = fs_item_mut(fs, BTRFS_EXTENT_TREE_OBJECTID, &k, &size);

		if (!item)
			return fs->err.code;
		fs_extent_item(item, size, k.type, &ei);
		memmove(item + ei.refs_start, item + ei.refs_start + len, size - ei.refs_start - len);
		if ((ret = fs_item_resize(fs, BTRFS_EXTENT_TREE_OBJECTID, &k, size - len)))
			return ret;
		fs_key_next(&k);
	}
	if (ret < 0 || (ret = fs_tree_delete(fs, BTRFS_QUOTA_TREE_OBJECTID)))
		return ret;
	put_le64(&fs->sb.incompat_flags, get_le64(&fs->sb.incompat_flags) & ~BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT);
	return 0;
}
