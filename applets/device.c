/* btrfs device: scan, ready, stats, usage. */
//config:config APPLET_DEVICE
//config:	bool "btrfs device"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Register devices of multi-device filesystems with the kernel,
//config:	  show per-device error counters and allocation.
//cmd:APPLET_DEVICE device_scan_main btrfs device scan|Scan or forget devices of btrfs filesystems
//cmd:APPLET_DEVICE device_ready_main btrfs device ready|Check whether all devices of a filesystem are present
//cmd:APPLET_DEVICE device_stats_main btrfs device stats|Show device IO error statistics
//cmd:APPLET_DEVICE device_usage_main btrfs device usage|Show allocation of each device
//cmd:APPLET_DEVICE device_add_main btrfs device add|Add devices to a mounted filesystem
//cmd:APPLET_DEVICE device_remove_main btrfs device remove|Remove a device from a filesystem
//cmd:APPLET_DEVICE device_remove_main btrfs device delete|Remove a device from a filesystem (alias of remove)
//config:
//config:config APPLET_REPLACE
//config:	bool "btrfs replace (btrfs device replace)"
//config:	default y
//config:	depends on APPLET_DEVICE
//config:	help
//config:	  Replace a device of a mounted filesystem by another one, online.
//cmd:APPLET_REPLACE replace_start_main btrfs replace start|Replace device of a btrfs filesystem
//cmd:APPLET_REPLACE replace_status_main btrfs replace status|Show the progress of a device replace
//cmd:APPLET_REPLACE replace_cancel_main btrfs replace cancel|Cancel a running device replace operation
//cmd:APPLET_REPLACE replace_alias_main btrfs device replace|Replace a device (alias of btrfs replace)

#include "config.h"
#if CFG_APPLET_DEVICE
#include "applets.h"
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/timefmt.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/strnum.h"
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

static int is_block_device(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

/* realpath() of a device, or NULL when it does not resolve. */
static char *canonical_path(const char *path)
{
	return realpath(path, NULL);
}

USAGE(scan_usage) =
	"usage: btrfs device scan [-d|--all-devices] <device> [<device>...]\n"
	"       btrfs device scan -u|--forget [<device>...]\n\n"
	"    Register devices of multi-device filesystems with the kernel (all block\n"
	"    devices with a btrfs superblock when none is given), or forget them.\n\n"
	"    -d|--all-devices   scan every block device\n"
	"    -u|--forget        unregister the devices (all unmounted ones without one)\n";

/* A valid primary superblock on path (a btrfs device). */
static int has_btrfs(const char *path)
{
	struct btrfs_super_block sb;
	struct fs_error err;

	return fs_super_read(path, 0, &sb, &err) == 0;
}

static int register_if_btrfs(const char *path, void *ctx)
{
	int *errors = ctx, ret;

	if (!has_btrfs(path))
		return 0;
	ret = btrfs_control_ioctl(BTRFS_IOC_SCAN_DEV, path);
	if (ret < 0) {
		errno = -ret;
		msg_error("device scan failed on '%s': %m", path);
		(*errors)++;
	} else {
		out_say("registered: %s\n", path);
	}
	return 0;
}

int device_scan_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "all-devices", no_argument, 'd' },
		{ "forget", no_argument, 'u' },
		{ NULL, 0, 0 }
	};
	int c, all = 0, forget = 0, ret = 0, i;

	while ((c = cli_getopt(argc, argv, "du", longopts, scan_usage)) != -1) {
		if (c == 'd')
			all = 1;
		else if (c == 'u')
			forget = 1;
	}
	if ((all && forget) || (all && argc - optind > 1))
		cli_usage_error(scan_usage, NULL);
	if (all || optind == argc) {
		if (forget) {
			ret = btrfs_control_ioctl(BTRFS_IOC_FORGET_DEV, NULL);
			if (ret < 0) {
				errno = -ret;
				msg_error("cannot unregister devices: %m");
			}
			return ret < 0;
		}
		out_say("Scanning for Btrfs filesystems\n");
		btrfs_each_block_device(register_if_btrfs, &ret);
		if (ret)
			msg_error("there were %d errors while registering devices", ret);
		return ret != 0;
	}
	for (i = optind; i < argc; i++) {
		char *path;

		if (!is_block_device(argv[i])) {
			msg_error("not a block device: %s", argv[i]);
			return 1;
		}
		path = canonical_path(argv[i]);
		if (!path) {
			msg_error("could not canonicalize path '%s': %m", argv[i]);
			return 1;
		}
		if (forget) {
			ret = btrfs_control_ioctl(BTRFS_IOC_FORGET_DEV, path);
			if (ret < 0) {
				errno = -ret;
				msg_error("cannot unregister device '%s': %m", path);
			}
		} else {
			out_say("Scanning for btrfs filesystems on '%s'\n", path);
			ret = btrfs_control_ioctl(BTRFS_IOC_SCAN_DEV, path);
			if (ret < 0) {
				errno = -ret;
				msg_error("device scan failed on '%s': %m", path);
				free(path);
				return 1;
			}
		}
		free(path);
	}
	return ret < 0;
}

