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
#include "wint.h"
#include "csum.h"
#include "le.h"
#include "pio.h"
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

	if (u)
		u->saved = calloc((size_t)fs->num_devs, sizeof(*u->saved));
	if (!u || !u->saved) {
		free(u);
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	}
	u->fd = -1;
	fs->w->undo = u;
	if (fs->num_devs > MAX_UNDO_DEVS)
		return fs_err(&fs->err, -E2BIG, "too many devices for an undo file");
	u->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (u->fd < 0)
		return fs_err(&fs->err, -errno, "cannot create the undo file %s: %s", path,
			      errno == EEXIST ? "it exists (an undo file is never overwritten)" : strerror(errno));
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
	uint32_t ndevs;
	uint8_t fsid[BTRFS_FSID_SIZE];
	uint64_t devid[MAX_UNDO_DEVS];
	uint8_t uuid[MAX_UNDO_DEVS][BTRFS_UUID_SIZE];
	int fds[MAX_UNDO_DEVS];         /* the device given for each */
};

static int read_header(struct undo_file *f, struct fs_error *err)
{
	uint8_t h[8 + 8 + BTRFS_FSID_SIZE + MAX_UNDO_DEVS * DEV_ENTRY + 4];
	size_t len;

	if (f->size < 8 + 8 + BTRFS_FSID_SIZE + 4 || pio_all(f->fd, h, 8 + 8 + BTRFS_FSID_SIZE, 0, 0) ||
	    memcmp(h, UNDO_MAGIC, 8))
		return fs_err(err, -EINVAL, "not an undo file");
	if (get_le32(h + 8) != UNDO_VERSION)
		return fs_err(err, -EINVAL, "undo file version %u is not supported", get_le32(h + 8));
	f->ndevs = get_le32(h + 12);
	len = 8 + 8 + BTRFS_FSID_SIZE + (size_t)f->ndevs * DEV_ENTRY;
	if (!f->ndevs || f->ndevs > MAX_UNDO_DEVS || f->size < len + 4 ||
	    pio_all(f->fd, h, len + 4, 0, 0) || crc32c(h, len) != get_le32(h + len))
		return fs_err(err, -EINVAL, "the undo file header is damaged");
	memcpy(f->fsid, h + 16, BTRFS_FSID_SIZE);
	for (uint32_t i = 0; i < f->ndevs; i++) {
		f->devid[i] = get_le64(h + 32 + i * DEV_ENTRY);
		memcpy(f->uuid[i], h + 40 + i * DEV_ENTRY, BTRFS_UUID_SIZE);
		f->fds[i] = -1;
	}
	f->first = len + 4;
	return 0;
}

/* Reads the record at *pos: 1 (type, payload in *buf, *len), 0 at the end (or a record
 * cut short there), <0 for a damaged one. */
static int next_record(struct undo_file *f, uint64_t *pos, uint32_t *type, uint8_t **buf,
		       uint32_t *len, struct fs_error *err)
{
	uint8_t pre[8], post[4];
	uint32_t crc;
	uint8_t *p;

	if (*pos + 12 > f->size || pio_all(f->fd, pre, 8, (off_t)*pos, 0))
		return 0;
	*type = get_le32(pre);
	*len = get_le32(pre + 4);
	if (*pos + 12 + *len > f->size)
		return 0;
	p = realloc(*buf, *len ? *len : 1);
	if (!p)
		return fs_err(err, -ENOMEM, "out of memory");
	*buf = p;
	if (pio_all(f->fd, p, *len, (off_t)(*pos + 8), 0) || pio_all(f->fd, post, 4, (off_t)(*pos + 8 + *len), 0))
		return fs_err(err, -EIO, "cannot read the undo file");
	crc = ~crc32c_raw(crc32c_raw(~0u, pre, 8), p, *len);
	if (crc != get_le32(post) || (*type == REC_BYTES && (*len < 16 || get_le32(p) >= f->ndevs)) ||
	    (*type == REC_STATE && *len != f->ndevs * 4) || (*type != REC_BYTES && *type != REC_STATE))
		return fs_err(err, -EUCLEAN, "the undo file is damaged at offset %llu", (unsigned long long)*pos);
	*pos += 12 + *len;
	return 1;
}

