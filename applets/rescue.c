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
//config:	bool "btrfs rescue chunk-recover"
//config:	default y
//config:	depends on APPLET_BTRFS && CHECK_REPAIR
//config:	help
//config:	  Rebuild a lost or damaged chunk tree from what a scan of the
//config:	  devices finds (block groups, device extents, chunk items), then
//config:	  repair what the check finds, in one transaction.
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
//config:
//config:config APPLET_SELECT_SUPER
//config:	bool "btrfs-select-super"
//config:	default y
//config:	help
//config:	  btrfs-select-super -s N DEVICE: superblock copy N written over the
//config:	  others (the primary too), on every device of the filesystem.
//cmd:APPLET_SELECT_SUPER select_super_main btrfs-select-super|Overwrite primary superblock by selected copy
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
	CFG_RESCUE_CLEAR_UUID_TREE || CFG_RESCUE_CLEAR_SPACE_CACHE || CFG_RESCUE_CLEAR_INO_CACHE || \
	CFG_APPLET_SELECT_SUPER
#include "fs/repair/repair.h"
#include "fs/write/write.h"
#include "util/cli/cli.h"
#include "util/le.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char usage[600];

/* The usage of a command: "usage: btrfs rescue NAME ARGS", its description, the options. */
static const char *usage_of(const char *name, const char *args, const char *desc, const char *opts)
{
	snprintf(usage, sizeof(usage), "usage: btrfs rescue %s %s\n\n    %s\n\n%s"
		 "    --undo FILE  save what is overwritten to FILE (btrfs rescue undo puts it back)\n",
		 name, args, desc, opts);
	return usage;
}

/* Options (opts: short ones, plus --undo) and nargs arguments; returns the first. */
static int parse(int argc, char **argv, const char *opts, int nargs, const char **undo, int *flags)
{
	int c;

	*undo = NULL;
	while ((c = cli_getopt_long(argc, argv, opts, "undo:=U", usage)) != -1)
		if (c == 'U')
			*undo = optarg;
		else
			*flags |= c == 'y' ? 1 : 2;
	cli_check_argc(argc, nargs, nargs, usage);
	return optind;
}

/* Opens dev (and the rest of its filesystem) for writing, from superblock copy mirror
 * (-1: the primary, else a good copy); prints why not. super_only: the chunk and root
 * trees are not needed. */
static struct fs *open_rw(const char *dev, const char *undo, int super_only, int mirror)
{
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;
	char buf[320];

	fs_wopen_opts_init(&o);
	o.open.partial = o.open.skip_chunk_tree = super_only;
	o.open.super_mirror = mirror;
	fs = fs_wopen(&dev, 1, &o, &err);
	if (fs && undo && fs_undo_start(fs, undo)) {
		err = fs->err;
		fs_wclose(fs);
		fs = NULL;
	}
	if (!fs)
		msg_error(err.code == -EBUSY ? "%s" : "could not open ctree: %s", fs_error_format(&err, buf, sizeof(buf)));
	return fs;
}

/* Closes, reporting what went wrong (ret) or the error of closing. 0 or 1. */
static int close_rw(struct fs *fs, int ret, const char *what)
{
	char buf[320];
	int closed;

	if (ret)
		msg_error("%s: %s", what, fs_error_format(&fs->err, buf, sizeof(buf)));
	closed = fs_wclose(fs);
	if (closed && !ret)
		msg_error("cannot close the undo file: %s", strerror(-closed));
	return ret || closed;
}

/* A command of one device whose whole work is change() in a transaction. */
static int tx_command(int argc, char **argv, const char *name, const char *desc,
		      int (*change)(struct fs *fs, void *ctx), const char *what)
{
	const char *undo, *dev;
	struct fs *fs;
	int flags = 0;

	usage_of(name, "[--undo FILE] <device>", desc, "");
	dev = argv[parse(argc, argv, "", 1, &undo, &flags)];
	fs = open_rw(dev, undo, 0, -1);
	return fs ? close_rw(fs, fs_tx_run(fs, change, NULL), what) : 1;
}

/* ---- zero-log --------------------------------------------------------------- */

