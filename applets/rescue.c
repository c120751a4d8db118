/* btrfs rescue: changes of an unmounted filesystem that make it mountable again,
 * through the write engine (fs/write): exclusive, crash-safe, with --undo FILE. */
//config:config RESCUE_ZERO_LOG
//config:	bool "btrfs rescue zero-log"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Clear the log tree a kernel cannot replay.
//config:
//config:config RESCUE_SUPER_RECOVER
//config:	bool "btrfs rescue super-recover"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Rewrite bad or stale superblock copies from the newest good one.
//config:
//config:config RESCUE_CHUNK_RECOVER
//config:	bool "btrfs rescue chunk-recover (says it is not supported)"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Rebuilding the chunk tree is not supported: the command says so.
//config:
//config:config RESCUE_FIX_DEVICE_SIZE
//config:	bool "btrfs rescue fix-device-size"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Make device and superblock sizes match the devices (unaligned or
//config:	  too large sizes, which newer kernels refuse to mount).
//config:
//config:config RESCUE_CLEAR_UUID_TREE
//config:	bool "btrfs rescue clear-uuid-tree"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Delete the uuid tree: the kernel rebuilds it at mount time.
//config:
//config:config RESCUE_CLEAR_SPACE_CACHE
//config:	bool "btrfs rescue clear-space-cache"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Remove the v1 free space cache or the v2 free space tree (rebuilt
//config:	  at once when the block group tree needs it).
//config:
//config:config RESCUE_CLEAR_INO_CACHE
//config:	bool "btrfs rescue clear-ino-cache"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Remove what the deprecated inode number cache left in subvolumes.
//config:
//config:config RESCUE_UNDO
//config:	bool "btrfs rescue undo"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Put a filesystem back as it was before a command that wrote an
//config:	  undo file (--undo FILE).
//config:
//config:config RESCUE_CONTROL_DEVICE
//config:	bool "btrfs rescue create-control-device"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Create /dev/btrfs-control.
//cmd:RESCUE_ZERO_LOG rescue_zero_log_main btrfs rescue zero-log|Clear the tree log. Usable if it's corrupted and prevents mount.
//cmd:RESCUE_SUPER_RECOVER rescue_super_recover_main btrfs rescue super-recover|Recover bad superblocks from good copies
//cmd:RESCUE_CHUNK_RECOVER rescue_chunk_recover_main btrfs rescue chunk-recover|Recover the chunk tree by scanning the devices one by one.
//cmd:RESCUE_FIX_DEVICE_SIZE rescue_fix_device_size_main btrfs rescue fix-device-size|Re-align device and super block sizes. Usable if newer kernel refuse to mount it due to mismatch super size
//cmd:RESCUE_CLEAR_UUID_TREE rescue_clear_uuid_tree_main btrfs rescue clear-uuid-tree|Delete uuid tree so that kernel can rebuild it at mount time
//cmd:RESCUE_CLEAR_SPACE_CACHE rescue_clear_space_cache_main btrfs rescue clear-space-cache|completely remove the v1 or v2 free space cache
//cmd:RESCUE_CLEAR_INO_CACHE rescue_clear_ino_cache_main btrfs rescue clear-ino-cache|remove leftover items pertaining to the deprecated inode cache feature
//cmd:RESCUE_UNDO rescue_undo_main btrfs rescue undo|Restore a filesystem from an undo file
//cmd:RESCUE_CONTROL_DEVICE rescue_control_main btrfs rescue create-control-device|Create /dev/btrfs-control (see 'CONTROL DEVICE' in btrfs(5))

#include "config.h"
#if CFG_RESCUE_ZERO_LOG || CFG_RESCUE_SUPER_RECOVER || CFG_RESCUE_CHUNK_RECOVER || \
	CFG_RESCUE_UNDO || CFG_RESCUE_CONTROL_DEVICE || CFG_RESCUE_FIX_DEVICE_SIZE || \
	CFG_RESCUE_CLEAR_UUID_TREE || CFG_RESCUE_CLEAR_SPACE_CACHE || CFG_RESCUE_CLEAR_INO_CACHE
