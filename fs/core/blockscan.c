/* Tree blocks found by reading a device whole, for when the way to them is lost: a
 * chunk tree rebuilt from what the devices hold (repair), candidate roots (find-root).
 * A block is this filesystem's when its header names the filesystem's metadata fsid
 * and its checksum is right; its own header says where it belongs (bytenr, owner,
 * generation), the device and the physical offset say where it was found. */
#include "fs.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SCAN_WINDOW (1u << 20)          /* read at once: whole nodes, a multiple of 64 KiB */
#define SCAN_START (1ULL << 20)         /* the first MiB of a device holds no chunk */

static int is_our_block(struct fs *fs, const struct fs_device *d, const uint8_t *buf)
{
	const struct btrfs_header *h = (const struct btrfs_header *)buf;
	struct fs_block_ctx ctx = { fs->nodesize, fs->csum_type, NULL, get_le64(&h->bytenr), 0 };

	/* the fsid test first: it rules out nearly everything without a checksum */
	if (memcmp(h->fsid, fs->meta_uuid, BTRFS_FSID_SIZE) && memcmp(h->fsid, d->sb.dev_item.fsid, BTRFS_FSID_SIZE))
		return 0;
	return !fs_block_check(buf, &ctx, &FS_EXPECT_NONE, NULL);
}

int fs_scan_tree_blocks(struct fs *fs, struct fs_device *d, fs_scan_fn cb, void *ctx)
{
	uint64_t size = d->fd < 0 ? 0 : fs_fd_size(d->fd);
	uint8_t *buf = malloc(SCAN_WINDOW);
	int ret = 0;

	if (!buf)
		return fs_err(&fs->err, -ENOMEM, "out of memory for the device scan");
	if (d->sb.dev_item.total_bytes && get_le64(&d->sb.dev_item.total_bytes) < size)
		size = get_le64(&d->sb.dev_item.total_bytes);
	for (uint64_t at = SCAN_START; at + fs->nodesize <= size && !ret; at += SCAN_WINDOW) {
		size_t len = size - at < SCAN_WINDOW ? (size_t)(size - at) : SCAN_WINDOW;

		len -= len % fs->nodesize;
		if (fs_read_phys(d, at, buf, len)) {
			ret = fs_err(&fs->err, -EIO, "read error on %s at %llu", d->path, (unsigned long long)at);
			break;
		}
		for (size_t off = 0; off < len && !ret; off += fs->nodesize)
			if (is_our_block(fs, d, buf + off))
				ret = cb(ctx, d, at + off, buf + off);
	}
	free(buf);
	return ret;
}
