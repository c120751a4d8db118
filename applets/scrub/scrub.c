/* btrfs scrub: start, resume, cancel, status. One thread per device runs
 * BTRFS_IOC_SCRUB (or, for an unmounted device or image, the offline scrub of
 * applets/scrub/offline.c) while the main thread polls the progress and records it in the
 * status file shared with btrfs-progs (scrub.status.FSID). */
//config:config APPLET_SCRUB
//config:	bool "btrfs scrub"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Verify checksums of data and metadata of a mounted filesystem
//config:	  and repair from good copies.
//cmd:APPLET_SCRUB scrub_start_main btrfs scrub start|Start a new scrub
//cmd:APPLET_SCRUB scrub_cancel_main btrfs scrub cancel|Cancel a running scrub
//cmd:APPLET_SCRUB scrub_resume_main btrfs scrub resume|Resume a canceled or interrupted scrub
//cmd:APPLET_SCRUB scrub_status_main btrfs scrub status|Show the status of a running or finished scrub
//cmd:APPLET_SCRUB scrub_limit_main btrfs scrub limit|Show or set the scrub speed limits

#include "config.h"
#if CFG_APPLET_SCRUB
#include "offline.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/table.h"
#include "util/cli/timefmt.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/scrub_status.h"
#include "util/strnum.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

/* ---- reports (the layout of btrfs-progs) ---- */

static unsigned unit_mode = UNITS_DEFAULT;

static void print_raw_progress(const struct btrfs_scrub_progress *p)
{
#define RAW(name) out_say("\t%s: %lld\n", #name, (long long)p->name);
	RAW(data_extents_scrubbed) RAW(tree_extents_scrubbed) RAW(data_bytes_scrubbed)
	RAW(tree_bytes_scrubbed) RAW(read_errors) RAW(csum_errors) RAW(verify_errors)
	RAW(no_csum) RAW(csum_discards) RAW(super_errors) RAW(malloc_errors)
	RAW(uncorrectable_errors) RAW(unverified_errors) RAW(corrected_errors)
	RAW(last_physical)
#undef RAW
}

static void print_summary(const struct btrfs_scrub_progress *p, const struct scrub_stats *s,
			  uint64_t total)
{
	uint64_t done = p->data_bytes_scrubbed + p->tree_bytes_scrubbed;
	uint64_t rate = s->duration ? done / s->duration : 0;
	uint64_t left = rate ? (total - done) / rate : 0;
	uint64_t errs = p->read_errors + p->csum_errors + p->verify_errors + p->super_errors;
	char b1[UNITS_BUF], b2[UNITS_BUF];

	if (p->malloc_errors)
		out_say("*** WARNING: memory allocation failed while scrubbing. results may be inaccurate\n");
	if (s->in_progress) {
		time_t eta = time(NULL) + (time_t)left;
		char t[256];
		struct tm tm;

		localtime_r(&eta, &tm);
		tm_format(t, sizeof(t), "%c", &tm);
		out_say("Time left:        %llu:%02llu:%02llu\n", (unsigned long long)left / 3600,
		    (unsigned long long)(left / 60) % 60, (unsigned long long)left % 60);
		out_say("ETA:              %s\n", t);
		out_say("Total to scrub:   %s\n", pretty_size_mode(total, unit_mode, b1));
		out_say("Bytes scrubbed:   %s  (%.2f%%)\n", pretty_size_mode(done, unit_mode, b2), 100.0 * done / total);
	} else {
		out_say("Total to scrub:   %s\n", pretty_size_mode(total, unit_mode, b1));
	}
	/* the rate follows only --raw, otherwise it is human readable */
	out_say("Rate:             %s/s\n", pretty_size_mode(rate, unit_mode == UNITS_RAW ? UNITS_RAW :
						      UNITS_DEFAULT, b1));
	out_say("Error summary:   ");
	if (errs || p->corrected_errors || p->uncorrectable_errors) {
		if (p->read_errors)
			out_say(" read=%llu", (unsigned long long)p->read_errors);
		if (p->super_errors)
			out_say(" super=%llu", (unsigned long long)p->super_errors);
		if (p->verify_errors)
			out_say(" verify=%llu", (unsigned long long)p->verify_errors);
		if (p->csum_errors)
			out_say(" csum=%llu", (unsigned long long)p->csum_errors);
		out_say("\n  Corrected:      %llu\n", (unsigned long long)p->corrected_errors);
		out_say("  Uncorrectable:  %llu\n", (unsigned long long)p->uncorrectable_errors);
		out_say("  Unverified:     %llu\n", (unsigned long long)p->unverified_errors);
	} else {
		out_say(" no errors found\n");
	}
}

