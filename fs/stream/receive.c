//build:Oz
/* Applying send-stream commands, confined to the subvolume being received.
 *
 * A stream path must be relative, made of non-empty components other than "." and "..";
 * "" names the subvolume itself. Its directory part is opened beneath the subvolume with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) — or, where the
 * kernel lacks openat2, one component at a time with O_NOFOLLOW — and its last component
 * is used with *at() calls that never follow a symlink (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW,
 * linkat without AT_SYMLINK_FOLLOW). Data is only written to regular files. Subvolumes
 * named by the stream are single names created in the destination directory; parents and
 * clone sources are found by UUID in the destination filesystem's UUID tree and opened
 * only beneath the destination directory or a directory added with recv_add_search (so
 * a stream cannot snapshot or clone other subvolumes of the filesystem). Directories so
 * opened are kept open for later commands (see
 * "directory cache"), and so is the regular file being created or written. */
#include "receive.h"
#include "recv_bulk.h"
#include "fs/core/fs.h"
#include "util/ioctl/subvol.h"
#include "util/ioctl/subvol_lookup.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#if __has_include(<linux/fsverity.h>)
#include <linux/fsverity.h>
#endif
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how { uint64_t flags, mode, resolve; };
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int rfail(struct receiver *r, int fatal, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int rfail(struct receiver *r, int fatal, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->fatal |= fatal;
	return -1;
}

static void dir_cache_init(struct receiver *r);
static void bulk_wait(struct receiver *r);

/* The path of directory fd from the top level of its filesystem: its subvolume's
 * path, then the directory's path inside the subvolume. */
static int top_level_path(int fd, char **out)
{
	char *sub = NULL, *in = NULL;
	struct stat st;
	uint64_t id;
	int ret = fstat(fd, &st) ? -errno : subvol_id_of_fd(fd, &id);

	if (!ret)
		ret = subvol_path(fd, id, &sub);
	if (!ret && st.st_ino != BTRFS_FIRST_FREE_OBJECTID)
		ret = subvol_inode_path(fd, st.st_ino, &in);
	if (!ret && asprintf(out, "%s%s%s", sub, *sub && in ? "/" : "", in ? in : "") < 0)
		ret = -ENOMEM;
	free(sub);
	free(in);
	return ret;
}

int recv_add_search(struct receiver *r, int fd)
{
	struct recv_search *s = &r->search[r->nsearch];
	int ret;

	if (r->nsearch == RECV_MAX_SEARCH)
		return rfail(r, 1, "at most %d directories to search", RECV_MAX_SEARCH - 1);
	ret = top_level_path(fd, &s->path);
	if (ret < 0)
		return rfail(r, 1, "cannot resolve the path of a directory to search: %s",
			     strerror(-ret));
	s->fd = fd;
	r->nsearch++;
	return 0;
}

int recv_init(struct receiver *r, int dest_fd, int mnt_fd)
{
	memset(r, 0, sizeof(*r));
	r->dest_fd = dest_fd;
	r->mnt_fd = mnt_fd;
	r->subvol_fd = -1;
	r->write_fd = -1;
	r->bulk_fd = -1;
	if (recv_add_search(r, dest_fd))
		return -1;
	dir_cache_init(r);
	return 0;
}

static void close_write(struct receiver *r)
{
	if (r->write_fd >= 0)
		close(r->write_fd);
	r->write_fd = -1;
	r->write_path[0] = 0;
}

/* Keeps fd, a regular file opened for writing, as the descriptor of path. */
static void keep_write(struct receiver *r, int fd, const char *path)
{
	close_write(r);
	r->write_fd = fd;
	snprintf(r->write_path, sizeof(r->write_path), "%s", path);
}

/* The cached descriptor of path when it is the regular file last written or created, so
 * that the commands following its data (chown, chmod, utimes, xattrs) need no lookup; -1
 * otherwise. */
static int cached_file(const struct receiver *r, const char *path)
{
	return r->write_fd >= 0 && !strcmp(r->write_path, path) ? r->write_fd : -1;
}

static void dir_cache_drop(struct receiver *r, const char *path);

void recv_release(struct receiver *r)
{
	close_write(r);
	bulk_wait(r);
	recv_bulk_stop(r->bulk);
	r->bulk = NULL;
	dir_cache_drop(r, NULL);
	free(r->dirs);
	r->dirs = NULL;
	r->dir_sets = 0;
	fs_inflater_free(&r->inflater);
	if (r->subvol_fd >= 0)
		close(r->subvol_fd);
	r->subvol_fd = -1;
	while (r->nsearch)
		free(r->search[--r->nsearch].path);
}

/* ---- confined path resolution ---- */

/* Checks the lexical rules; "" is allowed only when allow_root. */
static int check_path(struct receiver *r, const char *path, int allow_root)
{
	const char *p = path;

	if (!*path)
		return allow_root ? 0 : rfail(r, 1, "refusing an empty path here");
	if (*path == '/')
		return rfail(r, 1, "refusing absolute path %s", path);
	if (strlen(path) >= PATH_MAX)
		return rfail(r, 1, "refusing a path of %zu bytes", strlen(path));
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return rfail(r, 1, "refusing path %s: empty, '.' or '..' component", path);
		if (n > 255)
			return rfail(r, 1, "refusing path %s: a name longer than 255 bytes", path);
		p += n;
		if (*p == '/' && !*++p)
			return rfail(r, 1, "refusing path %s: trailing '/'", path);
	}
	return 0;
}

static int is_symlink(int dirfd, const char *name)
{
	struct stat st;
	int e = errno, ret = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);

	errno = e;
	return ret;
}

