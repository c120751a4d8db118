//build:Oz
/* Every write of the engine: device bytes (saved to the undo file first), flushes,
 * superblocks. Writes go through pio_dev_write/pio_dev_sync, which tests record. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include "util/vec.h"
#include <errno.h>
#include <string.h>

int fs_write_phys(struct fs *fs, struct fs_device *dev, uint64_t physical, const void *buf,
		  size_t len)
{
	int ret;

	if (physical + len > dev->size || physical + len < physical)
		return fs_err_at(&fs->err, -EIO, 0, physical, "write beyond the end of %s", dev->path);
	ret = fs->w && fs->w->undo ? undo_save(fs, dev, physical, len) : 0;
	if (!ret && (ret = pio_dev_write(dev->fd, buf, len, (off_t)physical)))
		fs_err_at(&fs->err, ret, 0, physical, "cannot write to %s: %s", dev->path, strerror(-ret));
	return ret;
}

static int write_piece(struct fs *fs, struct fs_device *dev, uint64_t physical, void *buf, size_t len)
{
	return fs_write_phys(fs, dev, physical, buf, len);
}

static int save_piece(struct fs *fs, struct fs_device *dev, uint64_t physical, void *buf, size_t len)
{
	(void)buf;
	return undo_save(fs, dev, physical, len);
}

/* Every copy of [logical, +len): written from buf, or (buf NULL) its old bytes saved
 * to the undo file. */
static int each_copy(struct fs *fs, uint64_t logical, const void *buf, size_t len)
{
	const struct fs_chunk *c = fs_chunk_find(fs, logical);
	int copies = fs_num_copies(fs, logical), ret = 0;

	if (c && c->type & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6))
		return fs_err_at(&fs->err, -ENOTSUP, 0, logical, "writing to RAID5/6 is not supported");
	for (int m = 1; m <= copies && !ret; m++)
		ret = fs_io_logical(fs, logical, (void *)buf, len, m, buf ? write_piece : save_piece);
	return copies || ret ? ret : fs_err_at(&fs->err, -ENOENT, 0, logical, "write to an unmapped address");
}

int fs_write_logical(struct fs *fs, uint64_t logical, const void *buf, size_t len)
{
	return each_copy(fs, logical, buf, len);
}

int wio_save_logical(struct fs *fs, uint64_t logical, size_t len)
{
	return each_copy(fs, logical, NULL, len);
}

int fs_flush(struct fs *fs)
{
	for (int i = 0; i < fs->num_devs; i++) {
		int ret = pio_dev_sync(fs->devs[i].fd);

		if (ret)
			return fs_err(&fs->err, ret, "cannot flush %s: %s", fs->devs[i].path, strerror(-ret));
	}
	return 0;
}

/* Copy i of device d exists when it lies inside the device and inside the part of it
 * the filesystem uses (as the kernel decides). */
static int copy_exists(const struct fs_device *d, int i)
{
	uint64_t end = btrfs_super_offset(i) + BTRFS_SUPER_SIZE;

	return end <= d->size && (!i || end < get_le64(&d->sb.dev_item.total_bytes));
}

/* fs->sb as copy i of device d: its dev_item, bytenr and checksum. */
static void super_copy(const struct fs *fs, const struct fs_device *d, int i,
		       struct btrfs_super_block *out)
{

	*out = fs->sb;
	out->dev_item = d->sb.dev_item;
	put_le64(&out->bytenr, btrfs_super_offset(i));
	put_le64(&out->flags, get_le64(&out->flags) | BTRFS_HEADER_FLAG_WRITTEN);
	csum_stamp(fs->csum_type, out, BTRFS_SUPER_SIZE);
}

uint32_t undo_super_crc(const struct btrfs_super_block *sb)
{
	return crc32c(sb, sizeof(*sb));
}

int fs_super_commit(struct fs *fs)
{
	struct btrfs_super_block copy;
	uint32_t crcs[fs->num_devs > 0 ? fs->num_devs : 1];
	int ret = fs_flush(fs);

	for (int i = 0; i < fs->num_devs && !ret; i++) {
		super_copy(fs, &fs->devs[i], 0, &copy);
		crcs[i] = undo_super_crc(&copy);
		for (int m = 0; m < BTRFS_SUPER_MIRRORS && !ret && fs->w && fs->w->undo; m++)
			if (copy_exists(&fs->devs[i], m))
				ret = undo_save(fs, &fs->devs[i], btrfs_super_offset(m), BTRFS_SUPER_SIZE);
	}
	if (!ret && fs->w && fs->w->undo)
		ret = undo_state(fs, crcs);
	/* the copies first, the primary last */
	for (int i = 0; i < fs->num_devs && !ret; i++) {
		struct fs_device *d = &fs->devs[i];

		for (int m = BTRFS_SUPER_MIRRORS - 1; m >= 0 && !ret; m--)
			if (copy_exists(d, m)) {
				super_copy(fs, d, m, &copy);
				ret = fs_write_phys(fs, d, btrfs_super_offset(m), &copy, sizeof(copy));
			}
		if (!ret)
			d->sb = copy;
	}
	return ret ? ret : fs_flush(fs);
}

/* ---- range sets ------------------------------------------------------------ */

/* Index of the first range ending after pos. */
static size_t ranges_after(const struct ranges *r, uint64_t pos)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].end <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct range *ranges_overlap(const struct ranges *r, uint64_t start, uint64_t end)
{
	size_t i = ranges_after(r, start);

	return i < r->n && r->v[i].start < end ? &r->v[i] : NULL;
}

int ranges_add(struct ranges *r, uint64_t start, uint64_t end)
{
	size_t i = ranges_after(r, start ? start - 1 : 0), j = i;

	/* ranges i..j-1 touch [start, end): they merge into one */
	while (j < r->n && r->v[j].start <= end) {
		if (r->v[j].start < start)
			start = r->v[j].start;
		if (r->v[j].end > end)
			end = r->v[j].end;
		j++;
	}
	if (j == i) {
		if (vec_reserve(&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
			return -ENOMEM;
		memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(*r->v));
		r->n++;
		j = i + 1;
	}
	r->v[i] = (struct range){ start, end };
	memmove(&r->v[i + 1], &r->v[j], (r->n - j) * sizeof(*r->v));
	r->n -= j - i - 1;
	return 0;
}

int fs_super_adopt_newest(struct fs *fs)
{
	uint64_t best = 0;

	for (int i = 0; i < fs->num_devs; i++) {
		struct fs_device *d = &fs->devs[i];
		struct btrfs_super_block sb;

		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
			if (!fs_super_read_fd(d->fd, m, &sb, NULL) &&
			    !memcmp(sb.fsid, fs->fsid, BTRFS_FSID_SIZE) &&
			    get_le64(&sb.generation) > get_le64(&d->sb.generation))
				d->sb = sb;
		if (get_le64(&d->sb.generation) > best) {
			best = get_le64(&d->sb.generation);
			fs->sb = d->sb;
		}
	}
	return best ? 0 : fs_err(&fs->err, -EUCLEAN, "no valid superblock");
}