USAGE(ready_usage) =
	"usage: btrfs device ready <device>\n\n"
	"    Exit 0 when every device of the filesystem on <device> is registered\n"
	"    (it can be mounted), 1 otherwise.\n";

int device_ready_main(int argc, char **argv)
{
	char *path;
	int ret;

	cli_no_options(argc, argv, 1, 1, ready_usage);
	path = canonical_path(argv[optind]);
	if (!path || !is_block_device(path)) {
		msg_error("not a block device: %s", path ? path : argv[optind]);
		free(path);
		return 1;
	}
	ret = btrfs_control_ioctl(BTRFS_IOC_DEVICES_READY, path);
	if (ret < 0) {
		errno = -ret;
		msg_error("unable to determine if device '%s' is ready for mount: %m", path);
		ret = 1;
	}
	free(path);
	return ret;
}

/* ---- remove ---- */

USAGE(remove_usage) =
	"usage: btrfs device remove <device>|<devid> [<device>|<devid>...] <path>\n\n"
	"    Remove devices, given by path or devid, from the filesystem mounted at <path>;\n"
	"    their data moves to the others. 'missing' removes a device absent at mount\n"
	"    (degraded), 'cancel' stops a running removal.\n\n"
	"    --enqueue   wait for a running exclusive operation (balance, ...) to end\n"
	"    --force     no safety timeout before removing several devices\n";

/* Several devices go one by one (the others can still be written to in between): said,
 * with ten seconds to stop it unless forced. */
static void warn_several(int n, int force)
{
	msg_warn("there are %d devices for removal, this will not remove them at once\n"
		 "\t but one by one and the remaining devices can still be written to.\n"
		 "\t Use --force to skip the timeout.\n"
		 "\t If this is not expected, press Ctrl-C to stop.\n", n);
	if (force) {
		out_say("Safety timeout skipped due to --force\n\n");
		return;
	}
	for (int delay = 10; delay; delay--) {
		printf("%2d", delay);
		fflush(stdout);
		sleep(1);
	}
}

/* Removes one device (a devid, a block device, "missing" or "cancel"). 0 or 1. */
static int remove_one(int fd, const char *what, int cancel)
{
	struct btrfs_ioctl_vol_args_v2 args;
	int ret, by_id = cli_all_digits(what);

	memset(&args, 0, sizeof(args));
	if (by_id) {
		uint64_t devid;

		if (cli_parse_u64(what, &devid)) {
			msg_error("invalid devid: %s", what);
			return 1;
		}
		args.devid = devid;
		args.flags = BTRFS_DEVICE_SPEC_BY_ID;
	} else if (!strcmp(what, "missing") || cancel || is_block_device(what)) {
		if (strlen(what) >= sizeof(args.name)) {
			msg_error("device path too long: %s", what);
			return 1;
		}
		strcpy(args.name, what);
	} else {
		msg_error("not a block device: %s", what);
		return 1;
	}
	ret = ioctl(fd, BTRFS_IOC_RM_DEV_V2, &args);
	if (!ret)
		return 0;
	if (by_id)
		msg_error("error removing devid %llu: %s", (unsigned long long)args.devid,
			  ret > 0 ? btrfs_err_str(ret) : strerror(errno));
	else
		msg_error("error removing device '%s': %s", what,
			  ret > 0 ? btrfs_err_str(ret) : strerror(errno));
	return 1;
}

int device_remove_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "enqueue", no_argument, 'E' },
		{ "force", no_argument, 'F' },
		{ NULL, 0, 0 }
	};
	int c, i, fd, enqueue = 0, force = 0, cancel = 0, ret = 0;

	while ((c = cli_getopt(argc, argv, "", longopts, remove_usage)) != -1)
		*(c == 'E' ? &enqueue : &force) = 1;
	cli_check_argc(argc, 2, -1, remove_usage);
	fd = btrfs_open_path(argv[argc - 1], 1, 0);
	if (fd < 0)
		return 1;
	for (i = optind; i < argc - 1; i++) {
		if (cancel) {
			msg_error("cancel requested but another device specified: %s", argv[i]);
			close(fd);
			return 1;
		}
		if (!strcmp(argv[i], "cancel")) {
			cancel = 1;
			out_say("Request to cancel running device deletion\n");
		}
	}
	if (!cancel && argc - optind > 2)
		warn_several(argc - optind - 1, force);
	if (!cancel && btrfs_wait_exclop(fd, enqueue, "device remove")) {
		close(fd);
		return 1;
	}
	for (i = optind; i < argc - 1; i++)
		ret |= remove_one(fd, argv[i], cancel);
	btrfs_warn_multiple_profiles(fd);
	close(fd);
	return ret;
}

