/* fsck.btrfs: what fsck(8) runs at boot. btrfs needs no boot-time check, so like
 * btrfs-progs' fsck.btrfs this only checks that the device exists (exit 8 if not). */
//config:config APPLET_FSCK
//config:	bool "fsck.btrfs (boot-time no-op)"
//config:	default y
//config:	help
//config:	  For fsck(8): exits 0 when the device exists, 8 when it does not.
//cmd:APPLET_FSCK fsck_main fsck.btrfs|boot-time fsck helper (no-op)

#include "config.h"
#if CFG_APPLET_FSCK
#include "util/cli/cli.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

USAGE(fsck_usage) =
	"usage: fsck.btrfs [-a|-A|-n|-p|-y|-f] DEVICE\n\n"
	"Does nothing but check that DEVICE exists: btrfs checks itself at mount time.\n"
	"Use 'btrfs check' (btrfsck) for a real check.\n";

int fsck_main(int argc, char **argv)
{
	const char *dev = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			cli_put_usage(fsck_usage, stdout);
			return 0;
		}
		if (argv[i][0] != '-')
			dev = argv[i];
	}
	if (dev && access(dev, F_OK) != 0) {
		fprintf(stderr, "fsck.btrfs: %s does not exist\n", dev);
		return 8;
	}
	return 0;
}
#endif
