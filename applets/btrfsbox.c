/* The multicall entry point: basename(argv[0]) (or `btrfsbox APPLET`) picks the applet
 * from the command table generated from the //cmd: lines of applets/ (build/gen/commands.h,
 * sorted by command words). */
//config:config SIZE_OVER_SPEED
//config:	bool "Smallest binary (-Oz, link-time optimization)"
//config:	default n
//config:	help
//config:	  Build with -Oz and -flto instead of -Os: about 2.5 KB smaller, somewhat
//config:	  slower. For routers where every flash byte counts (tinyconfig sets it).
#include "config.h"
#include "applets.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD(words, fn, desc) int fn(int argc, char **argv);
#define CMD_OFF(words)
#include "commands.h"
#undef CMD
#undef CMD_OFF

struct cmd {
	const char *words;            /* "btrfs filesystem df" */
	int (*fn)(int argc, char **argv); /* NULL: not built in this configuration */
#if !USAGE_COMPRESSED
	const char *desc;             /* compressed: usage_entry(index in cmds) */
#endif
};

static const struct cmd cmds[] = {
#if USAGE_COMPRESSED
#define CMD(words, fn, desc) { words, fn },
#define CMD_OFF(words) { words, NULL },
#else
#define CMD(words, fn, desc) { words, fn, desc },
#define CMD_OFF(words) { words, NULL, NULL },
#endif
#include "commands.h"
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const char *cmd_desc(size_t i)
{
#if USAGE_COMPRESSED
	return usage_entry(i);
#else
	return cmds[i].desc;
#endif
}

static int cmd_compare(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cmd *)elem)->words);
}

static const struct cmd *cmd_lookup(const char *words)
{
	return bsearch(words, cmds, NCMDS, sizeof(cmds[0]), cmd_compare);
}

/* Length of the word of cmd c that follows path ("btrfs fi" style paths are complete
 * words), or 0 when c is not below path. *word points at it. */
static size_t child_word(const struct cmd *c, const char *path, const char **word)
{
	size_t n = strlen(path);

	if (strncmp(c->words, path, n) || c->words[n] != ' ')
		return 0;
	*word = c->words + n + 1;
	return strcspn(*word, " ");
}

static int has_children(const char *path, int enabled_only)
{
	const char *w;

	for (size_t i = 0; i < NCMDS; i++)
		if (child_word(&cmds[i], path, &w) && (!enabled_only || cmds[i].fn))
			return 1;
	return 0;
}

/* Finds the child of path named by arg: exact, else a unique prefix. Returns its length
 * (and *word) or 0 when unknown; -1 when ambiguous (reported). */
static int match_child(const char *path, const char *arg, const char **word)
{
	size_t alen = strlen(arg), n;
	const char *w, *found = NULL;
	size_t found_len = 0;
	int ambiguous = 0;

	for (size_t i = 0; i < NCMDS; i++) {
		n = child_word(&cmds[i], path, &w);
		if (!n || n < alen || strncmp(w, arg, alen))
			continue;
		if (n == alen) {
			*word = w;
			return (int)n;
		}
		if (found && (found_len != n || strncmp(found, w, n)))
			ambiguous = 1;
		found = w;
		found_len = n;
	}
	if (ambiguous) {
		fprintf(stderr, "%s: ambiguous token '%s'\n\nDid you mean one of these ?\n", path, arg);
		found = NULL;
		/* each word once: the commands of a group are adjacent */
		for (size_t i = 0; i < NCMDS; i++)
			if ((n = child_word(&cmds[i], path, &w)) && !strncmp(w, arg, alen) &&
			    (!found || found_len != n || strncmp(found, w, n))) {
				fprintf(stderr, "\t%.*s\n", (int)n, w);
				found = w;
				found_len = n;
			}
		return -1;
	}
	*word = found;
	return (int)found_len;
}

void cmd_print_group_usage(const char *group, int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;
	const char *w;

	fprintf(f, "usage: %s <command> [<args>]\n\n", group);
	for (size_t i = 0; i < NCMDS; i++)
		if (cmds[i].fn && child_word(&cmds[i], group, &w) && !has_children(cmds[i].words, 1))
			fprintf(f, "    %-36s %s\n", cmds[i].words, cmd_desc(i));
	fprintf(f, "\nRun '%s <command> --help' for more information on a command.\n", group);
}

static int not_built(const char *what)
{
	fprintf(stderr, "btrfsbox: %s: applet not built in this configuration\n", what);
	return 1;
}

/* The commands with JSON output ("filesystem df", ...: path without "btrfs "). */
static int json_command(const char *path)
{
	static const char json[][16] = { "filesystem df", "filesystem show", "device stats",
					 "subvolume list", "scrub status", "qgroup show" };

	for (size_t i = 0; i < sizeof(json) / sizeof(json[0]); i++)
		if (!strcmp(path, json[i]))
			return 1;
	return 0;
}