/* ---- add ---- */

USAGE(add_usage) =
	"usage: btrfs device add [options] <device> [<device>...] <path>\n\n"
	"    Add block devices to the filesystem mounted at <path>.\n\n"
	"    -K|--nodiscard   do not TRIM the whole device first\n"
	"    -f|--force       overwrite an existing btrfs on the device\n"
	"    --enqueue        wait for a running exclusive operation (balance, ...) to end\n";

#define PREP_ZERO_BYTES (2ULL << 20)   /* zeroed at both ends of a new device */

static int discard_supported(dev_t rdev)
{
	char path[96], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/discard_max_bytes",
		 major(rdev), minor(rdev));
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return str_to_ull(buf, NULL, 10) > 0;
}

static int zero_range(int fd, uint64_t off, uint64_t len, uint64_t size)
{
	static char zeros[65536];       /* .bss, not 64 KiB of the file */

	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);

		if (pwrite(fd, zeros, n, (off_t)off) != (ssize_t)n)
			return -1;
		off += n;
		len -= n;
	}
	return 0;
}

/* Readies a device for the kernel: TRIM (best effort), then zeros at its start and
 * end and over every superblock copy, so no old signature survives. */
static int prepare_device(int fd, const char *path, const struct stat *st, int discard)
{
	uint64_t size = 0;
	int i;

	if (ioctl(fd, BLKGETSIZE64, &size) || !size) {
		msg_error("unable to determine size of %s", path);
		return -1;
	}
	if (discard && discard_supported(st->st_rdev)) {
		uint64_t range[2] = { 0, size };

		out_say("Performing full device TRIM %s (%s) ...\n", path,
			pretty_size(size, UNITS_DEFAULT));
		ioctl(fd, BLKDISCARD, range);   /* an optimization only */
	}
	if (zero_range(fd, 0, PREP_ZERO_BYTES, size) ||
	    zero_range(fd, size - (size < PREP_ZERO_BYTES ? size : PREP_ZERO_BYTES), PREP_ZERO_BYTES, size))
		goto fail;
	for (i = 0; i < BTRFS_SUPER_MIRRORS; i++)
		if (zero_range(fd, btrfs_super_offset(i), BTRFS_SUPER_SIZE, size))
			goto fail;
	if (fsync(fd) == 0)
		return 0;
fail:
	msg_error("failed to zero device '%s': %m", path);
	return -1;
}

/* The checks before a device may join, in btrfs-progs' order: it exists, no btrfs on it
 * unless forced, not mounted, not in use (exclusive open), a block device. Returns an
 * O_RDWR fd or -1 (reported). */
static int open_new_device(const char *path, int force, struct stat *st)
{
	char mnt[PATH_MAX];
	int fd;

	if (stat(path, st)) {
		msg_error("checking status of %s: %m", path);
		return -1;
	}
	if (!force && has_btrfs(path)) {
		msg_error("%s appears to contain an existing filesystem (btrfs)", path);
		msg_error("use the -f option to force overwrite of %s", path);
		return -1;
	}
	if (btrfs_mount_of_device(path, mnt, sizeof(mnt)) == 0) {
		msg_error("%s is mounted", path);
		return -1;
	}
	fd = open(path, O_RDWR | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		msg_error("unable to open %s: %m", path);
	else if (!S_ISBLK(st->st_mode)) {
		msg_error("%s is not a block device", path);
		close(fd);
		fd = -1;
	}
	return fd;
}

int device_add_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "nodiscard", no_argument, 'K' },
		{ "force", no_argument, 'f' },
		{ "enqueue", no_argument, 'E' },
		{ NULL, 0, 0 }
	};
	int c, i, fd, dfd, discard = 1, force = 0, enqueue = 0, errors = 0;

	while ((c = cli_getopt(argc, argv, "Kf", longopts, add_usage)) != -1) {
		if (c == 'K')
			discard = 0;
		else if (c == 'f')
			force = 1;
		else if (c == 'E')
			enqueue = 1;
	}
	cli_check_argc(argc, 2, -1, add_usage);
	fd = btrfs_open_path(argv[argc - 1], 1, 0);
	if (fd < 0)
		return 1;
	if (btrfs_wait_exclop(fd, enqueue, "device add")) {
		close(fd);
		return 1;
	}
	for (i = optind; i < argc - 1; i++) {
		struct btrfs_ioctl_vol_args args;
		struct stat st;
		char *path;
		int ret;

		dfd = open_new_device(argv[i], force, &st);
		if (dfd < 0) {
			errors++;
			continue;
		}
		ret = prepare_device(dfd, argv[i], &st, discard);
		close(dfd);
		if (ret) {
			errors++;
			break;
		}
		path = canonical_path(argv[i]);
		if (!path) {
			msg_error("could not canonicalize pathname '%s': %m", argv[i]);
			errors++;
			break;
		}
		if (strlen(path) >= sizeof(args.name)) {
			msg_error("device path too long: %s", path);
			errors++;
		} else {
			memset(&args, 0, sizeof(args));
			strcpy(args.name, path);
			if (ioctl(fd, BTRFS_IOC_ADD_DEV, &args) < 0) {
				msg_error("error adding device '%s': %m", path);
				errors++;
			}
		}
		free(path);
	}
	btrfs_warn_multiple_profiles(fd);
	close(fd);
	return errors != 0;
}

