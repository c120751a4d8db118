/* mount.btrfs (placeholder until its issue lands). */
//config:config APPLET_MOUNT
//config:	bool "mount.btrfs"
//config:	default y
//config:	help
//config:	  mount.btrfs.
//cmd:APPLET_MOUNT mount_main mount.btrfs|mount.btrfs
#include "config.h"
#if CFG_APPLET_MOUNT
#include "cli.h"
#include <stdio.h>
#include <string.h>

static const char usage[] = "usage: mount.btrfs [options] ...\n";

int mount_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		cli_print_version("mount.btrfs");
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