static void print_stats_head(const struct scrub_stats *s)
{
	time_t t = (time_t)(s && s->t_resumed ? s->t_resumed : s ? s->t_start : 0);
	char buf[256];
	struct tm tm;

	if (!s || !s->t_start) {
		out_say("\tno stats available\n");
		return;
	}
	localtime_r(&t, &tm);
	tm_format(buf, sizeof(buf), "%c", &tm);
	out_say("Scrub %s:    %s\n", s->t_resumed ? "resumed" : "started", buf);
	out_say("Status:           %s\n", s->in_progress ? "running" : s->canceled ? "aborted" :
	    s->finished ? "finished" : "interrupted");
	t = (time_t)s->duration;
	gmtime_r(&t, &tm);
	tm_format(buf, sizeof(buf), "%M:%S", &tm);
	out_say("Duration:         %u:%s\n", (unsigned)(s->duration / 3600), buf);
}

static void print_dev(const struct btrfs_ioctl_dev_info_args *di, const struct btrfs_scrub_progress *p,
		      int raw, const char *what, const struct scrub_stats *s)
{
	out_say("\nScrub device %s (id %llu) %s\n", (const char *)di->path,
	    (unsigned long long)di->devid, what ? what : "");
	print_stats_head(s);
	if (p && raw)
		print_raw_progress(p);
	else if (p)
		print_summary(p, s, di->bytes_used);
}

/* Sum over devices: counters add up, the earliest start, the longest duration. */
static void add_to_total(struct scrub_record *t, const struct btrfs_scrub_progress *p,
			 const struct scrub_stats *s)
{
	scrub_progress_add(&t->p, p);
	t->p.last_physical = p->last_physical;
	if (!t->s.t_start || t->s.t_start > s->t_start)
		t->s.t_start = s->t_start;
	if (!t->s.t_resumed || t->s.t_resumed > s->t_resumed)
		t->s.t_resumed = s->t_resumed;
	if (!t->s.duration || t->s.duration < s->duration)
		t->s.duration = s->duration;
	if (!t->s.canceled || t->s.canceled < s->canceled)
		t->s.canceled = s->canceled;
	if (t->s.finished > s->finished)
		t->s.finished = s->finished;
}

static void print_total(const struct scrub_record *t, int raw, uint64_t total)
{
	print_stats_head(&t->s);
	if (raw)
		print_raw_progress(&t->p);
	else
		print_summary(&t->p, &t->s, total);
}

/* ---- running scrubs ---- */

struct dev_scrub {
	struct btrfs_ioctl_scrub_args args;   /* the thread's ioctl argument */
	struct btrfs_ioctl_scrub_args live;   /* last progress poll */
	const struct scrub_record *resumed;   /* earlier record continued, or NULL */
	struct scrub_offline *off;            /* an unmounted filesystem, else NULL */
	struct scrub_stats s;
	int fd, skip, started, ret, err;
	volatile int done;
	pthread_t thread;
	int ioprio;
};

/* The filesystem scrubbed: a mount (fd) or an unmounted one (off), its devices. */
struct target {
	int fd;
	struct scrub_offline *off;
	uint8_t fsid[16];
	char fsid_str[UUID_STR_LEN];
	struct btrfs_ioctl_dev_info_args *di;
	int ndev;
};

static int scrub_running_in_kernel(int fd, const struct btrfs_ioctl_dev_info_args *di, uint64_t n)
{
	struct btrfs_ioctl_scrub_args a;

	for (uint64_t i = 0; i < n; i++) {
		memset(&a, 0, sizeof(a));
		a.devid = di[i].devid;
		if (ioctl(fd, BTRFS_IOC_SCRUB_PROGRESS, &a) == 0)
			return 1;
	}
	return 0;
}

#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_IDLE 3

