/* btrfs filesystem df|show|label|sync|defragment|resize (usage: fs_usage.c).
 * Mounted filesystems are asked through ioctls (util/btrfs_ioctl.h); unmounted
 * devices and images through their superblocks. Output as btrfs-progs 6.2. */
//config:config APPLET_FILESYSTEM
//config:	bool "btrfs filesystem (df, show, usage, label, defragment, sync, resize)"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Space usage, structure and label of a filesystem, defragmentation,
//config:	  sync and online resize.
//cmd:APPLET_FILESYSTEM fs_df_main btrfs filesystem df|Show space usage information for a mount point
//cmd:APPLET_FILESYSTEM fs_show_main btrfs filesystem show|Show the structure of a filesystem
//cmd:APPLET_FILESYSTEM fs_label_main btrfs filesystem label|Get or change the label of a filesystem
//cmd:APPLET_FILESYSTEM fs_sync_main btrfs filesystem sync|Force a sync on a filesystem
//cmd:APPLET_FILESYSTEM fs_defrag_main btrfs filesystem defragment|Defragment a file or a directory
//cmd:APPLET_FILESYSTEM fs_resize_main btrfs filesystem resize|Resize a filesystem
#include "config.h"
#if CFG_APPLET_FILESYSTEM
#include "btrfs_ioctl.h"
#include "applets.h"
#include "cli.h"
#include "fs.h"
#include "le.h"
#include "output.h"
#include "super_label.h"
#include "sysfile.h"
#include "units.h"
#include "uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNITS_HELP \
	"  -b|--raw           raw numbers in bytes\n" \
	"  -h|--human-readable  human friendly numbers, base 1024 (default)\n" \
	"  -H                 human friendly numbers, base 1000\n" \
	"  --iec / --si       use 1024 / 1000 as the base\n" \
	"  -k|--kbytes -m|--mbytes -g|--gbytes -t|--tbytes  show sizes in that unit\n"

/* ---- df ------------------------------------------------------------------ */

static const char df_usage[] =
	"usage: btrfs filesystem df [options] <path>\n"
	"Show how much space each block group type takes on a mounted filesystem.\n\n"
	UNITS_HELP;

/* Zoned filesystems report unusable zone space in sysfs; 0 and *val set when so. */
static int zone_unusable(int fd, uint64_t flags, uint64_t *val)
{
	char name[64], buf[32];
	const char *kind = (flags & BTRFS_BLOCK_GROUP_DATA) ? "data" :
			   (flags & BTRFS_BLOCK_GROUP_METADATA) ? "metadata" :
			   (flags & BTRFS_BLOCK_GROUP_SYSTEM) ? "system" : NULL;

	if (!kind || btrfs_sysfs_read(fd, "features/zoned", buf, sizeof(buf)))
		return -1;
	snprintf(name, sizeof(name), "allocation/%s/bytes_zone_unusable", kind);
	if (btrfs_sysfs_read(fd, name, buf, sizeof(buf)))
		return -1;
	*val = strtoull(buf, NULL, 10);
	return 0;
}

static void df_text(int fd, const struct btrfs_ioctl_space_args *sa, unsigned mode)
{
	uint64_t i, zu;

	for (i = 0; i < sa->total_spaces; i++) {
		const struct btrfs_ioctl_space_info *s = &sa->spaces[i];

		printf("%s, %s: total=%s, used=%s", btrfs_group_type_str(s->flags),
		       btrfs_group_profile_str(s->flags), pretty_size(s->total_bytes, mode),
		       pretty_size(s->used_bytes, mode));
		if (!zone_unusable(fd, s->flags, &zu))
			printf(", zone_unusable=%s", pretty_size(zu, mode));
		putchar('\n');
	}
}