int rescue_zero_log_main(int argc, char **argv)
{
	const char *undo, *dev;
	struct fs *fs;
	int flags = 0;

	usage_of("zero-log", "[--undo FILE] <device>", "Clear the tree log. Usable if it's corrupted and prevents mount.", "");
	dev = argv[parse(argc, argv, "", 1, &undo, &flags)];
	fs = open_rw(dev, undo, 1, -1);
	if (!fs)
		return 1;
	printf("Clearing log on %s, previous log_root %llu, level %u\n", dev,
	       (unsigned long long)get_le64(&fs->sb.log_root), fs->sb.log_root_level);
	put_le64(&fs->sb.log_root, 0);
	fs->sb.log_root_level = 0;
	return close_rw(fs, fs_super_commit(fs), "failed to write dev supers");
}

/* ---- super-recover ---------------------------------------------------------- */

/* Every copy of every device (up to 16): state 0 absent, 1 bad (invalid or older than
 * the newest), 2 good. Returns how many are bad; prints them when asked. */
static int copies(struct fs *fs, uint8_t *state, int print)
{
	uint64_t gen[48], max = 0;
	int n = fs->num_devs < 16 ? 3 * fs->num_devs : 48, bad = 0;

	for (int i = 0; i < n; i++) {
		struct btrfs_super_block sb;
		int ret = fs_super_read_fd(fs->devs[i / 3].fd, i % 3, &sb, NULL);

		gen[i] = ret ? 0 : get_le64(&sb.generation);
		state[i] = ret != -ENOENT;
		max = gen[i] > max ? gen[i] : max;
	}
	for (int i = 0; i < n; i++)
		bad += state[i] && (state[i] += gen[i] == max) == 1;
	for (int good = 2; print && good; good--) {
		printf("\t[All %s supers]:\n", good == 2 ? "good" : "bad");
		for (int i = 0; i < n; i++)
			if (state[i] == good)
				printf("\t\tdevice name = %s\n\t\tsuperblock bytenr = %llu\n\n", fs->devs[i / 3].path,
				       (unsigned long long)btrfs_super_offset(i % 3));
	}
	return bad;
}

int rescue_super_recover_main(int argc, char **argv)
{
	static const char *const result[] = { "All supers are valid, no need to recover",
		"Usage or syntax errors", "Recovered bad superblocks successful",
		"Failed to recover bad superblocks", "Aborted to recover bad superblocks" };
	const char *undo;
	uint8_t state[48];
	struct fs *fs;
	int flags = 0, ret = 1, bad;

	usage_of("super-recover", "[options] <device>", "Recover bad superblocks from good copies",
		 "    -y           assume an answer of `yes' to all questions\n"
		 "    -v           list the devices and the good and bad copies\n");
	fs = open_rw(argv[parse(argc, argv, "yv", 1, &undo, &flags)], NULL, 1, -1);  /* the undo file once asked */
	if (fs && flags & 2) {
		printf("All Devices:\n");
		for (int i = 0; i < fs->num_devs; i++)
			printf("\tDevice: id = %llu, name = %s\n", (unsigned long long)fs->devs[i].devid, fs->devs[i].path);
		printf("\nBefore Recovering:\n");
	}
	bad = fs ? copies(fs, state, flags & 2) : 0;
	if (fs && flags & 2)
		printf("\n");
	if (fs && !bad)
		ret = 0;
	else if (fs && !(flags & 1) && !isatty(STDIN_FILENO))
		msg_error("not asking without a terminal: use -y to recover"), ret = 4;
	else if (fs && !(flags & 1) && (printf("Make sure this is a btrfs disk otherwise the tool will destroy "
					       "other fs, Are you sure? [y/N]: "), fflush(stdout), tolower(getchar()) != 'y'))
		ret = 4;
	else if (fs)
		ret = (undo && fs_undo_start(fs, undo)) || fs_super_adopt_newest(fs) || fs_super_commit(fs) ? 3 : 2;
	if (fs && close_rw(fs, ret == 3, "cannot write the superblocks"))
		ret = 3;
	printf("%s\n", result[ret]);
	return ret;
}

/* ---- btrfs-select-super ------------------------------------------------------------ */

#if CFG_APPLET_SELECT_SUPER
USAGE(select_super_usage) =
	"usage: btrfs-select-super -s number dev\n\n"
	"    Overwrite primary superblock by selected copy\n\n"
	"    -s super     copy of superblock to overwrite the primary one (values: 1, 2)\n"
	"    --undo FILE  save what is overwritten to FILE (btrfs rescue undo puts it back)\n";

