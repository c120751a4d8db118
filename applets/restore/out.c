/* btrfs restore: creating the restored tree safely (see applets/restore/out.h). */
#include "config.h"
#if CFG_APPLET_RESTORE
#include "out.h"
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/cli/units.h"
#include "util/le.h"
#include "util/workq.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

struct rout_writer;
static int writer_has_room(struct rout_writer *w);
static void queue_path(struct rout_writer *w, int fd, const char *path);

size_t rpath_push(struct rpath *p, const char *name, size_t len)
{
	size_t old = p->len;

	if (p->len + len + 2 > p->cap) {
		size_t cap = (p->len + len + 2) * 2;
		char *s = realloc(p->s, cap);

		if (!s)
			return (size_t)-1;
		p->s = s;
		p->cap = cap;
	}
	p->s[p->len++] = '/';
	memcpy(p->s + p->len, name, len);
	p->len += len;
	p->s[p->len] = 0;
	return old;
}

void rpath_pop(struct rpath *p, size_t old_len)
{
	p->len = old_len;
	if (p->s)
		p->s[old_len] = 0;
}

const char *rout_bad_name(const char *name, size_t len)
{
	if (!len)
		return "empty name";
	if (memchr(name, '/', len))
		return "name contains '/'";
	if (memchr(name, 0, len))
		return "name contains a NUL byte";
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return "name is '.' or '..'";
	return NULL;
}

const char *rout_shown(const struct rout *o, const char *path)
{
	static __thread char buf[4096 + 64];    /* the writer thread reports errors too */
	size_t n = 0;
	const char *parts[2] = { o->outdir, path };

	for (int i = 0; i < 2; i++)
		for (const unsigned char *c = (const unsigned char *)parts[i]; *c; c++) {
			if (n + 8 >= sizeof(buf)) {
				strcpy(buf + n, "...");
				return buf;
			}
			if (*c < 0x20 || *c == 0x7f)
				n += (size_t)sprintf(buf + n, "\\x%02x", *c);
			else
				buf[n++] = (char)*c;
		}
	buf[n] = 0;
	return buf;
}

static int fail(const struct rout *o, const char *what, const char *path)
{
	int e = errno;

	msg_error("%s '%s' failed: %s", what, rout_shown(o, path), strerror(e));
	return -e;
}

/* Existing entry handling: 1 = skip it, 0 = it was removed (-o), <0 error. */
static int existing(struct rout *o, int parent, const char *name, const char *path, int is_dir)
{
	if (!o->overwrite) {
		if (!o->warned_existing || o->verbose) {
			printf("Skipping existing file %s\n", rout_shown(o, path));
			if (!o->warned_existing)
				printf("If you wish to overwrite use -o\n");
		}
		o->warned_existing = 1;
		o->skipped++;
		return 1;
	}
	if (unlinkat(parent, name, is_dir ? AT_REMOVEDIR : 0))
		return fail(o, "removing existing", path);
	return 0;
}

int rout_dir(struct rout *o, int parent, const char *name, const char *path, int *fd)
{
	*fd = -1;
	if (o->dry_run) {
		o->dirs++;
		return 0;
	}
	if (mkdirat(parent, name, 0755) && errno != EEXIST)
		return fail(o, "creating directory", path);
	*fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0 && (errno == ENOTDIR || errno == ELOOP) && o->overwrite) {
		/* -o: something else stands where the directory goes; replace it */
		if (unlinkat(parent, name, 0))
			return fail(o, "removing existing", path);
		if (mkdirat(parent, name, 0755))
			return fail(o, "creating directory", path);
		*fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (*fd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
		msg_error("'%s' exists and is not a directory, not restoring into it",
			  rout_shown(o, path));
		return -ENOTDIR;
	}
	if (*fd < 0)
		return fail(o, "opening directory", path);
	o->dirs++;
	return 0;
}

int rout_file(struct rout *o, int parent, const char *name, const char *path, int *fd)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;
	int ret;

	*fd = -1;
	if (o->dry_run) {
		o->files++;
		return 0;
	}
	*fd = openat(parent, name, flags, 0644);
	if (*fd < 0 && errno == EEXIST) {
		if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW))
			return fail(o, "checking existing", path);
		ret = existing(o, parent, name, path, S_ISDIR(st.st_mode));
		if (ret)
			return ret;
		*fd = openat(parent, name, flags, 0644);
	}
	if (*fd < 0)
		return fail(o, "creating", path);
	o->files++;
	o->file = (struct rout_file){ *fd, 0, 0 };
	o->file_queued = o->writer && writer_has_room(o->writer);
	if (o->file_queued)
		queue_path(o->writer, *fd, path);
	return 0;
}

