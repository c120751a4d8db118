//build:Oz
/* --rootdir: populating the new filesystem from a directory tree.
 *
 * The walk is depth first, entries of a directory in name order (so the result does
 * not depend on readdir order). Inode numbers are handed out in walk order from 257.
 * File data is streamed into data extents (holes skipped with SEEK_DATA/SEEK_HOLE);
 * files up to 2 KiB are stored inline in the fs tree, like the kernel's default
 * max_inline. Hard links are found by (st_dev, st_ino) and their link count is what
 * the tree holds. Entries are looked up relative to their directory's descriptor
 * (kept open for the directories on the path, up to DIR_FDS deep; deeper ones by
 * full path): a full path costs a lookup of every component, per call. Memory: file
 * data passes through a 1 MiB buffer, the fs tree items through an external sorter
 * (fs/mkfs/items.c), data extent and csum items to spools (mkfs.c); what stays in
 * memory grows only with hard-linked files (their inode items wait for the final
 * link count) and the names of the directories on the path being walked. */
#include "internal.h"
#include "fs/core/fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/sort.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define MAX_INLINE 2048
#define MAX_EXTENT (128ULL * 1024 * 1024)   /* BTRFS_MAX_EXTENT_SIZE */
#define IO_BUF MKFS_DATA_PIECE
#define COMPRESS_CHUNK (128 * 1024)                /* BTRFS_MAX_UNCOMPRESSED */
#define FILE_EXTENT_HDR 21                  /* btrfs_file_extent_item up to its type */
#define DIR_FDS 64

struct hardlink {
	dev_t dev;
	ino_t ino;
	int tree;                       /* the subvolume it is in (links do not cross) */
	uint64_t btrfs_ino;
	struct btrfs_inode_item ii;     /* added when all its links are known */
	uint32_t nlink;
};

/* What the estimate pass learnt of an entry, in walk order: the populate pass takes
 * it instead of asking again (a stat and an xattr list per entry, the greater part
 * of the system calls), as long as the names come in the same order. */
struct rootdir_seen {
	struct stat st;
	uint32_t name_hash;
	int has_xattrs;             /* or its list could not be read: ask again */
};
#define SEEN_MAX ((8u << 20) / sizeof(struct rootdir_seen))

struct walk {
	struct mkfs_ctx *c;
	char path[PATH_MAX];
	int dfd;                    /* the directory of the entries walked, or -1 */
	int depth;
	uint64_t next_ino;
	size_t seen_next;                   /* the next entry's in c->seen */
	const struct rootdir_seen *seen;    /* of the entry being added, or NULL */
	uint64_t file_size;                 /* of the file being copied: reads end there */
	struct hardlink *links;
	size_t nlinks, links_cap;
	uint8_t *buf;               /* IO_BUF bytes */
	uint8_t *cbuf;              /* COMPRESS_CHUNK bytes of compressed data */
	uint64_t dir_flags;         /* inode flags of the directory walked (its entries inherit) */
	struct fs_deflater deflater;
	/* the names of the directories on the path being walked, one arena used as a
	 * stack (no allocation per name); offs: where each name starts, in name order
	 * per directory */
	char *names;
	size_t names_used, names_cap;
	size_t *offs;
	size_t offs_used, offs_cap;
	uint8_t dents[32768];       /* getdents64 records */
};

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static inline int name_less(const char *arena, size_t a, size_t b)
{
	return strcmp(arena + a, arena + b) < 0;
}

SORT_DEFINE(sort_names, size_t, const char *, name_less)

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 1024;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(q = realloc(*p, n * elem)))
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* One record of the getdents64 system call (struct linux_dirent64). */
struct dent64 {
	uint64_t ino;
	int64_t off;
	uint16_t reclen;
	uint8_t type;
	char name[];
};
#define DENT_HDR offsetof(struct dent64, name)

/* The entry whose path is w->path, for the *at system calls: relative to the
 * directory's descriptor when it is kept, else the full path. */
static int at_fd(const struct walk *w) { return w->dfd >= 0 ? w->dfd : AT_FDCWD; }

static const char *at_name(const struct walk *w)
{
	return w->dfd >= 0 ? strrchr(w->path, '/') + 1 : w->path;
}

/* Opens the directory at w->path: the --rootdir argument may be a symlink, an entry
 * below it not (it was a directory when looked at: never follow one that replaced
 * it). No O_CLOEXEC: nothing is executed, and musl adds an fcntl call per open for
 * it. */
static int open_dir(struct walk *w)
{
	int fd = openat(at_fd(w), at_name(w), O_RDONLY | O_DIRECTORY | (w->depth ? O_NOFOLLOW : 0));

	if (fd < 0)
		return mkfs_fail(w->c, "cannot open directory %s: %s", w->path, strerror(errno));
	return fd;
}

/* Makes fd (the directory at w->path) the one its entries are looked up in; returns
 * the previous one for leave_dir. Beyond DIR_FDS levels fd is closed and the
 * entries below go by full path. */
