/* btrfs restore: copy files out of a damaged or unmountable filesystem.
 *
 * Reads only the chunk tree, the root tree and the fs trees (the extent, device
 * and csum trees may be damaged: data checksums are checked while the csum tree
 * reads, and a mismatch makes it take another copy). Damage loses only what it
 * covers: an unreadable subtree is reported with the files it held and the walk
 * goes on around it (fs/core/range.c); the exit status is 1 when anything was lost.
 * Everything written goes through applets/restore/out.c (no escape from OUTDIR).
 * Memory is bounded: directories are read in batches, file data in chunks. */
//config:config APPLET_RESTORE
//config:	bool "btrfs restore"
//config:	default y
//config:	help
//config:	  Copy files out of a damaged or unmountable filesystem into a directory.
//cmd:APPLET_RESTORE restore_main btrfs restore|Copy files out of a damaged or unmountable filesystem
#include "config.h"
#if CFG_APPLET_RESTORE
#include "out.h"
#include "fs/core/fs.h"
#include "fs/core/range.h"
#include "util/cli/cli.h"
#include "util/cli/regex.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/workq.h"
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

USAGE(usage) =
	"usage: btrfs restore [options] <device> [<device>...] <path>\n"
	"   or: btrfs restore [options] -l <device> [<device>...]\n\n"
	"    Copy files out of a damaged or unmountable filesystem into <path>\n\n"
	"    -D|--dry-run         list what would be restored, write nothing\n"
	"    -i|--ignore-errors   go on past files that cannot be written\n"
	"    -o|--overwrite       replace files that already exist\n"
	"    -m|--metadata        restore owners, modes and times\n"
	"    -S|--symlink         restore symbolic links\n"
	"    -s|--snapshots       restore snapshots too\n"
	"    -x|--xattr           restore extended attributes\n"
	"    --path-regex <regex> restore only the paths the extended regex matches; it sees\n"
	"                         every parent too, e.g. ^/(|home(|/user(|/.*)))$\n"
	"    -c                   --path-regex ignores case\n"
	"    -d                   start at the first directory found in the tree\n"
	"    -l|--list-roots      list the tree roots\n"
	"    -f <bytenr>          the fs tree root block to use\n"
	"    -r|--root <rootid>   restore this subvolume or snapshot\n"
	"    -t <bytenr>          the root tree block to use\n"
	"    -u|--super <mirror>  the superblock copy to use (0, 1, 2)\n"
	"    -v|--verbose         list what is restored\n\n"
	"    Compression: zlib, lzo, zstd\n";

#define DATA_CHUNK (1u << 20)           /* file data is streamed in pieces of this size */
#define MAX_COMPRESSED (8u << 20)       /* sanity bound (the kernel writes <= 128 KiB) */
#define MAX_EXTENT (1ull << 30)         /* sanity bound (the kernel writes <= 128 MiB) */
#define DIR_BATCH 64                    /* directory entries held per level */
#define MAX_DEPTH 4096
#define BAD_SEEN 64                     /* bad copies remembered, so each is reported once */

struct restore {
	struct fs *fs;
	struct rout out;
	struct rpath path;              /* of the entry being restored, as in the image */
	int snapshots, xattrs, metadata, symlinks, verbose;
	struct re *re;                  /* --path-regex */
	int verify;                     /* data checksums can be checked */
	int metadump;                   /* btrfs-image dump: no file data, inline data zeroed */
	int lost;                       /* something was not restored */
	uint8_t *buf, *zbuf, *rbuf;     /* data; compressed extent; its decompressed form */
	struct fs_inflater inflater;
	size_t zcap, rcap;
	struct dir_set {                /* every directory entered: (tree, inode) */
		uint64_t (*slot)[2];
		size_t cap, used;
	} dirs_seen;
	int depth;
	struct dir_entry **batch_bufs;  /* entry buffer of each depth, reused (batch_buf) */
	int nbatch_bufs;
	struct { uint64_t logical; int mirror; } bad_seen[BAD_SEEN];  /* bad copies reported */
	int bad_next;
	struct fs_root root_tree;
	uint64_t loss_block;            /* the last loss: its block and path */
	char *loss_path;
};

static const char *cur_path(const struct restore *r)
{
	return r->path.len ? r->path.s : "/";
}

/* Something from the image could not be restored: say what and where, go on. */
static void __attribute__((format(printf, 2, 3))) lose(struct restore *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rout_progress_clear(&r->out);
	msg_error("%s: %s", rout_shown(&r->out, cur_path(r)), msg);
	r->lost = 1;
}

static const char *errstr(const struct fs_error *e)
{
	static char buf[320];
	return fs_error_format(e, buf, sizeof(buf));
}

/* Every range visit context starts with the restore handle (struct visit_ctx), so
 * the shared callbacks below can reach it. */
struct visit_ctx {
	struct restore *r;
};

static int bad_seen(struct restore *r, uint64_t logical, int mirror)
{
	for (int i = 0; i < BAD_SEEN; i++)
		if (r->bad_seen[i].logical == logical && r->bad_seen[i].mirror == mirror)
			return 1;
	r->bad_seen[r->bad_next].logical = logical;
	r->bad_seen[r->bad_next].mirror = mirror;
	r->bad_next = (r->bad_next + 1) % BAD_SEEN;
	return 0;
}

/* A tree block with an unexpected generation is used anyway (as the reference does). */
static void report_stale(void *ctx, const struct fs_error *err)
{
	struct restore *r = ((struct visit_ctx *)ctx)->r;

	if (bad_seen(r, err->logical, -1))
		return;
	rout_progress_clear(&r->out);
	msg_warn("%s: %s; using the block anyway", rout_shown(&r->out, cur_path(r)), errstr(err));
}

/* A loss caused by an unreadable block: reported once per path and block. */
static int loss_seen(struct restore *r, const struct fs_error *err)
{
	const char *path = cur_path(r);

	if (err->logical && err->logical == r->loss_block && r->loss_path && !strcmp(r->loss_path, path))
		return 1;
	free(r->loss_path);
	r->loss_path = strdup(path);
	r->loss_block = err->logical;
	return 0;
}

/* An output error: stop unless -i. */
static int out_failed(struct restore *r)
{
	r->lost = 1;
	return r->out.ignore_errors ? 0 : -1;
}

/* What rout_dir returned: entered (0), skipped (1), refused because something else
 * stands in OUTDIR where the directory goes (-ENOTDIR, reported: the rest goes on, the
 * exit status is 1), or an output error. */
static int dir_result(struct restore *r, int ret)
{
	if (ret == -ENOTDIR)
		r->lost = 1;
	return ret >= 0 || ret == -ENOTDIR ? 0 : out_failed(r);
}