int rout_symlink(struct rout *o, int parent, const char *name, const char *target, const char *path)
{
	struct stat st;
	int ret;

	if (o->dry_run) {
		o->symlinks++;
		return 0;
	}
	ret = symlinkat(target, parent, name);
	if (ret && errno == EEXIST) {
		if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW))
			return fail(o, "checking existing", path);
		ret = existing(o, parent, name, path, S_ISDIR(st.st_mode));
		if (ret)
			return ret;
		ret = symlinkat(target, parent, name);
	}
	if (ret)
		return fail(o, "creating symlink", path);
	o->symlinks++;
	return 0;
}

/* Eight bytes at a time (musl's memcmp goes byte by byte), stopping at the
 * first non-zero 32 bytes. */
static int all_zero(const unsigned char *p, size_t len)
{
	size_t i = 0;
	uint64_t acc = 0;

	for (; i + 32 <= len && !acc; i += 32)
		acc = get_le64(p + i) | get_le64(p + i + 8) | get_le64(p + i + 16) | get_le64(p + i + 24);
	for (; i < len && !acc; i++)
		acc = p[i];
	return len && !acc;
}

/* Writes len bytes at off into file f, whole zero blocks left as holes. */
static int write_data(const struct rout *o, struct rout_file *f, const uint8_t *p, size_t len,
		      uint64_t off, const char *path)
{
	const size_t block = 4096;

	while (len) {
		size_t n = len, skip = 0;

		if ((off % block) == 0 && len >= block) {
			size_t z = 0;
			while (z + block <= len && all_zero(p + z, block))
				z += block;
			if (z) {
				skip = z;
			} else {
				n = block;
				while (n + block <= len && !all_zero(p + n, block))
					n += block;
			}
		}
		if (skip) {
			p += skip, off += skip, len -= skip;
			continue;
		}
		ssize_t w = pwrite(f->fd, p, n, (off_t)off);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			if (!w)
				errno = EIO;
			return fail(o, "writing", path);
		}
		p += w, off += (uint64_t)w, len -= (size_t)w;
		if (off > f->end)
			f->end = off;
	}
	return 0;
}

/* The file is new: when its data ends at size, it has that size already. */
static int set_size(const struct rout *o, const struct rout_file *f, uint64_t size, const char *path)
{
	if (size != f->end && ftruncate(f->fd, (off_t)size))
		return fail(o, "setting size of", path);
	return 0;
}

static int owner_fd(const struct rout *o, int fd, const struct rout_meta *m, const char *path)
{
	if (fd >= 0 && fchown(fd, m->uid, m->gid))
		return fail(o, "changing owner of", path);
	return 0;
}

static int mode_times_fd(const struct rout *o, int fd, const struct rout_meta *m, const char *path)
{
	struct timespec ts[2] = { m->atime, m->mtime };

	if (fd < 0)
		return 0;
	if (fchmod(fd, m->mode & 07777))
		return fail(o, "changing mode of", path);
	if (futimens(fd, ts))
		return fail(o, "setting times of", path);
	return 0;
}

static int set_xattr(const struct rout *o, int fd, const char *name, const void *value, size_t len,
		     const char *path)
{
	if (fd >= 0 && fsetxattr(fd, name, value, len, 0)) {
		int e = errno;
		msg_error("setting extended attribute %s on '%s' failed: %s", name,
			  rout_shown(o, path), strerror(e));
		return -e;
	}
	return 0;
}

/* ---- writing behind ---------------------------------------------------------------
 * Operations queued in order (util/workq) and run by the writer thread. */
#define RING (8u << 20)
#define RING_MAX_DATA (RING / 4 - sizeof(struct qrec))  /* larger writes go in pieces */
#define MAX_OPEN 256                    /* files queued and not closed yet */

enum { OP_PATH, OP_WRITE, OP_INFLATE, OP_SIZE, OP_OWNER, OP_MODE_TIMES, OP_XATTR, OP_CLOSE };

