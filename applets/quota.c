/* btrfs quota (enable, disable, rescan, status) and btrfs qgroup (show, create, destroy,
 * assign, remove, limit, clear-stale) on a mounted filesystem. qgroup show reads the
 * quota tree: QGROUP_STATUS, QGROUP_INFO and QGROUP_LIMIT items keyed (0, type, qgroupid)
 * and QGROUP_RELATION items (parent, type, child) next to (child, type, parent). */
//config:config APPLET_QUOTA
//config:	bool "btrfs quota and btrfs qgroup"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Turn subvolume quotas on and off, rescan them, list quota
//config:	  groups with their usage and limits, create, relate and limit them.
//cmd:APPLET_QUOTA quota_ctl_main btrfs quota enable|Enable subvolume quota support for a filesystem
//cmd:APPLET_QUOTA quota_ctl_main btrfs quota disable|Disable subvolume quota support for a filesystem
//cmd:APPLET_QUOTA quota_rescan_main btrfs quota rescan|Rescan the qgroup numbers
//cmd:APPLET_QUOTA quota_status_main btrfs quota status|Show quota settings of a filesystem
//cmd:APPLET_QUOTA qgroup_show_main btrfs qgroup show|List subvolume quota groups
//cmd:APPLET_QUOTA qgroup_create_main btrfs qgroup create|Create a subvolume quota group
//cmd:APPLET_QUOTA qgroup_create_main btrfs qgroup destroy|Destroy a quota group
//cmd:APPLET_QUOTA qgroup_assign_main btrfs qgroup assign|Assign SRC as the child qgroup of DST
//cmd:APPLET_QUOTA qgroup_assign_main btrfs qgroup remove|Remove a qgroup relation
//cmd:APPLET_QUOTA qgroup_limit_main btrfs qgroup limit|Set the limits a subvolume quota group
//cmd:APPLET_QUOTA qgroup_show_main btrfs qgroup clear-stale|Delete the qgroups of deleted subvolumes

#include "config.h"
#if CFG_APPLET_QUOTA
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/ioctl/subvol.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/strnum.h"
#include "util/vec.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#ifndef BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA   /* kernel 6.7 UAPI */
#define BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA 4
#define BTRFS_QGROUP_STATUS_FLAG_SIMPLE_MODE (1ULL << 3)
#endif
#define QG_LEVEL(id) ((unsigned)((id) >> BTRFS_QGROUP_LEVEL_SHIFT))
#define QG_SUBVOL(id) ((unsigned long long)((id) & ((1ULL << BTRFS_QGROUP_LEVEL_SHIFT) - 1)))

/* "LEVEL/ID" strictly (both decimal, nothing after). 0 or -1. */
static int parse_qgroupid(const char *s, uint64_t *id)
{
	char *end;
	unsigned long long level = str_to_ull(s, &end, 10), sub;

	if (end == s || *end != '/')
		return -1;
	s = end + 1;
	sub = str_to_ull(s, &end, 10);
	if (end == s || *end || sub >> BTRFS_QGROUP_LEVEL_SHIFT ||
	    level >> (64 - BTRFS_QGROUP_LEVEL_SHIFT))
		return -1;
	*id = level << BTRFS_QGROUP_LEVEL_SHIFT | sub;
	return 0;
}

/* A qgroupid, or an absolute path of a subvolume (its 0/ID). Exits 255 on a bad one,
 * as btrfs-progs does. */
static uint64_t qgroupid_or_path(const char *s)
{
	uint64_t id;
	int fd;

	if (s[0] != '/' ? !parse_qgroupid(s, &id) :
	    !subvol_check_path(s) && (fd = btrfs_open_path(s, 1, 1)) >= 0 &&
	    (id = 0, subvol_id_of_fd(fd, &id), close(fd), id))
		return id;
	msg_error("invalid qgroupid or subvolume path: %s", s);
	exit(255);
}

/* "quota not enabled" for ENOTCONN, else the errno text. */
static const char *quota_errstr(void)
{
	return errno == ENOTCONN ? "quota not enabled" : strerror(errno);
}

/* ---- quota ---- */

USAGE(ctl_usage) =
	"usage: btrfs quota enable [-s|--simple] <path>\n"
	"       btrfs quota disable <path>\n";