static void report_bad_copy(void *ctx, const struct fs_error *err)
{
	struct restore *r = ctx;

	if (bad_seen(r, err->logical, err->mirror))
		return;
	rout_progress_clear(&r->out);
	msg_warn("%s: %s", rout_shown(&r->out, cur_path(r)), errstr(err));
}

static void meta_from_inode(const struct btrfs_inode_item *ii, struct rout_meta *m)
{
	m->uid = get_le32(&ii->uid);
	m->gid = get_le32(&ii->gid);
	m->mode = get_le32(&ii->mode);
	m->atime.tv_sec = (time_t)get_le64(&ii->atime.sec);
	m->atime.tv_nsec = get_le32(&ii->atime.nsec) % 1000000000;
	m->mtime.tv_sec = (time_t)get_le64(&ii->mtime.sec);
	m->mtime.tv_nsec = get_le32(&ii->mtime.nsec) % 1000000000;
}

/* ---- reading data ------------------------------------------------------------ */

/* Reads data at logical: a copy whose checksums match, else (reported) the bytes as
 * they are. -1 when nothing could be read. */
static int read_data(struct restore *r, uint64_t logical, void *buf, size_t len, uint64_t file_off)
{
	int ret = fs_read_data(r->fs, logical, buf, len, r->verify);

	if (ret && r->verify) {
		struct fs_error first = r->fs->err;
		if (!fs_read_data(r->fs, logical, buf, len, 0)) {
			lose(r, "%s at file offset %llu: no good copy, restored as read", errstr(&first),
			     (unsigned long long)file_off);
			return 0;
		}
	}
	if (ret) {
		lose(r, "cannot read data at file offset %llu: %s", (unsigned long long)file_off,
		     errstr(&r->fs->err));
		return -1;
	}
	return 0;
}

static int grow(uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *p;

	if (want <= *cap)
		return 0;
	p = realloc(*buf, want);
	if (!p)
		return -1;
	*buf = p;
	*cap = want;
	return 0;
}

/* Decompresses in into out (room: out_len, zero-filled past what it gave). */
static int inflate_into(struct restore *r, int type, const void *in, size_t in_len, uint8_t *out,
			size_t out_len)
{
	size_t got = 0;
	int ret = fs_decompress(&r->inflater, type, in, in_len, out, out_len, &got, r->fs->sectorsize);

	if (!ret && got < out_len)
		memset(out + got, 0, out_len - got);
	return ret;
}

/* One file being restored. */
struct file_job {
	struct restore *r;
	int fd;
	uint64_t ino;
	uint64_t isize;                 /* UINT64_MAX when the inode item is lost */
	int failed;                     /* an output error happened */
};

/* Cuts [off, off + *len) to the file's size: 0 when nothing is left to write. */
static int clip(struct file_job *j, uint64_t off, uint64_t *len)
{
	if (off >= j->isize)
		return 0;
	if (*len > j->isize - off)
		*len = j->isize - off;
	if (off > (uint64_t)INT64_MAX - *len) {
		lose(j->r, "extent at impossible offset %llu skipped", (unsigned long long)off);
		return 0;
	}
	return 1;
}

static int write_out(struct file_job *j, const void *buf, uint64_t len, uint64_t off)
{
	if (!clip(j, off, &len))
		return 0;
	if (rout_write(&j->r->out, j->fd, buf, (size_t)len, off, cur_path(j->r))) {
		j->failed = 1;
		return -1;
	}
	return 0;
}

static void copy_inline(struct file_job *j, uint64_t off, const struct fs_file_extent *fe)
{
	struct restore *r = j->r;
	uint64_t len = fe->ram_bytes;

	if (fe->compression == FS_COMPRESS_NONE) {
		if (len > fe->inline_len)
			len = fe->inline_len;
		write_out(j, fe->inline_data, len, off);
		return;
	}
	/* newer kernels may compress a whole sector for a shorter inline file */
	size_t room = len > r->fs->sectorsize ? len : r->fs->sectorsize;
	if (len > MAX_COMPRESSED) {
		lose(r, "inline extent at offset %llu claims %llu bytes", (unsigned long long)off,
		     (unsigned long long)len);
		return;
	}
	int ret = grow(&r->rbuf, &r->rcap, room) ? -ENOMEM :
		  inflate_into(r, fe->compression, fe->inline_data, fe->inline_len, r->rbuf, room);
	if (ret) {
		lose(r, "cannot decompress inline extent at offset %llu: %s", (unsigned long long)off,
		     strerror(-ret));
		return;
	}
	write_out(j, r->rbuf, len, off);
}

static void copy_plain(struct file_job *j, uint64_t off, const struct fs_file_extent *fe)
{
	struct restore *r = j->r;
	uint64_t len = fe->num_bytes, done = 0;

	if (fe->offset >= fe->disk_num_bytes || fe->disk_num_bytes > MAX_EXTENT) {
		lose(r, "invalid extent at offset %llu (offset %llu, disk size %llu)",
		     (unsigned long long)off, (unsigned long long)fe->offset,
		     (unsigned long long)fe->disk_num_bytes);
		return;
	}
	if (len > fe->disk_num_bytes - fe->offset)
		len = fe->disk_num_bytes - fe->offset;
	if (j->isize != UINT64_MAX)
		len = off >= j->isize ? 0 : (len < j->isize - off ? len : j->isize - off);
	while (done < len && !j->failed) {
		size_t n = len - done > DATA_CHUNK ? DATA_CHUNK : (size_t)(len - done);
		uint8_t *buf = rout_buffer(&r->out, n);         /* read into the write queue */
		if (!buf)
			buf = r->buf;
		if (!read_data(r, fe->disk_bytenr + fe->offset + done, buf, n, off + done))
			write_out(j, buf, n, off + done);
		done += n;
		rout_progress(&r->out, cur_path(r));
	}
}

/* Decompresses the extent into out from each raw copy in turn (the first one checked
 * with checksums): a copy that passes its checksum may still fail to decompress. */
static int inflate_extent(struct file_job *j, uint64_t off, const struct fs_file_extent *fe, uint8_t *out)
{
	struct restore *r = j->r;
	size_t zlen = (size_t)fe->disk_num_bytes, rlen = (size_t)fe->ram_bytes;
	int copies = fs_num_copies(r->fs, fe->disk_bytenr), ret = -EIO;

	if (read_data(r, fe->disk_bytenr, r->zbuf, zlen, off))
		return -EIO;
	ret = inflate_into(r, fe->compression, r->zbuf, zlen, out, rlen);
	for (int m = 1; ret && ret != -ENOTSUP && ret != -ENOMEM && m <= copies; m++) {
		if (fs_read_logical(r->fs, fe->disk_bytenr, r->zbuf, zlen, m))
			continue;
		ret = inflate_into(r, fe->compression, r->zbuf, zlen, out, rlen);
	}
	if (ret)
		lose(r, "cannot decompress extent at file offset %llu: %s", (unsigned long long)off,
		     ret == -ENOTSUP ? "compression type not supported" : strerror(-ret));
	return ret;
}

