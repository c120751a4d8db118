/* btrfs balance: start (filters, profile conversion), pause, cancel, resume, status of
 * the kernel's chunk relocation on a mounted filesystem (BTRFS_IOC_BALANCE_V2). */
//config:config APPLET_BALANCE
//config:	bool "btrfs balance"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Relocate chunks across devices or convert them to another
//config:	  profile (raid1 to single, ...), with filters; pause, resume,
//config:	  cancel and status of a running balance.
//cmd:APPLET_BALANCE balance_main btrfs balance|Balance (btrfs balance PATH: a full balance)
//cmd:APPLET_BALANCE balance_start_main btrfs balance start|Balance chunks across the devices
//cmd:APPLET_BALANCE balance_ctl_main btrfs balance pause|Pause running balance
//cmd:APPLET_BALANCE balance_ctl_main btrfs balance cancel|Cancel running or paused balance
//cmd:APPLET_BALANCE balance_ctl_main btrfs balance resume|Resume interrupted balance
//cmd:APPLET_BALANCE balance_status_main btrfs balance status|Show status of running or paused balance
//cmd:APPLET_BALANCE balance_alias_main btrfs filesystem balance|Alias of btrfs balance

#include "config.h"
#if CFG_APPLET_BALANCE
#include "applets.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/strnum.h"
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

/* ---- filters: "-dusage=50,convert=raid1" ---- */

enum { F_PROFILES, F_U64, F_U64_OR_U32S, F_U32S, F_RANGE, F_CONVERT, F_FLAG };

/* One filter: the flag it sets, where its value goes in struct btrfs_balance_args,
 * and for "N or a..b" filters the flag of the range form (its u32 pair is at off). */
static const struct filter {
	char name[9];
	uint8_t kind;
	uint8_t off;
	uint16_t flag, range_flag;
	uint8_t max;         /* u64 form: largest value, 0: none */
} filters[] = {
	{ "profiles", F_PROFILES, offsetof(struct btrfs_balance_args, profiles),
	  BTRFS_BALANCE_ARGS_PROFILES, 0, 0 },
	{ "usage", F_U64_OR_U32S, offsetof(struct btrfs_balance_args, usage),
	  BTRFS_BALANCE_ARGS_USAGE, BTRFS_BALANCE_ARGS_USAGE_RANGE, 100 },
	{ "devid", F_U64, offsetof(struct btrfs_balance_args, devid), BTRFS_BALANCE_ARGS_DEVID, 0, 0 },
	{ "drange", F_RANGE, offsetof(struct btrfs_balance_args, pstart),
	  BTRFS_BALANCE_ARGS_DRANGE, 0, 0 },
	{ "vrange", F_RANGE, offsetof(struct btrfs_balance_args, vstart),
	  BTRFS_BALANCE_ARGS_VRANGE, 0, 0 },
	{ "convert", F_CONVERT, offsetof(struct btrfs_balance_args, target),
	  BTRFS_BALANCE_ARGS_CONVERT, 0, 0 },
	{ "soft", F_FLAG, 0, BTRFS_BALANCE_ARGS_SOFT, 0, 0 },
	{ "limit", F_U64_OR_U32S, offsetof(struct btrfs_balance_args, limit),
	  BTRFS_BALANCE_ARGS_LIMIT, BTRFS_BALANCE_ARGS_LIMIT_RANGE, 0 },
	{ "stripes", F_U32S, offsetof(struct btrfs_balance_args, stripes_min),
	  BTRFS_BALANCE_ARGS_STRIPES_RANGE, 0, 0 },
};

static int parse_plain_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s == '-' || !*s)
		return -1;
	*v = str_to_ull(s, &end, 10);
	return *end ? -1 : 0;
}

/* "a..b", "a.." (to the maximum), "..b" (from 0); "a" and ".." alone are not ranges.
 * strict: a < b. u32: both fit 32 bits (an open end stays "all ones"). */