static int enter_dir(struct walk *w, int fd)
{
	int prev = w->dfd;

	if (++w->depth > DIR_FDS) {
		close(fd);
		fd = -1;
	}
	w->dfd = fd;
	return prev;
}

static void leave_dir(struct walk *w, int prev)
{
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = prev;
	w->depth--;
}

/* Pushes the names in the directory fd (without . and ..) onto w->names, sorted;
 * they are w->offs[*first ...] and stay until pop_names. Returns the count or -1. */
static long read_names(struct walk *w, int fd, size_t *first)
{
	const char *dir = w->path;
	long got;

	*first = w->offs_used;
	while ((got = syscall(SYS_getdents64, fd, w->dents, sizeof(w->dents))) > 0) {
		for (long pos = 0; pos < got; ) {
			const struct dent64 *d = (const struct dent64 *)(w->dents + pos);
			size_t room, len;

			if ((size_t)(got - pos) <= DENT_HDR || d->reclen <= DENT_HDR || d->reclen > got - pos)
				return mkfs_fail(w->c, "cannot read directory %s: bad record", dir);
			pos += d->reclen;
			room = d->reclen - DENT_HDR;
			len = strnlen(d->name, room);
			if (len == room || (d->name[0] == '.' && (len == 1 || (len == 2 && d->name[1] == '.'))))
				continue;
			if (grow((void **)&w->names, &w->names_cap, w->names_used + len + 1, 1) ||
			    grow((void **)&w->offs, &w->offs_cap, w->offs_used + 1, sizeof(*w->offs)))
				return mkfs_fail(w->c, "out of memory");
			w->offs[w->offs_used++] = w->names_used;
			memcpy(w->names + w->names_used, d->name, len + 1);
			w->names_used += len + 1;
		}
	}
	if (got < 0)
		return mkfs_fail(w->c, "cannot read directory %s: %s", dir, strerror(errno));
	sort_names(w->names, w->offs + *first, w->offs_used - *first);
	return (long)(w->offs_used - *first);
}

/* Name i of the names pushed (valid until names are pushed again). */
static const char *name_at(const struct walk *w, size_t i)
{
	return w->names + w->offs[i];
}

/* Drops the names of a directory, pushed from first on. */
static void pop_names(struct walk *w, size_t first)
{
	if (first < w->offs_used)
		w->names_used = w->offs[first];
	w->offs_used = first;
}

/* Appends "/name" to the path; returns the old length or -1 when too long. */
static int path_push(struct walk *w, const char *name)
{
	size_t len = strlen(w->path);

	if (len + 1 + strlen(name) >= sizeof(w->path))
		return mkfs_fail(w->c, "path too long: %s/%s", w->path, name);
	w->path[len] = '/';
	strcpy(w->path + len + 1, name);
	return (int)len;
}

/* The image being written may sit inside the source directory: never copy it. */
static int is_target(const struct mkfs_ctx *c, const struct stat *st)
{
	for (int i = 0; i < c->cfg->nskip; i++)
		if (c->cfg->skip[i].dev == st->st_dev && c->cfg->skip[i].ino == st->st_ino)
			return 1;
	return 0;
}

/* The --subvol entry for a directory, or NULL. */
static const struct mkfs_subvol_spec *subvol_spec(const struct mkfs_ctx *c, const struct stat *st)
{
	for (int i = 0; S_ISDIR(st->st_mode) && i < c->cfg->nsubvols; i++)
		if (c->cfg->subvols[i].id.dev == st->st_dev && c->cfg->subvols[i].id.ino == st->st_ino)
			return &c->cfg->subvols[i];
	return NULL;
}

/* --inode-flags of a file or directory (nodatacow implies nodatasum for files). */
static uint64_t inode_flags(const struct mkfs_ctx *c, const struct stat *st)
{
	for (int i = 0; i < c->cfg->ninode_flags; i++) {
		uint64_t f = c->cfg->inode_flags[i].flags;

		if (c->cfg->inode_flags[i].id.dev != st->st_dev || c->cfg->inode_flags[i].id.ino != st->st_ino)
			continue;
		if ((f & BTRFS_INODE_NODATACOW) && S_ISREG(st->st_mode))
			f |= BTRFS_INODE_NODATASUM;
		return f;
	}
	return 0;
}

/* The flags of an entry of the directory walked: its own, and nodatacow inherited from
 * the directory as the kernel gives it to what is created there (a subvolume's top
 * directory inherits nothing). */
static uint64_t entry_flags(const struct walk *w, const struct stat *st)
{
	uint64_t f = inode_flags(w->c, st);

	if (w->dir_flags & BTRFS_INODE_NODATACOW)
		f |= BTRFS_INODE_NODATACOW | (S_ISREG(st->st_mode) ? BTRFS_INODE_NODATASUM : 0);
	return f;
}

