/* btrfsck / btrfs check: read-only consistency check (the checker is fs/check*.c). */
//config:config APPLET_CHECK
//config:	bool "btrfsck"
//config:	default y
//config:	help
//config:	  btrfsck / btrfs check: check the structural integrity of an
//config:	  unmounted filesystem in bounded memory.
//cmd:APPLET_CHECK check_main btrfsck|btrfsck
#include "config.h"
#if CFG_APPLET_CHECK
#include "check.h"
#include "cli.h"
#include "fs.h"
#include "le.h"
#include "sysfile.h"
#include "uuid.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"usage: btrfs check [options] <device>\n"
	"\n"
	"    Check structural integrity of a filesystem (unmounted).\n"
	"\n"
	"    Check structural integrity of an unmounted filesystem. Verify internal\n"
	"    trees' consistency and item connectivity. Repair is not supported yet.\n"
	"\n"
	"    Starting point selection:\n"
	"    -s|--super <superblock>   use this superblock copy\n"
	"    -b|--backup               use the first valid backup root copy\n"
	"    -r|--tree-root <bytenr>   use the given bytenr for the tree root\n"
	"    --chunk-root <bytenr>     use the given bytenr for the chunk tree root\n"
	"\n"
	"    Operation modes:\n"
	"    --readonly                run in read-only mode (default)\n"
	"    --repair                  try to repair the filesystem (not supported yet)\n"
	"    --force                   skip mount checks, repair is not possible\n"
	"    --mode <MODE>             original or lowmem (one bounded-memory implementation)\n"
	"    --tmpdir <DIR>            where sorted reference runs spill (default /tmp)\n"
	"\n"
	"    Check and reporting options:\n"
	"    --check-data-csum         verify checksums of data blocks\n"
	"    -Q|--qgroup-report        print a report on qgroup consistency (not supported)\n"
	"    -E|--subvol-extents <subvolid>\n"
	"                              print subvolume extents and sharing state (not supported)\n"
	"    -p|--progress             indicate progress\n";

enum {
	OPT_REPAIR = 256, OPT_READONLY, OPT_FORCE, OPT_MODE, OPT_CHUNK_ROOT, OPT_DATA_CSUM,
	OPT_INIT_CSUM, OPT_INIT_EXTENT, OPT_CLEAR_CACHE, OPT_CLEAR_INO, OPT_TMPDIR,
};
static const struct option long_opts[] = {
	{ "super", required_argument, NULL, 's' },
	{ "backup", no_argument, NULL, 'b' },
	{ "tree-root", required_argument, NULL, 'r' },
	{ "chunk-root", required_argument, NULL, OPT_CHUNK_ROOT },
	{ "readonly", no_argument, NULL, OPT_READONLY },
	{ "repair", no_argument, NULL, OPT_REPAIR },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "tmpdir", required_argument, NULL, OPT_TMPDIR },
	{ "check-data-csum", no_argument, NULL, OPT_DATA_CSUM },
	{ "qgroup-report", no_argument, NULL, 'Q' },
	{ "subvol-extents", required_argument, NULL, 'E' },
	{ "progress", no_argument, NULL, 'p' },
	{ "init-csum-tree", no_argument, NULL, OPT_INIT_CSUM },
	{ "init-extent-tree", no_argument, NULL, OPT_INIT_EXTENT },
	{ "clear-space-cache", required_argument, NULL, OPT_CLEAR_CACHE },
	{ "clear-ino-cache", no_argument, NULL, OPT_CLEAR_INO },
	{ NULL, 0, NULL, 0 },
};

struct check_args {
	struct fs_open_opts open;
	struct check_opts opts;
	int force, progress, writes;
	const char *modifier;   /* the option that would write */
};

/* ---- output -------------------------------------------------------------------- */

struct out_state {
	int progress;           /* -p on a terminal */
	int progress_line;      /* a progress line is on screen */
	int data_csum;
	struct check_stats *st;
	enum check_stage cur;
};

static const char *stage_text(enum check_stage s, int fst, int data_csum, int quota)
{
	switch (s) {
	case CHECK_STAGE_ROOT_ITEMS: return "checking root items";
	case CHECK_STAGE_EXTENTS: return "checking extents";
	case CHECK_STAGE_FREE_SPACE: return fst ? "checking free space tree" : "checking free space cache";
	case CHECK_STAGE_FS_ROOTS: return "checking fs roots";
	case CHECK_STAGE_CSUMS:
		return data_csum ? "checking csums against data"
				 : "checking only csums items (without verifying data)";
	case CHECK_STAGE_ROOT_REFS: return "checking root refs";
	case CHECK_STAGE_QGROUPS:
		return quota ? "checking quota groups"
			     : "checking quota groups skipped (not enabled on this FS)";
	}
	return "";
}

