/* btrfs inspect-internal queries of a mounted filesystem through its ioctls: rootid,
 * inode-resolve, logical-resolve, subvolid-resolve, min-dev-size, list-chunks and
 * map-swapfile. */
//config:config INSPECT_MOUNTED
//config:	bool "btrfs inspect-internal rootid, *-resolve, min-dev-size, list-chunks, map-swapfile"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Subvolume ids and paths, inode and logical address to path
//config:	  resolution, the smallest size a device can shrink to, the chunks
//config:	  of every device and the resume offset of a swap file.
//cmd:INSPECT_MOUNTED rootid_main btrfs inspect-internal rootid|Get the subvolume id of a path
//cmd:INSPECT_MOUNTED inode_resolve_main btrfs inspect-internal inode-resolve|Get the paths of an inode
//cmd:INSPECT_MOUNTED logical_resolve_main btrfs inspect-internal logical-resolve|Get the paths of a logical address
//cmd:INSPECT_MOUNTED subvolid_resolve_main btrfs inspect-internal subvolid-resolve|Get the path of a subvolume ID
//cmd:INSPECT_MOUNTED min_dev_size_main btrfs inspect-internal min-dev-size|Get the smallest size a device can shrink to
//cmd:INSPECT_MOUNTED list_chunks_main btrfs inspect-internal list-chunks|Enumerate chunks on all devices
//cmd:INSPECT_MOUNTED map_swapfile_main btrfs inspect-internal map-swapfile|Print the physical and resume offset of a swapfile

#include "config.h"
#if CFG_INSPECT_MOUNTED
#include "fs/core/format.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/table.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/ioctl/subvol.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/sysfile.h"
#include "util/vec.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/fs.h>
#include <linux/magic.h>

/* ---- rootid, subvolid-resolve ---- */

USAGE(rootid_usage) = "usage: btrfs inspect-internal rootid <path>\n";

int rootid_main(int argc, char **argv)
{
	uint64_t id;
	int fd, ret;

	cli_no_options(argc, argv, 1, 1, rootid_usage);
	fd = btrfs_open_path(argv[optind], 0, 0);
	if (fd < 0)
		return 1;
	ret = subvol_id_of_fd(fd, &id);
	close(fd);
	if (ret) {
		errno = -ret;
		msg_error("failed to lookup root id: %m");
		return 1;
	}
	out_say("%llu\n", (unsigned long long)id);
	return 0;
}

USAGE(subvolid_usage) =
	"usage: btrfs inspect-internal subvolid-resolve <subvolid> <path>\n";

int subvolid_resolve_main(int argc, char **argv)
{
	uint64_t id;
	char *path;
	int fd, ret;

	cli_no_options(argc, argv, 2, 2, subvolid_usage);
	fd = btrfs_open_cmd_path(argc, argv, 2, 1, subvolid_usage);
	if (fd < 0)
		return 1;
	id = cli_arg_u64(argv[optind]);
	ret = subvol_path(fd, id, &path);
	close(fd);
	if (ret) {
		if (ret == -ENOENT)
			fprintf(stderr, "failed to lookup subvol_id %llu!\n", (unsigned long long)id);
		msg_error("resolving subvolid %llu error %d", (unsigned long long)id, ret);
		return 1;
	}
	out_say("%s\n", path);
	free(path);
	return 0;
}

/* ---- inode-resolve, logical-resolve ---- */

/* Prints "prepend/PATH" for every path of inode inum (BTRFS_IOC_INO_PATHS). 0 or 1. */
static int print_inode_paths(int fd, uint64_t inum, const char *prepend)
{
	union {
		struct btrfs_data_container c;
		char buf[PATH_MAX];
	} u;
	struct btrfs_ioctl_ino_path_args ipa = { .inum = inum, .size = sizeof(u) };

	memset(&u.c, 0, sizeof(u.c));
	ipa.fspath = (uintptr_t)&u;
	if (ioctl(fd, BTRFS_IOC_INO_PATHS, &ipa) < 0) {
		msg_error("ino paths ioctl: %m");
		return 1;
	}
	for (uint32_t i = 0; i < u.c.elem_cnt; i++) {
		uint64_t off = u.c.val[i];   /* from the start of val[], inside the buffer */

		if (off < sizeof(u) - offsetof(struct btrfs_data_container, val))
			out_say("%s/%.*s\n", prepend, (int)(sizeof(u) - offsetof(struct btrfs_data_container, val) - off),
				(const char *)u.c.val + off);
	}
	return 0;
}

