/* btrfs filesystem mkswapfile (a NOCOW, preallocated file with a swap signature) and
 * commit-stats (the kernel's transaction commit counters in sysfs). */
//config:config FS_EXTRA
//config:	bool "btrfs filesystem mkswapfile, commit-stats"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Create a swap file on btrfs; show the commit statistics.
//cmd:FS_EXTRA mkswapfile_main btrfs filesystem mkswapfile|Create a swapfile
//cmd:FS_EXTRA commit_stats_main btrfs filesystem commit-stats|Print number of commits and time stats since mount

#include "config.h"
#if CFG_FS_EXTRA
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

USAGE(swap_usage) =
	"usage: btrfs filesystem mkswapfile [-s|--size SIZE] [-U|--uuid UUID|clear|random|time] <file>\n\n"
	"    Default size 2GiB, at least 40KiB.\n";

int mkswapfile_main(int argc, char **argv)
{
	/* swap header v1 in the first 4KiB: version 1 at 0x400, the last page number,
	 * the UUID at 0x40c, "SWAPSPACE2" at the end */
	static uint8_t page[4096];   /* .bss: filled below */
	uint64_t size = 2ULL << 30, pages;
	unsigned long flags = FS_NOCOW_FL;
	int c, fd, ret = 1;

	page[0x400] = 1;
	memcpy(page + 0xff6, "SWAPSPACE2", 10);
	uuid_generate(page + 0x40c);
	while ((c = cli_getopt_long(argc, argv, "s:U:", "size:=s uuid:=U", swap_usage)) != -1) {
		if (c == 's') {
			if (parse_size_arg(optarg, &size))
				return 1;
			if (size < 40 * 1024) {
				msg_error("swapfile needs to be at least 40 KiB");
				return 1;
			}
		} else if (!strcmp(optarg, "clear")) {
			memset(page + 0x40c, 0, 16);
		} else if (strcmp(optarg, "random") && strcmp(optarg, "time") &&
			   uuid_parse(optarg, page + 0x40c)) {
			msg_error("UUID not recognized: %s", optarg);
			return 1;
		}
	}
	cli_check_argc(argc, 1, 1, swap_usage);
	fd = open(argv[optind], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		msg_error("cannot create new swapfile: %m");
		return 1;
	}
	size &= ~4095ULL;
	pages = size / 4096 - 1;   /* the header page is not swap space */
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
		msg_error("cannot set NOCOW flag: %m");
	else if (pages < 10)
		msg_error("file too short");
	else if (pages > UINT32_MAX)
		msg_error("file too big");
	else if (fallocate(fd, 0, 0, (off_t)size) < 0)
		msg_error("cannot fallocate file: %m");
	else if (put_le32(page + 0x404, (uint32_t)pages), pwrite(fd, page, sizeof(page), 0) < 0)
		msg_error("cannot write swap signature: %m");
	else {
		out_say("create swapfile %s size %s (%llu)\n", argv[optind],
			pretty_size(size, UNITS_HUMAN), (unsigned long long)size);
		ret = 0;
	}
	close(fd);
	return ret;
}

USAGE(stats_usage) =
	"usage: btrfs filesystem commit-stats [-z|--reset] <path>\n\n"
	"    -z|--reset  reset the maximum commit duration after printing\n";

int commit_stats_main(int argc, char **argv)
{
	static const char *const names[][3] = {
		{ "commits", "Total commits:", "" },
		{ "last_commit_ms", "Last commit duration:", "ms" },
		{ "max_commit_ms", "Max commit duration:", "ms" },
		{ "total_commit_ms", "Total time spent in commit:", "ms" },
	};
	struct btrfs_ioctl_fs_info_args fi;
	char path[BTRFS_SYSFS_PATH], buf[4096], fsid[UUID_STR_LEN], *p, *save = NULL;
	int fd, sfd, reset = 0, i;
	ssize_t n;

	while (cli_getopt_long(argc, argv, "z", "reset=z", stats_usage) != -1)
		reset = 1;
	fd = btrfs_open_cmd_path(argc, argv, 1, 1, stats_usage);
	if (fd < 0)
		return 1;
	if (btrfs_sysfs_path(fd, "commit_stats", path) ||
	    (sfd = open(path, reset ? O_RDWR | O_CLOEXEC : O_RDONLY | O_CLOEXEC)) < 0) {
		msg_error("no commit_stats file in sysfs");
		close(fd);
		return 0;
	}
	n = read(sfd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	if (n < 0)
		msg_error("cannot read commit_stats: %m");
	else {
		if (!btrfs_fs_info(fd, &fi)) {
			uuid_unparse(fi.fsid, fsid);
			out_say("UUID: %s\n", fsid);
		}
		out_say("Commit stats since mount:\n");
		/* "key value" lines; the known keys get their text and unit */
		for (p = strtok_r(buf, " \n", &save); p; p = strtok_r(NULL, " \n", &save)) {
			const char *unit = "";

			for (i = 0; i < 4; i++)
				if (!strcmp(p, names[i][0])) {
					p = (char *)names[i][1];
					unit = names[i][2];
				}
			out_say("  %-28s", p);
			if (!(p = strtok_r(NULL, " \n", &save)))
				break;
			out_say("%8s%s", p, unit);
			putchar('\n');
		}
		if (reset && pwrite(sfd, "0\n", 2, 0) < 0)
			msg_warn("cannot reset stats: %m");
		else if (reset)
			out_say("NOTE: Max commit duration has been reset\n");
	}
	close(sfd);
	close(fd);
	return 0;
}
#endif