static void copy_compressed(struct file_job *j, uint64_t off, const struct fs_file_extent *fe)
{
	struct restore *r = j->r;

	if (fe->disk_num_bytes > MAX_COMPRESSED || fe->ram_bytes > MAX_COMPRESSED || !fe->ram_bytes ||
	    fe->offset >= fe->ram_bytes) {
		lose(r, "invalid compressed extent at offset %llu (disk %llu, ram %llu, offset %llu)",
		     (unsigned long long)off, (unsigned long long)fe->disk_num_bytes,
		     (unsigned long long)fe->ram_bytes, (unsigned long long)fe->offset);
		return;
	}
	uint64_t len = fe->num_bytes;
	if (len > fe->ram_bytes - fe->offset)
		len = fe->ram_bytes - fe->offset;
	if (!clip(j, off, &len))
		return;
	/* a single copy (nothing else to try when it does not decompress) is read here,
	 * decompressed and written by the writer thread */
	uint8_t *z = fs_num_copies(r->fs, fe->disk_bytenr) == 1 ?
		     rout_buffer(&r->out, (size_t)fe->disk_num_bytes) : NULL;
	if (z) {
		if (!read_data(r, fe->disk_bytenr, z, (size_t)fe->disk_num_bytes, off))
			rout_write_compressed(&r->out, j->fd, fe->compression, z, (size_t)fe->disk_num_bytes,
					      (size_t)fe->ram_bytes, (size_t)fe->offset, (size_t)len, off);
		rout_progress(&r->out, cur_path(r));
		return;
	}
	/* else decompressed here, into the write queue when there is one */
	uint8_t *out = rout_buffer(&r->out, (size_t)fe->ram_bytes);
	if (grow(&r->zbuf, &r->zcap, (size_t)fe->disk_num_bytes) ||
	    (!out && grow(&r->rbuf, &r->rcap, (size_t)fe->ram_bytes))) {
		lose(r, "out of memory");
		return;
	}
	if (!out)
		out = r->rbuf;
	if (inflate_extent(j, off, fe, out))
		return;
	write_out(j, out + fe->offset, len, off);
	rout_progress(&r->out, cur_path(r));
}

static int extent_item(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct file_job *j = ctx;
	struct fs_file_extent fe;

	if (fs_file_extent(data, size, &fe)) {
		lose(j->r, "bad file extent item at offset %llu", (unsigned long long)key->offset);
		return 0;
	}
	if (fe.encryption || fe.other_encoding) {
		lose(j->r, "extent at offset %llu: encoding not supported", (unsigned long long)key->offset);
		return 0;
	}
	if (fe.type == BTRFS_FILE_EXTENT_INLINE)
		copy_inline(j, key->offset, &fe);
	else if (fe.type == BTRFS_FILE_EXTENT_REG && fe.disk_bytenr) {   /* 0: a hole */
		if (fe.compression == FS_COMPRESS_NONE)
			copy_plain(j, key->offset, &fe);
		else
			copy_compressed(j, key->offset, &fe);
	}
	/* prealloc reads as zeros: left as a hole */
	return j->failed ? -1 : 0;
}

static void describe_range(const struct fs_key *from, const struct fs_key *to, uint64_t objectid,
			   uint8_t type, char *buf, size_t size)
{
	uint64_t a = from->objectid == objectid && from->type == type ? from->offset : 0;

	if (to && to->objectid == objectid && to->type == type)
		snprintf(buf, size, "%llu to %llu", (unsigned long long)a, (unsigned long long)to->offset);
	else
		snprintf(buf, size, "%llu to the end", (unsigned long long)a);
}

static void extent_lost(void *ctx, const struct fs_key *from, const struct fs_key *to,
			const struct fs_error *err)
{
	struct file_job *j = ctx;
	char range[80];

	if (loss_seen(j->r, err))
		return;
	describe_range(from, to, j->ino, BTRFS_EXTENT_DATA_KEY, range, sizeof(range));
	lose(j->r, "file data from offset %s lost: %s", range, errstr(err));
}

/* ---- extended attributes ----------------------------------------------------- */

struct xattr_job {
	struct restore *r;
	int fd;
	uint64_t ino;
};

static int xattr_item(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct xattr_job *x = ctx;
	struct fs_dir_entry e;
	uint32_t pos = 0;
	int ret;
	char name[BTRFS_NAME_LEN_MAX + 1];

	(void)key;
	while ((ret = fs_dir_entry_next(data, size, &pos, &e)) == 1) {
		if (!e.name_len || e.name_len > BTRFS_NAME_LEN_MAX || memchr(e.name, 0, e.name_len)) {
			lose(x->r, "extended attribute with an invalid name skipped");
			continue;
		}
		memcpy(name, e.name, e.name_len);
		name[e.name_len] = 0;
		if (rout_xattr(&x->r->out, x->fd, name, e.data, e.data_len, cur_path(x->r)))
			x->r->lost = 1;
	}
	if (ret < 0)
		lose(x->r, "malformed extended attribute item");
	return 0;
}

static void xattr_lost(void *ctx, const struct fs_key *from, const struct fs_key *to,
		       const struct fs_error *err)
{
	struct xattr_job *x = ctx;

	(void)from, (void)to;
	if (!loss_seen(x->r, err))
		lose(x->r, "extended attributes lost: %s", errstr(err));
}

static void restore_xattrs(struct restore *r, const struct fs_root *root, uint64_t ino, int fd)
{
	static const struct fs_range_ops ops = { xattr_item, xattr_lost, 1, report_stale };
	struct xattr_job x = { r, fd, ino };
	struct fs_key lo = { ino, BTRFS_XATTR_ITEM_KEY, 0 }, hi = { ino, BTRFS_XATTR_ITEM_KEY, UINT64_MAX };

	if (!r->out.dry_run)
		fs_range_visit(r->fs, root, &lo, &hi, &ops, &x);
}

/* Owner, xattrs, then mode and times (chown would drop capabilities and set-id bits). */
static int finish_inode(struct restore *r, const struct fs_root *root, uint64_t ino, int fd,
			const struct btrfs_inode_item *ii)
{
	struct rout_meta m;
	int bad = 0;

	if (ii && r->metadata) {
		meta_from_inode(ii, &m);
		bad |= rout_owner_fd(&r->out, fd, &m, cur_path(r));
	}
	if (r->xattrs)
		restore_xattrs(r, root, ino, fd);
	if (ii && r->metadata)
		bad |= rout_mode_times_fd(&r->out, fd, &m, cur_path(r));
	return bad ? out_failed(r) : 0;
}