#include "cli.h"
#include "le.h"
#include "write/write.h"
#include "devscan.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define UNDO_HELP "    --undo FILE        save what is overwritten to FILE (see 'btrfs rescue undo')\n"

static const struct option undo_opts[] = { { "undo", required_argument, NULL, 'U' }, { 0, 0, 0, 0 } };

/* [--undo FILE] DEVICE: the device, *undo set when given. */
static const char *device_arg(int argc, char **argv, const char *usage, const char **undo)
{
	int c;

	*undo = NULL;
	while ((c = cli_getopt(argc, argv, "", undo_opts, usage)) != -1)
		*undo = optarg;
	cli_check_argc(argc, 1, 1, usage);
	return argv[optind];
}

/* Opens dev (and the rest of its filesystem) for writing; prints why not. */
static struct fs *open_rw(const char *dev, const char *undo, int super_only)
{
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;
	char buf[320];

	fs_wopen_opts_init(&o);
	o.undo = undo;
	o.open.partial = super_only;
	o.open.skip_chunk_tree = super_only;
	fs = fs_wopen(&dev, 1, &o, &err);
	if (!fs && err.code == -EBUSY)
		msg_error("%s", err.msg);
	else if (!fs)
		msg_error("could not open ctree: %s", fs_error_format(&err, buf, sizeof(buf)));
	return fs;
}

/* Closes, reporting the error of what went wrong (ret) or of closing. 0 or 1. */
static int close_rw(struct fs *fs, int ret, const char *what)
{
	char buf[320];

	if (ret)
		msg_error("%s: %s", what, fs_error_format(&fs->err, buf, sizeof(buf)));
	if (fs_wclose(fs) && !ret) {
		msg_error("cannot close the undo file: %s", strerror(errno));
		ret = 1;
	}
	return !!ret;
}

/* ---- zero-log --------------------------------------------------------------- */

static const char zero_log_usage[] =
	"usage: btrfs rescue zero-log [--undo FILE] <device>\n\n"
	"    Clear the tree log. Usable if it's corrupted and prevents mount.\n\n"
	UNDO_HELP;

int rescue_zero_log_main(int argc, char **argv)
{
	const char *undo, *dev = device_arg(argc, argv, zero_log_usage, &undo);
	struct fs *fs = open_rw(dev, undo, 1);

	if (!fs)
		return 1;
	printf("Clearing log on %s, previous log_root %llu, level %u\n", dev,
	       (unsigned long long)get_le64(&fs->sb.log_root), fs->sb.log_root_level);
	put_le64(&fs->sb.log_root, 0);
	fs->sb.log_root_level = 0;
	return close_rw(fs, fs_super_commit(fs), "failed to write dev supers");
}

/* ---- super-recover ---------------------------------------------------------- */

static const char super_recover_usage[] =
	"usage: btrfs rescue super-recover [options] <device>\n\n"
	"    Recover bad superblocks from good copies\n\n"
	"    -y                 assume an answer of `yes' to all questions\n"
	"    -v                 verbose: list the devices and the good and bad copies\n"
	UNDO_HELP;

struct copy_rec { const char *dev; int mirror; uint64_t gen; int good; };

/* Every copy on the devices that exists: valid or not, with its generation. */
static int read_copies(const char **devs, int n, struct copy_rec *r)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
			struct btrfs_super_block sb;
			int ret = fs_super_read(devs[i], m, &sb, NULL);

			if (ret == -ENOENT)
				continue;
			r[k++] = (struct copy_rec){ devs[i], m, ret ? 0 : get_le64(&sb.generation), !ret };
		}
	return k;
}

