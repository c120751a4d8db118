/* Dispatch shared by the multicall entry point and the `btrfs` command tree. */
#ifndef APPLETS_H
#define APPLETS_H

/* Runs the command whose words start with argv[0] (a group such as "btrfs"),
 * resolving the following words with btrfs-progs' unambiguous-prefix matching. */
int cmd_run_group(int argc, char **argv);
/* Prints "usage: ..." and the commands below group (e.g. "btrfs") to stdout or stderr. */
void cmd_print_group_usage(const char *group, int to_stderr);

/* The label of a mounted filesystem (path: a directory in it), an unmounted device or
 * image file, printed after prefix; or set to newlabel (btrfs filesystem label, btrfs
 * property). Exit status. */
int fs_label(const char *path, const char *newlabel, const char *prefix);

#endif
