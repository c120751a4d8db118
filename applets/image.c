/* btrfs-image: a dump of a filesystem's metadata (for bug reports and test suites) and
 * its restore to an image, as btrfs-progs' tool of that name. */
//config:config APPLET_IMAGE
//config:	bool "btrfs-image"
//config:	default y
//config:	help
//config:	  btrfs-image [-c LEVEL] [-s] [-w] DEVICE DUMP, btrfs-image -r DUMP IMAGE:
//config:	  the metadata of an unmounted filesystem to a file (names optionally
//config:	  replaced), and such a file back to a filesystem image.
//cmd:APPLET_IMAGE image_main btrfs-image|Create or restore a filesystem image (metadata)

#include "config.h"
#if CFG_APPLET_IMAGE
#include "fs/image/image.h"
#include "util/cli/cli.h"
#include "util/ioctl/btrfs_ioctl.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

USAGE(image_usage) =
	"usage: btrfs-image [options] source target\n\n"
	"    Create or restore a filesystem image (metadata)\n\n"
	"    Options:\n"
	"    -r                        restore metadump image\n"
	"    -c value                  compression level (0 ~ 9)\n"
	"    -t value                  number of threads (1 ~ 32)\n"
	"    -o                        don't mess with the chunk tree when restoring\n"
	"    -s                        sanitize file names, use once to just use garbage, use twice if you want crc collisions\n"
	"    -w                        walk all trees instead of using extent tree, do this if your extent tree is broken\n"
	"    -m                        restore for multiple devices\n"
	"    -d                        also dump data, conflicts with -w\n\n"
	"    In the dump mode, source is the btrfs device and target is the output file (use '-' for stdout).\n"
	"    In the restore mode, source is the dumped image and target is the btrfs device/file.\n";

static int dump(const char *source, const char *target, const struct image_dump_opts *o)
{
	struct fs_open_opts oo;
	struct image_dump_stats st;
	struct fs_error err;
	struct fs *fs;
	char mnt[4096], buf[320];
	int fd = STDOUT_FILENO, ret;

	if (btrfs_mount_of_device(source, mnt, sizeof(mnt)) == 0)
		msg_warn("%s already mounted, results may be inaccurate", source);
	fs_open_opts_init(&oo);
	oo.scan = 1;
	oo.allow_degraded = 1;          /* a dump of what is there */
	if (!(fs = fs_open(&source, 1, &oo, &err))) {
		msg_error("open ctree failed: %s", fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	if (strcmp(target, "-") && (fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
		msg_error("unable to create target file %s: %s", target, strerror(errno));
		fs_close(fs);
		return 1;
	}
	ret = image_dump(fs, fd, o, &st);
	if (ret)
		msg_error("create failed: %s", fs_error_format(&fs->err, buf, sizeof(buf)));
	if (st.unverified)
		msg_warn("%llu tree blocks do not verify: dumped as they are", (unsigned long long)st.unverified);
	if (st.garbage_names)
		msg_warn("no hash collision found for %llu names: garbage used, they won't match indexes",
			 (unsigned long long)st.garbage_names);
	fs_close(fs);
	if (fd != STDOUT_FILENO && (close(fd) || ret)) {
		if (!ret)
			msg_error("cannot write %s: %s", target, strerror(errno));
		unlink(target);
		return 1;
	}
	return ret ? 1 : 0;
}

static int restore(const char *source, const char *const *targets, int n, const struct image_restore_opts *o)
{
	struct fs_error err;
	char buf[320];
	int in = STDIN_FILENO, ret;

	if (strcmp(source, "-") && (in = open(source, O_RDONLY)) < 0) {
		msg_error("unable to open metadump image: %s", strerror(errno));
		return 1;
	}
	ret = image_restore(in, targets, n, o, &err);
	if (ret)
		msg_error("restore failed: %s", fs_error_format(&err, buf, sizeof(buf)));
	if (in != STDIN_FILENO)
		close(in);
	return ret ? 1 : 0;
}

int image_main(int argc, char **argv)
{
	struct image_dump_opts d = { 0 };
	struct image_restore_opts r = { 0 };
	int c, create = 1, data = 0;

	while ((c = cli_getopt_long(argc, argv, "rc:t:oswmd", "", image_usage)) != -1) {
		uint64_t v;

		switch (c) {
		case 'c':
		case 't':
			v = cli_arg_u64(optarg);
			if (c == 'c' ? v > 9 : v > 32) {
				msg_error(c == 'c' ? "compression level out of range: %llu"
						   : "number of threads out of range: %llu > 32", (unsigned long long)v);
				return 1;
			}
			if (c == 'c')
				d.compress_level = (int)v;      /* one thread does the work (-t accepted) */
			break;
		case 'r': create = 0; break;
		case 'o': r.old_restore = 1; break;
		case 's': d.names = d.names == IMAGE_NAMES_KEEP ? IMAGE_NAMES_GARBAGE : IMAGE_NAMES_COLLIDE; break;
		case 'w': d.walk_trees = 1; break;
		case 'm': create = 0; r.multi = 1; break;
		default: data = 1; break;
		}
	}
	cli_check_argc(argc, 2, -1, image_usage);
	if (data)
		cli_usage_error(image_usage, "data dump feature is experimental and is not configured in this build");
	if (create && r.old_restore)
		cli_usage_error(image_usage, "create and restore cannot be used at the same time");
	if (!create && (d.walk_trees || d.names || d.compress_level))
		cli_usage_error(image_usage, "using -w, -s, -c, -d options for restore makes no sense");
	if (r.multi && argc - optind < 3)
		cli_usage_error(image_usage, "not enough devices specified for -m option");
	if (!r.multi && argc - optind != 2)
		cli_usage_error(image_usage, create ? NULL : "accepts only 1 device without -m option");
	if (r.multi && r.old_restore)
		cli_usage_error(image_usage, "-o and -m cannot be used together");
	if (create)
		return dump(argv[optind], argv[optind + 1], &d);
	return restore(argv[optind], (const char *const *)argv + optind + 1, argc - optind - 1, &r);
}
#endif
