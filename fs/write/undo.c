//build:Oz
/* Undo files: what a change overwrote, to put the devices back byte for byte.
 *
 * Format (little-endian):
 *   header   "BTRFSUND" | u32 version (1) | u32 ndevs | fsid[16] |
 *            ndevs x (u64 devid | uuid[16]) | u32 crc32c of the header before it
 *   records  u32 type | u32 payload length | payload | u32 crc32c of type, length, payload
 *     type 1 (bytes): u32 device index | u32 0 | u64 physical offset | the old bytes
 *     type 2 (state): ndevs x u32 crc32c of the device's primary superblock copy
 * The first state record is the devices as opened, then one per superblock write,
 * recorded before it. Bytes are saved the first time a range is overwritten and the
 * file is synced before the device writes that need it. A record cut short at the
 * end was being written when the command stopped, before anything relied on it. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNDO_MAGIC "BTRFSUND"
#define UNDO_VERSION 1
#define REC_BYTES 1
#define REC_STATE 2
#define DEV_ENTRY (8 + BTRFS_UUID_SIZE)
#define MAX_UNDO_DEVS 64

struct fs_undo {
	int fd;
	uint64_t end;                   /* where the next record goes */
	struct ranges *saved;           /* per device */
};

/* ---- writing ---------------------------------------------------------------- */

static int undo_append(struct fs *fs, uint32_t type, const void *head, size_t hlen,
		       const void *data, size_t dlen)
{
	struct fs_undo *u = fs->w->undo;
	uint8_t pre[8], post[4];
	uint32_t crc;
	int ret;

	put_le32(pre, type);
	put_le32(pre + 4, (uint32_t)(hlen + dlen));
	crc = crc32c_raw(crc32c_raw(crc32c_raw(~0u, pre, 8), head, hlen), data, dlen);
	put_le32(post, ~crc);
	ret = pio_all(u->fd, pre, 8, (off_t)u->end, 1);
	if (!ret)
		ret = pio_all(u->fd, (void *)head, hlen, (off_t)(u->end + 8), 1);
	if (!ret && dlen)
		ret = pio_all(u->fd, (void *)data, dlen, (off_t)(u->end + 8 + hlen), 1);
	if (!ret)
		ret = pio_all(u->fd, post, 4, (off_t)(u->end + 8 + hlen + dlen), 1);
	if (ret)
		return fs_err(&fs->err, ret, "cannot write the undo file: %s", strerror(-ret));
	u->end += 12 + hlen + dlen;
	return 0;
}

static int save_piece(struct fs *fs, int dev, uint64_t physical, uint64_t len)
{
	uint8_t head[16];
	uint8_t *buf = malloc(len);
	int ret;

	if (!buf)
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	put_le32(head, (uint32_t)dev);
	put_le32(head + 4, 0);
	put_le64(head + 8, physical);
	ret = pio_all(fs->devs[dev].fd, buf, len, (off_t)physical, 0);
	if (ret)
		fs_err_at(&fs->err, ret, 0, physical, "cannot read %s for the undo file", fs->devs[dev].path);
	else
		ret = undo_append(fs, REC_BYTES, head, sizeof(head), buf, len);
	if (!ret && ranges_add(&fs->w->undo->saved[dev], physical, physical + len))
		ret = fs_err(&fs->err, -ENOMEM, "out of memory");
	free(buf);
	return ret;
}

int undo_save(struct fs *fs, struct fs_device *dev, uint64_t physical, uint64_t len)
{
	int i = (int)(dev - fs->devs);
	uint64_t end = physical + len;

	while (physical < end) {
		const struct range *r = ranges_overlap(&fs->w->undo->saved[i], physical, end);
		uint64_t stop = r && r->start > physical ? r->start : end;
		int ret;

		if (r && r->start <= physical) {
			physical = r->end;
			continue;
		}
		ret = save_piece(fs, i, physical, stop - physical);
		if (ret)
			return ret;
		physical = stop;
	}
	return 0;
}

int undo_sync(struct fs *fs)
{
	if (fsync(fs->w->undo->fd))
		return fs_err(&fs->err, -errno, "cannot sync the undo file: %s", strerror(errno));
	return 0;
}

int undo_state(struct fs *fs, const uint32_t *crcs)
{
	uint8_t buf[MAX_UNDO_DEVS * 4];
	int ret;

	for (int i = 0; i < fs->num_devs; i++)
		put_le32(buf + 4 * i, crcs[i]);
	ret = undo_append(fs, REC_STATE, buf, (size_t)fs->num_devs * 4, NULL, 0);
	return ret ? ret : undo_sync(fs);
}

/* The directory entry of a new file survives a crash once its directory is synced. */
static void sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