static void df_json(int fd, const struct btrfs_ioctl_space_args *sa)
{
	struct out o;
	uint64_t i, zu;

	out_start(&o, 0, 0);
	out_group_begin(&o, "filesystem-df", OUT_LIST);
	for (i = 0; i < sa->total_spaces; i++) {
		const struct btrfs_ioctl_space_info *s = &sa->spaces[i];

		out_group_begin(&o, NULL, OUT_MAP);
		out_str(&o, NULL, "bg-type", btrfs_group_type_str(s->flags));
		out_str(&o, NULL, "bg-profile", btrfs_group_profile_str(s->flags));
		out_u64(&o, NULL, "total", s->total_bytes);
		out_u64(&o, NULL, "used", s->used_bytes);
		if (!zone_unusable(fd, s->flags, &zu))
			out_u64(&o, NULL, "zone_unusable", zu);
		out_group_end(&o);
	}
	out_group_end(&o);
	out_end(&o);
}

int fs_df_main(int argc, char **argv)
{
	unsigned mode = units_parse_args(&argc, argv, 1);
	struct btrfs_ioctl_space_args *sa;
	int fd, ret;

	cli_no_options(argc, argv, 1, 1, df_usage);
	fd = btrfs_open_path(argv[optind], 1, 0);
	if (fd < 0)
		return 1;
	ret = btrfs_space_info(fd, &sa);
	if (ret) {
		errno = -ret;
		msg_error("cannot get space info of %s: %m", argv[optind]);
		close(fd);
		return 1;
	}
	if (out_json())
		df_json(fd, sa);
	else
		df_text(fd, sa, mode);
	btrfs_warn_multiple_profiles(fd);
	free(sa);
	close(fd);
	return 0;
}

/* ---- show ---------------------------------------------------------------- */

static const char show_usage[] =
	"usage: btrfs filesystem show [options] [<path>|<uuid>|<device>|<label>]\n"
	"Show the devices of mounted and unmounted filesystems (all of them without an\n"
	"argument).\n\n"
	"  -d|--all-devices   only scan the block devices, not the mounted filesystems\n"
	"  -m|--mounted       only the mounted filesystems\n"
	"  --raw --human-readable --iec --si --kbytes --mbytes --gbytes --tbytes\n"
	"                     units of the sizes\n";

/* Filesystems already printed (one mounted twice is shown once). */
struct seen {
	uint8_t (*fsid)[BTRFS_FSID_SIZE];
	int n;
};

static int seen_test_add(struct seen *s, const uint8_t *fsid)
{
	int i;
	void *p;

	for (i = 0; i < s->n; i++)
		if (!memcmp(s->fsid[i], fsid, BTRFS_FSID_SIZE))
			return 1;
	p = realloc(s->fsid, (s->n + 1) * sizeof(*s->fsid));
	if (p) {
		s->fsid = p;
		memcpy(s->fsid[s->n++], fsid, BTRFS_FSID_SIZE);
	}
	return 0;
}

/* A search matches a UUID by prefix, a label or a path exactly (btrfs-progs rules). */
static int uuid_prefix_match(const uint8_t *fsid, const char *search)
{
	char u[UUID_STR_LEN];

	uuid_unparse(fsid, u);
	return !strncmp(u, search, strnlen(search, UUID_STR_LEN));
}

static void show_header(struct out *o, const char *label, const uint8_t *fsid,
			uint64_t ndevs, uint64_t used, unsigned mode)
{
	char u[UUID_STR_LEN];

	uuid_unparse(fsid, u);
	if (o->json) {
		out_str(o, NULL, "label", label);
		out_str(o, NULL, "uuid", u);
		out_u64(o, NULL, "total-devices", ndevs);
		out_u64(o, NULL, "fs-bytes-used", used);
		out_group_begin(o, "devices", OUT_LIST);
		return;
	}
	if (label[0])
		printf("Label: '%s' ", label);
	else
		printf("Label: none ");
	printf(" uuid: %s\n\tTotal devices %llu FS bytes used %s\n", u,
	       (unsigned long long)ndevs, pretty_size(used, mode));
}

