/* btrfs filesystem df|show|label|sync|defragment|resize (usage: applets/filesystem/usage.c).
 * Mounted filesystems are asked through ioctls (util/ioctl/btrfs_ioctl.h); unmounted
 * devices and images through their superblocks. Output as btrfs-progs 6.2. */
//config:config APPLET_FILESYSTEM
//config:	bool "btrfs filesystem (df, show, usage, label, defragment, sync, resize)"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Space usage, structure and label of a filesystem, defragmentation,
//config:	  sync and online resize.
//config:
//config:config FS_RESIZE_OFFLINE
//config:	bool "btrfs filesystem resize --offline"
//config:	default y
//config:	depends on APPLET_FILESYSTEM
//config:	help
//config:	  Grow an unmounted single-device filesystem or image file (after
//config:	  mkfs.btrfs --rootdir --shrink), through the write engine.
//cmd:APPLET_FILESYSTEM fs_df_main btrfs filesystem df|Show space usage information for a mount point
//cmd:APPLET_FILESYSTEM fs_show_main btrfs filesystem show|Show the structure of a filesystem
//cmd:APPLET_FILESYSTEM fs_label_main btrfs filesystem label|Get or change the label of a filesystem
//cmd:APPLET_FILESYSTEM fs_sync_main btrfs filesystem sync|Force a sync on a filesystem
//cmd:APPLET_FILESYSTEM fs_defrag_main btrfs filesystem defragment|Defragment a file or a directory
//cmd:APPLET_FILESYSTEM fs_resize_main btrfs filesystem resize|Resize a filesystem
#include "config.h"
#if CFG_APPLET_FILESYSTEM
#include "applets/applets.h"
#include "fs/core/fs.h"
#include "fs/write/write.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/strnum.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
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

USAGE(df_usage) =
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
	*val = str_to_ull(buf, NULL, 10);
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

USAGE(show_usage) =
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
	sort_stable(mine, n, sizeof(*mine), devid_cmp);
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
	static const struct cli_option longopts[] = {
		{ "all-devices", no_argument, 'd' },
		{ "mounted", no_argument, 'm' },
		{ NULL, 0, 0 }
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
		if (search && !found)
			msg_error("not a valid btrfs filesystem: %s", search);
	}
	ret = search && !found;   /* also after -m, silently */
	out_group_end(&o);
	out_end(&o);
	free(seen.fsid);
	return ret;
}

/* ---- label --------------------------------------------------------------- */

USAGE(label_usage) =
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

static void write_error(const char *path, const char *what, const struct fs_error *err)
{
	char buf[320];

	msg_error("cannot %s %s: %s", what, path, fs_error_format(err, buf, sizeof(buf)));
}

/* The filesystem of the unmounted device or image path, opened through the write
 * engine (exclusive: unmounted, no other writer), the undo file started when asked;
 * NULL after an error (printed; what: the command's work, for the messages). */
static struct fs *wopen_one(const char *path, int super_only, const char *undo, const char *what)
{
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;

	fs_wopen_opts_init(&o);
	o.open.partial = o.open.skip_chunk_tree = super_only;
	fs = fs_wopen(&path, 1, &o, &err);
	if (!fs && (err.code == -EUCLEAN || err.code == -ENOENT || err.code == -EIO))
		no_btrfs_error(path, err.code);
	else if (!fs)
		write_error(path, what, &err);
	else if (undo && fs_undo_start(fs, undo)) {
		write_error(path, what, &fs->err);
		fs_wclose(fs);
		fs = NULL;
	}
	return fs;
}

/* Every superblock copy of every device of the filesystem, flushed, the primary
 * copies last. */
static int set_label_unmounted(const char *path, const char *label)
{
	struct fs *fs = wopen_one(path, 1, NULL, "set the label of");
	int ret;

	if (!fs)
		return 1;
	memset(fs->sb.label, 0, sizeof(fs->sb.label));
	memcpy(fs->sb.label, label, strlen(label));
	ret = fs_super_commit(fs);
	if (ret)
		write_error(path, "set the label of", &fs->err);
	fs_wclose(fs);
	return !!ret;
}

