/* btrfs rescue: changes of an unmounted filesystem that make it mountable again,
 * through the write engine (fs/write): exclusive, crash-safe, with --undo FILE. */
//config:config RESCUE_ZERO_LOG
//config:	bool "btrfs rescue zero-log"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Clear the log tree a kernel cannot replay.
//config:
//config:config RESCUE_SUPER_RECOVER
//config:	bool "btrfs rescue super-recover"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Rewrite bad or stale superblock copies from the newest good one.
//config:
//config:config RESCUE_CHUNK_RECOVER
//config:	bool "btrfs rescue chunk-recover (says it is not supported)"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Rebuilding the chunk tree is not supported: the command says so.
//config:
//config:config RESCUE_UNDO
//config:	bool "btrfs rescue undo"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Put a filesystem back as it was before a command that wrote an
//config:	  undo file (--undo FILE).
//config:
//config:config RESCUE_CONTROL_DEVICE
//config:	bool "btrfs rescue create-control-device"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Create /dev/btrfs-control.
//cmd:RESCUE_ZERO_LOG rescue_zero_log_main btrfs rescue zero-log|Clear the tree log. Usable if it's corrupted and prevents mount.
//cmd:RESCUE_SUPER_RECOVER rescue_super_recover_main btrfs rescue super-recover|Recover bad superblocks from good copies
//cmd:RESCUE_CHUNK_RECOVER rescue_chunk_recover_main btrfs rescue chunk-recover|Recover the chunk tree by scanning the devices one by one.
//cmd:RESCUE_UNDO rescue_undo_main btrfs rescue undo|Restore a filesystem from an undo file
//cmd:RESCUE_CONTROL_DEVICE rescue_control_main btrfs rescue create-control-device|Create /dev/btrfs-control (see 'CONTROL DEVICE' in btrfs(5))

#include "config.h"
#if CFG_RESCUE_ZERO_LOG || CFG_RESCUE_SUPER_RECOVER || CFG_RESCUE_CHUNK_RECOVER || \
	CFG_RESCUE_UNDO || CFG_RESCUE_CONTROL_DEVICE
#include "cli.h"
#include "le.h"
#include "write/write.h"
#include "devscan.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define UNDO_HELP "    --undo FILE        save what is overwritten to FILE (see 'btrfs rescue undo')\n"

static const struct option undo_opts[] = { { "undo", required_argument, NULL, 'U' }, { 0, 0, 0, 0 } };

/* [--undo FILE] DEVICE: the device, *undo set when given. */
static const char *device_arg(int argc, char **argv, const char *usage, const char **undo)
{
	int c;

	*undo = NULL;
	while ((c = cli_getopt(argc, argv, "", undo_opts, usage)) != -1)
		*undo = optarg;
	cli_check_argc(argc, 1, 1, usage);
	return argv[optind];
}

/* Opens dev (and the rest of its filesystem) for writing; prints why not. */
static struct fs *open_rw(const char *dev, const char *undo, int super_only)
{
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;
	char buf[320];

	fs_wopen_opts_init(&o);
	o.undo = undo;
	o.open.partial = super_only;
	o.open.skip_chunk_tree = super_only;
	fs = fs_wopen(&dev, 1, &o, &err);
	if (!fs && err.code == -EBUSY)
		msg_error("%s", err.msg);
	else if (!fs)
		msg_error("could not open ctree: %s", fs_error_format(&err, buf, sizeof(buf)));
	return fs;
}

/* Closes, reporting the error of what went wrong (ret) or of closing. 0 or 1. */
static int close_rw(struct fs *fs, int ret, const char *what)
{
	char buf[320];

	if (ret)
		msg_error("%s: %s", what, fs_error_format(&fs->err, buf, sizeof(buf)));
	if (fs_wclose(fs) && !ret) {
		msg_error("cannot close the undo file: %s", strerror(errno));
		ret = 1;
	}
	return !!ret;
}

/* ---- zero-log --------------------------------------------------------------- */

static const char zero_log_usage[] =
	"usage: btrfs rescue zero-log [--undo FILE] <device>\n\n"
	"    Clear the tree log. Usable if it's corrupted and prevents mount.\n\n"
	UNDO_HELP;