static void print_copies(const struct copy_rec *r, int n, int good)
{
	printf("\t[All %s supers]:\n", good ? "good" : "bad");
	for (int i = 0; i < n; i++)
		if (r[i].good == good)
			printf("\t\tdevice name = %s\n\t\tsuperblock bytenr = %llu\n\n", r[i].dev,
			       (unsigned long long)btrfs_super_offset(r[i].mirror));
}

static int confirm(const char *question)
{
	char line[16];

	printf("%s [y/N]: ", question);
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y');
}

/* A valid superblock copy of dev (the first one): 0, or -1 when none. */
static int any_super(const char *dev, struct btrfs_super_block *sb)
{
	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (!fs_super_read(dev, m, sb, NULL))
			return 0;
	return -1;
}

/* The devices of the filesystem on dev: dev itself, then the others a scan finds. */
static int fs_devices(const char *dev, const char **devs, char **found, int max)
{
	struct btrfs_super_block sb;
	uint64_t devid;
	int m;

	devs[0] = dev;
	if (any_super(dev, &sb))
		return 1;
	devid = get_le64(&sb.dev_item.devid);
	m = get_le64(&sb.num_devices) > 1 ? fs_scan_devices(sb.fsid, &devid, 1, found, max - 1) : 0;
	for (int i = 0; i < m; i++)
		devs[1 + i] = found[i];
	return 1 + m;
}

static int recover_supers(const char *dev, int yes, const char *undo, struct copy_rec *r, int n)
{
	uint64_t max = 0;
	struct fs *fs;
	int bad = 0;

	for (int i = 0; i < n; i++)
		if (r[i].good && r[i].gen > max)
			max = r[i].gen;
	for (int i = 0; i < n; i++)
		if (r[i].gen < max)
			r[i].good = 0, bad++;
	if (cli_globals.verbose > 0) {
		printf("Before Recovering:\n");
		print_copies(r, n, 1);
		print_copies(r, n, 0);
		printf("\n");
	}
	if (!max) {
		msg_error("no valid superblock found on %s", dev);
		return 1;
	}
	if (!bad)
		return 0;
	if (!yes && !isatty(STDIN_FILENO)) {
		msg_error("not asking without a terminal: use -y to recover");
		return 4;
	}
	if (!yes && !confirm("Make sure this is a btrfs disk otherwise the tool will destroy other fs, Are you sure?"))
		return 4;
	fs = open_rw(dev, undo, 1);
	if (!fs)
		return 3;
	return close_rw(fs, fs_super_adopt_newest(fs) || fs_super_commit(fs),
			"cannot write the superblocks") ? 3 : 2;
}

int rescue_super_recover_main(int argc, char **argv)
{
	static const char *const result[] = { "All supers are valid, no need to recover",
		"Usage or syntax errors", "Recovered bad superblocks successful",
		"Failed to recover bad superblocks", "Aborted to recover bad superblocks" };
	const char *devs[17], *undo = NULL;
	struct copy_rec r[17 * BTRFS_SUPER_MIRRORS];
	char *found[16];
	int c, yes = 0, n, ret;

	while ((c = cli_getopt(argc, argv, "yv", undo_opts, super_recover_usage)) != -1) {
		if (c == 'y')
			yes = 1;
		else if (c == 'v')
			cli_globals.verbose++;
		else
			undo = optarg;
	}
	cli_check_argc(argc, 1, 1, super_recover_usage);
	ret = fs_path_mounted(argv[optind]);
	if (ret < 0)
		msg_error("could not check mount status: %s", strerror(-ret));
	if (ret > 0)
		msg_error("the device is busy");
	if (ret)
		return 1;
	n = fs_devices(argv[optind], devs, found, 17);
	if (cli_globals.verbose > 0) {
		printf("All Devices:\n");
		for (int i = 0; i < n; i++) {
			struct btrfs_super_block sb;

			printf("\tDevice: id = %llu, name = %s\n", any_super(devs[i], &sb) ? 0ULL :
			       (unsigned long long)get_le64(&sb.dev_item.devid), devs[i]);
		}
		printf("\n");
	}
	ret = recover_supers(argv[optind], yes, undo, r, read_copies(devs, n, r));
	while (n > 1)
		free(found[--n - 1]);
	printf("%s\n", result[ret]);
	return ret;
}