int quota_ctl_main(int argc, char **argv)
{
	struct btrfs_ioctl_quota_ctl_args args = { .cmd = BTRFS_QUOTA_CTL_ENABLE };
	int fd, ret;

	if (!strcmp(argv[0], "disable")) {
		cli_no_options(argc, argv, 1, 1, ctl_usage);
		args.cmd = BTRFS_QUOTA_CTL_DISABLE;
	} else {
		while (cli_getopt_long(argc, argv, "s", "simple=s", ctl_usage) != -1)
			args.cmd = BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA;
		cli_check_argc(argc, 1, 1, ctl_usage);
	}
	ret = btrfs_path_ioctl(argv[optind], BTRFS_IOC_QUOTA_CTL, &args, &fd);
	if (ret < 0 && fd >= 0)
		msg_error("quota command failed: %m");
	if (fd >= 0)
		close(fd);
	return ret < 0;
}

USAGE(rescan_usage) =
	"usage: btrfs quota rescan [-sw] <path>\n\n"
	"    -s|--status  show the running rescan   -w|--wait  start and wait\n"
	"    -W|--wait-norescan  wait for a running rescan only\n";

int quota_rescan_main(int argc, char **argv)
{
	struct btrfs_ioctl_quota_rescan_args args = { 0 };
	unsigned long request = BTRFS_IOC_QUOTA_RESCAN;
	int c, fd, wait = 0, ret = 0;

	while ((c = cli_getopt_long(argc, argv, "swW", "status=s wait=w wait-norescan=W",
				    rescan_usage)) != -1) {
		request = c == 's' ? BTRFS_IOC_QUOTA_RESCAN_STATUS : c == 'w' ? BTRFS_IOC_QUOTA_RESCAN : 0;
		wait |= c != 's';
	}
	fd = btrfs_open_cmd_path(argc, argv, 1, 1, rescan_usage);
	if (fd < 0)
		return 1;
	if (request && (ret = ioctl(fd, request, &args)) < 0 &&
	    (request == BTRFS_IOC_QUOTA_RESCAN_STATUS || !wait || errno != EINPROGRESS)) {
		msg_error(request == BTRFS_IOC_QUOTA_RESCAN ? "quota rescan failed: %m" :
			  "could not obtain quota rescan status: %m");
		ret = 1;
	} else if (request == BTRFS_IOC_QUOTA_RESCAN_STATUS) {
		if (args.flags)
			out_say("rescan operation running (current key %lld)\n", (long long)args.progress);
		else
			out_say("no rescan operation in progress\n");
	} else {
		if (!ret && request)
			out_say("quota rescan started\n");
		fflush(stdout);
		ret = wait && ioctl(fd, BTRFS_IOC_QUOTA_RESCAN_WAIT, &args) < 0;
		if (ret)
			msg_error("quota rescan wait failed: %m");
	}
	close(fd);
	return ret != 0;
}

USAGE(status_usage) =
	"usage: btrfs quota status [--is-enabled] <path>\n\n"
	"    --is-enabled  print nothing, exit 0 when quotas are enabled\n";