/* The xattrs of the entry at w->path: through fd when it is open (no lookup), else
 * by full path (the system calls have no *at form before Linux 6.13). */
static ssize_t xattr_list(const struct walk *w, int fd, char *names, size_t len)
{
	return fd >= 0 ? flistxattr(fd, names, len) : llistxattr(w->path, names, len);
}

static ssize_t xattr_get(const struct walk *w, int fd, const char *name, void *val, size_t len)
{
	return fd >= 0 ? fgetxattr(fd, name, val, len) : lgetxattr(w->path, name, val, len);
}

/* The names of the xattrs: *names (malloc'ed, NULL when there are none or the
 * source filesystem has no xattrs) and their bytes *len. 0, or -1 on no memory. */
static int xattr_names(const struct walk *w, int fd, char **names, ssize_t *len)
{
	*names = NULL;
	*len = xattr_list(w, fd, NULL, 0);
	if (*len <= 0)
		return 0;
	if (!(*names = malloc((size_t)*len)))
		return -1;
	*len = xattr_list(w, fd, *names, (size_t)*len);
	return 0;
}

/* ---- estimate ---- */

/* Bytes of the names and values of the xattrs of the entry at w->path; *has: it
 * may have some. */
static uint64_t xattr_bytes(const struct walk *w, int *has)
{
	ssize_t len;
	char *names;
	uint64_t total = 0;

	xattr_names(w, -1, &names, &len);       /* no memory: an estimate without them */
	*has = len != 0;
	for (char *n = names; names && len > 0 && n < names + len; n += strlen(n) + 1) {
		ssize_t vl = xattr_get(w, -1, n, NULL, 0);
		total += 30 + 25 + strlen(n) + (vl > 0 ? (uint64_t)vl : 0);
	}
	free(names);
	return total;
}

/* Keeps what the estimate saw of the entry name (up to SEEN_MAX entries). */
static void remember_seen(struct mkfs_ctx *c, const char *name, const struct stat *st, int has_xattrs)
{
	if (c->nseen == SEEN_MAX ||
	    grow((void **)&c->seen, &c->seen_cap, c->nseen + 1, sizeof(*c->seen)))
		return;
	c->seen[c->nseen++] = (struct rootdir_seen){ *st, btrfs_name_hash(name, strlen(name)), has_xattrs };
}

static int estimate_dir(struct walk *w, struct rootdir_estimate *est)
{
	struct mkfs_ctx *c = w->c;
	size_t first;
	int fd = open_dir(w), prev;
	long n = fd < 0 ? -1 : read_names(w, fd, &first);
	int ret = 0;

	if (fd < 0)
		return -1;
	prev = enter_dir(w, fd);
	for (long i = 0; n >= 0 && i < n && !ret; i++) {
		struct stat st;
		const char *name = name_at(w, first + (size_t)i);
		size_t nl = strlen(name);
		int len = path_push(w, name), has_xattrs;

		if (len < 0) {
			ret = -1;
			break;
		}
		if (fstatat(at_fd(w), at_name(w), &st, AT_SYMLINK_NOFOLLOW)) {
			ret = mkfs_fail(c, "cannot stat %s: %s", w->path, strerror(errno));
		} else if (is_target(c, &st)) {
			remember_seen(c, name, &st, 0);
		} else {
			/* inode, ref, two dir entries, xattrs */
			est->meta_bytes += 160 + 2 * 25 + 12 + 2 * (30 + 25) + 3 * nl +
					   xattr_bytes(w, &has_xattrs);
			remember_seen(c, name, &st, has_xattrs);
			if (subvol_spec(c, &st))    /* its own tree, root item and refs */
				est->meta_bytes += 2 * c->cfg->nodesize + 1024;
			if (S_ISDIR(st.st_mode)) {
				ret = estimate_dir(w, est);
			} else if (S_ISREG(st.st_mode) && st.st_size > MAX_INLINE) {
				uint64_t d = round_up((uint64_t)st.st_size, c->cfg->sectorsize);
				uint64_t extents = d / MAX_EXTENT + 1;
				est->data_bytes += d;
				est->meta_bytes += extents * 2 * (53 + 25) +
					d / c->cfg->sectorsize * csum_size(c->cfg->csum_type);
			} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
				est->meta_bytes += (uint64_t)st.st_size + FILE_EXTENT_HDR + 25;
			}
		}
		w->path[len] = 0;
	}
	leave_dir(w, prev);
	if (n < 0)
		return -1;
	pop_names(w, first);
	return ret;
}

int rootdir_estimate(struct mkfs_ctx *c, const char *dir, struct rootdir_estimate *est)
{
	struct walk w = { .c = c, .dfd = -1 };
	int ret;

	if (strlen(dir) >= sizeof(w.path))
		return mkfs_fail(c, "path too long: %s", dir);
	strcpy(w.path, dir);
	ret = estimate_dir(&w, est);
	free(w.names);
	free(w.offs);
	return ret;
}