/* ---- transactions ------------------------------------------------------------ */

/* Runs change(fs, ctx) in one transaction and commits it; 0 or the error. */
static int in_tx(struct fs *fs, int (*change)(struct fs *fs, void *ctx), void *ctx)
{
	int ret = fs_tx_begin(fs);

	if (!ret && (ret = change(fs, ctx)))
		fs_tx_abort(fs);
	else if (!ret)
		ret = fs_tx_commit(fs);
	return ret;
}

/* ---- fix-device-size ------------------------------------------------------------ */

static const char fix_size_usage[] =
	"usage: btrfs rescue fix-device-size [--undo FILE] <device>\n\n"
	"    Re-align device and super block sizes. Usable if newer kernel refuse to mount it due to mismatch super size\n\n"
	UNDO_HELP;

/* End of the last device extent of devid (0 none), <0 error. */
static int64_t dev_extents_end(struct fs *fs, uint64_t devid)
{
	struct fs_key k = { devid, BTRFS_DEV_EXTENT_KEY, UINT64_MAX };
	const struct btrfs_dev_extent *de;
	struct fs_root r;
	struct fs_path p;
	uint32_t size;
	int64_t end = 0;

	if (fs_root_lookup(fs, BTRFS_DEV_TREE_OBJECTID, &r))
		return -1;
	if (fs_search_le(fs, &r, &k, &p))
		return 0;
	fs_path_key(&p, &k);
	de = (const void *)fs_path_data(&p, &size);
	de = fs_dev_extent_item(de, size);
	end = de ? (int64_t)(k.offset + get_le64(&de->length)) : -1;
	fs_path_release(fs, &p);
	return end;
}

/* The size devices[i] should have: 0 when it is right, ~0 when it cannot be fixed. */
static uint64_t right_size(struct fs *fs, struct fs_device *d)
{
	uint64_t ss = fs->sectorsize, real = fs_fd_size(d->fd) / ss * ss;
	int64_t end;

	if (d->total_bytes % ss)
		return d->total_bytes / ss * ss;
	if (d->total_bytes <= real)
		return 0;
	end = dev_extents_end(fs, d->devid);
	if (end < 0 || (uint64_t)end > real) {
		msg_error("found dev extents covering or beyond bytenr %llu, can not shrink the device without losing data",
			  (unsigned long long)real);
		return ~0ULL;
	}
	return real;
}

static int set_sizes(struct fs *fs, void *ctx)
{
	const uint64_t *want = ctx;
	uint64_t total = 0;

	for (int i = 0; i < fs->num_devs; i++) {
		struct fs_device *d = &fs->devs[i];
		struct fs_key k = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, d->devid };
		struct btrfs_dev_item *di;
		uint32_t size;

		if (want[i]) {
			di = (struct btrfs_dev_item *)fs_item_mut(fs, BTRFS_CHUNK_TREE_OBJECTID, &k, &size);
			if (!di || size < sizeof(*di))
				return di ? fs_err(&fs->err, -EUCLEAN, "device item too short") : fs->err.code;
			put_le64(&di->total_bytes, want[i]);
			put_le64(&d->sb.dev_item.total_bytes, want[i]);
		}
		total += want[i] ? want[i] : d->total_bytes;
	}
	put_le64(&fs->sb.total_bytes, total);
	return 0;
}