struct qrec {
	uint32_t op;
	uint32_t skip;          /* the data starts this far after the header's end */
	int fd;
	uint64_t off;           /* OP_WRITE, OP_INFLATE: file offset; OP_SIZE: the size */
	uint64_t len;           /* data bytes (after skip) */
	/* OP_INFLATE: the data is compressed (type), ram_len bytes decompressed, of
	 * which count from from go to off */
	uint32_t type, ram_len, from, count;
};

struct rout_writer {
	struct workq q;
	const struct rout *o;
	int open;               /* files queued and not closed yet (atomic) */
	int errors, reported;   /* files whose writing failed (atomic); how many were told */
	struct qrec *room;      /* what rout_buffer reserved, and for how many bytes */
	size_t room_len;
	/* the writer's own */
	struct rout_file f;     /* the file being written, its path for messages */
	char *path;
	int halted;             /* a failure without -i: the rest is skipped */
	struct fs_inflater inflater;    /* for OP_INFLATE, into out */
	uint8_t *out;
	size_t out_cap;
	uint32_t sectorsize;
	int losses;             /* extents that did not decompress (reported) */
};

/* Where the next operation with len bytes of data goes; waits for room. */
static struct qrec *reserve(struct rout_writer *w, size_t len)
{
	w->room = NULL;
	return workq_reserve(&w->q, sizeof(struct qrec) + len);
}

static void commit(struct rout_writer *w, struct qrec *q, uint32_t op, int fd, uint64_t off, size_t len)
{
	q->op = op;
	q->fd = fd;
	q->off = off;
	q->len = len;
	if (op == OP_CLOSE)
		__atomic_add_fetch(&w->open, 1, __ATOMIC_RELAXED);
	workq_commit(&w->q, sizeof(*q) + q->skip + len);
}

/* Whether the writer is less than half a ring (or half the open files) behind: else
 * this thread writes the next file itself (the two share the work when writing is the
 * slower part, and this one never waits for the other). */
static int writer_has_room(struct rout_writer *w)
{
	return workq_backlog(&w->q) < RING / 2 && __atomic_load_n(&w->open, __ATOMIC_RELAXED) < MAX_OPEN;
}

static void queue(struct rout_writer *w, uint32_t op, int fd, uint64_t off, const void *data, size_t len)
{
	struct qrec *q = reserve(w, len);

	q->skip = 0;
	if (len)
		memcpy(q + 1, data, len);
	commit(w, q, op, fd, off, len);
}

static void queue_path(struct rout_writer *w, int fd, const char *path)
{
	queue(w, OP_PATH, fd, 0, path, strlen(path) + 1);
}

/* The operation whose room (rout_buffer) holds [p, p + len), skip set; else NULL. */
static struct qrec *in_room(struct rout_writer *w, const void *p, size_t len)
{
	struct qrec *q = w->room;
	const uint8_t *room = q ? (const uint8_t *)(q + 1) : NULL;

	w->room = NULL;
	if (!room || (const uint8_t *)p < room || (const uint8_t *)p + len > room + w->room_len)
		return NULL;
	q->skip = (uint32_t)((const uint8_t *)p - room);
	return q;
}

static void queue_write(struct rout_writer *w, int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	struct qrec *q = in_room(w, buf, len);

	if (q) {
		commit(w, q, OP_WRITE, fd, off, len);
		return;
	}
	for (size_t n; len; buf += n, off += n, len -= n) {
		n = len < RING_MAX_DATA ? len : RING_MAX_DATA;
		queue(w, OP_WRITE, fd, off, buf, n);
	}
}

/* Decompresses an OP_INFLATE's data into w->out (zero-filled past what it gave);
 * -1 after reporting a damaged extent. */
static int inflate(struct rout_writer *w, const struct qrec *q, const uint8_t *data)
{
	size_t got = 0;
	int ret = -ENOMEM;

	if (q->ram_len > w->out_cap) {
		uint8_t *p = realloc(w->out, q->ram_len);
		if (p)
			w->out = p, w->out_cap = q->ram_len;
	}
	if (q->ram_len <= w->out_cap)
		ret = fs_decompress(&w->inflater, (int)q->type, data, (size_t)q->len, w->out, q->ram_len,
				    &got, w->sectorsize);
	if (!ret) {
		memset(w->out + got, 0, q->ram_len - got);
		return 0;
	}
	msg_error("%s: cannot decompress extent at file offset %llu: %s", rout_shown(w->o, w->path),
		  (unsigned long long)q->off, ret == -ENOTSUP ? "compression type not supported" : strerror(-ret));
	w->losses++;
	return -1;
}

