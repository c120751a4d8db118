//build:Oz
/* btrfs-image's dump: the tree blocks of an unmounted filesystem gathered into runs of
 * adjacent blocks, cleaned of file contents, and written cluster by cluster (image.h). */
#include "image.h"
#include "config.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if CFG_COMPRESS_ZLIB
#include <zlib.h>
#endif

/* A cluster is written early once its items hold this much, to keep memory bounded. */
#define HELD_LIMIT (16u << 20)
/* v1 free space cache files are small; a larger extent is not one of theirs. */
#define MAX_CACHE_EXTENT (IMAGE_MAX_ITEM / 2)

struct held_item {
	uint64_t bytenr;
	uint32_t size;          /* of buf: the bytes as stored */
	uint8_t *buf;
};

/* Tree blocks already dumped by a walk (snapshots share them): open addressing on
 * bytenr, 0 marking a free slot (no tree block lies at 0). */
struct seen_set {
	uint64_t *slots;
	size_t cap, count;
};

struct dumper {
	struct fs *fs;
	int fd;
	const struct image_dump_opts *o;
	struct image_dump_stats *st;
	uint64_t cluster_at;    /* offset in the dump of the cluster being gathered */
	/* its index block; entries past nritems keep those of an earlier cluster, as in
	 * btrfs-progs' dumps (so that the two are the same byte for byte) */
	uint8_t index[IMAGE_BLOCK_SIZE];
	struct held_item items[IMAGE_ITEMS_PER_CLUSTER];
	uint32_t nitems;
	size_t held;
	uint64_t run_start, run_size;   /* adjacent extents not yet made an item */
	int run_data;
	struct seen_set seen;
	int walk_ret;           /* first failure inside a walk's callbacks */
};

static int write_cluster(struct dumper *d)
{
	static const uint8_t zeros[IMAGE_BLOCK_SIZE];
	struct image_cluster_header *h = (struct image_cluster_header *)d->index;
	struct image_cluster_item *it = (struct image_cluster_item *)(h + 1);
	uint64_t len = IMAGE_BLOCK_SIZE;
	int ret;

	if (!d->nitems)
		return 0;
	put_le64(&h->magic, IMAGE_MAGIC);
	put_le64(&h->bytenr, d->cluster_at);
	put_le32(&h->nritems, d->nitems);
	h->compress = d->o->compress_level ? IMAGE_COMPRESS_ZLIB : IMAGE_COMPRESS_NONE;
	for (uint32_t i = 0; i < d->nitems; i++) {
		put_le64(&it[i].bytenr, d->items[i].bytenr);
		put_le32(&it[i].size, d->items[i].size);
	}
	ret = pio_write(d->fd, d->index, sizeof(d->index));
	for (uint32_t i = 0; i < d->nitems; i++) {
		if (!ret)
			ret = pio_write(d->fd, d->items[i].buf, d->items[i].size);
		len += d->items[i].size;
		free(d->items[i].buf);
	}
	if (!ret && len % IMAGE_BLOCK_SIZE)
		ret = pio_write(d->fd, zeros, IMAGE_BLOCK_SIZE - len % IMAGE_BLOCK_SIZE);
	d->cluster_at += (len + IMAGE_BLOCK_SIZE - 1) / IMAGE_BLOCK_SIZE * IMAGE_BLOCK_SIZE;
	d->nitems = 0;
	d->held = 0;
	return ret ? fs_err(&d->fs->err, ret, "cannot write the dump: %s", strerror(-ret)) : 0;
}

/* buf (size bytes of the run at bytenr) as the next item, compressed when asked. */
static int hold_item(struct dumper *d, uint64_t bytenr, uint8_t *buf, uint32_t size)
{
	struct held_item *it = &d->items[d->nitems];

	it->bytenr = bytenr;
	it->buf = buf;
	it->size = size;
#if CFG_COMPRESS_ZLIB
	if (d->o->compress_level) {
		uLongf zlen = compressBound(size);
		uint8_t *z = malloc(zlen);

		if (!z || compress2(z, &zlen, buf, size, d->o->compress_level) != Z_OK) {
			free(z);
			free(buf);
			return fs_err(&d->fs->err, -ENOMEM, "cannot compress the dump");
		}
		free(buf);
		it->buf = z;
		it->size = (uint32_t)zlen;
	}
#endif
	d->held += it->size;
	if (++d->nitems == IMAGE_ITEMS_PER_CLUSTER || d->held >= HELD_LIMIT)
		return write_cluster(d);
	return 0;
}