int rescue_fix_device_size_main(int argc, char **argv)
{
	const char *undo, *dev = device_arg(argc, argv, fix_size_usage, &undo);
	struct fs *fs = open_rw(dev, undo, 0);
	uint64_t want[64] = { 0 }, total = 0, old_total;
	int change = 0;

	if (!fs)
		return 1;
	if (fs->num_devs > 64)
		return close_rw(fs, 0, NULL) | 1;
	for (int i = 0; i < fs->num_devs; i++) {
		want[i] = right_size(fs, &fs->devs[i]);
		if (want[i] == ~0ULL)
			return close_rw(fs, 0, NULL) | 1;
		change |= !!want[i];
		total += want[i] ? want[i] : fs->devs[i].total_bytes;
	}
	old_total = get_le64(&fs->sb.total_bytes);
	if (!change && total == old_total) {
		printf("No device size related problem found\n");
		return close_rw(fs, 0, NULL);
	}
	if (in_tx(fs, set_sizes, want))
		return close_rw(fs, 1, "failed to fix the device sizes");
	for (int i = 0; i < fs->num_devs; i++)
		if (want[i])
			printf("Fixed device size for devid %llu, old size: %llu new size: %llu\n",
			       (unsigned long long)fs->devs[i].devid, (unsigned long long)fs->devs[i].total_bytes,
			       (unsigned long long)want[i]);
	if (close_rw(fs, 0, NULL))
		return 1;
	if (total != old_total)
		printf("Fixed super total bytes, old size: %llu new size: %llu\n", (unsigned long long)old_total,
		       (unsigned long long)total);
	printf("Fixed unaligned/mismatched total_bytes for super block and device items\n");
	return 0;
}

/* ---- clear-uuid-tree -------------------------------------------------------------- */

static const char clear_uuid_usage[] =
	"usage: btrfs rescue clear-uuid-tree [--undo FILE] <device>\n\n"
	"    Delete uuid tree so that kernel can rebuild it at mount time\n\n"
	UNDO_HELP;

static int clear_uuid(struct fs *fs, void *ctx)
{
	(void)ctx;
	return fs_tree_delete(fs, BTRFS_UUID_TREE_OBJECTID);
}

int rescue_clear_uuid_tree_main(int argc, char **argv)
{
	const char *undo, *dev = device_arg(argc, argv, clear_uuid_usage, &undo);
	struct fs *fs = open_rw(dev, undo, 0);
	struct fs_root r;

	if (!fs)
		return 1;
	if (fs_root_lookup(fs, BTRFS_UUID_TREE_OBJECTID, &r))
		return close_rw(fs, 0, NULL);   /* none: nothing to do */
	return close_rw(fs, in_tx(fs, clear_uuid, NULL), "failed to clear the uuid tree");
}

/* ---- clear-space-cache ------------------------------------------------------------ */

static const char clear_space_usage[] =
	"usage: btrfs rescue clear-space-cache [--undo FILE] (v1|v2) <device>\n\n"
	"    completely remove the v1 or v2 free space cache\n"
	"    (a filesystem with the block group tree needs a free space tree: v2 makes a new one)\n\n"
	UNDO_HELP;

/* v1: the cache inode of each block group (root tree items: a FREE_SPACE header naming
 * an inode, the inode with its file extents), and the data extents they use. */
static int clear_v1(struct fs *fs, void *ctx)
{
	struct fs_root root;
	int ret = 0;

	(void)ctx;
	for (int i = 0; i < fs->num_chunks && !ret; i++) {
		struct fs_key k = { BTRFS_FREE_SPACE_OBJECTID, 0, fs->chunks[i].logical };
		const struct btrfs_free_space_header *h;
		struct fs_path p;
		uint32_t size;
		uint64_t ino;

		if ((ret = fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &root)))
			break;
		ret = fs_lookup(fs, &root, &k, &p);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		h = (const void *)fs_path_data(&p, &size);
		ino = size >= sizeof(*h) ? get_le64(&h->location.objectid) : 0;
		fs_path_release(fs, &p);
		if (ino < BTRFS_FIRST_FREE_OBJECTID || ino > BTRFS_LAST_FREE_OBJECTID) {
			ret = fs_err_at(&fs->err, -EUCLEAN, BTRFS_ROOT_TREE_OBJECTID, 0, "bad free space cache header");
			break;
		}
		ret = fs_item_delete(fs, BTRFS_ROOT_TREE_OBJECTID, &k);
		if (!ret)
			ret = fs_inode_delete(fs, BTRFS_ROOT_TREE_OBJECTID, ino);
	}
	put_le64(&fs->sb.cache_generation, (uint64_t)-1);
	return ret;
}