static int label_unmounted(const char *path, const char *newlabel, const char *prefix)
{
	struct btrfs_super_block sb;
	int m = fs_path_mounted(path), ret;

	if (m < 0) {
		errno = -m;
		msg_error("unable to access %s: %m", path);
		return 1;
	}
	if (m && newlabel) {
		msg_error("device %s is mounted, use mount point", path);
		return 1;
	}
	if (newlabel)
		return set_label_unmounted(path, newlabel);
	ret = fs_super_read(path, 0, &sb, NULL);
	if (ret) {
		no_btrfs_error(path, ret);
		return 1;
	}
	printf("%s%.*s\n", prefix, BTRFS_LABEL_SIZE - 1, sb.label);
	return 0;
}

int fs_label(const char *path, const char *newlabel, const char *prefix)
{
	char label[BTRFS_LABEL_SIZE];
	struct stat st;
	int fd, ret;

	if (stat(path, &st)) {
		msg_error("unable to access %s: %m", path);
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

	cli_no_options(argc, argv, 1, 2, label_usage);
	newlabel = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (newlabel && strlen(newlabel) > BTRFS_LABEL_SIZE - 1) {
		msg_error("label %s is too long (max %d)", newlabel, BTRFS_LABEL_SIZE - 1);
		return 255;
	}
	/* btrfs-progs exits -1 on the command's errors */
	return fs_label(argv[optind], newlabel, "") ? 255 : 0;
}

/* ---- sync ---------------------------------------------------------------- */

USAGE(sync_usage) =
	"usage: btrfs filesystem sync <path>\n"
	"Commit the running transaction of the filesystem at <path> to disk.\n";

int fs_sync_main(int argc, char **argv)
{
	int fd, ret;

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

USAGE(defrag_usage) =
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

static int defrag_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0) {
		msg_error("defrag failed on %s: %m", path);
		defrag_errors++;
		return 0;
	}
	ret = defrag_fd(fd, path);
	close(fd);
	return ret;
}

/* Defragments the regular files below the directory path (len bytes of a PATH_MAX
 * buffer), depth first in directory order, following no symbolic link and staying on
 * the filesystem dev (nftw's FTW_PHYS | FTW_MOUNT, 1 KB more in musl, which also stops
 * 10 levels down). -1 to stop everything (no kernel support). */
static int defrag_tree(char *path, size_t len, dev_t dev)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	struct stat st;
	int ret = 0;

	if (!dir)
		return 0;
	len -= len && path[len - 1] == '/';
	while (!ret && (de = readdir(dir))) {
		size_t n = strlen(de->d_name);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || len + n + 2 > PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		if (lstat(path, &st) || st.st_dev != dev)
			continue;
		if (S_ISDIR(st.st_mode))
			ret = defrag_tree(path, len + 1 + n, dev);
		else if (S_ISREG(st.st_mode))
			ret = defrag_file(path);
	}
	closedir(dir);
	return ret;
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

static uint64_t size_arg(const char *s)
{
	uint64_t v;

	if (parse_size_arg(s, &v))
		exit(1);
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
		char tree[PATH_MAX];

		/* a symbolic link to a directory is not followed (nftw's FTW_PHYS) */
		if (strlen(path) < sizeof(tree) && !lstat(path, &st) && S_ISDIR(st.st_mode))
			ret = defrag_tree(strcpy(tree, path), strlen(path), st.st_dev);
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
		case 's': defrag_range.start = size_arg(optarg); break;
		case 'l': defrag_range.len = size_arg(optarg); break;
		case 't':
			thresh = size_arg(optarg);
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

USAGE(resize_usage) =
	"usage: btrfs filesystem resize [options] [devid:][+/-]<newsize>[kKmMgGtTpPeE]|[devid:]max <path>\n"
	"Grow or shrink a mounted filesystem on one of its devices (devid 1 unless given).\n"
	"'max' takes all the space of the device; suffixes are powers of 1024.\n"
	"    --enqueue     wait if another exclusive operation runs\n"
#if CFG_FS_RESIZE_OFFLINE
	"    --offline     grow an unmounted single-device filesystem (an image file grows too)\n"
	"    --undo FILE   with --offline: save what is overwritten (btrfs rescue undo)\n"
#endif
	;

/* A resize request: [devid:][+|-]SIZE, [devid:]max or cancel. */
struct resize_arg {
	uint64_t devid, size;
	int has_devid, sign, max, cancel;
};

/* Parses amount as btrfs-progs does (a devid that is no number is 0; devid 1 when
 * none is given); 0 or 1 after an error. */
static int resize_parse(const char *amount, struct resize_arg *a)
{
	char buf[BTRFS_PATH_NAME_MAX + 1], *size = buf, *colon;

	memset(a, 0, sizeof(*a));
	a->devid = 1;
	a->cancel = !strcmp(amount, "cancel");
	if (a->cancel)
		return 0;
	snprintf(buf, sizeof(buf), "%s", amount);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		size = colon + 1;
		a->has_devid = 1;
		errno = 0;
		a->devid = str_to_ull(buf, NULL, 10);
		if (errno == ERANGE) {   /* (only an overflow: glibc sets no other error here) */
			msg_error("failed to parse devid %s: %m", buf);
			return 1;
		}
	}
	a->max = !strcmp(size, "max");
	a->sign = *size == '-' ? -1 : *size == '+';
	if (!a->max && parse_size(size + (a->sign != 0), &a->size)) {
		msg_error("failed to parse size %s", size + (a->sign != 0));
		return 1;
	}
	return 0;
}

