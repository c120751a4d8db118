/* btrfs scrub of an unmounted device or image file: the engine's offline scrub
 * (fs/scrub/scrub.c) over the parts of each device, by as many threads as there are CPUs,
 * each with its own open of the filesystem (an engine handle is not shared between
 * threads). The devices are opened for writing once, before the threads start, for
 * the in-place repairs. While it runs, a locked file in the runtime directory
 * (/run/btrfs, or $BTRFS_SCRUB_STATE_DIR) holds the pid that `btrfs scrub cancel`
 * signals; scrub.c keeps the status file as for a scrub through the kernel. */
//config:config SCRUB_OFFLINE
//config:	bool "btrfs scrub of unmounted filesystems"
//config:	default y
//config:	depends on APPLET_SCRUB
//config:	help
//config:	  Scrub a device or image file that is not mounted: read every copy of
//config:	  every tree block and data sector, verify them and rewrite bad copies
//config:	  from good ones, without the kernel.
#include "config.h"
#if CFG_SCRUB_OFFLINE
#include "offline.h"
#include "fs/core/backref.h"
#include "fs/scrub/scrub.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/scrub_status.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct devrun {                         /* one device being scrubbed */
	uint64_t devid;
	struct fs_scrub_part *parts;
	size_t nparts, next;
	uint8_t *done;                      /* per part */
	struct btrfs_scrub_progress p;      /* what the parts found so far */
	int err;                            /* errno that stopped a part */
};

struct scrub_offline {
	struct fs *fs;                      /* planning, status; the workers open their own */
	const char **paths;                 /* every device, in fs->devs order */
	int *wfd;                           /* per device: opened for repairs, or -1 */
	int readonly, workers, ndev, lockfd;
	volatile int cancel;
	int lock;                           /* over runs and printing: a spinlock, held briefly */
	struct devrun *runs;                /* per device given */
	char fsid[UUID_STR_LEN];
};