/* ---- populate ---- */

static uint8_t file_type(mode_t m)
{
	if (S_ISREG(m)) return BTRFS_FT_REG_FILE;
	if (S_ISDIR(m)) return BTRFS_FT_DIR;
	if (S_ISLNK(m)) return BTRFS_FT_SYMLINK;
	if (S_ISCHR(m)) return BTRFS_FT_CHRDEV;
	if (S_ISBLK(m)) return BTRFS_FT_BLKDEV;
	if (S_ISFIFO(m)) return BTRFS_FT_FIFO;
	if (S_ISSOCK(m)) return BTRFS_FT_SOCK;
	return BTRFS_FT_UNKNOWN;
}

/* DIR_ITEM (by name hash) and DIR_INDEX (by index) of name in dir, pointing at an
 * inode (INODE_ITEM key) or a subvolume (ROOT_ITEM key). */
static int add_dir_items(struct mkfs_ctx *c, uint64_t dir, uint64_t index, const char *name,
			 uint64_t objectid, uint8_t key_type, uint8_t type)
{
	size_t len = strlen(name);
	uint8_t buf[sizeof(struct btrfs_dir_item) + BTRFS_NAME_LEN_MAX];
	struct btrfs_dir_item *di = (struct btrfs_dir_item *)buf;

	memset(di, 0, sizeof(*di));
	put_le64(&di->location.objectid, objectid);
	di->location.type = key_type;
	put_le64(&di->transid, MKFS_GENERATION);
	put_le16(&di->name_len, (uint16_t)len);
	di->type = type;
	memcpy(buf + sizeof(*di), name, len);
	if (mkfs_fs_add(c, dir, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len), buf,
			(uint32_t)(sizeof(*di) + len)) ||
	    mkfs_fs_add(c, dir, BTRFS_DIR_INDEX_KEY, index, buf, (uint32_t)(sizeof(*di) + len)))
		return -1;
	return 0;
}

/* The directory entries of inode ino and its INODE_REF. */
static int add_dir_entry(struct mkfs_ctx *c, uint64_t dir, uint64_t index, const char *name,
			 uint64_t ino, uint8_t type)
{
	if (add_dir_items(c, dir, index, name, ino, BTRFS_INODE_ITEM_KEY, type))
		return -1;
	return mkfs_add_inode_ref(c, ino, dir, index, name, strlen(name));
}

static uint32_t leaf_room(const struct mkfs_ctx *c)
{
	return c->cfg->nodesize - (uint32_t)sizeof(struct btrfs_header) - (uint32_t)sizeof(struct btrfs_item);
}

static void skipped(struct mkfs_ctx *c, const char *fmt, const char *path)
{
	if (!c->res->warnings++)
		snprintf(c->res->warn_msg, sizeof(c->res->warn_msg), fmt, path);
}

/* The xattrs of the entry at w->path (open as fd, or -1) as items of inode ino. */
static int add_xattrs(struct walk *w, uint64_t ino, int fd)
{
	struct mkfs_ctx *c = w->c;
	ssize_t len;
	char *names, *val = NULL;
	int ret = 0;

	if (w->seen && !w->seen->has_xattrs)
		return 0;
	if (xattr_names(w, fd, &names, &len))
		return mkfs_fail(c, "out of memory");
	for (char *n = names; len > 0 && n < names + len && !ret; n += strlen(n) + 1) {
		size_t nl = strlen(n);
		ssize_t vl = xattr_get(w, fd, n, NULL, 0);
		struct btrfs_dir_item *di;
		uint8_t *item;

		if (vl < 0)
			continue;
		if (sizeof(*di) + nl + (size_t)vl > leaf_room(c) || nl > BTRFS_NAME_LEN_MAX) {
			skipped(c, "xattr too large for a tree node skipped on %.180s", w->path);
			continue;
		}
		free(val);
		val = malloc(sizeof(*di) + nl + (size_t)vl + 1);
		if (!val) {
			ret = mkfs_fail(c, "out of memory");
			break;
		}
		item = (uint8_t *)val;
		di = (struct btrfs_dir_item *)item;
		memset(di, 0, sizeof(*di));
		vl = xattr_get(w, fd, n, item + sizeof(*di) + nl, (size_t)vl);
		if (vl < 0)
			continue;
		put_le64(&di->transid, MKFS_GENERATION);
		put_le16(&di->data_len, (uint16_t)vl);
		put_le16(&di->name_len, (uint16_t)nl);
		di->type = BTRFS_FT_XATTR;
		memcpy(item + sizeof(*di), n, nl);
		ret = mkfs_fs_add(c, ino, BTRFS_XATTR_ITEM_KEY, btrfs_name_hash(n, nl), item,
				  (uint32_t)(sizeof(*di) + nl + (size_t)vl));
	}
	free(val);
	free(names);
	return ret;
}