/* Walks rel one component at a time, each opened with O_NOFOLLOW (no openat2). */
static int walk_beneath(int root, const char *rel)
{
	char comp[256];
	int cur = fcntl(root, F_DUPFD_CLOEXEC, 0), fd;

	while (cur >= 0 && *rel) {
		size_t n = strcspn(rel, "/");

		if (n >= sizeof(comp)) {
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, rel, n);
		comp[n] = 0;
		fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOTDIR && is_symlink(cur, comp))
			errno = ELOOP;       /* as openat2 reports a symlink in the way */
		close(cur);
		cur = fd;
		rel += n + (rel[n] == '/');
	}
	return cur;
}

int recv_open_beneath(int root, const char *rel, int walk)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (walk)
		return walk_beneath(root, rel);
	fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
	/* no openat2 (or a seccomp filter refusing it): walk one component at a time */
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return walk_beneath(root, rel);
	return fd;
}

/* ---- directory cache ----
 *
 * The directories that stream paths go through, each opened once (confined, as above)
 * and kept as an O_PATH descriptor under its stream path: a stream names the same
 * directories over and over (each file is renamed into its directory, then its parent
 * gets new times), and an openat2 and a close for every command would be a third of the
 * system calls. An entry names the same directory as long as no rename or removal of a
 * directory touches its path or a parent's: those drop the entries for the old and the
 * new path and everything below (entries are never moved, only dropped), and so does
 * the end of the subvolume. Set-associative by a hash of the path; the least recently
 * used entry of a set is replaced, so the entry just looked up stays open while a
 * second path of the same command is resolved. */

static void dir_cache_init(struct receiver *r)
{
	unsigned sets = RECV_DIR_MAX_SETS, i;
	struct rlimit rl;

	/* at most a quarter of the descriptors the process may have */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		while (sets && (rlim_t)sets * RECV_DIR_WAYS * 4 > rl.rlim_cur)
			sets /= 2;
	r->dirs = sets ? malloc(sets * RECV_DIR_WAYS * sizeof(*r->dirs)) : NULL;
	if (!r->dirs)
		return;            /* no cache: every path is resolved afresh */
	for (i = 0; i < sets * RECV_DIR_WAYS; i++)
		r->dirs[i].fd = -1;
	r->dir_sets = sets;
}

/* Does the utimes held for a cached directory, through its descriptor (so also after a
 * rename); a failure is left for recv_failed_behind. A directory removed since (ENOENT)
 * has no times to keep. */
static void dir_times_apply(struct receiver *r, struct recv_dir *d)
{
	if (!d->times_held)
		return;
	d->times_held = 0;
	if (utimensat(d->fd, ".", d->times, 0) < 0 && errno != ENOENT && !r->late_err[0]) {
		snprintf(r->late_err, sizeof(r->late_err), "utimes %s failed: %s", d->path, strerror(errno));
		r->late_fatal = 0;
	}
}

/* Closes a cache entry, doing its held utimes first. */
static void dir_forget(struct receiver *r, struct recv_dir *d)
{
	if (d->fd >= 0) {
		dir_times_apply(r, d);
		close(d->fd);
	}
	d->fd = -1;
}

/* Drops the entries of directory path and of those below it; all of them when NULL. */
static void dir_cache_drop(struct receiver *r, const char *path)
{
	size_t n = path ? strlen(path) : 0, i;

	for (i = 0; i < (size_t)r->dir_sets * RECV_DIR_WAYS; i++) {
		struct recv_dir *d = &r->dirs[i];

		if (d->fd >= 0 && (!path || (!strncmp(d->path, path, n) &&
					     (!d->path[n] || d->path[n] == '/'))))
			dir_forget(r, d);
	}
}

/* Does the held utimes of every cached directory. */
static void dir_times_flush(struct receiver *r)
{
	for (size_t i = 0; i < (size_t)r->dir_sets * RECV_DIR_WAYS; i++)
		if (r->dirs[i].fd >= 0)
			dir_times_apply(r, &r->dirs[i]);
}

/* FNV-1a */
static uint32_t path_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* The cached descriptor of directory dir (a checked stream path) and in *slot its
 * entry, or -1 and in *slot the entry to fill once it is opened (NULL when dir cannot
 * be cached). */
static int dir_cache_get(struct receiver *r, const char *dir, struct recv_dir **slot)
{
	struct recv_dir *set, *victim;
	unsigned i;

	*slot = NULL;
	if (!r->dirs || strlen(dir) >= RECV_DIR_KEY)
		return -1;
	set = r->dirs + (path_hash(dir) & (r->dir_sets - 1)) * RECV_DIR_WAYS;
	victim = set;
	for (i = 0; i < RECV_DIR_WAYS; i++) {
		if (set[i].fd >= 0 && !strcmp(set[i].path, dir)) {
			set[i].used = ++r->dir_clock;
			*slot = &set[i];
			return set[i].fd;
		}
		if (victim->fd >= 0 && (set[i].fd < 0 || set[i].used < victim->used))
			victim = &set[i];
	}
	*slot = victim;
	return -1;
}

static void dir_cache_put(struct receiver *r, struct recv_dir *slot, const char *dir, int fd)
{
	dir_forget(r, slot);
	slot->fd = fd;
	slot->times_held = 0;
	slot->used = ++r->dir_clock;
	strcpy(slot->path, dir);
}

struct target {
	int dirfd;                 /* parent directory (owned: close it after use) */
	int owned;
	const char *leaf;          /* last component, "." for the root itself */
	char buf[PATH_MAX];
};

static void target_close(struct target *t)
{
	if (t->owned)
		close(t->dirfd);
	t->owned = 0;
}

/* Resolves a stream path beneath root (the subvolume, or a clone source). */
static int resolve_in(struct receiver *r, int root, const char *path, int allow_root,
		      struct target *t)
{
	struct recv_dir *slot = NULL;
	char *slash;