static void show_device(struct out *o, uint64_t devid, uint64_t size, uint64_t used,
			const char *path, int missing, unsigned mode)
{
	if (o->json) {
		out_group_begin(o, NULL, OUT_MAP);
		out_u64(o, NULL, "devid", devid);
		out_u64(o, NULL, "size", size);
		out_u64(o, NULL, "used", used);
		out_str(o, NULL, "path", path);
		if (missing)
			out_str(o, NULL, "missing", "yes");
		out_group_end(o);
		return;
	}
	if (missing)
		printf("\tdevid %4llu size 0 used 0 path %s MISSING\n", (unsigned long long)devid, path);
	else
		printf("\tdevid %4llu size %s used %s path %s\n", (unsigned long long)devid,
		       pretty_size(size, mode), pretty_size(used, mode), path);
}

static void show_footer(struct out *o, int some_missing)
{
	if (o->json) {
		out_group_end(o);
		return;
	}
	if (some_missing)
		printf("\t*** Some devices missing\n");
	putchar('\n');
}

/* Prints one mounted filesystem; 1 when printed, 0 when it does not match or was
 * seen, -1 on error. */
static int show_one_mounted(struct out *o, const char *mnt, const char *search,
			    struct seen *seen, unsigned mode)
{
	struct btrfs_ioctl_fs_info_args fi;
	struct btrfs_ioctl_dev_info_args *devs = NULL;
	struct btrfs_ioctl_space_args *sa = NULL;
	char label[BTRFS_LABEL_SIZE] = "";
	uint64_t used = 0, i;
	int fd, n, ret = 0;

	fd = btrfs_open_path(mnt, 0, 1);
	if (fd < 0)
		return 0;
	if (btrfs_dev_infos(fd, &fi, &devs, &n) || btrfs_get_label_fd(fd, label) ||
	    btrfs_space_info(fd, &sa))
		goto out;
	if (search && !uuid_prefix_match(fi.fsid, search) && strcmp(label, search) &&
	    strcmp(mnt, search))
		goto out;
	if (seen_test_add(seen, fi.fsid))
		goto out;
	for (i = 0; i < sa->total_spaces; i++)
		used += sa->spaces[i].used_bytes;
	out_group_begin(o, NULL, OUT_MAP);
	show_header(o, label, fi.fsid, fi.num_devices, used, mode);
	for (i = 0; i < (uint64_t)n; i++) {
		const char *p = (const char *)devs[i].path;
		char *canon = realpath(p, NULL);
		int fdd = open(p, O_RDONLY | O_CLOEXEC);

		if (fdd >= 0)
			close(fdd);
		show_device(o, devs[i].devid, devs[i].total_bytes, devs[i].bytes_used,
			    canon && fdd >= 0 ? canon : p, fdd < 0, mode);
		free(canon);
	}
	show_footer(o, 0);
	out_group_end(o);
	ret = 1;
out:
	free(devs);
	free(sa);
	close(fd);
	return ret;
}

struct mounted_show {
	struct out *o;
	const char *search;
	struct seen *seen;
	unsigned mode;
	int found;
};

static int show_mount_entry(const struct sys_mount *m, void *ctx)
{
	struct mounted_show *s = ctx;

	if (!strcmp(m->fstype, "btrfs") &&
	    show_one_mounted(s->o, m->target, s->search, s->seen, s->mode) > 0)
		s->found = 1;
	return 0;
}

static int show_mounted(struct out *o, const char *search, struct seen *seen, unsigned mode)
{
	struct mounted_show s = { o, search, seen, mode, 0 };

	sysfile_each_mount(show_mount_entry, &s);
	return s.found;
}

/* A device or image whose primary superblock was read. */
struct sbdev {
	char path[PATH_MAX];
	struct btrfs_super_block sb;
};

struct sbdevs {
	struct sbdev *d;
	int n;
};

