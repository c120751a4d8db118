/* Subvolume lookups through BTRFS_IOC_TREE_SEARCH and BTRFS_IOC_INO_LOOKUP. */
#include "subvol_lookup.h"
#include "le.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>

int subvol_root_id(int fd, uint64_t *root_id)
{
	struct btrfs_ioctl_ino_lookup_args args;

	memset(&args, 0, sizeof(args));
	args.objectid = BTRFS_FIRST_FREE_OBJECTID;
	if (ioctl(fd, BTRFS_IOC_INO_LOOKUP, &args) < 0)
		return -errno;
	*root_id = args.treeid;
	return 0;
}

int subvol_is_root_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) && st.st_ino == BTRFS_FIRST_FREE_OBJECTID;
}

/* Visits the items of one (objectid, type) in a tree, offsets in [min_off, max_off].
 * visit returns 0 to go on, > 0 to stop (returned), < 0 on error (returned). */
static int search_items(int fd, uint64_t tree, uint64_t objectid, uint32_t type,
			uint64_t min_off, uint64_t max_off,
			int (*visit)(void *ctx, uint64_t offset, const uint8_t *data, uint32_t len),
			void *ctx)
{
	struct btrfs_ioctl_search_args args;
	struct btrfs_ioctl_search_key *sk = &args.key;

	memset(&args, 0, sizeof(args));
	sk->tree_id = tree;
	sk->min_objectid = sk->max_objectid = objectid;
	sk->min_type = sk->max_type = type;
	sk->min_offset = min_off;
	sk->max_offset = max_off;
	sk->max_transid = (uint64_t)-1;
	for (;;) {
		size_t pos = 0;
		uint32_t i;

		sk->nr_items = 4096;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH, &args) < 0)
			return -errno;
		if (sk->nr_items == 0)
			return 0;
		for (i = 0; i < sk->nr_items; i++) {
			struct btrfs_ioctl_search_header sh;
			int ret;

			if (pos + sizeof(sh) > sizeof(args.buf))
				return -EIO;
			memcpy(&sh, args.buf + pos, sizeof(sh));
			pos += sizeof(sh);
			if (sh.len > sizeof(args.buf) - pos)
				return -EIO;
			if (sh.objectid == objectid && sh.type == type &&
			    sh.offset >= min_off && sh.offset <= max_off) {
				ret = visit(ctx, sh.offset, (const uint8_t *)args.buf + pos, sh.len);
				if (ret)
					return ret;
			}
			pos += sh.len;
			sk->min_offset = sh.offset;
		}
		if (sk->min_offset >= max_off)
			return 0;
		sk->min_offset++;
	}
}

static int take_root_item(void *ctx, uint64_t offset, const uint8_t *data, uint32_t len)
{
	struct subvol_item *out = ctx;
	const struct btrfs_root_item *ri = (const void *)data;

	(void)offset;
	if (len < offsetof(struct btrfs_root_item, generation_v2))
		return -EIO;
	out->flags = get_le64(&ri->flags);
	if (len >= offsetof(struct btrfs_root_item, otransid)) {
		memcpy(out->uuid, ri->uuid, 16);
		memcpy(out->parent_uuid, ri->parent_uuid, 16);
		memcpy(out->received_uuid, ri->received_uuid, 16);
		out->ctransid = get_le64(&ri->ctransid);
	}
	if (len >= offsetof(struct btrfs_root_item, rtransid))
		out->stransid = get_le64(&ri->stransid);
	return 1;
}

int subvol_get_item(int fd, uint64_t root_id, struct subvol_item *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	out->root_id = root_id;
	ret = search_items(fd, BTRFS_ROOT_TREE_OBJECTID, root_id, BTRFS_ROOT_ITEM_KEY,
			   0, (uint64_t)-1, take_root_item, out);
	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

struct id_list { uint64_t *ids; int n, max; };

static int take_ids(void *ctx, uint64_t offset, const uint8_t *data, uint32_t len)
{
	struct id_list *l = ctx;
	uint32_t i;

	(void)offset;
	for (i = 0; i + 8 <= len && l->n < l->max; i += 8)
		l->ids[l->n++] = get_le64(data + i);
	return 0;
}

int subvol_find_uuid(int fd, const uint8_t uuid[16], int received, uint64_t *ids, int max)
{
	struct id_list l = { ids, 0, max };
	uint64_t off = get_le64(uuid + 8);
	int ret;

	/* UUID tree key: (le64 of uuid bytes 0-7, type, le64 of uuid bytes 8-15) */
	ret = search_items(fd, BTRFS_UUID_TREE_OBJECTID, get_le64(uuid),
			   received ? BTRFS_UUID_KEY_RECEIVED_SUBVOL : BTRFS_UUID_KEY_SUBVOL,
			   off, off, take_ids, &l);
	return ret < 0 ? ret : l.n;
}

struct backref { uint64_t parent, dirid; char name[256]; int found; };

static int take_backref(void *ctx, uint64_t offset, const uint8_t *data, uint32_t len)
{
	struct backref *b = ctx;
	const struct btrfs_root_ref *ref = (const void *)data;
	uint16_t nlen;

	if (len < sizeof(*ref))
		return -EIO;
	nlen = get_le16(&ref->name_len);
	if (nlen == 0 || nlen > 255 || sizeof(*ref) + nlen > len)
		return -EIO;
	b->parent = offset;
	b->dirid = get_le64(&ref->dirid);
	memcpy(b->name, data + sizeof(*ref), nlen);
	b->name[nlen] = 0;
	b->found = 1;
	return 1;
}

/* Prepends s to the path held at the end of out (tail marks where it starts). */
static int prepend(char *out, size_t *tail, const char *s)
{
	size_t n = strlen(s);

	if (n >= *tail)
		return -ENAMETOOLONG;
	*tail -= n;
	memcpy(out + *tail, s, n);
	return 0;
}

int subvol_path(int fd, uint64_t root_id, char *out, size_t outlen)
{
	size_t tail = outlen - 1;
	int depth;

	out[tail] = 0;
	for (depth = 0; root_id != BTRFS_FS_TREE_OBJECTID; depth++) {
		struct btrfs_ioctl_ino_lookup_args il;
		struct backref b = { 0 };
		int ret;

		if (depth > 1000)
			return -ELOOP;
		ret = search_items(fd, BTRFS_ROOT_TREE_OBJECTID, root_id, BTRFS_ROOT_BACKREF_KEY,
				   0, (uint64_t)-1, take_backref, &b);
		if (ret < 0)
			return ret;
		if (!b.found)
			return -ENOENT;
		memset(&il, 0, sizeof(il));
		il.treeid = b.parent;
		il.objectid = b.dirid;
		if (ioctl(fd, BTRFS_IOC_INO_LOOKUP, &il) < 0)
			return -errno;
		il.name[sizeof(il.name) - 1] = 0;
		/* INO_LOOKUP gives the directory's path in its subvolume with a trailing '/' */
		if (prepend(out, &tail, b.name) || prepend(out, &tail, il.name))
			return -ENAMETOOLONG;
		root_id = b.parent;
		if (root_id != BTRFS_FS_TREE_OBJECTID && prepend(out, &tail, "/"))
			return -ENAMETOOLONG;
	}
	memmove(out, out + tail, outlen - tail);
	return 0;
}