int select_super_main(int argc, char **argv)
{
	const char *undo = NULL;
	uint64_t num = 0;
	struct fs *fs;
	int c, have = 0;

	while ((c = cli_getopt_long(argc, argv, "s:", "undo:=U", select_super_usage)) != -1) {
		if (c == 'U') {
			undo = optarg;
			continue;
		}
		num = cli_arg_u64(optarg);
		if (num >= BTRFS_SUPER_MIRRORS) {
			msg_error("super mirror should be less than: %d", BTRFS_SUPER_MIRRORS);
			return 1;
		}
		have = 1;
	}
	cli_check_argc(argc, 1, 1, select_super_usage);
	if (!have)
		cli_usage_error(select_super_usage, "please select the super copy with -s");
	fs = open_rw(argv[optind], undo, 1, (int)num);
	if (!fs)
		return 1;
	if (close_rw(fs, fs_super_commit(fs), "cannot write the superblocks"))
		return 1;
	printf("using SB copy %llu, bytenr %llu\n", (unsigned long long)num,
	       (unsigned long long)btrfs_super_offset((int)num));
	return 0;
}
#endif

/* ---- fix-device-size ------------------------------------------------------------ */

/* The size device d should have: 0 when it is right, ~0 when it cannot be fixed (device
 * extents past the end of the device). */
static uint64_t right_size(struct fs *fs, struct fs_device *d)
{
	uint64_t ss = fs->sectorsize, real = fs_fd_size(d->fd) / ss * ss;
	struct fs_key k = { d->devid, BTRFS_DEV_EXTENT_KEY, UINT64_MAX };
	const struct btrfs_dev_extent *de;
	struct fs_root r;
	struct fs_path p;
	uint32_t size;
	int ret;

	if (d->total_bytes % ss)
		return d->total_bytes / ss * ss;
	if (d->total_bytes <= real)
		return 0;
	ret = fs_root_lookup(fs, BTRFS_DEV_TREE_OBJECTID, &r);
	if (!ret && !(ret = fs_search_le(fs, &r, &k, &p))) {
		de = (const void *)fs_path_data(&p, &size);
		de = fs_dev_extent_item(de, size);
		ret = !de || k.offset + get_le64(&de->length) > real;
		fs_path_release(fs, &p);
	}
	if (ret && ret != -ENOENT) {
		msg_error("found dev extents covering or beyond bytenr %llu, can not shrink the device without losing data",
			  (unsigned long long)real);
		return ~0ULL;
	}
	return real;
}

static int set_sizes(struct fs *fs, void *ctx)
{
	const uint64_t *want = ctx;
	int ret = 0;

	for (int i = 0; i < fs->num_devs && !ret; i++)
		if (want[i])
			ret = fs_device_resize(fs, &fs->devs[i], want[i]);
	put_le64(&fs->sb.total_bytes, want[64]);
	return ret;
}

int rescue_fix_device_size_main(int argc, char **argv)
{
	uint64_t want[65] = { 0 }, old;
	const char *undo, *dev;
	struct fs *fs;
	int flags = 0, change = 0;

	usage_of("fix-device-size", "[--undo FILE] <device>", "Re-align device and super block sizes. "
		 "Usable if newer kernel refuse to mount it due to mismatch super size", "");
	dev = argv[parse(argc, argv, "", 1, &undo, &flags)];
	fs = open_rw(dev, undo, 0, -1);
	for (int i = 0; fs && i < fs->num_devs && i < 64; i++) {
		if ((want[i] = right_size(fs, &fs->devs[i])) == ~0ULL)
			return close_rw(fs, 0, NULL) | 1;
		change |= !!want[i];
		want[64] += want[i] ? want[i] : fs->devs[i].total_bytes;
	}
	if (!fs)
		return 1;
	old = get_le64(&fs->sb.total_bytes);
	if (!change && want[64] == old) {
		printf("No device size related problem found\n");
		return close_rw(fs, 0, NULL);
	}
	if (fs_tx_run(fs, set_sizes, want))
		return close_rw(fs, 1, "failed to fix the device sizes");
	for (int i = 0; i < fs->num_devs && i < 64; i++)
		if (want[i])
			printf("Fixed device size for devid %llu, old size: %llu new size: %llu\n",
			       (unsigned long long)fs->devs[i].devid, (unsigned long long)fs->devs[i].total_bytes,
			       (unsigned long long)want[i]);
	if (want[64] != old)
		printf("Fixed super total bytes, old size: %llu new size: %llu\n", (unsigned long long)old,
		       (unsigned long long)want[64]);
	printf("Fixed unaligned/mismatched total_bytes for super block and device items\n");
	return close_rw(fs, 0, NULL);
}