USAGE(inode_usage) = "usage: btrfs inspect-internal inode-resolve [-v] <inode> <path>\n";

int inode_resolve_main(int argc, char **argv)
{
	int fd, ret;

	while (cli_getopt(argc, argv, "v", NULL, inode_usage) != -1)
		cli_be_verbose();
	fd = btrfs_open_cmd_path(argc, argv, 2, 1, inode_usage);
	if (fd < 0)
		return 1;
	ret = print_inode_paths(fd, cli_arg_u64(argv[optind]), argv[optind + 1]);
	close(fd);
	return ret;
}

struct subvol_mount { char subvol[PATH_MAX + 8], id[32]; char *found; };

/* "name=value" is one of the comma-separated mount options */
static int has_option(const char *opts, const char *want)
{
	size_t n = strlen(want);

	for (const char *o = opts; o; o = strchr(o, ','), o = o ? o + 1 : NULL)
		if (!strncmp(o, want, n) && (o[n] == ',' || !o[n]))
			return 1;
	return 0;
}

/* The mount of the subvolume: "subvol=/NAME" and "subvolid=ID" among its options. */
static int is_subvol_mount(const struct sys_mount *m, void *ctx)
{
	struct subvol_mount *s = ctx;

	return !strcmp(m->fstype, "btrfs") && has_option(m->options, s->subvol) &&
	       has_option(m->options, s->id) && (s->found = strdup(m->target));
}

USAGE(logical_usage) =
	"usage: btrfs inspect-internal logical-resolve [-Pvo] [-s bufsize] <logical> <path>\n\n"
	"    -P  print the inodes, not their paths   -o  ignore offsets\n"
	"    -s bufsize  size of the inode container (up to 16M)\n";

int logical_resolve_main(int argc, char **argv)
{
	struct btrfs_ioctl_logical_ino_args loi = { 0 };
	struct btrfs_data_container *inodes;
	uint64_t size = 65536;
	int c, fd, paths = 1, ret = 0;
	const char *path;

	while ((c = cli_getopt(argc, argv, "Pvos:", NULL, logical_usage)) != -1) {
		if (c == 'P')
			paths = 0;
		else if (c == 'v')
			cli_be_verbose();
		else if (c == 'o')
			loi.flags |= BTRFS_LOGICAL_INO_ARGS_IGNORE_OFFSET;
		else
			size = cli_arg_u64(optarg);
	}
	cli_check_argc(argc, 2, 2, logical_usage);
	size = size < (16 << 20) ? size : 16 << 20;
	if (size < sizeof(*inodes) || !(inodes = calloc(1, size)))
		return 1;
	path = argv[optind + 1];
	loi.logical = cli_arg_u64(argv[optind]);
	loi.size = size;
	loi.inodes = (uintptr_t)inodes;
	fd = btrfs_open_cmd_path(argc, argv, 2, 1, logical_usage);
	if (fd < 0) {
		free(inodes);
		return 1;
	}
	if (ioctl(fd, size > 65536 || loi.flags ? BTRFS_IOC_LOGICAL_INO_V2 : BTRFS_IOC_LOGICAL_INO,
		  &loi) < 0) {
		msg_error("logical ino ioctl: %m");
		ret = 1;
	}
	/* (inode, offset, root) triples */
	for (uint32_t i = 0; !ret && i + 2 < inodes->elem_cnt &&
	     (i + 3) * 8 <= size - sizeof(*inodes); i += 3) {
		uint64_t inum = inodes->val[i], root = inodes->val[i + 2];
		struct subvol_mount sm;
		char *name = NULL;

		if (!paths) {
			out_say("inode %llu offset %llu root %llu\n", (unsigned long long)inum,
				(unsigned long long)inodes->val[i + 1], (unsigned long long)root);
			continue;
		}
		if (subvol_path(fd, root, &name)) {
			ret = 1;
			break;
		}
		sm.found = NULL;
		if (!*name) {   /* the top level: the path given */
			ret = print_inode_paths(fd, inum, path);
		} else {
			/* another subvolume: where it is mounted itself */
			snprintf(sm.subvol, sizeof(sm.subvol), "subvol=/%s", name);
			snprintf(sm.id, sizeof(sm.id), "subvolid=%llu", (unsigned long long)root);
			sysfile_each_mount(is_subvol_mount, &sm);
			if (!sm.found) {
				printf("inode %llu subvol %s could not be accessed: not mounted\n",
				       (unsigned long long)inum, name);
			} else {
				int sfd = btrfs_open_path(sm.found, 1, 0);

				ret = sfd < 0 ? 1 : print_inode_paths(sfd, inum, sm.found);
				if (sfd >= 0)
					close(sfd);
				free(sm.found);
			}
		}
		free(name);
	}
	close(fd);
	free(inodes);
	return ret;
}