/* ---- stats ---- */

USAGE(stats_usage) =
	"usage: btrfs device stats [options] <path>|<device>\n\n"
	"    Show the IO error counters of every device of a mounted filesystem.\n\n"
	"    -c|--check   exit with 64 when a counter is not zero\n"
	"    -z|--reset   show the counters and reset them to zero\n"
	"    -T           table layout\n";

static const struct { const char *name; int idx; } stat_names[] = {
	{ "write_io_errs", BTRFS_DEV_STAT_WRITE_ERRS },
	{ "read_io_errs", BTRFS_DEV_STAT_READ_ERRS },
	{ "flush_io_errs", BTRFS_DEV_STAT_FLUSH_ERRS },
	{ "corruption_errs", BTRFS_DEV_STAT_CORRUPTION_ERRS },
	{ "generation_errs", BTRFS_DEV_STAT_GENERATION_ERRS },
};
#define NSTATS (int)(sizeof(stat_names) / sizeof(stat_names[0]))

/* The device's name in the report: its canonical path, "devid:N" when missing. */
static void stat_device_name(const struct btrfs_ioctl_dev_info_args *di, char *out, size_t size)
{
	char *real = di->path[0] ? canonical_path((const char *)di->path) : NULL;

	if (real)
		snprintf(out, size, "%s", real);
	else
		snprintf(out, size, "devid:%llu", (unsigned long long)di->devid);
	free(real);
}

static void print_stats_table(struct btrfs_ioctl_get_dev_stats *st,
			      const struct btrfs_ioctl_dev_info_args *di, int n)
{
	static const char *const head[2 + NSTATS] = { "Id", "Path", "Write errors", "Read errors",
		"Flush errors", "Corruption errors", "Generation errors" };
	int width[2 + NSTATS], i, c;
	char cell[PATH_MAX + 32];

	for (c = 0; c < 2 + NSTATS; c++)
		width[c] = (int)strlen(head[c]);
	for (i = 0; i < n; i++) {
		int len = snprintf(cell, sizeof(cell), "%llu", (unsigned long long)st[i].devid);

		width[0] = len > width[0] ? len : width[0];
		stat_device_name(&di[i], cell, sizeof(cell));
		len = (int)strlen(cell);
		width[1] = len > width[1] ? len : width[1];
		for (c = 0; c < NSTATS; c++) {
			len = snprintf(cell, sizeof(cell), "%llu",
				       (unsigned long long)st[i].values[stat_names[c].idx]);
			width[2 + c] = len > width[2 + c] ? len : width[2 + c];
		}
	}
	for (c = 0; c < 2 + NSTATS; c++)
		printf(c < 1 + NSTATS ? "%-*s " : "%-*s\n", width[c], head[c]);
	for (c = 0; c < 2 + NSTATS; c++) {
		for (i = 0; i < width[c]; i++)
			putchar('-');
		putchar(c < 1 + NSTATS ? ' ' : '\n');
	}
	for (i = 0; i < n; i++) {
		stat_device_name(&di[i], cell, sizeof(cell));
		printf("%*llu %*s", width[0], (unsigned long long)st[i].devid, width[1], cell);
		for (c = 0; c < NSTATS; c++)
			printf(" %*llu", width[2 + c],
			       (unsigned long long)st[i].values[stat_names[c].idx]);
		putchar('\n');
	}
}

