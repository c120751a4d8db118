/* btrfs restore: creating the restored tree safely (see restore_out.h). */
#include "config.h"
#if CFG_APPLET_RESTORE
#include "restore_out.h"
#include "cli.h"
#include "fs.h"
#include "le.h"
#include "units.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
 * A ring of operations: the main thread appends (queue_*), the writer thread runs them
 * in order. Each is a header and its data, 8-byte aligned, never split at the ring's
 * end (a WRAP header, or no room for one, sends the reader back to the start). */
#define RING (8u << 20)
#define RING_MAX_DATA (RING / 4)        /* larger writes are queued in pieces */
#define MAX_OPEN 256                    /* files queued and not closed yet */
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

enum { OP_PATH, OP_WRITE, OP_INFLATE, OP_SIZE, OP_OWNER, OP_MODE_TIMES, OP_XATTR, OP_CLOSE,
       OP_WRAP };

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
	const struct rout *o;
	pthread_t thread;
	pthread_mutex_t lock;   /* guards what follows up to room */
	pthread_cond_t more;    /* for the writer: operations queued (or stop) */
	pthread_cond_t less;    /* for the queuing thread: room made, files closed */
	uint8_t *ring;
	size_t head, tail;      /* bytes appended and bytes done, since both were last 0 */
	int open, stop;
	int writer_idle, queuer_waits;  /* who sleeps (wakeups cost a system call each) */
	int halted;             /* (the writer's own) a failure without -i: skip the rest */
	struct fs_inflater inflater;    /* (the writer's own) for OP_INFLATE, into out */
	uint8_t *out;
	size_t out_cap;
	uint32_t sectorsize;
	int losses;             /* extents that did not decompress (reported) */
	int errors, reported;   /* files whose writing failed; how many rout_late_errors told */
	struct qrec *room;      /* what rout_buffer reserved, and for how many bytes */
	size_t room_len;
};

static size_t rec_size(const struct qrec *q)
{
	return sizeof(*q) + ALIGN8(q->skip + q->len);
}

/* The queuing thread waits for room or closes: an idle writer must start first. */
static void wait_for_writer(struct rout_writer *w)
{
	if (w->writer_idle)
		pthread_cond_signal(&w->more);
	w->queuer_waits = 1;
	pthread_cond_wait(&w->less, &w->lock);
	w->queuer_waits = 0;
}

/* Where the next operation with len bytes of data goes; waits for room. */
static struct qrec *reserve(struct rout_writer *w, size_t len)
{
	size_t need = sizeof(struct qrec) + ALIGN8(len);

	w->room = NULL;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->head == w->tail)
			w->head = w->tail = 0;
		size_t pos = w->head % RING, gap = RING - pos < need ? RING - pos : 0;
		if (RING - (w->head - w->tail) >= gap + need) {
			if (gap >= sizeof(struct qrec))
				((struct qrec *)(w->ring + pos))->op = OP_WRAP;
			w->head += gap;
			break;
		}
		wait_for_writer(w);
	}
	pthread_mutex_unlock(&w->lock);
	return (struct qrec *)(w->ring + w->head % RING);
}

/* The writer is woken when a batch is ready: an eighth of the ring or many files. */
static void commit(struct rout_writer *w, struct qrec *q, uint32_t op, int fd, uint64_t off, size_t len)
{
	q->op = op;
	q->fd = fd;
	q->off = off;
	q->len = len;
	pthread_mutex_lock(&w->lock);
	w->head += rec_size(q);
	w->open += op == OP_CLOSE;
	if (w->writer_idle && (w->head - w->tail >= RING / 8 || w->open >= MAX_OPEN / 4))
		pthread_cond_signal(&w->more);
	while (w->open > MAX_OPEN)
		wait_for_writer(w);
	pthread_mutex_unlock(&w->lock);
}

/* Whether the writer is less than half a ring (or half the open files) behind: else
 * this thread writes the next file itself (the two share the work when writing is the
 * slower part, and this one never waits for the other). */
