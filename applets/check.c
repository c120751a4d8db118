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
#include "applets.h"
#include "fs/check/check.h"
#include "fs/core/fs.h"
#include "fs/repair/repair.h"
#include "fs/write/write.h"
#include "util/cli/cli.h"
#include "util/le.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

USAGE(usage) =
	"usage: btrfs check [options] <device>\n"
	"\n"
	"    Check structural integrity of a filesystem (unmounted).\n"
	"\n"
	"    Check structural integrity of an unmounted filesystem. Verify internal\n"
	"    trees' consistency and item connectivity. In the repair mode try to\n"
	"    fix the problems found.\n"
	"    WARNING: the repair mode is considered dangerous and should not be used\n"
	"             without prior analysis of problems found on the filesystem.\n"
	"\n"
	"    Starting point selection:\n"
	"    -s|--super <superblock>   use this superblock copy\n"
	"    -b|--backup               use the first valid backup root copy\n"
	"    -r|--tree-root <bytenr>   use the given bytenr for the tree root\n"
	"    --chunk-root <bytenr>     use the given bytenr for the chunk tree root\n"
	"\n"
	"    Operation modes:\n"
	"    --readonly                run in read-only mode (default)\n"
	"    --repair                  try to repair the filesystem (dangerous, see above warning);\n"
	"                              written only when the check of the result finds no new\n"
	"                              error, with an undo file (see 'btrfs rescue undo')\n"
	"    --force                   skip mount checks (a repair of a mounted filesystem\n"
	"                              stops before writing) and the countdown before a repair\n"
	"    --undo FILE               where the repair saves what it overwrites (default: a\n"
	"                              new file in the --tmpdir directory)\n"
	"    --no-undo                 repair without an undo file\n"
	"    --mode <MODE>             original or lowmem (one bounded-memory implementation)\n"
	"    --tmpdir <DIR>            where sorted reference runs spill (default /tmp)\n"
	"\n"
	"    Repair options:\n"
	"    --init-csum-tree          create a new CRC tree\n"
	"    --init-extent-tree        create a new extent tree\n"
	"\n"
	"    Check and reporting options:\n"
	"    --check-data-csum         verify checksums of data blocks\n"
	"    -Q|--qgroup-report        print a report on qgroup consistency\n"
	"    -E|--subvol-extents <subvolid>\n"
	"                              print subvolume extents and sharing state (not supported)\n"
	"    -p|--progress             indicate progress\n"
	"\n"
	"    Deprecated or moved options:\n"
	"    --clear-space-cache v1|v2 clear space cache for v1 or v2 (moved to 'rescue' group)\n";

enum {
	OPT_REPAIR = 256, OPT_READONLY, OPT_FORCE, OPT_MODE, OPT_CHUNK_ROOT, OPT_DATA_CSUM,
	OPT_INIT_CSUM, OPT_INIT_EXTENT, OPT_CLEAR_CACHE, OPT_CLEAR_INO, OPT_TMPDIR, OPT_UNDO,
	OPT_NO_UNDO,
};
static const struct cli_option long_opts[] = {
	{ "super", required_argument, 's' },
	{ "backup", no_argument, 'b' },
	{ "tree-root", required_argument, 'r' },
	{ "chunk-root", required_argument, OPT_CHUNK_ROOT },
	{ "readonly", no_argument, OPT_READONLY },
	{ "repair", no_argument, OPT_REPAIR },
	{ "force", no_argument, OPT_FORCE },
	{ "mode", required_argument, OPT_MODE },
	{ "tmpdir", required_argument, OPT_TMPDIR },
	{ "check-data-csum", no_argument, OPT_DATA_CSUM },
	{ "qgroup-report", no_argument, 'Q' },
	{ "subvol-extents", required_argument, 'E' },
	{ "progress", no_argument, 'p' },
	{ "init-csum-tree", no_argument, OPT_INIT_CSUM },
	{ "init-extent-tree", no_argument, OPT_INIT_EXTENT },
	{ "clear-space-cache", required_argument, OPT_CLEAR_CACHE },
	{ "clear-ino-cache", no_argument, OPT_CLEAR_INO },
	{ "undo", required_argument, OPT_UNDO },
	{ "no-undo", no_argument, OPT_NO_UNDO },
	{ NULL, 0, 0 },
};