int rescue_zero_log_main(int argc, char **argv)
{
	const char *undo, *dev = device_arg(argc, argv, zero_log_usage, &undo);
	struct fs *fs = open_rw(dev, undo, 1);

	if (!fs)
		return 1;
	printf("Clearing log on %s, previous log_root %llu, level %u\n", dev,
	       (unsigned long long)get_le64(&fs->sb.log_root), fs->sb.log_root_level);
	put_le64(&fs->sb.log_root, 0);
	fs->sb.log_root_level = 0;
	return close_rw(fs, fs_super_commit(fs), "failed to write dev supers");
}

/* ---- super-recover ---------------------------------------------------------- */

static const char super_recover_usage[] =
	"usage: btrfs rescue super-recover [options] <device>\n\n"
	"    Recover bad superblocks from good copies\n\n"
	"    -y                 assume an answer of `yes' to all questions\n"
	"    -v                 verbose: list the devices and the good and bad copies\n"
	UNDO_HELP;

struct copy_rec { const char *dev; int mirror; uint64_t gen; int good; };

/* Every copy on the devices that exists: valid or not, with its generation. */
static int read_copies(const char **devs, int n, struct copy_rec *r)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
			struct btrfs_super_block sb;
			int ret = fs_super_read(devs[i], m, &sb, NULL);

			if (ret == -ENOENT)
				continue;
			r[k++] = (struct copy_rec){ devs[i], m, ret ? 0 : get_le64(&sb.generation), !ret };
		}
	return k;
}

static void print_copies(const struct copy_rec *r, int n, int good)
{
	printf("\t[All %s supers]:\n", good ? "good" : "bad");
	for (int i = 0; i < n; i++)
		if (r[i].good == good)
			printf("\t\tdevice name = %s\n\t\tsuperblock bytenr = %llu\n\n", r[i].dev,
			       (unsigned long long)btrfs_super_offset(r[i].mirror));
}

static int confirm(const char *question)
{
	char line[16];

	printf("%s [y/N]: ", question);
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y');
}

/* A valid superblock copy of dev (the first one): 0, or -1 when none. */
static int any_super(const char *dev, struct btrfs_super_block *sb)
{
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (!fs_super_read(dev, m, sb, NULL))
			return 0;
	return -1;
}

/* The devices of the filesystem on dev: dev itself, then the others a scan finds. */
static int fs_devices(const char *dev, const char **devs, char **found, int max)
{
	struct btrfs_super_block sb;
	uint64_t devid;
	int m;

	devs[0] = dev;
	if (any_super(dev, &sb))
		return 1;
	devid = get_le64(&sb.dev_item.devid);
	m = get_le64(&sb.num_devices) > 1 ? fs_scan_devices(sb.fsid, &devid, 1, found, max - 1) : 0;
	for (int i = 0; i < m; i++)
		devs[1 + i] = found[i];
	return 1 + m;
}

static int recover_supers(const char *dev, int yes, const char *undo, struct copy_rec *r, int n)
{
	uint64_t max = 0;
	struct fs *fs;
	int bad = 0;

	for (int i = 0; i < n; i++)
		if (r[i].good && r[i].gen > max)
			max = r[i].gen;
	for (int i = 0; i < n; i++)
		if (r[i].gen < max)
			r[i].good = 0, bad++;
	if (cli_globals.verbose > 0) {
		printf("Before Recovering:\n");
		print_copies(r, n, 1);
		print_copies(r, n, 0);
		printf("\n");
	}
	if (!max) {
		msg_error("no valid superblock found on %s", dev);
		return 1;
	}
	if (!bad)
		return 0;
	if (!yes && !isatty(STDIN_FILENO)) {
		msg_error("not asking without a terminal: use -y to recover");
		return 4;
	}
	if (!yes && !confirm("Make sure this is a btrfs disk otherwise the tool will destroy other fs, Are you sure?"))
		return 4;
	fs = open_rw(dev, undo, 1);
	if (!fs)
		return 3;
	return close_rw(fs, fs_super_adopt_newest(fs) || fs_super_commit(fs),
			"cannot write the superblocks") ? 3 : 2;
}

