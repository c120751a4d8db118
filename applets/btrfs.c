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
#include "util/cli/cli.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

USAGE(btrfs_usage_head) =
	"usage: btrfs [global options] <group> [<group>...] <command> [<args>]\n\n"
	"    --format <format>  text or json, for the commands that support it\n"
	"    -v|--verbose       more output; -q|--quiet  errors only\n"
	"    --log <level>      default, info, verbose, debug or quiet\n"
	"    --dry-run          do nothing that changes the filesystem (where supported)\n\n";

static void print_btrfs_usage(int to_stderr)
{
	cli_put_usage(btrfs_usage_head, to_stderr ? stderr : stdout);
	cmd_print_group_usage("btrfs", to_stderr);
}

int btrfs_help_main(int argc, char **argv)
{
	(void)argc; (void)argv;
	print_btrfs_usage(0);
	return 0;
}

USAGE(version_usage) = "usage: btrfs version\n\n    Display btrfs-progs version\n";

int btrfs_version_main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--help"))
		cli_put_usage(version_usage, stdout);
	else
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
		fprintf(stderr, "error: invalid output format \"%s\"\n\nOptions for --format are: text, json\n",
			name);
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

static const char global_opts[][8] = { "verbose", "quiet", "dry-run", "help", "version", "format", "log" };

/* The global long option named or uniquely abbreviated by the n bytes at a, or -1. */
static int global_opt(const char *a, size_t n)
{
	int k = -1;

	for (int j = 0; j < 7; j++)
		if (!strncmp(global_opts[j], a, n)) {
			if (!global_opts[j][n])
				return j;
			k = k == -1 ? j : -2;
		}
	return k < 0 ? -1 : k;
}

int btrfs_main(int argc, char **argv)
{
	int i;

	/* as btrfs-progs' getopt_long("+vq"): -v/-q grouped, long names abbreviated, "--" */
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i] + 1, *val = NULL;
		size_t n;
		int k;

		if (*a != '-') {
			if (a[strspn(a, "vq")])
				goto unknown;
			for (; *a; a++)
				if (*a == 'v')
					cli_be_verbose();
				else
					cli_globals.verbose = -1;
			continue;
		}
		if (!*++a) {
			i++;
			break;
		}
		n = strcspn(a, "=");
		k = global_opt(a, n);
		if (k >= 5)   /* --format, --log: "=VALUE" or the next argument */
			val = a[n] ? a + n + 1 : i + 1 < argc ? argv[++i] : NULL;
		if (k < 0 || (k < 5 && a[n]) || (k >= 5 && !val))
			goto unknown;
		switch (k) {
		case 0: cli_be_verbose(); break;
		case 1: cli_globals.verbose = -1; break;
		case 2: cli_globals.dry_run = 1; break;
		case 3: return btrfs_help_main(argc, argv);
		case 4: return btrfs_version_main(argc, argv);
		case 5: if (set_format(val)) return 1; break;
		default: if (set_log_level(val)) return 1;
		}
		continue;
unknown:
		fprintf(stderr, "Unknown global option: %s\n", argv[i]);
		return 129;
	}
	if (i >= argc) {
		print_btrfs_usage(1);
		return 1;
	}
	argv[i - 1] = "btrfs"; /* the group name, whatever argv[0] was */
	return cmd_run_group(argc - i + 1, argv + i - 1);
}
#endif