/* One item copied out by exact key, through the tolerant visit. */
struct item_copy {
	struct restore *r;
	uint8_t *out;
	uint32_t room, size;
	int found, lost;
	struct fs_error err;
};

static int copy_item(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct item_copy *c = ctx;

	(void)key;
	c->found = 1;
	c->size = size;
	memcpy(c->out, data, size < c->room ? size : c->room);
	return 1;
}

static void copy_lost(void *ctx, const struct fs_key *from, const struct fs_key *to,
		      const struct fs_error *err)
{
	struct item_copy *c = ctx;

	(void)from, (void)to;
	c->lost = 1;
	c->err = *err;
}

/* 0 with the item in out (*size: its full size), -ENOENT, or -EIO (r->fs->err says why). */
static int fetch_item(struct restore *r, const struct fs_root *root, const struct fs_key *key,
		      void *out, uint32_t room, uint32_t *size)
{
	static const struct fs_range_ops ops = { copy_item, copy_lost, 1, report_stale };
	struct item_copy c = { r, out, room, 0, 0, 0, { 0 } };

	fs_range_visit(r->fs, root, key, key, &ops, &c);
	*size = c.size;
	if (c.found)
		return 0;
	if (c.lost) {
		r->fs->err = c.err;
		return -EIO;
	}
	return -ENOENT;
}

static int get_inode(struct restore *r, const struct fs_root *root, uint64_t ino, struct btrfs_inode_item *ii)
{
	struct fs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	uint32_t size;
	int ret = fetch_item(r, root, &key, ii, sizeof(*ii), &size);

	if (!ret && size >= sizeof(*ii))
		return 0;
	if (ret == -EIO && loss_seen(r, &r->fs->err))
		return -1;
	lose(r, "inode %llu %s: size, owner, mode and times not restored", (unsigned long long)ino,
	     ret == -EIO ? errstr(&r->fs->err) : ret ? "item missing" : "item too short");
	return -1;
}

/* ---- files, symlinks, directories ------------------------------------------ */

static int restore_file(struct restore *r, const struct fs_root *root, uint64_t ino, int parent,
			const char *name)
{
	static const struct fs_range_ops ops = { extent_item, extent_lost, 1, report_stale };
	struct btrfs_inode_item ii;
	int have_inode = !get_inode(r, root, ino, &ii);
	struct file_job j = { r, -1, ino, have_inode ? get_le64(&ii.size) : UINT64_MAX, 0 };
	struct fs_key lo = { ino, BTRFS_EXTENT_DATA_KEY, 0 }, hi = { ino, BTRFS_EXTENT_DATA_KEY, UINT64_MAX };
	int ret;

	if (have_inode && j.isize > INT64_MAX) {
		lose(r, "inode %llu has an impossible size %llu, not set", (unsigned long long)ino,
		     (unsigned long long)j.isize);
		j.isize = UINT64_MAX;
	}
	ret = rout_file(&r->out, parent, name, cur_path(r), &j.fd);
	if (ret)
		return ret > 0 ? 0 : out_failed(r);
	if (r->verbose)
		printf("Restoring %s\n", rout_shown(&r->out, cur_path(r)));
	rout_progress(&r->out, cur_path(r));
	if (r->out.dry_run)
		return 0;
	if (!r->metadump)       /* a dump has no data: the file is left a hole of its size */
		fs_range_visit(r->fs, root, &lo, &hi, &ops, &j);
	if (!j.failed && j.isize != UINT64_MAX && rout_size(&r->out, j.fd, j.isize, cur_path(r)))
		j.failed = 1;
	ret = j.failed ? out_failed(r) : 0;
	if (!ret)
		ret = finish_inode(r, root, ino, j.fd, have_inode ? &ii : NULL);
	rout_close(&r->out, j.fd);
	/* what the writer thread failed to do (reported there): stop as for any output error */
	if (!ret && rout_late_errors(&r->out))
		ret = out_failed(r);
	return ret;
}

/* The target of symlink ino: the inline extent at offset 0. 0 or -1 (reported). */
static int read_link_target(struct restore *r, const struct fs_root *root, uint64_t ino, char *target)
{
	struct fs_key key = { ino, BTRFS_EXTENT_DATA_KEY, 0 };
	uint8_t item[FS_FILE_EXTENT_INLINE_START + PATH_MAX];
	struct fs_file_extent fe;
	uint32_t size;
	int ret = fetch_item(r, root, &key, item, sizeof(item), &size);

	if (ret) {
		lose(r, "symlink target unreadable: %s", ret == -ENOENT ? "no inline extent" : errstr(&r->fs->err));
		return -1;
	}
	if (size > sizeof(item) || fs_file_extent(item, size, &fe) || fe.type != BTRFS_FILE_EXTENT_INLINE ||
	    fe.compression != FS_COMPRESS_NONE || !fe.inline_len || fe.inline_len >= PATH_MAX ||
	    memchr(fe.inline_data, 0, fe.inline_len)) {
		if (!r->metadump)       /* a dump has the targets zeroed */
			lose(r, "symlink target is not a valid inline extent");
		return -1;
	}
	memcpy(target, fe.inline_data, fe.inline_len);
	target[fe.inline_len] = 0;
	return 0;
}

static int restore_symlink(struct restore *r, const struct fs_root *root, uint64_t ino, int parent,
			   const char *name)
{
	char target[PATH_MAX];
	struct btrfs_inode_item ii;
	struct rout_meta m;
	int ret;

	if (read_link_target(r, root, ino, target))
		return 0;
	ret = rout_symlink(&r->out, parent, name, target, cur_path(r));
	if (ret)
		return ret > 0 ? 0 : out_failed(r);
	if (r->verbose)
		printf("SYMLINK: '%s' => '%s'\n", rout_shown(&r->out, cur_path(r)), target);
	if (!r->metadata || get_inode(r, root, ino, &ii))
		return 0;
	meta_from_inode(&ii, &m);
	return rout_meta_link(&r->out, parent, name, &m, cur_path(r)) ? out_failed(r) : 0;
}

struct dir_entry {
	uint64_t index;
	struct fs_key loc;
	uint8_t type;
	uint16_t name_len;
	char name[BTRFS_NAME_LEN_MAX + 1];
};

struct dir_batch {
	struct restore *r;
	uint64_t ino;
	struct dir_entry *e;
	int n;
	uint64_t resume;                /* index to go on from */
	int more;
};

static int dir_item(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct dir_batch *b = ctx;
	struct fs_dir_entry e;
	uint32_t pos = 0;
	int ret = fs_dir_entry_next(data, size, &pos, &e);

	if (ret == 1 && e.name_len <= BTRFS_NAME_LEN_MAX) {
		struct dir_entry *d = &b->e[b->n++];
		d->index = key->offset;
		d->loc = e.location;
		d->type = e.type;
		d->name_len = e.name_len;
		memcpy(d->name, e.name, e.name_len);
		d->name[e.name_len] = 0;
	} else {
		lose(b->r, "malformed directory entry (index %llu) skipped", (unsigned long long)key->offset);
	}
	if (key->offset == UINT64_MAX)
		return 1;
	b->resume = key->offset + 1;
	if (b->n < DIR_BATCH)
		return 0;
	b->more = 1;
	return 1;
}