	t->owned = 0;
	if (check_path(r, path, allow_root))
		return -1;
	t->dirfd = root;
	if (!*path) {
		t->leaf = ".";
		return 0;
	}
	strcpy(t->buf, path);
	slash = strrchr(t->buf, '/');
	if (!slash) {
		t->leaf = t->buf;
		return 0;
	}
	*slash = 0;
	t->leaf = slash + 1;
	if (root == r->subvol_fd) {
		t->dirfd = dir_cache_get(r, t->buf, &slot);
		if (t->dirfd >= 0)
			return 0;
	}
	t->dirfd = recv_open_beneath(root, t->buf, 0);
	if (t->dirfd < 0) {
		int e = errno;

		if (e == ELOOP || e == EXDEV)
			return rfail(r, 1, "refusing path %s: it leaves the subvolume or goes through a symlink",
				     path);
		return rfail(r, 0, "cannot open directory of %s: %s", path, strerror(e));
	}
	if (slot)
		dir_cache_put(r, slot, t->buf, t->dirfd);
	else
		t->owned = 1;
	return 0;
}

static int resolve(struct receiver *r, const char *path, int allow_root, struct target *t)
{
	if (r->subvol_fd < 0)
		return rfail(r, 1, "stream command before any subvol or snapshot command");
	return resolve_in(r, r->subvol_fd, path, allow_root, t);
}

/* An errno from an operation on a last component: ELOOP means a symlink was in the way. */
static int op_fail(struct receiver *r, const char *op, const char *path, int e)
{
	if (e == ELOOP)
		return rfail(r, 1, "%s %s: refusing to follow a symlink", op, path);
	return rfail(r, 0, "%s %s failed: %s", op, path, strerror(e));
}

/* ---- subvolumes ---- */

static int check_subvol_name(struct receiver *r, const char *name)
{
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > 255)
		return rfail(r, 1, "refusing subvolume name '%s': it must be one plain name", name);
	return 0;
}