static int write_header(struct fs *fs)
{
	uint8_t h[8 + 8 + BTRFS_FSID_SIZE + MAX_UNDO_DEVS * DEV_ENTRY + 4], *p = h + 8;
	struct btrfs_super_block sb;
	uint32_t crcs[MAX_UNDO_DEVS];
	int ret;

	memcpy(h, UNDO_MAGIC, 8);
	put_le32(p, UNDO_VERSION);
	put_le32(p + 4, (uint32_t)fs->num_devs);
	memcpy(p + 8, fs->fsid, BTRFS_FSID_SIZE);
	p += 8 + BTRFS_FSID_SIZE;
	for (int i = 0; i < fs->num_devs; i++, p += DEV_ENTRY) {
		put_le64(p, fs->devs[i].devid);
		memcpy(p + 8, fs->devs[i].uuid, BTRFS_UUID_SIZE);
		if (pio_all(fs->devs[i].fd, &sb, sizeof(sb), (off_t)BTRFS_SUPER_OFFSET, 0))
			return fs_err(&fs->err, -EIO, "cannot read the superblock of %s", fs->devs[i].path);
		crcs[i] = undo_super_crc(&sb);
	}
	put_le32(p, crc32c(h, (size_t)(p - h)));
	p += 4;
	ret = pio_all(fs->w->undo->fd, h, (size_t)(p - h), 0, 1);
	if (ret)
		return fs_err(&fs->err, ret, "cannot write the undo file: %s", strerror(-ret));
	fs->w->undo->end = (uint64_t)(p - h);
	return undo_state(fs, crcs);
}