/* ---- the chunk tree ---- */

struct chunk {
	uint64_t logical, length, stripe_len, type, used;
	uint32_t num_stripes;
	uint64_t devid, offset;   /* of stripe s: one entry per stripe */
};

struct chunks {
	struct chunk *c;
	size_t n, room;
};

/* One struct chunk per stripe of each CHUNK_ITEM (key offset: the logical start). */
static int add_chunk(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	const struct btrfs_chunk *ci = item;
	struct chunks *cs = ctx;
	uint32_t n, s;

	if (sh->type != BTRFS_CHUNK_ITEM_KEY || sh->len < sizeof(*ci))
		return 0;
	n = get_le16(&ci->num_stripes);
	if (!n || sh->len < sizeof(*ci) + (n - 1) * sizeof(ci->stripe))
		return -EUCLEAN;
	for (s = 0; s < n; s++) {
		struct chunk *c = vec_push(&cs->c, &cs->n, &cs->room, sizeof(*c));

		if (!c)
			return -ENOMEM;
		*c = (struct chunk){ sh->offset, get_le64(&ci->length),
			get_le64(&ci->stripe_len), get_le64(&ci->type), 0, n,
			get_le64(&(&ci->stripe)[s].devid), get_le64(&(&ci->stripe)[s].offset) };
	}
	return 0;
}

static int read_chunks(int fd, struct chunks *cs)
{
	struct tree_key min = { BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, 0 };
	struct tree_key max = { BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, UINT64_MAX };

	cs->c = NULL;
	cs->n = cs->room = 0;
	return tree_search(fd, BTRFS_CHUNK_TREE_OBJECTID, &min, &max, add_chunk, cs);
}

/* ---- list-chunks ---- */

static int used_of(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	if (sh->type != BTRFS_BLOCK_GROUP_ITEM_KEY || sh->len < sizeof(struct btrfs_block_group_item))
		return 0;
	*(uint64_t *)ctx = get_le64(&((const struct btrfs_block_group_item *)item)->used);
	return 1;
}

struct listed { struct chunk c; uint64_t pnumber, lnumber; size_t idx; };

static const char *sort_keys;   /* "pLuUtp" letters of the --sort keys, upper: descending */

static int profile_rank(uint64_t type)
{
	static const uint64_t order[] = { BTRFS_BLOCK_GROUP_DUP, BTRFS_BLOCK_GROUP_RAID0,
		BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1C3, BTRFS_BLOCK_GROUP_RAID1C4,
		BTRFS_BLOCK_GROUP_RAID10, BTRFS_BLOCK_GROUP_RAID5, BTRFS_BLOCK_GROUP_RAID6 };
	int i;

	for (i = 0; i < 8 && !(type & order[i]); i++)
		;
	return i < 8 ? i + 1 : 0;
}

static int listed_cmp(const void *pa, const void *pb)
{
	const struct listed *a = pa, *b = pb;
	const char *k;
	int r = 0;

	for (k = sort_keys; *k && !r; k++) {
		switch (*k | 0x20) {
		case 'd': r = (a->c.devid > b->c.devid) - (a->c.devid < b->c.devid); break;
		case 'p': r = (a->c.offset > b->c.offset) - (a->c.offset < b->c.offset); break;
		case 'l': r = (a->c.logical > b->c.logical) - (a->c.logical < b->c.logical); break;
		case 'n': r = (a->c.length > b->c.length) - (a->c.length < b->c.length); break;
		case 'u': {
			float ua = (float)a->c.used / a->c.length, ub = (float)b->c.used / b->c.length;

			r = (ua > ub) - (ua < ub);
			break;
		}
		case 't': {   /* data, metadata, system */
			int ta = a->c.type & BTRFS_BLOCK_GROUP_DATA ? 0 : a->c.type & BTRFS_BLOCK_GROUP_METADATA ? 1 : 2;
			int tb = b->c.type & BTRFS_BLOCK_GROUP_DATA ? 0 : b->c.type & BTRFS_BLOCK_GROUP_METADATA ? 1 : 2;

			r = (ta > tb) - (ta < tb);
			break;
		}
		default: r = profile_rank(a->c.type) - profile_rank(b->c.type);
		}
		if (*k < 'a')
			r = -r;
	}
	return r ? r : (a->idx > b->idx) - (a->idx < b->idx);
}