static int parse_range(const char *s, uint64_t *start, uint64_t *end, int strict, int u32)
{
	const char *dots = cli_strstr(s, "..");
	char *e;

	if (!dots || (dots == s && !dots[2]))
		return -1;
	*end = UINT64_MAX;
	if (dots[2] && (*end = str_to_ull(dots + 2, &e, 10), *e))
		return -1;
	*start = 0;
	if (dots != s && (*start = str_to_ull(s, &e, 10), *e != '.'))
		return -1;
	if (*start > *end || (strict && *start == *end)) {
		msg_error("range %llu..%llu %s", (unsigned long long)*start, (unsigned long long)*end,
			  *start > *end ? "doesn't make sense" : "not allowed");
		return -1;
	}
	if (u32 && (*start > UINT32_MAX || (*end != UINT64_MAX && *end > UINT32_MAX)))
		return -1;
	return 0;
}

/* "raid1|single|dup": the profiles as bits (single as BTRFS_AVAIL_ALLOC_BIT_SINGLE). */
static int parse_profiles(char *list, uint64_t *bits)
{
	char *save = NULL, *p;
	uint64_t f;

	for (p = strtok_r(list, "|", &save); p; p = strtok_r(NULL, "|", &save)) {
		if (btrfs_parse_profile(p, &f)) {
			msg_error("unknown profile: %s", p);
			return -1;
		}
		*bits |= f ? f : BTRFS_AVAIL_ALLOC_BIT_SINGLE;
	}
	return 0;
}

/* Applies one "name[=value]" to a. 0 or -1 (reported). */
static int apply_filter(const struct filter *f, char *value, struct btrfs_balance_args *a)
{
	uint8_t *dst = (uint8_t *)a + f->off;  /* the struct is packed: memcpy only */
	uint64_t v[2] = { 0, 0 }, lo, hi;
	uint32_t pair[2];

	if (f->kind == F_FLAG) {
		a->flags |= f->flag;
		return 0;
	}
	if (!value || !*value) {
		msg_error(f->kind == F_CONVERT ? "the %s option requires an argument" :
			  "the %s filter requires an argument", f->name);
		return -1;
	}
	memcpy(v, dst, 8);
	if (f->kind == F_PROFILES) {
		if (parse_profiles(value, v))
			goto bad;
	} else if (f->kind == F_CONVERT) {   /* ORed into the target, as btrfs-progs does */
		if (btrfs_parse_profile(value, &lo)) {
			msg_error("unknown profile: %s", value);
			goto bad;
		}
		v[0] |= lo ? lo : BTRFS_AVAIL_ALLOC_BIT_SINGLE;
	} else if (f->kind != F_U32S && f->kind != F_RANGE && !parse_plain_u64(value, v)) {
		/* a single number: devid (not 0), usage (at most 100), limit */
		if (f->kind == F_U64 ? !v[0] : f->max && v[0] > f->max)
			goto bad_value;
		a->flags &= ~(uint64_t)f->range_flag;
	} else if (f->kind == F_U64) {
		goto bad_value;
	} else if (f->kind == F_RANGE) {
		if (parse_range(value, v, v + 1, 1, 0))
			goto bad;
		memcpy(dst, v, 16);
	} else {
		if (parse_range(value, &lo, &hi, 0, 1)) {
			if (f->kind == F_U32S)
				goto bad;
			goto bad_value;
		}
		pair[0] = (uint32_t)lo;
		pair[1] = (uint32_t)hi;
		memcpy(v, pair, 8);
		if (f->kind == F_U64_OR_U32S) {
			/* btrfs-progs reports a usage range above 100 and goes on, and keeps
			 * the usage flag next to the range one */
			if (f->max && hi > f->max)
				msg_error("invalid %s argument: %s", f->name, value);
			a->flags = (a->flags & ~(uint64_t)f->flag) | f->range_flag;
			if (!f->max) {
				memcpy(dst, v, 8);
				return 0;
			}
		}
	}
	if (f->kind != F_RANGE)
		memcpy(dst, v, 8);
	a->flags |= f->flag;
	return 0;
bad_value:
	msg_error(f->max || f->kind != F_U64_OR_U32S ? "invalid %s argument: %s" :
		  "Invalid %s argument: %s", f->name, value);
	return -1;
bad:
	msg_error("invalid %s argument", f->name);
	return -1;
}