struct check_args {
	struct fs_open_opts open;
	struct check_opts opts;
	int force, progress, writes, readonly, no_undo, init_csum, init_extent;
	int qgroup_report;              /* -Q: the qgroups' numbers, not the check */
	uint64_t adopt_root;            /* the repair works on the root tree (a backup root's) of this generation */
	int rebuild_chunks;             /* the chunk map came from a scan of the devices */
	int use_backup;                 /* the root tree from the backup roots */
	int lost_writes;                /* (for it) blocks of later transactions are lost */
	uint64_t lost_writes_names;     /* the names a backup root must have then */
	int in_place;                   /* no backup root is whole: lost writes mended in place */
	const char *modifier;   /* the option that would write */
	const char *undo, *clear_cache;
};

/* ---- output -------------------------------------------------------------------- */

struct out_state {
	int progress;           /* -p on a terminal */
	int progress_line;      /* a progress line is on screen */
	int data_csum;
	struct check_stats *st;
	enum check_stage cur;
};

/* What the output of a check (or the checks of a repair) starts from. */
static struct out_state out_for(const struct check_args *a, struct check_stats *st)
{
	return (struct out_state){ .progress = a->progress && isatty(2),
				   .data_csum = a->opts.check_data_csum, .st = st };
}

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
	o->cur = 0;
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

	if (p->quiet)
		return;
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
	a->opts.threads = getenv("BTRFSBOX_THREADS") ? atoi(getenv("BTRFSBOX_THREADS")) : 0;
	while ((c = cli_getopt(argc, argv, "s:br:pQE:", long_opts, usage)) != -1) {
		switch (c) {
		case 's':
			v = cli_arg_u64(optarg);
			if (v >= BTRFS_SUPER_MIRRORS)
				cli_usage_error(usage, "super mirror should be less than 3");
			a->open.super_mirror = (int)v;
			printf("using SB copy %llu, bytenr %llu\n", (unsigned long long)v,
			       (unsigned long long)btrfs_super_offset((int)v));
			break;
		case 'b':
			a->open.backup_root = 0;
			break;
		case 'r':
			a->open.tree_root = cli_arg_u64(optarg);
			break;
		case OPT_CHUNK_ROOT:
			a->open.chunk_root = cli_arg_u64(optarg);
			break;
		case 'p':
			a->progress = 1;
			break;
		case 'Q':
			a->qgroup_report = 1;
			break;
		case 'E':
			a->modifier = a->modifier ? a->modifier : "--subvol-extents";
			break;
		case OPT_READONLY:
			a->readonly = 1;
			break;
		case OPT_FORCE:
			a->force = 1;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "original") && strcmp(optarg, "lowmem")) {
				msg_error("unknown mode: %s", optarg);
				exit(1);
			}
			break;
		case OPT_TMPDIR:
			a->opts.tmpdir = optarg;
			break;
		case OPT_DATA_CSUM:
			a->opts.check_data_csum = 1;
			break;
		case OPT_REPAIR:
			printf("enabling repair mode\n");
			a->writes = 1;
			break;
		case OPT_INIT_CSUM:
			printf("Creating a new CRC tree\n");
			a->writes = a->init_csum = 1;
			break;
		case OPT_INIT_EXTENT:
			a->writes = a->init_extent = 1;
			break;
		case OPT_CLEAR_CACHE:
			if (strcmp(optarg, "v1") && strcmp(optarg, "v2")) {
				msg_error("invalid argument to --clear-space-cache, must be v1 or v2");
				exit(1);
			}
			a->clear_cache = optarg;
			break;
		case OPT_CLEAR_INO:
			a->modifier = "--clear-ino-cache";
			break;
		case OPT_UNDO:
			a->undo = optarg;
			break;
		case OPT_NO_UNDO:
			a->no_undo = 1;
			break;
		}
	}
	cli_check_argc(argc, 1, 1, usage);
}

