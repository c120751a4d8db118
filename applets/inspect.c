/* btrfs inspect-internal dump-super and dump-tree: the superblock and the trees in the
 * btrfs-progs 6.2 text form (printers in inspect_print.c). */
//config:config APPLET_INSPECT
//config:	bool "btrfs inspect-internal dump-super, dump-tree"
//config:	default y
//config:	help
//config:	  Print superblocks and tree blocks of an unmounted filesystem in
//config:	  the btrfs-progs text format.
//cmd:APPLET_INSPECT dump_super_main btrfs inspect-internal dump-super|Dump superblock from a device in a textual form
#include "config.h"
#if CFG_APPLET_INSPECT
#include "cli.h"
#include "format.h"
#include "inspect_print.h"
#include "le.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- dump-super ---------------------------------------------------------------------- */

static const char dump_super_usage[] =
	"usage: btrfs inspect-internal dump-super [options] device [device...]\n\n"
	"    Dump superblock from a device in a textual form\n\n"
	"    -f|--full                 print full superblock information, backup roots etc.\n"
	"    -a|--all                  print information about all superblocks\n"
	"    -s|--super <super>        specify which copy to print out (values: 0, 1, 2)\n"
	"    -F|--force                attempt to dump superblocks with bad magic\n"
	"    --bytenr <offset>         specify alternate superblock offset\n\n"
	"    Deprecated syntax:\n"
	"    -s <bytenr>               specify alternate superblock offset, values other than 0, 1, 2\n"
	"                              will be interpreted as --bytenr for backward compatibility\n"
	"    -i <super>                specify which copy to print out (values: 0, 1, 2), now moved to --super\n";

/* Prints the copy at bytenr. 0 also when the device ends before it (nothing to show). */
static int dump_one_super(const char *path, int fd, uint64_t bytenr, int full, int force)
{
	struct btrfs_super_block sb;
	ssize_t got = pread(fd, &sb, sizeof(sb), (off_t)bytenr);

	if (got == 0)
		return 0;
	if (got != (ssize_t)sizeof(sb)) {
		msg_error("failed to read the superblock on %s at %llu", path,
			  (unsigned long long)bytenr);
		msg_error("error = '%s', errno = %d", strerror(got < 0 ? errno : 0),
			  got < 0 ? errno : 0);
		return 1;
	}
	printf("superblock: bytenr=%llu, device=%s\n", (unsigned long long)bytenr, path);
	printf("---------------------------------------------------------\n");
	if (get_le64(&sb.magic) != BTRFS_MAGIC_LE && !force) {
		msg_error("bad magic on superblock on %s at %llu (use --force to dump it anyway)",
			  path, (unsigned long long)bytenr);
		return 1;
	}
	print_superblock(&sb, full);
	return 0;
}

static uint64_t parse_u64_or_die(const char *s, const char *usage)
{
	uint64_t v;

	if (cli_parse_u64(s, &v))
		cli_usage_error(usage, "invalid number");
	return v;
}

int dump_super_main(int argc, char **argv)
{
	enum { OPT_BYTENR = 256 };
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' }, { "bytenr", required_argument, NULL, OPT_BYTENR },
		{ "full", no_argument, NULL, 'f' }, { "force", no_argument, NULL, 'F' },
		{ "super", required_argument, NULL, 's' }, { NULL, 0, NULL, 0 },
	};
	int all = 0, full = 0, force = 0, c;
	uint64_t bytenr = btrfs_super_offset(0), arg;

	while ((c = cli_getopt(argc, argv, "fFai:s:", longopts, dump_super_usage)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'f': full = 1; break;
		case 'F': force = 1; break;
		case 'i':
			msg_warn("option -i is deprecated, please use -s or --super");
			arg = parse_u64_or_die(optarg, dump_super_usage);
			if (arg >= BTRFS_SUPER_MIRRORS) {
				msg_error("super mirror too big: %llu >= %d", (unsigned long long)arg,
					  BTRFS_SUPER_MIRRORS);
				return 1;
			}
			bytenr = btrfs_super_offset((int)arg);
			break;
		case 's':
			arg = parse_u64_or_die(optarg, dump_super_usage);
			if (arg >= BTRFS_SUPER_MIRRORS) {
				msg_warn("deprecated use of -s <bytenr> with %llu, assuming --bytenr",
					 (unsigned long long)arg);
				bytenr = arg;
			} else {
				bytenr = btrfs_super_offset((int)arg);
			}
			all = 0;
			break;
		case OPT_BYTENR:
			bytenr = parse_u64_or_die(optarg, dump_super_usage);
			all = 0;
			break;
		}
	}
	cli_check_argc(argc, 1, -1, dump_super_usage);
	for (int i = optind; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		int first = all ? 0 : -1, last = all ? BTRFS_SUPER_MIRRORS - 1 : -1;

		if (fd < 0) {
			msg_error("cannot open %s: %s", argv[i], strerror(errno));
			return 1;
		}
		for (int m = first; m <= last; m++) {
			if (dump_one_super(argv[i], fd, m < 0 ? bytenr : btrfs_super_offset(m), full,
					   force)) {
				close(fd);
				return 1;
			}
			putchar('\n');
		}
		close(fd);
	}
	return 0;
}

#endif