/* --sort: "devid,-usage,..." as key letters (upper case for descending). 0 or -1. */
static int parse_chunk_sort(const char *arg, char *keys, size_t size)
{
	static const char names[][8] = { "devid", "pstart", "lstart", "usage", "length", "type", "profile" };
	static const char letters[] = "dplunto";
	size_t n = 0, len, i;

	while (*arg) {
		int desc = *arg == '-';

		arg += desc;
		len = strcspn(arg, ",");
		for (i = 0; i < 7 && (strlen(names[i]) != len || strncmp(arg, names[i], len)); i++)
			;
		if (i == 7 || n + 1 >= size) {
			msg_error("unknown sort key: %s", arg);
			return -1;
		}
		keys[n++] = desc ? letters[i] - 0x20 : letters[i];
		arg += len + !!arg[len];
	}
	keys[n] = 0;
	return 0;
}

USAGE(chunks_usage) =
	"usage: btrfs inspect-internal list-chunks [options] <path>\n\n"
	"    --sort [-]devid,pstart,lstart,usage,length,type,profile\n"
	CLI_UNITS;

int list_chunks_main(int argc, char **argv)
{
	static const char *const head[] = { "Devid", "PNumber", "Type/profile", "PStart", "Length",
		"PEnd", "LNumber", "LStart", "Usage%" };
	unsigned mode = units_parse_args(&argc, argv, 0);
	char user_keys[16] = "";
	struct chunks cs;
	struct listed *l;
	struct table t;
	size_t i, j;
	int fd, ret;

	while (cli_getopt_long(argc, argv, "", "sort:=S", chunks_usage) != -1)
		if (parse_chunk_sort(optarg, user_keys, sizeof(user_keys)))
			return 1;
	fd = btrfs_open_cmd_path(argc, argv, 1, 0, chunks_usage);
	if (fd < 0)
		return 1;
	ret = read_chunks(fd, &cs);
	l = calloc(cs.n + 1, sizeof(*l));
	if (ret || !l) {
		errno = ret ? -ret : ENOMEM;
		msg_error("cannot perform the search: %m");
		goto out;
	}
	for (i = 0; i < cs.n; i++) {
		/* the block group item: in the extent tree, or the block group tree */
		struct tree_key min = { cs.c[i].logical, BTRFS_BLOCK_GROUP_ITEM_KEY, 0 };
		struct tree_key max = { cs.c[i].logical, BTRFS_BLOCK_GROUP_ITEM_KEY, UINT64_MAX };

		l[i].c = cs.c[i];
		if (!i || cs.c[i].logical != cs.c[i - 1].logical) {
			if (tree_search(fd, BTRFS_EXTENT_TREE_OBJECTID, &min, &max, used_of, &l[i].c.used) != 1)
				tree_search(fd, BTRFS_BLOCK_GROUP_TREE_OBJECTID, &min, &max, used_of, &l[i].c.used);
		} else {
			l[i].c.used = l[i - 1].c.used;
		}
		for (j = 0; j < i; j++)   /* the chunks of the device in logical order */
			l[i].lnumber += l[j].c.devid == l[i].c.devid;
	}
	/* physical numbers after ordering by device and physical start */
	sort_keys = "dp";
	sort_stable(l, cs.n, sizeof(*l), listed_cmp);
	for (i = 0; i < cs.n; i++) {
		l[i].pnumber = i && l[i - 1].c.devid == l[i].c.devid ? l[i - 1].pnumber + 1 : 0;
		l[i].idx = i;
	}
	if (*user_keys) {
		sort_keys = user_keys;
		sort_stable(l, cs.n, sizeof(*l), listed_cmp);
	}
	if (table_init(&t, 9, (int)cs.n + 2))
		goto out;
	for (j = 0; j < 9; j++) {
		table_set(&t, (int)j, 0, ">%s", head[j]);
		table_set(&t, (int)j, 1, "*-");
	}
	for (i = 0; i < cs.n; i++) {
		const struct chunk *c = &l[i].c;
		uint64_t v[] = { c->devid, l[i].pnumber + 1, 0, c->offset, c->length,
				 c->offset + c->length, l[i].lnumber + 1, c->logical };
		int r = (int)i + 2;

		for (j = 0; j < 8; j++)   /* counts in columns 0, 1, 6; sizes in the others */
			if (j == 2)
				table_set(&t, 2, r, ">%10s/%-6s", btrfs_group_type_str(c->type),
					  btrfs_group_profile_str(c->type));
			else if (0x43 >> j & 1)
				table_set(&t, (int)j, r, ">%llu", (unsigned long long)v[j]);
			else
				table_set(&t, (int)j, r, ">%s", pretty_size(v[j], mode));
		table_set(&t, 8, r, ">%6.2f", (float)c->used / c->length * 100);
	}
	table_print(&t, 1);
	table_free(&t);
	ret = 0;
out:
	free(l);
	free(cs.c);
	close(fd);
	return ret != 0;
}