static void sbdevs_add(struct sbdevs *v, const char *path)
{
	struct btrfs_super_block sb;
	void *p;
	int i;

	if (fs_super_read(path, 0, &sb, NULL))
		return;
	for (i = 0; i < v->n; i++) /* the same device under two names */
		if (!memcmp(v->d[i].sb.fsid, sb.fsid, BTRFS_FSID_SIZE) &&
		    !memcmp(v->d[i].sb.dev_item.uuid, sb.dev_item.uuid, BTRFS_UUID_SIZE))
			return;
	p = realloc(v->d, (v->n + 1) * sizeof(*v->d));
	if (!p)
		return;
	v->d = p;
	snprintf(v->d[v->n].path, sizeof(v->d[v->n].path), "%s", path);
	v->d[v->n++].sb = sb;
}

static int add_block_device(const char *path, void *v)
{
	sbdevs_add(v, path);
	return 0;
}

static int devid_cmp(const void *a, const void *b)
{
	uint64_t x = get_le64(&(*(const struct sbdev *const *)a)->sb.dev_item.devid);
	uint64_t y = get_le64(&(*(const struct sbdev *const *)b)->sb.dev_item.devid);

	return x < y ? -1 : x > y;
}

/* Prints the unmounted filesystem that device i belongs to (with all its devices
 * found) unless it was seen. */
static void show_unmounted_fs(struct out *o, struct sbdevs *v, int i, struct seen *seen,
			      unsigned mode)
{
	const struct btrfs_super_block *sb = &v->d[i].sb;
	struct sbdev **mine = calloc(v->n, sizeof(*mine));
	char label[BTRFS_LABEL_SIZE];
	int j, n = 0;

	if (!mine || seen_test_add(seen, sb->fsid)) {
		free(mine);
		return;
	}
	for (j = 0; j < v->n; j++)
		if (!memcmp(v->d[j].sb.fsid, sb->fsid, BTRFS_FSID_SIZE))
			mine[n++] = &v->d[j];
	qsort(mine, n, sizeof(*mine), devid_cmp);
	snprintf(label, sizeof(label), "%.*s", BTRFS_LABEL_SIZE - 1, sb->label);
	out_group_begin(o, NULL, OUT_MAP);
	show_header(o, label, sb->fsid, get_le64(&sb->num_devices), get_le64(&sb->bytes_used), mode);
	for (j = 0; j < n; j++)
		show_device(o, get_le64(&mine[j]->sb.dev_item.devid),
			    get_le64(&mine[j]->sb.dev_item.total_bytes),
			    get_le64(&mine[j]->sb.dev_item.bytes_used), mine[j]->path, 0, mode);
	show_footer(o, (uint64_t)n < get_le64(&sb->num_devices));
	out_group_end(o);
	free(mine);
}

/* Does device d match the search (UUID prefix, label, or its path)? */
static int sbdev_matches(const struct sbdev *d, const char *search)
{
	char label[BTRFS_LABEL_SIZE];

	snprintf(label, sizeof(label), "%.*s", BTRFS_LABEL_SIZE - 1, d->sb.label);
	return uuid_prefix_match(d->sb.fsid, search) || (label[0] && !strcmp(label, search)) ||
	       !strcmp(d->path, search);
}

/* Unmounted filesystems of the block devices and of the image file given. */
static int show_unmounted(struct out *o, const char *search, const char *image,
			  struct seen *seen, unsigned mode)
{
	struct sbdevs v = { 0 };
	int i, found = 0;

	if (image)  /* first, so it names its device even when a loop device shows it too */
		sbdevs_add(&v, image);
	btrfs_each_block_device(add_block_device, &v); /* and the other devices */
	for (i = 0; i < v.n; i++) {
		if (search && !sbdev_matches(&v.d[i], search))
			continue;
		found = 1;
		show_unmounted_fs(o, &v, i, seen, mode);
	}
	free(v.d);
	return found;
}