static void *scrub_thread(void *arg)
{
	struct dev_scrub *d = arg;
	struct timespec now;

	/* ioprio is per thread; a failure only makes the scrub less polite */
	if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, d->ioprio) && !out_quiet())
		msg_warn("setting ioprio failed: %s (ignored)", strerror(errno));
	if (CFG_SCRUB_OFFLINE && d->off)
		d->ret = scrub_offline_dev(d->off, &d->args);
	else
		d->ret = ioctl(d->fd, BTRFS_IOC_SCRUB, &d->args);
	d->err = errno;
	clock_gettime(CLOCK_REALTIME, &now);
	d->s.duration = (uint64_t)now.tv_sec - d->s.t_start;
	d->s.canceled = d->ret != 0;
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The record written for d: its progress plus the earlier run it continues. */
static void record_of(const struct dev_scrub *d, int use_live, struct scrub_record *r)
{
	const struct btrfs_scrub_progress *p = use_live ? &d->live.progress : &d->args.progress;

	memset(r, 0, sizeof(*r));
	r->devid = d->args.devid;
	r->p = *p;
	r->s = d->s;
	if (d->skip) {
		r->p = d->resumed->p;
		r->s = d->resumed->s;
		return;
	}
	if (!d->resumed)
		return;
	scrub_progress_add(&r->p, &d->resumed->p);
	r->s.t_resumed = d->s.t_start;
	r->s.t_start = d->resumed->s.t_start;
	r->s.duration = d->resumed->s.duration + d->s.duration;
}

static int record_progress(const char *dir, const char *fsid, struct dev_scrub *d, size_t n,
			   int final)
{
	struct scrub_record *v = calloc(n, sizeof(*v));
	struct timespec now;
	int ret;

	if (!v)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < n; i++) {
		int finished = __atomic_load_n(&d[i].done, __ATOMIC_ACQUIRE);

		if (!final && d[i].started && !finished) {
			d[i].live.devid = d[i].args.devid;
			if (CFG_SCRUB_OFFLINE && d[i].off)
				scrub_offline_progress(d[i].off, d[i].args.devid, &d[i].live.progress);
			if ((CFG_SCRUB_OFFLINE && d[i].off) || ioctl(d[i].fd, BTRFS_IOC_SCRUB_PROGRESS, &d[i].live) == 0)
				d[i].s.duration = (uint64_t)now.tv_sec - d[i].s.t_start;
		}
		record_of(&d[i], !final && !finished, &v[i]);
		v[i].s.finished = finished || d[i].skip;
	}
	ret = dir ? scrub_status_write(dir, fsid, v, n) : 0;
	free(v);
	return ret;
}

static int cancel_fd = -1;
static struct scrub_offline *cancel_off;
static void cancel_on_signal(int sig)
{
	(void)sig;
	if (CFG_SCRUB_OFFLINE && cancel_off)
		scrub_offline_cancel(cancel_off);
	else
		ioctl(cancel_fd, BTRFS_IOC_SCRUB_CANCEL, NULL);
}

struct start_opts {
	int background, print, per_dev, raw, readonly, force, resume;
	int ioprio_class, ioprio_data;
};

/* Runs the prepared scrubs to their end, recording progress; prints when asked. */
static int run_scrubs(const char *path, const char *fsid, const char *dir, int fd,
		      const struct btrfs_ioctl_dev_info_args *di, struct dev_scrub *d, size_t n,
		      const struct start_opts *o)
{
	size_t i, remaining = 0;
	int err = 0, uncorrectable = 0, correctable = 0, ret;
	struct sigaction sa = { .sa_handler = cancel_on_signal };
	struct timespec now;

	cancel_fd = fd;
	cancel_off = d[0].off;
	if (CFG_SCRUB_OFFLINE && cancel_off)
		scrub_offline_mark_running(cancel_off);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < n; i++) {
		if (d[i].skip)
			continue;
		clock_gettime(CLOCK_REALTIME, &now);
		d[i].s.t_start = (uint64_t)now.tv_sec;
		d[i].ioprio = o->ioprio_class << IOPRIO_CLASS_SHIFT | o->ioprio_data;
		ret = pthread_create(&d[i].thread, NULL, scrub_thread, &d[i]);
		if (ret) {
			if (o->print)
				msg_error("creating the scrub thread for device %llu failed: %s",
					  (unsigned long long)d[i].args.devid, strerror(ret));
			err = 1;
			break;
		}
		d[i].started = 1;
		remaining++;
	}
	/* poll the progress until every thread is done */
	for (unsigned tick = 0; remaining; tick++) {
		/* short naps: a scrub that is done is noticed at once; progress every 2 s */
		struct timespec pause = { 0, 20 * 1000 * 1000 };

		nanosleep(&pause, NULL);
		remaining = 0;
		for (i = 0; i < n; i++)
			remaining += d[i].started && !__atomic_load_n(&d[i].done, __ATOMIC_ACQUIRE);
		if (remaining && tick % 100 == 99)
			record_progress(dir, fsid, d, n, 0);
	}
	for (i = 0; i < n; i++) {
		if (!d[i].started)
			continue;
		pthread_join(d[i].thread, NULL);
		if (d[i].ret) {
			if (d[i].err == ENODEV) {
				if (o->print)
					msg_warn("device %llu not present",
						 (unsigned long long)d[i].args.devid);
				continue;
			}
			err++;
			if (d[i].err != ECANCELED) {
				if (o->print)
					msg_error("scrubbing %s failed for device id %llu: ret=%d, errno=%d (%s)",
						  path, (unsigned long long)d[i].args.devid, d[i].ret,
						  d[i].err, strerror(d[i].err));
				continue;
			}
		}
		uncorrectable += d[i].args.progress.uncorrectable_errors > 0;
		correctable += d[i].args.progress.corrected_errors > 0 ||
			       d[i].args.progress.unverified_errors > 0;
	}
	if (o->print) {
		struct scrub_record total;
		const char *what = "done";
		uint64_t bytes = 0;

		memset(&total, 0, sizeof(total));
		total.s.finished = 1;
		for (i = 0; i < n; i++) {
			const struct btrfs_scrub_progress *p = &d[i].args.progress;
			struct scrub_stats s = d[i].s;

			if (d[i].skip) {
				p = &d[i].resumed->p;
				s = d[i].resumed->s;
			}
			s.finished = 1;
			if (o->per_dev)
				print_dev(&di[i], p, o->raw, d[i].ret ? "canceled" : "done", &s);
			else
				add_to_total(&total, p, &s);
			if (d[i].ret)
				what = "canceled";
			bytes += di[i].bytes_used;
		}
		if (!o->per_dev) {
			out_say("scrub %s for %s\n", what, fsid);
			print_total(&total, o->raw, bytes);
		}
	}
	ret = record_progress(dir, fsid, d, n, 1);
	if (ret && o->print)
		msg_error("failed to record the result: %s", strerror(-ret));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (err)
		return 1;
	if (uncorrectable) {
		if (!out_quiet())
			msg_error("there are uncorrectable errors");
		return 3;
	}
	if (correctable && !out_quiet())
		msg_warn("errors detected during scrubbing, corrected");
	return 0;
}