/* ---- min-dev-size ---- */

struct extents { uint64_t (*e)[2]; size_t n, room; };

static int add_dev_extent(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct extents *x = ctx;
	uint64_t *e;

	if (sh->type != BTRFS_DEV_EXTENT_KEY || sh->len < sizeof(struct btrfs_dev_extent))
		return 0;
	if (!(e = vec_push(&x->e, &x->n, &x->room, sizeof(*x->e))))
		return -ENOMEM;
	e[0] = sh->offset;
	e[1] = get_le64(&((const struct btrfs_dev_extent *)item)->length);
	return 0;
}

/* The smallest size the device can be shrunk to: 1MiB plus its extents; each extent
 * beyond that size must fit a hole below it (one that holds a superblock copy counts
 * its size twice), else the size ends after it; relocation needs room for the largest
 * moved extent and a new system chunk (32MiB). */
static uint64_t min_dev_size(struct extents *x)
{
	uint64_t min = 1 << 20, scratch = 0, holes[x->n + 1][2];
	size_t nholes = 0, i, h;

	for (i = 0; i < x->n; i++) {
		min += x->e[i][1];
		if (i && x->e[i - 1][0] + x->e[i - 1][1] != x->e[i][0]) {
			holes[nholes][0] = x->e[i - 1][0] + x->e[i - 1][1];
			holes[nholes][1] = x->e[i][0] - holes[nholes][0];
			nholes++;
		}
	}
	for (i = x->n; i-- > 0;) {
		uint64_t start = x->e[i][0], len = x->e[i][1];

		if (start + len - 1 <= min)
			break;
		for (h = 0; h < nholes && holes[h][1] < len; h++)
			;
		if (h == nholes) {
			min = start + len;
			break;
		}
		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
			uint64_t sb = btrfs_super_offset(m);

			if (sb >= holes[h][0] && sb <= holes[h][0] + len - 1) {
				min += len;
				break;
			}
		}
		holes[h][0] += len;
		holes[h][1] -= len;
		if (len > scratch)
			scratch = len;
	}
	return scratch ? min + scratch + (32 << 20) : min;
}

USAGE(min_size_usage) =
	"usage: btrfs inspect-internal min-dev-size [--id DEVID] <path>\n";

int min_dev_size_main(int argc, char **argv)
{
	struct extents x = { 0 };
	uint64_t devid = 1, min;
	int fd, ret;

	while (cli_getopt_long(argc, argv, "", "id:=i", min_size_usage) != -1)
		devid = cli_arg_u64(optarg);
	fd = btrfs_open_cmd_path(argc, argv, 1, 1, min_size_usage);
	if (fd < 0)
		return 1;
	{
		struct tree_key lo = { devid, BTRFS_DEV_EXTENT_KEY, 0 };
		struct tree_key hi = { devid, BTRFS_DEV_EXTENT_KEY, UINT64_MAX };

		ret = tree_search(fd, BTRFS_DEV_TREE_OBJECTID, &lo, &hi, add_dev_extent, &x);
	}
	close(fd);
	if (ret) {
		errno = -ret;
		msg_error("tree search ioctl: %m");
	} else {
		min = min_dev_size(&x);
		out_say("%llu bytes (%s)\n", (unsigned long long)min, pretty_size(min, UNITS_DEFAULT));
	}
	free(x.e);
	return ret != 0;
}

/* ---- map-swapfile ---- */

struct swap_map {
	const struct chunks *cs;
	uint64_t physical, devid;
	int err;
};

/* Checks one EXTENT_DATA item of the swap file as the kernel would (regular or
 * preallocated, no holes, no compression or encoding, single profile, one device)
 * and maps the first one. 0, or 1 to stop after an error (reported). */