/* What the reference says after a stage that found errors. */
static const char *stage_failure(enum check_stage s)
{
	switch (s) {
	case CHECK_STAGE_ROOT_ITEMS: return "errors found in root items";
	case CHECK_STAGE_EXTENTS: return "errors found in extent allocation tree or chunk allocation";
	case CHECK_STAGE_FREE_SPACE: return "errors found in free space tree";
	case CHECK_STAGE_FS_ROOTS: return "errors found in fs roots";
	case CHECK_STAGE_CSUMS: return "errors found in csum tree";
	case CHECK_STAGE_ROOT_REFS: return "errors found in root refs";
	default: return "errors found in quota groups";
	}
}

static void end_progress_line(struct out_state *o)
{
	if (o->progress_line) {
		fputc('\n', stderr);
		o->progress_line = 0;
	}
}

static void finish_stage(struct out_state *o)
{
	end_progress_line(o);
	if (o->cur && o->st->stage_errors[o->cur])
		msg_error("%s", stage_failure(o->cur));
}

static void on_stage(void *ctx, enum check_stage s, int fst)
{
	struct out_state *o = ctx;

	finish_stage(o);
	o->cur = s;
	fprintf(stderr, "[%d/%d] %s\n", s, CHECK_NUM_STAGES,
		stage_text(s, fst, o->data_csum, o->st->quota_enabled));
}

static void on_problem(void *ctx, const struct check_problem *p)
{
	struct out_state *o = ctx;

	end_progress_line(o);
	if (p->raw)
		fprintf(stderr, "%s\n", p->msg);
	else if (p->warning)
		msg_warn("%s", p->msg);
	else
		msg_error("%s", p->msg);
}

static void on_progress(void *ctx, enum check_stage s, uint64_t done)
{
	struct out_state *o = ctx;

	if (!o->progress)
		return;
	fprintf(stderr, "\r[%d/%d] %llu items", s, CHECK_NUM_STAGES, (unsigned long long)done);
	o->progress_line = 1;
}

static void print_summary(const struct check_stats *st, int failed)
{
	printf("found %llu bytes used, %s\n", (unsigned long long)st->bytes_used,
	       failed ? "error(s) found" : "no error found");
	printf("total csum bytes: %llu\n", (unsigned long long)st->total_csum_bytes);
	printf("total tree bytes: %llu\n", (unsigned long long)st->total_tree_bytes);
	printf("total fs tree bytes: %llu\n", (unsigned long long)st->total_fs_tree_bytes);
	printf("total extent tree bytes: %llu\n", (unsigned long long)st->total_extent_tree_bytes);
	printf("btree space waste bytes: %llu\n", (unsigned long long)st->btree_space_waste);
	printf("file data blocks allocated: %llu\n referenced %llu\n",
	       (unsigned long long)st->data_bytes_allocated,
	       (unsigned long long)st->data_bytes_referenced);
}

/* ---- devices ------------------------------------------------------------------- */

/* The loop devices ("loopN") backed by the regular file real. */
static int backing_loops(const char *real, char names[][32], int max)
{
	char line[PATH_MAX + 1], p[300];
	struct dirent *de;
	DIR *d = opendir("/sys/block");
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		FILE *f;

		if (strncmp(de->d_name, "loop", 4) || strlen(de->d_name) >= 32)
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!strcmp(line, real))
				strcpy(names[n++], de->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

struct mounted_query {
	const struct stat *pst;
	char (*loops)[32];
	int nloops;
};

/* Whether the btrfs mount m is on the queried device (or one of its loop devices). */
static int mount_is_query(const struct sys_mount *m, void *ctx)
{
	const struct mounted_query *q = ctx;
	struct stat st;

	if (strcmp(m->fstype, "btrfs") || stat(m->source, &st) < 0 || !S_ISBLK(st.st_mode))
		return 0;
	if (S_ISBLK(q->pst->st_mode) && st.st_rdev == q->pst->st_rdev)
		return 1;
	for (int i = 0; i < q->nloops; i++)
		if (!strncmp(m->source, "/dev/", 5) && !strcmp(m->source + 5, q->loops[i]))
			return 1;
	return 0;
}

/* 1 when path (or a loop device backed by it) is a mounted btrfs, 0 if not, <0 unknown. */
static int is_mounted(const char *path)
{
	char real[PATH_MAX], loops[16][32];
	struct stat pst;
	struct mounted_query q = { &pst, loops, 0 };

	if (stat(path, &pst) < 0)
		return -errno;
	if (S_ISREG(pst.st_mode) && realpath(path, real))
		q.nloops = backing_loops(real, loops, 16);
	else if (!S_ISBLK(pst.st_mode))
		return 0;
	return sysfile_each_mount(mount_is_query, &q);
}

/* ---- main ----------------------------------------------------------------------- */

static void parse_args(int argc, char **argv, struct check_args *a)
{
	int c;
	uint64_t v;

	memset(a, 0, sizeof(*a));
	fs_open_opts_init(&a->open);
	a->opts.tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	while ((c = cli_getopt(argc, argv, "s:br:pQE:", long_opts, usage)) != -1) {
		switch (c) {
		case 's':
			if (cli_parse_u64(optarg, &v) || v >= BTRFS_SUPER_MIRRORS)
				cli_usage_error(usage, "super mirror should be less than 3");
			a->open.super_mirror = (int)v;
			printf("using SB copy %llu, bytenr %llu\n", (unsigned long long)v,
			       (unsigned long long)btrfs_super_offset((int)v));
			break;
		case 'b':
			a->open.backup_root = 0;
			break;
		case 'r':
			if (cli_parse_u64(optarg, &a->open.tree_root))
				cli_usage_error(usage, "bad tree root bytenr");
			break;
		case OPT_CHUNK_ROOT:
			if (cli_parse_u64(optarg, &a->open.chunk_root))
				cli_usage_error(usage, "bad chunk root bytenr");
			break;
		case 'p':
			a->progress = 1;
			break;
		case 'Q':
			a->modifier = a->modifier ? a->modifier : "--qgroup-report";
			break;
		case 'E':
			a->modifier = a->modifier ? a->modifier : "--subvol-extents";
			break;
		case OPT_READONLY:
			break;
		case OPT_FORCE:
			a->force = 1;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "original") && strcmp(optarg, "lowmem"))
				cli_usage_error(usage, "unknown mode (original or lowmem)");
			break;
		case OPT_TMPDIR:
			a->opts.tmpdir = optarg;
			break;
		case OPT_DATA_CSUM:
			a->opts.check_data_csum = 1;
			break;
		case OPT_REPAIR:
			a->writes = 1;
			a->modifier = "--repair";
			break;
		case OPT_INIT_CSUM:
		case OPT_INIT_EXTENT:
		case OPT_CLEAR_CACHE:
		case OPT_CLEAR_INO:
			a->writes = 1;
			a->modifier = c == OPT_INIT_CSUM ? "--init-csum-tree" :
				      c == OPT_INIT_EXTENT ? "--init-extent-tree" :
				      c == OPT_CLEAR_CACHE ? "--clear-space-cache" : "--clear-ino-cache";
			break;
		}
	}
	cli_check_argc(argc, 1, 1, usage);
}

