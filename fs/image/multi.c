//build:Oz
/* btrfs-image -r -m: a dump restored onto as many devices as its filesystem had, each
 * block on every stripe of its chunk where the chunk tree inside the dump puts it. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include "util/vec.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Chunk and device items a dump may name (as many chunks as map.c takes, and devices). */
#define MAX_KEPT (5u << 20)

int multi_keep_item(struct restorer *r, const struct fs_key *k, const uint8_t *data, uint32_t size)
{
	struct kept_item *it;

	if (k->type != BTRFS_CHUNK_ITEM_KEY && (k->type != BTRFS_DEV_ITEM_KEY || !fs_dev_item(data, size)))
		return 0;
	if (r->nkept == MAX_KEPT)
		return fs_err(r->err, -EFBIG, "the dump's chunk tree holds more than %u items", MAX_KEPT);
	if (vec_reserve(&r->kept, &r->cap_kept, r->nkept + 1, sizeof(*r->kept)))
		return fs_err(r->err, -ENOMEM, "out of memory");
	it = &r->kept[r->nkept];
	if (!(it->data = malloc(size)))
		return fs_err(r->err, -ENOMEM, "out of memory");
	memcpy(it->data, data, size);
	it->key = *k;
	it->size = size;
	r->nkept++;
	return 0;
}

/* The dev item of devid, NULL when the dump holds none. */
static const struct btrfs_dev_item *dev_item_of(const struct restorer *r, uint64_t devid)
{
	for (size_t i = 0; i < r->nkept; i++)
		if (r->kept[i].key.type == BTRFS_DEV_ITEM_KEY && r->kept[i].key.offset == devid)
			return (const struct btrfs_dev_item *)r->kept[i].data;
	return NULL;
}

/* The devid target i becomes: the first the dumped device's, the others the remaining
 * devids in order. */
static uint64_t devid_of_target(const struct restorer *r, int i)
{
	uint64_t first = get_le64(&r->sb.dev_item.devid);

	for (size_t k = 0; i && k < r->nkept; k++)
		if (r->kept[k].key.type == BTRFS_DEV_ITEM_KEY && r->kept[k].key.offset != first && !--i)
			return r->kept[k].key.offset;
	return i ? 0 : first;
}

/* Each target's superblock: the dump's, with the target's device item (every copy that
 * fits); a file made as large as its device was. */
static int write_superblock(struct restorer *r, const char *path, uint64_t devid, int truncate)
{
	struct btrfs_super_block sb = r->sb;
	const struct btrfs_dev_item *di = dev_item_of(r, devid);
	uint64_t size = di ? get_le64(&di->total_bytes) : 0;
	int fd, ret = 0;
	struct stat st;

	if (!di)
		return fs_err(r->err, -EUCLEAN, "the dump has no device item for devid %llu", (unsigned long long)devid);
	if ((fd = open(path, O_RDWR | O_CREAT | (truncate ? O_TRUNC : 0), 0644)) < 0)
		return fs_err(r->err, -errno, "unable to open %s: %s", path, strerror(errno));
	sb.dev_item = *di;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size < size && ftruncate(fd, (off_t)size))
		ret = fs_err(r->err, -errno, "cannot enlarge %s: %s", path, strerror(errno));
	for (int m = 0; !ret && m < BTRFS_SUPER_MIRRORS && btrfs_super_offset(m) + BTRFS_SUPER_SIZE <= fs_fd_size(fd); m++) {
		put_le64(&sb.bytenr, btrfs_super_offset(m));
		csum_stamp(get_le16(&sb.csum_type), &sb, BTRFS_SUPER_SIZE);
		if ((ret = pio_all(fd, &sb, sizeof(sb), (off_t)btrfs_super_offset(m), 1)))
			fs_err(r->err, ret, "cannot write the superblock of %s: %s", path, strerror(-ret));
	}
	close(fd);
	return ret;
}

/* The chunk map of the open: every chunk item of the dump. */
static int add_kept_chunks(struct fs *fs, void *ctx)
{
	const struct restorer *r = ctx;
	int ret = 0;

	for (size_t i = 0; i < r->nkept && !ret; i++)
		if (r->kept[i].key.type == BTRFS_CHUNK_ITEM_KEY)
			ret = fs_chunk_add(fs, r->kept[i].key.offset, (const struct btrfs_chunk *)r->kept[i].data,
					   r->kept[i].size);
	for (int i = 0; i < fs->num_chunks && !ret; i++)
		if (fs->chunks[i].type & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6))
			ret = fs_err(&fs->err, -EOPNOTSUPP, "restoring RAID5/6 chunks onto several devices is not supported");
	return ret;
}

static int target_write(struct fs *fs, struct fs_device *dev, uint64_t physical, void *buf, size_t len)
{
	int ret = pio_all(dev->fd, buf, len, (off_t)physical, 1);

	return ret ? fs_err(&fs->err, ret, "cannot write %zu bytes at %llu of %s: %s", len,
			    (unsigned long long)physical, dev->path, strerror(-ret)) : 0;
}

/* A piece of the dump on every copy of it, chunk by chunk (the superblocks are written
 * already). */
int multi_write_piece(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len)
{
	struct fs *fs = r->fs;
	int ret = 0;

	if (logical == BTRFS_SUPER_OFFSET)
		return 0;
	while (!ret && len) {
		const struct fs_chunk *c = fs_chunk_find(fs, logical);
		size_t n = c && c->logical + c->length - logical < len ? (size_t)(c->logical + c->length - logical) : len;

		if (!c)
			return fs_err(r->err, -EUCLEAN, "block %llu of the dump is in no chunk",
				      (unsigned long long)logical);
		for (int m = 1; m <= fs_num_copies(fs, logical) && !ret; m++)
			if ((ret = fs_io_logical(fs, logical, buf, n, m, target_write)))
				*r->err = fs->err;
		buf += n;
		logical += n;
		len -= n;
	}
	return ret;
}

int multi_start(struct restorer *r, const char *const *paths, int n)
{
	struct fs_open_opts o;
	int ret = 0;

	if ((uint64_t)n != get_le64(&r->sb.num_devices))
		return fs_err(r->err, -EINVAL, "it needs %llu devices but has only %d",
			      (unsigned long long)get_le64(&r->sb.num_devices), n);
	for (int i = 0; i < n && !ret; i++)
		ret = write_superblock(r, paths[i], devid_of_target(r, i), !i);
	if (ret)
		return ret;
	fs_open_opts_init(&o);
	o.partial = 1;
	o.add_chunks = add_kept_chunks;
	o.add_chunks_ctx = r;
	if (!(r->fs = fs_open(paths, n, &o, r->err)))
		return r->err->code ? r->err->code : -EIO;
	/* the devices opened to write */
	for (int i = 0; i < r->fs->num_devs; i++) {
		struct fs_device *d = &r->fs->devs[i];
		int fd = d->path ? open(d->path, O_RDWR) : -1;

		if (fd < 0)
			return fs_err(r->err, -errno, "unable to open %s to write: %s", d->path, strerror(errno));
		close(d->fd);
		d->fd = fd;
	}
	return 0;
}

int multi_finish(struct restorer *r)
{
	for (int i = 0; i < r->fs->num_devs; i++)
		if (fsync(r->fs->devs[i].fd) && errno != EINVAL)
			return fs_err(r->err, -errno, "cannot sync %s: %s", r->fs->devs[i].path, strerror(errno));
	return 0;
}

void multi_free(struct restorer *r)
{
	fs_close(r->fs);
	for (size_t i = 0; i < r->nkept; i++)
		free(r->kept[i].data);
	free(r->kept);
}