static void print_stats_rows(struct out *o, const struct btrfs_ioctl_get_dev_stats *st,
			     const struct btrfs_ioctl_dev_info_args *di)
{
	char name[PATH_MAX + 32];

	stat_device_name(di, name, sizeof(name));
	out_group_begin(o, NULL, OUT_MAP);
	if (o->json) {
		out_str(o, NULL, "device", name);
		out_u64(o, NULL, "devid", st->devid);
	}
	for (int c = 0; c < NSTATS; c++) {
		if (st->nr_items < (uint64_t)stat_names[c].idx + 1)
			continue;
		if (o->json)
			out_u64(o, NULL, stat_names[c].name, st->values[stat_names[c].idx]);
		else
			printf("[%s].%-16s %llu\n", name, stat_names[c].name,
			       (unsigned long long)st->values[stat_names[c].idx]);
	}
	out_group_end(o);
}

int device_stats_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "check", no_argument, 'c' },
		{ "reset", no_argument, 'z' },
		{ NULL, 0, 0 }
	};
	struct btrfs_ioctl_dev_info_args *di = NULL;
	struct btrfs_ioctl_get_dev_stats *st = NULL;
	struct btrfs_ioctl_fs_info_args fi;
	int c, fd, n = 0, i, check = 0, table = 0, ret = 0;
	uint64_t flags = 0;
	struct out o;

	while ((c = cli_getopt(argc, argv, "czT", longopts, stats_usage)) != -1) {
		if (c == 'c')
			check = 1;
		else if (c == 'z')
			flags = BTRFS_DEV_STATS_RESET;
		else if (c == 'T')
			table = 1;
	}
	cli_check_argc(argc, 1, 1, stats_usage);
	fd = btrfs_open_path_or_dev(argv[optind], 0);
	if (fd < 0)
		return 1;
	ret = btrfs_dev_infos_of_path(fd, argv[optind], &fi, &di, &n);
	if (ret || !n) {
		errno = -ret;
		if (ret)
			msg_error("getting device info for %s failed: %m", argv[optind]);
		else
			msg_error("no devices found");
		ret = 1;
		goto out;
	}
	st = calloc((size_t)n, sizeof(*st));
	if (!st) {
		ret = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		st[i].devid = di[i].devid;
		st[i].nr_items = BTRFS_DEV_STAT_VALUES_MAX;
		st[i].flags = flags;
		if (ioctl(fd, BTRFS_IOC_GET_DEV_STATS, &st[i]) < 0) {
			msg_error("device stats ioctl failed on %s: %m", (char *)di[i].path);
			ret = 1;
			goto out;
		}
		for (c = 0; c < NSTATS; c++)
			if (check && st[i].nr_items > (uint64_t)stat_names[c].idx &&
			    st[i].values[stat_names[c].idx])
				ret = 64;
	}
	if (table && !out_json()) {
		print_stats_table(st, di, n);
	} else {
		out_start(&o, 0, 0);
		out_group_begin(&o, "device-stats", OUT_LIST);
		for (i = 0; i < n; i++)
			print_stats_rows(&o, &st[i], &di[i]);
		out_group_end(&o);
		out_end(&o);
	}
out:
	free(st);
	free(di);
	close(fd);
	return ret;
}

/* ---- usage ---- */

USAGE(usage_usage) =
	"usage: btrfs device usage [options] <path> [<path>...]\n\n"
	"    Show how the space of each device of a mounted filesystem is allocated.\n\n"
	"    -b|--raw  -h|--human-readable  -H  --iec  --si\n"
	"    -k|--kbytes  -m|--mbytes  -g|--gbytes  -t|--tbytes   units of the sizes\n";

/* Striped profiles show their stripe count ("Data,RAID0/2"). */
static int is_striped(uint64_t flags)
{
	return (flags & (BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID10 |
			 BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6)) != 0;
}

