//build:Oz
/* Opening a filesystem: devices, superblock choice, chunk map, root tree. */
#include "devscan.h"
#include "fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int fs_device_is_seed(const struct fs *fs, const struct fs_device *d)
{
	return memcmp(d->sb.dev_item.fsid, fs->meta_uuid, BTRFS_FSID_SIZE) &&
	       (get_le64(&d->sb.flags) & BTRFS_SUPER_FLAG_SEEDING);
}

struct fs_device *fs_stripe_device(struct fs *fs, const struct fs_chunk_stripe *st)
{
	struct fs_device *own = NULL;

	for (int i = 0; i < fs->num_devs; i++) {
		struct fs_device *d = &fs->devs[i];

		if (d->fd < 0 || d->devid != st->devid)
			continue;
		if (!memcmp(d->uuid, st->dev_uuid, BTRFS_UUID_SIZE))
			return d;
		if (!fs_device_is_seed(fs, d))
			own = d;
	}
	return own;
}

/* Points every chunk stripe at its device (after devices were added). */
static void resolve_stripes(struct fs *fs)
{
	fs->num_seeds = 0;
	for (int i = 0; i < fs->num_devs; i++)
		fs->num_seeds += fs->devs[i].fd >= 0 && fs_device_is_seed(fs, &fs->devs[i]);
	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++)
			fs->chunks[i].stripes[s].dev = fs_stripe_device(fs, &fs->chunks[i].stripes[s]);
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

/* Opens path into a new slot of fs->devs (moved by the growth: stripes are
 * resolved again after). */
static int open_device(struct fs *fs, const char *path, int mirror, struct fs_error *err)
{
	struct fs_device *d;
	int ret;

	if (fs->num_devs == fs->cap_devs) {
		int cap = fs->cap_devs ? fs->cap_devs * 2 : 2;
		d = realloc(fs->devs, (size_t)cap * sizeof(*d));
		if (!d)
			return fs_err(err, -ENOMEM, "out of memory");
		fs->devs = d;
		fs->cap_devs = cap;
	}
	d = &fs->devs[fs->num_devs++];
	memset(d, 0, sizeof(*d));
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return fs_err(err, -errno, "cannot open %s: %s", path, strerror(errno));
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
	d->devid = get_le64(&d->sb.dev_item.devid);
	memcpy(d->uuid, d->sb.dev_item.uuid, BTRFS_UUID_SIZE);
	d->total_bytes = get_le64(&d->sb.dev_item.total_bytes);
	return 0;
}

/* Closes the last device opened (a duplicate or a device not wanted). */
static void drop_last_device(struct fs *fs)
{
	struct fs_device *d = &fs->devs[--fs->num_devs];

	close(d->fd);
	free(d->path);
}

/* Whether two superblocks are of one filesystem: same metadata fsid (dev_item.fsid;
 * the fsid differs while a change by btrfstune -m is half done). */
static int same_fs(const struct btrfs_super_block *a, const struct btrfs_super_block *b)
{
	return !memcmp(a->dev_item.fsid, b->dev_item.fsid, BTRFS_FSID_SIZE);
}

/* The device just opened must not have the devid of another (the same device
 * given twice, or a copy of one). */
static int new_device(struct fs *fs, struct fs_error *err)
{
	struct fs_device *d = &fs->devs[fs->num_devs - 1];

	for (int j = 0; j < fs->num_devs - 1; j++) {
		struct fs_device *o = &fs->devs[j];

		if (o->devid == d->devid && !memcmp(o->sb.dev_item.fsid, d->sb.dev_item.fsid, BTRFS_FSID_SIZE))
			return fs_err(err, -EINVAL, "%s and %s are both devid %llu of the filesystem",
				      o->path, d->path, (unsigned long long)d->devid);
	}
	return 0;
}

static int add_devices(struct fs *fs, const char *const *paths, int n, int mirror, struct fs_error *err)
{
	for (int i = 0; i < n; i++) {
		int ret = open_device(fs, paths[i], mirror, err);
		struct fs_device *d = &fs->devs[fs->num_devs - 1];

		if (ret)
			return ret;
		if (i && !same_fs(&d->sb, &fs->devs[0].sb) &&
		    !(get_le64(&d->sb.flags) & BTRFS_SUPER_FLAG_SEEDING))
			return fs_err(err, -EINVAL, "%s is not part of the filesystem on %s", paths[i], paths[0]);
		ret = new_device(fs, err);
		if (ret)
			return ret;
	}
	return 0;
}