/* ---- cleaning a tree block --------------------------------------------------------- */

static void garbage_name(char *p, size_t len, uint32_t *seed)
{
	for (size_t i = 0; i < len; i++) {
		*seed = *seed * 1103515245u + 12345u;
		p[i] = (char)(33 + (*seed >> 16) % 94);
		if (p[i] == '/')
			p[i]++;
	}
}

/* The name at the same place of dst as name is in the block src, replaced; ".." (the
 * reference of a subvolume's top directory to itself) tells nothing and stays. */
static void replace_name(struct dumper *d, uint8_t *dst, const uint8_t *src, const char *name, size_t len)
{
	char *out = (char *)dst + ((const uint8_t *)name - src);
	uint32_t seed = (uint32_t)d->st->blocks ^ crc32c(name, len);

	if (len == 2 && !memcmp(name, "..", 2))
		return;
	if (d->o->names == IMAGE_NAMES_COLLIDE && !image_name_collision(name, len, out))
		return;
	if (d->o->names == IMAGE_NAMES_COLLIDE)
		d->st->garbage_names++;
	garbage_name(out, len, &seed);
}

/* Names of directory entries and inode references replaced, xattr values zeroed. */
static void clean_names(struct dumper *d, uint8_t *dst, const uint8_t *src, const struct fs_key *k,
			const uint8_t *data, uint32_t size)
{
	uint32_t pos = 0;

	if (k->type == BTRFS_DIR_ITEM_KEY || k->type == BTRFS_DIR_INDEX_KEY || k->type == BTRFS_XATTR_ITEM_KEY) {
		struct fs_dir_entry e;

		while (fs_dir_entry_next(data, size, &pos, &e) == 1) {
			if (k->type == BTRFS_XATTR_ITEM_KEY)
				memset(dst + (e.data - src), 0, e.data_len);
			else
				replace_name(d, dst, src, e.name, e.name_len);
		}
	} else if (k->type == BTRFS_INODE_REF_KEY || k->type == BTRFS_INODE_EXTREF_KEY) {
		struct fs_inode_ref r;

		while ((k->type == BTRFS_INODE_REF_KEY ? fs_inode_ref_next(data, size, &pos, &r)
						       : fs_inode_extref_next(data, size, &pos, &r)) == 1)
			replace_name(d, dst, src, r.name, r.name_len);
	}
}

/* A leaf's items: inline file data zeroed, names as asked (data checksums are kept, as
 * btrfs-progs keeps them). */
static void clean_items(struct dumper *d, uint8_t *dst, const struct fs_block *b)
{
	for (uint32_t i = 0; i < fs_block_nritems(b); i++) {
		struct fs_key k;
		uint32_t size;
		const uint8_t *data = fs_item_data(b, i, &size);

		if (fs_item_key(b, i, &k) || !data)
			continue;
		if (k.type == BTRFS_EXTENT_DATA_KEY && size > FS_FILE_EXTENT_INLINE_START &&
			 data[FS_FILE_EXTENT_INLINE_START - 1] == BTRFS_FILE_EXTENT_INLINE)
			memset(dst + (data - b->data) + FS_FILE_EXTENT_INLINE_START, 0,
			       size - FS_FILE_EXTENT_INLINE_START);
		else if (d->o->names != IMAGE_NAMES_KEEP)
			clean_names(d, dst, b->data, &k, data, size);
	}
}

/* A verified block into dst with the space no item or pointer uses zeroed (in a leaf,
 * between the item array and the lowest item data), cleaned, checksummed again. */