static void print_device_usage(const struct btrfs_ioctl_dev_info_args *di,
			       const struct btrfs_chunk_usage *ch, int nch, unsigned mode)
{
	const char *path = di->path[0] ? (const char *)di->path : "missing";
	uint64_t devsize = di->path[0] ? btrfs_device_size(path) : 0, allocated = 0;
	char label[64];

	printf("%s, ID: %llu\n", path, (unsigned long long)di->devid);
	printf("   Device size: %*s%10s\n", 20 - 11, "", pretty_size(devsize, mode));
	printf("   Device slack: %*s%10s\n", 20 - 12, "",
	       pretty_size(devsize > di->total_bytes ? devsize - di->total_bytes : 0, mode));
	for (int i = 0; i < nch; i++) {
		uint64_t size;
		int len;

		if (ch[i].devid != di->devid)
			continue;
		size = btrfs_chunk_usage_on_device(&ch[i]);
		if (is_striped(ch[i].type))
			len = snprintf(label, sizeof(label), "%s,%s/%u", btrfs_group_type_str(ch[i].type),
				       btrfs_group_profile_str(ch[i].type), ch[i].num_stripes);
		else
			len = snprintf(label, sizeof(label), "%s,%s", btrfs_group_type_str(ch[i].type),
				       btrfs_group_profile_str(ch[i].type));
		/* values end in one column; the label's comma does not count (btrfs-progs) */
		printf("   %s:%*s%10s\n", label, 21 - len, "", pretty_size(size, mode));
		allocated += size;
	}
	printf("   Unallocated: %*s%10s\n", 20 - 11, "",
	       pretty_size(di->total_bytes - allocated, mode | UNITS_NEGATIVE));
}

int device_usage_main(int argc, char **argv)
{
	unsigned mode = units_parse_args(&argc, argv, 1);
	struct btrfs_ioctl_dev_info_args *di;
	struct btrfs_ioctl_fs_info_args fi;
	struct btrfs_chunk_usage *ch;
	int i, fd, n, nch, ret = 0;

	cli_no_options(argc, argv, 1, -1, usage_usage);
	for (i = optind; i < argc && !ret; i++) {
		if (i > 1)
			putchar('\n');
		fd = btrfs_open_path(argv[i], 1, 0);
		if (fd < 0)
			return 1;
		ret = btrfs_chunk_usage(fd, &ch, &nch);
		if (!ret)
			ret = btrfs_dev_infos(fd, &fi, &di, &n);
		else
			di = NULL;
		if (ret) {
			errno = -ret;
			msg_error("cannot get chunk and device info on '%s': %m", argv[i]);
		}
		for (int d = 0; !ret && d < n; d++) {
			print_device_usage(&di[d], ch, nch, mode);
			putchar('\n');
		}
		if (!ret) {
			free(ch);
			free(di);
		}
		btrfs_warn_multiple_profiles(fd);
		close(fd);
	}
	return ret != 0;
}

#if CFG_APPLET_REPLACE
/* ---- replace ---- */

/* BTRFS_IOC_DEV_REPLACE with cmd; args->result is set to "no result" (-1) first, as
 * btrfs-progs does to tell kernel results from ioctl errors. */
static int replace_ioctl(int fd, uint64_t cmd, struct btrfs_ioctl_dev_replace_args *args)
{
	args->cmd = cmd;
	args->result = (uint64_t)-1;
	return ioctl(fd, BTRFS_IOC_DEV_REPLACE, args);
}

static const char *replace_result_str(uint64_t result)
{
	static const char *const text[] = { "no error", "not started", "already started",
					    "scrub is in progress" };

	return result < 4 ? text[result] : "<illegal result value>";
}

/* "ERROR: ioctl(DEV_REPLACE_NAME) failed on "PATH": ERRNO" and ", RESULT" when the kernel
 * gave one. */
static void replace_ioctl_error(const char *name, const char *path,
				const struct btrfs_ioctl_dev_replace_args *args)
{
	msg_error("ioctl(DEV_REPLACE_%s) failed on \"%s\": %m%s%s", name, path,
		  args->result != (uint64_t)-1 ? ", " : "",
		  args->result != (uint64_t)-1 ? replace_result_str(args->result) : "");
}

static int replace_cancel_fd = -1;

/* Ctrl-C during a replace cancels it (as btrfs-progs). */
static void replace_sigint(int sig)
{
	struct btrfs_ioctl_dev_replace_args args = { 0 };

	(void)sig;
	if (replace_ioctl(replace_cancel_fd, BTRFS_IOCTL_DEV_REPLACE_CMD_CANCEL, &args) < 0)
		fprintf(stderr, "Device replace cancel failed: %s\n", strerror(errno));
}

/* The size of the source device (a devid of the filesystem or a block device) and the
 * start arguments naming it. 0 or -1 (reported). */
static int replace_source(int fd, const char *src, const char *path,
			  struct btrfs_ioctl_dev_replace_args *args, uint64_t *size)
{
	struct btrfs_ioctl_dev_info_args di;
	uint64_t devid;