static int run_check(struct fs *fs, struct check_args *a, const char *path)
{
	struct check_stats st;
	struct out_state o = out_for(a, &st);
	char uuid[UUID_STR_LEN];
	int ret;

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

/* ---- --qgroup-report ------------------------------------------------------------ */

struct qgroup_report {
	int noted;              /* the numbers are known not to match: said so */
	int different;
};

static void print_counts(const char *who, const char *what, long long bytes, long long compressed)
{
	printf("%s\t\t%s %lld %s compressed %lld\n", who, what, bytes, what, compressed);
}

static void on_qgroup(void *ctx, const struct check_qgroup *g)
{
	struct qgroup_report *r = ctx;
	long long rdiff = (long long)(g->rfer - g->disk_rfer), ediff = (long long)(g->excl - g->disk_excl);

	if (!r->noted && (g->rescan || g->inconsistent))
		printf(g->rescan ? "Qgroup rescan is running, a difference in qgroup counts is expected\n"
				 : "Rescan hasn't been initialzied, a difference in qgroup accounting is expected\n");
	r->noted |= g->rescan || g->inconsistent;
	r->different |= (rdiff || ediff) && !g->rescan && !g->inconsistent;
	printf("Counts for qgroup id: %llu/%llu %s\n", (unsigned long long)(g->id >> 48),
	       (unsigned long long)(g->id & ((1ULL << 48) - 1)), rdiff || ediff ? "are different" : "");
	print_counts("our:", "referenced", (long long)g->rfer, (long long)g->rfer);
	print_counts("disk:", "referenced", (long long)g->disk_rfer, (long long)g->disk_rfer_cmpr);
	if (rdiff)
		print_counts("diff:", "referenced", rdiff, rdiff);
	print_counts("our:", "exclusive", (long long)g->excl, (long long)g->excl);
	print_counts("disk:", "exclusive", (long long)g->disk_excl, (long long)g->disk_excl_cmpr);
	if (ediff)
		print_counts("diff:", "exclusive", ediff, ediff);
}

static void ignore_stage(void *ctx, enum check_stage s, int fst)
{
	(void)ctx, (void)s, (void)fst;
}

static void ignore_problem(void *ctx, const struct check_problem *p)
{
	(void)ctx, (void)p;
}

/* The qgroups' numbers as counted beside those of their items, as btrfs-progs prints
 * them; 1 when they differ where they should not. */
static int qgroup_report(struct fs *fs, struct check_args *a, const char *path)
{
	struct qgroup_report r = { 0, 0 };
	struct check_stats st;
	char uuid[UUID_STR_LEN], buf[300];

	memset(&st, 0, sizeof(st));
	a->opts.stage = ignore_stage;
	a->opts.problem = ignore_problem;
	a->opts.qgroup = on_qgroup;
	a->opts.ctx = &r;
	uuid_unparse(fs->fsid, uuid);
	printf("Checking filesystem on %s\nUUID: %s\nPrint quota groups report for %s\nUUID: %s\n", path, uuid,
	       path, uuid);
	if (check_fs(fs, &a->opts, &st) < 0) {
		msg_error("failed to check quota groups: %s", fs_error_format(&fs->err, buf, sizeof(buf)));
		return 1;
	}
	return r.different;
}

/* ---- writing ------------------------------------------------------------------- */

/* --clear-space-cache v1|v2: 'btrfs rescue clear-space-cache' run through the command table. */
static int clear_space_cache(struct check_args *a, const char *path)
{
	char *with_undo[] = { "btrfs", "rescue", "clear-space-cache", "--undo", (char *)a->undo,
			      (char *)a->clear_cache, (char *)path, NULL };
	char *plain[] = { "btrfs", "rescue", "clear-space-cache", (char *)a->clear_cache, (char *)path, NULL };

	msg_warn("--clear-space-cache option is deprecated, please use \"btrfs rescue clear-space-cache\" instead");
	if (!CFG_RESCUE_CLEAR_SPACE_CACHE) {
		msg_error("clearing the space cache is not built in, nothing was written");
		return 1;
	}
	optind = 0;
	return a->undo ? cmd_run_group(7, with_undo) : cmd_run_group(5, plain);
}

#if CFG_CHECK_REPAIR
static void countdown(void)
{
	printf("WARNING:\n\n"
	       "\tDo not use --repair unless you are advised to do so by a developer\n"
	       "\tor an experienced user, and then only after having accepted that no\n"
	       "\tfsck can successfully repair all types of filesystem corruption. E.g.\n"
	       "\tsome software or hardware bugs can fatally damage a volume.\n"
	       "\tThe operation will start in 10 seconds.\n"
	       "\tUse Ctrl-C to stop it.\n");
	for (int i = 10; i > 0; i--) {
		printf("%2d", i);
		fflush(stdout);
		sleep(1);
	}
	printf("\nStarting repair.\n");
}

/* The undo file when none is named: a new file in the --tmpdir directory, named after the
 * filesystem and the time ("-2", "-3" ... added when a repair of the same second made
 * one). 0 or the error of the last try (fs->err). */
static int start_default_undo(const struct check_args *a, struct fs *fs, char *buf, size_t size)
{
	char uuid[UUID_STR_LEN], n[16] = "";
	time_t now = time(NULL);
	struct tm tm;
	int ret = -EEXIST;

	uuid_unparse(fs->fsid, uuid);
	localtime_r(&now, &tm);
	for (int i = 1; ret == -EEXIST && i < 1000; i++) {
		if (i > 1)
			snprintf(n, sizeof(n), "-%d", i);
		snprintf(buf, size, "%s/btrfs-repair-%s-%04d%02d%02d-%02d%02d%02d%s.undo", a->opts.tmpdir, uuid,
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, n);
		ret = fs_undo_start(fs, buf);
	}
	return ret;
}

/* A log tree is the kernel's to replay; the repair drops it only when the user agrees. */
static int drop_log(struct fs *fs)
{
	char line[16];

	if (!get_le64(&fs->sb.log_root))
		return 0;
	if (!isatty(STDIN_FILENO)) {
		msg_error("the filesystem has a log tree that the repair would drop: mount it once to replay "
			  "the log (or drop it with 'btrfs rescue zero-log'); not asking without a terminal");
		return -1;
	}
	printf("repair mode will force to clear out log tree, are you sure? [y/N]: ");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || (line[0] != 'y' && line[0] != 'Y'))
		return -1;
	printf("Clearing tree-log\n");
	put_le64(&fs->sb.log_root, 0);
	fs->sb.log_root_level = 0;
	return 0;
}