/* Matches a device given on the command line to one of the undo file. */
static int attach_device(struct undo_file *f, const char *path, struct fs_error *err)
{
	struct btrfs_super_block sb;
	int m = 0, fd;

	while (m < BTRFS_SUPER_MIRRORS && fs_super_read(path, m, &sb, NULL))
		m++;
	if (m == BTRFS_SUPER_MIRRORS)
		return fs_err(err, -EINVAL, "%s has no valid btrfs superblock", path);
	if (memcmp(sb.fsid, f->fsid, BTRFS_FSID_SIZE))
		return fs_err(err, -EINVAL, "%s is not the filesystem the undo file was written for", path);
	for (uint32_t i = 0; i < f->ndevs; i++) {
		if (f->devid[i] != get_le64(&sb.dev_item.devid) ||
		    memcmp(f->uuid[i], sb.dev_item.uuid, BTRFS_UUID_SIZE))
			continue;
		if (f->fds[i] >= 0)
			return fs_err(err, -EINVAL, "%s: devid %llu given twice", path,
				      (unsigned long long)f->devid[i]);
		fd = fs_path_mounted(path);
		if (fd)
			return fs_err(err, fd < 0 ? fd : -EBUSY, fd < 0 ? "could not check mount status of %s" :
				      "%s is currently mounted", path);
		fd = fs_open_fd(path, 1, err);
		if (fd < 0)
			return fd;
		f->fds[i] = fd;
		return 0;
	}
	return fs_err(err, -EINVAL, "%s (devid %llu) is not a device the undo file was written for", path,
		      (unsigned long long)get_le64(&sb.dev_item.devid));
}

/* Do the devices' superblocks match a state the undo file recorded? */
static int state_matches(struct undo_file *f, struct fs_error *err)
{
	uint32_t now[MAX_UNDO_DEVS], type, len;
	uint64_t pos = f->first;
	uint8_t *buf = NULL;
	int ret, found = 0;

	for (uint32_t i = 0; i < f->ndevs; i++) {
		struct btrfs_super_block sb;

		if (pio_all(f->fds[i], &sb, sizeof(sb), (off_t)BTRFS_SUPER_OFFSET, 0)) {
			free(buf);
			return fs_err(err, -EIO, "cannot read the superblock of devid %llu",
				      (unsigned long long)f->devid[i]);
		}
		now[i] = undo_super_crc(&sb);
	}
	while ((ret = next_record(f, &pos, &type, &buf, &len, err)) == 1)
		if (type == REC_STATE) {
			uint32_t i = 0;

			while (i < f->ndevs && get_le32(buf + 4 * i) == now[i])
				i++;
			found |= i == f->ndevs;
		}
	free(buf);
	if (ret < 0)
		return ret;
	return found ? 0 : fs_err(err, -ESTALE, "the filesystem changed since the undo file was written");
}

static int is_super_range(uint64_t physical, uint32_t len)
{
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (physical == btrfs_super_offset(m) && len == BTRFS_SUPER_SIZE)
			return 1;
	return 0;
}

/* Writes back the saved superblocks (supers 1) or everything else (supers 0): the
 * superblocks first, as they point at the trees the change never overwrote. */
static int put_back(struct undo_file *f, int supers, uint64_t *count, struct fs_error *err)
{
	uint64_t pos = f->first;
	uint8_t *buf = NULL;
	uint32_t type, len;
	int ret;

	while ((ret = next_record(f, &pos, &type, &buf, &len, err)) == 1) {
		uint64_t phys;
		int fd;

		if (type != REC_BYTES || is_super_range(phys = get_le64(buf + 8), len - 16) != supers)
			continue;
		fd = f->fds[get_le32(buf)];
		ret = pio_dev_write(fd, buf + 16, len - 16, (off_t)phys);
		if (ret) {
			fs_err(err, ret, "cannot write devid %llu at %llu: %s",
			       (unsigned long long)f->devid[get_le32(buf)], (unsigned long long)phys, strerror(-ret));
			break;
		}
		(*count)++;
	}
	free(buf);
	for (uint32_t i = 0; i < f->ndevs && !ret; i++)
		if ((ret = pio_dev_sync(f->fds[i])))
			fs_err(err, ret, "cannot flush devid %llu", (unsigned long long)f->devid[i]);
	return ret;
}

int fs_undo_restore(const char *file, const char *const *paths, int n, uint64_t *restored,
		    struct fs_error *err)
{
	struct undo_file f = { .fd = open(file, O_RDONLY | O_CLOEXEC) };
	int ret;

	*restored = 0;
	if (f.fd < 0)
		return fs_err(err, -errno, "cannot open %s: %s", file, strerror(errno));
	f.size = fs_fd_size(f.fd);
	ret = read_header(&f, err);
	for (int i = 0; i < n && !ret; i++)
		ret = attach_device(&f, paths[i], err);
	for (uint32_t i = 0; i < f.ndevs && !ret; i++)
		if (f.fds[i] < 0)
			ret = fs_err(err, -ENODEV, "devid %llu of the filesystem was not given",
				     (unsigned long long)f.devid[i]);
	if (!ret)
		ret = state_matches(&f, err);
	if (!ret)
		ret = put_back(&f, 1, restored, err);
	if (!ret)
		ret = put_back(&f, 0, restored, err);
	for (uint32_t i = 0; i < f.ndevs && i < MAX_UNDO_DEVS; i++)
		if (f.fds[i] >= 0)
			close(f.fds[i]);
	close(f.fd);
	return ret;
}