/* A comma-separated filter list (may be NULL: no filter). 0 or -1 (reported). */
static int parse_filters(char *list, struct btrfs_balance_args *a)
{
	char *save = NULL, *p, *value;
	size_t i;

	for (p = list ? strtok_r(list, ",", &save) : NULL; p; p = strtok_r(NULL, ",", &save)) {
		value = strchr(p, '=');
		if (value)
			*value++ = 0;
		for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
			if (!strcmp(p, filters[i].name))
				break;
		if (i == sizeof(filters) / sizeof(filters[0])) {
			msg_error("unrecognized balance option: %s", p);
			return -1;
		}
		if (apply_filter(&filters[i], value, a))
			return -1;
	}
	return 0;
}

/* ---- verbose dump of the arguments (-v), btrfs-progs' layout ---- */

/* ", name=a..b" of a u32 pair, the open ends left out */
static void print_range32(const char *name, const uint8_t *p)
{
	uint32_t v[2];

	memcpy(v, p, 8);
	printf(", %s=", name);
	if (v[0])
		printf("%u", v[0]);
	printf("..");
	if (v[1] != UINT32_MAX)
		printf("%u", v[1]);
}

/* One type's filters, in the order of the table (convert and soft first). */
static void dump_type_args(const char *type, const struct btrfs_balance_args *a)
{
	const uint8_t *base = (const uint8_t *)a;
	uint64_t v[2], f = a->flags;

	printf("  %s (flags 0x%llx): ", type, (unsigned long long)f);
	if (f & BTRFS_BALANCE_ARGS_CONVERT)
		printf("converting, target=%llu, soft is %s", (unsigned long long)a->target,
		       f & BTRFS_BALANCE_ARGS_SOFT ? "on" : "off");
	else
		printf("balancing");
	for (const struct filter *t = filters; t < filters + sizeof(filters) / sizeof(filters[0]); t++) {
		memcpy(v, base + t->off, 16);
		if (!(f & t->flag) || t->kind == F_FLAG || t->kind == F_CONVERT)
			;
		else if (t->kind == F_RANGE)
			printf(", %s=%llu..%llu", t->name, (unsigned long long)v[0], (unsigned long long)v[1]);
		else if (t->kind == F_U32S)
			print_range32(t->name, base + t->off);
		else
			printf(", %s=%llu", t->name, (unsigned long long)v[0]);
		if (f & t->range_flag)
			print_range32(t->name, base + t->off);
	}
	putchar('\n');
}

static void dump_args(const struct btrfs_ioctl_balance_args *b)
{
	static const char names[][9] = { "DATA", "METADATA", "SYSTEM" };
	const struct btrfs_balance_args *args[] = { &b->data, &b->meta, &b->sys };

	printf("Dumping filters: flags 0x%llx, state 0x%llx, force is %s\n",
	       (unsigned long long)b->flags, (unsigned long long)b->state,
	       b->flags & BTRFS_BALANCE_FORCE ? "on" : "off");
	for (int i = 0; i < 3; i++)   /* BTRFS_BALANCE_DATA 1, METADATA 4, SYSTEM 2 */
		if (b->flags & (i == 0 ? 1 : i == 1 ? 4 : 2))
			dump_type_args(names[i], args[i]);
}

/* ---- start / resume ---- */

/* The reference's safety delays: "WARNING:", the text, then "10 9 ... 1" a second
 * apart and the text after (skipped with force, which says so). */
static void warn_and_wait(const char *text, const char *after, int force)
{
	static const char cont[] = "\tThe operation will continue in 10 seconds.\n\tUse Ctrl-C to stop.\n";

	printf("WARNING:\n\n%s%s", text, force ? "\tSafety timeout skipped due to --force\n\n" :
	       after ? cont : "");
	if (force)
		return;
	for (int delay = 10; delay; delay--) {
		printf("%2d", delay);
		fflush(stdout);
		sleep(1);
	}
	printf("%s", after ? after : "\nStarting balance without any filters.\n");
}

