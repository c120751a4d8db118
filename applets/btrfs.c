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
#include <strings.h>

static const char btrfs_usage_head[] =
	"usage: btrfs [global options] <group> [<group>...] <command> [<args>]\n\n"
	"    --format <format>  text or json, for the commands that support it\n"
	"    -v|--verbose       more output; -q|--quiet  errors only\n"
	"    --log <level>      default, info, verbose, debug or quiet\n"
	"    --dry-run          do nothing that changes the filesystem (where supported)\n\n";

static void print_btrfs_usage(int to_stderr)
{
	fputs(btrfs_usage_head, to_stderr ? stderr : stdout);
	cmd_print_group_usage("btrfs", to_stderr);
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

/* --log LEVEL as a -v count: quiet -1 (as -q), default 1 ... debug 4 (btrfs-progs). */
static int set_log_level(const char *name)
{
	static const char levels[][8] = { "quiet", "", "default", "info", "verbose", "debug" };

	for (int i = 0; i < 6; i++)
		if (i != 1 && !strcasecmp(name, levels[i])) {
			cli_globals.verbose = i - 1;
			return 0;
		}
	msg_error("unrecognized log level: %s", name);
	return -1;
}

int btrfs_main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *val = NULL;
		int has_val = i + 1 < argc;

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return btrfs_help_main(argc, argv);
		if (!strcmp(a, "--version"))
			return btrfs_version_main(argc, argv);
		if (!strncmp(a, "--format", 8) || !strncmp(a, "--log", 5)) {
			val = strchr(a, '=');
			val = val ? val + 1 : has_val ? argv[++i] : NULL;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
			cli_be_verbose();
		else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			cli_globals.verbose = -1;
		else if (!strcmp(a, "--dry-run"))
			cli_globals.dry_run = 1;
		else if (val && a[2] == 'f' && (a[8] == '=' || !a[8])) {
			if (set_format(val))
				return 1;
		} else if (val && a[2] == 'l' && (a[5] == '=' || !a[5])) {
			if (set_log_level(val))
				return 1;
		} else {
			fprintf(stderr, "Unknown global option: %s\n", a);
			return 129;
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