/* A file extent item: inline (data follows) or regular (disk_bytenr 0: a hole). */
static int add_inline(struct mkfs_ctx *c, uint64_t ino, const void *data, uint32_t len)
{
	uint8_t buf[FILE_EXTENT_HDR + PATH_MAX];

	if (len > PATH_MAX)
		return mkfs_fail(c, "inline extent too large");
	memset(buf, 0, FILE_EXTENT_HDR);
	put_le64(buf, MKFS_GENERATION);          /* generation */
	put_le64(buf + 8, len);                  /* ram_bytes */
	buf[20] = BTRFS_FILE_EXTENT_INLINE;
	memcpy(buf + FILE_EXTENT_HDR, data, len);
	return mkfs_fs_add(c, ino, BTRFS_EXTENT_DATA_KEY, 0, buf, FILE_EXTENT_HDR + len);
}

/* A regular file extent of len bytes at file offset off: stored at disk (disk_len
 * bytes, compressed with `compression` when not 0), or a hole when disk is 0. */
static int add_regular(struct mkfs_ctx *c, uint64_t ino, uint64_t off, uint64_t disk,
		       uint64_t disk_len, uint64_t len, uint8_t compression)
{
	struct btrfs_file_extent_item fe;

	memset(&fe, 0, sizeof(fe));
	put_le64(&fe.generation, MKFS_GENERATION);
	put_le64(&fe.ram_bytes, len);
	fe.compression = compression;
	fe.type = BTRFS_FILE_EXTENT_REG;
	put_le64(&fe.disk_bytenr, disk);
	put_le64(&fe.disk_num_bytes, disk ? disk_len : 0);
	put_le64(&fe.num_bytes, len);
	if (mkfs_fs_add(c, ino, BTRFS_EXTENT_DATA_KEY, off, &fe, sizeof(fe)))
		return -1;
	return disk ? mkfs_data_extent(c, ino, off, disk, disk_len) : 0;
}

static int add_hole(struct mkfs_ctx *c, uint64_t ino, uint64_t off, uint64_t len)
{
	return add_regular(c, ino, off, 0, 0, len, 0);
}

/* Reads len bytes at off of the file being copied: zeros past its size (not asked
 * for: a read that finds the end costs a system call) and past the end of a file
 * that shrank. */
