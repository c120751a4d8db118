/* The `btrfs` command: global options, then the command tree (btrfs-progs prefix matching). */
//config:config APPLET_BTRFS
//config:	bool "btrfs (the command tree: filesystem, subvolume, check, ...)"
//config:	default y
//config:	help
//config:	  The btrfs command with its groups. Each group has its own option.
//config:
//config:config JSON_OUTPUT
//config:	bool "JSON output (btrfs --format json)"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Machine-readable output for the commands that support it.
//cmd:APPLET_BTRFS btrfs_main btrfs|the btrfs command tree
//cmd:APPLET_BTRFS btrfs_help_main btrfs help|Display help information
//cmd:APPLET_BTRFS btrfs_version_main btrfs version|Display btrfs-progs version

#include "config.h"
#if CFG_APPLET_BTRFS
#include "applets.h"
#include "cli.h"
#include <stdio.h>
#include <string.h>

static const char btrfs_usage_head[] =
	"usage: btrfs [--help] [--version] [--format <format>] [-v|--verbose] [-q|--quiet] "
	"<group> [<group>...] <command> [<args>]\n\n";

static void print_btrfs_usage(int to_stderr)
{
	fputs(btrfs_usage_head, to_stderr ? stderr : stdout);
	cmd_print_group_usage("btrfs", to_stderr);
	fputs("\nCommand groups: subvolume, filesystem, device, scrub, send, receive, restore, "
	      "check, inspect-internal.\n", to_stderr ? stderr : stdout);
}

int btrfs_help_main(int argc, char **argv)
{
	(void)argc; (void)argv;
	print_btrfs_usage(0);
	return 0;
}

int btrfs_version_main(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_print_version("btrfs");
	return 0;
}

static int set_format(const char *name)
{
	if (!strcmp(name, "text"))
		cli_globals.format = CLI_FORMAT_TEXT;
	else if (CFG_JSON_OUTPUT && !strcmp(name, "json"))
		cli_globals.format = CLI_FORMAT_JSON;
	else {
		msg_error("unrecognized format: %s", name);
		return -1;
	}
	return 0;
}

int btrfs_main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return btrfs_help_main(argc, argv);
		if (!strcmp(a, "--version"))
			return btrfs_version_main(argc, argv);
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
			cli_globals.verbose++;
		else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			cli_globals.verbose = -1;
		else if (!strncmp(a, "--format=", 9)) {
			if (set_format(a + 9))
				return 1;
		} else if (!strcmp(a, "--format") && i + 1 < argc) {
			if (set_format(argv[++i]))
				return 1;
		} else {
			msg_error("unknown global option: %s", a);
			print_btrfs_usage(1);
			return 1;
		}
	}
	if (i >= argc) {
		print_btrfs_usage(1);
		return 1;
	}
	argv[i - 1] = "btrfs"; /* the group name, whatever argv[0] was */
	return cmd_run_group(argc - i + 1, argv + i - 1);
}
#endif