/* Sets up each device: a fresh scrub, a continued one, or one to skip on resume.
 * Returns the number of devices that will run. */
static size_t plan_devices(struct dev_scrub *d, const struct target *t, struct scrub_record *past,
			   size_t npast, const struct start_opts *o)
{
	size_t run = 0;

	for (size_t i = 0; i < (size_t)t->ndev; i++) {
		const struct scrub_record *last = scrub_status_find(past, npast, t->di[i].devid);

		memset(&d[i], 0, sizeof(d[i]));
		d[i].fd = t->fd;
		d[i].off = t->off;
		d[i].args.devid = t->di[i].devid;
		d[i].args.end = (uint64_t)-1;
		d[i].args.flags = o->readonly ? BTRFS_SCRUB_READONLY : 0;
		if (o->resume) {
			d[i].resumed = last;
			if (!last || (!last->s.canceled && last->s.finished)) {
				/* nothing left there: report the last result as is */
				d[i].skip = 1;
				if (!last) {
					static const struct scrub_record none;

					d[i].resumed = &none;
				}
				continue;
			}
			d[i].args.start = last->p.last_physical;
		}
		run++;
	}
	return run;
}

/* The filesystem of paths[0] (a mount point or one of its devices, or an unmounted
 * device or image with more of its devices after it) and the devices a scrub covers
 * (only the devices given, for devices). 0, or -1 after an error message (about the
 * devices only when not quiet). writable: an offline scrub may repair. */
static int open_scrub_target(char **paths, int n, int quiet, int writable, struct target *t)
{
	struct btrfs_ioctl_fs_info_args fi;
	const char *path = paths[0];
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (CFG_SCRUB_OFFLINE && scrub_offline_target(&path)) {
		t->off = scrub_offline_open(paths, n, writable, t->fsid, &t->di, &t->ndev);
		uuid_unparse(t->fsid, t->fsid_str);
		return t->off ? 0 : -1;
	}
	if (n > 1) {
		msg_error("more than one device is only for an unmounted filesystem");
		return -1;
	}
	if ((t->fd = btrfs_open_path_or_dev(path, 0)) < 0)
		return -1;
	ret = btrfs_dev_infos_of_path(t->fd, path, &fi, &t->di, &t->ndev);
	memcpy(t->fsid, fi.fsid, sizeof(t->fsid));
	uuid_unparse(t->fsid, t->fsid_str);
	if (!ret && t->ndev)
		return 0;
	if (!quiet)
		msg_error(ret ? "getting dev info for scrub failed: %s" : "no devices found%s",
			  ret ? strerror(-ret) : "");
	return -1;
}