int fs_show_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all-devices", no_argument, NULL, 'd' },
		{ "mounted", no_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned mode = units_parse_args(&argc, argv, 0);
	int c, devices_only = 0, mounted_only = 0, found = 0, ret = 0;
	char real[PATH_MAX], mnt[PATH_MAX], uuidbuf[UUID_STR_LEN];
	const char *search = NULL, *image = NULL;
	struct seen seen = { 0 };
	struct stat st;
	struct out o;

	while ((c = cli_getopt(argc, argv, "dm", longopts, show_usage)) != -1) {
		if (c == 'd')
			devices_only = 1, mounted_only = 0;
		else
			mounted_only = 1, devices_only = 0;
	}
	cli_check_argc(argc, 0, 1, show_usage);
	if (optind < argc) {
		search = argv[optind];
		if (!*search)
			cli_usage_error(show_usage, NULL);
		if (realpath(search, real))
			search = real;
		if (!stat(search, &st) && S_ISREG(st.st_mode))
			image = search;
		if (!stat(search, &st) && S_ISBLK(st.st_mode) && !devices_only) {
			if (!btrfs_mount_of_device(search, mnt, sizeof(mnt))) {
				search = mnt;
			} else {
				struct btrfs_super_block sb;

				if (fs_super_read(search, 0, &sb, NULL)) {
					msg_error("no btrfs on %s", search);
					return 1;
				}
				uuid_unparse(sb.fsid, uuidbuf);
				search = uuidbuf;
				devices_only = 1;
			}
		}
	}
	out_start(&o, 0, 0);
	out_group_begin(&o, "filesystem-show", OUT_LIST);
	if (!devices_only)
		found = show_mounted(&o, search, &seen, mode);
	if (!(search && found) && !mounted_only) {
		found = show_unmounted(&o, search, image, &seen, mode);
		if (search && !found) {
			msg_error("not a valid btrfs filesystem: %s", search);
			ret = 1;
		}
	}
	out_group_end(&o);
	out_end(&o);
	free(seen.fsid);
	return ret;
}

/* ---- label --------------------------------------------------------------- */

static const char label_usage[] =
	"usage: btrfs filesystem label [<device>|<mount_point>] [<newlabel>]\n"
	"Print the label of a filesystem, or set it to <newlabel>. A device or image file\n"
	"must not be mounted; a mounted filesystem is named by its mount point.\n";

/* Why a device has no usable superblock: none at all, or a read error. */
static void no_btrfs_error(const char *path, int ret)
{
	if (ret == -EUCLEAN || ret == -ENOENT || ret == -EIO) {
		fprintf(stderr, "No valid Btrfs found on %s\n", path);   /* btrfs-progs' words */
		return;
	}
	errno = -ret;
	msg_error("cannot read the superblock of %s: %m", path);
}

static int set_label_reporting(const char *path, const char *label)
{
	int ret = fs_super_set_label(path, label);

	if (ret == -EUCLEAN || ret == -ENOENT)
		no_btrfs_error(path, ret);
	else if (ret) {
		errno = -ret;
		msg_error("cannot set the label of %s: %m", path);
	}
	return ret ? 1 : 0;
}

/* Every device of a filesystem carries the label: the other devices of a multi-device
 * one (block devices with the same fsid) are changed before the one named. */
static int set_label_siblings(const struct btrfs_super_block *sb, const char *label)
{
	struct sbdevs v = { 0 };
	int i, ret = 0;

	if (get_le64(&sb->num_devices) < 2)
		return 0;
	btrfs_each_block_device(add_block_device, &v);
	for (i = 0; i < v.n && !ret; i++)
		if (!memcmp(v.d[i].sb.fsid, sb->fsid, BTRFS_FSID_SIZE) &&
		    memcmp(v.d[i].sb.dev_item.uuid, sb->dev_item.uuid, BTRFS_UUID_SIZE))
			ret = set_label_reporting(v.d[i].path, label);
	free(v.d);
	return ret;
}

static int label_unmounted(const char *path, const char *newlabel, const char *prefix)
{
	struct btrfs_super_block sb;
	int m = btrfs_source_is_mounted(path), ret;

	if (m < 0) {
		errno = -m;
		msg_error("cannot access %s: %m", path);
		return 1;
	}
	if (m && newlabel) {
		msg_error("device %s is mounted, use mount point", path);
		return 1;
	}
	ret = fs_super_read(path, 0, &sb, NULL);
	if (ret) {
		no_btrfs_error(path, ret);
		return 1;
	}
	if (!newlabel) {
		printf("%s%.*s\n", prefix, BTRFS_LABEL_SIZE - 1, sb.label);
		return 0;
	}
	return set_label_siblings(&sb, newlabel) || set_label_reporting(path, newlabel);
}