static void on_fixed(void *ctx, const char *what)
{
	finish_stage(ctx);
	printf("%s\n", what);
}

static void on_left(void *ctx, const struct check_problem *p)
{
	on_problem(ctx, p);
}

/* run_repair: the repair needs the chunk map recovered, or a backup root */
#define NEED_CHUNKS 2
#define NEED_BACKUP 3

static int run_repair(struct fs *fs, struct check_args *a, const char *path, int *written)
{
	struct repair_opts ro = { .check = a->opts, .init_csum_tree = a->init_csum,
				  .init_extent_tree = a->init_extent, .adopt_root = a->adopt_root,
				  .in_place = a->in_place, .rebuild_chunks = a->rebuild_chunks,
				  .fixed = on_fixed, .left = on_left };
	struct repair_result r;
	struct out_state o = out_for(a, &r.first);
	char uuid[UUID_STR_LEN];
	int ret;

	ro.check.stage = on_stage;
	ro.check.problem = on_problem;
	ro.check.progress = on_progress;
	ro.check.ctx = &o;
	uuid_unparse(fs->fsid, uuid);
	printf("Checking filesystem on %s\nUUID: %s\n", path, uuid);
	fflush(stdout);
	if (drop_log(fs))
		return 1;
	ret = repair_fs(fs, &ro, &r);
	finish_stage(&o);
	if (!ret && r.need_chunks) {
		printf("chunks are missing or do not match their block groups and device extents\n");
		return NEED_CHUNKS;
	} else if (!ret && r.need_backup) {
		a->lost_writes = r.lost_writes;
		a->lost_writes_names = r.names;
		printf(r.lost_writes ? "tree blocks the last transactions wrote are lost or hold older ones (writes "
				       "that were lost): "
				       "trying the backup roots\n"
				     : "a leaf of the root tree is lost: trying the backup roots\n");
		return NEED_BACKUP;
	} else if (ret < 0) {
		char buf[300];

		msg_error("repair aborted, nothing was written: %s", fs_error_format(&fs->err, buf, sizeof(buf)));
		r.last.errors++;
	} else if (r.refused) {
		msg_error("the repair would leave errors the filesystem did not have (above): nothing was written");
	} else if (r.nothing) {
		msg_error("none of the errors is one that repair knows how to fix: nothing was written");
	} else if (!r.written && r.first.errors) {
		msg_error("the repair did not make the filesystem better: nothing was written");
	} else if (r.written) {
		printf("Repaired: %llu change%s written, %s\n", (unsigned long long)r.changes,
		       r.changes == 1 ? "" : "s", r.last.errors ? "errors are left" : "no error left");
	}
	print_summary(&r.last, r.last.errors != 0);
	*written = r.written;
	return r.last.errors || ret < 0 ? 1 : 0;
}

/* The filesystem opened with its chunk map recovered from a scan of the devices (its
 * chunk tree is lost or does not match), err kept as it was when that fails too. */