static int read_full(const struct walk *w, int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t want = off >= w->file_size ? 0 : w->file_size - off < len ? (size_t)(w->file_size - off) : len;

	memset(buf + want, 0, len - want);
	while (want) {
		ssize_t n = pread(fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n) {
			memset(buf, 0, want);
			return 0;
		}
		buf += n;
		want -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* --compress: [*start, end) in pieces of 128 KiB, the largest compressed extent the
 * kernel makes. Like the kernel without compress-force, a piece that does not shrink
 * by a sector ends compression for the file: returns 1 with *start where the rest
 * goes uncompressed. */
static int copy_compressed(struct walk *w, int fd, uint64_t ino, uint64_t *start, uint64_t end,
			   uint64_t *nbytes)
{
	struct mkfs_ctx *c = w->c;
	uint64_t ss = c->cfg->sectorsize;

	while (*start < end) {
		size_t n = end - *start < COMPRESS_CHUNK ? (size_t)(end - *start) : COMPRESS_CHUNK, clen;
		uint64_t at, dlen;
		int ret;

		if (read_full(w, fd, w->buf, n, *start))
			return mkfs_fail(c, "cannot read %s: %s", w->path, strerror(errno));
		ret = fs_compress(&w->deflater, c->cfg->compress, w->buf, n, w->cbuf, COMPRESS_CHUNK, &clen,
				  c->cfg->sectorsize);
		if (ret == -E2BIG || (!ret && round_up(clen, ss) >= n))
			return 1;
		if (ret)
			return mkfs_fail(c, "cannot compress %s: %s", w->path, strerror(-ret));
		dlen = round_up(clen, ss);
		memset(w->cbuf + clen, 0, dlen - clen);
		if (mkfs_data_alloc_exact(c, dlen, &at) || mkfs_data_write(c, at, w->cbuf, dlen) ||
		    add_regular(c, ino, *start, at, dlen, n, (uint8_t)c->cfg->compress))
			return -1;
		*nbytes += n;
		*start += n;
	}
	return 0;
}

/* Data of [start, end) of the file as extents. */
static int copy_range(struct walk *w, int fd, uint64_t ino, uint64_t start, uint64_t end,
		      uint64_t *nbytes)
{
	struct mkfs_ctx *c = w->c;

	while (start < end) {
		uint64_t at, len;
		if (mkfs_data_alloc(c, end - start < MAX_EXTENT ? end - start : MAX_EXTENT, &at, &len))
			return -1;
		for (uint64_t done = 0; done < len; ) {
			size_t n = len - done < IO_BUF ? (size_t)(len - done) : IO_BUF;
			uint8_t *buf = mkfs_data_space(c, w->buf, n);

			if (read_full(w, fd, buf, n, start + done))
				return mkfs_fail(c, "cannot read %s: %s", w->path, strerror(errno));
			if (mkfs_data_put(c, at + done, buf, n))
				return -1;
			done += n;
		}
		if (add_regular(c, ino, start, at, len, len, 0))
			return -1;
		*nbytes += len;
		start += len;
	}
	return 0;
}

/* File contents: inline when small, else extents over the data ranges; without the
 * no-holes feature the gaps get explicit hole extents. Its xattrs as well (read
 * through the open file). */
static int add_file_data(struct walk *w, const struct stat *st, uint64_t ino, uint64_t flags, uint64_t *nbytes)
{
	struct mkfs_ctx *c = w->c;
	uint64_t size = (uint64_t)st->st_size, ss = c->cfg->sectorsize, end = round_up(size, ss);
	uint64_t pos = 0, hole_from = 0;
	int holes = !(c->cfg->incompat & BTRFS_FEATURE_INCOMPAT_NO_HOLES);
	int compress;
	/* as many bytes in blocks as in the file: no holes to look for (two syscalls
	 * saved; blocks preallocated past the end could hide a hole, copied as zeros) */
	int dense = (uint64_t)st->st_blocks * 512 >= size;
	int fd, ret = 0;

	*nbytes = 0;
	w->file_size = size;
	/* nodatacow and nodatasum files: no checksums, no compression (as the kernel) */
	c->nodatasum = flags != 0;
	compress = c->cfg->compress && !c->nodatasum;
	if (!size)
		return add_xattrs(w, ino, -1);
	/* no O_CLOEXEC: nothing is executed, and musl adds an fcntl call per open for it */
	fd = openat(at_fd(w), at_name(w), O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return mkfs_fail(c, "cannot open %s: %s", w->path, strerror(errno));
	if (add_xattrs(w, ino, fd)) {
		close(fd);
		return -1;
	}
	if (size <= MAX_INLINE && size < ss) {
		if (read_full(w, fd, w->buf, (size_t)size, 0))
			ret = mkfs_fail(c, "cannot read %s: %s", w->path, strerror(errno));
		else
			ret = add_inline(c, ino, w->buf, (uint32_t)size);
		*nbytes = size;
		close(fd);
		return ret;
	}
	while (!ret && pos < end) {
		off_t d = (off_t)pos, h = (off_t)end;  /* dense, or no SEEK_DATA: all data */
		uint64_t ds, de;

		if (!dense && (d = lseek(fd, (off_t)pos, SEEK_DATA)) < 0) {
			if (errno == ENXIO)
				break;               /* only a hole remains */
			d = (off_t)pos;
		} else if (!dense && (h = lseek(fd, d, SEEK_HOLE)) < 0) {
			h = (off_t)end;
		}
		ds = (uint64_t)d / ss * ss;
		de = round_up((uint64_t)h, ss);
		if (de > end)
			de = end;
		if (ds < pos)
			ds = pos;
		if (ds >= de)
			break;
		if (holes && ds > hole_from)
			ret = add_hole(c, ino, hole_from, ds - hole_from);
		if (!ret && compress) {
			ret = copy_compressed(w, fd, ino, &ds, de, nbytes);
			compress = ret == 0;
			ret = ret < 0 ? -1 : 0;
		}
		if (!ret)
			ret = copy_range(w, fd, ino, ds, de, nbytes);
		pos = hole_from = de;
	}
	if (!ret && holes && hole_from < end)
		ret = add_hole(c, ino, hole_from, end - hole_from);
	close(fd);
	return ret;
}

static void fill_inode(const struct mkfs_ctx *c, const struct stat *st, uint64_t size,
		       uint64_t nbytes, uint64_t flags, struct btrfs_inode_item *ii)
{
	uint64_t rdev = 0;
	struct timespec a = st->st_atim, ct = st->st_ctim;

	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))   /* the kernel's dev_t layout */
		rdev = (uint64_t)major(st->st_rdev) << 20 | minor(st->st_rdev);
	if (c->cfg->reproducible)
		a = ct = st->st_mtim;
	mkfs_inode(ii, size, nbytes, 1, st->st_mode, st->st_uid, st->st_gid, rdev);
	mkfs_inode_times(ii, &a, &ct, &st->st_mtim);
	put_le64(&ii->flags, flags);
}

static int add_inode(struct mkfs_ctx *c, uint64_t ino, const struct stat *st, uint64_t size,
		     uint64_t nbytes, uint64_t flags)
{
	struct btrfs_inode_item ii;

	fill_inode(c, st, size, nbytes, flags, &ii);
	return mkfs_fs_add(c, ino, BTRFS_INODE_ITEM_KEY, 0, &ii, sizeof(ii));
}

/* Hard links: an open-addressing table keyed by (st_dev, st_ino, subvolume). */
static size_t link_slot(const struct walk *w, dev_t dev, ino_t ino, int tree)
{
	size_t h = ((size_t)ino * 0x9E3779B97F4A7C15ULL ^ (size_t)dev ^ (size_t)tree) & (w->links_cap - 1);

	while (w->links[h].btrfs_ino &&
	       (w->links[h].dev != dev || w->links[h].ino != ino || w->links[h].tree != tree))
		h = (h + 1) & (w->links_cap - 1);
	return h;
}

static struct hardlink *find_link(struct walk *w, const struct stat *st)
{
	struct hardlink *l;

	if (!w->links_cap)
		return NULL;
	l = &w->links[link_slot(w, st->st_dev, st->st_ino, w->c->cur)];
	return l->btrfs_ino ? l : NULL;
}

static int remember_link(struct walk *w, const struct stat *st, uint64_t ino,
			 const struct btrfs_inode_item *ii)
{
	struct hardlink *l;

	if (2 * (w->nlinks + 1) > w->links_cap) {
		struct hardlink *old = w->links;
		size_t oldcap = w->links_cap;
		w->links_cap = oldcap ? oldcap * 2 : 64;
		w->links = calloc(w->links_cap, sizeof(*w->links));
		if (!w->links) {
			w->links = old;
			w->links_cap = oldcap;
			return mkfs_fail(w->c, "out of memory");
		}
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].btrfs_ino)
				w->links[link_slot(w, old[i].dev, old[i].ino, old[i].tree)] = old[i];
		free(old);
	}
	l = &w->links[link_slot(w, st->st_dev, st->st_ino, w->c->cur)];
	*l = (struct hardlink){ st->st_dev, st->st_ino, w->c->cur, ino, *ii, 1 };
	w->nlinks++;
	return 0;
}