int fs_label(const char *path, const char *newlabel, const char *prefix)
{
	char label[BTRFS_LABEL_SIZE];
	struct stat st;
	int fd, ret;

	if (stat(path, &st)) {
		msg_error("cannot access %s: %m", path);
		return 1;
	}
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return label_unmounted(path, newlabel, prefix);
	fd = btrfs_open_path(path, 0, 0);
	if (fd < 0)
		return 1;
	ret = newlabel ? btrfs_set_label_fd(fd, newlabel) : btrfs_get_label_fd(fd, label);
	close(fd);
	if (ret) {
		errno = -ret;
		msg_error("unable to %s label of %s: %m", newlabel ? "set" : "get", path);
		return 1;
	}
	if (!newlabel)
		printf("%s%s\n", prefix, label);
	return 0;
}

int fs_label_main(int argc, char **argv)
{
	const char *newlabel;

	if (out_text_only())
		return 1;
	cli_no_options(argc, argv, 1, 2, label_usage);
	newlabel = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (newlabel && strlen(newlabel) > BTRFS_LABEL_SIZE - 1) {
		msg_error("label %s is too long (max %d)", newlabel, BTRFS_LABEL_SIZE - 1);
		return 1;
	}
	return fs_label(argv[optind], newlabel, "");
}

/* ---- sync ---------------------------------------------------------------- */

static const char sync_usage[] =
	"usage: btrfs filesystem sync <path>\n"
	"Commit the running transaction of the filesystem at <path> to disk.\n";

int fs_sync_main(int argc, char **argv)
{
	int fd, ret;

	if (out_text_only())
		return 1;
	cli_no_options(argc, argv, 1, 1, sync_usage);
	fd = btrfs_open_path(argv[optind], 0, 0);
	if (fd < 0)
		return 1;
	ret = ioctl(fd, BTRFS_IOC_SYNC, NULL);
	if (ret)
		msg_error("sync of %s failed: %m", argv[optind]);
	close(fd);
	return ret != 0;
}

/* ---- defragment ---------------------------------------------------------- */

static const char defrag_usage[] =
	"usage: btrfs filesystem defragment [options] <file>|<dir> [<file>|<dir>...]\n"
	"Rewrite files so that their data is in fewer, larger extents.\n\n"
	"  -r             recurse into directories (files only; a directory itself\n"
	"                 means its subvolume tree and the extent tree)\n"
	"  -c[ALGO]       compress while rewriting: zlib (default), lzo or zstd\n"
	"  -L LEVEL       compression level (with -c)\n"
	"  -f             flush the data to disk after each file\n"
	"  -s START       from byte START on\n"
	"  -l LEN         only LEN bytes\n"
	"  -t SIZE        target extent size (default 32M)\n"
	"  -v             print the name of each file\n"
	"Note: most kernels unshare reflinked and snapshotted extents while defragmenting,\n"
	"which can take a lot more space.\n";

#define DEFRAG_RANGE_LEVEL 4 /* btrfs_ioctl_defrag_range_args.flags, not in older headers */
static struct btrfs_ioctl_defrag_range_args defrag_range;
static int defrag_errors, defrag_verbose;

static int defrag_fd(int fd, const char *path)
{
	if (defrag_verbose)
		printf("%s\n", path);
	if (ioctl(fd, BTRFS_IOC_DEFRAG_RANGE, &defrag_range) == 0)
		return 0;
	if (errno == ENOTTY) {
		msg_error("defrag range ioctl not supported by this kernel");
		return -1;
	}
	msg_error("defrag failed on %s: %m", path);
	defrag_errors++;
	return 0;
}

