//build:Oz
/* Opening a filesystem for writing: nobody else may use its devices. */
#include "internal.h"
#include "util/le.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void fs_wopen_opts_init(struct fs_wopen_opts *o)
{
	memset(o, 0, sizeof(*o));
	fs_open_opts_init(&o->open);
	o->open.scan = 1;
}

static int check_unmounted(const char *const *paths, int n, struct fs_error *err)
{
	for (int i = 0; i < n; i++) {
		int ret = fs_path_mounted(paths[i]);

		if (ret < 0)
			return fs_err(err, ret, "could not check mount status of %s: %s", paths[i],
				      strerror(-ret));
		if (ret)
			return fs_err(err, -EBUSY, "%s is currently mounted", paths[i]);
	}
	return 0;
}

/* A device item of the chunk tree whose device is not open: 1 and its devid, 0 none.
 * (The chunk tree, not the superblock's count, says which devices there are: repair
 * fixes a wrong count.) */
static int dev_item_missing(struct fs *fs, uint64_t *devid)
{
	struct fs_key k = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &r), missing = 0;

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &r, &k, &p); !ret && !missing; ret = fs_next(fs, &p)) {
		struct fs_device *d;

		fs_path_key(&p, &k);
		if (k.objectid != BTRFS_DEV_ITEMS_OBJECTID || k.type != BTRFS_DEV_ITEM_KEY)
			break;
		d = fs_device_by_id(fs, k.offset);
		missing = !d || d->fd < 0;
		*devid = k.offset;
	}
	fs_path_release(fs, &p);
	return missing || ret < 0;
}

/* Each device opened again, read-write and to this program alone: O_EXCL on a block
 * device (refused while the kernel or another writer holds it), an exclusive lock on
 * an image file; it must be the file opened before. */
static int exclusive(struct fs *fs, struct fs_error *err)
{
	for (int i = 0; i < fs->num_devs; i++) {
		struct fs_device *d = &fs->devs[i];
		struct stat a, b;
		int fd, blk;

		if (d->fd < 0 || fstat(d->fd, &a))
			continue;
		blk = S_ISBLK(a.st_mode);
		fd = open(d->path, O_RDWR | O_CLOEXEC | (blk ? O_EXCL : 0));
		if (fd < 0)
			return fs_err(err, errno == EBUSY ? -EBUSY : -errno, "cannot open %s for writing: %s", d->path,
				      errno == EBUSY ? "in use (mounted or opened by another writer)" : strerror(errno));
		if (fstat(fd, &b) || b.st_ino != a.st_ino || b.st_dev != a.st_dev || b.st_rdev != a.st_rdev ||
		    (!blk && flock(fd, LOCK_EX | LOCK_NB))) {
			close(fd);
			return fs_err(err, -EBUSY, "%s is in use by another writer", d->path);
		}
		close(d->fd);
		d->fd = fd;
	}
	return 0;
}

struct fs *fs_wopen(const char *const *paths, int n, const struct fs_wopen_opts *o,
		    struct fs_error *err)
{
	struct fs_open_opts oo = o->open;
	struct fs *fs;
	uint64_t id = 0;

	/* the devices found by the scan are block devices: O_EXCL keeps them to us */
	oo.writable = 0;
	fs = check_unmounted(paths, n, err) ? NULL : fs_open(paths, n, &oo, err);
	if (!fs)
		return NULL;
	/* a chunk tree being recovered is not read: the open devices are the filesystem's */
	if (fs_missing_devids(fs, &id, 1) ||
	    (!oo.add_chunks && !o->stale_dev_items && dev_item_missing(fs, &id))) {
		fs_err(err, -ENODEV, "every device must be present to write (devid %llu is missing)",
		       (unsigned long long)id);
		fs_close(fs);
		return NULL;
	}
	if (exclusive(fs, err)) {
		fs_close(fs);
		return NULL;
	}
	fs->w = calloc(1, sizeof(*fs->w));
	if (!fs->w) {
		fs_err(err, -ENOMEM, "out of memory");
		fs_close(fs);
		return NULL;
	}
	return fs;
}

int fs_wclose(struct fs *fs)
{
	struct fs_wstate *w;
	int ret;

	if (!fs)
		return 0;
	w = fs->w;
	if (w && w->transid)
		fs_tx_abort(fs);
	ret = w ? undo_close(fs) : 0;
	if (w) {
		free(w->allocs);
		free(w->frees);
		free(w->space);
		free(w->roots);
		free(w->taken.v);
		free(w->sb_stripes.v);
		free(w->scratch);
		free(w->new_chunks);
		free(w->dev_items_before);
		free(w);
	}
	fs->w = NULL;
	fs_close(fs);
	return ret;
}

int fs_device_resize(struct fs *fs, struct fs_device *d, uint64_t bytes)
{
	struct fs_key k = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid };
	struct btrfs_dev_item *di;
	uint64_t now = fs_fd_size(d->fd);
	uint32_t size;

	di = (struct btrfs_dev_item *)fs_item_mut(fs, BTRFS_CHUNK_TREE_OBJECTID, &k, &size);
	if (!di || size < sizeof(*di))
		return di ? fs_err(&fs->err, -EUCLEAN, "device item %llu too short", (unsigned long long)d->devid) :
			    fs->err.code;
	put_le64(&fs->sb.total_bytes, get_le64(&fs->sb.total_bytes) - get_le64(&di->total_bytes) + bytes);
	put_le64(&di->total_bytes, bytes);
	put_le64(&d->sb.dev_item.total_bytes, bytes);
	if (now > d->size)
		d->size = now;
	return 0;
}