	if (cli_all_digits(src)) {
		if (cli_parse_u64(src, &devid) || btrfs_dev_info(fd, devid, &di)) {
			msg_error("'%s' is not a valid devid for filesystem '%s'", src, path);
			return -1;
		}
		args->start.srcdevid = devid;
		*size = di.total_bytes;
		return 0;
	}
	if (!is_block_device(src) || strlen(src) > BTRFS_DEVICE_PATH_NAME_MAX) {
		msg_error("source device must be a block device or a devid");
		return -1;
	}
	strcpy((char *)args->start.srcdev_name, src);
	*size = btrfs_device_size(src);
	return 0;
}

USAGE(replace_start_usage) =
	"usage: btrfs replace start [-Bfr] <srcdev>|<devid> <targetdev> <mount_point>\n\n"
	"    -r  read <srcdev> only when no other good mirror exists\n"
	"    -f  overwrite a btrfs on <targetdev>   -B  do not background\n"
	"    -K|--nodiscard  no TRIM of <targetdev>   --enqueue  wait for other operations\n";

int replace_start_main(int argc, char **argv)
{
	struct btrfs_ioctl_dev_replace_args args = { 0 };
	int c, fd, dfd, force = 0, fg = 0, discard = 1, enqueue = 0, ret = 1;
	uint64_t src_size;
	char *target = NULL;
	const char *path;
	struct stat st;

	args.start.cont_reading_from_srcdev_mode =
		BTRFS_IOCTL_DEV_REPLACE_CONT_READING_FROM_SRCDEV_MODE_ALWAYS;
	while ((c = cli_getopt_long(argc, argv, "BKrf", "enqueue=E nodiscard=K",
				    replace_start_usage)) != -1) {
		if (c == 'B')
			fg = 1;
		else if (c == 'K')
			discard = 0;
		else if (c == 'f')
			force = 1;
		else if (c == 'E')
			enqueue = 1;
		else
			args.start.cont_reading_from_srcdev_mode =
				BTRFS_IOCTL_DEV_REPLACE_CONT_READING_FROM_SRCDEV_MODE_AVOID;
	}
	cli_check_argc(argc, 3, 3, replace_start_usage);
	path = argv[optind + 2];
	fd = btrfs_open_path(path, 1, 0);
	if (fd < 0)
		return 1;
	if (btrfs_wait_exclop(fd, enqueue, "device replace"))
		goto out;
	/* refused before going to the background: a replace that runs already */
	if (replace_ioctl(fd, BTRFS_IOCTL_DEV_REPLACE_CMD_STATUS, &args) < 0) {
		replace_ioctl_error("STATUS", path, &args);
		goto out;
	}
	if (args.result != BTRFS_IOCTL_DEV_REPLACE_RESULT_NO_ERROR) {
		msg_error("ioctl(DEV_REPLACE_STATUS) on '%s' returns error: %s", path,
			  replace_result_str(args.result));
		goto out;
	}
	if (args.status.replace_state == BTRFS_IOCTL_DEV_REPLACE_STATE_STARTED) {
		msg_error("device replace on '%s' already started", path);
		goto out;
	}
	memset(&args.status, 0, sizeof(args.status));
	target = canonical_path(argv[optind + 1]);   /* as given when it does not resolve */
	if (!target && !(target = strdup(argv[optind + 1])))
		goto out;
	if (replace_source(fd, argv[optind], path, &args, &src_size) ||
	    (dfd = open_new_device(target, force, &st)) < 0)
		goto out;
	if (src_size > btrfs_device_size(target)) {
		msg_error("target device smaller than source device (required %llu bytes)",
			  (unsigned long long)src_size);
		close(dfd);
		goto out;
	}
	c = prepare_device(dfd, target, &st, discard);
	close(dfd);
	if (c || strlen(target) > BTRFS_DEVICE_PATH_NAME_MAX)
		goto out;
	strcpy((char *)args.start.tgtdev_name, target);
	replace_cancel_fd = fd;
	signal(SIGINT, replace_sigint);
	if (!fg && daemon(0, 0) < 0) {
		msg_error("backgrounding failed: %m");
		goto out;
	}
	c = replace_ioctl(fd, BTRFS_IOCTL_DEV_REPLACE_CMD_START, &args);
	ret = 0;
	if (!fg)
		goto out;
	ret = 1;
	if (c < 0) {
		replace_ioctl_error("START", path, &args);
		if (errno == EOPNOTSUPP)
			msg_warn("device replace of RAID5/6 not supported with this kernel");
	} else if (c > 0) {
		msg_error("ioctl(DEV_REPLACE_START) '%s': %s", path, btrfs_err_str(c));
	} else if (args.result != (uint64_t)-1 && args.result) {
		msg_error("ioctl(DEV_REPLACE_START) on '%s' returns error: %s", path,
			  replace_result_str(args.result));
	} else {
		ret = 0;
	}
out:
	free(target);
	close(fd);
	return ret;
}