/* Runs BTRFS_IOC_BALANCE_V2 (a start, or a resume with BTRFS_BALANCE_RESUME) on the
 * open filesystem and reports as btrfs-progs. Exit status. */
static int run_balance(int fd, const char *path, struct btrfs_ioctl_balance_args *b)
{
	int ret = ioctl(fd, BTRFS_IOC_BALANCE_V2, b), resume = b->flags & BTRFS_BALANCE_RESUME;

	if (ret > 0) {
		msg_error("balance: %s", btrfs_err_str(ret));
		return 1;
	}
	if (!ret) {
		out_say("Done, had to relocate %llu out of %llu chunks\n",
			(unsigned long long)b->stat.completed, (unsigned long long)b->stat.considered);
		return 0;
	}
	if (errno == ECANCELED) {
		if (!out_quiet() && (b->state & BTRFS_BALANCE_STATE_PAUSE_REQ))
			fputs("balance paused by user\n", stderr);
		if (!out_quiet() && (b->state & BTRFS_BALANCE_STATE_CANCEL_REQ))
			fputs("balance canceled by user\n", stderr);
		return 0;
	}
	if (resume && (errno == ENOTCONN || errno == EINPROGRESS)) {
		msg_error("balance resume on '%s' failed: %s", path,
			  errno == ENOTCONN ? "Not in progress" : "Already running");
		return errno == ENOTCONN ? 2 : 1;
	}
	msg_error("error during balancing '%s': %m", path);
	if (errno != EINPROGRESS || resume)
		fprintf(stderr, "There may be more info in syslog - try dmesg | tail\n");
	return 1;
}

