/* Opening a filesystem: devices, superblock choice, chunk map, root tree. */
#include "fs.h"
#include "csum.h"
#include "le.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

void fs_open_opts_init(struct fs_open_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->super_mirror = -1;
	o->backup_root = -1;
}

struct fs_device *fs_device_by_id(struct fs *fs, uint64_t devid)
{
	for (int i = 0; i < fs->num_devs; i++)
		if (fs->devs[i].fd >= 0 && fs->devs[i].devid == devid)
			return &fs->devs[i];
	return NULL;
}

/* The requested superblock copy, or the primary with fallback to the copies. */
static int choose_super(struct fs_device *d, int mirror, struct fs_error *err)
{
	struct fs_error first;
	int ret;

	if (mirror >= 0) {
		d->super_mirror = mirror;
		return fs_super_read_fd(d->fd, mirror, &d->sb, err);
	}
	ret = fs_super_read_fd(d->fd, 0, &d->sb, err);
	if (!ret || !err)
		return ret;
	first = *err;
	for (int m = 1; m < BTRFS_SUPER_MIRRORS; m++) {
		d->super_mirror = m;
		if (!fs_super_read_fd(d->fd, m, &d->sb, err))
			return 0;
	}
	*err = first;
	return first.code;
}

int fs_open_fd(const char *path, int writable, struct fs_error *err)
{
	struct stat st;
	int fd, blk = !stat(path, &st) && S_ISBLK(st.st_mode);

	fd = open(path, (writable ? O_RDWR | (blk ? O_EXCL : 0) : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return fs_err(err, -errno, "cannot open %s: %s", path,
			      errno == EBUSY ? "device is in use (mounted or opened by another writer)" :
			      strerror(errno));
	if (writable && !blk && flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return fs_err(err, -EBUSY, "cannot open %s: image file is in use by another writer", path);
	}
	return fd;
}

static int open_device(struct fs_device *d, const char *path, int mirror, int writable,
		       struct fs_error *err)
{
	const struct btrfs_dev_item *di = &d->sb.dev_item;
	int ret;

	d->fd = fs_open_fd(path, writable, err);
	if (d->fd < 0)
		return d->fd;
	d->path = strdup(path);
	if (!d->path)
		return fs_err(err, -ENOMEM, "out of memory");
	d->size = fs_fd_size(d->fd);
	ret = choose_super(d, mirror, err);
	if (ret) {
		char prefix[300];
		snprintf(prefix, sizeof(prefix), "%s: ", path);
		fs_err_wrap(err, prefix, NULL);
		return ret;
	}
	d->devid = get_le64(&di->devid);
	memcpy(d->uuid, di->uuid, BTRFS_UUID_SIZE);
	d->total_bytes = get_le64(&di->total_bytes);
	return 0;
}

static int add_devices(struct fs *fs, const char *const *paths, int n, const struct fs_open_opts *o,
		       struct fs_error *err)
{
	for (int i = 0; i < n; i++) {
		struct fs_device *d = &fs->devs[i];
		int ret = open_device(d, paths[i], o->super_mirror, o->writable, err);

		fs->num_devs = i + 1;
		if (ret)
			return ret;
		if (i && memcmp(d->sb.fsid, fs->devs[0].sb.fsid, BTRFS_FSID_SIZE))
			return fs_err(err, -EINVAL, "%s is not part of the filesystem on %s", paths[i], paths[0]);
		for (int j = 0; j < i; j++)
			if (fs->devs[j].devid == d->devid)
				return fs_err(err, -EINVAL, "%s and %s are both devid %llu", paths[j], paths[i],
					      (unsigned long long)d->devid);
	}
	return 0;
}

/* Takes the newest superblock among the devices as the filesystem's. */
static void adopt_super(struct fs *fs)
{
	const struct btrfs_super_block *best = &fs->devs[0].sb;

	for (int i = 1; i < fs->num_devs; i++)
		if (get_le64(&fs->devs[i].sb.generation) > get_le64(&best->generation))
			best = &fs->devs[i].sb;
	fs->sb = *best;
	fs->nodesize = get_le32(&fs->sb.nodesize);
	fs->sectorsize = get_le32(&fs->sb.sectorsize);
	fs->stripesize = get_le32(&fs->sb.stripesize);
	fs->csum_type = get_le16(&fs->sb.csum_type);
	fs->csum_size = csum_size(fs->csum_type);
	fs->generation = get_le64(&fs->sb.generation);
	memcpy(fs->fsid, fs->sb.fsid, BTRFS_FSID_SIZE);
	if (get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID)
		memcpy(fs->meta_uuid, fs->sb.metadata_uuid, BTRFS_FSID_SIZE);
	else
		memcpy(fs->meta_uuid, fs->sb.fsid, BTRFS_FSID_SIZE);
}

static int pick_roots(struct fs *fs, const struct fs_open_opts *o, struct fs_error *err)
{
	const struct btrfs_super_block *sb = &fs->sb;

	fs->root_bytenr = get_le64(&sb->root);
	fs->root_gen = get_le64(&sb->generation);
	fs->root_level = sb->root_level;
	fs->chunk_root_bytenr = get_le64(&sb->chunk_root);
	fs->chunk_root_gen = get_le64(&sb->chunk_root_generation);
	fs->chunk_root_level = sb->chunk_root_level;
	if (o->backup_root >= BTRFS_NUM_BACKUP_ROOTS)
		return fs_err(err, -EINVAL, "backup root %d does not exist (0..3)", o->backup_root);
	if (o->backup_root >= 0) {
		const struct btrfs_root_backup *b = &sb->super_roots[o->backup_root];
		fs->root_bytenr = get_le64(&b->tree_root);
		fs->root_gen = get_le64(&b->tree_root_gen);
		fs->root_level = b->tree_root_level;
		fs->chunk_root_bytenr = get_le64(&b->chunk_root);
		fs->chunk_root_gen = get_le64(&b->chunk_root_gen);
		fs->chunk_root_level = b->chunk_root_level;
	}
	if (o->tree_root) {
		fs->root_bytenr = o->tree_root;
		fs->root_gen = 0;
		fs->root_level = -1;
	}
	if (o->chunk_root) {
		fs->chunk_root_bytenr = o->chunk_root;
		fs->chunk_root_gen = 0;
		fs->chunk_root_level = -1;
	}
	return 0;
}

/* Collects the distinct devids that chunks use but that were not opened. */
static int missing_devids(const struct fs *fs, uint64_t *ids, int max)
{
	int n = 0;

	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++) {
			const struct fs_chunk_stripe *st = &fs->chunks[i].stripes[s];
			int k = 0;
			while (k < n && ids[k] != st->devid)
				k++;
			if (!st->dev && k == n && n < max)
				ids[n++] = st->devid;
		}
	return n;
}

/* Describes missing devices in err (code 0) and returns how many. */
static int note_missing(struct fs *fs, struct fs_error *err)
{
	uint64_t ids[16];
	int n = missing_devids(fs, ids, 16);
	uint64_t expected = get_le64(&fs->sb.num_devices);
	size_t len = 0;

	if (n) {
		len = (size_t)snprintf(err->msg, sizeof(err->msg), "missing devices: devid");
		for (int i = 0; i < n && len < sizeof(err->msg); i++)
			len += (size_t)snprintf(err->msg + len, sizeof(err->msg) - len, "%s %llu",
						i ? "," : "", (unsigned long long)ids[i]);
	} else if ((uint64_t)fs->num_devs < expected) {
		n = (int)(expected - (uint64_t)fs->num_devs);
		snprintf(err->msg, sizeof(err->msg), "missing devices: %d of %llu not given", n,
			 (unsigned long long)expected);
	}
	err->code = 0;
	fs->missing_devs = n;
	return n;
}

static int load_chunks(struct fs *fs, const struct fs_open_opts *o, struct fs_error *err)
{
	int ret = fs_chunk_load_sys_array(fs, fs->sb.sys_chunk_array,
					  get_le32(&fs->sb.sys_chunk_array_size));

	if (!ret && !o->skip_chunk_tree)
		ret = fs_chunk_load_tree(fs);
	if (ret) {
		*err = fs->err;
		return ret;
	}
	/* only devices that hold chunks are needed; a num_devices mismatch alone is noted */
	if (note_missing(fs, err) && missing_devids(fs, (uint64_t[1]){ 0 }, 1) && !o->allow_degraded) {
		fs_err_wrap(err, NULL, " (a degraded open was not allowed)");
		return err->code = -ENODEV;
	}
	return 0;
}

static int check_root_tree(struct fs *fs, const struct fs_open_opts *o, struct fs_error *err)
{
	struct fs_root r;
	struct fs_block_expect exp;
	struct fs_block *b;

	fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &r);
	exp = (struct fs_block_expect){ r.generation, r.level, r.objectid, NULL };
	b = fs_block_read(fs, r.bytenr, &exp);
	if (b) {
		fs->root_level = fs_block_level(b);
		fs_block_put(fs, b);
		return 0;
	}
	fs->err.tree = BTRFS_ROOT_TREE_OBJECTID;
	if (o->partial)
		return 0;
	*err = fs->err;
	return err->code ? err->code : -EIO;
}

