/* btrfs-map-logical: where the extents over a logical range lie on the devices, each
 * copy (and the bytes of one copy to a file), as btrfs-progs' tool of that name. */
//config:config APPLET_MAP_LOGICAL
//config:	bool "btrfs-map-logical"
//config:	default y
//config:	help
//config:	  btrfs-map-logical -l LOGICAL [-b BYTES] [-c COPY] [-o FILE] DEVICE:
//config:	  the device and physical offset of every copy of the extents over a
//config:	  logical range of an unmounted filesystem.
//cmd:APPLET_MAP_LOGICAL map_logical_main btrfs-map-logical|Map logical address on a device

#include "config.h"
#if CFG_APPLET_MAP_LOGICAL
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

USAGE(map_logical_usage) =
	"usage: btrfs-map-logical [options] device\n\n"
	"    Map logical address on a device\n\n"
	"    -l OFFSET    logical extent to map\n"
	"    -c COPY      copy of the extent to read (usually 1 or 2)\n"
	"    -o FILE      output file to hold the extent\n"
	"    -b BYTES     number of bytes to read\n";

/* An extent of the extent tree: the last one starting at or before logical (forward:
 * the first at or after it). 0 found, 1 none, <0 error. */
static int find_extent(struct fs *fs, uint64_t logical, int forward, uint64_t *start, uint64_t *len)
{
	struct fs_key k = { logical, forward ? 0 : UINT8_MAX, forward ? 0 : UINT64_MAX };
	struct fs_root er;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &er);

	fs_path_init(&p);
	if (!ret)
		ret = fs_search(fs, &er, &k, &p);
	if (!forward && ret >= 0 && p.levels)  /* from the item past the key, or the last one */
		ret = ret ? 0 : fs_prev(fs, &p);
	for (; ret == 0; ret = forward ? fs_next(fs, &p) : fs_prev(fs, &p)) {
		fs_path_key(&p, &k);
		if (k.type == BTRFS_EXTENT_ITEM_KEY || k.type == BTRFS_METADATA_ITEM_KEY) {
			*start = k.objectid;
			*len = k.type == BTRFS_METADATA_ITEM_KEY ? fs->nodesize : k.offset;
			break;
		}
	}
	fs_path_release(fs, &p);
	return ret;
}

/* "mirror N logical L physical P device D" for each piece of each copy of the range. */
static int print_mapping(struct fs *fs, FILE *info, uint64_t logical, uint64_t len)
{
	int copies = fs_num_copies(fs, logical);

	for (int m = 1; m <= copies; m++)
		for (uint64_t off = 0; off < len;) {
			struct fs_phys ph;

			if (fs_map(fs, logical + off, m, &ph)) {
				fprintf(info, "Error: fails to map mirror%d logical %llu: %s\n", m,
					(unsigned long long)logical, fs->err.msg);
				return -1;
			}
			fprintf(info, "mirror %d logical %llu physical %llu device %s\n", m,
				(unsigned long long)(logical + off), (unsigned long long)ph.physical,
				ph.dev ? ph.dev->path : "missing");
			off += ph.len < len - off ? ph.len : len - off;
		}
	return 0;
}

/* The bytes of the range from copy `copy` (0: the first that reads) to fd. */
static int write_range(struct fs *fs, int fd, uint64_t logical, uint64_t len, int copy)
{
	enum { CHUNK = 64 * 1024 };
	uint8_t *buf = malloc(CHUNK);
	int ret = buf ? 0 : -1;

	for (uint64_t off = 0; !ret && off < len;) {
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK;

		if (fs_read_logical(fs, logical + off, buf, n, copy)) {
			msg_error("failed to read extent at [%llu, %llu]: %s", (unsigned long long)logical,
				  (unsigned long long)(logical + len), fs->err.msg);
			ret = -1;
		} else if (write(fd, buf, n) != (ssize_t)n) {
			msg_error("output file write failed: %s", strerror(errno));
			ret = -1;
		}
		off += n;
	}
	free(buf);
	return ret;
}

/* Each extent over [logical, +bytes): its mapping, and its bytes to fd (-1: none). */
static int map_range(struct fs *fs, FILE *info, int fd, uint64_t logical, uint64_t bytes, int copy)
{
	uint64_t start = 0, len = 0, end = logical + bytes;
	int found = 0, ret = find_extent(fs, logical, 0, &start, &len);

	if (ret > 0 || (!ret && start + len <= logical))   /* none over logical: the next one */
		ret = find_extent(fs, logical, 1, &start, &len);
	if (ret) {
		msg_error("failed to find any extent at [%llu,%llu)", (unsigned long long)logical,
			  (unsigned long long)end);
		return 1;
	}
	while (start + len >= logical && start < end) {
		uint64_t from, to;

		found = 1;
		if (find_extent(fs, start, 1, &start, &len) || start + len < logical || start >= end)
			break;
		from = start > logical ? start : logical;
		to = start + len < end ? start + len : end;
		if (print_mapping(fs, info, from, to - from) || (fd >= 0 && write_range(fs, fd, from, to - from, copy)))
			return 1;
		start += len;
	}
	if (!found)
		msg_error("no extent found at range [%llu,%llu)", (unsigned long long)logical, (unsigned long long)end);
	return 0;
}

int map_logical_main(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t logical = 0, bytes = 0, copy = 0;
	struct fs_open_opts o;
	struct fs_error err;
	struct fs *fs;
	FILE *info = stdout;
	int c, fd = -1, ret;
	char buf[320];

	while ((c = cli_getopt_long(argc, argv, "l:c:o:b:", "logical:=l copy:=c output:=o bytes:=b",
				    map_logical_usage)) != -1) {
		if (c == 'o')
			out = optarg;
		else
			*(c == 'l' ? &logical : c == 'c' ? &copy : &bytes) = cli_arg_u64(optarg);
	}
	cli_check_argc(argc, 1, -1, map_logical_usage);
	if (!logical)
		cli_usage_error(map_logical_usage, NULL);
	if (bytes > UINT64_MAX - logical) {
		msg_error("range [%llu, +%llu) wraps around", (unsigned long long)logical, (unsigned long long)bytes);
		return 1;
	}
	fs_open_opts_init(&o);
	o.scan = 1;
	fs = fs_open((const char *const *)argv + optind, 1, &o, &err);
	if (!fs) {
		msg_error("open ctree failed: %s", fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	if (out && !strcmp(out, "-")) {
		fd = STDOUT_FILENO;
		info = stderr;
	} else if (out && (fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0) {
		msg_error("cannot open %s: %s", out, strerror(errno));
		fs_close(fs);
		return 1;
	}
	ret = map_range(fs, info, fd, logical, bytes ? bytes : fs->nodesize, (int)copy);
	if (fd > STDOUT_FILENO)
		close(fd);
	fs_close(fs);
	return ret;
}
#endif
