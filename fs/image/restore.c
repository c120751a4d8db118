/* btrfs-image's restore: a dump (image.h) written back as a filesystem image, each
 * block at its physical place found from the chunk tree blocks inside the dump. */
#include "image.h"
#include "config.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if CFG_COMPRESS_ZLIB
#include <zlib.h>
#endif

/* Where a chunk's bytes go on the restored device: its first stripe, and the second
 * copy of a DUP chunk (0: none). */
struct chunk_place {
	uint64_t logical, length, physical, physical_dup;
};

struct restorer {
	int in, out;
	const struct image_restore_opts *o;
	struct fs_error *err;
	struct btrfs_super_block sb;    /* as dumped */
	uint8_t fsid[BTRFS_FSID_SIZE];  /* in tree block headers */
	uint32_t nodesize;
	struct chunk_place *chunks;
	size_t nchunks, cap;
	struct chunk_place sys[BTRFS_SYSTEM_CHUNK_ARRAY_SIZE / sizeof(struct btrfs_chunk)];
	size_t nsys;
	uint64_t offset;                /* of the next cluster in the dump */
	uint8_t *stored, *piece;        /* an item as stored, a piece of it expanded */
};

#define PIECE (256u * 1024)

static int read_in(struct restorer *r, void *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = read(r->in, (uint8_t *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fs_err(r->err, n ? -errno : -EIO, "cannot read the dump at %llu: %s",
				      (unsigned long long)(r->offset + done), n ? strerror(errno) : "it ends early");
		done += (size_t)n;
	}
	r->offset += len;
	return 0;
}

/* The next cluster's index block, checked; 1 at the end of the dump. */
static int read_index(struct restorer *r, uint8_t index[IMAGE_BLOCK_SIZE])
{
	const struct image_cluster_header *h = (const struct image_cluster_header *)index;
	uint64_t at = r->offset;
	ssize_t n = read(r->in, index, 1);

	if (n == 0)
		return 1;
	if (n < 0 || read_in(r, index + 1, IMAGE_BLOCK_SIZE - 1))
		return n < 0 ? fs_err(r->err, -errno, "cannot read the dump: %s", strerror(errno)) : r->err->code;
	r->offset++;
	if (get_le64(&h->magic) != IMAGE_MAGIC)
		return fs_err(r->err, -EINVAL, "bad header in metadump image at %llu: not a btrfs-image dump",
			      (unsigned long long)at);
	if (get_le64(&h->bytenr) != at || get_le32(&h->nritems) > IMAGE_ITEMS_PER_CLUSTER ||
	    h->compress > IMAGE_COMPRESS_ZLIB)
		return fs_err(r->err, -EINVAL, "bad header in metadump image at %llu", (unsigned long long)at);
#if !CFG_COMPRESS_ZLIB
	if (h->compress)
		return fs_err(r->err, -EOPNOTSUPP, "the dump is compressed and zlib is not built in");
#endif
	return 0;
}

static const struct image_cluster_item *index_item(const uint8_t *index, uint32_t i)
{
	return (const struct image_cluster_item *)(index + sizeof(struct image_cluster_header)) + i;
}

/* Past the padding that ends a cluster. */
static int skip_padding(struct restorer *r)
{
	uint8_t pad[IMAGE_BLOCK_SIZE];

	return r->offset % IMAGE_BLOCK_SIZE ? read_in(r, pad, IMAGE_BLOCK_SIZE - r->offset % IMAGE_BLOCK_SIZE) : 0;
}

/* An item's bytes as stored, into r->stored. */
static int read_stored(struct restorer *r, const struct image_cluster_item *it)
{
	uint32_t size = get_le32(&it->size);

	if (size > IMAGE_MAX_ITEM)
		return fs_err(r->err, -EFBIG, "item at %llu of the dump holds %u bytes, more than %u",
			      (unsigned long long)get_le64(&it->bytenr), size, IMAGE_MAX_ITEM);
	return read_in(r, r->stored, size);
}

/* ---- expanding an item piece by piece ---------------------------------------------- */

typedef int (*piece_fn)(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len);

/* The stored bytes of the item at logical (compress: as the cluster says) handed to fn
 * in pieces of up to PIECE bytes, in order. */
static int expand(struct restorer *r, int compress, uint64_t logical, uint32_t size, piece_fn fn)
{
	int ret = 0;

	if (!compress) {
		for (uint32_t off = 0; !ret && off < size; off += PIECE)
			ret = fn(r, logical + off, r->stored + off, size - off < PIECE ? size - off : PIECE);
		return ret;
	}
#if CFG_COMPRESS_ZLIB
	z_stream z = { .next_in = r->stored, .avail_in = size };
	int zret = inflateInit(&z);

	while (!ret && zret == Z_OK) {
		z.next_out = r->piece;
		z.avail_out = PIECE;
		zret = inflate(&z, Z_NO_FLUSH);
		if ((zret == Z_OK || zret == Z_STREAM_END) && z.avail_out < PIECE)
			ret = fn(r, logical + z.total_out - (PIECE - z.avail_out), r->piece, PIECE - z.avail_out);
		else if (zret == Z_OK)
			zret = Z_DATA_ERROR;    /* no progress: the stream is cut short */
	}
	inflateEnd(&z);
	if (!ret && zret != Z_STREAM_END)
		ret = fs_err(r->err, -EINVAL, "item at %llu of the dump does not decompress",
			     (unsigned long long)logical);
#endif
	return ret;
}

/* ---- the chunk map ----------------------------------------------------------------- */

static int add_chunk(struct restorer *r, uint64_t logical, const struct btrfs_chunk *c)
{
	struct chunk_place p = { logical, get_le64(&c->length), get_le64(&fs_chunk_stripe(c, 0)->offset), 0 };

	if (get_le64(&c->type) & BTRFS_BLOCK_GROUP_DUP && get_le16(&c->num_stripes) > 1)
		p.physical_dup = get_le64(&fs_chunk_stripe(c, 1)->offset);
	if (!p.length || logical + p.length < logical || p.physical + p.length < p.physical ||
	    p.physical_dup + p.length < p.physical_dup)
		return fs_err(r->err, -EUCLEAN, "chunk at %llu of the dump is out of range",
			      (unsigned long long)logical);
	for (size_t i = 0; i < r->nchunks; i++)
		if (r->chunks[i].logical == logical)
			return 0;       /* in an older copy of a chunk tree leaf too */
	if (r->nchunks == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct chunk_place *n = realloc(r->chunks, cap * sizeof(*n));

		if (!n)
			return fs_err(r->err, -ENOMEM, "out of memory");
		r->chunks = n;
		r->cap = cap;
	}
	r->chunks[r->nchunks++] = p;
	return 0;
}

/* The system chunks of the superblock's array. */
static int read_sys_array(struct restorer *r)
{
	uint32_t size = get_le32(&r->sb.sys_chunk_array_size);

	if (size > sizeof(r->sb.sys_chunk_array))
		return fs_err(r->err, -EUCLEAN, "sys_array of %u bytes is too large", size);
	for (uint32_t pos = 0; pos < size;) {
		struct fs_key k;
		const struct btrfs_chunk *c;

		if (size - pos < sizeof(struct btrfs_disk_key))
			return fs_err(r->err, -EUCLEAN, "sys_array ends inside a key");
		fs_key_from_disk(&k, (const struct btrfs_disk_key *)(r->sb.sys_chunk_array + pos));
		pos += sizeof(struct btrfs_disk_key);
		c = fs_chunk_item(r->sb.sys_chunk_array + pos, size - pos);
		if (k.type != BTRFS_CHUNK_ITEM_KEY || !c || r->nsys == sizeof(r->sys) / sizeof(r->sys[0]))
			return fs_err(r->err, -EUCLEAN, "bad chunk in the sys_array at %u", pos);
		pos += fs_chunk_item_size(get_le16(&c->num_stripes));
		r->sys[r->nsys++] = (struct chunk_place){ k.offset, get_le64(&c->length), 0, 0 };
		if (add_chunk(r, k.offset, c))
			return r->err->code;
	}
	return r->nsys ? 0 : fs_err(r->err, -EUCLEAN, "no system chunk in the superblock");
}

static int in_sys_chunk(const struct restorer *r, uint64_t logical, uint64_t len)
{
	for (size_t i = 0; i < r->nsys; i++)
		if (logical < r->sys[i].logical + r->sys[i].length && r->sys[i].logical < logical + len)
			return 1;
	return 0;
}

/* A piece of an item in the system chunks: the chunk items of its chunk tree leaves. */
static int scan_chunk_blocks(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	struct fs_block *b = malloc(sizeof(*b) + r->nodesize);
	struct fs_block_ctx ctx = { r->nodesize, get_le16(&r->sb.csum_type), r->fsid, 0, 0 };
	int ret = b ? 0 : fs_err(r->err, -ENOMEM, "out of memory");

	for (size_t off = 0; !ret && off + r->nodesize <= len; off += r->nodesize) {
		const struct btrfs_header *h = (const struct btrfs_header *)(buf + off);

		ctx.bytenr = logical + off;
		if (!in_sys_chunk(r, ctx.bytenr, r->nodesize) || get_le64(&h->owner) != BTRFS_CHUNK_TREE_OBJECTID ||
		    h->level || fs_block_check(buf + off, &ctx, &FS_EXPECT_NONE, NULL))
			continue;
		b->bytenr = ctx.bytenr;
		b->size = r->nodesize;
		memcpy(b->data, buf + off, r->nodesize);
		for (uint32_t i = 0; !ret && i < fs_block_nritems(b); i++) {
			struct fs_key k;
			uint32_t size;
			const uint8_t *data = fs_item_data(b, i, &size);
			const struct btrfs_chunk *c = data ? fs_chunk_item(data, size) : NULL;

			if (!fs_item_key(b, i, &k) && k.type == BTRFS_CHUNK_ITEM_KEY && c)
				ret = add_chunk(r, k.offset, c);
		}
	}
	free(b);
	return ret;
}

/* The dump's superblock (its first item), checked; its system chunks mapped. */
static int load_superblock(struct restorer *r, const uint8_t *buf, size_t len)
{
	int ret;

	if (len != BTRFS_SUPER_SIZE)
		return fs_err(r->err, -EUCLEAN, "the dump's superblock is %zu bytes", len);
	memcpy(&r->sb, buf, sizeof(r->sb));
	if ((ret = fs_super_check(&r->sb, 0, r->err)))
		return ret;
	if (get_le64(&r->sb.num_devices) != 1)
		return fs_err(r->err, -EOPNOTSUPP, "the dump is of a filesystem of %llu devices: restoring it to one device is not supported",
			      (unsigned long long)get_le64(&r->sb.num_devices));
	r->nodesize = get_le32(&r->sb.nodesize);
	memcpy(r->fsid, get_le64(&r->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID ?
	       r->sb.metadata_uuid : r->sb.fsid, BTRFS_FSID_SIZE);
	return read_sys_array(r);
}

/* The first pass: the superblock, then the chunk items of every chunk tree leaf. */
static int map_piece(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	if (logical == BTRFS_SUPER_OFFSET)
		return r->nodesize ? 0 : load_superblock(r, buf, len);
	if (!r->nodesize)
		return fs_err(r->err, -EINVAL, "the dump does not open with a superblock");
	return scan_chunk_blocks(r, logical, buf, len);
}

/* Items worth expanding in the first pass: the superblock and runs of tree blocks
 * inside the system chunks. */
static int map_item(const struct restorer *r, uint64_t logical, uint32_t stored)
{
	return logical == BTRFS_SUPER_OFFSET || !r->nodesize ||
	       (stored <= 2 * IMAGE_MAX_PENDING && in_sys_chunk(r, logical, IMAGE_MAX_PENDING));
}

/* Every cluster of the dump, each item handed to fn (NULL: skipped) piece by piece. */
static int each_item(struct restorer *r, int (*wanted)(const struct restorer *, uint64_t, uint32_t), piece_fn fn)
{
	uint8_t index[IMAGE_BLOCK_SIZE];
	int ret;

	while (!(ret = read_index(r, index))) {
		const struct image_cluster_header *h = (const struct image_cluster_header *)index;

		for (uint32_t i = 0; !ret && i < get_le32(&h->nritems); i++) {
			const struct image_cluster_item *it = index_item(index, i);
			uint32_t size = get_le32(&it->size);

			if (!(ret = read_stored(r, it)) && (!wanted || wanted(r, get_le64(&it->bytenr), size)))
				ret = expand(r, h->compress, get_le64(&it->bytenr), size, fn);
		}
		if (ret || (ret = skip_padding(r)))
			return ret;
	}
	return ret < 0 ? ret : 0;
}

/* ---- writing ----------------------------------------------------------------------- */

static const struct chunk_place *find_chunk(const struct restorer *r, uint64_t logical)
{
	for (size_t i = 0; i < r->nchunks; i++)
		if (logical >= r->chunks[i].logical && logical - r->chunks[i].logical < r->chunks[i].length)
			return &r->chunks[i];
	return NULL;
}

static int write_out(struct restorer *r, const void *buf, size_t len, uint64_t physical)
{
	int ret = physical + len < physical ? -EFBIG : pio_all(r->out, (void *)buf, len, (off_t)physical, 1);

	return ret ? fs_err(r->err, ret, "cannot write %zu bytes at %llu: %s", len,
			    (unsigned long long)physical, strerror(-ret)) : 0;
}

/* The superblock of a restored dump: marked so (btrfs-progs knows its blocks hold no
 * file data); with -o, one system chunk maps every logical address to itself. */
static void mark_superblock(const struct restorer *r, struct btrfs_super_block *sb)
{
	uint64_t flags = get_le64(&sb->flags);

	if (r->o->old_restore) {
		struct btrfs_disk_key *k = (struct btrfs_disk_key *)sb->sys_chunk_array;
		struct btrfs_chunk *c = (struct btrfs_chunk *)(k + 1);
		uint32_t ss = get_le32(&sb->sectorsize);

		memset(sb->sys_chunk_array, 0, sizeof(sb->sys_chunk_array));
		fs_key_to_disk(k, &(struct fs_key){ BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, 0 });
		put_le64(&c->length, UINT64_MAX);
		put_le64(&c->owner, BTRFS_EXTENT_TREE_OBJECTID);
		put_le64(&c->stripe_len, 64 * 1024);   /* BTRFS_STRIPE_LEN */
		put_le64(&c->type, BTRFS_BLOCK_GROUP_SYSTEM);
		put_le32(&c->io_align, ss);
		put_le32(&c->io_width, ss);
		put_le32(&c->sector_size, ss);
		put_le16(&c->num_stripes, 1);
		c->stripe.devid = sb->dev_item.devid;
		memcpy(c->stripe.dev_uuid, sb->dev_item.uuid, BTRFS_UUID_SIZE);
		put_le32(&sb->sys_chunk_array_size, sizeof(*k) + sizeof(*c));
		flags |= BTRFS_SUPER_FLAG_METADUMP;
	} else {
		flags |= BTRFS_SUPER_FLAG_METADUMP_V2;
	}
	put_le64(&sb->flags, flags);
	csum_stamp(get_le16(&sb->csum_type), sb, BTRFS_SUPER_SIZE);
}

/* A piece of an item at its physical place (each copy of DUP); the superblock marked. */
static int write_piece(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	if (logical == BTRFS_SUPER_OFFSET) {
		int ret = r->nodesize ? 0 : load_superblock(r, buf, len);

		if (!ret)
			mark_superblock(r, (struct btrfs_super_block *)buf);
		return ret ? ret : write_out(r, buf, len, logical);
	}
	if (!r->nodesize)
		return fs_err(r->err, -EINVAL, "the dump does not open with a superblock");
	while (len) {
		const struct chunk_place *c = r->o->old_restore ? NULL : find_chunk(r, logical);
		uint64_t off = c ? logical - c->logical : 0;
		size_t n = c && c->length - off < len ? (size_t)(c->length - off) : len;
		int ret = write_out(r, buf, n, c ? c->physical + off : logical);

		if (!ret && c && c->physical_dup)
			ret = write_out(r, buf, n, c->physical_dup + off);
		if (ret)
			return ret;
		buf += n;
		logical += n;
		len -= n;
	}
	return 0;
}

/* A file made as large as the device was; a device given the superblock's other copies
 * (as btrfs-progs, which writes them only where the output already reaches). */
static int finish_device(struct restorer *r)
{
	uint64_t size = get_le64(&r->sb.dev_item.total_bytes);
	struct btrfs_super_block sb;
	struct stat st;

	if (!r->nodesize)
		return fs_err(r->err, -EINVAL, "the dump holds no superblock");
	if (fstat(r->out, &st))
		return fs_err(r->err, -errno, "cannot stat the output: %s", strerror(errno));
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < size && ftruncate(r->out, (off_t)size))
		return fs_err(r->err, -errno, "cannot enlarge the output to %llu bytes: %s",
			      (unsigned long long)size, strerror(errno));
	if (S_ISBLK(st.st_mode) && pio_all(r->out, &sb, sizeof(sb), BTRFS_SUPER_OFFSET, 0))
		return fs_err(r->err, -EIO, "cannot read back the superblock");
	for (int m = 1; S_ISBLK(st.st_mode) && m < BTRFS_SUPER_MIRRORS &&
			btrfs_super_offset(m) + BTRFS_SUPER_SIZE <= fs_fd_size(r->out); m++) {
		put_le64(&sb.bytenr, btrfs_super_offset(m));
		csum_stamp(get_le16(&sb.csum_type), &sb, BTRFS_SUPER_SIZE);
		if (write_out(r, &sb, sizeof(sb), btrfs_super_offset(m)))
			return r->err->code;
	}
	return fsync(r->out) && errno != EINVAL ? fs_err(r->err, -errno, "cannot sync the output: %s", strerror(errno)) : 0;
}

int image_restore(int in_fd, int out_fd, const struct image_restore_opts *o, struct fs_error *err)
{
	struct restorer r = { .in = in_fd, .out = out_fd, .o = o, .err = err };
	int seekable = lseek(in_fd, 0, SEEK_SET) == 0;
	int ret = 0;

	fs_err_clear(err);
	r.stored = malloc(IMAGE_MAX_ITEM);
	r.piece = malloc(PIECE);
	if (!r.stored || !r.piece)
		ret = fs_err(err, -ENOMEM, "out of memory");
	/* The chunk map first; -o needs none (every block at its logical address). */
	if (!ret && !seekable && !o->old_restore)
		ret = fs_err(err, -ESPIPE, "the dump must be a file, not a pipe: it is read twice");
	if (!ret && !o->old_restore) {
		ret = each_item(&r, map_item, map_piece);
		if (!ret && lseek(in_fd, 0, SEEK_SET))
			ret = fs_err(err, -errno, "cannot seek in the dump: %s", strerror(errno));
		r.offset = 0;
	}
	if (!ret)
		ret = each_item(&r, NULL, write_piece);
	if (!ret)
		ret = finish_device(&r);
	free(r.stored);
	free(r.piece);
	free(r.chunks);
	return ret;
}