/* quota status: from sysfs (qgroups/ exists when quotas are on). */
int quota_status_main(int argc, char **argv)
{
	static const char *const rows[][2] = {
		{ "Inconsistent", "qgroups/inconsistent" },
		{ "Override limits", "quota_override" },
		{ "Drop subtree threshold", "qgroups/drop_subtree_threshold" },
	};
	char dir[BTRFS_SYSFS_PATH], value[64];
	int fd, is_enabled = 0, total = 0, level0 = 0;
	struct dirent *de;
	DIR *d;

	while (cli_getopt_long(argc, argv, "", "is-enabled=e", status_usage) != -1)
		is_enabled = 1;
	cli_check_argc(argc, 1, 1, status_usage);
	fd = btrfs_open_path(argv[optind], 1, is_enabled);
	if (fd < 0)
		return 1;
	d = btrfs_sysfs_path(fd, "qgroups", dir) ? NULL : opendir(dir);
	if (is_enabled || !d) {
		if (!is_enabled)
			out_say("Quotas on %s:\n  Enabled: no\n", argv[optind]);
		close(fd);
		if (d)
			closedir(d);
		return is_enabled && !d;
	}
	out_say("Quotas on %s:\n  %-25s%s\n", argv[optind], "Enabled:", "yes");
	btrfs_sysfs_read(fd, "qgroups/mode", value, sizeof(value));
	out_say("  %-25s%s (%s)\n", "Mode:", value, !strcmp(value, "qgroup") ? "full accounting" :
		!strcmp(value, "squota") ? "simplified accounting" : "unknown mode");
	for (int i = 0; i < 3; i++) {
		btrfs_sysfs_read(fd, rows[i][1], value, sizeof(value));
		out_say("  %s:%*s%s%s\n", rows[i][0], 24 - (int)strlen(rows[i][0]), "",
			i == 2 ? value : atoi(value) ? "yes" : "no",
			i == 0 && atoi(value) ? " (rescan needed)" : "");
	}
	while ((de = readdir(d))) {
		char *u = strchr(de->d_name, '_');
		uint64_t id;

		if (!u)
			continue;
		*u = '/';
		if (parse_qgroupid(de->d_name, &id))
			continue;
		total++;
		level0 += !QG_LEVEL(id);
	}
	closedir(d);
	close(fd);
	out_say("  %-25s%d\n  %-25s%d\n", "Total count:", total, "Level 0:", level0);
	return 0;
}

/* ---- qgroup create, destroy, assign, remove, limit ---- */

USAGE(create_usage) =
	"usage: btrfs qgroup create|destroy <qgroupid> <path>\n";

int qgroup_create_main(int argc, char **argv)
{
	struct btrfs_ioctl_qgroup_create_args args = { .create = !strcmp(argv[0], "create") };
	uint64_t id;
	int fd, ret;

	cli_no_options(argc, argv, 2, 2, create_usage);
	if (parse_qgroupid(argv[optind], &id)) {
		msg_error("invalid qgroupid %s", argv[optind]);
		return 1;
	}
	args.qgroupid = id;
	ret = btrfs_path_ioctl(argv[optind + 1], BTRFS_IOC_QGROUP_CREATE, &args, &fd);
	if (fd < 0)
		return 1;
	close(fd);
	if (ret < 0)
		msg_error("unable to %s quota group: %s", argv[0], quota_errstr());
	return ret < 0;
}

USAGE(assign_usage) =
	"usage: btrfs qgroup assign|remove [--rescan|--no-rescan] <src> <dst> <path>\n";

int qgroup_assign_main(int argc, char **argv)
{
	struct btrfs_ioctl_qgroup_assign_args args = { .assign = !strcmp(argv[0], "assign") };
	struct btrfs_ioctl_quota_rescan_args rescan = { 0 };
	int c, fd, ret, do_rescan = 1;

	while ((c = cli_getopt_long(argc, argv, "", "rescan=r no-rescan=n", assign_usage)) != -1)
		do_rescan = c == 'r';
	cli_check_argc(argc, 3, 3, assign_usage);
	args.src = qgroupid_or_path(argv[optind]);
	args.dst = qgroupid_or_path(argv[optind + 1]);
	if (QG_LEVEL(args.src) >= QG_LEVEL(args.dst)) {
		msg_error("bad relation requested: %s", argv[optind + 2]);
		return 1;
	}
	ret = btrfs_path_ioctl(argv[optind + 2], BTRFS_IOC_QGROUP_ASSIGN, &args, &fd);
	if (fd < 0)
		return 1;
	if (ret < 0) {
		msg_error("unable to assign quota group: %s", quota_errstr());
	} else if (ret > 0 && do_rescan) {
		/* the relation made the numbers inconsistent */
		printf("Quota data changed, rescan scheduled\n");
		ret = ioctl(fd, BTRFS_IOC_QUOTA_RESCAN, &rescan);
		if (ret < 0)
			msg_error("quota rescan failed: %m");
	} else if (ret > 0) {
		msg_warn("quotas may be inconsistent, rescan needed");
		ret = 0;
	}
	close(fd);
	return ret != 0;
}

USAGE(limit_usage) =
	"usage: btrfs qgroup limit [options] <size>|none [<qgroupid>] <path>\n\n"
	"    -c  limit the compressed size (the default)   -e  limit the exclusive size\n";