struct scan_ctx {
	struct fs *fs;
	int mirror;
	struct fs_error *err;
};

/* A stripe not yet on a device names this devid and dev uuid. */
static int wanted_by_stripe(const struct fs *fs, uint64_t devid, const uint8_t *uuid)
{
	for (int i = 0; i < fs->num_chunks; i++)
		for (int s = 0; s < fs->chunks[i].num_stripes; s++) {
			const struct fs_chunk_stripe *st = &fs->chunks[i].stripes[s];

			if (!st->dev && st->devid == devid && !memcmp(st->dev_uuid, uuid, BTRFS_UUID_SIZE))
				return 1;
		}
	return 0;
}

/* Opens a scanned device when it is one of the filesystem's not yet open, or a
 * seed device that a stripe names. */
static int scan_found(const char *path, const struct btrfs_super_block *sb, void *arg)
{
	struct scan_ctx *s = arg;
	struct fs *fs = s->fs;
	uint64_t devid = get_le64(&sb->dev_item.devid);
	int n = fs->num_devs;

	if (memcmp(sb->dev_item.fsid, fs->meta_uuid, BTRFS_FSID_SIZE) ?
	    !(get_le64(&sb->flags) & BTRFS_SUPER_FLAG_SEEDING) || !wanted_by_stripe(fs, devid, sb->dev_item.uuid) :
	    fs_device_by_id(fs, devid) != NULL)
		return 0;
	if (open_device(fs, path, s->mirror, s->err) || new_device(fs, s->err)) {
		if (fs->num_devs > n)
			drop_last_device(fs);   /* vanished or changed since: not ours after all */
		fs_err_clear(s->err);
	}
	return 0;
}

static void scan_devices(struct fs *fs, int mirror, struct fs_error *err)
{
	struct scan_ctx s = { fs, mirror, err };

	fs_scan_block_devices(scan_found, &s);
	resolve_stripes(fs);
}

/* Takes the newest superblock among the filesystem's devices (not the seeds). */
static void adopt_super(struct fs *fs)
{
	const struct btrfs_super_block *best = &fs->devs[0].sb;

	for (int i = 1; i < fs->num_devs; i++)
		if (same_fs(&fs->devs[i].sb, best) &&
		    get_le64(&fs->devs[i].sb.generation) > get_le64(&best->generation))
			best = &fs->devs[i].sb;
	fs->sb = *best;
	fs->nodesize = get_le32(&fs->sb.nodesize);
	fs->sectorsize = get_le32(&fs->sb.sectorsize);
	fs->stripesize = get_le32(&fs->sb.stripesize);
	fs->csum_type = get_le16(&fs->sb.csum_type);
	fs->csum_size = csum_size(fs->csum_type);
	fs->generation = get_le64(&fs->sb.generation);
	memcpy(fs->fsid, fs->sb.fsid, BTRFS_FSID_SIZE);
	fs->changing_fsid = !!(get_le64(&fs->sb.flags) & BTRFS_SUPER_FLAG_CHANGING_FSID);
	if (get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID)
		memcpy(fs->meta_uuid, fs->sb.metadata_uuid, BTRFS_FSID_SIZE);
	else if (fs->changing_fsid)
		memcpy(fs->meta_uuid, fs->sb.dev_item.fsid, BTRFS_FSID_SIZE);
	else
		memcpy(fs->meta_uuid, fs->sb.fsid, BTRFS_FSID_SIZE);
}

/* Given fewer devices than the superblock counts: the others are scanned for
 * before a superblock is chosen (one of them may be newer). */
static void find_devices(struct fs *fs, const struct fs_open_opts *o, struct fs_error *err)
{
	adopt_super(fs);
	if (o->scan && (uint64_t)fs->num_devs < get_le64(&fs->sb.num_devices)) {
		scan_devices(fs, o->super_mirror, err);
		adopt_super(fs);
	}
	resolve_stripes(fs);    /* counts the seeds given (no chunks yet) */
}