static int defrag_walk(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int fd, ret;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		msg_error("defrag failed on %s: %m", path);
		defrag_errors++;
		return 0;
	}
	ret = defrag_fd(fd, path);
	close(fd);
	return ret ? 1 : 0; /* ENOTTY: stop the walk */
}

static int compress_type(const char *s)
{
	if (!s || !strcmp(s, "zlib"))
		return 1;
	if (!strcmp(s, "lzo"))
		return 2;
	if (!strcmp(s, "zstd"))
		return 3;
	return -1;
}

static uint64_t size_arg(const char *s, const char *what)
{
	uint64_t v;

	if (parse_size(s, &v)) {
		msg_error("invalid %s: %s", what, s);
		exit(1);
	}
	return v;
}

/* Defragments one command-line argument; -1 to stop everything (no kernel support). */
static int defrag_arg(const char *path, int recursive)
{
	struct stat st;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		msg_error("cannot open %s: %m", path);
		defrag_errors++;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		msg_error("%s is not a directory or a regular file", path);
		defrag_errors++;
	} else if (btrfs_fd_is_btrfs(fd) != 1) {
		msg_error("not a btrfs filesystem: %s", path);
		defrag_errors++;
	} else if (recursive && S_ISDIR(st.st_mode)) {
		ret = nftw(path, defrag_walk, 10, FTW_MOUNT | FTW_PHYS) > 0 ? -1 : 0;
	} else {
		ret = defrag_fd(fd, path);
	}
	close(fd);
	return ret;
}

int fs_defrag_main(int argc, char **argv)
{
	uint64_t thresh = 32ULL << 20;
	int c, i, recursive = 0, level = 0, ctype = 0;

	if (out_text_only())
		return 1;
	defrag_range.len = UINT64_MAX;
	defrag_verbose = cli_globals.verbose > 0;
	while ((c = cli_getopt(argc, argv, "vrc::fs:l:t:L:", NULL, defrag_usage)) != -1) {
		switch (c) {
		case 'c':
			ctype = compress_type(optarg);
			if (ctype < 0) {
				msg_error("unknown compression type: %s", optarg);
				return 1;
			}
			break;
		case 'L': {
			uint64_t v;

			if (cli_parse_u64(optarg, &v) || v < 1 || v > 15) {
				msg_error("invalid compression level: %s", optarg);
				return 1;
			}
			level = (int)v;
			break;
		}
		case 'f': defrag_range.flags |= BTRFS_DEFRAG_RANGE_START_IO; break;
		case 's': defrag_range.start = size_arg(optarg, "start"); break;
		case 'l': defrag_range.len = size_arg(optarg, "length"); break;
		case 't':
			thresh = size_arg(optarg, "target extent size");
			if (thresh > UINT32_MAX) {
				msg_warn("target extent size %llu too big, trimmed to %u",
					 (unsigned long long)thresh, UINT32_MAX);
				thresh = UINT32_MAX;
			}
			break;
		case 'r': recursive = 1; break;
		case 'v': defrag_verbose = 1; break;
		}
	}
	cli_check_argc(argc, 1, -1, defrag_usage);
	defrag_range.extent_thresh = (uint32_t)thresh;
	if (level && !ctype) {
		msg_error("-L needs -c");
		return 1;
	}
	if (ctype) {
		defrag_range.flags |= BTRFS_DEFRAG_RANGE_COMPRESS;
		defrag_range.compress_type = (uint32_t)ctype;
		if (level) {
			/* Kernel 6.15+: compress_type is { u8 type; s8 level; } with this flag. */
			defrag_range.flags |= DEFRAG_RANGE_LEVEL;
			defrag_range.compress_type |= (uint32_t)level << 8;
		}
	}
	for (i = optind; i < argc; i++)
		if (defrag_arg(argv[i], recursive) < 0)
			return 1;
	if (defrag_errors)
		fprintf(stderr, "total %d failures\n", defrag_errors);
	return !!defrag_errors;
}

/* ---- resize -------------------------------------------------------------- */