int qgroup_limit_main(int argc, char **argv)
{
	struct btrfs_ioctl_qgroup_limit_args args = { 0 };
	int c, fd, ret, excl = 0;
	uint64_t size = UINT64_MAX;
	const char *path;

	while ((c = cli_getopt(argc, argv, "ce", NULL, limit_usage)) != -1) {
		if (c == 'c')
			args.lim.flags |= BTRFS_QGROUP_LIMIT_RFER_CMPR | BTRFS_QGROUP_LIMIT_EXCL_CMPR;
		else
			excl = 1;
	}
	cli_check_argc(argc, 2, -1, limit_usage);
	if (argc - optind > 3)
		cli_usage_error(limit_usage, NULL);
	if (strcasecmp(argv[optind], "none") && parse_size_arg(argv[optind], &size))
		return 1;
	args.lim.flags |= excl ? BTRFS_QGROUP_LIMIT_MAX_EXCL : BTRFS_QGROUP_LIMIT_MAX_RFER;
	*(excl ? &args.lim.max_excl : &args.lim.max_rfer) = size;
	path = argv[argc - 1];
	if (argc - optind == 3) {
		args.qgroupid = qgroupid_or_path(argv[optind + 1]);
	} else if (btrfs_check_subvol_path(path)) {   /* qgroupid 0: the path's subvolume */
		return 1;
	}
	ret = btrfs_path_ioctl(path, BTRFS_IOC_QGROUP_LIMIT, &args, &fd);
	if (fd < 0)
		return 1;
	close(fd);
	if (ret < 0)
		msg_error("unable to limit requested quota group: %s", quota_errstr());
	return ret < 0;
}

/* ---- the qgroups of a filesystem ---- */

struct qgroup {
	uint64_t id, rfer, excl, lim_flags, max_rfer, max_excl;
	char *path;         /* level 0 with a reachable subvolume; "" for the top level */
	int stale;          /* level 0 without a ROOT_ITEM */
};
struct relation { uint64_t parent, child; };

struct qgroups {
	int fd;
	uint64_t status;    /* QGROUP_STATUS flags */
	struct qgroup *q;
	size_t n;
	struct relation *rel;
	size_t nrel, rel_room;
};

static int root_item_found(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	(void)item;
	(void)ctx;
	return sh->type == BTRFS_ROOT_ITEM_KEY;
}

/* The entry of qgroup id, added (in id order) when new; NULL when out of memory. */
static struct qgroup *qgroup_get(struct qgroups *g, uint64_t id)
{
	size_t i;
	struct qgroup *q;

	for (i = g->n; i > 0 && g->q[i - 1].id >= id; i--)
		if (g->q[i - 1].id == id)
			return &g->q[i - 1];
	q = realloc(g->q, (g->n + 1) * sizeof(*q));
	if (!q)
		return NULL;
	g->q = q;
	memmove(q + i + 1, q + i, (g->n++ - i) * sizeof(*q));
	q += i;
	memset(q, 0, sizeof(*q));
	q->id = id;
	if (!QG_LEVEL(id)) {
		struct tree_key min = { id, BTRFS_ROOT_ITEM_KEY, 0 };
		struct tree_key max = { id, BTRFS_ROOT_ITEM_KEY, UINT64_MAX };

		if (subvol_path(g->fd, id, &q->path))
			q->path = NULL;
		q->stale = tree_search(g->fd, BTRFS_ROOT_TREE_OBJECTID, &min, &max,
				       root_item_found, NULL) == 0;
	}
	return q;
}