/* Opens the new subvolume just created in the destination. */
static int enter_subvol(struct receiver *r, const struct ss_cmd *c)
{
	int fd = openat(r->dest_fd, c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return rfail(r, 1, "cannot open the new subvolume %s: %s", c->path, strerror(errno));
	if (subvol_is_root_dir(fd) != 1) {
		close(fd);
		return rfail(r, 1, "%s is not a subvolume", c->path);
	}
	r->subvol_fd = fd;
	snprintf(r->subvol_name, sizeof(r->subvol_name), "%s", c->path);
	memcpy(r->received_uuid, c->uuid, 16);
	r->stransid = c->ctransid;
	return 0;
}

static int do_subvol(struct receiver *r, const struct ss_cmd *c)
{
	struct btrfs_ioctl_vol_args args;

	if (recv_finish_subvol(r) || check_subvol_name(r, c->path))
		return -1;
	memset(&args, 0, sizeof(args));
	strcpy(args.name, c->path);
	if (ioctl(r->dest_fd, BTRFS_IOC_SUBVOL_CREATE, &args) < 0)
		return rfail(r, 1, "creating subvolume %s failed: %s", c->path, strerror(errno));
	return enter_subvol(r, c);
}

/* Opens subvolume id when it lies beneath one of the search directories (the
 * destination, --search-dir): opened beneath that directory without following
 * symlinks, and checked to be that subvolume. -1 (errno) otherwise. */
static int open_subvol_id(struct receiver *r, uint64_t id)
{
	char *path;
	int fd = -1, ret = subvol_path(r->mnt_fd, id, &path);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	errno = EXDEV;
	for (int i = 0; i < r->nsearch && fd < 0; i++) {
		const char *top = r->search[i].path, *rel;
		uint64_t got;
		int dfd;

		if (strncmp(path, top, strlen(top)))
			continue;
		rel = path + strlen(top);
		if (*top && *rel && *rel++ != '/')
			continue;
		dfd = *rel ? recv_open_beneath(r->search[i].fd, rel, 0) :
			     fcntl(r->search[i].fd, F_DUPFD_CLOEXEC, 0);
		if (dfd < 0)
			continue;
		/* reopen for reading and ioctls (an O_PATH descriptor cannot do either) */
		fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(dfd);
		if (fd >= 0 && (subvol_id_of_fd(fd, &got) < 0 || got != id ||
				subvol_is_root_dir(fd) != 1)) {
			close(fd);
			fd = -1;
			errno = ENOENT;
		}
	}
	free(path);
	return fd;
}

/* The subvolume the sender named by UUID and transid, as btrfs-progs finds it: by
 * received UUID first, then by UUID. Exact matches (stransid, ctransid) come first;
 * then, as btrfs-progs, any read-only one whatever its transid: a snapshot sent back
 * to the filesystem it came from is named by its UUID there with the ctransid of the
 * received copy. Only subvolumes beneath the search directories count. */
static int open_subvol_uuid(struct receiver *r, const uint8_t uuid[16], uint64_t transid)
{
	/* A UUID tree item lists the le64 ids of every subvolume with that UUID (the same
	 * stream received into many directories). */
	uint64_t ids[SUBVOL_UUID_MAX_IDS];
	struct subvol_entry it;
	int pass, n, i, fd = -1;

	for (pass = 0; pass < 4 && fd < 0; pass++) {
		int received = !(pass & 1);

		n = subvol_find_uuid(r->mnt_fd, uuid, received, ids, (int)(sizeof(ids) / 8));
		for (i = 0; i < n && fd < 0; i++) {
			int ret = subvol_get(r->mnt_fd, ids[i], &it);

			subvol_free(&it);
			if (ret < 0 || (pass < 2 ? (received ? it.stransid : it.ctransid) != transid :
					 !(it.flags & BTRFS_ROOT_SUBVOL_RDONLY)))
				continue;
			fd = open_subvol_id(r, ids[i]);
		}
	}
	if (fd < 0)
		errno = ENOENT;
	return fd;
}

static int do_snapshot(struct receiver *r, const struct ss_cmd *c)
{
	struct btrfs_ioctl_vol_args_v2 args;
	int ret;

	if (recv_finish_subvol(r) || check_subvol_name(r, c->path))
		return -1;
	memset(&args, 0, sizeof(args));
	args.fd = open_subvol_uuid(r, c->clone_uuid, c->clone_ctransid);
	if (args.fd < 0)
		return rfail(r, 1, "cannot find parent subvolume of %s", c->path);
	strcpy(args.name, c->path);
	ret = ioctl(r->dest_fd, BTRFS_IOC_SNAP_CREATE_V2, &args);
	close((int)args.fd);
	if (ret < 0)
		return rfail(r, 1, "creating snapshot %s failed: %s", c->path, strerror(errno));
	return enter_subvol(r, c);
}

int recv_finish_subvol(struct receiver *r)
{
	struct btrfs_ioctl_received_subvol_args rs;
	uint64_t flags;
	int fd = r->subvol_fd;

	close_write(r);
	bulk_wait(r);
	dir_cache_drop(r, NULL);
	if (fd < 0)
		return 0;
	r->subvol_fd = -1;
	memset(&rs, 0, sizeof(rs));
	memcpy(rs.uuid, r->received_uuid, 16);
	rs.stransid = r->stransid;
	if (ioctl(fd, BTRFS_IOC_SET_RECEIVED_SUBVOL, &rs) < 0) {
		close(fd);
		return rfail(r, 1, "ioctl BTRFS_IOC_SET_RECEIVED_SUBVOL failed: %s", strerror(errno));
	}
	if (ioctl(fd, BTRFS_IOC_SUBVOL_GETFLAGS, &flags) < 0) {
		close(fd);
		return rfail(r, 1, "ioctl BTRFS_IOC_SUBVOL_GETFLAGS failed: %s", strerror(errno));
	}
	flags |= BTRFS_SUBVOL_RDONLY;
	if (ioctl(fd, BTRFS_IOC_SUBVOL_SETFLAGS, &flags) < 0) {
		close(fd);
		return rfail(r, 1, "failed to make subvolume read only: %s", strerror(errno));
	}
	close(fd);
	return 0;
}

/* ---- creating, renaming and removing entries ---- */

/* Creates what c says at path (c->path, or the name a rename gives it next); reports
 * a failure unless quiet. */
static int create(struct receiver *r, const struct ss_cmd *c, const char *path, int quiet)
{
	struct target t;
	int ret = 0, fd;
	unsigned type = (unsigned)(c->mode & S_IFMT);

	if (resolve(r, path, 0, &t))
		return -1;
	switch (c->type) {
	case SS_C_MKFILE:
		/* kept open: the file's data and attributes follow (after a rename) */
		fd = openat(t.dirfd, t.leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			keep_write(r, fd, path);
		ret = fd < 0 ? -1 : 0;
		break;
	case SS_C_MKDIR:
		ret = mkdirat(t.dirfd, t.leaf, 0700);
		break;
	case SS_C_MKNOD:
		if (type != S_IFCHR && type != S_IFBLK && type != S_IFIFO && type != S_IFSOCK) {
			target_close(&t);
			return rfail(r, 0, "mknod %s: invalid mode 0%llo", path, (unsigned long long)c->mode);
		}
		ret = mknodat(t.dirfd, t.leaf, type, (dev_t)c->rdev);
		break;
	case SS_C_MKFIFO:
		ret = mkfifoat(t.dirfd, t.leaf, 0600);
		break;
	case SS_C_MKSOCK:
		ret = mknodat(t.dirfd, t.leaf, S_IFSOCK | 0600, 0);
		break;
	case SS_C_SYMLINK:
		ret = symlinkat(c->path_link, t.dirfd, t.leaf);
		break;
	}
	if (ret < 0 && !quiet)
		ret = op_fail(r, ss_cmd_name(c->type), path, errno);
	target_close(&t);
	return ret;
}

/* Holds a creating command back (see recv_settle): its strings are copied. */
static int hold_create(struct receiver *r, const struct ss_cmd *c)
{
	if (r->subvol_fd < 0)
		return rfail(r, 1, "stream command before any subvol or snapshot command");
	if (strlen(c->path) >= sizeof(r->held_path) ||
	    (c->path_link && strlen(c->path_link) >= sizeof(r->held_link)))
		return create(r, c, c->path, 0);
	r->held = *c;
	r->held.path = strcpy(r->held_path, c->path);
	if (c->path_link)
		r->held.path_link = strcpy(r->held_link, c->path_link);
	r->holding = 1;
	return 0;
}

int recv_settle(struct receiver *r, const struct ss_cmd *next)
{
	if (!next) {
		bulk_wait(r);
		dir_times_flush(r);
	}
	if (!r->holding)
		return 0;
	r->holding = 0;
	r->err[0] = 0;
	/* the entry goes where the rename puts it: the rename is done then */
	if (next && next->type == SS_C_RENAME && !strcmp(next->path, r->held.path) &&
	    !create(r, &r->held, next->path_to, 1)) {
		r->renamed = 1;
		if (r->held.type == SS_C_MKDIR)
			dir_cache_drop(r, next->path_to);
		return 0;
	}
	return create(r, &r->held, r->held.path, 0);
}

static int do_rename_link(struct receiver *r, const struct ss_cmd *c)
{
	int is_rename = c->type == SS_C_RENAME;
	const char *from = is_rename ? c->path : c->path_link;
	const char *to = is_rename ? c->path_to : c->path;
	/* renaming the cached file keeps its descriptor, under the new name; any other
	 * rename may change what the cached name means. A link changes no existing name. */
	int moves_cached = is_rename && cached_file(r, from) >= 0, moves_dir = 0;
	struct target a, b;
	struct stat st;
	int ret;

	if (is_rename && !moves_cached)
		close_write(r);
	if (resolve(r, from, 0, &a))
		return -1;
	if (resolve(r, to, 0, &b)) {
		target_close(&a);
		return -1;
	}
	/* a directory moved changes the meaning of cached directory paths (see above) */
	if (is_rename && !moves_cached)
		moves_dir = fstatat(a.dirfd, a.leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode);
	ret = is_rename ? renameat(a.dirfd, a.leaf, b.dirfd, b.leaf) :
			  linkat(a.dirfd, a.leaf, b.dirfd, b.leaf, 0);
	if (ret == 0 && moves_cached)
		snprintf(r->write_path, sizeof(r->write_path), "%s", to);
	if (ret < 0)
		ret = rfail(r, 0, "%s %s -> %s failed: %s", is_rename ? "rename" : "link",
			    is_rename ? from : to, is_rename ? to : from, strerror(errno));
	target_close(&a);
	target_close(&b);
	if (moves_dir) {
		dir_cache_drop(r, from);
		dir_cache_drop(r, to);
	}
	return ret;
}

static int do_remove(struct receiver *r, const struct ss_cmd *c)
{
	struct target t;
	int ret;

	close_write(r);
	if (resolve(r, c->path, 0, &t))
		return -1;
	ret = unlinkat(t.dirfd, t.leaf, c->type == SS_C_RMDIR ? AT_REMOVEDIR : 0);
	if (ret < 0)
		ret = op_fail(r, ss_cmd_name(c->type), c->path, errno);
	target_close(&t);
	if (c->type == SS_C_RMDIR)
		dir_cache_drop(r, c->path);
	return ret;
}

/* ---- file data ---- */

/* Opens leaf in dirfd when it is a regular file, looked at before the open: opening a
 * device node that a stream made can act by itself (a watchdog arms, a tape rewinds, a
 * terminal becomes the controlling one) and a fifo can block. -1 with errno (ELOOP for
 * a symlink), -2 for anything else that is not a regular file. */
static int open_regular(int dirfd, const char *leaf, int flags)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (S_ISLNK(st.st_mode))
		errno = ELOOP;
	if (!S_ISREG(st.st_mode))
		return S_ISLNK(st.st_mode) ? -1 : -2;
	fd = openat(dirfd, leaf, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return -2;
	}
	return fd;
}

/* The regular file at path, opened for writing (cached across consecutive commands). */
static int write_fd(struct receiver *r, const char *path)
{
	struct target t;
	int fd;

	fd = cached_file(r, path);
	if (fd >= 0)
		return fd;
	close_write(r);
	if (resolve(r, path, 0, &t))
		return -1;
	fd = open_regular(t.dirfd, t.leaf, O_WRONLY);
	if (fd == -1)
		op_fail(r, "open", path, errno);
	target_close(&t);
	if (fd == -2)
		return rfail(r, 1, "refusing to write to %s: not a regular file", path);
	if (fd < 0)
		return -1;
	keep_write(r, fd, path);
	return fd;
}

static int pwrite_all(struct receiver *r, int fd, const uint8_t *p, uint64_t len, uint64_t off,
		      const char *path)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return rfail(r, 0, "writing to %s failed: %s", path,
				     n < 0 ? strerror(errno) : "no progress");
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int check_range(struct receiver *r, const char *what, const char *path, uint64_t off,
		       uint64_t len)
{
	if (off > INT64_MAX || len > INT64_MAX - off)
		return rfail(r, 1, "%s %s: offset %llu + length %llu out of range", what, path,
			     (unsigned long long)off, (unsigned long long)len);
	return 0;
}

/* ---- a large file written behind (recv_bulk.c) ----
 * When a write reaches RECV_BULK_FROM bytes into the file being written and the second
 * writer is idle, that file's descriptor goes to the second writer, and with it the
 * file's further writes, chmods, chowns and utimes; this thread goes on with the next
 * commands. Commands that could see the file otherwise (all but writes, chmods, chowns
 * and utimes of other paths, and creations) wait for the second writer first
 * (bulk_wait). A stream writes a file through one path, so another path is another
 * file. */
#define RECV_BULK_FROM (1u << 20)

void recv_input_file(struct receiver *r, int fd, uint64_t base)
{
	if (!r->bulk)
		r->bulk = recv_bulk_start(fd, base);
}

/* Takes over the second writer's failure as a message naming its file. */
static void bulk_failure(struct receiver *r)
{
	const char *p = r->bulk_path;
	int what, e;

	if (!r->bulk || !recv_bulk_failed(r->bulk, &what, &e) || r->late_err[0])
		return;
	r->late_fatal = what == RECV_BULK_REREAD;
	if (r->late_fatal)
		snprintf(r->late_err, sizeof(r->late_err), "reading the data of %s again from the stream file failed: %s",
			 p, strerror(e));
	else if (what == SS_C_WRITE)
		snprintf(r->late_err, sizeof(r->late_err), "writing to %s failed: %s", p, strerror(e));
	else
		snprintf(r->late_err, sizeof(r->late_err), "%s %s failed: %s", ss_cmd_name((unsigned)what),
			 p, strerror(e));
}

int recv_failed_behind(struct receiver *r)
{
	bulk_failure(r);
	if (!r->late_err[0])
		return 0;
	rfail(r, r->late_fatal, "%s", r->late_err);
	r->late_err[0] = 0;
	return -1;
}

/* Waits until the second writer is done with its file and closed it (a failure there
 * is left for recv_failed_behind). */
static void bulk_wait(struct receiver *r)
{
	if (!r->bulk || r->bulk_fd < 0)
		return;
	recv_bulk_close(r->bulk, r->bulk_fd);
	r->bulk_fd = -1;
	recv_bulk_wait(r->bulk);
	bulk_failure(r);
}

/* Whether c can go on while the second writer works. */
static int bulk_independent(const struct ss_cmd *c)
{
	switch (c->type) {
	case SS_C_WRITE: case SS_C_CHMOD: case SS_C_CHOWN: case SS_C_UTIMES:
	case SS_C_MKFILE: case SS_C_MKDIR: case SS_C_MKNOD: case SS_C_MKFIFO:
	case SS_C_MKSOCK: case SS_C_SYMLINK:
		return 1;
	}
	return 0;
}

/* Hands c, a write, chmod, chown or utimes, to the second writer when it is for the file
 * there, or when it is a write far enough into the cached file and the second writer is
 * idle (the cached file goes there then). 1: handed over; 0: c is for this thread. */
static int bulk_take(struct receiver *r, const struct ss_cmd *c)
{
	if (!r->bulk)
		return 0;
	if (r->bulk_fd < 0 || strcmp(c->path, r->bulk_path)) {
		if (c->type != SS_C_WRITE || c->file_offset < RECV_BULK_FROM ||
		    cached_file(r, c->path) < 0 || !recv_bulk_idle(r->bulk))
			return 0;
		bulk_wait(r);
		r->bulk_fd = r->write_fd;
		memcpy(r->bulk_path, r->write_path, sizeof(r->bulk_path));
		r->write_fd = -1;
		r->write_path[0] = 0;
	}
	recv_bulk_cmd(r->bulk, r->bulk_fd, c);
	return 1;
}

static int do_write(struct receiver *r, const struct ss_cmd *c)
{
	int fd;

	if (check_range(r, "write", c->path, c->file_offset, c->data_len))
		return -1;
	if (bulk_take(r, c))
		return 0;
	fd = write_fd(r, c->path);
	return fd < 0 ? -1 : pwrite_all(r, fd, c->data, c->data_len, c->file_offset, c->path);
}

/* Opens the regular file clone_path of the clone source subvolume for reading. */
static int open_clone_source(struct receiver *r, const struct ss_cmd *c)
{
	struct target t;
	int root, fd;

	if (!memcmp(c->clone_uuid, r->received_uuid, 16))
		root = fcntl(r->subvol_fd, F_DUPFD_CLOEXEC, 0);
	else
		root = open_subvol_uuid(r, c->clone_uuid, c->clone_ctransid);
	if (root < 0)
		return rfail(r, 0, "clone: did not find source subvol for %s", c->path);
	if (resolve_in(r, root, c->clone_path, 0, &t)) {
		close(root);
		return -1;
	}
	fd = open_regular(t.dirfd, t.leaf, O_RDONLY);
	if (fd == -1)
		op_fail(r, "clone: open source", c->clone_path, errno);
	target_close(&t);
	close(root);
	if (fd == -2)
		return rfail(r, 1, "clone: source %s is not a regular file", c->clone_path);
	return fd;
}

static int do_clone(struct receiver *r, const struct ss_cmd *c)
{
	struct file_clone_range fcr;
	int fd, src;

	if (check_range(r, "clone", c->path, c->file_offset, c->clone_len) ||
	    check_range(r, "clone", c->clone_path, c->clone_offset, c->clone_len))
		return -1;
	fd = write_fd(r, c->path);
	if (fd < 0)
		return -1;
	src = open_clone_source(r, c);
	if (src < 0)
		return -1;
	fcr = (struct file_clone_range){ .src_fd = src, .src_offset = c->clone_offset,
					 .src_length = c->clone_len, .dest_offset = c->file_offset };
	if (ioctl(fd, FICLONERANGE, &fcr) < 0) {
		close(src);
		return rfail(r, 0, "failed to clone extents to %s: %s", c->path, strerror(errno));
	}
	close(src);
	return 0;
}

static int do_truncate_fallocate(struct receiver *r, const struct ss_cmd *c)
{
	int fd, ret;

	if (check_range(r, ss_cmd_name(c->type), c->path,
			c->type == SS_C_FALLOCATE ? c->file_offset : 0, c->size))
		return -1;
	fd = write_fd(r, c->path);
	if (fd < 0)
		return -1;
	ret = c->type == SS_C_TRUNCATE ? ftruncate(fd, (off_t)c->size) :
		fallocate(fd, (int)c->fallocate_mode, (off_t)c->file_offset, (off_t)c->size);
	return ret < 0 ? rfail(r, 0, "%s %s failed: %s", ss_cmd_name(c->type), c->path,
			       strerror(errno)) : 0;
}

/* Largest unencoded extent accepted from a stream (the kernel sends at most 128 KiB). */
#define MAX_UNENCODED_LEN (16u << 20)

/* The on-disk algorithm and sector size of an encoded-write compression value. */
static int encoded_algorithm(uint32_t compression, uint32_t *sectorsize)
{
	*sectorsize = 4096;
	switch (compression) {
	case BTRFS_ENCODED_IO_COMPRESSION_ZLIB: return FS_COMPRESS_ZLIB;
	case BTRFS_ENCODED_IO_COMPRESSION_ZSTD: return FS_COMPRESS_ZSTD;
	case BTRFS_ENCODED_IO_COMPRESSION_LZO_4K: case BTRFS_ENCODED_IO_COMPRESSION_LZO_8K:
	case BTRFS_ENCODED_IO_COMPRESSION_LZO_16K: case BTRFS_ENCODED_IO_COMPRESSION_LZO_32K:
	case BTRFS_ENCODED_IO_COMPRESSION_LZO_64K:
		/* lzo frames its segments by the sender's sector size */
		*sectorsize = 4096u << (compression - BTRFS_ENCODED_IO_COMPRESSION_LZO_4K);
		return FS_COMPRESS_LZO;
	}
	return -1;
}

/* Fallback when the filesystem does not take the encoded data as is: decompress the
 * whole extent and write the part of it that belongs to the file. */
static int decompress_write(struct receiver *r, int fd, const struct ss_cmd *c)
{
	uint32_t sectorsize;
	int type = encoded_algorithm(c->compression, &sectorsize), ret;
	uint8_t *buf;
	size_t got;

	if (type < 0)
		return rfail(r, 0, "encoded_write %s: unknown compression %u", c->path, c->compression);
	if (c->unencoded_len > MAX_UNENCODED_LEN)
		return rfail(r, 1, "encoded_write %s: extent of %llu bytes too large", c->path,
			     (unsigned long long)c->unencoded_len);
	buf = calloc(1, c->unencoded_len ? c->unencoded_len : 1);
	if (!buf)
		return rfail(r, 0, "encoded_write %s: out of memory", c->path);
	/* a short result leaves zeros, as a short extent reads back */
	ret = fs_decompress(&r->inflater, type, c->data, c->data_len, buf, c->unencoded_len, &got, sectorsize);
	if (ret < 0)
		ret = rfail(r, 0, "encoded_write %s: cannot decompress: %s", c->path, strerror(-ret));
	else
		ret = pwrite_all(r, fd, buf + c->unencoded_offset, c->unencoded_file_len,
				 c->file_offset, c->path);
	free(buf);
	return ret;
}

/* Data compressed as btrfs stores it: written as is through the encoded-write ioctl. */
static int do_encoded_write(struct receiver *r, const struct ss_cmd *c)
{
	struct iovec iov = { (void *)c->data, c->data_len };
	struct btrfs_ioctl_encoded_io_args args = {
		.iov = &iov, .iovcnt = 1, .offset = (__s64)c->file_offset,
		.len = c->unencoded_file_len, .unencoded_len = c->unencoded_len,
		.unencoded_offset = c->unencoded_offset, .compression = c->compression,
		.encryption = c->encryption,
	};
	int fd;

	if (c->encryption)
		return rfail(r, 0, "encoded_write %s: encryption not supported", c->path);
	if (c->unencoded_offset > c->unencoded_len ||
	    c->unencoded_file_len > c->unencoded_len - c->unencoded_offset ||
	    check_range(r, "encoded_write", c->path, c->file_offset, c->unencoded_file_len))
		return rfail(r, 1, "encoded_write %s: inconsistent lengths", c->path);
	fd = write_fd(r, c->path);
	if (fd < 0)
		return -1;
	if (!r->force_decompress) {
		if (ioctl(fd, BTRFS_IOC_ENCODED_WRITE, &args) >= 0)
			return 0;
		if (errno != ENOSPC && errno != ENOTTY && errno != EINVAL && errno != EPERM)
			return rfail(r, 0, "encoded_write: writing to %s failed: %s", c->path,
				     strerror(errno));
	}
	return decompress_write(r, fd, c);
}

/* ---- metadata ---- */

static int xattr_on_fd(int fd, const struct ss_cmd *c)
{
	return c->type == SS_C_SET_XATTR ?
		fsetxattr(fd, c->xattr_name, c->xattr_data, c->xattr_len, 0) :
		fremovexattr(fd, c->xattr_name);
}

/* Sets or removes an xattr on the entry itself, never through a symlink. */
static int do_xattr(struct receiver *r, const struct ss_cmd *c)
{
	int set = c->type == SS_C_SET_XATTR, ret, fd;
	struct target t;
	struct stat st;

	fd = cached_file(r, c->path);
	if (fd >= 0) {
		ret = xattr_on_fd(fd, c);
		return ret < 0 ? op_fail(r, set ? "set_xattr" : "remove_xattr", c->path, errno) : 0;
	}
	if (resolve(r, c->path, 1, &t))
		return -1;
	ret = fstatat(t.dirfd, t.leaf, &st, AT_SYMLINK_NOFOLLOW);
	if (ret == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
		fd = openat(t.dirfd, t.leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		ret = fd < 0 ? -1 : xattr_on_fd(fd, c);
		if (fd >= 0)
			close(fd);
	} else if (ret == 0) {
		/* symlinks and special files cannot be opened safely: name the entry through
		 * the already confined directory descriptor, without following the last part */
		char p[64 + PATH_MAX];

		snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", t.dirfd, t.leaf);
		ret = set ? lsetxattr(p, c->xattr_name, c->xattr_data, c->xattr_len, 0) :
			    lremovexattr(p, c->xattr_name);
	}
	if (ret < 0)
		ret = op_fail(r, set ? "set_xattr" : "remove_xattr", c->path, errno);
	target_close(&t);
	return ret;
}

/* fchown, unless the file already has those owners and no set-id bit for the chown to
 * clear: then it would change nothing but the ctime, at the cost of an inode update
 * (a received file is created by this process, usually as the owner the stream names). */
static int chown_fd(int fd, uid_t uid, gid_t gid)
{
	struct stat st;

	if (!fstat(fd, &st) && st.st_uid == uid && st.st_gid == gid && !(st.st_mode & (S_ISUID | S_ISGID)))
		return 0;
	return fchown(fd, uid, gid);
}

/* Holds a utimes of a cached directory back until the entry leaves the cache or the
 * stream ends: a send stream sets a directory's times again after each entry it adds
 * (as many utimes as entries), and only the last one stays. 1 when held. */
static int hold_dir_times(struct receiver *r, const char *path, const struct timespec ts[2])
{
	struct recv_dir *slot;

	if (dir_cache_get(r, path, &slot) < 0)
		return 0;
	slot->times[0] = ts[0];
	slot->times[1] = ts[1];
	slot->times_held = 1;
	return 1;
}

static int do_attr(struct receiver *r, const struct ss_cmd *c)
{
	struct timespec ts[2] = {
		{ (time_t)c->atime.sec, (long)c->atime.nsec },
		{ (time_t)c->mtime.sec, (long)c->mtime.nsec },
	};
	struct target t;
	struct stat st;
	int ret = 0, fd;

	if (c->type == SS_C_UTIMES && (c->atime.nsec >= 1000000000u || c->mtime.nsec >= 1000000000u))
		return rfail(r, 0, "utimes %s: invalid nanoseconds", c->path);
	if (bulk_take(r, c))
		return 0;
	fd = cached_file(r, c->path);
	if (fd >= 0) {
		ret = c->type == SS_C_CHMOD ? fchmod(fd, (mode_t)(c->mode & 07777)) :
		      c->type == SS_C_CHOWN ? chown_fd(fd, (uid_t)c->uid, (gid_t)c->gid) :
		      futimens(fd, ts);
		return ret < 0 ? op_fail(r, ss_cmd_name(c->type), c->path, errno) : 0;
	}
	/* the cache's paths are checked ones: a path found there needs no check */
	if (c->type == SS_C_UTIMES && hold_dir_times(r, c->path, ts))
		return 0;
	if (resolve(r, c->path, 1, &t))
		return -1;
	switch (c->type) {
	case SS_C_CHMOD:
		ret = fstatat(t.dirfd, t.leaf, &st, AT_SYMLINK_NOFOLLOW);
		if (ret == 0 && S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			ret = -1;
		} else if (ret == 0) {
			ret = fchmodat(t.dirfd, t.leaf, (mode_t)(c->mode & 07777), 0);
		}
		break;
	case SS_C_CHOWN:
		ret = fchownat(t.dirfd, t.leaf, (uid_t)c->uid, (gid_t)c->gid, AT_SYMLINK_NOFOLLOW);
		break;
	case SS_C_UTIMES:
		ret = utimensat(t.dirfd, t.leaf, ts, AT_SYMLINK_NOFOLLOW);
		break;
	}
	if (ret < 0)
		ret = op_fail(r, ss_cmd_name(c->type), c->path, errno);
	target_close(&t);
	return ret;
}

static int do_enable_verity(struct receiver *r, const struct ss_cmd *c)
{
#ifdef FS_IOC_ENABLE_VERITY
	struct fsverity_enable_arg va = {
		.version = 1, .hash_algorithm = c->verity_algorithm,
		.block_size = c->verity_block_size,
		.salt_size = c->verity_salt_len, .salt_ptr = (uintptr_t)c->verity_salt,
		.sig_size = c->verity_sig_len, .sig_ptr = (uintptr_t)c->verity_sig,
	};
	struct target t;
	int fd, ret;

	close_write(r);             /* verity refuses files open for writing */
	if (resolve(r, c->path, 0, &t))
		return -1;
	fd = open_regular(t.dirfd, t.leaf, O_RDONLY);
	if (fd == -1)
		op_fail(r, "enable_verity", c->path, errno);
	target_close(&t);
	if (fd == -2)
		return rfail(r, 1, "enable_verity %s: not a regular file", c->path);
	if (fd < 0)
		return -1;
	if (ioctl(fd, FS_IOC_ENABLE_VERITY, &va) < 0)
		ret = rfail(r, 0, "failed to enable verity on %s: %s", c->path, strerror(errno));
	else
		ret = 0;
	close(fd);
	return ret;
#else
	return rfail(r, 0, "enable_verity %s: fs-verity not supported by this build", c->path);
#endif
}

int recv_apply(struct receiver *r, const struct ss_cmd *c)
{
	r->err[0] = 0;
	if (r->renamed) {               /* c is the rename recv_settle did */
		r->renamed = 0;
		return 0;
	}
	if (!bulk_independent(c))
		bulk_wait(r);
	switch (c->type) {
	case SS_C_SUBVOL: return do_subvol(r, c);
	case SS_C_SNAPSHOT: return do_snapshot(r, c);
	case SS_C_MKFILE: case SS_C_MKDIR: case SS_C_MKNOD: case SS_C_MKFIFO:
	case SS_C_MKSOCK: case SS_C_SYMLINK:
		return hold_create(r, c);
	case SS_C_RENAME: case SS_C_LINK: return do_rename_link(r, c);
	case SS_C_UNLINK: case SS_C_RMDIR: return do_remove(r, c);
	case SS_C_SET_XATTR: case SS_C_REMOVE_XATTR: return do_xattr(r, c);
	case SS_C_WRITE: return do_write(r, c);
	case SS_C_CLONE: return do_clone(r, c);
	case SS_C_TRUNCATE: case SS_C_FALLOCATE: return do_truncate_fallocate(r, c);
	case SS_C_CHMOD: case SS_C_CHOWN: case SS_C_UTIMES: return do_attr(r, c);
	case SS_C_ENCODED_WRITE: return do_encoded_write(r, c);
	case SS_C_ENABLE_VERITY: return do_enable_verity(r, c);
	case SS_C_UPDATE_EXTENT:   /* --no-data streams: nothing to write */
	case SS_C_FILEATTR:        /* ignored, as by the reference (flags need translating) */
		return r->subvol_fd < 0 ? rfail(r, 1, "stream command before any subvol or snapshot command") : 0;
	}
	return rfail(r, 1, "unexpected command %u", c->type);
}