static void clean_block(struct dumper *d, uint8_t *dst, const struct fs_block *b)
{
	uint32_t n = fs_block_nritems(b), used;

	memcpy(dst, b->data, b->size);
	if (fs_block_level(b)) {
		used = sizeof(struct btrfs_header) + n * sizeof(struct btrfs_key_ptr);
		memset(dst + used, 0, b->size - used);
	} else if (!n) {
		memset(dst + sizeof(struct btrfs_header), 0, b->size - sizeof(struct btrfs_header));
	} else {
		const struct btrfs_item *items = (const struct btrfs_item *)(b->data + sizeof(struct btrfs_header));
		uint32_t array_end = sizeof(struct btrfs_header) + n * sizeof(struct btrfs_item);
		uint32_t data_start = sizeof(struct btrfs_header) + get_le32(&items[n - 1].offset);

		memset(dst + array_end, 0, data_start - array_end);
		clean_items(d, dst, b);
	}
	csum_stamp(d->fs->csum_type, dst, b->size);
}

/* The tree block at bytenr into dst: cleaned when it verifies, else as it is on the
 * first copy that reads (a dump is often made of a damaged filesystem). */
static int dump_block(struct dumper *d, uint64_t bytenr, uint8_t *dst)
{
	struct fs_block *b = fs_block_read(d->fs, bytenr, &FS_EXPECT_NONE);

	d->st->blocks++;
	if (b) {
		clean_block(d, dst, b);
		fs_block_put(d->fs, b);
		return 0;
	}
	d->st->unverified++;
	for (int m = 1; m <= fs_num_copies(d->fs, bytenr); m++)
		if (!fs_read_logical(d->fs, bytenr, dst, d->fs->nodesize, m))
			return 0;
	return fs_err_at(&d->fs->err, -EIO, 0, bytenr, "cannot read tree block %llu",
			 (unsigned long long)bytenr);
}

/* The run gathered so far becomes an item: its tree blocks cleaned, or its data (v1
 * cache) as it is. */
static int flush_run(struct dumper *d)
{
	uint64_t start = d->run_start, size = d->run_size;
	uint8_t *buf;
	int ret = 0;

	if (!size)
		return 0;
	d->run_size = 0;
	if (!(buf = malloc(size)))
		return fs_err(&d->fs->err, -ENOMEM, "out of memory for %llu bytes", (unsigned long long)size);
	if (start == BTRFS_SUPER_OFFSET)
		ret = fs_read_phys(&d->fs->devs[0], start, buf, size);
	else if (d->run_data)
		ret = fs_read_logical(d->fs, start, buf, size, 0);
	else
		for (uint64_t off = 0; !ret && off < size; off += d->fs->nodesize)
			ret = dump_block(d, start + off, buf + off);
	if (ret) {
		free(buf);
		return ret;
	}
	return hold_item(d, start, buf, (uint32_t)size);
}

/* Adds [start, +size) to the run, or starts a new run when it does not continue it. */
static int add_extent(struct dumper *d, uint64_t start, uint64_t size, int data)
{
	int ret;

	if (d->run_size && (d->run_data != data || d->run_start + d->run_size != start ||
			    d->run_size + size > IMAGE_MAX_PENDING) && (ret = flush_run(d)))
		return ret;
	if (!d->run_size) {
		d->run_start = start;
		d->run_data = data;
	}
	d->run_size += size;
	return 0;
}

/* ---- finding the tree blocks ------------------------------------------------------- */

/* 1 when bytenr was seen before, else records it (0), or -ENOMEM. */
static int seen_before(struct seen_set *s, uint64_t bytenr)
{
	if ((s->count + 1) * 2 > s->cap) {
		struct seen_set bigger = { calloc(s->cap ? s->cap * 2 : 4096, sizeof(uint64_t)), 0, 0 };

		if (!bigger.slots)
			return -ENOMEM;
		bigger.cap = s->cap ? s->cap * 2 : 4096;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slots[i])
				seen_before(&bigger, s->slots[i]);
		free(s->slots);
		*s = bigger;
	}
	for (size_t i = (bytenr * 0x9e3779b97f4a7c15ULL >> 20) % s->cap;; i = (i + 1) % s->cap) {
		if (s->slots[i] == bytenr)
			return 1;
		if (!s->slots[i]) {
			s->slots[i] = bytenr;
			s->count++;
			return 0;
		}
	}
}

