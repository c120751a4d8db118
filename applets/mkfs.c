/* mkfs.btrfs (placeholder until its issue lands). */
//config:config APPLET_MKFS
//config:	bool "mkfs.btrfs"
//config:	default y
//config:	help
//config:	  mkfs.btrfs.
//cmd:APPLET_MKFS mkfs_main mkfs.btrfs|mkfs.btrfs
#include "config.h"
#if CFG_APPLET_MKFS
#include "cli.h"
#include <stdio.h>
#include <string.h>

static const char usage[] = "usage: mkfs.btrfs [options] ...\n";

int mkfs_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		cli_print_version("mkfs.btrfs");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	fputs(usage, stderr);
	msg_error("not implemented yet");
	return 1;
}
#endif