/* ---- clear-uuid-tree -------------------------------------------------------------- */

static int clear_uuid(struct fs *fs, void *ctx)
{
	struct fs_root r;

	(void)ctx;
	return fs_root_lookup(fs, BTRFS_UUID_TREE_OBJECTID, &r) ? 0 : fs_tree_delete(fs, BTRFS_UUID_TREE_OBJECTID);
}

int rescue_clear_uuid_tree_main(int argc, char **argv)
{
	return tx_command(argc, argv, "clear-uuid-tree", "Delete uuid tree so that kernel can rebuild it at mount time",
			  clear_uuid, "failed to clear the uuid tree");
}

/* ---- clear-space-cache ------------------------------------------------------------ */

/* v1: the cache of each block group goes (fs_space_cache_v1_clear). */
static int clear_v1(struct fs *fs, void *ctx)
{
	(void)ctx;
	return fs_space_cache_v1_clear(fs);
}

/* v2: the free space tree goes; with the block group tree (the kernel needs both), a
 * new one is made from the extent tree. */
static int clear_v2(struct fs *fs, void *ctx)
{
	uint64_t ro = get_le64(&fs->sb.compat_ro_flags);

	(void)ctx;
	put_le64(&fs->sb.compat_ro_flags, ro & ~(uint64_t)(BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE |
							   BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID));
	return ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE ? fs_fst_rebuild(fs) :
	       fs_tree_delete(fs, BTRFS_FREE_SPACE_TREE_OBJECTID);
}

int rescue_clear_space_cache_main(int argc, char **argv)
{
	const char *undo, *version;
	struct fs *fs;
	uint64_t ro;
	int flags = 0, at, v1, ret;

	usage_of("clear-space-cache", "[--undo FILE] (v1|v2) <device>", "completely remove the v1 or v2 free space cache "
		 "(v2 with the block group tree: made anew, the kernel needs it)", "");
	at = parse(argc, argv, "", 2, &undo, &flags);
	version = argv[at];
	v1 = !strcasecmp(version, "v1");
	if (!v1 && strcasecmp(version, "v2")) {
		msg_error("invalid version string, has \"%s\" expect \"v1\" or \"v2\"", version);
		return 1;
	}
	fs = open_rw(argv[at + 1], undo, 0, -1);
	if (!fs)
		return 1;
	ro = get_le64(&fs->sb.compat_ro_flags);
	if (v1 && ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)
		msg_warn("free space cache v2 detected, use --clear-space-cache v2, proceeding with clearing v1");
	if (!v1 && !(ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)) {
		printf("no free space cache v2 to clear\n");
		return close_rw(fs, 0, NULL);
	}
	if (!v1)
		printf("Clear free space cache v2\n");
	ret = close_rw(fs, fs_tx_run(fs, v1 ? clear_v1 : clear_v2, NULL), "failed to clear free space cache");
	if (!ret)
		printf(v1 ? "Free space cache cleared\n" : ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE ?
		       "free space cache v2 cleared and made anew (the block group tree needs one)\n" :
		       "free space cache v2 cleared\n");
	return ret;
}

/* ---- clear-ino-cache -------------------------------------------------------------- */

/* The ino cache of each subvolume: its inode (and the data extents it used) and the
 * free space header, all at objectids -12 and -11. A transaction per subvolume. */
static int clear_ino(struct fs *fs, void *ctx)
{
	struct fs_key from = { BTRFS_FREE_SPACE_OBJECTID, 0, 0 }, to = { BTRFS_FREE_SPACE_OBJECTID, 255, UINT64_MAX };
	struct fs_key k = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret = 0;

	(void)ctx;
	while (!ret) {
		ret = fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &r);
		for (ret = ret ? ret : fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
			fs_path_key(&p, &k);
			if (k.type == BTRFS_ROOT_ITEM_KEY)
				break;
		}
		fs_path_release(fs, &p);
		if (ret || (k.objectid != BTRFS_FS_TREE_OBJECTID &&
			    (k.objectid < BTRFS_FIRST_FREE_OBJECTID || k.objectid > BTRFS_LAST_FREE_OBJECTID)))
			break;
		ret = fs_inode_delete(fs, k.objectid, BTRFS_FREE_INO_OBJECTID);
		if (!ret)
			ret = fs_items_delete_range(fs, k.objectid, &from, &to, NULL);
		if (!ret && !(ret = fs_tx_commit(fs)))
			printf("Successfully cleaned up ino cache for root id: %llu\n", (unsigned long long)k.objectid);
		if (!ret)
			ret = fs_tx_begin(fs);
		k = (struct fs_key){ k.objectid == BTRFS_FS_TREE_OBJECTID ? BTRFS_FIRST_FREE_OBJECTID : k.objectid + 1,
				     BTRFS_ROOT_ITEM_KEY, 0 };
	}
	return ret < 0 ? ret : 0;
}