static int walk_tree(struct dumper *d, const struct fs_root *root, int root_tree);

/* A walked block: dumped unless seen; 1 skips a seen node's children. */
static int walk_visit(struct dumper *d, const struct fs_block *b)
{
	int ret = seen_before(&d->seen, b->bytenr);

	if (ret < 0 || (!ret && (ret = add_extent(d, b->bytenr, b->size, 0)) < 0)) {
		if (!d->walk_ret)
			d->walk_ret = ret == -ENOMEM ? fs_err(&d->fs->err, ret, "out of memory") : ret;
		return -1;
	}
	return ret;
}

struct tree_walk {
	struct dumper *d;
	int root_tree;          /* the leaves' root items lead to more trees */
};

static int walk_node(void *ctx, const struct fs_block *b)
{
	return walk_visit(((struct tree_walk *)ctx)->d, b);
}

static int walk_leaf(void *ctx, const struct fs_block *b)
{
	struct tree_walk *w = ctx;
	int ret = walk_visit(w->d, b);

	for (uint32_t i = 0; !ret && w->root_tree && i < fs_block_nritems(b); i++) {
		struct fs_key k;
		uint32_t size;
		const uint8_t *data = fs_item_data(b, i, &size);
		struct fs_root r = { .level = -1 };

		if (fs_item_key(b, i, &k) || k.type != BTRFS_ROOT_ITEM_KEY || !data ||
		    fs_root_item(data, size, &r.item))
			continue;
		r.objectid = k.objectid;
		r.bytenr = get_le64(&r.item.bytenr);
		r.level = r.item.level;
		ret = walk_tree(w->d, &r, 0);
	}
	return ret < 0 ? -1 : 0;
}

/* A block the walk cannot verify is dumped as it is. */
static void walk_error(void *ctx, const struct fs_error *err)
{
	struct tree_walk *w = ctx;
	uint64_t bytenr = err->logical;

	if (bytenr && !w->d->walk_ret && seen_before(&w->d->seen, bytenr) == 0)
		w->d->walk_ret = add_extent(w->d, bytenr, w->d->fs->nodesize, 0);
}

static int walk_tree(struct dumper *d, const struct fs_root *root, int root_tree)
{
	static const struct fs_walk_ops ops = { walk_node, walk_leaf, walk_error };
	struct tree_walk w = { d, root_tree };
	int ret = fs_tree_walk(d->fs, root, &ops, &w);

	if (d->walk_ret)
		return d->walk_ret;
	return ret == -ELOOP ? ret : 0;
}

typedef int (*item_fn)(struct dumper *d, const struct fs_key *k, const uint8_t *data, uint32_t size);

/* fn for each item of tree from key on, until it returns nonzero (<0: an error). */
static int each_tree_item(struct dumper *d, uint64_t tree, struct fs_key key, item_fn fn)
{
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(d->fs, tree, &r);

	if (ret)
		return ret;
	fs_path_init(&p);
	for (ret = fs_search(d->fs, &r, &key, &p); ret == 0; ret = fs_next(d->fs, &p)) {
		uint32_t size;
		const uint8_t *data = fs_path_data(&p, &size);

		fs_path_key(&p, &key);
		if ((ret = fn(d, &key, data, size)))
			break;
	}
	fs_path_release(d->fs, &p);
	return ret < 0 ? ret : 0;
}

