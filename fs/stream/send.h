/* Offline send: the send stream (fs/stream/sendstream.h) of a read-only subvolume of an
 * unmounted filesystem, full or incremental, that `btrfs receive` applies as it
 * applies the kernel's. Engine conventions (fs/core/fs.h): never prints; on failure fs->err
 * says why, naming the file being sent when its data could not be read. */
#ifndef FS_SEND_H
#define FS_SEND_H
#include "fs/core/fs.h"

struct fs_send_opts {
	const char *name;               /* of the subvolume (its name in its directory) */
	uint32_t version;               /* stream version 1..3 */
	int compressed;                 /* compressed extents as encoded writes (version >= 2) */
	int no_data;                    /* NO_FILE_DATA: update_extent instead of data */
	int no_header, no_end;          /* leave out the stream header / the end command */
	const struct fs_root *parent;   /* incremental from this snapshot, or NULL */
	const struct fs_root *clones;   /* further clone sources */
	int nclones;
	int (*write)(void *ctx, const void *buf, size_t len);  /* 0 or -errno */
	void *ctx;
};

/* Writes the stream of subvolume root through o->write. 0 or a negative errno. */
int fs_send(struct fs *fs, const struct fs_root *root, const struct fs_send_opts *o);

#endif