static void dir_lost(void *ctx, const struct fs_key *from, const struct fs_key *to,
		     const struct fs_error *err)
{
	struct dir_batch *b = ctx;
	char range[80];

	if (loss_seen(b->r, err))
		return;
	describe_range(from, to, b->ino, BTRFS_DIR_INDEX_KEY, range, sizeof(range));
	lose(b->r, "directory entries with index %s lost: %s", range, errstr(err));
}

static int restore_dir(struct restore *r, const struct fs_root *root, uint64_t ino, int dirfd);

/* Whether subvolume sub is linked at (tree, dir, name): its ROOT_REF in the root
 * tree says where it lives. A snapshot copies the entries of the subvolumes below
 * its source without linking them (the kernel shows them as empty directories).
 * When the root tree cannot tell, the entry is trusted. */
static int subvol_linked_here(struct restore *r, uint64_t tree, uint64_t dir, const struct dir_entry *d)
{
	struct fs_key key = { tree, BTRFS_ROOT_REF_KEY, d->loc.objectid };
	uint8_t item[sizeof(struct btrfs_root_ref) + BTRFS_NAME_LEN_MAX];
	struct fs_root_ref ref;
	uint32_t size;
	int ret = fetch_item(r, &r->root_tree, &key, item, sizeof(item), &size);

	if (ret == -ENOENT)
		return 0;
	if (ret || size > sizeof(item) || fs_root_ref(item, size, &ref))
		return 1;
	return ref.dirid == dir && ref.name_len == d->name_len && !memcmp(ref.name, d->name, d->name_len);
}

