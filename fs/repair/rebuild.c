//build:Oz
/* Derived trees made anew inside the repair's transaction from what the other trees say:
 * the checksum tree (the items that can still be read, the rest computed from the data),
 * the uuid tree (from the root items), the data relocation tree (its empty top
 * directory), the device tree (a device extent for each chunk stripe) and the quota
 * tree (a qgroup for each subvolume, to be counted again). The old tree is
 * dropped without trusting it: its blocks that can be read are freed, the others stay
 * allocated for the next check (or the extent tree made anew) to find unreferenced. */
#include "config.h"
#if CFG_CHECK_REPAIR
#include "internal.h"
#include "fs/core/range.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/uuid.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CSUM_TREE BTRFS_CSUM_TREE_OBJECTID

/* Calls cb for every item of every subvolume tree: cb returns 0 to go on. */
static int each_fs_item(struct fs *fs, int (*cb)(struct fs *fs, uint64_t tree, const struct fs_key *key,
						 const uint8_t *data, uint32_t size, void *arg), void *arg)
{
	struct fs_key rk = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	struct btrfs_root_item ri;
	int ret = 0;

	while (!ret) {
		struct fs_root tree;
		struct fs_path p;
		struct fs_key k = { 0, 0, 0 };

		ret = fs_next_subvol_root(fs, &rk, &ri);
		if (ret || (ret = fs_root_lookup(fs, rk.objectid, &tree)))
			return ret > 0 ? 0 : ret;
		fs_path_init(&p);
		for (ret = fs_search(fs, &tree, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
			const uint8_t *data;
			uint32_t size;

			fs_path_key(&p, &k);
			data = fs_path_data(&p, &size);
			if ((ret = cb(fs, rk.objectid, &k, data, size, arg)))
				break;
		}
		fs_path_release(fs, &p);
		if (ret == 1)
			ret = 0;        /* the end of this tree: the next one */
		rk.objectid++;
	}
	return ret < 0 ? ret : 0;
}

/* The tree made anew, empty (its old blocks dropped, see above). */
static int tree_anew(struct fs *fs, uint64_t tree)
{
	struct fs_root r;
	int ret = 0;

	if (!fs_root_lookup(fs, tree, &r))
		ret = fs_tree_drop(fs, tree);
	return ret ? ret : fs_tree_create(fs, tree);
}

/* ---- quota tree ------------------------------------------------------------------ */

/* The quota tree made anew: quotas on, a qgroup 0/id for each subvolume with its counts
 * marked inconsistent (the kernel's `btrfs quota rescan` counts them again); limits and
 * higher qgroups are lost with the old tree. Simple quotas are not made anew. */
int rebuild_quota_tree(struct rp *rp)
{
	struct fs *fs = rp->fs;
	int ret, n = 0;

	if (get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT)
		return fs_err_at(&fs->err, -EOPNOTSUPP, BTRFS_QUOTA_TREE_OBJECTID, 0,
				 "a damaged quota tree of simple quotas is not made anew");
	ret = tree_anew(fs, BTRFS_QUOTA_TREE_OBJECTID);
	if (!ret)
		ret = fs_quota_fill(fs, 0, &n);
	if (ret < 0)
		return ret;
	say(rp, "quota tree made anew: %d qgroups, marked inconsistent (run btrfs quota rescan)", n);
	return 0;
}

int rebuild_block_group_tree(struct rp *rp)
{
	int ret = tree_anew(rp->fs, BTRFS_BLOCK_GROUP_TREE_OBJECTID);

	if (!ret)
		say(rp, "block group tree made anew from the chunks");
	return ret;
}

/* ---- checksums ------------------------------------------------------------------ */

struct csums {
	struct fs *fs;
	uint8_t *buf;                   /* data read, then their checksums */
	size_t bufsize;
	uint64_t salvaged_end;          /* the end of the last item salvaged */
	uint64_t nodatasum_ino;         /* the inode of the items walked has NODATASUM */
	uint64_t salvaged, computed;    /* checksums */
	int ret;
};

/* Checksums of the data [start, start + len) as read from the disk, in items of as
 * many as a leaf takes. */
static int csum_data(struct fs *fs, uint64_t start, uint64_t len, struct csums *cs)
{
	uint64_t ss = fs->sectorsize, per_item = (fs->nodesize - sizeof(struct btrfs_header) -
						   2 * sizeof(struct btrfs_item)) / fs->csum_size - 1;
	uint8_t *sums = cs->buf + cs->bufsize / 2, sum[CSUM_MAX_SIZE];
	int ret = 0;

	if (per_item * fs->csum_size > cs->bufsize / 2)
		per_item = cs->bufsize / 2 / fs->csum_size;
	while (!ret && len) {
		uint64_t n = len / ss < per_item ? len / ss : per_item, chunk = cs->bufsize / 2 / ss;

		for (uint64_t i = 0; !ret && i < n; i += chunk) {
			uint64_t m = n - i < chunk ? n - i : chunk;

			ret = fs_read_data(fs, start + i * ss, cs->buf, m * ss, 0);
			for (uint64_t j = 0; !ret && j < m; j++) {
				csum_compute(fs->csum_type, cs->buf + j * ss, ss, sum);
				memcpy(sums + (i + j) * fs->csum_size, sum, fs->csum_size);
			}
		}
		if (!ret)
			ret = fs_item_insert(fs, CSUM_TREE, &(struct fs_key){ BTRFS_EXTENT_CSUM_OBJECTID,
					     BTRFS_EXTENT_CSUM_KEY, start }, sums, (uint32_t)(n * fs->csum_size));
		cs->computed += n;
		start += n * ss;
		len -= n * ss;
	}
	return ret;
}

/* Where the checksum tree covers `at` up to (*end, 0 when it does not), and where the
 * next checksum item after `at` starts (*next, UINT64_MAX when none). */
static int csum_coverage(struct fs *fs, uint64_t at, uint64_t *end, uint64_t *next)
{
	struct fs_key k = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, at };
	struct fs_root root;
	struct fs_path p;
	uint32_t size;
	int ret = fs_root_lookup(fs, CSUM_TREE, &root);

	*end = 0;
	*next = UINT64_MAX;
	if (ret)
		return ret;
	fs_path_init(&p);
	if (!fs_search_le(fs, &root, &k, &p)) {
		fs_path_data(&p, &size);
		fs_path_key(&p, &k);
		if (k.offset + size / fs->csum_size * fs->sectorsize > at)
			*end = k.offset + size / fs->csum_size * fs->sectorsize;
	}
	fs_path_release(fs, &p);
	k = (struct fs_key){ BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, at + 1 };
	ret = fs_search(fs, &root, &k, &p);
	if (!ret) {
		fs_path_key(&p, &k);
		if (k.objectid == BTRFS_EXTENT_CSUM_OBJECTID && k.type == BTRFS_EXTENT_CSUM_KEY)
			*next = k.offset;
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

/* Checksums computed for the sectors of [start, end) the tree does not cover yet. */
static int csum_gaps(struct fs *fs, uint64_t start, uint64_t end, struct csums *cs)
{
	uint64_t covered, next;
	int ret = 0;

	while (!ret && start < end) {
		ret = csum_coverage(fs, start, &covered, &next);
		if (ret)
			break;
		if (covered) {
			start = covered;
			continue;
		}
		next = next < end ? next : end;
		ret = csum_data(fs, start, next - start, cs);
		start = next;
	}
	return ret;
}

/* The data of a regular file extent has checksums, the whole extent as written on disk;
 * inline extents and the files of NODATASUM inodes have none. */
static int csum_file_extent(struct fs *fs, uint64_t tree, const struct fs_key *key, const uint8_t *data,
			    uint32_t size, void *arg)
{
	struct csums *cs = arg;
	const struct btrfs_inode_item *ii;
	struct fs_file_extent fe;

	(void)tree;
	if (key->type == BTRFS_INODE_ITEM_KEY && (ii = fs_inode_item(data, size)))
		cs->nodatasum_ino = get_le64(&ii->flags) & BTRFS_INODE_NODATASUM ? key->objectid : 0;
	if (key->type != BTRFS_EXTENT_DATA_KEY || cs->nodatasum_ino == key->objectid ||
	    fs_file_extent(data, size, &fe) || fe.type != BTRFS_FILE_EXTENT_REG || !fe.disk_bytenr)
		return 0;
	return csum_gaps(fs, fe.disk_bytenr, fe.disk_bytenr + fe.disk_num_bytes, cs);
}

/* The part of an extent not yet written (prealloc) has none, though the rest has. */
static int uncsum_prealloc(struct fs *fs, uint64_t tree, const struct fs_key *key, const uint8_t *data,
			   uint32_t size, void *arg)
{
	struct fs_file_extent fe;

	(void)tree, (void)arg;
	if (key->type != BTRFS_EXTENT_DATA_KEY || fs_file_extent(data, size, &fe) ||
	    fe.type != BTRFS_FILE_EXTENT_PREALLOC || !fe.disk_bytenr)
		return 0;
	return fs_csum_delete(fs, fe.disk_bytenr + fe.offset, fe.num_bytes);
}

/* A checksum item of the old tree that still reads well is kept: sector aligned, whole
 * checksums, after the one kept before it (data it covers that no file uses is the
 * next check's to drop). */
static int salvage_csum(void *ctx, const struct fs_key *k, const uint8_t *data, uint32_t size)
{
	struct csums *cs = ctx;
	struct fs *fs = cs->fs;

	if (k->objectid != BTRFS_EXTENT_CSUM_OBJECTID || k->type != BTRFS_EXTENT_CSUM_KEY ||
	    k->offset % fs->sectorsize || !size || size % fs->csum_size || k->offset < cs->salvaged_end)
		return 0;
	cs->ret = fs_item_insert(fs, CSUM_TREE, k, data, size);
	if (cs->ret)
		return 1;
	cs->salvaged_end = k->offset + size / fs->csum_size * fs->sectorsize;
	cs->salvaged += size / fs->csum_size;
	return 0;
}

int rebuild_csum_tree(struct rp *rp, int salvage)
{
	struct fs *fs = rp->fs;
	struct csums cs = { .fs = fs, .bufsize = 2u << 20 };
	struct fs_range_ops ops = { .item = salvage_csum };
	struct fs_key lo = { 0, 0, 0 }, hi = { UINT64_MAX, UINT8_MAX, UINT64_MAX };
	struct fs_root old;
	int ret = fs_root_lookup(fs, CSUM_TREE, &old);

	cs.buf = malloc(cs.bufsize);
	if (!cs.buf)
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	if (ret == -ENOENT)
		salvage = 0;
	ret = tree_anew(fs, CSUM_TREE);
	/* the old tree's blocks are not reused before the transaction ends: still readable */
	if (!ret && salvage && (ret = fs_range_visit(fs, &old, &lo, &hi, &ops, &cs)) == 1)
		ret = cs.ret;
	if (!ret)
		ret = each_fs_item(fs, csum_file_extent, &cs);
	if (!ret)
		ret = each_fs_item(fs, uncsum_prealloc, NULL);
	free(cs.buf);
	if (!ret && salvage)
		say(rp, "checksum tree made anew: %llu checksums kept, %llu computed from the data",
		    (unsigned long long)cs.salvaged, (unsigned long long)cs.computed);
	else if (!ret)
		say(rp, "checksum tree made anew from the data");
	return ret;
}

/* ---- uuid tree ------------------------------------------------------------------ */

/* Adds subvolume id to the uuid tree item of u (key type type). */
static int uuid_add(struct fs *fs, const uint8_t *u, uint8_t type, uint64_t id)
{
	struct fs_key k = { get_le64(u), type, get_le64(u + 8) };
	uint8_t le[8];
	uint32_t size;
	uint8_t *d;
	int ret;

	put_le64(le, id);
	ret = fs_item_insert(fs, BTRFS_UUID_TREE_OBJECTID, &k, le, sizeof(le));
	if (ret != -EEXIST)
		return ret;
	if (!(d = fs_item_mut(fs, BTRFS_UUID_TREE_OBJECTID, &k, &size)))
		return fs->err.code;
	for (uint32_t i = 0; i + 8 <= size; i += 8)
		if (get_le64(d + i) == id)
			return 0;
	ret = fs_item_resize(fs, BTRFS_UUID_TREE_OBJECTID, &k, size + 8);
	if (!ret && (d = fs_item_mut(fs, BTRFS_UUID_TREE_OBJECTID, &k, &size)))
		memcpy(d + size - 8, le, 8);
	return ret ? ret : d ? 0 : fs->err.code;
}

int rebuild_uuid_tree(struct rp *rp)
{
	struct fs *fs = rp->fs;
	struct fs_key k = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	struct btrfs_root_item ri;
	int ret = tree_anew(fs, BTRFS_UUID_TREE_OBJECTID);

	/* one root item at a time: the root tree changes as the uuid tree grows */
	while (!ret && !(ret = fs_next_subvol_root(fs, &k, &ri))) {
		if (!uuid_is_null(ri.uuid))
			ret = uuid_add(fs, ri.uuid, BTRFS_UUID_KEY_SUBVOL, k.objectid);
		if (!ret && !uuid_is_null(ri.received_uuid))
			ret = uuid_add(fs, ri.received_uuid, BTRFS_UUID_KEY_RECEIVED_SUBVOL, k.objectid);
		fs_key_next(&k);
	}
	if (ret < 0)
		return ret;
	say(rp, "uuid tree made anew from the subvolumes' root items");
	return 0;
}

/* ---- data relocation tree ------------------------------------------------------- */

/* Its top directory (256) and nothing else, as mkfs makes it. */
int rebuild_data_reloc_tree(struct rp *rp)
{
	struct fs *fs = rp->fs;
	uint64_t tree = BTRFS_DATA_RELOC_TREE_OBJECTID, gen = fs_tx_generation(fs), now = (uint64_t)time(NULL);
	struct fs_key rk = { tree, BTRFS_ROOT_ITEM_KEY, 0 };
	uint8_t ref[sizeof(struct btrfs_inode_ref) + 2];
	struct btrfs_inode_ref *ir = (void *)ref;
	struct btrfs_inode_item ii;
	struct btrfs_root_item *ri;
	uint32_t size;
	int ret = tree_anew(fs, tree);

	memset(&ii, 0, sizeof(ii));
	put_le64(&ii.generation, gen);
	put_le64(&ii.nbytes, fs->nodesize);
	put_le32(&ii.nlink, 1);
	put_le32(&ii.mode, 040755);
	put_le64(&ii.atime.sec, now);
	put_le64(&ii.ctime.sec, now);
	put_le64(&ii.mtime.sec, now);
	put_le64(&ii.otime.sec, now);
	memset(ref, 0, sizeof(ref));
	put_le16(&ir->name_len, 2);
	memcpy(ir + 1, "..", 2);
	if (!ret)
		ret = fs_item_insert(fs, tree, &(struct fs_key){ 256, BTRFS_INODE_ITEM_KEY, 0 }, &ii, sizeof(ii));
	if (!ret)
		ret = fs_item_insert(fs, tree, &(struct fs_key){ 256, BTRFS_INODE_REF_KEY, 256 }, ref, sizeof(ref));
	if (!ret && (ri = (void *)fs_item_mut(fs, BTRFS_ROOT_TREE_OBJECTID, &rk, &size)) &&
	    size >= offsetof(struct btrfs_root_item, root_dirid) + 8) {
		put_le64(&ri->root_dirid, 256);
		ri->inode = ii;
		put_le32(&ri->inode.nlink, 1);
	}
	if (!ret)
		say(rp, "data relocation tree made anew");
	return ret;
}

/* ---- device tree ------------------------------------------------------------------ */

/* A device extent for each stripe of each chunk: the chunk tree says where they are. */
int rebuild_dev_tree(struct rp *rp)
{
	struct fs *fs = rp->fs;
	struct btrfs_dev_extent de;
	struct fs_block *chunk_root = fs_block_read(fs, get_le64(&fs->sb.chunk_root), &FS_EXPECT_NONE);
	int ret;

	if (!chunk_root)
		return fs->err.code;
	memset(&de, 0, sizeof(de));
	put_le64(&de.chunk_tree, BTRFS_CHUNK_TREE_OBJECTID);
	put_le64(&de.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	memcpy(de.chunk_tree_uuid, ((const struct btrfs_header *)chunk_root->data)->chunk_tree_uuid, BTRFS_UUID_SIZE);
	fs_block_put(fs, chunk_root);
	ret = tree_anew(fs, BTRFS_DEV_TREE_OBJECTID);
	for (int i = 0; i < fs->num_chunks && !ret; i++) {
		const struct fs_chunk *c = &fs->chunks[i];

		put_le64(&de.chunk_offset, c->logical);
		put_le64(&de.length, fs_chunk_stripe_length(c));
		for (int s = 0; s < c->num_stripes && !ret; s++)
			ret = fs_item_insert(fs, BTRFS_DEV_TREE_OBJECTID, &(struct fs_key){ c->stripes[s].devid,
					     BTRFS_DEV_EXTENT_KEY, c->stripes[s].offset }, &de, sizeof(de));
	}
	if (!ret)
		say(rp, "device tree made anew from the chunks");
	return ret;
}
#endif