/* Prints what the resize will do, as btrfs-progs does; 0 or 1 after an error. */
static int resize_announce(int fd, const char *amount)
{
	struct btrfs_ioctl_fs_info_args fi;
	struct btrfs_ioctl_dev_info_args *devs;
	struct resize_arg a;
	uint64_t new_size, old;
	int n, i, ret = 1;

	if (btrfs_dev_infos(fd, &fi, &devs, &n)) {
		msg_error("unable to retrieve fs info");
		return 1;
	}
	if (resize_parse(amount, &a))
		goto out;
	ret = 0;
	if (a.cancel) {
		printf("Request to cancel resize\n");
		goto out;
	}
	for (i = 0; i < n && devs[i].devid != a.devid; i++)
		;
	ret = i == n;
	if (ret) {
		msg_error("cannot find devid: %llu", (unsigned long long)a.devid);
		goto out;
	}
	old = devs[i].total_bytes;
	ret = 1;
	if (a.sign < 0 && a.size > old)
		msg_error("current size is %s which is smaller than %s",
			  pretty_size(old, UNITS_DEFAULT), pretty_size(a.size, UNITS_DEFAULT));
	else if (a.sign > 0 && a.size > UINT64_MAX - old)
		msg_error("increasing %s is out of range", pretty_size(a.size, UNITS_DEFAULT));
	else
		ret = 0;
	if (ret)
		goto out;
	new_size = a.sign < 0 ? old - a.size : a.sign ? old + a.size : a.size;
	new_size -= new_size % (fi.sectorsize ? fi.sectorsize : 4096);
	printf("Resize device id %llu (%s) from %s to %s\n", (unsigned long long)a.devid,
	       (char *)devs[i].path, pretty_size(old, UNITS_DEFAULT),
	       a.max ? "max" : pretty_size(new_size, UNITS_DEFAULT));
out:
	free(devs);
	return ret;
}

#if CFG_FS_RESIZE_OFFLINE
/* The size the offline resize of device d (blk: a block device) gives it (grow only;
 * max: the whole device); 0 after an error (printed). */
static uint64_t offline_size(struct fs *fs, struct fs_device *d, const char *amount, int blk)
{
	uint64_t old = d->total_bytes, dev_size = fs_fd_size(d->fd), new_size = 0;
	struct resize_arg a;

	if (resize_parse(amount, &a))
		return 0;
	if (a.cancel || (a.has_devid && a.devid != d->devid)) {
		msg_error(a.cancel ? "can not cancel --offline resize" : "invalid device id %llu",
			  (unsigned long long)a.devid);
		return 0;
	}
	if (a.sign > 0 && a.size > UINT64_MAX - old) {
		msg_error("increasing (%llu) %s is out of range", (unsigned long long)a.size,
			  pretty_size(a.size, UNITS_DEFAULT));
		return 0;
	}
	if (a.sign >= 0)
		new_size = a.max ? dev_size : a.sign ? old + a.size : a.size;
	new_size -= new_size % fs->sectorsize;
	if (new_size < old) {
		msg_error("offline resize does not support shrinking");
		return 0;
	}
	if (new_size > dev_size && blk) {
		msg_error("unable to resize '%s': not enough free space", d->path);
		return 0;
	}
	if (new_size < (256 << 20))
		msg_warn("the new size %llu (%s) is < 256MiB, this may be rejected by kernel",
			 (unsigned long long)new_size, pretty_size(new_size, UNITS_DEFAULT));
	printf("Resize from %s to %s\n", pretty_size(old, UNITS_DEFAULT), pretty_size(new_size, UNITS_DEFAULT));
	return new_size;
}