struct fs *fs_open(const char *const *paths, int npaths, const struct fs_open_opts *opts,
		   struct fs_error *err)
{
	struct fs_open_opts defaults;
	struct fs_error local;
	struct fs *fs;

	if (!err)
		err = &local;
	if (!opts) {
		fs_open_opts_init(&defaults);
		opts = &defaults;
	}
	fs_err_clear(err);
	if (npaths < 1) {
		fs_err(err, -EINVAL, "no device given");
		return NULL;
	}
	fs = calloc(1, sizeof(*fs));
	if (fs)
		fs->devs = calloc((size_t)npaths, sizeof(*fs->devs));
	if (!fs || !fs->devs) {
		free(fs);
		fs_err(err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (add_devices(fs, paths, npaths, opts, err) ||
	    (adopt_super(fs), pick_roots(fs, opts, err)) ||
	    (fs_cache_set_limit(fs, opts->cache_bytes), load_chunks(fs, opts, err)) ||
	    check_root_tree(fs, opts, err)) {
		fs_close(fs);
		return NULL;
	}
	return fs;
}

void fs_close(struct fs *fs)
{
	if (!fs)
		return;
	fs_block_cache_free(fs);
	for (int i = 0; i < fs->num_chunks; i++)
		free(fs->chunks[i].stripes);
	free(fs->chunks);
	for (int i = 0; i < fs->num_devs; i++) {
		if (fs->devs[i].fd >= 0)
			close(fs->devs[i].fd);
		free(fs->devs[i].path);
	}
	free(fs->devs);
	fs_inflater_free(&fs->inflater);
	free(fs->disk_buf);
	free(fs->align_buf);
	free(fs->spare_ext_buf);
	free(fs);
}