int rescue_clear_ino_cache_main(int argc, char **argv)
{
	int ret = tx_command(argc, argv, "clear-ino-cache",
			     "remove leftover items pertaining to the deprecated inode cache feature", clear_ino,
			     "failed to clear ino cache");

	if (!ret)
		printf("Successfully cleared ino cache\n");
	return ret;
}

/* ---- chunk-recover, undo, create-control-device ------------------------------------ */

#if CFG_RESCUE_CHUNK_RECOVER
static void chunk_fixed(void *ctx, const char *what)
{
	if (*(int *)ctx)
		printf("%s\n", what);
}

int rescue_chunk_recover_main(int argc, char **argv)
{
	struct repair_opts ro = { .rebuild_chunks = 1, .fixed = chunk_fixed };
	struct repair_chunks found;
	struct repair_result r;
	struct fs_wopen_opts o;
	struct fs_error err;
	const char *undo, *dev;
	struct fs *fs;
	char buf[320];
	int flags = 0, ret;

	usage_of("chunk-recover", "[options] <device>", "Recover the chunk tree by scanning the devices one by one.",
		 "    -y           Assume an answer of `yes' to all questions\n"
		 "    -v           Verbose mode\n");
	dev = argv[parse(argc, argv, "yv", 1, &undo, &flags)];
	ro.check.ctx = &(int){ flags & 2 };
	fs_wopen_opts_init(&o);
	fs = repair_open_chunks(&dev, 1, &o, &found, &err);
	if (!fs) {
		msg_error("chunk tree recovery failed: %s", fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	printf("Scanning: DONE in dev0\n%d chunks from their items, %d made from block groups and device extents, "
	       "%d block groups lost\n", found.from_items, found.made, found.lost);
	if (!(flags & 1) && (printf("Rebuild the chunk tree of %s from them? [y/N]: ", dev), fflush(stdout),
			     tolower(getchar()) != 'y')) {
		fs_wclose(fs);
		return 1;
	}
	ret = undo ? fs_undo_start(fs, undo) : 0;
	if (!ret)
		ret = repair_fs(fs, &ro, &r);
	if (!ret && !r.written)
		ret = fs_err(&fs->err, -EUCLEAN, "the check finds errors the chunk tree made anew would not fix");
	if (close_rw(fs, ret, "chunk tree recovery failed"))
		return 1;
	printf("Chunk tree recovered successfully\n");
	return 0;
}
#endif

int rescue_undo_main(int argc, char **argv)
{
	static const char undo_usage[] =
		"usage: btrfs rescue undo <file> <device> [<device>...]\n\n"
		"    Put a filesystem back exactly as it was before a command run with --undo <file>:\n"
		"    refused when it changed since, or for devices the file was not written for.\n";
	struct fs_error err;
	uint64_t n;
	char buf[320];

	cli_no_options(argc, argv, 2, -1, undo_usage);
	if (fs_undo_restore(argv[optind], (const char *const *)argv + optind + 1, argc - optind - 1, &n, &err)) {
		msg_error("%s", fs_error_format(&err, buf, sizeof(buf)));
		if (n)
			msg_error("the restore stopped after %llu ranges: run it again", (unsigned long long)n);
		return 1;
	}
	printf("Restored %llu ranges from %s\n", (unsigned long long)n, argv[optind]);
	return 0;
}

int rescue_control_main(int argc, char **argv)
{
	cli_no_options(argc, argv, 0, 0, "usage: btrfs rescue create-control-device\n\n"
		       "    Create /dev/btrfs-control (see 'CONTROL DEVICE' in btrfs(5))\n");
	if (mknod("/dev/btrfs-control", S_IFCHR | S_IRUSR | S_IWUSR, makedev(10, 234))) {
		msg_error("could not create /dev/btrfs-control: %m");
		return 1;
	}
	return 0;
}
#endif