static int resize_device(struct fs *fs, void *new_size)
{
	return fs_device_resize(fs, &fs->devs[0], *(uint64_t *)new_size);
}

/* Grows the unmounted single-device filesystem at path (btrfs-progs' --offline): an
 * image file is made that long first, then the device item and the superblocks are
 * changed in one transaction (new blocks, then the superblocks). 0 or 1. */
static int resize_offline(const char *amount, const char *path, const char *undo)
{
	struct btrfs_super_block sb;
	uint64_t new_size;
	struct stat st;
	struct fs *fs;
	int ret, m;

	if (stat(path, &st)) {
		msg_error("cannot stat '%s': %m", path);
		return 1;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		msg_error("not a regular file or block device: %s", path);
		return 1;
	}
	ret = fs_super_read(path, 0, &sb, NULL);
	m = ret ? 0 : fs_path_mounted(path);
	if (ret || m) {
		if (ret)
			no_btrfs_error(path, ret);
		else
			msg_error(m > 0 ? "%s must not be mounted to use --offline" : "unable to access %s", path);
		return 1;
	}
	if (get_le64(&sb.num_devices) != 1) {
		msg_error("multi-device not supported with --offline");
		return 1;
	}
	fs = wopen_one(path, 0, undo, "resize");
	if (!fs)
		return 1;
	new_size = offline_size(fs, &fs->devs[0], amount, S_ISBLK(st.st_mode));
	ret = !new_size;
	if (!ret && S_ISREG(st.st_mode) && ftruncate(fs->devs[0].fd, (off_t)new_size)) {
		msg_error("unable to truncate %s to new size %llu", path, (unsigned long long)new_size);
		ret = 1;
	}
	if (!ret && (ret = fs_tx_run(fs, resize_device, &new_size)))
		write_error(path, "resize", &fs->err);
	if (fs_wclose(fs) && !ret) {
		msg_error("cannot close the undo file %s", undo);
		ret = 1;
	}
	return ret;
}
#endif

int fs_resize_main(int argc, char **argv)
{
	struct btrfs_ioctl_vol_args args;
	const char *amount, *path, *undo = NULL;
	int i = 1, fd, res, flags = 0;   /* 1 --enqueue, 2 --offline */

	/* Own parsing: "-1G" is a size, not an option. */
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--help")) {
			cli_put_usage(resize_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--"))
			{ i++; break; }
		if (!strcmp(argv[i], "--enqueue"))
			flags |= 1;
		else if (CFG_FS_RESIZE_OFFLINE && !strcmp(argv[i], "--offline"))
			flags |= 2;
		else if (CFG_FS_RESIZE_OFFLINE && !strcmp(argv[i], "--undo") && i + 1 < argc)
			undo = argv[++i];
		else
			cli_usage_error(resize_usage, "unrecognized option");
	}
	optind = i;
	cli_check_argc(argc, 2, 2, resize_usage);
	if (flags == 3 || (undo && flags != 2)) {
		msg_error(flags == 3 ? "--enqueue is not compatible with --offline" : "--undo needs --offline");
		return 1;
	}
	amount = argv[i];
	path = argv[i + 1];
	if (!*amount || strlen(amount) >= sizeof(args.name)) {
		msg_error("resize value too long (%s)", amount);
		return 1;
	}
#if CFG_FS_RESIZE_OFFLINE
	if (flags & 2)
		return resize_offline(amount, path, undo);
#endif
	fd = btrfs_open_path(path, 1, 0);
	if (fd < 0) {
		struct stat st;

		if (!stat(path, &st) && !S_ISDIR(st.st_mode))
			msg_error("to resize a file containing a BTRFS image use the --offline flag");
		return 1;
	}
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
