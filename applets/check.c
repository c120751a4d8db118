/* btrfsck (placeholder until its issue lands). */
//config:config APPLET_CHECK
//config:	bool "btrfsck"
//config:	default y
//config:	help
//config:	  btrfsck.
//cmd:APPLET_CHECK check_main btrfsck|btrfsck
#include "config.h"
#if CFG_APPLET_CHECK
#include "cli.h"
#include <stdio.h>
#include <string.h>

static const char usage[] = "usage: btrfs check [options] <device>\n\n\t--repair   try to repair the filesystem\n";

int check_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		cli_print_version("btrfsck");
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
//cmd:APPLET_CHECK check_main btrfs check|Check structural integrity of a filesystem (unmounted)