/* Runs one operation (in the writer thread). After a failure without -i only closes
 * are done (the restore stops, as it would without a writer). */
static void run_op(void *ctx, void *rec)
{
	struct rout_writer *w = ctx;
	const struct qrec *q = rec;
	const struct rout *o = w->o;
	const uint8_t *data = (const uint8_t *)(q + 1) + q->skip;
	struct rout_file *f = &w->f;
	int ret = 0;

	if (q->op == OP_PATH) {
		free(w->path);
		w->path = strdup((const char *)data);
		*f = (struct rout_file){ q->fd, 0, 0 };
		return;
	}
	if (q->op == OP_CLOSE) {
		close(q->fd);
		__atomic_sub_fetch(&w->open, 1, __ATOMIC_RELAXED);
		return;
	}
	if (f->failed || w->halted)
		return;
	const char *path = w->path ? w->path : "?";
	switch (q->op) {
	case OP_WRITE:
		ret = write_data(o, f, data, (size_t)q->len, q->off, path);
		break;
	case OP_INFLATE:
		if (!inflate(w, q, data))
			ret = write_data(o, f, w->out + q->from, q->count, q->off, path);
		break;
	case OP_SIZE:
		ret = set_size(o, f, q->off, path);
		break;
	case OP_OWNER:
		ret = owner_fd(o, q->fd, (const struct rout_meta *)data, path);
		break;
	case OP_MODE_TIMES:
		ret = mode_times_fd(o, q->fd, (const struct rout_meta *)data, path);
		break;
	case OP_XATTR: {
		size_t name_len = strlen((const char *)data) + 1;
		ret = set_xattr(o, q->fd, (const char *)data, data + name_len, (size_t)q->len - name_len, path);
		break;
	}
	}
	if (ret) {
		f->failed = 1;
		w->halted = !o->ignore_errors;
		__atomic_add_fetch(&w->errors, 1, __ATOMIC_RELAXED);
	}
}

int rout_writer_start(struct rout *o, uint32_t sectorsize)
{
	struct rout_writer *w = calloc(1, sizeof(*w));
	int ret = -ENOMEM;

	if (w) {
		w->o = o;
		w->sectorsize = sectorsize;
		w->f.fd = -1;
		ret = workq_start(&w->q, RING, run_op, w);
	}
	if (ret)
		free(w);
	else
		o->writer = w;
	return ret;
}

int rout_writer_stop(struct rout *o)
{
	struct rout_writer *w = o->writer;
	int losses;

	if (!w)
		return 0;
	workq_stop(&w->q);
	o->writer = NULL;
	o->file.fd = -1;
	/* errors not told yet stay countable */
	o->late_errors += w->errors - w->reported;
	losses = w->losses;
	fs_inflater_free(&w->inflater);
	free(w->out);
	free(w->path);
	free(w);
	return losses;
}

int rout_late_errors(struct rout *o)
{
	struct rout_writer *w = o->writer;
	int n = o->late_errors;

	o->late_errors = 0;
	if (w) {
		int errors = __atomic_load_n(&w->errors, __ATOMIC_RELAXED);
		n += errors - w->reported;
		w->reported = errors;
	}
	return n;
}

void *rout_buffer(struct rout *o, size_t len)
{
	struct rout_writer *w = o->writer;
	struct qrec *q;

	if (!w || !o->file_queued || len > RING_MAX_DATA)
		return NULL;
	q = reserve(w, len);
	w->room = q;
	w->room_len = len;
	return q + 1;
}

/* Operations on the file rout_file created last go to the writer when it took it. */
static struct rout_writer *queued(const struct rout *o, int fd)
{
	return fd >= 0 && fd == o->file.fd && o->file_queued ? o->writer : NULL;
}

int rout_queued(const struct rout *o, int fd)
{
	return queued(o, fd) != NULL;
}

int rout_write_compressed(struct rout *o, int fd, int type, const void *z, size_t zlen,
			  size_t ram_len, size_t from, size_t len, uint64_t off)
{
	struct rout_writer *w = queued(o, fd);
	struct qrec *q = w ? in_room(w, z, zlen) : NULL;

	if (!q)
		return -1;
	o->bytes += len;
	q->type = (uint32_t)type;
	q->ram_len = (uint32_t)ram_len;
	q->from = (uint32_t)from;
	q->count = (uint32_t)len;
	commit(w, q, OP_INFLATE, fd, off, zlen);
	return 0;
}