static int add_dir(struct walk *w, uint64_t dir, uint64_t *dir_size);

/* The directory at w->path (st) as the root directory of a new subvolume tree, and
 * its entry name in dir of the current one. Inode numbers start over in it. */
static int add_subvol(struct walk *w, uint64_t dir, uint64_t index, const char *name,
		      const struct stat *st, const struct mkfs_subvol_spec *spec)
{
	struct mkfs_ctx *c = w->c;
	int parent = c->cur, sub, ret;
	uint64_t next_ino = w->next_ino, size, dir_flags = w->dir_flags;

	/* the entry first: name lives in the walk's name stack, which going deeper moves */
	if (mkfs_subvol_new(c, c->sv[parent].id, dir, index, name, spec->ro))
		return -1;
	sub = c->cur;
	c->cur = parent;
	if (add_dir_items(c, dir, index, name, c->sv[sub].id, BTRFS_ROOT_ITEM_KEY, BTRFS_FT_DIR))
		return -1;
	c->cur = sub;
	if (spec->is_default)
		c->default_id = c->sv[sub].id;
	w->next_ino = BTRFS_FIRST_FREE_OBJECTID + 1;
	w->dir_flags = inode_flags(c, st);
	ret = add_dir(w, BTRFS_FIRST_FREE_OBJECTID, &size) ||
	      add_inode(c, BTRFS_FIRST_FREE_OBJECTID, st, size, 0, w->dir_flags) ||
	      mkfs_add_inode_ref(c, BTRFS_FIRST_FREE_OBJECTID, BTRFS_FIRST_FREE_OBJECTID, 0, "..", 2);
	w->dir_flags = dir_flags;
	w->next_ino = next_ino;
	c->cur = parent;
	return ret ? -1 : 0;
}

/* What the entry name (at w->path) is: as the estimate saw it while the names come
 * in its order, else asked anew. */
static int entry_stat(struct walk *w, const char *name, struct stat *st)
{
	struct mkfs_ctx *c = w->c;

	w->seen = NULL;
	if (w->seen_next < c->nseen) {
		const struct rootdir_seen *s = &c->seen[w->seen_next++];

		if (s->name_hash == btrfs_name_hash(name, strlen(name))) {
			w->seen = s;
			*st = s->st;
			return 0;
		}
		c->nseen = 0;   /* the tree changed since: ask for every entry from here on */
	}
	if (fstatat(at_fd(w), at_name(w), st, AT_SYMLINK_NOFOLLOW))
		return mkfs_fail(c, "cannot stat %s: %s", w->path, strerror(errno));
	return 0;
}

/* One directory entry: its inode (new, or another link to one seen before).
 * Returns 0, 1 when the entry is left out (the image itself), or -1. */