static struct fs *open_recovering_chunks(struct check_args *a, const char *path,
					 const struct fs_wopen_opts *wo, struct fs_error *err)
{
	struct repair_chunks found;
	struct fs_error err2;
	char ebuf[300];
	struct fs *fs;

	if (err->code)
		msg_warn("cannot open file system: %s", fs_error_format(err, ebuf, sizeof(ebuf)));
	printf("Scanning the devices to recover the chunk tree...\n");
	fflush(stdout);
	fs = repair_open_chunks(&path, 1, wo, &found, &err2);
	if (!fs) {
		msg_warn("chunk tree not recovered: %s", fs_error_format(&err2, ebuf, sizeof(ebuf)));
		return NULL;
	}
	printf("chunks recovered: %d from their items, %d made from block groups and device extents\n",
	       found.from_items, found.made);
	if (found.lost)
		msg_warn("%d block group%s without a chunk (the first at %llu): what they hold is lost",
			 found.lost, found.lost == 1 ? "" : "s", (unsigned long long)found.first_lost);
	a->rebuild_chunks = 1;
	return fs;
}

/* The root tree's root block read with a generation newer than the superblock's (err),
 * the rest of it good: the generation field alone is damaged, as no write made it. The
 * filesystem opened with that block as it is; the repair copies it anew and makes it
 * the filesystem's (a->adopt_root), as it does a backup root. NULL: not so. */
static struct fs *open_root_newer_gen(struct check_args *a, const char *path, const struct fs_wopen_opts *wo,
				      const struct fs_error *err)
{
	unsigned long long wanted, found;
	struct fs_wopen_opts o = *wo;
	struct fs_error err2;
	struct fs *fs;

	if (err->tree != BTRFS_ROOT_TREE_OBJECTID || err->has_key || !err->logical ||
	    sscanf(err->msg, "parent transid verify failed: wanted %llu found %llu", &wanted, &found) != 2 ||
	    found <= wanted)
		return NULL;
	o.open.tree_root = err->logical;
	fs = fs_wopen(&path, 1, &o, &err2);
	if (fs) {
		printf("the root tree's block %llu has generation %llu where %llu is wanted (the field "
		       "damaged): it is copied anew\n", (unsigned long long)err->logical, found, wanted);
		a->adopt_root = wanted;
	}
	return fs;
}

/* The filesystem opened for the repair: as it is, else with its root block's damaged
 * generation, else from a backup root (a lost root tree), else with its chunk map
 * recovered (a lost chunk tree; a->rebuild_chunks set: at once). NULL when none can be
 * opened, said. */
static struct fs *open_for_repair(struct check_args *a, const char *path, const struct fs_wopen_opts *wo)
{
	struct fs_error err;
	char ebuf[300];
	struct fs *fs;

	fs_err_clear(&err);
	fs = a->rebuild_chunks || a->use_backup ? NULL : fs_wopen(&path, 1, wo, &err);
	if (!fs && !a->rebuild_chunks && !a->use_backup && a->open.backup_root < 0 && !a->open.tree_root)
		fs = open_root_newer_gen(a, path, wo, &err);

	if (!fs && (a->use_backup || (!a->rebuild_chunks && err.tree == BTRFS_ROOT_TREE_OBJECTID)) &&
	    a->open.backup_root < 0 && !a->open.tree_root) {
		/* the root tree is lost: the last transaction whose root tree is whole */
		uint64_t gen;

		if (err.code)
			msg_warn("cannot read the root tree: %s", fs_error_format(&err, ebuf, sizeof(ebuf)));
		fs = repair_open_backup(&path, 1, wo, a->lost_writes, a->lost_writes_names, &gen, &err);
		if (fs)
			printf("using the root tree of generation %llu from the backup roots: what later "
			       "transactions wrote is not in it\n", (unsigned long long)gen);
		a->adopt_root = fs ? gen : 0;
		if (!fs && a->lost_writes) {
			/* no earlier state is whole: the blocks are mended where they are */
			msg_warn("%s: the lost writes are mended in place",
				 err.code ? fs_error_format(&err, ebuf, sizeof(ebuf)) : "no backup root is whole");
			a->in_place = 1;
			fs = fs_wopen(&path, 1, wo, &err);
		}
	}
	if (!fs && !a->use_backup && (a->rebuild_chunks || err.code != -EBUSY))
		fs = open_recovering_chunks(a, path, wo, &err);
	if (!fs)
		msg_error("cannot open file system: %s", err.code ? fs_error_format(&err, ebuf, sizeof(ebuf)) :
			  "its chunks could not be recovered");
	return fs;
}