void rout_close(struct rout *o, int fd)
{
	struct rout_writer *w = queued(o, fd);

	if (fd == o->file.fd)
		o->file.fd = -1;
	if (w)
		queue(w, OP_CLOSE, fd, 0, NULL, 0);
	else if (fd >= 0)
		close(fd);
}

int rout_write(struct rout *o, int fd, const void *buf, size_t len, uint64_t off, const char *path)
{
	struct rout_writer *w = queued(o, fd);

	o->bytes += len;
	if (w)
		queue_write(w, fd, buf, len, off);
	else if (fd >= 0 && fd == o->file.fd)
		return write_data(o, &o->file, buf, len, off, path);
	return 0;
}

int rout_size(struct rout *o, int fd, uint64_t size, const char *path)
{
	struct rout_writer *w = queued(o, fd);

	if (w)
		queue(w, OP_SIZE, fd, size, NULL, 0);
	else if (fd >= 0 && fd == o->file.fd)
		return set_size(o, &o->file, size, path);
	return 0;
}

int rout_owner_fd(struct rout *o, int fd, const struct rout_meta *m, const char *path)
{
	struct rout_writer *w = queued(o, fd);

	if (w)
		queue(w, OP_OWNER, fd, 0, m, sizeof(*m));
	return w ? 0 : owner_fd(o, fd, m, path);
}

int rout_mode_times_fd(struct rout *o, int fd, const struct rout_meta *m, const char *path)
{
	struct rout_writer *w = queued(o, fd);

	if (w)
		queue(w, OP_MODE_TIMES, fd, 0, m, sizeof(*m));
	return w ? 0 : mode_times_fd(o, fd, m, path);
}

int rout_xattr(struct rout *o, int fd, const char *name, const void *value, size_t len,
	       const char *path)
{
	struct rout_writer *w = queued(o, fd);
	size_t name_len = strlen(name) + 1;

	if (!w || name_len + len > RING_MAX_DATA)      /* (xattrs fit in a tree block) */
		return set_xattr(o, fd, name, value, len, path);
	struct qrec *q = reserve(w, name_len + len);
	q->skip = 0;
	memcpy(q + 1, name, name_len);
	memcpy((uint8_t *)(q + 1) + name_len, value, len);
	commit(w, q, OP_XATTR, fd, 0, name_len + len);
	return 0;
}

int rout_meta_link(struct rout *o, int parent, const char *name, const struct rout_meta *m,
		   const char *path)
{
	struct timespec ts[2] = { m->atime, m->mtime };

	if (o->dry_run)
		return 0;
	if (fchownat(parent, name, m->uid, m->gid, AT_SYMLINK_NOFOLLOW))
		return fail(o, "changing owner of", path);
	if (utimensat(parent, name, ts, AT_SYMLINK_NOFOLLOW))
		return fail(o, "setting times of", path);
	return 0;
}

static int terminal_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 20)
		return 80;
	return ws.ws_col;
}

void rout_progress(struct rout *o, const char *path)
{
	struct timespec now;
	char head[96];
	int width, room, n;

	if (!o->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (o->progress_shown && (now.tv_sec - o->progress_at.tv_sec) * 1000000000L +
	    (now.tv_nsec - o->progress_at.tv_nsec) < 200000000L)
		return;
	o->progress_at = now;
	o->progress_shown = 1;
	n = snprintf(head, sizeof(head), "%llu files, %llu dirs, %s: ",
		     (unsigned long long)o->files, (unsigned long long)o->dirs,
		     pretty_size(o->bytes, UNITS_BINARY));
	width = terminal_width() - 1;
	room = width - n;
	if (room < 4)
		room = 4;
	/* the tail of the path, which names the file */
	const char *shown = rout_shown(o, path);
	size_t len = strlen(shown);
	if (len > (size_t)room)
		shown += len - (size_t)room;
	fprintf(stderr, "\r\033[K%s%s", head, shown);
	fflush(stderr);
}

void rout_progress_clear(struct rout *o)
{
	if (o->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		o->progress_shown = 0;
	}
}
#endif
