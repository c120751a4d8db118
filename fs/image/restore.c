//build:Oz
/* btrfs-image's restore: a dump (image.h) written back as a filesystem image, each
 * block at its physical place found from the chunk tree blocks inside the dump. */
#include "internal.h"
#include "config.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if CFG_COMPRESS_ZLIB
#include <zlib.h>
#endif

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

/* An item's bytes as stored, into r->stored (grown to the largest item so far). */
static int read_stored(struct restorer *r, const struct image_cluster_item *it)
{
	uint32_t size = get_le32(&it->size);

	if (size > IMAGE_MAX_ITEM)
		return fs_err(r->err, -EFBIG, "item at %llu of the dump holds %u bytes, more than %u",
			      (unsigned long long)get_le64(&it->bytenr), size, IMAGE_MAX_ITEM);
	if (size > r->stored_cap) {
		uint8_t *n = realloc(r->stored, size);

		if (!n)
			return fs_err(r->err, -ENOMEM, "out of memory for an item of %u bytes", size);
		r->stored = n;
		r->stored_cap = size;
	}
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

/* The dump's superblock (its first item), checked; its system chunks known. */
static int load_superblock(struct restorer *r, const uint8_t *buf, size_t len)
{
	int ret;

	if (len != BTRFS_SUPER_SIZE)
		return fs_err(r->err, -EUCLEAN, "the dump's superblock is %zu bytes", len);
	memcpy(&r->sb, buf, sizeof(r->sb));
	if ((ret = fs_super_check(&r->sb, 0, r->err)))
		return ret;
	r->nodesize = get_le32(&r->sb.nodesize);
	r->several = get_le64(&r->sb.num_devices) > 1;
	memcpy(r->fsid, get_le64(&r->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID ?
	       r->sb.metadata_uuid : r->sb.fsid, BTRFS_FSID_SIZE);
	return map_sys_array(r);
}

/* The first pass: the superblock, then the chunk items of every chunk tree leaf. */
static int map_piece(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	if (logical == BTRFS_SUPER_OFFSET)
		return r->nodesize ? 0 : load_superblock(r, buf, len);
	if (!r->nodesize)
		return fs_err(r->err, -EINVAL, "the dump does not open with a superblock");
	return map_chunk_blocks(r, logical, buf, len);
}

/* Items worth expanding in the first pass: the superblock and runs of tree blocks
 * inside the system chunks. */
static int map_item(const struct restorer *r, uint64_t logical, uint32_t stored)
{
	return logical == BTRFS_SUPER_OFFSET || !r->nodesize ||
	       (stored <= 2 * IMAGE_MAX_PENDING && map_in_sys_chunk(r, logical, IMAGE_MAX_PENDING));
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

		if (!ret && r->several && !r->o->old_restore)
			ret = onedev_superblock(r, (struct btrfs_super_block *)buf);
		if (!ret)
			mark_superblock(r, (struct btrfs_super_block *)buf);
		return ret ? ret : write_out(r, buf, len, logical);
	}
	if (!r->nodesize)
		return fs_err(r->err, -EINVAL, "the dump does not open with a superblock");
	if (r->several && !r->o->old_restore)
		onedev_chunk_blocks(r, logical, buf, len);
	while (len) {
		const struct chunk_place *c = r->o->old_restore ? NULL : map_find(r, logical);
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

/* The dump onto one device: each block at its place, the superblock marked. */
static int restore_one(struct restorer *r, const char *path)
{
	int ret = 0;

	if ((r->out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
		return fs_err(r->err, -errno, "unable to create target file %s: %s", path, strerror(errno));
	ret = each_item(r, NULL, write_piece);
	if (!ret && !(r->several && !r->o->old_restore))
		ret = finish_device(r);
	if (close(r->out) && !ret)
		ret = fs_err(r->err, -errno, "cannot write %s: %s", path, strerror(errno));
	if (!ret && r->several && !r->o->old_restore)
		ret = onedev_finish(path, r->err);
	return ret;
}

/* -m: onto the devices, each block on every copy. */
static int restore_multi(struct restorer *r, const char *const *paths, int n)
{
	int ret = multi_start(r, paths, n);

	if (!ret)
		ret = each_item(r, NULL, multi_write_piece);
	if (!ret)
		ret = multi_finish(r);
	multi_free(r);
	return ret;
}

int image_restore(int in_fd, const char *const *out_paths, int nout, const struct image_restore_opts *o,
		  struct fs_error *err)
{
	struct restorer r = { .in = in_fd, .out = -1, .o = o, .err = err, .multi = o->multi };
	int seekable = lseek(in_fd, 0, SEEK_SET) == 0;
	int ret = 0;

	fs_err_clear(err);
	if (!(r.piece = malloc(PIECE)))
		ret = fs_err(err, -ENOMEM, "out of memory");
	/* The chunk map first; -o needs none (every block at its logical address). */
	if (!ret && !seekable && !o->old_restore)
		ret = fs_err(err, -ESPIPE, "the dump must be a file, not a pipe: it is read twice");
	if (!ret && !o->old_restore) {
		if (!(ret = each_item(&r, map_item, map_piece)))
			ret = map_finish(&r);
		if (!ret && lseek(in_fd, 0, SEEK_SET))
			ret = fs_err(err, -errno, "cannot seek in the dump: %s", strerror(errno));
		r.offset = 0;
	}
	if (!ret)
		ret = o->multi ? restore_multi(&r, out_paths, nout) : restore_one(&r, out_paths[0]);
	free(r.stored);
	free(r.piece);
	free(r.chunks);
	return ret;
}