static void close_scrub_target(struct target *t)
{
	free(t->di);
	if (t->fd >= 0)
		close(t->fd);
	if (CFG_SCRUB_OFFLINE)
		scrub_offline_close(t->off);
}

/* A scrub of the target runs now (in the kernel, or offline in another process). */
static int scrub_running(const struct target *t)
{
	if (CFG_SCRUB_OFFLINE && t->off)
		return scrub_offline_running(t->fsid_str) != 0;
	return scrub_running_in_kernel(t->fd, t->di, (uint64_t)t->ndev);
}

/* The options start and resume share. */
#define START_OPTIONS_HELP \
	"    -B   stay in the foreground and print a report at the end\n" \
	"    -d   report per device (with -B)\n" \
	"    -q   quiet\n" \
	"    -r   read-only: report errors, repair nothing\n" \
	"    -R   raw counters instead of a summary\n" \
	"    -c   ioprio class (see ionice(1)), default idle\n" \
	"    -n   ioprio class data (see ionice(1))\n"

static int scrub_start(int argc, char **argv, int resume)
{
	USAGE(start_usage) =
		"usage: btrfs scrub start [-BdqrRf] [-c ioprio_class -n ioprio_classdata] <path>|<device>\n"
		"       btrfs scrub start [-BdqrRf] <unmounted device or image> [<its other devices>...]\n\n"
		"    Start a new scrub of every device of the filesystem. An unmounted filesystem is\n"
		"    scrubbed without the kernel: the devices given are read and repaired.\n\n"
		START_OPTIONS_HELP
		"    -f   start even if the status file says a scrub is running\n";
	USAGE(resume_usage) =
		"usage: btrfs scrub resume [-BdqrR] [-c ioprio_class -n ioprio_classdata] <path>|<device>\n"
		"       btrfs scrub resume [-BdqrR] <unmounted device or image> [<its other devices>...]\n\n"
		"    Continue a canceled or interrupted scrub where each device stopped.\n\n"
		START_OPTIONS_HELP;
	const char *usage = resume ? resume_usage : start_usage;
	struct start_opts o = { .background = 1, .ioprio_class = IOPRIO_CLASS_IDLE, .resume = resume };
	struct scrub_record *past = NULL;
	struct dev_scrub *d = NULL;
	struct target t;
	const char *path, *dir, *fsid;
	size_t npast = 0, nrun;
	int c, fell_back, ret = 1;

	while ((c = cli_getopt(argc, argv, resume ? "BdqrRc:n:" : "BdqrRc:n:f", NULL, usage)) != -1) {
		switch (c) {
		case 'B': o.background = 0; o.print = 1; break;
		case 'd': o.per_dev = 1; break;
		case 'q': cli_globals.verbose = -1; break;
		case 'r': o.readonly = 1; break;
		case 'R': o.raw = 1; break;
		case 'c': o.ioprio_class = atoi(optarg); break;
		case 'n': o.ioprio_data = atoi(optarg); break;
		case 'f': o.force = 1; break;
		}
	}
	cli_check_argc(argc, 1, CFG_SCRUB_OFFLINE ? -1 : 1, usage);
	if (out_quiet())
		o.print = 0;
	path = argv[optind];
	dir = scrub_status_dir(&fell_back);
	if (!dir && !out_quiet())
		msg_warn("cannot create the scrub status directory %s: %s. Status recording disabled",
			 getenv(SCRUB_STATUS_DIR_ENV) ? getenv(SCRUB_STATUS_DIR_ENV) : SCRUB_STATUS_DIR,
			 strerror(errno));
	else if (fell_back && !out_quiet())
		msg_warn("%s is not writable, scrub status is kept in %s", SCRUB_STATUS_DIR, dir);
	if (open_scrub_target(argv + optind, argc - optind, out_quiet(), !o.readonly, &t))
		return 1;
	fsid = t.fsid_str;
	ret = scrub_status_read(fsid, &past, &npast);
	if (ret && !out_quiet())
		msg_warn("failed to read status file: %s", strerror(-ret));
	if (scrub_running(&t) && !o.force) {
		int unfinished = 0;

		for (size_t i = 0; i < npast; i++)
			unfinished |= !(past[i].s.finished || past[i].s.canceled);
		if (unfinished) {
			if (!out_quiet())
				msg_error("Scrub is already running.\nTo cancel use 'btrfs scrub cancel %s'.\n"
					  "To see the status use 'btrfs scrub status [-d] %s'", path, path);
			ret = 1;
			goto out;
		}
	}
	d = calloc((size_t)t.ndev, sizeof(*d));
	if (!d) {
		msg_error("out of memory");
		ret = 1;
		goto out;
	}
	nrun = plan_devices(d, &t, past, npast, &o);
	if (!nrun) {
		out_say("scrub: nothing to resume for %s, fsid %s\n", path, fsid);
		ret = 2;
		goto out;
	}
	if (dir && (ret = record_progress(dir, fsid, d, (size_t)t.ndev, 1))) {
		if (!out_quiet())
			msg_warn("failed to write the progress status file: %s. Status recording disabled",
				 strerror(-ret));
		dir = NULL;
	}
	if (o.background) {
		pid_t pid = fork();

		if (pid < 0) {
			if (!out_quiet())
				msg_error("cannot scrub, fork failed: %s", strerror(errno));
			ret = 1;
			goto out;
		}
		if (pid) {
			out_say("scrub %s on %s, fsid %s (pid=%d)\n", resume ? "resumed" : "started",
			    path, fsid, (int)pid);
			ret = 0;
			goto out;
		}
		/* the child: detached from the caller's terminal and pipes */
		setsid();
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		_exit(run_scrubs(path, fsid, dir, t.fd, t.di, d, (size_t)t.ndev, &o));
	}
	ret = run_scrubs(path, fsid, dir, t.fd, t.di, d, (size_t)t.ndev, &o);
out:
	free(d);
	free(past);
	close_scrub_target(&t);
	return ret;
}