static int add_entry(struct walk *w, uint64_t dir, uint64_t index, const char *name)
{
	struct mkfs_ctx *c = w->c;
	struct hardlink *hl;
	struct stat st;
	uint64_t ino, size = 0, nbytes = 0, flags, dir_flags = w->dir_flags;
	struct btrfs_inode_item ii;
	const struct mkfs_subvol_spec *spec;
	int ret;

	if (entry_stat(w, name, &st))
		return -1;
	if (is_target(c, &st))
		return 1;
	if ((spec = subvol_spec(c, &st)))
		return add_subvol(w, dir, index, name, &st, spec);
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && (hl = find_link(w, &st))) {
		hl->nlink++;
		return add_dir_entry(c, dir, index, name, hl->btrfs_ino, file_type(st.st_mode));
	}
	ino = w->next_ino++;
	flags = entry_flags(w, &st);
	if (add_dir_entry(c, dir, index, name, ino, file_type(st.st_mode)) ||
	    (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && add_xattrs(w, ino, -1)))
		return -1;
	if (S_ISDIR(st.st_mode)) {
		w->dir_flags = flags;
		ret = add_dir(w, ino, &size);
		w->dir_flags = dir_flags;
	} else if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
		ret = add_file_data(w, &st, ino, flags, &nbytes);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(at_fd(w), at_name(w), target, sizeof(target));
		if (n < 0 || (size_t)n >= sizeof(target))
			return mkfs_fail(c, "cannot read link %s", w->path);
		if ((uint32_t)n + FILE_EXTENT_HDR > leaf_room(c))
			return mkfs_fail(c, "symlink target of %s too long for the node size", w->path);
		size = nbytes = (uint64_t)n;
		ret = add_inline(c, ino, target, (uint32_t)n);
	} else {
		ret = 0;
	}
	if (ret)
		return -1;
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
		fill_inode(c, &st, size, nbytes, flags, &ii);
		return remember_link(w, &st, ino, &ii);
	}
	return add_inode(c, ino, &st, size, nbytes, flags);
}

/* The directory at w->path as inode dir: its xattrs and its entries; its i_size is
 * the sum of the names twice (a DIR_ITEM and a DIR_INDEX each). */
static int add_dir(struct walk *w, uint64_t dir, uint64_t *dir_size)
{
	size_t first;
	int fd = open_dir(w), prev;
	long n = fd < 0 || add_xattrs(w, dir, fd) ? -1 : read_names(w, fd, &first);
	uint64_t index = 2;     /* DIR_INDEX numbering starts after "." and ".." */
	int ret = 0;

	if (fd < 0)
		return -1;
	prev = enter_dir(w, fd);
	*dir_size = 0;
	for (long i = 0; n >= 0 && i < n && ret >= 0; i++) {
		const char *name = name_at(w, first + (size_t)i);
		size_t nl = strlen(name);
		int len = path_push(w, name);

		if (len < 0) {
			ret = -1;
			break;
		}
		if (nl > BTRFS_NAME_LEN_MAX)
			ret = mkfs_fail(w->c, "name too long: %s", w->path);
		else
			ret = add_entry(w, dir, index, name);   /* uses name before going deeper */
		if (!ret) {
			*dir_size += 2 * nl;
			index++;
		}
		w->path[len] = 0;
	}
	leave_dir(w, prev);
	if (n < 0)
		return -1;
	pop_names(w, first);
	return ret < 0 ? -1 : 0;
}

int rootdir_populate(struct mkfs_ctx *c, const char *dir)
{
	struct walk w = { .c = c, .dfd = -1, .next_ino = BTRFS_FIRST_FREE_OBJECTID + 1,
			  .deflater.level = c->cfg->compress_level };
	struct stat st;
	uint64_t size;
	int ret = -1;

	if (strlen(dir) >= sizeof(w.path))
		return mkfs_fail(c, "path too long: %s", dir);
	strcpy(w.path, dir);
	if (stat(dir, &st))
		return mkfs_fail(c, "cannot stat %s: %s", dir, strerror(errno));
	w.buf = malloc(IO_BUF);
	w.cbuf = malloc(COMPRESS_CHUNK);
	if (!w.buf || !w.cbuf) {
		free(w.buf);
		free(w.cbuf);
		return mkfs_fail(c, "out of memory");
	}
	w.dir_flags = inode_flags(c, &st);
	if (add_dir(&w, BTRFS_FIRST_FREE_OBJECTID, &size) ||
	    add_inode(c, BTRFS_FIRST_FREE_OBJECTID, &st, size, 0, w.dir_flags) ||
	    mkfs_add_inode_ref(c, BTRFS_FIRST_FREE_OBJECTID, BTRFS_FIRST_FREE_OBJECTID, 0, "..", 2))
		goto out;
	/* link counts are known now */
	for (size_t i = 0; i < w.links_cap; i++) {
		struct hardlink *l = &w.links[i];

		if (!l->btrfs_ino)
			continue;
		c->cur = l->tree;
		put_le32(&l->ii.nlink, l->nlink);
		if (mkfs_fs_add(c, l->btrfs_ino, BTRFS_INODE_ITEM_KEY, 0, &l->ii, sizeof(l->ii)))
			goto out;
	}
	c->cur = 0;
	ret = 0;
out:
	free(w.links);
	free(w.names);
	free(w.offs);
	free(w.buf);
	free(w.cbuf);
	fs_deflater_free(&w.deflater);
	return ret;
}