static int run_check(struct fs *fs, struct check_args *a, const char *path)
{
	struct check_stats st;
	struct out_state o = { 0 };
	char uuid[UUID_STR_LEN];
	int ret;

	o.progress = a->progress && isatty(2);
	o.data_csum = a->opts.check_data_csum;
	o.st = &st;
	memset(&st, 0, sizeof(st));
	a->opts.stage = on_stage;
	a->opts.problem = on_problem;
	a->opts.progress = on_progress;
	a->opts.ctx = &o;
	uuid_unparse(fs->fsid, uuid);
	printf("Checking filesystem on %s\nUUID: %s\n", path, uuid);
	/* btrfs-image dumps hold no data: every data checksum would mismatch */
	if (a->opts.check_data_csum &&
	    (get_le64(&fs->sb.flags) & (BTRFS_SUPER_FLAG_METADUMP | BTRFS_SUPER_FLAG_METADUMP_V2))) {
		printf("skip data csum verification for metadata dump\n");
		a->opts.check_data_csum = 0;
	}
	fflush(stdout);
	ret = check_fs(fs, &a->opts, &st);
	finish_stage(&o);
	if (ret < 0) {
		char buf[300];

		msg_error("check aborted: %s", fs_error_format(&fs->err, buf, sizeof(buf)));
		st.errors++;
	}
	print_summary(&st, st.errors != 0);
	return st.errors ? 1 : 0;
}

int check_main(int argc, char **argv)
{
	struct check_args a;
	struct fs_error err;
	uint64_t missing[8];
	struct fs *fs;
	const char *path;
	int ret;

	parse_args(argc, argv, &a);
	a.open.scan = 1;
	a.open.allow_degraded = 1;
	path = argv[optind];
	if (a.writes) {
		msg_error("%s is not supported yet: this btrfs check is read-only, nothing was written",
			  a.modifier);
		return 1;
	}
	if (a.modifier) {
		msg_error("%s is not supported yet", a.modifier);
		return 1;
	}
	printf("Opening filesystem to check...\n");
	fflush(stdout);
	ret = is_mounted(path);
	if (ret < 0 && ret != -ENOENT && !a.force) {
		msg_error("could not check mount status: %s", strerror(-ret));
		return 1;
	}
	if (ret > 0 && !a.force) {
		msg_error("%s is currently mounted, use --force if you really intend to check the filesystem",
			  path);
		return 1;
	}
	if (ret > 0)
		msg_warn("filesystem mounted, continuing because of --force");
	fs = fs_open(&path, 1, &a.open, &err);
	if (!fs) {
		char buf[300];

		msg_error("cannot open file system: %s", fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	for (int i = 0, n = fs_missing_devids(fs, missing, 8); i < n && i < 8; i++)
		printf("warning, device %llu is missing\n", (unsigned long long)missing[i]);
	ret = run_check(fs, &a, path);
	fs_close(fs);
	return ret;
}
#endif
//cmd:APPLET_CHECK check_main btrfs check|Check structural integrity of a filesystem (unmounted)