static int restore_subvol(struct restore *r, const struct fs_root *root, uint64_t dir,
			  const struct dir_entry *d, int parent)
{
	struct fs_root sub;
	int fd, ret;

	if (d->loc.objectid == root->objectid)
		return 0;                       /* a snapshot's entry for itself */
	ret = fs_root_lookup(r->fs, d->loc.objectid, &sub);
	if (ret) {
		lose(r, "subvolume %llu unreadable: %s", (unsigned long long)d->loc.objectid,
		     errstr(&r->fs->err));
		return 0;
	}
	/* the root item of a snapshot is keyed with its creation transid, a subvolume's with 0 */
	if (sub.offset && !r->snapshots) {
		rout_progress_clear(&r->out);
		printf("Skipping snapshot %s\n", d->name);
		return 0;
	}
	if (!subvol_linked_here(r, root->objectid, dir, d)) {
		/* what a mount shows: an empty directory */
		ret = rout_dir(&r->out, parent, d->name, cur_path(r), &fd);
		if (fd >= 0)
			close(fd);
		return dir_result(r, ret);
	}
	ret = rout_dir(&r->out, parent, d->name, cur_path(r), &fd);
	if (ret)
		return dir_result(r, ret);
	if (r->verbose)
		printf("Restoring %s\n", rout_shown(&r->out, cur_path(r)));
	ret = restore_dir(r, &sub, BTRFS_FIRST_FREE_OBJECTID, fd);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int restore_entry(struct restore *r, const struct fs_root *root, uint64_t dir,
			 const struct dir_entry *d, int dirfd)
{
	int fd, ret;

	if (r->re && !re_search(r->re, r->path.s))
		return 0;
	if (d->type == BTRFS_FT_DIR && d->loc.type == BTRFS_ROOT_ITEM_KEY)
		return restore_subvol(r, root, dir, d, dirfd);
	if (d->loc.type != BTRFS_INODE_ITEM_KEY || d->loc.objectid < BTRFS_FIRST_FREE_OBJECTID ||
	    d->loc.objectid > BTRFS_LAST_FREE_OBJECTID) {
		lose(r, "directory entry points to key (%llu %u %llu), skipped",
		     (unsigned long long)d->loc.objectid, d->loc.type, (unsigned long long)d->loc.offset);
		return 0;
	}
	switch (d->type) {
	case BTRFS_FT_REG_FILE:
		return restore_file(r, root, d->loc.objectid, dirfd, d->name);
	case BTRFS_FT_SYMLINK:
		return r->symlinks ? restore_symlink(r, root, d->loc.objectid, dirfd, d->name) : 0;
	case BTRFS_FT_DIR:
		ret = rout_dir(&r->out, dirfd, d->name, cur_path(r), &fd);
		if (ret)
			return dir_result(r, ret);
		if (r->verbose)
			printf("Restoring %s\n", rout_shown(&r->out, cur_path(r)));
		ret = restore_dir(r, root, d->loc.objectid, fd);
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return 0;       /* fifos, devices and sockets are not restored */
}

static int restore_batch(struct restore *r, const struct fs_root *root, struct dir_batch *b, int dirfd)
{
	for (int i = 0; i < b->n; i++) {
		const struct dir_entry *d = &b->e[i];
		const char *bad = rout_bad_name(d->name, d->name_len);
		size_t old;
		int ret;

		if (bad) {
			lose(r, "entry with index %llu refused: %s", (unsigned long long)d->index, bad);
			continue;
		}
		old = rpath_push(&r->path, d->name, d->name_len);
		if (old == (size_t)-1) {
			lose(r, "out of memory");
			return -1;
		}
		ret = restore_entry(r, root, b->ino, d, dirfd);
		rpath_pop(&r->path, old);
		if (ret)
			return ret;
	}
	return 0;
}

/* Adds (tree, ino) to the set; 1 when it was there already, -1 on ENOMEM. */
static int dir_set_add(struct dir_set *set, uint64_t tree, uint64_t ino)
{
	if (set->used * 2 >= set->cap) {
		struct dir_set bigger = { NULL, set->cap ? set->cap * 2 : 1024, 0 };

		bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
		if (!bigger.slot)
			return -1;
		for (size_t i = 0; i < set->cap; i++)
			if (set->slot[i][1])
				dir_set_add(&bigger, set->slot[i][0], set->slot[i][1]);
		free(set->slot);
		*set = bigger;
	}
	size_t i = (size_t)((tree * 0x9E3779B97F4A7C15ULL) ^ (ino * 0xC2B2AE3D27D4EB4FULL)) & (set->cap - 1);
	while (set->slot[i][1]) {
		if (set->slot[i][0] == tree && set->slot[i][1] == ino)
			return 1;
		i = (i + 1) & (set->cap - 1);
	}
	set->slot[i][0] = tree;
	set->slot[i][1] = ino;
	set->used++;
	return 0;
}

/* A directory has one parent: one reached a second time (a loop or a crafted hard
 * link) is not entered again, so the walk ends whatever the image holds. */
static int enter_dir(struct restore *r, uint64_t tree, uint64_t ino)
{
	int seen = dir_set_add(&r->dirs_seen, tree, ino);

	if (seen) {
		lose(r, seen > 0 ? "directory inode %llu was already restored elsewhere, not entered again"
				 : "out of memory for directory inode %llu", (unsigned long long)ino);
		return -1;
	}
	if (r->depth == MAX_DEPTH) {
		lose(r, "directories nested deeper than %d, not entered", MAX_DEPTH);
		return -1;
	}
	r->depth++;
	return 0;
}

/* The entry buffer of the directory just entered: one per depth, kept for the next
 * directory at that depth instead of an allocation per directory. */
static struct dir_entry *batch_buf(struct restore *r)
{
	int d = r->depth - 1;

	if (d >= r->nbatch_bufs) {
		struct dir_entry **p = realloc(r->batch_bufs, sizeof(*p) * (size_t)(d + 1));
		if (!p)
			return NULL;
		memset(p + r->nbatch_bufs, 0, sizeof(*p) * (size_t)(d + 1 - r->nbatch_bufs));
		r->batch_bufs = p;
		r->nbatch_bufs = d + 1;
	}
	if (!r->batch_bufs[d])
		r->batch_bufs[d] = malloc(sizeof(struct dir_entry) * DIR_BATCH);
	return r->batch_bufs[d];
}

static int restore_dir(struct restore *r, const struct fs_root *root, uint64_t ino, int dirfd)
{
	static const struct fs_range_ops ops = { dir_item, dir_lost, 1, report_stale };
	struct dir_batch b = { r, ino, NULL, 0, 0, 1 };
	struct btrfs_inode_item ii;
	int ret = 0;

	if (enter_dir(r, root->objectid, ino))
		return 0;
	b.e = batch_buf(r);
	if (!b.e) {
		lose(r, "out of memory");
		r->depth--;
		return -1;
	}
	while (b.more && !ret) {
		struct fs_key lo = { ino, BTRFS_DIR_INDEX_KEY, b.resume };
		struct fs_key hi = { ino, BTRFS_DIR_INDEX_KEY, UINT64_MAX };

		b.n = 0;
		b.more = 0;
		fs_range_visit(r->fs, root, &lo, &hi, &ops, &b);
		ret = restore_batch(r, root, &b, dirfd);
	}
	r->depth--;
	if (!ret && (r->metadata || r->xattrs) && !r->out.dry_run) {
		int have = !get_inode(r, root, ino, &ii);
		ret = finish_inode(r, root, ino, dirfd, have ? &ii : NULL);
	}
	return ret;
}

/* ---- opening, roots ------------------------------------------------------------ */

static const char *tree_name(uint64_t id)
{
	static const char *const names[] = {
		NULL, "ROOT_TREE", "EXTENT_TREE", "CHUNK_TREE", "DEV_TREE", "FS_TREE",
		"ROOT_TREE_DIR", "CSUM_TREE", "QUOTA_TREE", "UUID_TREE", "FREE_SPACE_TREE",
		"BLOCK_GROUP_TREE",
	};
	if (id < sizeof(names) / sizeof(names[0]))
		return names[id];
	switch (id) {
	case (uint64_t)BTRFS_TREE_LOG_OBJECTID: return "TREE_LOG";
	case (uint64_t)BTRFS_TREE_RELOC_OBJECTID: return "TREE_RELOC";
	case (uint64_t)BTRFS_DATA_RELOC_TREE_OBJECTID: return "DATA_RELOC_TREE";
	}
	return NULL;
}

static void print_tree_id(uint64_t id)
{
	const char *n = tree_name(id);

	if (n)
		fputs(n, stdout);
	else
		printf("%llu", (unsigned long long)id);
}

static int list_root_item(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct btrfs_root_item ri;

	(void)ctx;
	if (key->type != BTRFS_ROOT_ITEM_KEY || fs_root_item(data, size, &ri))
		return 0;
	printf(" tree key (");
	print_tree_id(key->objectid);
	printf(" ROOT_ITEM ");
	if (key->objectid == (uint64_t)BTRFS_TREE_RELOC_OBJECTID)
		print_tree_id(key->offset);
	else
		printf("%llu", (unsigned long long)key->offset);
	printf(") %llu level %d\n", (unsigned long long)get_le64(&ri.bytenr), ri.level);
	return 0;
}

static void root_tree_lost(void *ctx, const struct fs_key *from, const struct fs_key *to,
			   const struct fs_error *err)
{
	struct restore *r = ((struct visit_ctx *)ctx)->r;

	(void)from, (void)to;
	msg_error("part of the root tree is unreadable: %s", errstr(err));
	r->lost = 1;
}

static void list_roots(struct restore *r)
{
	static const struct fs_range_ops ops = { list_root_item, root_tree_lost, 1, report_stale };
	struct fs_key lo = { 0, 0, 0 }, hi = { UINT64_MAX, UINT8_MAX, UINT64_MAX };
	struct fs_root rt;

	struct visit_ctx ctx = { r };

	if (!fs_root_lookup(r->fs, BTRFS_ROOT_TREE_OBJECTID, &rt))
		fs_range_visit(r->fs, &rt, &lo, &hi, &ops, &ctx);
}

struct first_dir { struct restore *r; uint64_t ino; int found; };

static int first_dir_item(void *ctx, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct first_dir *f = ctx;

	(void)data, (void)size;
	if (key->type != BTRFS_DIR_INDEX_KEY)
		return 0;
	f->ino = key->objectid;
	f->found = 1;
	return 1;
}

static int find_first_dir(struct restore *r, const struct fs_root *root, uint64_t *ino)
{
	static const struct fs_range_ops ops = { first_dir_item, NULL, 1, report_stale };
	struct fs_key lo = { 0, 0, 0 }, hi = { UINT64_MAX, UINT8_MAX, UINT64_MAX };
	struct first_dir f = { r, 0, 0 };

	fs_range_visit(r->fs, root, &lo, &hi, &ops, &f);
	if (!f.found) {
		printf("Couldn't find a dir index item\n");
		return -1;
	}
	printf("Using objectid %llu for first dir\n", (unsigned long long)f.ino);
	*ino = f.ino;
	return 0;
}

/* The backup root slots of the superblock on path, newest first, without the one
 * the superblock itself uses. Returns how many. */
static int backup_roots_newest_first(const char *path, int *slots)
{
	struct btrfs_super_block sb;
	int n = 0, m;

	for (m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (!fs_super_read(path, m, &sb, NULL))
			break;
	if (m == BTRFS_SUPER_MIRRORS)
		return 0;
	for (int i = 0; i < BTRFS_NUM_BACKUP_ROOTS; i++) {
		uint64_t gen = get_le64(&sb.super_roots[i].tree_root_gen);
		int k = n;

		if (!get_le64(&sb.super_roots[i].tree_root) ||
		    get_le64(&sb.super_roots[i].tree_root) == get_le64(&sb.root))
			continue;
		while (k > 0 && get_le64(&sb.super_roots[slots[k - 1]].tree_root_gen) < gen) {
			slots[k] = slots[k - 1];
			k--;
		}
		slots[k] = i;
		n++;
	}
	return n;
}

/* Opens the filesystem, then makes sure tree `rootid` can be read; when the root
 * tree (or that tree's root) is unreadable, tries the superblock's backup roots,
 * newest first, saying which one it used. */
static struct fs *open_fs(const char **paths, int n, struct fs_open_opts *o, uint64_t rootid,
			  struct fs_root *root, int *stale)
{
	struct fs_error err;
	char buf[320];
	int slots[BTRFS_NUM_BACKUP_ROOTS + 1], nslots = 1;
	struct fs *fs = NULL;

	slots[0] = -1;
	if (!o->tree_root)
		nslots = backup_roots_newest_first(paths[0], slots + 1) + 1;
	for (int s = 0; s < nslots; s++) {
		o->backup_root = slots[s];
		fs = fs_open(paths, n, o, &err);
		if (!fs && err.code == -ENODEV && !o->allow_degraded) {
			char *why = cli_strstr(err.msg, " (a degraded");

			if (why)
				*why = 0;
			msg_warn("%s; restoring from the devices present", err.msg);
			o->allow_degraded = 1;
			s--;
			continue;
		}
		if (!fs) {
			if (s == 0)
				msg_error("cannot open the filesystem: %s", fs_error_format(&err, buf, sizeof(buf)));
			if (o->tree_root)
				return NULL;
			continue;
		}
		if (s == 0 && o->super_mirror < 0 && fs->devs[0].super_mirror > 0)
			msg_warn("primary superblock unreadable, using superblock copy %d",
				 fs->devs[0].super_mirror);
		if (!rootid)
			break;
		struct fs_block_expect exp = { 0, -1, 0, NULL };
		struct fs_block *b = NULL;
		if (!fs_root_lookup(fs, rootid, root)) {
			exp.generation = root->generation;
			exp.level = root->level;
			b = fs_block_read(fs, root->bytenr, &exp);
			if (!b && root->generation) {
				/* a generation mismatch alone does not make the tree unusable */
				struct fs_error first = fs->err;
				exp.generation = 0;
				b = fs_block_read(fs, root->bytenr, &exp);
				if (b) {
					msg_warn("tree %llu: %s; using it anyway", (unsigned long long)rootid,
						 errstr(&first));
					root->generation = 0;
				} else {
					fs->err = first;
				}
			}
		}
		if (b) {
			fs_block_put(fs, b);
			break;
		}
		msg_error("cannot read tree %llu: %s", (unsigned long long)rootid, errstr(&fs->err));
		fs_close(fs);
		fs = NULL;
		if (o->tree_root)
			return NULL;
	}
	if (fs && o->backup_root >= 0) {
		const struct btrfs_root_backup *b = &fs->sb.super_roots[o->backup_root];
		msg_warn("using backup root %d (tree root %llu, generation %llu of %llu): changes of the "
			 "newer transactions are lost", o->backup_root,
			 (unsigned long long)get_le64(&b->tree_root),
			 (unsigned long long)get_le64(&b->tree_root_gen),
			 (unsigned long long)fs->generation);
		*stale = 1;
	}
	if (!fs && nslots > 1)
		msg_error("no usable tree root (superblock and backup roots tried)");
	return fs;
}

/* Checksums are verified only when the csum tree reads (else every read would fail). */
static int csum_tree_usable(struct fs *fs)
{
	struct fs_root root;
	struct fs_block *b;
	struct fs_block_expect exp;

	if (fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &root))
		return 0;
	exp = (struct fs_block_expect){ root.generation, root.level, BTRFS_CSUM_TREE_OBJECTID, NULL };
	b = fs_block_read(fs, root.bytenr, &exp);
	if (!b)
		return 0;
	fs_block_put(fs, b);
	return 1;
}

/* Whether path is mounted: a block device by its device number, an image file
 * through the loop device backed by it. */
static int is_mounted(const char *path)
{
	char real[PATH_MAX], back[PATH_MAX + 16], file[300], mnt[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int mounted = 0;
	DIR *d;

	if (stat(path, &st))
		return 0;
	if (S_ISBLK(st.st_mode))
		return !btrfs_mount_of_device(path, mnt, sizeof(mnt));
	if (!S_ISREG(st.st_mode) || !realpath(path, real) || !(d = opendir("/sys/block")))
		return 0;
	while (!mounted && (de = readdir(d))) {
		FILE *f;

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(file, sizeof(file), "/sys/block/%s/loop/backing_file", de->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (fgets(back, sizeof(back), f)) {
			back[strcspn(back, "\n")] = 0;
			snprintf(file, sizeof(file), "/dev/%s", de->d_name);
			mounted = !strcmp(back, real) && !btrfs_mount_of_device(file, mnt, sizeof(mnt));
		}
		fclose(f);
	}
	closedir(d);
	return mounted;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		prlimit(0, RLIMIT_NOFILE, &rl, NULL); /* not setrlimit: see applets/receive.c */
	}
}

static void summary(struct restore *r)
{
	rout_progress_clear(&r->out);
	if (!r->out.progress && !r->verbose)
		return;
	fprintf(stderr, "%s%llu files, %llu directories, %llu symlinks, %s%s%s\n",
		r->out.dry_run ? "Would restore " : "Restored ",
		(unsigned long long)r->out.files, (unsigned long long)r->out.dirs,
		(unsigned long long)r->out.symlinks, pretty_size(r->out.bytes, UNITS_BINARY),
		r->out.skipped ? ", existing files skipped" : "",
		r->lost ? "; some data could not be restored (see the errors above)" : "");
}

struct restore_args {
	uint64_t tree_location, fs_location, root_objectid;
	int super_mirror, find_dir, list_roots;
	const char *regex;
	int regex_icase;
};

static int parse_args(int argc, char **argv, struct restore *r, struct restore_args *a)
{
	enum { OPT_PATH_REGEX = 256 };
	static const struct cli_option longopts[] = {
		{ "path-regex", required_argument, OPT_PATH_REGEX },
		{ "dry-run", no_argument, 'D' },
		{ "metadata", no_argument, 'm' },
		{ "symlink", no_argument, 'S' },
		{ "symlinks", no_argument, 'S' },
		{ "snapshots", no_argument, 's' },
		{ "xattr", no_argument, 'x' },
		{ "verbose", no_argument, 'v' },
		{ "ignore-errors", no_argument, 'i' },
		{ "overwrite", no_argument, 'o' },
		{ "super", required_argument, 'u' },
		{ "root", required_argument, 'r' },
		{ "list-roots", no_argument, 'l' },
		{ NULL, 0, 0 }
	};
	uint64_t v;
	int opt;

	while ((opt = cli_getopt(argc, argv, "sSxviot:u:dmf:r:lDc", longopts, usage)) != -1) {
		switch (opt) {
		case 's': r->snapshots = 1; break;
		case 'S': r->symlinks = 1; break;
		case 'x': r->xattrs = 1; break;
		case 'm': r->metadata = 1; break;
		case 'v': r->verbose++; break;
		case 'i': r->out.ignore_errors = 1; break;
		case 'o': r->out.overwrite = 1; break;
		case 'D': r->out.dry_run = 1; break;
		case 'd': a->find_dir = 1; break;
		case 'l': a->list_roots = 1; break;
		case 'c': a->regex_icase = 1; break;
		case OPT_PATH_REGEX: a->regex = optarg; break;
		case 't':
		case 'f':
		case 'r':
		case 'u':
			v = cli_arg_u64(optarg);
			if (opt == 't')
				a->tree_location = v;
			else if (opt == 'f')
				a->fs_location = v;
			else if (opt == 'r') {
				if (v != BTRFS_FS_TREE_OBJECTID &&
				    (v < BTRFS_FIRST_FREE_OBJECTID || v > BTRFS_LAST_FREE_OBJECTID)) {
					msg_error("objectid %llu is not a valid fs/file tree",
						  (unsigned long long)v);
					return -1;
				}
				a->root_objectid = v;
			} else {
				if (v >= BTRFS_SUPER_MIRRORS) {
					msg_error("super mirror %llu not valid", (unsigned long long)v);
					return -1;
				}
				a->super_mirror = (int)v;
			}
			break;
		}
	}
	cli_check_argc(argc, a->list_roots ? 1 : 2, -1, usage);
	if (a->fs_location && a->root_objectid) {
		msg_error("can't use -f and -r at the same time");
		return -1;
	}
	return 0;
}

static int run(struct restore *r, struct restore_args *a, int argc, char **argv)
{
	int ndev = argc - optind - (a->list_roots ? 0 : 1), outfd = -1;
	const char *paths[48];
	struct fs_open_opts o;
	struct fs_root root;
	uint64_t rootid = a->root_objectid ? a->root_objectid : BTRFS_FS_TREE_OBJECTID;
	uint64_t top = BTRFS_FIRST_FREE_OBJECTID;

	if (ndev > 48) {
		msg_error("too many devices");
		return 1;
	}
	for (int i = 0; i < ndev; i++) {
		paths[i] = argv[optind + i];
		if (is_mounted(paths[i])) {
			msg_error("%s is currently mounted, cannot continue", paths[i]);
			return 1;
		}
	}
	fs_open_opts_init(&o);
	o.super_mirror = a->super_mirror ? a->super_mirror : -1;
	o.tree_root = a->tree_location;
	o.cache_bytes = 16u << 20;
	o.scan = 1;
	r->fs = open_fs(paths, ndev, &o, a->list_roots || a->fs_location ? 0 : rootid, &root,
			&r->lost);
	if (!r->fs)
		return 1;
	fs_root_lookup(r->fs, BTRFS_ROOT_TREE_OBJECTID, &r->root_tree);
	r->fs->bad_copy = report_bad_copy;
	r->fs->bad_copy_ctx = r;
	if (a->list_roots) {
		list_roots(r);
		goto out;
	}
	if (a->fs_location) {
		memset(&root, 0, sizeof(root));
		root.objectid = BTRFS_FS_TREE_OBJECTID;
		root.bytenr = a->fs_location;
		root.level = -1;
	}
	r->out.outdir = argv[argc - 1];
	outfd = open(r->out.outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (outfd < 0) {
		msg_error("cannot open output directory '%s': %s", r->out.outdir, strerror(errno));
		r->lost = 1;
		goto out;
	}
	r->metadump = !!(get_le64(&r->fs->sb.flags) &
			 (BTRFS_SUPER_FLAG_METADUMP | BTRFS_SUPER_FLAG_METADUMP_V2));
	if (r->metadump)
		msg_warn("the image is a metadata dump (btrfs-image): file contents are not in it");
	r->verify = !r->metadump && csum_tree_usable(r->fs);
	if (!r->verify && !r->metadump)
		msg_warn("checksum tree unreadable: data is restored without checking checksums");
	if (a->find_dir && find_first_dir(r, &root, &top)) {
		r->lost = 1;
		goto out;
	}
	if (a->regex) {
		char msg[128];

		if (re_compile(&r->re, a->regex, a->regex_icase, msg, sizeof(msg))) {
			msg_error("regex compilation failed: %s", msg);
			r->lost = 1;
			goto out;
		}
	}
	if (r->out.dry_run)
		printf("This is a dry-run, no files are going to be restored\n");
	r->buf = malloc(DATA_CHUNK);
	if (!r->buf || rpath_push(&r->path, "", 0) == (size_t)-1) {
		msg_error("out of memory");
		r->lost = 1;
		goto out;
	}
	rpath_pop(&r->path, 0);
	raise_fd_limit();
	/* file data is written by a second thread while this one reads the next */
	if (!r->out.dry_run && workq_worthwhile())
		rout_writer_start(&r->out, r->fs->sectorsize);
	if (restore_dir(r, &root, top, outfd))
		r->lost = 1;
	if (rout_writer_stop(&r->out) || rout_late_errors(&r->out))
		r->lost = 1;
	summary(r);
out:
	re_free(r->re);
	if (outfd >= 0)
		close(outfd);
	fs_close(r->fs);
	free(r->buf);
	free(r->zbuf);
	free(r->rbuf);
	fs_inflater_free(&r->inflater);
	free(r->path.s);
	free(r->loss_path);
	free(r->dirs_seen.slot);
	for (int d = 0; d < r->nbatch_bufs; d++)
		free(r->batch_bufs[d]);
	free(r->batch_bufs);
	return r->lost ? 1 : 0;
}

int restore_main(int argc, char **argv)
{
	struct restore *r = calloc(1, sizeof(*r));
	struct restore_args a = { 0 };
	int ret;

	if (!r) {
		msg_error("out of memory");
		return 1;
	}
	if (parse_args(argc, argv, r, &a)) {
		free(r);
		return 1;
	}
	if (cli_globals.verbose > 0)
		r->verbose += cli_globals.verbose;
	r->out.verbose = r->verbose;
	r->out.progress = isatty(STDERR_FILENO);
	r->out.outdir = "";
	ret = run(r, &a, argc, argv);
	free(r);
	return ret;
}
#endif