static const char resize_usage[] =
	"usage: btrfs filesystem resize [--enqueue] [devid:][+/-]<newsize>[kKmMgGtTpPeE]|[devid:]max <path>\n"
	"Grow or shrink a mounted filesystem on one of its devices (devid 1 unless given).\n"
	"'max' takes all the space of the device; suffixes are powers of 1024.\n";

/* Prints what the resize will do, as btrfs-progs does; 0 or 1 after an error. */
static int resize_announce(int fd, const char *amount)
{
	struct btrfs_ioctl_fs_info_args fi;
	struct btrfs_ioctl_dev_info_args *devs;
	char buf[BTRFS_PATH_NAME_MAX + 1], *size = buf, *colon;
	uint64_t devid = 1, diff, old, new_size = 0;
	int n, i, sign = 0, ret = 1;

	if (btrfs_dev_infos(fd, &fi, &devs, &n)) {
		msg_error("unable to retrieve fs info");
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s", amount);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		size = colon + 1;
		if (cli_parse_u64(buf, &devid)) {
			msg_error("invalid devid: %s", buf);
			goto out;
		}
	}
	for (i = 0; i < n && devs[i].devid != devid; i++)
		;
	if (i == n) {
		msg_error("cannot find devid: %llu", (unsigned long long)devid);
		goto out;
	}
	ret = 0;
	if (!strcmp(size, "cancel")) {
		printf("Request to cancel resize\n");
		goto out;
	}
	old = devs[i].total_bytes;
	if (strcmp(size, "max")) {
		sign = *size == '-' ? -1 : *size == '+' ? 1 : 0;
		if (parse_size(size + (sign != 0), &diff) || !diff) {
			msg_error("failed to parse size %s", size + (sign != 0));
			ret = 1;
			goto out;
		}
		if (sign < 0 && diff > old) {
			msg_error("current size is %s which is smaller than %s",
				  pretty_size(old, UNITS_DEFAULT), pretty_size(diff, UNITS_DEFAULT));
			ret = 1;
			goto out;
		}
		if (sign > 0 && diff > UINT64_MAX - old) {
			msg_error("increasing %s is out of range", pretty_size(diff, UNITS_DEFAULT));
			ret = 1;
			goto out;
		}
		new_size = sign < 0 ? old - diff : sign > 0 ? old + diff : diff;
		new_size -= new_size % (fi.sectorsize ? fi.sectorsize : 4096);
	}
	printf("Resize device id %llu (%s) from %s to %s\n", (unsigned long long)devid,
	       (char *)devs[i].path, pretty_size(old, UNITS_DEFAULT),
	       strcmp(size, "max") ? pretty_size(new_size, UNITS_DEFAULT) : "max");
out:
	free(devs);
	return ret;
}

int fs_resize_main(int argc, char **argv)
{
	struct btrfs_ioctl_vol_args args;
	const char *amount, *path;
	int i = 1, fd, res;

	if (out_text_only())
		return 1;
	/* Own parsing: "-1G" is a size, not an option. */
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--help")) {
			fputs(resize_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--"))
			{ i++; break; }
		if (strcmp(argv[i], "--enqueue"))
			cli_usage_error(resize_usage, "unrecognized option");
	}
	optind = i;
	cli_check_argc(argc, 2, 2, resize_usage);
	amount = argv[i];
	path = argv[i + 1];
	if (!*amount || strlen(amount) >= sizeof(args.name)) {
		msg_error("resize value too long (%s)", amount);
		return 1;
	}
	fd = btrfs_open_path(path, 1, 0);
	if (fd < 0)
		return 1;
	if (resize_announce(fd, amount)) {
		close(fd);
		return 1;
	}
	memset(&args, 0, sizeof(args));
	strcpy(args.name, amount);
	res = ioctl(fd, BTRFS_IOC_RESIZE, &args);
	if (res < 0)
		msg_error(errno == EFBIG ? "unable to resize '%s': no enough free space" :
			  "unable to resize '%s': %m", path);
	else if (res > 0)
		msg_error("resizing of '%s' failed: error %d", path, res);
	close(fd);
	return res != 0;
}
#endif