static int clear_v2(struct fs *fs, void *ctx)
{
	int rebuild = *(int *)ctx;

	put_le64(&fs->sb.compat_ro_flags, get_le64(&fs->sb.compat_ro_flags) &
		 ~(uint64_t)(BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE | BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID));
	return rebuild ? fs_fst_rebuild(fs) : fs_tree_delete(fs, BTRFS_FREE_SPACE_TREE_OBJECTID);
}

int rescue_clear_space_cache_main(int argc, char **argv)
{
	const char *undo = NULL, *version, *dev;
	uint64_t ro;
	struct fs *fs;
	int c, rebuild;

	while ((c = cli_getopt(argc, argv, "", undo_opts, clear_space_usage)) != -1)
		undo = optarg;
	cli_check_argc(argc, 2, 2, clear_space_usage);
	version = argv[optind];
	dev = argv[optind + 1];
	if (strcasecmp(version, "v1") && strcasecmp(version, "v2")) {
		msg_error("invalid version string, has \"%s\" expect \"v1\" or \"v2\"", version);
		return 1;
	}
	fs = open_rw(dev, undo, 0);
	if (!fs)
		return 1;
	ro = get_le64(&fs->sb.compat_ro_flags);
	if (tolower((unsigned char)version[1]) == '1') {
		if (ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)
			msg_warn("free space cache v2 detected, use --clear-space-cache v2, proceeding with clearing v1");
		if (close_rw(fs, in_tx(fs, clear_v1, NULL), "failed to clear free space cache"))
			return 1;
		printf("Free space cache cleared\n");
		return 0;
	}
	if (!(ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)) {
		printf("no free space cache v2 to clear\n");
		return close_rw(fs, 0, NULL);
	}
	printf("Clear free space cache v2\n");
	rebuild = !!(ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE);
	if (close_rw(fs, in_tx(fs, clear_v2, &rebuild), "failed to clear free space cache v2"))
		return 1;
	printf(rebuild ? "free space cache v2 cleared and made anew (the block group tree needs one)\n" :
		"free space cache v2 cleared\n");
	return 0;
}

/* ---- clear-ino-cache -------------------------------------------------------------- */

static const char clear_ino_usage[] =
	"usage: btrfs rescue clear-ino-cache [--undo FILE] <device>\n\n"
	"    remove leftover items pertaining to the deprecated inode cache feature\n\n"
	UNDO_HELP;

static int clear_ino(struct fs *fs, void *ctx)
{
	uint64_t root = *(uint64_t *)ctx;
	struct fs_key from = { BTRFS_FREE_SPACE_OBJECTID, 0, 0 };
	struct fs_key to = { BTRFS_FREE_SPACE_OBJECTID, 255, UINT64_MAX };
	int ret = fs_inode_delete(fs, root, BTRFS_FREE_INO_OBJECTID);

	return ret ? ret : fs_items_delete_range(fs, root, &from, &to, NULL);
}