int scrub_start_main(int argc, char **argv)
{
	return scrub_start(argc, argv, 0);
}

int scrub_resume_main(int argc, char **argv)
{
	return scrub_start(argc, argv, 1);
}

USAGE(cancel_usage) =
	"usage: btrfs scrub cancel <path>|<device>\n\n"
	"    Cancel a running scrub.\n";

int scrub_cancel_main(int argc, char **argv)
{
	const char *path;
	int fd;

	cli_no_options(argc, argv, 1, 1, cancel_usage);
	path = argv[optind];
	if (CFG_SCRUB_OFFLINE && scrub_offline_target(&path))
		return scrub_offline_cancel_path(path);
	fd = btrfs_open_path_or_dev(path, 0);
	if (fd < 0)
		return 1;
	if (ioctl(fd, BTRFS_IOC_SCRUB_CANCEL, NULL) < 0) {
		int e = errno;

		msg_error("scrub cancel failed on %s: %s", argv[optind],
			  e == ENOTCONN ? "not running" : strerror(e));
		close(fd);
		return e == ENOTCONN ? 2 : 1;
	}
	close(fd);
	out_say("scrub cancelled\n");
	return 0;
}

/* Used bytes times copies over all space infos: what a full scrub reads. */
static int used_bytes_on_disk(const struct target *t, uint64_t *total)
{
	struct btrfs_ioctl_space_args *sa;
	int ret;

	*total = 0;
	if (CFG_SCRUB_OFFLINE && t->off) {
		/* offline: what the devices have allocated, as start reports */
		for (int i = 0; i < t->ndev; i++)
			*total += t->di[i].bytes_used;
		return 0;
	}
	if ((ret = btrfs_space_info(t->fd, &sa)))
		return ret;
	*total = 0;
	for (uint64_t i = 0; i < sa->total_spaces; i++)
		*total += sa->spaces[i].used_bytes * (uint64_t)btrfs_profile_copies(sa->spaces[i].flags);
	free(sa);
	return 0;
}

/* ---- JSON status (no btrfs-progs 6.2 counterpart): the summary of the text report
 * in bytes and seconds, the raw counters, and the same per device. ---- */

static const char *state_name(const struct scrub_stats *s)
{
	if (!s->t_start)
		return "none";
	return s->in_progress ? "running" : s->canceled ? "aborted" :
	       s->finished ? "finished" : "interrupted";
}

static void json_time(struct out *o, const char *name, uint64_t sec)
{
	char buf[64];

	out_str(o, NULL, name, local_time_text((int64_t)sec, "%Y-%m-%d %X %z", buf, sizeof(buf)));
}

static void json_record(struct out *o, const struct btrfs_scrub_progress *p,
			const struct scrub_stats *s, uint64_t total)
{
	uint64_t done = p->data_bytes_scrubbed + p->tree_bytes_scrubbed;

	out_str(o, NULL, "status", state_name(s));
	json_time(o, "started", s->t_start);
	json_time(o, "resumed", s->t_resumed);
	out_u64(o, NULL, "duration", s->duration);
	out_u64(o, NULL, "total_to_scrub", total);
	out_u64(o, NULL, "bytes_scrubbed", done);
	out_u64(o, NULL, "rate", s->duration ? done / s->duration : 0);
#define JSON_FIELD(name) out_u64(o, NULL, #name, p->name);
	SCRUB_PROGRESS_FIELDS(JSON_FIELD)
	JSON_FIELD(unverified_errors)
#undef JSON_FIELD
}