static int quota_item(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct qgroups *g = ctx;
	struct qgroup *q;

	if (sh->type == BTRFS_QGROUP_STATUS_KEY && sh->len >= sizeof(struct btrfs_qgroup_status_item)) {
		g->status = get_le64(&((const struct btrfs_qgroup_status_item *)item)->flags);
	} else if (sh->type == BTRFS_QGROUP_RELATION_KEY) {
		struct relation *r;

		if (sh->objectid <= sh->offset)   /* each relation is stored both ways */
			return 0;
		if (!(r = vec_push(&g->rel, &g->nrel, &g->rel_room, sizeof(*r))))
			return -ENOMEM;
		*r = (struct relation){ sh->objectid, sh->offset };
	} else if (sh->type == BTRFS_QGROUP_INFO_KEY || sh->type == BTRFS_QGROUP_LIMIT_KEY) {
		const struct btrfs_qgroup_info_item *info = item;
		const struct btrfs_qgroup_limit_item *lim = item;

		if (!(q = qgroup_get(g, sh->offset)))
			return -ENOMEM;
		if (sh->type == BTRFS_QGROUP_INFO_KEY && sh->len >= sizeof(*info)) {
			q->rfer = get_le64(&info->rfer);
			q->excl = get_le64(&info->excl);
		} else if (sh->type == BTRFS_QGROUP_LIMIT_KEY && sh->len >= sizeof(*lim)) {
			q->lim_flags = get_le64(&lim->flags);
			q->max_rfer = get_le64(&lim->max_rfer);
			q->max_excl = get_le64(&lim->max_excl);
		}
	}
	return 0;
}

static void qgroups_free(struct qgroups *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->q[i].path);
	free(g->q);
	free(g->rel);
}

/* Reads every qgroup and relation; prints the status warnings as btrfs-progs. 0, or
 * 1 after "ERROR: can't list qgroups: ..." (off_ok: -1 after "WARNING: qgroups not
 * enabled" when quotas are off). */
static int qgroups_read(int fd, struct qgroups *g, int off_ok)
{
	struct tree_key min = { 0, BTRFS_QGROUP_STATUS_KEY, 0 };
	struct tree_key max = { UINT64_MAX, BTRFS_QGROUP_RELATION_KEY, UINT64_MAX };
	int ret;

	memset(g, 0, sizeof(*g));
	g->fd = fd;
	ret = tree_search(fd, BTRFS_QUOTA_TREE_OBJECTID, &min, &max, quota_item, g);
	if (ret) {
		errno = -ret;
		if (off_ok && ret == -ENOENT)
			msg_warn("qgroups not enabled");
		else
			msg_error("can't list qgroups: %s", ret == -ENOENT ? "quotas not enabled" :
				  strerror(errno));
		qgroups_free(g);
		return off_ok && ret == -ENOENT ? -1 : 1;
	}
	if (!(g->status & BTRFS_QGROUP_STATUS_FLAG_ON))
		msg_warn("quota disabled, qgroup data may be out of date");
	else if (g->status & BTRFS_QGROUP_STATUS_FLAG_RESCAN)
		msg_warn("rescan is running, qgroup data may be incorrect");
	else if (g->status & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT)
		msg_warn("qgroup data inconsistent, rescan recommended");
	return 0;
}

/* ---- qgroup show ---- */

enum { COL_ID, COL_RFER, COL_EXCL, COL_MAX_RFER, COL_MAX_EXCL, COL_PARENT, COL_CHILD, COL_PATH,
       NCOLS };
/* sort keys: the first four share the numeric columns' order */
enum { SORT_RFER, SORT_EXCL, SORT_MAX_RFER, SORT_MAX_EXCL, SORT_ID, SORT_PATH };

struct show {
	struct qgroups g;
	unsigned mode;
	int cols;           /* 1 << COL_* */
	int width[NCOLS];
	int nsort;
	signed char sort[16];   /* SORT_* + 1, negative: descending */
};

static const struct show *sort_ctx;

/* "L/ID,L/ID" of the parents (or children) of q into buf; its length. */
static int relatives(const struct qgroups *g, const struct qgroup *q, int children, char *buf,
		     size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < g->nrel; i++) {
		uint64_t other = children ? g->rel[i].child : g->rel[i].parent;

		if ((children ? g->rel[i].parent : g->rel[i].child) == q->id && len < size)
			len += snprintf(buf + len, size - len, "%s%u/%llu", len ? "," : "",
					QG_LEVEL(other), QG_SUBVOL(other));
	}
	return (int)len;
}