static int writer_has_room(struct rout_writer *w)
{
	pthread_mutex_lock(&w->lock);
	int ret = w->head - w->tail < RING / 2 && w->open < MAX_OPEN / 2;
	pthread_mutex_unlock(&w->lock);
	return ret;
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
static int inflate(struct rout_writer *w, const struct qrec *q, const uint8_t *data, const char *path)
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
	msg_error("%s: cannot decompress extent at file offset %llu: %s", rout_shown(w->o, path),
		  (unsigned long long)q->off, ret == -ENOTSUP ? "compression type not supported" : strerror(-ret));
	w->losses++;
	return -1;
}

/* Runs one operation on file f; 1 when the file failed with it. After a failure
 * without -i only closes are done (the restore stops, as it would without a writer). */
static int run_op(struct rout_writer *w, const struct qrec *q, struct rout_file *f, const char *path)
{
	const struct rout *o = w->o;
	const uint8_t *data = (const uint8_t *)(q + 1) + q->skip;
	int ret = 0;

	if (q->op == OP_CLOSE) {
		close(q->fd);
		return 0;
	}
	if (f->failed || w->halted)
		return 0;
	switch (q->op) {
	case OP_WRITE:
		ret = write_data(o, f, data, (size_t)q->len, q->off, path);
		break;
	case OP_INFLATE:
		if (!inflate(w, q, data, path))
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
	f->failed = ret != 0;
	w->halted = f->failed && !o->ignore_errors;
	return f->failed;
}

/* Runs the operations from tail up to end (all whole records); tells the queuing
 * thread about progress every eighth of the ring. */
static void run_batch(struct rout_writer *w, size_t end, struct rout_file *f, char **path)
{
	size_t t = w->tail, told = t;
	int failed = 0, closed = 0;

	while (t != end) {
		size_t pos = t % RING;
		struct qrec *q = (struct qrec *)(w->ring + pos);
		if (RING - pos < sizeof(*q) || q->op == OP_WRAP) {
			t += RING - pos;
			continue;
		}
		if (q->op == OP_PATH) {
			free(*path);
			*path = strdup((const char *)(q + 1));
			*f = (struct rout_file){ q->fd, 0, 0 };
		} else {
			failed += run_op(w, q, f, *path ? *path : "?");
			closed += q->op == OP_CLOSE;
		}
		t += rec_size(q);
		if (t - told >= RING / 8 || t == end) {
			pthread_mutex_lock(&w->lock);
			w->tail = t;
			w->errors += failed;
			w->open -= closed;
			if (w->queuer_waits)
				pthread_cond_signal(&w->less);
			pthread_mutex_unlock(&w->lock);
			told = t, failed = closed = 0;
		}
	}
}

static void *writer_main(void *arg)
{
	struct rout_writer *w = arg;
	struct rout_file f = { -1, 0, 0 };
	char *path = NULL;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->head == w->tail) {
			if (w->stop)
				break;
			w->writer_idle = 1;
			pthread_cond_wait(&w->more, &w->lock);
			w->writer_idle = 0;
			continue;
		}
		size_t end = w->head;
		pthread_mutex_unlock(&w->lock);
		run_batch(w, end, &f, &path);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	free(path);
	return NULL;
}

int rout_writer_start(struct rout *o, uint32_t sectorsize)
{
	struct rout_writer *w = calloc(1, sizeof(*w));
	int ret = -ENOMEM;

	if (!w || !(w->ring = malloc(RING)))
		goto fail;
	w->o = o;
	w->sectorsize = sectorsize;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->less, NULL);
	ret = -pthread_create(&w->thread, NULL, writer_main, w);
	if (ret)
		goto fail;
	o->writer = w;
	return 0;
fail:
	if (w)
		free(w->ring);
	free(w);
	return ret;
}

int rout_writer_stop(struct rout *o)
{
	struct rout_writer *w = o->writer;
	int losses;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	o->writer = NULL;
	o->file.fd = -1;
	/* errors not told yet stay countable */
	o->late_errors += w->errors - w->reported;
	losses = w->losses;
	fs_inflater_free(&w->inflater);
	free(w->out);
	free(w->ring);
	free(w);
	return losses;
}

int rout_late_errors(struct rout *o)
{
	struct rout_writer *w = o->writer;
	int n = o->late_errors;

	o->late_errors = 0;
	if (w) {
		pthread_mutex_lock(&w->lock);
		n += w->errors - w->reported;
		w->reported = w->errors;
		pthread_mutex_unlock(&w->lock);
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