static void json_status(const char *fsid, const struct scrub_record *total, uint64_t bytes,
			const struct btrfs_ioctl_dev_info_args *di, int ndev,
			struct scrub_record *past, size_t npast, int in_progress)
{
	struct out o;

	out_start(&o, 0, 0);
	out_group_begin(&o, "scrub-status", OUT_MAP);
	out_str(&o, NULL, "uuid", fsid);
	json_record(&o, &total->p, &total->s, bytes);
	out_group_begin(&o, "devices", OUT_LIST);
	for (int i = 0; i < ndev; i++) {
		struct scrub_record *r = scrub_status_find(past, npast, di[i].devid);
		struct scrub_record none;

		if (!r) {
			memset(&none, 0, sizeof(none));
			r = &none;
		}
		r->s.in_progress = in_progress;
		out_group_begin(&o, NULL, OUT_MAP);
		out_u64(&o, NULL, "devid", di[i].devid);
		out_str(&o, NULL, "path", (const char *)di[i].path);
		json_record(&o, &r->p, &r->s, di[i].bytes_used);
		out_group_end(&o);
	}
	out_group_end(&o);
	out_group_end(&o);
	out_end(&o);
}

USAGE(status_usage) =
	"usage: btrfs scrub status [-dR] [--raw|--human-readable|...] <path>|<device>\n\n"
	"    Show the status of a running or the last scrub.\n\n"
	"    -d   per device\n"
	"    -R   raw counters\n"
	"    --raw           sizes in bytes\n"
	"    --human-readable, --iec, --si, --kbytes, --mbytes, --gbytes, --tbytes\n";