/* Some device of the filesystem at path cannot be opened (missing or failed). */
static int has_missing_device(const char *path)
{
	struct btrfs_ioctl_dev_info_args *di;
	struct btrfs_ioctl_fs_info_args fi;
	int fd = btrfs_open_path(path, 1, 1), n = 0, missing = 0;

	if (fd < 0 || btrfs_dev_infos(fd, &fi, &di, &n)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	for (int i = 0; i < n && !missing; i++) {
		int dfd = open((const char *)di[i].path, O_RDONLY | O_CLOEXEC);

		missing = dfd < 0;
		if (dfd >= 0)
			close(dfd);
	}
	free(di);
	return missing;
}

/* Detaches into the background (two forks, a new session, stdio on /dev/null); the
 * caller's process exits 0. */
static int to_background(void)
{
	for (int round = 0; round < 2; round++) {
		pid_t pid = fork();

		if (pid < 0) {
			msg_error("unable to fork to run balance in background");
			exit(1);
		}
		if (pid > 0)
			exit(0);
		if (!round)
			setsid();
	}
	if (chdir("/"))
		return -1;
	for (int i = 0; i < 3; i++) {
		close(i);
		if (open("/dev/null", i ? O_WRONLY : O_RDONLY) < 0)
			return -1;
	}
	return 0;
}

USAGE(start_usage) =
	"usage: btrfs balance start [options] <path>\n\n"
	"    -d[filters] -m[filters] -s[filters]  data, metadata, system (-s needs -f)\n"
	"      profiles=P|P usage=N|a..b devid=N drange=a..b vrange=a..b convert=P soft\n"
	"      limit=N|a..b stripes=a..b\n"
	"    -f  force  --full-balance  --bg|--background  --enqueue  -v\n";

enum { OPT_FULL = 'F', OPT_BG = 'B', OPT_ENQUEUE = 'E' };   /* long options only */

int balance_start_main(int argc, char **argv)
{
	struct btrfs_ioctl_balance_args b;
	struct btrfs_balance_args *types[3] = { &b.data, &b.meta, &b.sys };
	int c, i, force = 0, filtered = 0, nowarn = 0, bg = 0, enqueue = 0, warned = 0, fd, ret;

	memset(&b, 0, sizeof(b));
	while ((c = cli_getopt_long(argc, argv, "d::s::m::fv", "data::=d metadata::=m system::=s "
				    "force=f verbose=v full-balance=F background=B bg=B enqueue=E",
				    start_usage)) != -1) {
		const char *t = memchr("dms", c, 3);

		if (t) {
			filtered = 1;
			b.flags |= (uint64_t[]){ BTRFS_BALANCE_DATA, BTRFS_BALANCE_METADATA,
						 BTRFS_BALANCE_SYSTEM }[t - "dms"];
			if (parse_filters(optarg, types[t - "dms"]))
				return 1;
		} else if (c == 'f') {
			force = 1;
		} else if (c == 'v') {
			cli_be_verbose();
		} else {
			nowarn |= c == OPT_FULL;
			bg |= c == OPT_BG;
			enqueue |= c == OPT_ENQUEUE;
		}
	}
	cli_check_argc(argc, 1, 1, start_usage);
	/* system chunks only with -f; otherwise they follow what -m asks */
	if (b.flags & BTRFS_BALANCE_SYSTEM) {
		if (!force) {
			msg_error("Refusing to explicitly operate on system chunks.\n"
				  "Pass --force if you really want to do that.");
			return 1;
		}
	} else if (b.flags & BTRFS_BALANCE_METADATA) {
		b.flags |= BTRFS_BALANCE_SYSTEM;
		b.sys = b.meta;
	}
	if (!filtered)
		b.flags |= BTRFS_BALANCE_TYPE_MASK;
	for (i = 0; i < 3 && !warned; i++)
		if ((types[i]->flags & BTRFS_BALANCE_ARGS_CONVERT) && has_missing_device(argv[optind])) {
			warned = 1;
			warn_and_wait("\tConversion with missing device(s) can be dangerous.\n"
				      "\tPlease use 'btrfs replace' or 'btrfs device remove' instead.\n",
				      "", force);
		}
	for (i = 0; i < 3; i++)
		if ((types[i]->flags & BTRFS_BALANCE_ARGS_DRANGE) &&
		    !(types[i]->flags & BTRFS_BALANCE_ARGS_DEVID)) {
			msg_error("drange filter must be used with devid filter");
			return 1;
		}
	for (i = 0, warned = 0; i < 3; i++) {
		if ((types[i]->flags & BTRFS_BALANCE_ARGS_SOFT) &&
		    !(types[i]->flags & BTRFS_BALANCE_ARGS_CONVERT)) {
			msg_error("'soft' option can be used only when converting profiles");
			return 1;
		}
		if ((types[i]->flags & BTRFS_BALANCE_ARGS_CONVERT) && !warned++ &&
		    (types[i]->target & BTRFS_BLOCK_GROUP_RAID56_MASK)) {
			warn_and_wait("\tRAID5/6 support has known problems and is strongly discouraged\n"
				      "\tto be used besides testing or evaluation. It is recommended that\n"
				      "\tyou use one of the other RAID profiles.\n",
				      "\nStarting conversion to RAID5/6.\n", force);
		}
	}
	if (!filtered && !nowarn)
		warn_and_wait("\tFull balance without filters requested. This operation is very\n"
			      "\tintense and takes potentially very long. It is recommended to\n"
			      "\tuse the balance filters to narrow down the scope of balance.\n"
			      "\tUse 'btrfs balance start --full-balance' option to skip this\n"
			      "\twarning. The operation will start in 10 seconds.\n"
			      "\tUse Ctrl-C to stop it.\n", NULL, 0);
	if (force)
		b.flags |= BTRFS_BALANCE_FORCE;
	if (cli_globals.verbose > 0)
		dump_args(&b);
	/* opened first: a relative path still works after the background's chdir("/") */
	fd = btrfs_open_path(argv[optind], 1, 0);
	if (fd < 0 || (bg && to_background()))
		return 1;
	ret = btrfs_wait_exclop(fd, enqueue, "balance") ? 1 : run_balance(fd, argv[optind], &b);
	close(fd);
	return ret;
}

/* ---- pause, cancel, resume: one argument, one ioctl ---- */

USAGE(ctl_usage) = "usage: btrfs balance pause|cancel|resume <path>\n";

int balance_ctl_main(int argc, char **argv)
{
	struct btrfs_ioctl_balance_args b;
	const char *path;
	int fd, ret = 0, cancel = !strcmp(argv[0], "cancel");

	cli_no_options(argc, argv, 1, 1, ctl_usage);
	path = argv[optind];
	fd = btrfs_open_path(path, 1, 0);
	if (fd < 0)
		return 1;
	if (!strcmp(argv[0], "resume")) {
		memset(&b, 0, sizeof(b));
		b.flags = BTRFS_BALANCE_RESUME;
		ret = run_balance(fd, path, &b);
	} else if (ioctl(fd, BTRFS_IOC_BALANCE_CTL, cancel ? BTRFS_BALANCE_CTL_CANCEL :
			 BTRFS_BALANCE_CTL_PAUSE) < 0) {
		msg_error("balance %s on '%s' failed: %s", argv[0], path, errno != ENOTCONN ?
			  strerror(errno) : cancel ? "Not in progress" : "Not running");
		ret = errno == ENOTCONN ? 2 : 1;
	}
	if (strcmp(argv[0], "resume"))
		btrfs_warn_multiple_profiles(fd);
	close(fd);
	return ret;
}

/* ---- status ---- */

USAGE(status_usage) = "usage: btrfs balance status [-v] <path>\n";

int balance_status_main(int argc, char **argv)
{
	struct btrfs_ioctl_balance_args b;
	const char *path;
	int fd, ret = 1;

	while (cli_getopt_long(argc, argv, "v", "verbose=v", status_usage) != -1)
		cli_be_verbose();
	path = argv[argc - 1];
	fd = btrfs_open_cmd_path(argc, argv, 1, 1, status_usage);
	if (fd < 0)
		return 2;
	memset(&b, 0, sizeof(b));
	if (ioctl(fd, BTRFS_IOC_BALANCE_PROGRESS, &b) < 0) {
		if (errno == ENOTCONN) {
			printf("No balance found on '%s'\n", path);
			ret = 0;
		} else {
			msg_error("balance status on '%s' failed: %m", path);
			ret = 2;
		}
	} else {
		printf("Balance on '%s' is %s\n", path,
		       !(b.state & BTRFS_BALANCE_STATE_RUNNING) ? "paused" :
		       b.state & BTRFS_BALANCE_STATE_CANCEL_REQ ? "running, cancel requested" :
		       b.state & BTRFS_BALANCE_STATE_PAUSE_REQ ? "running, pause requested" : "running");
		printf("%llu out of about %llu chunks balanced (%llu considered), %3.f%% left\n",
		       (unsigned long long)b.stat.completed, (unsigned long long)b.stat.expected,
		       (unsigned long long)b.stat.considered,
		       100 * (1 - (float)b.stat.completed / b.stat.expected));
		if (cli_globals.verbose > 0)
			dump_args(&b);
	}
	close(fd);
	return ret;
}

/* ---- "btrfs balance PATH" (a full balance, no delay) and the old aliases ---- */

int balance_main(int argc, char **argv)
{
	struct btrfs_ioctl_balance_args b;
	int i = 1, fd, ret;

	if (argc == 3 && !strcmp(argv[1], "--full-balance"))
		i = 2;
	if (argc != i + 1 || (i == 1 && argv[1][0] == '-')) {
		int help = argc == 2 && !strcmp(argv[1], "--help");

		cmd_print_group_usage("btrfs balance", !help);
		return !help;
	}
	memset(&b, 0, sizeof(b));
	b.flags = BTRFS_BALANCE_TYPE_MASK;
	fd = btrfs_open_path(argv[i], 1, 0);
	if (fd < 0)
		return 1;
	ret = run_balance(fd, argv[i], &b);
	close(fd);
	return ret;
}

int balance_alias_main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--help")) {
		cmd_print_group_usage("btrfs balance", 0);
		return 0;
	}
	argv[0] = "btrfs balance";
	return cmd_run_group(argc, argv);
}
#endif