/* The subvolume with the smallest id >= id: 0 and *id, 1 none. */
static int next_fs_tree(struct fs *fs, uint64_t *id)
{
	struct fs_root r;
	struct fs_key k = { *id, BTRFS_ROOT_ITEM_KEY, 0 };
	struct fs_path p;
	int ret;

	if (fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &r))
		return -1;
	for (ret = fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		fs_path_key(&p, &k);
		if (k.type == BTRFS_ROOT_ITEM_KEY)
			break;
	}
	fs_path_release(fs, &p);
	if (ret)
		return ret;
	*id = k.objectid;
	return k.objectid == BTRFS_FS_TREE_OBJECTID ||
	       (k.objectid >= BTRFS_FIRST_FREE_OBJECTID && k.objectid <= BTRFS_LAST_FREE_OBJECTID) ? 0 : 1;
}

int rescue_clear_ino_cache_main(int argc, char **argv)
{
	const char *undo, *dev = device_arg(argc, argv, clear_ino_usage, &undo);
	struct fs *fs = open_rw(dev, undo, 0);
	uint64_t id = BTRFS_FS_TREE_OBJECTID;
	int ret = 0;

	while (fs && !(ret = next_fs_tree(fs, &id))) {
		ret = fs_tx_begin(fs);
		if (!ret && (ret = clear_ino(fs, &id)))
			fs_tx_abort(fs);
		if (!ret && !(ret = fs_tx_commit(fs)))
			printf("Successfully cleaned up ino cache for root id: %llu\n", (unsigned long long)id);
		if (ret)
			break;
		id = id == BTRFS_FS_TREE_OBJECTID ? BTRFS_FIRST_FREE_OBJECTID : id + 1;
	}
	if (!fs || close_rw(fs, ret < 0 ? ret : 0, "failed to clear ino cache"))
		return 1;
	printf("Successfully cleared ino cache\n");
	return 0;
}

/* ---- chunk-recover ---------------------------------------------------------- */

static const char chunk_recover_usage[] =
	"usage: btrfs rescue chunk-recover [options] <device>\n\n"
	"    Recover the chunk tree by scanning the devices one by one.\n\n"
	"    -y                 assume an answer of `yes' to all questions\n"
	"    -v                 verbose\n";

int rescue_chunk_recover_main(int argc, char **argv)
{
	while (cli_getopt(argc, argv, "yvh", NULL, chunk_recover_usage) != -1)
		;
	cli_check_argc(argc, 1, 1, chunk_recover_usage);
	msg_error("chunk-recover is not supported: btrfsbox does not rebuild the chunk tree, nothing was written");
	return 1;
}

/* ---- undo --------------------------------------------------------------------- */

static const char undo_usage[] =
	"usage: btrfs rescue undo <file> <device> [<device>...]\n\n"
	"    Put a filesystem back exactly as it was before a command that was run with\n"
	"    --undo <file>. Refused when the filesystem changed since, or when the devices\n"
	"    are not the ones the file was written for (give every device of the filesystem).\n";

int rescue_undo_main(int argc, char **argv)
{
	struct fs_error err;
	uint64_t n;
	char buf[320];

	cli_no_options(argc, argv, 2, -1, undo_usage);
	if (fs_undo_restore(argv[optind], (const char *const *)argv + optind + 1, argc - optind - 1,
			    &n, &err)) {
		msg_error("%s", fs_error_format(&err, buf, sizeof(buf)));
		if (n)
			msg_error("the restore stopped after %llu ranges: run it again", (unsigned long long)n);
		return 1;
	}
	printf("Restored %llu ranges from %s\n", (unsigned long long)n, argv[optind]);
	return 0;
}

/* ---- create-control-device ------------------------------------------------------ */

static const char control_usage[] =
	"usage: btrfs rescue create-control-device\n\n"
	"    Create /dev/btrfs-control (see 'CONTROL DEVICE' in btrfs(5))\n";

int rescue_control_main(int argc, char **argv)
{
	cli_no_options(argc, argv, 0, 0, control_usage);
	if (mknod("/dev/btrfs-control", S_IFCHR | S_IRUSR | S_IWUSR, makedev(10, 234))) {
		msg_error("could not create /dev/btrfs-control: %m");
		return 1;
	}
	return 0;
}
#endif