static void lock(struct scrub_offline *o)
{
	while (__atomic_exchange_n(&o->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(struct scrub_offline *o)
{
	__atomic_store_n(&o->lock, 0, __ATOMIC_RELEASE);
}

/* ---- is it mounted? ---- */

/* The kernel holds the devices of a mounted filesystem exclusively. */
static int busy(const char *dev)
{
	int fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == EBUSY;
}

struct loop_query {
	const struct stat *file;
	char dev[64];
};

/* A busy loop device backed by the image file. */
static int loop_of_file(unsigned major, unsigned minor, uint64_t blocks, const char *name, void *ctx)
{
	struct loop_query *q = ctx;
	char path[128], back[4096];
	struct stat st;
	ssize_t n;
	int fd;

	(void)major, (void)minor, (void)blocks;
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	if (strncmp(name, "loop", 4) || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, back, sizeof(back) - 1);
	close(fd);
	back[n > 0 ? n : 0] = 0;
	back[strcspn(back, "\n")] = 0;
	snprintf(q->dev, sizeof(q->dev), "/dev/%s", name);
	return !stat(back, &st) && st.st_dev == q->file->st_dev && st.st_ino == q->file->st_ino && busy(q->dev);
}

int scrub_offline_target(const char **path)
{
	static struct loop_query q;
	struct stat st;

	if (stat(*path, &st) || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
		return 0;
	if (S_ISBLK(st.st_mode))
		return !busy(*path);
	q.file = &st;
	if (sysfile_each_partition(loop_of_file, &q) <= 0)
		return 1;
	*path = q.dev;
	return 0;
}

/* ---- the lock file of a running scrub ---- */

static void lock_path(const char *fsid, char *out, size_t size)
{
	const char *dir = getenv(SCRUB_STATUS_DIR_ENV);

	if (!dir || !*dir) {
		dir = SCRUB_STATUS_DIR_FALLBACK;
		mkdir(dir, 0755);
	}
	snprintf(out, size, "%s/scrub.offline.%s", dir, fsid);
}

void scrub_offline_mark_running(struct scrub_offline *o)
{
	char path[4200], pid[16];

	lock_path(o->fsid, path, sizeof(path));
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	o->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (o->lockfd < 0 || flock(o->lockfd, LOCK_EX | LOCK_NB) || ftruncate(o->lockfd, 0) ||
	    write(o->lockfd, pid, strlen(pid)) < 0) {
		if (!out_quiet())
			msg_warn("cannot record the running scrub in %s: %m (scrub cancel will not find it)", path);
	}
}

int scrub_offline_running(const char *fsid)
{
	char path[4200], buf[32] = "";
	int fd, pid = 0;

	lock_path(fsid, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) && read(fd, buf, sizeof(buf) - 1) > 0)
		pid = atoi(buf);
	close(fd);
	return pid;
}

/* ---- opening ---- */

struct scrub_offline *scrub_offline_open(char *const *paths, int n, int writable, uint8_t fsid[16],
					 struct btrfs_ioctl_dev_info_args **di, int *ndev)
{
	struct scrub_offline *o = calloc(1, sizeof(*o));
	struct fs_open_opts opts;
	struct fs_error err;
	char buf[400];
	cpu_set_t cpus;   /* the CPUs this process may run on, as musl's _SC_NPROCESSORS_ONLN */
	int ncpus = sched_getaffinity(0, sizeof(cpus), &cpus) ? 1 : CPU_COUNT(&cpus);

	fs_open_opts_init(&opts);
	opts.allow_degraded = 1;
	opts.scan = 1;
	if (!o || !(o->fs = fs_open((const char *const *)paths, n, &opts, &err))) {
		msg_error("cannot open %s: %s", paths[0], o ? fs_error_format(&err, buf, sizeof(buf)) : "out of memory");
		free(o);
		return NULL;
	}
	o->lockfd = -1;
	o->readonly = !writable;
	o->ndev = n;
	o->workers = ncpus > n ? ncpus / n : 1;
	uuid_unparse(o->fs->fsid, o->fsid);
	memcpy(fsid, o->fs->fsid, 16);
	if (fs_missing_devids(o->fs, NULL, 0) && !out_quiet())
		msg_warn("%s: their copies are neither scrubbed nor used for repairs", err.msg);
	o->paths = calloc((size_t)o->fs->num_devs, sizeof(*o->paths));
	o->wfd = calloc((size_t)o->fs->num_devs, sizeof(*o->wfd));
	o->runs = calloc((size_t)n, sizeof(*o->runs));
	*di = calloc((size_t)n, sizeof(**di));
	if (!o->paths || !o->wfd || !o->runs || !*di) {
		msg_error("out of memory");
		goto fail;
	}
	for (int i = 0; i < o->fs->num_devs; i++) {
		struct fs_device *d = &o->fs->devs[i];

		o->paths[i] = d->path;
		o->wfd[i] = writable ? fs_scrub_open_rw(d->path) : -1;
		if (o->wfd[i] < 0 && writable) {
			msg_error("cannot open %s for repairs: %s%s", d->path, strerror(-o->wfd[i]),
				  o->wfd[i] == -EBUSY ? " (mounted?)" : "");
			goto fail;
		}
		if (i >= n)
			continue;
		o->runs[i].devid = (*di)[i].devid = d->devid;
		(*di)[i].bytes_used = get_le64(&d->sb.dev_item.bytes_used);
		(*di)[i].total_bytes = d->total_bytes;
		snprintf((char *)(*di)[i].path, sizeof((*di)[i].path), "%s", d->path);
	}
	*ndev = n;
	return o;
fail:
	free(*di);
	*di = NULL;
	scrub_offline_close(o);
	return NULL;
}

void scrub_offline_close(struct scrub_offline *o)
{
	if (!o)
		return;
	for (int i = 0; o->wfd && i < o->fs->num_devs; i++)
		if (o->wfd[i] > 0)
			close(o->wfd[i]);
	for (int i = 0; o->runs && i < o->ndev; i++) {
		free(o->runs[i].parts);
		free(o->runs[i].done);
	}
	if (o->lockfd >= 0)
		close(o->lockfd);
	free(o->runs);
	free(o->wfd);
	free(o->paths);
	fs_close(o->fs);
	free(o);
}

/* ---- running ---- */

static struct devrun *run_of(struct scrub_offline *o, uint64_t devid)
{
	for (int i = 0; i < o->ndev; i++)
		if (o->runs[i].devid == devid)
			return &o->runs[i];
	return &o->runs[0];
}

static const char *const error_kind[] = { "error", "read error", "checksum error", "verify error",
					  "parity error" };

struct ref_print {
	struct fs *fs;
	const struct fs_scrub_error *e;
	const char *head;
	int n;
};

/* One line per file holding the bad sector (the kernel's form of it). */
static int print_ref(void *ctx, const struct fs_data_ref *r)
{
	struct ref_print *pr = ctx;
	struct fs_root root;
	char path[4096];

	if (fs_root_lookup(pr->fs, r->root, &root) || fs_ino_path(pr->fs, &root, r->ino, path, sizeof(path)))
		strcpy(path, "unknown");
	msg_error("%s, root %llu, inode %llu, offset %llu (path: %s)", pr->head, (unsigned long long)r->root,
		  (unsigned long long)r->ino, (unsigned long long)(r->offset + pr->e->logical - r->bytenr), path);
	return ++pr->n >= 16;
}

static void report(void *ctx, struct fs *fs, const struct fs_scrub_error *e)
{
	struct scrub_offline *o = ctx;
	struct ref_print pr = { fs, e, NULL, 0 };
	struct fs_device *d = fs_device_by_id(fs, e->devid);
	char head[600];

	if (out_quiet())
		return;
	snprintf(head, sizeof(head), "%s%s at logical %llu on dev %s, physical %llu, length %u",
		 e->corrected && !e->write_error ? (o->readonly ? "correctable " : "fixed up ") : "unable to fix ",
		 error_kind[e->kind], (unsigned long long)e->logical, d ? d->path : "?",
		 (unsigned long long)e->physical, e->len);
	pr.head = head;
	lock(o);
	if (e->corrected && !e->write_error)
		msg_warn("%s", head);
	else if (e->write_error)
		msg_error("%s: rewrite failed: %s", head, strerror(-e->write_error));
	else if (e->metadata || e->kind == FS_SCRUB_PARITY || fs_data_refs(fs, e->logical, print_ref, &pr) < 0 || !pr.n)
		msg_error("%s%s", head, e->metadata ? " (tree block)" : "");
	unlock(o);
}

struct worker {
	struct scrub_offline *o;
	struct devrun *r;
	pthread_t thread;
};

/* Scrubs parts of a device until none is left, with a filesystem handle of its own. */
static void *work(void *arg)
{
	struct worker *w = arg;
	struct scrub_offline *o = w->o;
	struct devrun *r = w->r;
	struct fs_open_opts opts;
	struct fs_error err;
	char buf[400];
	struct fs_scrub s = { .readonly = o->readonly, .write_fd = o->wfd, .report = report, .ctx = o,
			      .cancel = &o->cancel };
	int ret = 0;

	fs_open_opts_init(&opts);
	opts.allow_degraded = 1;
	if (!(s.fs = fs_open(o->paths, o->fs->num_devs, &opts, &err))) {
		fs_error_format(&err, buf, sizeof(buf));
		ret = err.code ? err.code : -EIO;
	}
	while (s.fs && !o->cancel) {
		struct btrfs_scrub_progress p;
		size_t i;

		memset(&p, 0, sizeof(p));
		lock(o);
		i = r->next < r->nparts ? r->next++ : r->nparts;
		unlock(o);
		if (i == r->nparts)
			break;
		ret = fs_scrub_run(&s, &r->parts[i], &p);
		if (ret && ret != -ECANCELED)
			fs_error_format(&s.fs->err, buf, sizeof(buf));
		lock(o);
		scrub_progress_add(&r->p, &p);
		r->done[i] = !ret;
		if (ret && ret != -ECANCELED) {
			r->err = -ret;
			msg_error("scrub of devid %llu stopped at physical %llu: %s", (unsigned long long)r->devid,
				  (unsigned long long)p.last_physical, buf);
		}
		unlock(o);
	}
	if (!s.fs) {
		lock(o);
		r->err = -ret;
		msg_error("cannot open the filesystem: %s", buf);
		unlock(o);
	}
	fs_scrub_free(&s);
	fs_close(s.fs);
	return NULL;
}

int scrub_offline_dev(struct scrub_offline *o, struct btrfs_ioctl_scrub_args *a)
{
	struct devrun *r = run_of(o, a->devid);
	struct fs_device *d = fs_device_by_id(o->fs, a->devid);
	struct worker *w = calloc((size_t)o->workers, sizeof(*w));
	int i, started;

	if (!w || fs_scrub_parts(o->fs, a->devid, &r->parts, &r->nparts) ||
	    !(r->done = calloc(r->nparts + 1, 1))) {
		free(w);
		errno = ENOMEM;
		return -1;
	}
	while (r->next < r->nparts && r->parts[r->next].end <= a->start)
		r->done[r->next++] = 1;
	if (!a->start && d)
		fs_scrub_supers(o->fs, d, &r->p);
	for (started = 0; started < o->workers; started++) {
		w[started] = (struct worker){ o, r, 0 };
		if (started && pthread_create(&w[started].thread, NULL, work, &w[started]))
			break;
	}
	work(&w[0]);
	for (i = 1; i < started; i++)
		pthread_join(w[i].thread, NULL);
	free(w);
	scrub_offline_progress(o, a->devid, &a->progress);
	errno = o->cancel ? ECANCELED : r->err;
	return errno ? -1 : 0;
}

void scrub_offline_progress(struct scrub_offline *o, uint64_t devid, struct btrfs_scrub_progress *p)
{
	struct devrun *r = run_of(o, devid);
	size_t i;

	lock(o);
	*p = r->p;
	for (i = 0; i < r->nparts && r->done[i]; i++)
		;
	p->last_physical = i < r->nparts ? r->parts[i].start : r->nparts ? r->parts[r->nparts - 1].end : 0;
	unlock(o);
}

void scrub_offline_cancel(struct scrub_offline *o)
{
	o->cancel = 1;
}

int scrub_offline_cancel_path(const char *path)
{
	struct btrfs_super_block sb;
	char fsid[UUID_STR_LEN];
	int pid, i;

	if (fs_super_read(path, 0, &sb, NULL)) {
		msg_error("%s: not a btrfs filesystem", path);
		return 1;
	}
	uuid_unparse(sb.fsid, fsid);
	pid = scrub_offline_running(fsid);
	if (!pid || kill(pid, SIGINT)) {
		msg_error("scrub cancel failed on %s: not running", path);
		return 2;
	}
	/* like the kernel's cancel, return when the scrub has stopped */
	for (i = 0; i < 600 && scrub_offline_running(fsid); i++)
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	out_say("scrub cancelled\n");
	return 0;
}
#endif