/* "%e.%b %T" of a replace start or stop time (local time). */
static const char *replace_time(uint64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	tm_format(buf, size, "%e.%b %T", localtime_r(&tt, &tm));
	return buf;
}

USAGE(replace_status_usage) =
	"usage: btrfs replace status [-1] <mount_point>\n\n"
	"    -1  print once, not until the replace ends\n";

int replace_status_main(int argc, char **argv)
{
	struct btrfs_ioctl_dev_replace_args args = { 0 };
	struct btrfs_ioctl_dev_replace_status_params *st = &args.status;
	int fd, once = 0, len;
	char t1[64], t2[64];
	const char *path;

	while (cli_getopt(argc, argv, "1", NULL, replace_status_usage) != -1)
		once = 1;
	path = argv[argc - 1];
	fd = btrfs_open_cmd_path(argc, argv, 1, 1, replace_status_usage);
	if (fd < 0)
		return 1;
	for (;;) {
		if (replace_ioctl(fd, BTRFS_IOCTL_DEV_REPLACE_CMD_STATUS, &args) < 0) {
			replace_ioctl_error("STATUS", path, &args);
			break;
		}
		if (args.result) {
			msg_error("ioctl(DEV_REPLACE_STATUS) on '%s' returns error: %s", path,
				  replace_result_str(args.result));
			break;
		}
		switch (st->replace_state) {
		case BTRFS_IOCTL_DEV_REPLACE_STATE_STARTED:
			len = printf("%llu.%llu%% done", (unsigned long long)st->progress_1000 / 10,
				     (unsigned long long)st->progress_1000 % 10);
			break;
		case BTRFS_IOCTL_DEV_REPLACE_STATE_NEVER_STARTED:
			printf("Never started\n");
			close(fd);
			return 0;
		case BTRFS_IOCTL_DEV_REPLACE_STATE_FINISHED:
		case BTRFS_IOCTL_DEV_REPLACE_STATE_CANCELED:
		case BTRFS_IOCTL_DEV_REPLACE_STATE_SUSPENDED:
			once = 1;
			printf("Started on %s, %s on %s", replace_time(st->time_started, t1, sizeof(t1)),
			       st->replace_state == BTRFS_IOCTL_DEV_REPLACE_STATE_FINISHED ? "finished" :
			       st->replace_state == BTRFS_IOCTL_DEV_REPLACE_STATE_CANCELED ? "canceled" :
			       "suspended", replace_time(st->time_stopped, t2, sizeof(t2)));
			if (st->replace_state != BTRFS_IOCTL_DEV_REPLACE_STATE_FINISHED)
				printf(" at %llu.%llu%%", (unsigned long long)st->progress_1000 / 10,
				       (unsigned long long)st->progress_1000 % 10);
			len = 0;
			break;
		default:
			msg_error("unknown status from ioctl DEV_REPLACE_STATUS on '%s': %llu", path,
				  (unsigned long long)st->replace_state);
			close(fd);
			return 1;
		}
		len += printf(", %llu write errs, %llu uncorr. read errs",
			      (unsigned long long)st->num_write_errors,
			      (unsigned long long)st->num_uncorrectable_read_errors);
		if (once) {
			putchar('\n');
			close(fd);
			return 0;
		}
		fflush(stdout);
		sleep(1);
		while (len-- > 0)  /* the next line over this one */
			putchar('\b');
	}
	close(fd);
	return 1;
}

USAGE(replace_cancel_usage) = "usage: btrfs replace cancel <mount_point>\n";

int replace_cancel_main(int argc, char **argv)
{
	struct btrfs_ioctl_dev_replace_args args = { 0 };
	int fd, ret;

	cli_no_options(argc, argv, 1, 1, replace_cancel_usage);
	fd = btrfs_open_path(argv[optind], 1, 0);
	if (fd < 0)
		return 1;
	ret = replace_ioctl(fd, BTRFS_IOCTL_DEV_REPLACE_CMD_CANCEL, &args);
	close(fd);
	if (ret < 0) {
		replace_ioctl_error("CANCEL", argv[optind], &args);
		return 1;
	}
	if (args.result == BTRFS_IOCTL_DEV_REPLACE_RESULT_NOT_STARTED) {
		printf("INFO: ioctl(DEV_REPLACE_CANCEL)\"%s\": %s\n", argv[optind],
		       replace_result_str(args.result));
		return 2;
	}
	return 0;
}

int replace_alias_main(int argc, char **argv)
{
	argv[0] = "btrfs replace";
	return cmd_run_group(argc, argv);
}
#endif
#endif