int scrub_status_main(int argc, char **argv)
{
	struct scrub_record *past = NULL, total;
	struct btrfs_ioctl_dev_info_args *di;
	struct target t;
	int c, per_dev = 0, raw = 0, in_progress, ret = 1, ndev;
	uint64_t bytes = 0;
	size_t npast = 0;
	const char *fsid;

	unit_mode = units_parse_args(&argc, argv, 0);
	while ((c = cli_getopt(argc, argv, "dR", NULL, status_usage)) != -1) {
		if (c == 'd')
			per_dev = 1;
		else if (c == 'R')
			raw = 1;
	}
	cli_check_argc(argc, 1, CFG_SCRUB_OFFLINE ? -1 : 1, status_usage);
	if (open_scrub_target(argv + optind, argc - optind, 0, 0, &t))
		return 1;
	di = t.di;
	ndev = t.ndev;
	fsid = t.fsid_str;
	if ((ret = used_bytes_on_disk(&t, &bytes))) {
		msg_error("cannot get space info: %s", strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = scrub_status_read(fsid, &past, &npast);
	if (ret == -EINVAL || ret == -EIO) {
		msg_warn("failed to read status: %s", strerror(-ret));
	} else if (ret) {
		msg_warn("failed to open status file: %s", strerror(-ret));
		ret = 1;
		goto out;
	}
	in_progress = scrub_running(&t);
	memset(&total, 0, sizeof(total));
	total.s.finished = 1;
	total.s.in_progress = in_progress;
	if (out_json()) {
		for (int i = 0; i < ndev; i++) {
			const struct scrub_record *last = scrub_status_find(past, npast, di[i].devid);

			if (last)
				add_to_total(&total, &last->p, &last->s);
		}
		json_status(fsid, &total, bytes, di, ndev, past, npast, in_progress);
		ret = 0;
		goto out;
	}
	out_say("UUID:             %s\n", fsid);
	for (int i = 0; i < ndev; i++) {
		struct scrub_record *last = scrub_status_find(past, npast, di[i].devid);

		if (!per_dev) {
			if (last)
				add_to_total(&total, &last->p, &last->s);
		} else if (!last) {
			print_dev(&di[i], NULL, raw, NULL, NULL);
		} else {
			last->s.in_progress = in_progress;
			print_dev(&di[i], &last->p, raw, last->s.finished ? "history" : "status", &last->s);
		}
	}
	if (!per_dev)
		print_total(&total, raw, bytes);
	ret = 0;
out:
	free(past);
	close_scrub_target(&t);
	return ret;
}
/* ---- limit: the devices' scrub_speed_max in sysfs ---- */

/* devinfo/DEVID/scrub_speed_max of the filesystem of fd: read into *limit, or written
 * from *limit with set. 0 or -errno. */
static int scrub_speed_max(int fd, uint64_t devid, uint64_t *limit, int set)
{
	char name[64], path[BTRFS_SYSFS_PATH], buf[32];
	int sfd, ret;

	snprintf(name, sizeof(name), "devinfo/%llu/scrub_speed_max", (unsigned long long)devid);
	if (!set) {
		ret = btrfs_sysfs_read(fd, name, buf, sizeof(buf));
		*limit = str_to_ull(buf, NULL, 10);
		return ret;
	}
	if ((ret = btrfs_sysfs_path(fd, name, path)))
		return ret;
	if ((sfd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)*limit);
	ret = write(sfd, buf, strlen(buf)) < 0 ? -errno : 0;
	close(sfd);
	return ret;
}

/* "10.00MiB/s" or "unlimited" */
static const char *limit_text(uint64_t limit, char buf[UNITS_BUF + 2])
{
	if (!limit)
		return "unlimited";
	strcat(strcpy(buf, pretty_size(limit, unit_mode)), "/s");
	return buf;
}

USAGE(limit_usage) =
	"usage: btrfs scrub limit [options] <path>\n\n"
	"    -a|--all  all devices   -d|--devid DEVID  one device\n"
	"    -l|--limit SIZE  the limit per second, 0 for none (needs -a or -d)\n"
	CLI_UNITS;

int scrub_limit_main(int argc, char **argv)
{
	struct btrfs_ioctl_dev_info_args *di = NULL;
	struct btrfs_ioctl_fs_info_args fi;
	uint64_t devid = 0, limit = 0, old;
	int c, fd, n = 0, all = 0, set = 0, ret = 1, i;
	char fsid[UUID_STR_LEN], b1[UNITS_BUF + 2], b2[UNITS_BUF + 2];
	struct table t;

	unit_mode = units_parse_args(&argc, argv, 0);
	while ((c = cli_getopt_long(argc, argv, "ad:l:", "all=a devid:=d limit:=l",
				    limit_usage)) != -1) {
		if (c == 'a')
			all = 1;
		else if (c == 'd')
			devid = cli_arg_u64(optarg);
		else if (parse_size_arg(optarg, &limit))
			return 1;
		else
			set = 1;
	}
	cli_check_argc(argc, 1, 1, limit_usage);
	if (devid && all)
		msg_error("--all and --devid cannot be used at the same time");
	else if ((devid || all) && !set)
		msg_error("--%s and --limit must be set together", devid ? "devid" : "all");
	else if (set && !devid && !all)
		msg_error("--limit must be used with either --all or --devid");
	else if ((fd = btrfs_open_path(argv[optind], 0, 0)) >= 0) {
		if (btrfs_dev_infos(fd, &fi, &di, &n) || !n) {
			msg_error(n ? "failed to read filesystem info: %m" : "no devices found");
			goto out;
		}
		uuid_unparse(fi.fsid, fsid);
		out_say("UUID: %s\n", fsid);
		for (i = 0; devid && i < n && di[i].devid != devid; i++)
			;
		if (i == n) {
			msg_error("device with devid %llu not found", (unsigned long long)devid);
			goto out;
		}
		if (table_init(&t, 3, n + 2))
			goto out;
		table_set(&t, 0, 0, ">Id");
		table_set(&t, 1, 0, ">Limit");
		table_set(&t, 2, 0, ">Path");
		ret = 0;
		for (i = 0; i < 3; i++)
			table_set(&t, i, 1, "*-");
		for (i = 0; i < n; i++) {
			if (devid && di[i].devid != devid)
				continue;
			scrub_speed_max(fd, di[i].devid, &old, 0);
			if (set) {
				out_say("Set scrub limit of devid %llu from %s to %s\n",
					(unsigned long long)di[i].devid, limit_text(old, b1), limit_text(limit, b2));
				if ((c = scrub_speed_max(fd, di[i].devid, &limit, 1))) {
					errno = -c;
					msg_error("cannot write to the sysfs file: %m");
				}
				continue;
			}
			table_set(&t, 0, i + 2, ">%llu", (unsigned long long)di[i].devid);
			table_set(&t, 1, i + 2, ">%s", old ? pretty_size(old, unit_mode) : "-");
			table_set(&t, 2, i + 2, "<%s", (const char *)di[i].path);
		}
		if (!set)
			table_print(&t, 2);
		table_free(&t);
out:
		free(di);
		close(fd);
	}
	return ret;
}
#endif