int cmd_run_group(int argc, char **argv)
{
	char path[128];
	const char *word;
	const struct cmd *c;
	int i = 1, n;

	snprintf(path, sizeof(path), "%s", argv[0]);
	while (i < argc && argv[i][0] != '-' && has_children(path, 0)) {
		n = match_child(path, argv[i], &word);
		if (n < 0)
			return 1;
		/* a group that is a command too ("btrfs balance PATH") takes the word */
		if (n == 0 && i > 1 && (c = cmd_lookup(path)) && c->fn)
			break;
		if (n == 0 || strlen(path) + (size_t)n + 2 > sizeof(path)) {
			fprintf(stderr, "%s: unknown token '%s'\n", path, argv[i]);
			cmd_print_group_usage(path, 1);
			return 1;
		}
		snprintf(path + strlen(path), sizeof(path) - strlen(path), " %.*s", n, word);
		i++;
	}
	c = cmd_lookup(path);
	/* "btrfs -- -x": no command word (and no recursion into btrfs_main) */
	if (i == 1 && i < argc && c && c->fn) {
		fprintf(stderr, "%s: unknown token '%s'\n", path, argv[i]);
		return 1;
	}
	/* --dry-run only where a command knows it (btrfs-progs refuses the others) */
	if (c && c->fn && cli_globals.dry_run && strcmp(path, "btrfs subvolume delete") &&
	    strcmp(path, "btrfs help") && strcmp(path, "btrfs version")) {
		msg_error("--dry-run option not supported for %s\n", strrchr(path, ' ') + 1);
		return 1;
	}
	/* btrfs-progs refuses --format json for the commands of a group that lack it */
	if (CFG_JSON_OUTPUT && c && c->fn && i > 2 && out_json() && !json_command(path + 6)) {
		msg_error("output format json is unsupported for this command");
		return 1;
	}
	cli_globals.cmd = path;
	if (c && c->fn)
		return c->fn(argc - i + 1, argv + i - 1);
	if (c || !has_children(path, 1))
		return not_built(path);
	if (i < argc && !strcmp(argv[i], "--help")) {
		cmd_print_group_usage(path, 0);
		return 0;
	}
	if (i < argc)
		fprintf(stderr, "%s: unknown token '%s'\n", path, argv[i]);
	cmd_print_group_usage(path, 1);
	return 1;
}

static int run_applet(const char *name, int argc, char **argv)
{
	const struct cmd *c = cmd_lookup(name);

	if (c && c->fn)
		return c->fn(argc, argv);
	if (!c && has_children(name, 1))
		return cmd_run_group(argc, argv);
	if (c || has_children(name, 0))
		return not_built(name);
	fprintf(stderr, "btrfsbox: unknown applet '%s'\n", name);
	return 127;
}

/* Calls fn for every built-in top-level applet (a one-word command). */
static int each_applet(int (*fn)(const char *name, void *ctx), void *ctx)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (cmds[i].fn && !strchr(cmds[i].words, ' ') && fn(cmds[i].words, ctx))
			return 1;
	return 0;
}

static int print_name(const char *name, void *ctx)
{
	(void)ctx;
	puts(name);
	return 0;
}

struct install { const char *dir; const char *self; int symbolic; };

static int install_link(const char *name, void *ctx)
{
	struct install *in = ctx;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", in->dir, name);
	unlink(path);
	if ((in->symbolic ? symlink(in->self, path) : link(in->self, path)) == 0)
		return 0;
	msg_error("cannot create %s: %s", path, strerror(errno));
	return 1;
}

USAGE(box_usage) =
	"usage: btrfsbox [--list | --install [-s] DIR | --help | --version]\n"
	"       btrfsbox APPLET [ARGS...]\n"
	"       APPLET [ARGS...]   (through a link named after the applet)\n\n"
	"btrfs tools in one static binary. Built-in applets (btrfsbox --list):\n";

static int box_main(int argc, char **argv)
{
	static char self[4096];
	struct install in = { NULL, self, 0 };
	ssize_t n;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_put_usage(box_usage, argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	if (!strcmp(argv[1], "--version")) {
		cli_print_version("btrfsbox");
		return 0;
	}
	if (!strcmp(argv[1], "--list"))
		return each_applet(print_name, NULL);
	if (!strcmp(argv[1], "--install")) {
		in.symbolic = argc > 2 && !strcmp(argv[2], "-s");
		in.dir = argv[2 + in.symbolic];
		if (!in.dir || argc > 3 + in.symbolic)
			cli_usage_error(box_usage, "--install needs one directory");
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0) {
			msg_error("cannot find this binary through /proc/self/exe");
			return 1;
		}
		self[n] = 0;
		return each_applet(install_link, &in);
	}
	return run_applet(argv[1], argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');

	name = name ? name + 1 : argv[0];
	if (!strcmp(name, "btrfsbox"))
		return box_main(argc, argv);
	return run_applet(name, argc, argv);
}