int rescue_super_recover_main(int argc, char **argv)
{
	static const char *const result[] = { "All supers are valid, no need to recover",
		"Usage or syntax errors", "Recovered bad superblocks successful",
		"Failed to recover bad superblocks", "Aborted to recover bad superblocks" };
	const char *devs[17], *undo = NULL;
	struct copy_rec r[17 * BTRFS_SUPER_MIRRORS];
	char *found[16];
	int c, yes = 0, n, ret;

	while ((c = cli_getopt(argc, argv, "yv", undo_opts, super_recover_usage)) != -1) {
		if (c == 'y')
			yes = 1;
		else if (c == 'v')
			cli_globals.verbose++;
		else
			undo = optarg;
	}
	cli_check_argc(argc, 1, 1, super_recover_usage);
	ret = fs_path_mounted(argv[optind]);
	if (ret < 0)
		msg_error("could not check mount status: %s", strerror(-ret));
	if (ret > 0)
		msg_error("the device is busy");
	if (ret)
		return 1;
	n = fs_devices(argv[optind], devs, found, 17);
	if (cli_globals.verbose > 0) {
		printf("All Devices:\n");
		for (int i = 0; i < n; i++) {
			struct btrfs_super_block sb;

			printf("\tDevice: id = %llu, name = %s\n", any_super(devs[i], &sb) ? 0ULL :
			       (unsigned long long)get_le64(&sb.dev_item.devid), devs[i]);
		}
		printf("\n");
	}
	ret = recover_supers(argv[optind], yes, undo, r, read_copies(devs, n, r));
	while (n > 1)
		free(found[--n - 1]);
	printf("%s\n", result[ret]);
	return ret;
}

/* ---- chunk-recover ---------------------------------------------------------- */

static const char chunk_recover_usage[] =
	"usage: btrfs rescue chunk-recover [options] <device>\n\n"
	"    Recover the chunk tree by scanning the devices one by one.\n\n"
	"    -y                 assume an answer of `yes' to all questions\n"
	"    -v                 verbose\n";

int rescue_chunk_recover_main(int argc, char **argv)
{
	while (cli_getopt(argc, argv, "yvh", NULL, chunk_recover_usage) != -1)
		;
	cli_check_argc(argc, 1, 1, chunk_recover_usage);
	msg_error("chunk-recover is not supported: btrfsbox does not rebuild the chunk tree, nothing was written");
	return 1;
}

/* ---- undo --------------------------------------------------------------------- */

static const char undo_usage[] =
	"usage: btrfs rescue undo <file> <device> [<device>...]\n\n"
	"    Put a filesystem back exactly as it was before a command that was run with\n"
	"    --undo <file>. Refused when the filesystem changed since, or when the devices\n"
	"    are not the ones the file was written for (give every device of the filesystem).\n";

int rescue_undo_main(int argc, char **argv)
{
	struct fs_error err;
	uint64_t n;
	char buf[320];

	cli_no_options(argc, argv, 2, -1, undo_usage);
	if (fs_undo_restore(argv[optind], (const char *const *)argv + optind + 1, argc - optind - 1,
			    &n, &err)) {
		msg_error("%s", fs_error_format(&err, buf, sizeof(buf)));
		if (n)
			msg_error("the restore stopped after %llu ranges: run it again", (unsigned long long)n);
		return 1;
	}
	printf("Restored %llu ranges from %s\n", (unsigned long long)n, argv[optind]);
	return 0;
}

/* ---- create-control-device ------------------------------------------------------ */

static const char control_usage[] =
	"usage: btrfs rescue create-control-device\n\n"
	"    Create /dev/btrfs-control (see 'CONTROL DEVICE' in btrfs(5))\n";

int rescue_control_main(int argc, char **argv)
{
	cli_no_options(argc, argv, 0, 0, control_usage);
	if (mknod("/dev/btrfs-control", S_IFCHR | S_IRUSR | S_IWUSR, makedev(10, 234))) {
		msg_error("could not create /dev/btrfs-control: %m");
		return 1;
	}
	return 0;
}
#endif