static int swap_extent(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	const struct btrfs_file_extent_item *fi = item;
	struct swap_map *m = ctx;
	const struct chunk *c = NULL;
	uint64_t logical;
	size_t i;

	if (sh->type != BTRFS_EXTENT_DATA_KEY)
		return 0;
	m->err = 1;
	if (sh->len <= offsetof(struct btrfs_file_extent_item, type))
		return 1;
	if (fi->type != BTRFS_FILE_EXTENT_REG && fi->type != BTRFS_FILE_EXTENT_PREALLOC) {
		if (fi->type == BTRFS_FILE_EXTENT_INLINE)
			msg_error("file with inline extent");
		else
			msg_error("unknown extent type: %u", fi->type);
		return 1;
	}
	if (sh->len < sizeof(*fi))
		return 1;
	logical = get_le64(&fi->disk_bytenr);
	if (!logical) {
		msg_error("file with holes");
		return 1;
	}
	for (i = 0; i < m->cs->n && !c; i++)
		if (logical >= m->cs->c[i].logical && logical - m->cs->c[i].logical < m->cs->c[i].length)
			c = &m->cs->c[i];
	if (!c) {
		msg_error("cannot find chunk containing %llu", (unsigned long long)logical);
		return 1;
	}
	if (fi->compression || fi->encryption || get_le16(&fi->other_encoding)) {
		msg_error(fi->compression ? "compressed extent: %u" : fi->encryption ?
			  "file with encryption: %u" : "file with other_encoding: %u",
			  fi->compression ? fi->compression : fi->encryption ? fi->encryption :
			  get_le16(&fi->other_encoding));
		return 1;
	}
	if (c->type & BTRFS_BLOCK_GROUP_PROFILE_MASK) {
		msg_error("unsupported block group profile: %llu",
			  (unsigned long long)(c->type & BTRFS_BLOCK_GROUP_PROFILE_MASK));
		return 1;
	}
	m->err = 0;
	if (m->physical == UINT64_MAX) {
		m->physical = c->offset + (logical - c->logical);   /* single: one stripe */
		m->devid = c->devid;
	} else if (m->devid != c->devid) {
		msg_error("file stored on multiple devices");   /* reported, the map still shown */
		return 1;
	}
	return 0;
}

USAGE(swap_usage) =
	"usage: btrfs inspect-internal map-swapfile [-r|--resume-offset] <file>\n";

int map_swapfile_main(int argc, char **argv)
{
	struct swap_map m = { .physical = UINT64_MAX };
	struct chunks cs = { 0 };
	struct statfs sfs;
	struct stat st;
	uint64_t tree;
	long page = getpagesize();
	int fd, flags = 0, resume = 0, ret = 1;

	while (cli_getopt_long(argc, argv, "r", "resume-offset=r", swap_usage) != -1)
		resume = 1;
	cli_check_argc(argc, 1, 1, swap_usage);
	fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		msg_error("cannot open %s: %m", argv[optind]);
		return 1;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != BTRFS_SUPER_MAGIC)
		msg_error("not a file on BTRFS");
	else if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		msg_error("cannot verify file flags/attributes: %m");
	else if (!(flags & FS_NOCOW_FL))
		msg_error("file is not NOCOW");
	else if (flags & FS_COMPR_FL)
		msg_error("file with COMP attribute");
	else if (read_chunks(fd, &cs))
		fprintf(stderr, "BTRFS_IOC_TREE_SEARCH: %s\n", strerror(errno));
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		msg_error("not a regular file");
	else if (subvol_id_of_fd(fd, &tree))
		msg_error("cannot lookup parent subvolume: %m");
	else {
		struct tree_key min = { st.st_ino, BTRFS_EXTENT_DATA_KEY, 0 };
		struct tree_key max = { st.st_ino, BTRFS_EXTENT_DATA_KEY, UINT64_MAX };

		m.cs = &cs;
		if (tree_search(fd, tree, &min, &max, swap_extent, &m) < 0)
			msg_error("cannot search tree: %m");
		else if (!m.err) {
			ret = 0;
			if (resume)
				printf("%llu\n", (unsigned long long)(m.physical / page));
			else
				out_say("Physical start: %12llu\nResume offset:  %12llu\n",
					(unsigned long long)m.physical, (unsigned long long)(m.physical / page));
		}
	}
	free(cs.c);
	close(fd);
	return ret;
}
#endif