/* The repair of an open filesystem, with its undo file. */
static int repair_with_undo(struct fs *fs, struct check_args *a, const char *path)
{
	char buf[PATH_MAX + 64], ebuf[300];
	const char *undo = a->undo;
	int ret = 0, written = 0;

	if (undo)
		ret = fs_undo_start(fs, undo);
	else if (!a->no_undo)
		ret = start_default_undo(a, fs, buf, sizeof(buf)), undo = buf;
	if (ret) {
		msg_error("%s (use --undo FILE elsewhere, or --no-undo)", fs_error_format(&fs->err, ebuf, sizeof(ebuf)));
		fs_wclose(fs);
		return 1;
	}
	if (undo)
		printf("Undo file: %s\n", undo);
	fflush(stdout);
	ret = run_repair(fs, a, path, &written);
	if (fs_wclose(fs)) {
		msg_error("cannot close the undo file %s: %s", undo, strerror(errno));
		ret = 1;
	} else if (undo && !written && !a->undo) {
		unlink(undo);           /* nothing to undo */
	} else if (undo && written) {
		printf("To undo the repair: btrfs rescue undo %s %s\n", undo, path);
	}
	return ret;
}

static int check_readonly(struct check_args *a, const char *path);

static int repair_main(struct check_args *a, const char *path)
{
	struct fs_wopen_opts wo;
	struct fs *fs;
	int ret;

	if (!a->force)
		countdown();
	printf("Opening filesystem to check...\n");
	fflush(stdout);
	ret = fs_path_mounted(path);
	if (ret > 0 && a->force && !a->init_csum && !a->init_extent) {
		/* checked as it is: a repair with something to write stops there */
		msg_warn("filesystem mounted, continuing because of --force");
		if (!check_readonly(a, path))
			return 0;
		msg_error("%s is currently mounted: repair works on unmounted filesystems only, nothing was written",
			  path);
		return 1;
	}
	if (ret) {
		if (ret < 0)
			msg_error("could not check mount status: %s", strerror(-ret));
		else
			msg_error("%s is currently mounted: repair works on unmounted filesystems only", path);
		return 1;
	}
	fs_wopen_opts_init(&wo);
	wo.open = a->open;
	fs = open_for_repair(a, path, &wo);
	ret = fs ? repair_with_undo(fs, a, path) : 1;
	/* again with the chunks recovered, or from a backup root (once each) */
	while ((ret == NEED_CHUNKS && !a->rebuild_chunks) || (ret == NEED_BACKUP && !a->use_backup)) {
		a->rebuild_chunks |= ret == NEED_CHUNKS;
		a->use_backup |= ret == NEED_BACKUP;
		fs = open_for_repair(a, path, &wo);
		ret = fs ? repair_with_undo(fs, a, path) : 1;
	}
	return ret == NEED_CHUNKS || ret == NEED_BACKUP ? 1 : ret;
}
#else
static int repair_main(struct check_args *a, const char *path)
{
	(void)a, (void)path;
	return 1;
}
#endif

/* The check of a filesystem opened read-only. */
static int check_readonly(struct check_args *a, const char *path)
{
	struct fs_error err;
	uint64_t missing[8];
	struct fs *fs = fs_open(&path, 1, &a->open, &err);
	int ret;

	if (!fs) {
		char buf[300];

		msg_error("cannot open file system: %s", fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	for (int i = 0, n = fs_missing_devids(fs, missing, 8); i < n && i < 8; i++)
		printf("warning, device %llu is missing\n", (unsigned long long)missing[i]);
	ret = a->qgroup_report ? qgroup_report(fs, a, path) : run_check(fs, a, path);
	fs_close(fs);
	return ret;
}

int check_main(int argc, char **argv)
{
	struct check_args a;
	const char *path;
	int ret;

	parse_args(argc, argv, &a);
	a.open.scan = 1;
	a.open.allow_degraded = 1;
	path = argv[optind];
	if (a.readonly && (a.writes || a.clear_cache)) {
		msg_error("repair options are not compatible with --readonly");
		return 1;
	}
	if (a.clear_cache)
		return clear_space_cache(&a, path);
	if (a.writes && CFG_CHECK_REPAIR)
		return repair_main(&a, path);
	if (a.writes) {
		msg_error("repair is not built in: this btrfs check is read-only, nothing was written");
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
	return check_readonly(&a, path);
}
#endif
//cmd:APPLET_CHECK check_main btrfs check|Check structural integrity of a filesystem (unmounted)