int fs_undo_start(struct fs *fs, const char *path)
{
	struct fs_undo *u = calloc(1, sizeof(*u));
	int ret = 0;

	if (u)
		u->saved = calloc((size_t)fs->num_devs, sizeof(*u->saved));
	if (!u || !u->saved) {
		free(u);
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	}
	u->fd = -1;
	fs->w->undo = u;
	if (fs->num_devs > MAX_UNDO_DEVS)
		ret = fs_err(&fs->err, -E2BIG, "too many devices for an undo file");
	else if ((u->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		ret = fs_err(&fs->err, -errno, "cannot create the undo file %s: %s", path,
			     errno == EEXIST ? "it exists (an undo file is never overwritten)" : strerror(errno));
	if (ret) {
		undo_close(fs);         /* nothing started: another path may be tried */
		return ret;
	}
	sync_dir_of(path);
	return write_header(fs);
}

int undo_close(struct fs *fs)
{
	struct fs_undo *u = fs->w->undo;
	int ret = 0;

	if (!u)
		return 0;
	if (u->fd >= 0) {
		ret = fsync(u->fd) ? -errno : 0;
		close(u->fd);
	}
	for (int i = 0; i < fs->num_devs && u->saved; i++)
		free(u->saved[i].v);
	free(u->saved);
	free(u);
	fs->w->undo = NULL;
	return ret;
}

/* ---- restoring ---------------------------------------------------------------- */

struct undo_file {
	int fd;
	uint64_t size, first;           /* file size, offset of the first record */
	uint32_t ndevs, type, len;      /* the current record: type, payload length */
	uint8_t *buf;                   /* and payload */
	struct fs *fs;                  /* the devices, opened for writing */
	struct fs_device *dev[MAX_UNDO_DEVS];
};

/* The header, and the device the filesystem has for each device it names. */
static int read_header(struct undo_file *f)
{
	uint8_t h[8 + 8 + BTRFS_FSID_SIZE + MAX_UNDO_DEVS * DEV_ENTRY + 4];
	struct fs *fs = f->fs;
	size_t len;

	if (f->size < 8 + 8 + BTRFS_FSID_SIZE + 4 || pio_all(f->fd, h, 8 + 8 + BTRFS_FSID_SIZE, 0, 0) ||
	    memcmp(h, UNDO_MAGIC, 8) || get_le32(h + 8) != UNDO_VERSION)
		return fs_err(&fs->err, -EINVAL, "not an undo file (of this version)");
	f->ndevs = get_le32(h + 12);
	len = 8 + 8 + BTRFS_FSID_SIZE + (size_t)f->ndevs * DEV_ENTRY;
	if (!f->ndevs || f->ndevs > MAX_UNDO_DEVS || f->size < len + 4 ||
	    pio_all(f->fd, h, len + 4, 0, 0) || crc32c(h, len) != get_le32(h + len))
		return fs_err(&fs->err, -EINVAL, "the undo file header is damaged");
	if (memcmp(h + 16, fs->fsid, BTRFS_FSID_SIZE))
		return fs_err(&fs->err, -EINVAL, "not the filesystem the undo file was written for");
	for (uint32_t i = 0; i < f->ndevs; i++) {
		const uint8_t *e = h + 32 + i * DEV_ENTRY;

		f->dev[i] = fs_device_by_id(fs, get_le64(e));
		if (!f->dev[i] || memcmp(f->dev[i]->uuid, e + 8, BTRFS_UUID_SIZE))
			return fs_err(&fs->err, -ENODEV, "devid %llu of the undo file is not given",
				      (unsigned long long)get_le64(e));
	}
	f->first = len + 4;
	return 0;
}

/* Reads the record at *pos: 1 (f->type, f->buf, f->len), 0 at the end (or a record cut
 * short there), <0 for a damaged one. */
static int next_record(struct undo_file *f, uint64_t *pos)
{
	uint8_t pre[8], post[4];
	uint8_t *p;

	if (*pos + 12 > f->size || pio_all(f->fd, pre, 8, (off_t)*pos, 0))
		return 0;
	f->type = get_le32(pre);
	f->len = get_le32(pre + 4);
	if (*pos + 12 + f->len > f->size)
		return 0;
	p = realloc(f->buf, f->len + 1);
	if (!p)
		return fs_err(&f->fs->err, -ENOMEM, "out of memory");
	f->buf = p;
	if (pio_all(f->fd, p, f->len, (off_t)(*pos + 8), 0) || pio_all(f->fd, post, 4, (off_t)(*pos + 8 + f->len), 0) ||
	    ~crc32c_raw(crc32c_raw(~0u, pre, 8), p, f->len) != get_le32(post) ||
	    (f->type == REC_BYTES && (f->len < 16 || get_le32(p) >= f->ndevs)) ||
	    (f->type == REC_STATE && f->len != f->ndevs * 4) || (f->type != REC_BYTES && f->type != REC_STATE))
		return fs_err(&f->fs->err, -EUCLEAN, "the undo file is damaged at offset %llu", (unsigned long long)*pos);
	*pos += 12 + f->len;
	return 1;
}

/* Do the devices' superblocks match a state the undo file recorded? */
static int state_matches(struct undo_file *f)
{
	uint8_t now[MAX_UNDO_DEVS * 4];
	uint64_t pos = f->first;
	int ret, found = 0;

	for (uint32_t i = 0; i < f->ndevs; i++) {
		struct btrfs_super_block sb;

		if (pio_all(f->dev[i]->fd, &sb, sizeof(sb), (off_t)BTRFS_SUPER_OFFSET, 0))
			return fs_err(&f->fs->err, -EIO, "cannot read the superblock of %s", f->dev[i]->path);
		put_le32(now + 4 * i, undo_super_crc(&sb));
	}
	while ((ret = next_record(f, &pos)) == 1)
		found |= f->type == REC_STATE && !memcmp(f->buf, now, 4 * f->ndevs);
	if (ret < 0)
		return ret;
	return found ? 0 : fs_err(&f->fs->err, -ESTALE, "the filesystem changed since the undo file was written");
}

/* Writes back the saved superblocks (supers 1) or everything else (supers 0): the
 * superblocks first, as they name the trees the change never overwrote. */
static int put_back(struct undo_file *f, int supers, uint64_t *count)
{
	uint64_t pos = f->first;
	int ret;

	while ((ret = next_record(f, &pos)) == 1) {
		uint64_t phys, len = f->len - 16;
		int super = 0;

		if (f->type != REC_BYTES)
			continue;
		phys = get_le64(f->buf + 8);
		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
			super |= phys == btrfs_super_offset(m) && len == BTRFS_SUPER_SIZE;
		if (super != supers)
			continue;
		ret = fs_write_phys(f->fs, f->dev[get_le32(f->buf)], phys, f->buf + 16, len);
		if (ret)
			return ret;
		(*count)++;
	}
	return ret ? ret : fs_flush(f->fs);
}

int fs_undo_restore(const char *file, const char *const *paths, int n, uint64_t *restored,
		    struct fs_error *err)
{
	struct undo_file f = { .fd = open(file, O_RDONLY | O_CLOEXEC) };
	struct fs_wopen_opts o;
	int ret = 0;

	*restored = 0;
	if (f.fd < 0)
		return fs_err(err, -errno, "cannot open %s: %s", file, strerror(errno));
	fs_wopen_opts_init(&o);
	o.open.partial = o.open.skip_chunk_tree = 1;
	f.fs = fs_wopen(paths, n, &o, err);
	if (f.fs) {
		f.size = fs_fd_size(f.fd);
		ret = read_header(&f);
		if (!ret)
			ret = state_matches(&f);
		if (!ret)
			ret = put_back(&f, 1, restored);
		if (!ret)
			ret = put_back(&f, 0, restored);
		if (ret)
			*err = f.fs->err;
		fs_wclose(f.fs);
	}
	free(f.buf);
	close(f.fd);
	return f.fs ? ret : err->code;
}