/* A filesystem whose fsid change was cut short is for the tool that finishes it. */
static int fsid_change_done(struct fs *fs, const struct fs_open_opts *o, struct fs_error *err)
{
	if (fs->changing_fsid && !o->fsid_change)
		return fs_err(err, -EINVAL, "filesystem UUID change in progress (btrfstune -u finishes it)");
	return 0;
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

int fs_missing_devids(const struct fs *fs, uint64_t *ids, int max)
{
	uint64_t last = 0;
	int n = 0;

	for (;;) {
		uint64_t next = UINT64_MAX;

		for (int i = 0; i < fs->num_chunks; i++)
			for (int s = 0; s < fs->chunks[i].num_stripes; s++) {
				const struct fs_chunk_stripe *st = &fs->chunks[i].stripes[s];

				if (!st->dev && st->devid > last && st->devid < next)
					next = st->devid;
			}
		if (next == UINT64_MAX)
			return n;
		if (n < max)
			ids[n] = next;
		n++;
		last = next;
	}
}

/* Lists the devids of missing devices that chunks use in err (code 0); returns
 * how many there are. */
static int note_missing(struct fs *fs, struct fs_error *err)
{
	uint64_t ids[16];
	int n = fs_missing_devids(fs, ids, 16);
	size_t len;

	err->code = 0;
	if (!n)
		return 0;
	len = (size_t)snprintf(err->msg, sizeof(err->msg), "missing devices: devid");
	for (int i = 0; i < n && i < 16 && len < sizeof(err->msg); i++)
		len += (size_t)snprintf(err->msg + len, sizeof(err->msg) - len, "%s %llu", i ? "," : "",
					(unsigned long long)ids[i]);
	return n;
}

static int load_chunks(struct fs *fs, const struct fs_open_opts *o, struct fs_error *err)
{
	int ret = fs_chunk_load_sys_array(fs, fs->sb.sys_chunk_array,
					  get_le32(&fs->sb.sys_chunk_array_size));

	if (!ret && o->add_chunks) {
		resolve_stripes(fs);    /* the scan reads the devices the system chunks are on */
		ret = o->add_chunks(fs, o->add_chunks_ctx);
	} else if (!ret && !o->skip_chunk_tree) {
		ret = fs_chunk_load_tree(fs);
	}
	if (ret) {
		*err = fs->err;
		return ret;
	}
	/* seed devices are known by the stripes that name them (the chunk tree
	 * itself is on the sprout's own devices) */
	if (o->scan && fs_missing_devids(fs, NULL, 0))
		scan_devices(fs, o->super_mirror, err);
	resolve_stripes(fs);
	/* only devices that hold chunks are needed */
	if (note_missing(fs, err) && !o->allow_degraded) {
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
	if (opts->writable || npaths < 1) {
		fs_err(err, -EINVAL, npaths < 1 ? "no device given" : "writable open is not supported yet");
		return NULL;
	}
	fs = calloc(1, sizeof(*fs));
	if (!fs) {
		fs_err(err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (add_devices(fs, paths, npaths, opts->super_mirror, err) ||
	    (find_devices(fs, opts, err), fsid_change_done(fs, opts, err)) || pick_roots(fs, opts, err) ||
	    (fs_cache_set_limit(fs, opts->cache_bytes), load_chunks(fs, opts, err)) ||
	    check_root_tree(fs, opts, err)) {
		fs_close(fs);
		return NULL;
	}
	return fs;
}

/* What a handle has to itself (a view shares the rest with its filesystem). */
static void free_own(struct fs *fs)
{
	fs_block_cache_free(fs);
	fs_inflater_free(&fs->inflater);
	free(fs->disk_buf);
	free(fs->align_buf);
	free(fs->spare_ext_buf);
}

struct fs *fs_view(const struct fs *fs, size_t cache_bytes)
{
	struct fs *v = malloc(sizeof(*v));

	if (!v)
		return NULL;
	*v = *fs;
	v->cache = NULL;
	v->bad_copy = NULL;
	v->w = NULL;
	memset(&v->inflater, 0, sizeof(v->inflater));
	v->disk_buf = v->align_buf = v->spare_ext_buf = NULL;
	v->disk_buf_cap = v->align_buf_cap = v->spare_ext_cap = 0;
	fs_err_clear(&v->err);
	fs_cache_set_limit(v, cache_bytes);
	return v;
}

void fs_view_free(struct fs *v)
{
	if (v)
		free_own(v);
	free(v);
}

void fs_close(struct fs *fs)
{
	if (!fs)
		return;
	free_own(fs);
	for (int i = 0; i < fs->num_chunks; i++)
		free(fs->chunks[i].stripes);
	free(fs->chunks);
	for (int i = 0; i < fs->num_devs; i++) {
		if (fs->devs[i].fd >= 0)
			close(fs->devs[i].fd);
		free(fs->devs[i].path);
	}
	free(fs->devs);
	free(fs);
}
