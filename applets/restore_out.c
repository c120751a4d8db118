/* btrfs restore: creating the restored tree safely (see restore_out.h). */
#include "config.h"
#if CFG_APPLET_RESTORE
#include "restore_out.h"
#include "cli.h"
#include "le.h"
#include "units.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

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
	static char buf[4096 + 64];
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

int rout_write(struct rout *o, int fd, const void *buf, size_t len, uint64_t off, const char *path)
{
	const unsigned char *p = buf;
	const size_t block = 4096;

	o->bytes += len;
	if (fd < 0)
		return 0;
	while (len) {
		/* leave whole zero blocks as holes; write everything else */
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
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			if (!w)
				errno = EIO;
			return fail(o, "writing", path);
		}
		p += w, off += (uint64_t)w, len -= (size_t)w;
	}
	return 0;
}

int rout_size(struct rout *o, int fd, uint64_t size, const char *path)
{
	if (fd >= 0 && ftruncate(fd, (off_t)size))
		return fail(o, "setting size of", path);
	return 0;
}

int rout_owner_fd(struct rout *o, int fd, const struct rout_meta *m, const char *path)
{
	if (fd >= 0 && fchown(fd, m->uid, m->gid))
		return fail(o, "changing owner of", path);
	return 0;
}

int rout_mode_times_fd(struct rout *o, int fd, const struct rout_meta *m, const char *path)
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

int rout_xattr(struct rout *o, int fd, const char *name, const void *value, size_t len,
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
