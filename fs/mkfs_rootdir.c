/* --rootdir: populating the new filesystem from a directory tree. */
#include "mkfs_int.h"

int rootdir_estimate(struct mkfs_ctx *c, const char *dir, struct rootdir_estimate *est)
{
	(void)dir; (void)est;
	return mkfs_fail(c, "--rootdir is not implemented yet");
}

int rootdir_populate(struct mkfs_ctx *c, const char *dir)
{
	(void)dir;
	return mkfs_fail(c, "--rootdir is not implemented yet");
}
