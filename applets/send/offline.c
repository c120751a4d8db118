/* btrfs send --device DEV: the streams of read-only subvolumes of an unmounted
 * filesystem, made by the engine (fs/stream/send.c) instead of the kernel. The subvolumes,
 * -p and -c are paths from the top level of that filesystem. */
//config:config SEND_OFFLINE
//config:	bool "btrfs send --device (unmounted filesystems)"
//config:	default y
//config:	depends on APPLET_SEND
//config:	help
//config:	  Make send streams (full or incremental) of subvolumes of a device or
//config:	  image file that is not mounted, without the kernel.
#include "config.h"
#if CFG_SEND_OFFLINE
#include "offline.h"
#include "fs/stream/send.h"
#include "fs/stream/sendstream.h"
#include "util/cli/cli.h"
#include "util/le.h"
#include "util/pio.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btrfs.h>

#define MAX_ROOTS 256

/* The read-only subvolume at path (from the top level). */
static int find_subvol(struct fs *fs, const char *path, const char *role, struct fs_root *root)
{
	struct fs_root top;
	char buf[300];
	uint64_t ino;

	if (fs_root_lookup(fs, BTRFS_FS_TREE_OBJECTID, &top) || fs_path_lookup(fs, &top, path, root, &ino)) {
		msg_error("cannot find %s: %s", path, fs_error_format(&fs->err, buf, sizeof(buf)));
		return -1;
	}
	if (root->objectid < BTRFS_FIRST_FREE_OBJECTID || ino != fs_root_dir(root)) {
		msg_error("%s is not a btrfs subvolume", path);
		return -1;
	}
	if (!(get_le64(&root->item.flags) & BTRFS_ROOT_SUBVOL_RDONLY)) {
		msg_error("%s %s is not read-only", role, path);
		return -1;
	}
	return 0;
}

/* Without -p: the clone source the subvolume was snapshotted from, else one snapshot
 * of the same origin, the closest in time. */
static const struct fs_root *good_parent(const struct fs_root *r, const struct fs_root *clones, int n)
{
	const struct fs_root *best = NULL;
	uint64_t best_diff = UINT64_MAX, t = get_le64(&r->item.ctransid);

	for (int i = 0; i < n; i++) {
		uint64_t c = get_le64(&clones[i].item.ctransid), diff = c > t ? c - t : t - c;

		if (!memcmp(clones[i].item.uuid, r->item.parent_uuid, BTRFS_UUID_SIZE))
			return &clones[i];
		if (!memcmp(clones[i].item.parent_uuid, r->item.parent_uuid, BTRFS_UUID_SIZE) && diff < best_diff) {
			best = &clones[i];
			best_diff = diff;
		}
	}
	return best;
}

static int write_out(void *ctx, const void *buf, size_t len)
{
	return pio_write(*(const int *)ctx, buf, len);
}

static int send_all(struct fs *fs, const struct send_offline_args *a, struct fs_root *clones, int nclones)
{
	struct fs_send_opts o = { .version = a->version ? a->version : SS_MAX_VERSION,
				  .compressed = !!(a->flags & BTRFS_SEND_FLAG_COMPRESSED),
				  .no_data = !!(a->flags & BTRFS_SEND_FLAG_NO_FILE_DATA),
				  .write = write_out, .ctx = (void *)&a->out_fd };
	struct fs_root parent, root;
	char buf[300], name[4096];

	if (a->parent) {
		if (find_subvol(fs, a->parent, "parent subvolume", &parent))
			return 1;
		o.parent = &parent;
	}
	for (int i = 0; i < a->nsubvols; i++)
		if (find_subvol(fs, a->subvols[i], "subvolume", &root))
			return 1;
	for (int i = 0; i < a->nsubvols; i++) {
		size_t n = strlen(a->subvols[i]);

		find_subvol(fs, a->subvols[i], "subvolume", &root);
		/* named in the stream by its last path component */
		while (n > 1 && a->subvols[i][n - 1] == '/')
			n--;
		snprintf(name, sizeof(name), "%.*s", (int)n, a->subvols[i]);
		o.name = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		if (a->verbose >= 1)
			fprintf(stderr, "At subvol %s\n", a->subvols[i]);
		if (a->nclones && !a->parent && !(o.parent = good_parent(&root, clones, nclones))) {
			msg_error("parent determination failed for %llu", (unsigned long long)root.objectid);
			return 1;
		}
		o.clones = clones;
		o.nclones = nclones;
		o.no_header = a->end_semantic && i > 0;
		o.no_end = a->end_semantic && i < a->nsubvols - 1;
		if (fs_send(fs, &root, &o)) {
			msg_error("send of %s failed: %s", a->subvols[i], fs_error_format(&fs->err, buf, sizeof(buf)));
			return 1;
		}
		/* like the kernel path: each sent subvolume is a clone source for the next */
		if (a->nclones && !a->parent && nclones < MAX_ROOTS)
			clones[nclones++] = root;
	}
	return 0;
}

int send_offline(const struct send_offline_args *a)
{
	struct fs_root *clones = calloc(MAX_ROOTS, sizeof(*clones));
	struct fs_open_opts opts;
	struct fs_error err;
	char buf[300];
	struct fs *fs;
	int ret = 1, n = 0;

	fs_open_opts_init(&opts);
	opts.scan = 1;
	fs = clones ? fs_open((const char *const *)a->devices, a->ndev, &opts, &err) : NULL;
	if (!fs) {
		msg_error("cannot open %s: %s", a->devices[0], clones ? fs_error_format(&err, buf, sizeof(buf)) :
			  "out of memory");
		free(clones);
		return 1;
	}
	for (; n < a->nclones && n < MAX_ROOTS; n++)
		if (find_subvol(fs, a->clones[n], "cloned subvolume", &clones[n]))
			goto out;
	ret = send_all(fs, a, clones, n);
out:
	fs_close(fs);
	free(clones);
	return ret;
}
#endif