/* The text of a value column: the number, "none" (no limit), the relatives or "-". */
static const char *cell(const struct show *s, const struct qgroup *q, int col, char *buf,
			size_t size)
{
	uint64_t v[] = { q->rfer, q->excl, q->max_rfer, q->max_excl };

	if (col == COL_ID)
		snprintf(buf, size, "%u/%llu", QG_LEVEL(q->id), QG_SUBVOL(q->id));
	else if ((col == COL_MAX_RFER && !(q->lim_flags & BTRFS_QGROUP_LIMIT_MAX_RFER)) ||
		 (col == COL_MAX_EXCL && !(q->lim_flags & BTRFS_QGROUP_LIMIT_MAX_EXCL)))
		snprintf(buf, size, "none");
	else if (col <= COL_MAX_EXCL)
		pretty_size_mode(v[col - 1], s->mode, buf);
	else if (!relatives(&s->g, q, col == COL_CHILD, buf, size))
		snprintf(buf, size, "-");
	return buf;
}

/* The path column of btrfs-progs, quirks kept: a higher level qgroup lists its
 * parents as its "members". */
static void print_path(const struct show *s, const struct qgroup *q)
{
	size_t i, count = 0;

	fputs("  ", stdout);
	if (QG_LEVEL(q->id)) {
		for (i = 0; i < s->g.nrel; i++)
			if (s->g.rel[i].child == q->id)
				printf("%s%u/%llu", count++ ? " " : "", QG_LEVEL(s->g.rel[i].parent),
				       QG_SUBVOL(s->g.rel[i].parent));
		printf("<%zu member qgroup", count);
		putchar(count != 1 ? 's' : 0);
		putchar('>');
	} else if (q->path) {
		fputs(*q->path ? q->path : "<toplevel>", stdout);
	} else {
		fputs(!q->stale ? "<under deletion>" :
		      (s->g.status & BTRFS_QGROUP_STATUS_FLAG_SIMPLE_MODE) && (q->rfer || q->excl) ?
		      "<squota space holder>" : "<stale>", stdout);
	}
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* btrfs-progs' path order: by qgroupid across levels, then by path, where a '/'
 * sorts after everything and no path after any path. */
static int cmp_path(const struct qgroup *a, const struct qgroup *b)
{
	const char *p = a->path, *r = b->path;

	if (QG_LEVEL(a->id) != QG_LEVEL(b->id))
		return cmp_u64(a->id, b->id);
	if (!p || !r)
		return !p - !r;
	while (*p && *p == *r)
		p++, r++;
	return *p == '/' ? 1 : *r == '/' ? -1 : (unsigned char)*p - (unsigned char)*r;
}

static int qgroup_cmp(const void *pa, const void *pb)
{
	const struct qgroup *a = pa, *b = pb;
	int i, ret = 0, by_id = 0;

	for (i = 0; i < sort_ctx->nsort && !ret; i++) {
		int key = abs(sort_ctx->sort[i]) - 1;
		uint64_t va[] = { a->rfer, a->excl, a->max_rfer, a->max_excl, a->id };
		uint64_t vb[] = { b->rfer, b->excl, b->max_rfer, b->max_excl, b->id };

		by_id |= key == SORT_ID;
		ret = key == SORT_PATH ? cmp_path(a, b) : cmp_u64(va[key], vb[key]);
		if (sort_ctx->sort[i] < 0)
			ret = -ret;
	}
	return ret || by_id ? ret : cmp_u64(a->id, b->id);
}

/* --sort=[+-]key,...: 0 or -1. */
static int parse_sort(struct show *s, char *arg)
{
	static const char names[][9] = { "rfer", "excl", "max_rfer", "max_excl", "qgroupid", "path" };
	char *save = NULL, *p;
	int k;

	for (p = strtok_r(arg, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		int desc = *p == '-';

		p += *p == '-' || *p == '+';
		for (k = 0; k < 6 && strcmp(p, names[k]); k++)
			;
		if (k == 6 || s->nsort == (int)sizeof(s->sort))
			return -1;
		s->sort[s->nsort++] = (signed char)(desc ? -(k + 1) : k + 1);
	}
	return 0;
}

/* Is q the qgroup of the path (rootid) or, with ancestors, one above it? */
static int shown(const struct qgroups *g, uint64_t q, uint64_t of, int ancestors)
{
	if (q == of)
		return 1;
	for (size_t i = 0; ancestors && i < g->nrel; i++)
		if (g->rel[i].child == of && shown(g, q, g->rel[i].parent, 1))
			return 1;
	return 0;
}

static void print_json(const struct show *s, const struct qgroup *q, size_t n)
{
	char buf[64];
	struct out o;

	out_start(&o, 0, 0);
	out_group_begin(&o, "qgroup-show", OUT_LIST);
	for (size_t i = 0; i < n; i++, q++) {
		out_group_begin(&o, NULL, OUT_MAP);
		out_str(&o, NULL, "qgroupid", cell(s, q, COL_ID, buf, sizeof(buf)));
		out_num(&o, "referenced", q->rfer);
		for (int c = COL_MAX_RFER; c <= COL_MAX_EXCL; c++) {
			const char *name = c == COL_MAX_RFER ? "max_referenced" : "max_exclusive";

			if (q->lim_flags & (c == COL_MAX_RFER ? BTRFS_QGROUP_LIMIT_MAX_RFER :
					    BTRFS_QGROUP_LIMIT_MAX_EXCL))
				out_num(&o, name, c == COL_MAX_RFER ? q->max_rfer : q->max_excl);
			else
				out_str(&o, NULL, name, "none");
			if (c == COL_MAX_RFER)
				out_num(&o, "exclusive", q->excl);
		}
		out_str(&o, NULL, "path", q->path ? q->path : "");
		for (int children = 0; children < 2; children++) {
			out_group_begin(&o, children ? "children" : "parents", OUT_LIST);
			for (size_t r = 0; r < s->g.nrel; r++) {
				uint64_t id = children ? s->g.rel[r].child : s->g.rel[r].parent;

				if ((children ? s->g.rel[r].parent : s->g.rel[r].child) == q->id)
					out_printf(&o, NULL, NULL, "%u/%llu", QG_LEVEL(id), QG_SUBVOL(id));
			}
			out_group_end(&o);
		}
		out_group_end(&o);
	}
	out_group_end(&o);
	out_end(&o);
}

static void print_table(struct show *s, const struct qgroup *q, size_t n)
{
	static const char *const head[NCOLS] = { "Qgroupid", "Referenced", "Exclusive",
		"Max referenced", "Max exclusive", "Parent", "Child", "Path" };
	static const int min_width[NCOLS] = { 9, 12, 12, 15, 14, 8, 5, 6 };
	char buf[4096];
	int c, left;
	size_t i;

	for (c = 0; c < NCOLS; c++) {
		s->width[c] = min_width[c];
		for (i = 0; c != COL_PATH && i < n; i++) {
			int len = (int)strlen(cell(s, &q[i], c, buf, sizeof(buf)));

			if (c == COL_PARENT || c == COL_CHILD)  /* "-" does not count */
				len = relatives(&s->g, &q[i], c == COL_CHILD, buf, sizeof(buf));
			if (len > s->width[c])
				s->width[c] = len;
		}
	}
	for (int line = 0; line < 2; line++) {
		for (c = 0; c < NCOLS; c++) {
			int w = s->width[c], len = (int)strlen(head[c]);

			if (!(s->cols & (1 << c)))
				continue;
			left = c == COL_ID || c == COL_PARENT || c == COL_CHILD;
			if (!line)
				printf(left ? "%-*s " : "%*s ", w, head[c]);
			else
				printf("%*s%.*s%*s ", left ? 0 : w - len, "", len,
				       "----------------", left ? w - len : 0, "");
		}
		putchar('\n');
	}
	for (i = 0; i < n; i++) {
		for (c = 0; c < COL_PATH; c++) {
			if (!(s->cols & (1 << c)))
				continue;
			left = c == COL_ID || c == COL_PARENT || c == COL_CHILD;
			printf(left ? "%-*s " : "%*s ", s->width[c], cell(s, &q[i], c, buf, sizeof(buf)));
		}
		if (s->cols & (1 << COL_PATH))
			print_path(s, &q[i]);
		putchar('\n');
	}
}

/* clear-stale: deletes the level 0 qgroups without a subvolume (not the ones simple
 * quotas still need, and only attempts the non-empty ones of inconsistent numbers). */
static int clear_stale(const struct qgroups *g, int fd)
{
	int ret = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct qgroup *q = &g->q[i];
		struct btrfs_ioctl_qgroup_create_args args = { .qgroupid = q->id };
		int empty = !q->rfer && !q->excl, attempt;

		if (QG_LEVEL(q->id) || !q->stale ||
		    ((g->status & BTRFS_QGROUP_STATUS_FLAG_SIMPLE_MODE) && !empty))
			continue;
		attempt = (g->status & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT) && !empty;
		out_say("%s qgroup 0/%llu\n", attempt ? "Attempt to delete stale but non-empty" :
			"Delete stale", QG_SUBVOL(q->id));
		if (ioctl(fd, BTRFS_IOC_QGROUP_CREATE, &args) >= 0)
			continue;
		if (attempt) {
			msg_warn("not possible to delete non-empty stale qgroup 0/%llu", QG_SUBVOL(q->id));
		} else {
			msg_error("failed to delete qgroup 0/%llu", QG_SUBVOL(q->id));
			ret = 1;
		}
	}
	return ret;
}

USAGE(show_usage) =
	"usage: btrfs qgroup show [options] <path>\n"
	"       btrfs qgroup clear-stale <path>\n\n"
	"    -p  parents  -c  children  -r  referenced limit  -e  exclusive limit\n"
	"    -F  qgroups of <path> and above   -f  the qgroup of <path> only\n"
	CLI_UNITS
	"    --sort=[+-]qgroupid,rfer,excl,max_rfer,max_excl,path   --sync\n";

/* qgroup show, and clear-stale (which reads the same list). */
int qgroup_show_main(int argc, char **argv)
{
	static struct show s;
	int c, fd, filter = 0, sync_first = 0, stale = !strcmp(argv[0], "clear-stale");
	uint64_t rootid = 0;
	struct qgroup *q;
	size_t i, n = 0;

	s.mode = units_parse_args(&argc, argv, 0);
	s.cols = 1 << COL_ID | 1 << COL_RFER | 1 << COL_EXCL | 1 << COL_PATH;
	while ((c = cli_getopt_long(argc, argv, stale ? "" : "pcreFf", "sort:=S sync=Y",
				    show_usage)) != -1) {
		const char *col = strchr("prec", c);

		if (col)   /* COL_PARENT, COL_MAX_RFER, COL_MAX_EXCL, COL_CHILD */
			s.cols |= 1 << (int[]){ COL_PARENT, COL_MAX_RFER, COL_MAX_EXCL, COL_CHILD }[col - "prec"];
		else if (c == 'F' || c == 'f')
			filter |= c == 'F' ? 1 : 2;
		else if (c == 'Y')
			sync_first = 1;
		else if (parse_sort(&s, optarg)) {
			msg_error("unrecognized format of sort string");
			return 1;
		}
	}
	cli_check_argc(argc, 1, 1, show_usage);
	fd = btrfs_open_path(argv[optind], 1, 0);
	if (fd < 0)
		return 1;
	if ((sync_first || stale) && ioctl(fd, BTRFS_IOC_SYNC, NULL) < 0)
		msg_warn("sync ioctl failed on '%s': %m", argv[optind]);
	if (filter && subvol_id_of_fd(fd, &rootid)) {
		msg_error("cannot resolve rootid for %s: %m", argv[optind]);
		close(fd);
		return 1;
	}
	if ((c = qgroups_read(fd, &s.g, stale))) {
		close(fd);
		return c > 0;
	}
	if (stale) {
		c = clear_stale(&s.g, fd);
		goto out;
	}
	/* the filters keep the qgroup of the path (-f) and, with -F, those above it */
	q = s.g.q;
	for (i = 0; i < s.g.n; i++)
		if (!filter || ((!(filter & 1) || shown(&s.g, q[i].id, rootid, 1)) &&
				(!(filter & 2) || q[i].id == rootid))) {
			struct qgroup t = q[n];   /* the shown ones first, all kept to be freed */

			q[n++] = q[i];
			q[i] = t;
		}
	sort_ctx = &s;
	sort_stable(q, n, sizeof(*q), qgroup_cmp);
	if (out_json())
		print_json(&s, q, n);
	else
		print_table(&s, q, n);
	c = 0;
out:
	qgroups_free(&s.g);
	close(fd);
	return c;
}
#endif