/* An extent item: its extent added when it is a tree block. */
static int tree_block_extent(struct dumper *d, const struct fs_key *k, const uint8_t *data, uint32_t size)
{
	struct fs_extent_info ei;
	uint64_t len = k->type == BTRFS_METADATA_ITEM_KEY ? d->fs->nodesize : k->offset;

	if (k->type != BTRFS_EXTENT_ITEM_KEY && k->type != BTRFS_METADATA_ITEM_KEY)
		return 0;
	if (fs_extent_item(data, size, k->type, &ei) || !len)
		return fs_err_at(&d->fs->err, -EUCLEAN, BTRFS_EXTENT_TREE_OBJECTID, k->objectid,
				 "bad extent item, try -w to walk the trees instead");
	return ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK ? add_extent(d, k->objectid, len, 0) : 0;
}

/* Every tree block the extent tree lists, in address order. */
static int dump_extent_tree(struct dumper *d)
{
	return each_tree_item(d, BTRFS_EXTENT_TREE_OBJECTID,
			      (struct fs_key){ BTRFS_SUPER_OFFSET + BTRFS_SUPER_SIZE, BTRFS_EXTENT_ITEM_KEY, 0 },
			      tree_block_extent);
}

/* The log root tree and the log trees its root items name. */
static int dump_log_trees(struct dumper *d)
{
	struct fs_root r = { .objectid = BTRFS_TREE_LOG_OBJECTID, .level = d->fs->sb.log_root_level };

	r.bytenr = get_le64(&d->fs->sb.log_root);
	return r.bytenr ? walk_tree(d, &r, 1) : 0;
}

/* A file extent of a v1 free space cache inode (in the root tree): its data added. */
static int cache_extent(struct dumper *d, const struct fs_key *k, const uint8_t *data, uint32_t size)
{
	struct fs_file_extent fe;

	if (k->type != BTRFS_EXTENT_DATA_KEY || fs_file_extent(data, size, &fe) ||
	    fe.type != BTRFS_FILE_EXTENT_REG || !fe.disk_bytenr)
		return 0;
	if (fe.disk_num_bytes > MAX_CACHE_EXTENT)
		return fs_err_at(&d->fs->err, -EUCLEAN, BTRFS_ROOT_TREE_OBJECTID, fe.disk_bytenr,
				 "free space cache extent of %llu bytes is too large",
				 (unsigned long long)fe.disk_num_bytes);
	return add_extent(d, fe.disk_bytenr, fe.disk_num_bytes, 1);
}

/* The data of the v1 free space cache: file extents of the root tree's cache inodes. */
static int dump_space_cache(struct dumper *d)
{
	return each_tree_item(d, BTRFS_ROOT_TREE_OBJECTID, (struct fs_key){ 0, BTRFS_EXTENT_DATA_KEY, 0 },
			      cache_extent);
}

static int dump_trees(struct dumper *d)
{
	struct fs_root chunk, root;
	int ret;

	if (!d->o->walk_trees)
		return dump_extent_tree(d);
	if ((ret = fs_root_lookup(d->fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk)) ||
	    (ret = fs_root_lookup(d->fs, BTRFS_ROOT_TREE_OBJECTID, &root)))
		return ret;
	if ((ret = walk_tree(d, &chunk, 0)))
		return ret;
	return walk_tree(d, &root, 1);
}

int image_dump(struct fs *fs, int fd, const struct image_dump_opts *o, struct image_dump_stats *st)
{
	struct dumper d = { .fs = fs, .fd = fd, .o = o, .st = st };
	int ret;

	memset(st, 0, sizeof(*st));
#if !CFG_COMPRESS_ZLIB
	if (o->compress_level)
		return fs_err(&fs->err, -EOPNOTSUPP, "compression needs zlib, not built in");
#endif
	if (!fs->num_devs || fs->devs[0].fd < 0)
		return fs_err(&fs->err, -ENODEV, "the first device is missing");
	if (!(ret = add_extent(&d, BTRFS_SUPER_OFFSET, BTRFS_SUPER_SIZE, 1)) &&
	    !(ret = dump_trees(&d)) && !(ret = dump_log_trees(&d)) && !(ret = dump_space_cache(&d)) &&
	    !(ret = flush_run(&d)))
		ret = write_cluster(&d);
	for (uint32_t i = 0; i < d.nitems; i++)
		free(d.items[i].buf);
	free(d.seen.slots);
	return ret;
}
