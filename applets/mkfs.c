/* mkfs.btrfs: create a btrfs filesystem on one or more devices or image files. */
//config:config APPLET_MKFS
//config:	bool "mkfs.btrfs"
//config:	default y
//config:	help
//config:	  mkfs.btrfs: create a btrfs filesystem (profiles, checksums, features,
//config:	  several devices, --rootdir image building).
//config:
//config:config MKFS_ROOTDIR
//config:	bool "mkfs.btrfs --rootdir (build an image from a directory)"
//config:	default y
//config:	depends on APPLET_MKFS
//config:	help
//config:	  Populate the new filesystem from a directory (--rootdir, --shrink,
//config:	  --compress, --subvol, --inode-flags): for building firmware and disk
//config:	  images.
//config:
//config:config MKFS_THREADS
//config:	bool "mkfs.btrfs --rootdir on two cores"
//config:	default y
//config:	depends on MKFS_ROOTDIR
//config:	help
//config:	  The data of --rootdir is written into the image on a second thread
//config:	  while the next piece is read (4 MiB more memory). BTRFSBOX_THREADS=1
//config:	  keeps it to one thread.
//config:
//config:config MKFS_QUOTA
//config:	bool "mkfs.btrfs -O quota, squota"
//config:	default y
//config:	depends on APPLET_MKFS
//config:	help
//config:	  Make filesystems with quota groups or simple quotas enabled.
//cmd:APPLET_MKFS mkfs_main mkfs.btrfs|mkfs.btrfs
#include "config.h"
#if CFG_APPLET_MKFS
#include "fs/core/fs.h"
#include "fs/mkfs/alloc.h"
#include "fs/mkfs/mkfs.h"
#include "util/cli/cli.h"
#include "util/cli/units.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/strnum.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include "util/workq.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <time.h>
#include <unistd.h>

#if CFG_MKFS_ROOTDIR
#define ROOTDIR_USAGE \
"\t-r|--rootdir DIR        copy files from DIR to the image root directory\n" \
"\t--shrink                (with --rootdir) shrink the filled filesystem to minimal size\n" \
"\t--compress ALGO[:LEVEL] (with --rootdir) compress file data: no (default), zlib (levels 1..9),\n" \
"\t                        lzo, zstd (levels 1..15); the default level is 3\n" \
"\t-u|--subvol [TYPE:]DIR  (with --rootdir) make DIR a subvolume; TYPE rw (default), ro,\n" \
"\t                        default or default-ro (also the default subvolume; once)\n" \
"\t--inode-flags FLAGS:PATH\n" \
"\t                        (with --rootdir) set nodatacow (implies nodatasum for files)\n" \
"\t                        and/or nodatasum on PATH\n"
#else
#define ROOTDIR_USAGE
#endif

USAGE(usage) =
"Usage: mkfs.btrfs [options] <dev> [<dev...>]\n"
"Create a BTRFS filesystem on a device or partition\n"
"\n"
"Options:\n"
"  allocation profiles:\n"
"\t-d|--data PROFILE       data profile, raid0, raid1, raid1c3, raid1c4, raid5, raid6, raid10, dup or single\n"
"\t-m|--metadata PROFILE   metadata profile, values like for data profile\n"
"\t-M|--mixed              mix metadata and data together (suggested up to 1GiB)\n"
"  features:\n"
"\t--csum TYPE\n"
"\t--checksum TYPE         checksum algorithm to use, crc32c (default), xxhash, sha256, blake2\n"
"\t-n|--nodesize SIZE      size of btree nodes (4KiB..64KiB, power of two)\n"
"\t-s|--sectorsize SIZE    data block size (default 4KiB, may not be mountable by current kernel\n"
"\t                        if CPU page size is different)\n"
"\t-O|--features LIST      comma separated list of filesystem features (use '-O list-all' to list features)\n"
"\t                        default: extref, skinny-metadata, no-holes, free-space-tree, block-group-tree;\n"
"\t                        the block-group-tree needs kernel 6.1+: '-O ^block-group-tree' makes a\n"
"\t                        filesystem that older kernels mount\n"
"\t-R|--runtime-features LIST\n"
"\t                        comma separated list of runtime features (use '-R list-all' to list runtime features)\n"
"\t-L|--label LABEL        set the filesystem label\n"
"\t-U|--uuid UUID          specify the filesystem UUID (must be unique)\n"
"\t--device-uuid UUID      specify the device UUID (single device)\n"
"  creation:\n"
"\t-b|--byte-count SIZE    set size of each device to SIZE (filesystem size is sum of all device sizes)\n"
ROOTDIR_USAGE
"\t-K|--nodiscard          do not perform whole device TRIM\n"
"\t-f|--force              force overwrite of existing filesystem\n"
"  general:\n"
"\t-q|--quiet              no messages except errors\n"
"\t-v|--verbose            increase verbosity level, default is 1\n"
"\t-V|--version            print the mkfs.btrfs version and exit\n"
"\t--help                  print this help and exit\n"
"\n"
"Reproducible images: with -U, --device-uuid and SOURCE_DATE_EPOCH set, the output\n"
"is the same for the same input.\n";

/* ---- features ---- */

struct feature {
	const char *name;
	uint64_t incompat, compat_ro;
	int runtime;            /* listed under -R (free-space-tree also under -O) */
	const char *desc;
};

static const struct feature features[] = {
	{ "mixed-bg", BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS, 0, 0,
	  "mixed data and metadata block groups (compat=2.6.37, safe=2.6.37)" },
#if CFG_MKFS_QUOTA
	{ "quota", 0, 0, 2, "quota support (qgroups) (compat=3.4)" },
#endif
	{ "extref", BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF, 0, 0,
	  "increased hardlink limit per file to 65536 (compat=3.7, safe=3.12, default=3.12)" },
	{ "raid56", BTRFS_FEATURE_INCOMPAT_RAID56, 0, 0, "raid56 extended format (compat=3.9)" },
	{ "skinny-metadata", BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA, 0, 0,
	  "reduced-size metadata extent refs (compat=3.10, safe=3.18, default=3.18)" },
	{ "no-holes", BTRFS_FEATURE_INCOMPAT_NO_HOLES, 0, 0,
	  "no explicit hole extents for files (compat=3.14, safe=4.0, default=5.15)" },
	{ "free-space-tree", 0, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE |
	  BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID, 1,
	  "free space tree (space_cache=v2) (compat=4.5, safe=4.9, default=5.15)" },
	{ "raid1c34", BTRFS_FEATURE_INCOMPAT_RAID1C34, 0, 0, "RAID1 with 3 or 4 copies (compat=5.5)" },
	{ "block-group-tree", 0, BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE, 0,
	  "block group tree to reduce mount time (compat=6.1, safe=6.6, default=6.19)" },
#if CFG_MKFS_QUOTA
	{ "squota", BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT, 0, 0,
	  "squota support (simple accounting qgroups) (compat=6.7)" },
#endif
};
#define NFEATURES (sizeof(features) / sizeof(features[0]))

/* Defaults as mkfs.btrfs 6.19: extref, skinny-metadata, no-holes, the free space
 * tree and the block group tree (mountable by kernels 6.1 and newer). */
#define DEFAULT_INCOMPAT (BTRFS_FEATURE_INCOMPAT_MIXED_BACKREF | BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF | \
			  BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA | BTRFS_FEATURE_INCOMPAT_NO_HOLES)
#define DEFAULT_COMPAT_RO (BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE | \
			   BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID | \
			   BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE)

/* -O lists all (as 6.19), -R the runtime ones (as 6.2). */
static void list_features(int runtime)
{
	fprintf(stderr, "%s features available:\n", runtime ? "Runtime" : "Filesystem");
	for (size_t i = 0; i < NFEATURES; i++)
		if (!runtime || features[i].runtime)
			fprintf(stderr, "%-20s- %s\n", features[i].name, features[i].desc);
}

/* Applies "a,^b,..." to the feature bits. Returns 0, 1 after list-all, -1 on error. */
static int parse_features(char *list, int runtime, struct mkfs_config *cfg)
{
	char *save = NULL;

	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int off = *tok == '^';
		const char *name = tok + off;
		size_t i;

		if (!strcmp(name, "list-all")) {
			list_features(runtime);
			return 1;
		}
		for (i = 0; i < NFEATURES; i++)
			if (!strcmp(features[i].name, name) && (!runtime || features[i].runtime))
				break;
		if (i == NFEATURES) {
			msg_error("unrecognized %s feature '%s'", runtime ? "runtime" : "filesystem", tok);
			return -1;
		}
		if (features[i].runtime == 2) {     /* quota: no superblock bit */
			cfg->quota = off ? 0 : MKFS_QUOTA;
			continue;
		}
		if (off) {
			cfg->incompat &= ~features[i].incompat;
			cfg->compat_ro &= ~features[i].compat_ro;
		} else {
			cfg->incompat |= features[i].incompat;
			cfg->compat_ro |= features[i].compat_ro;
		}
	}
	return 0;
}

static void features_string(const struct mkfs_config *cfg, int runtime, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NFEATURES; i++) {
		const struct feature *f = &features[i];
		if ((f->runtime != 0) != runtime)
			continue;
		if ((f->incompat && (cfg->incompat & f->incompat)) ||
		    (f->compat_ro && (cfg->compat_ro & f->compat_ro)) ||
		    (f->runtime == 2 && cfg->quota == MKFS_QUOTA))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", f->name);
	}
}

/* ---- option values ---- */

/* A profile by its name in any case ("single", "dup", "raid1c3", ...). */
static int parse_profile(const char *s, uint64_t *out)
{
	/* the profile bits are RAID0..RAID1C4; the bit below them stands for single (0) */
	for (uint64_t bit = BTRFS_BLOCK_GROUP_RAID0 >> 1; bit <= BTRFS_BLOCK_GROUP_RAID1C4; bit <<= 1)
		if (!strcasecmp(s, fs_profile_name(bit & BTRFS_BLOCK_GROUP_PROFILE_MASK))) {
			*out = bit & BTRFS_BLOCK_GROUP_PROFILE_MASK;
			return 0;
		}
	return -1;
}


/* ---- safety ---- */

static int bytes_at(int fd, uint64_t off, void *buf, size_t len)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Name of the filesystem or partition table found on fd, or NULL. */
static const char *existing_signature(int fd, uint64_t size)
{
	uint8_t b[4096];

	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
		uint64_t off = btrfs_super_offset(m);
		if (off + BTRFS_SUPER_SIZE <= size && bytes_at(fd, off + 64, b, 8) &&
		    get_le64(b) == BTRFS_MAGIC_LE)
			return m ? "btrfs (a superblock copy)" : "btrfs";
	}
	if (!bytes_at(fd, 0, b, sizeof(b)))
		return NULL;
	if (!memcmp(b, "LUKS\xba\xbe", 6))
		return "crypto_LUKS";
	if (!memcmp(b, "XFSB", 4))
		return "xfs";
	if (!memcmp(b + 4086, "SWAPSPACE2", 10) || !memcmp(b + 4086, "SWAP-SPACE", 10))
		return "swap";
	if (get_le16(b + 1024 + 56) == 0xEF53)
		return "ext2/ext3/ext4";
	if (!memcmp(b + 512, "EFI PART", 8))
		return "a GPT partition table";
	if (b[510] == 0x55 && b[511] == 0xAA) {
		if (!memcmp(b + 54, "FAT", 3) || !memcmp(b + 82, "FAT32", 5))
			return "vfat";
		return "a DOS (MBR) partition table";
	}
	return NULL;
}

/* Device numbers that stand for the target: the block device itself, or the loop
 * devices backed by an image file. Returns how many (at most max). */
static int target_devs(const char *path, const struct stat *st, dev_t *out, int max)
{
	char real[PATH_MAX], sys[PATH_MAX], line[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (S_ISBLK(st->st_mode)) {
		out[0] = st->st_rdev;
		return 1;
	}
	if (!realpath(path, real) || !(d = opendir("/sys/block")))
		return 0;
	while (n < max && (de = readdir(d))) {
		FILE *f;
		int match;
		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(sys, sizeof(sys), "/sys/block/%s/loop/backing_file", de->d_name);
		if (!(f = fopen(sys, "r")))
			continue;
		match = fgets(line, sizeof(line), f) &&
			(line[strcspn(line, "\n")] = 0, !strcmp(line, real));
		fclose(f);
		snprintf(sys, sizeof(sys), "/sys/block/%s/dev", de->d_name);
		if (match && !sysfile_read_devnum(sys, &out[n]))
			n++;
	}
	closedir(d);
	return n;
}

static int dev_in(dev_t dev, const dev_t *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i] == dev)
			return 1;
	return 0;
}

struct dev_set {
	const dev_t *devs;
	int n;
};

/* Whether the mount's source is a block device of the set. */
static int mount_on_devs(const struct sys_mount *m, void *ctx)
{
	const struct dev_set *d = ctx;
	struct stat ms;

	return m->source[0] == '/' && !stat(m->source, &ms) && S_ISBLK(ms.st_mode) &&
	       dev_in(ms.st_rdev, d->devs, d->n);
}

/* Whether the target is mounted, or a member of a mounted btrfs (every device of a
 * mounted btrfs is listed under /sys/fs/btrfs/FSID/devices). */
static int is_mounted(const char *path, const struct stat *st)
{
	dev_t devs[16];
	struct dev_set set = { devs, target_devs(path, st, devs, 16) };
	int found;
	DIR *fsd;

	if (!set.n)
		return 0;
	found = sysfile_each_mount(mount_on_devs, &set) > 0;
	if (!found && (fsd = opendir("/sys/fs/btrfs"))) {
		struct dirent *fe;
		while (!found && (fe = readdir(fsd))) {
			char dir[PATH_MAX];
			struct dirent *de;
			DIR *dd;
			snprintf(dir, sizeof(dir), "/sys/fs/btrfs/%s/devices", fe->d_name);
			if (fe->d_name[0] == '.' || !(dd = opendir(dir)))
				continue;
			while (!found && (de = readdir(dd))) {
				char p[PATH_MAX + 300];
				dev_t dev;
				snprintf(p, sizeof(p), "%s/%s/dev", dir, de->d_name);
				found = de->d_name[0] != '.' && !sysfile_read_devnum(p, &dev) &&
					dev_in(dev, set.devs, set.n);
			}
			closedir(dd);
		}
		closedir(fsd);
	}
	return found;
}

static int rotational(const struct stat *st)
{
	char sys[128];
	FILE *f;
	int c = '1';

	if (!S_ISBLK(st->st_mode))
		return 1;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/queue/rotational", major(st->st_rdev),
		 minor(st->st_rdev));
	f = fopen(sys, "r");
	if (!f) {   /* a partition: its disk's queue */
		snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/../queue/rotational",
			 major(st->st_rdev), minor(st->st_rdev));
		f = fopen(sys, "r");
	}
	if (f) {
		c = fgetc(f);
		fclose(f);
	}
	return c != '0';
}

struct target {
	const char *path;
	int fd;
	struct stat st;
	uint64_t size;
};

/* create: a missing path becomes a new image file (with --rootdir). */
static int open_target(struct target *t, int force, int create)
{
	const char *sig;

	t->fd = open(t->path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
	if (t->fd < 0 || fstat(t->fd, &t->st)) {
		msg_error("unable to open %s: %s", t->path, strerror(errno));
		return -1;
	}
	if (is_mounted(t->path, &t->st)) {
		msg_error("%s is mounted", t->path);
		return -1;
	}
	if (S_ISBLK(t->st.st_mode)) {
		/* exclusive open fails while the kernel holds the device */
		int ex = open(t->path, O_RDWR | O_EXCL | O_CLOEXEC);
		if (ex < 0) {
			msg_error("unable to open %s exclusively: %s", t->path, strerror(errno));
			return -1;
		}
		close(t->fd);
		t->fd = ex;
		if (ioctl(t->fd, BLKGETSIZE64, &t->size)) {
			msg_error("unable to get the size of %s: %s", t->path, strerror(errno));
			return -1;
		}
	} else if (S_ISREG(t->st.st_mode)) {
		t->size = (uint64_t)t->st.st_size;
	} else {
		msg_error("%s is neither a block device nor a regular file", t->path);
		return -1;
	}
	if (!force && (sig = existing_signature(t->fd, t->size))) {
		msg_error("%s appears to contain an existing filesystem (%s)", t->path, sig);
		msg_error("use the -f option to force overwrite of %s", t->path);
		return -1;
	}
	return 0;
}

static int same_target(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) || S_ISBLK(b->st_mode))
		return S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode) && a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* TRIM what the filesystem will use of a block device (image files are left alone). */
static void discard_device(struct target *t, uint64_t size, int verbose)
{
	uint64_t range[2] = { 0, size };

	if (!S_ISBLK(t->st.st_mode))
		return;
	if (verbose)
		printf("Performing full device TRIM %s (%s) ...\n", t->path, pretty_size(size, UNITS_DEFAULT));
	ioctl(t->fd, BLKDISCARD, range);   /* best effort: not every device discards */
}

/* ---- main ---- */

#define MAX_PATH_OPTS 256

struct opts {
	struct mkfs_config cfg;
	int force, verbose, discard, nodesize_set, meta_set, data_set, dev_uuid_set, fsid_set;
	uint64_t byte_count;
	uint8_t dev_uuid[16];
	char *rootdir;
	/* --subvol and --inode-flags: paths below --rootdir, resolved by settle_options */
	struct mkfs_subvol_spec subvol[MAX_PATH_OPTS];
	const char *subvol_path[MAX_PATH_OPTS];
	struct mkfs_inode_flags iflags[MAX_PATH_OPTS];
	const char *iflags_path[MAX_PATH_OPTS];
	int nsubvols, niflags;
};

/* msg_error(fmt, val), -1 */
static int bad_value(const char *fmt, const char *val)
{
	msg_error(fmt, val);
	return -1;
}

static int parse_csum(const char *s)
{
	static const struct { const char *name; int type; } c[] = {
		{ "crc32c", CSUM_CRC32C }, { "xxhash", CSUM_XXHASH }, { "xxhash64", CSUM_XXHASH },
		{ "sha256", CSUM_SHA256 }, { "blake2", CSUM_BLAKE2 }, { "blake2b", CSUM_BLAKE2 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (!strcasecmp(s, c[i].name))
			return csum_supported(c[i].type) ? -1 : c[i].type;
	return -1;
}

/* ALGO[:LEVEL] for --compress, as mkfs.btrfs 6.19: zlib 1..9, zstd 1..15, lzo only 1
 * (it has no levels); level 0 or none is the default (3). */
static int parse_compress(const char *arg, struct mkfs_config *cfg)
{
	static const struct { const char *name; int type, built, max_level; uint64_t incompat; } a[] = {
		{ "no", 0, 1, 0, 0 },
		{ "zlib", FS_COMPRESS_ZLIB, CFG_COMPRESS_ZLIB, FS_ZLIB_MAX_LEVEL, 0 },
		{ "lzo", FS_COMPRESS_LZO, CFG_COMPRESS_LZO, 1, BTRFS_FEATURE_INCOMPAT_COMPRESS_LZO },
		{ "zstd", FS_COMPRESS_ZSTD, CFG_COMPRESS_ZSTD, FS_ZSTD_MAX_LEVEL,
		  BTRFS_FEATURE_INCOMPAT_COMPRESS_ZSTD },
	};
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);

	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		uint64_t level = 0;
		if (strlen(a[i].name) != len || strncmp(arg, a[i].name, len) || (colon && !a[i].type))
			continue;
		if (!a[i].built) {
			msg_error("compression %s is not built in this configuration", a[i].name);
			return -1;
		}
		if (colon && cli_parse_u64(colon + 1, &level))
			return bad_value("invalid compression level: %s", colon + 1);
		if (level > (uint64_t)a[i].max_level) {
			msg_error("compression level %s out of range [1..%d] for %s", colon + 1,
				  a[i].max_level, a[i].name);
			return -1;
		}
		cfg->compress = a[i].type;
		cfg->compress_level = (int)level;
		cfg->incompat |= a[i].incompat;
		return 0;
	}
	return bad_value("invalid compression (no, zlib[:1..9], lzo, zstd[:1..15]): %s", arg);
}

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* An option of --rootdir in a build without it (-1), or -1 after its own error. */
static int rootdir_only(const char *opt)
{
	if (!CFG_MKFS_ROOTDIR)
		msg_error("%s is not built in this configuration", opt);
	return -1;
}

static int too_many(const char *opt)
{
	msg_error("at most %d %s options", MAX_PATH_OPTS, opt);
	return -1;
}

/* --subvol [rw:|ro:|default:|default-ro:]DIR (a prefix that is none of these is part
 * of the path, as 6.19) */
static int parse_subvol(const char *arg, struct opts *o)
{
	static const char *const types[] = { "rw:", "ro:", "default:", "default-ro:" };
	struct mkfs_subvol_spec *sv = &o->subvol[o->nsubvols];

	if (o->nsubvols == MAX_PATH_OPTS)
		return too_many("--subvol");
	for (int t = 0; t < 4; t++)
		if (!strncmp(arg, types[t], strlen(types[t]))) {
			arg += strlen(types[t]);
			sv->ro = t & 1;
			sv->is_default = t >= 2;
			break;
		}
	for (int i = 0; sv->is_default && i < o->nsubvols; i++)
		if (o->subvol[i].is_default) {
			msg_error("default subvolume can only be specified once");
			return -1;
		}
	o->subvol_path[o->nsubvols++] = arg;
	return 0;
}

/* --inode-flags nodatacow|nodatasum[,...]:PATH */
static int parse_inode_flags(const char *arg, struct opts *o)
{
	const char *colon = strchr(arg, ':');
	uint64_t flags = 0;

	if (o->niflags == MAX_PATH_OPTS)
		return too_many("--inode-flags");
	if (!colon) {
		msg_error("invalid inode flags: %s", arg);
		return -1;
	}
	for (const char *p = arg; p < colon; ) {
		size_t n = strcspn(p, ",:");
		if (n == 9 && !strncmp(p, "nodatacow", 9)) {
			flags |= BTRFS_INODE_NODATACOW;
		} else if (n == 9 && !strncmp(p, "nodatasum", 9)) {
			flags |= BTRFS_INODE_NODATASUM;
		} else if (n) {
			msg_error("unknown flag: %.*s", (int)n, p);
			return -1;
		}
		p += n + (p[n] == ',');
	}
	o->iflags[o->niflags].flags = flags;
	o->iflags_path[o->niflags++] = colon + 1;
	return 0;
}

/* --subvol or --inode-flags paths: below --rootdir (real path root), existing, no
 * two the same inode; their ids go to the struct mkfs_inode_id at the start of each
 * entry of base (entries of size stride). 0 or -1 after the error. */
static int resolve_paths(const char *root, const char *const *paths, int n, void *base,
			 size_t stride, const char *what, int want_dir)
{
	for (int i = 0; i < n; i++) {
		struct mkfs_inode_id *id = (void *)((char *)base + (size_t)i * stride);
		char joined[PATH_MAX], real[PATH_MAX];
		size_t rl = strlen(root);
		struct stat st;

		if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", root, paths[i]) >= sizeof(joined) ||
		    !realpath(joined, real) || lstat(real, &st)) {
			msg_error("%s path does not exist: %s", what, paths[i]);
			return -1;
		}
		if (strncmp(real, root, rl) || real[rl] != '/') {
			msg_error("%s path is not below --rootdir: %s", what, paths[i]);
			return -1;
		}
		if (want_dir && !S_ISDIR(st.st_mode)) {
			msg_error("%s is not a directory: %s", what, paths[i]);
			return -1;
		}
		id->dev = st.st_dev;
		id->ino = st.st_ino;
		for (int j = 0; j < i; j++) {
			const struct mkfs_inode_id *o = (void *)((char *)base + (size_t)j * stride);
			if (o->dev == id->dev && o->ino == id->ino) {
				msg_error("%s specified more than once: %s", what, paths[i]);
				return -1;
			}
		}
	}
	return 0;
}

/* Resolves --subvol and --inode-flags. */
static int resolve_path_opts(struct opts *o)
{
	char root[PATH_MAX];

	if ((o->nsubvols || o->niflags) && !realpath(o->rootdir, root)) {
		msg_error("could not get canonical path to %s", o->rootdir);
		return -1;
	}
	if (resolve_paths(root, o->subvol_path, o->nsubvols, o->subvol, sizeof(o->subvol[0]),
			  "subvolume", 1) ||
	    resolve_paths(root, o->iflags_path, o->niflags, o->iflags, sizeof(o->iflags[0]),
			  "inode", 0))
		return -1;
	o->cfg.subvols = o->subvol;
	o->cfg.nsubvols = o->nsubvols;
	o->cfg.inode_flags = o->iflags;
	o->cfg.ninode_flags = o->niflags;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_CSUM = 256, OPT_SHRINK, OPT_DEVUUID, OPT_COMPRESS, OPT_INODE_FLAGS };
	static const struct cli_option longopts[] = {
		{ "data", required_argument, 'd' }, { "metadata", required_argument, 'm' },
		{ "mixed", no_argument, 'M' }, { "csum", required_argument, OPT_CSUM },
		{ "checksum", required_argument, OPT_CSUM },
		{ "nodesize", required_argument, 'n' }, { "sectorsize", required_argument, 's' },
		{ "features", required_argument, 'O' },
		{ "runtime-features", required_argument, 'R' },
		{ "label", required_argument, 'L' }, { "uuid", required_argument, 'U' },
		{ "device-uuid", required_argument, OPT_DEVUUID },
		{ "byte-count", required_argument, 'b' }, { "rootdir", required_argument, 'r' },
		{ "shrink", no_argument, OPT_SHRINK }, { "nodiscard", no_argument, 'K' },
		{ "force", no_argument, 'f' }, { "quiet", no_argument, 'q' },
		{ "verbose", no_argument, 'v' }, { "version", no_argument, 'V' },
		{ "compress", required_argument, OPT_COMPRESS },
		{ "subvol", required_argument, 'u' },
		{ "inode-flags", required_argument, OPT_INODE_FLAGS },
		{ NULL, 0, 0 },
	};
	struct mkfs_config *cfg = &o->cfg;
	uint64_t v;
	int c, r;

	while ((c = cli_getopt(argc, argv, "d:m:Mn:s:O:R:L:U:b:r:u:KfqvV", longopts, usage)) != -1) {
		switch (c) {
		case 'd': case 'm':
			if (parse_profile(optarg, c == 'd' ? &cfg->data_profile : &cfg->meta_profile)) {
				msg_error("unknown %s profile %s", c == 'd' ? "data" : "metadata", optarg);
				return -1;
			}
			*(c == 'd' ? &o->data_set : &o->meta_set) = 1;
			break;
		case 'M':
			cfg->mixed = 1;
			break;
		case OPT_CSUM:
			if ((cfg->csum_type = parse_csum(optarg)) < 0)
				return bad_value("unknown csum type %s", optarg);
			break;
		case 'n': case 's':
			/* checked against each other by settle_options */
			if (parse_size_arg(optarg, &v))
				return -1;
			*(c == 'n' ? &cfg->nodesize : &cfg->sectorsize) = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			o->nodesize_set |= c == 'n';
			break;
		case 'O': case 'R':
			r = parse_features(optarg, c == 'R', cfg);
			if (r)
				return r < 0 ? -1 : 1;
			break;
		case 'L':
			if (strlen(optarg) >= BTRFS_LABEL_SIZE) {
				msg_error("label %s is too long (max %d)", optarg, BTRFS_LABEL_SIZE - 1);
				return -1;
			}
			strcpy(cfg->label, optarg);
			break;
		case 'U':
			if (uuid_parse(optarg, cfg->fsid))
				return bad_value("could not parse UUID: %s", optarg);
			o->fsid_set = 1;
			break;
		case OPT_DEVUUID:
			if (uuid_parse(optarg, o->dev_uuid))
				return bad_value("could not parse device UUID: %s", optarg);
			o->dev_uuid_set = 1;
			break;
		case 'b':
			if (parse_size_arg(optarg, &o->byte_count))
				return -1;
			break;
		case 'r':
			if (!CFG_MKFS_ROOTDIR)
				return rootdir_only("--rootdir");
			o->rootdir = optarg;
			break;
		case OPT_SHRINK:
			cfg->shrink = 1;
			break;
		case OPT_COMPRESS:
			if (parse_compress(optarg, cfg))
				return -1;
			break;
		case 'u':
			if (!CFG_MKFS_ROOTDIR || parse_subvol(optarg, o))
				return rootdir_only("--subvol");
			break;
		case OPT_INODE_FLAGS:
			if (!CFG_MKFS_ROOTDIR || parse_inode_flags(optarg, o))
				return rootdir_only("--inode-flags");
			break;
		case 'K':
			o->discard = 0;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'q':
			o->verbose = 0;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			cli_print_version("mkfs.btrfs");
			return 1;
		}
	}
	return 0;
}

/* Whether the running kernel lists the sector size as supported (a line of
 * space-separated numbers). */
static int kernel_supports_sectorsize(uint32_t size)
{
	char buf[128];
	int fd = open("/sys/fs/btrfs/features/supported_sectorsizes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (char *p = buf; *p; p += strspn(p, " \n")) {
		char *end;
		if (str_to_ull(p, &end, 10) == size && (!*end || *end == ' ' || *end == '\n'))
			return 1;
		p = end > p ? end : p + 1;
	}
	return 0;
}

/* The node size against the sector size (power of two, 4-64 KiB), as btrfs-progs words it. */
static int check_nodesize(uint32_t n, uint32_t ss, int mixed)
{
	if (n < ss)
		msg_error("illegal nodesize %u (smaller than %u)", n, ss);
	else if (n > 65536)
		msg_error("illegal nodesize %u (larger than 65536)", n);
	else if (n & (ss - 1))
		msg_error("illegal nodesize %u (not aligned to %u)", n, ss);
	else if (mixed && n != ss)
		msg_error("illegal nodesize %u (not equal to %u for mixed block group)", n, ss);
	else if (!is_pow2(n))
		msg_error("illegal nodesize %u (not a power of 2)", n);
	else
		return 0;
	return -1;
}

/* Checks that the options fit together; fills in defaults. */
static int settle_options(struct opts *o, int ndevs)
{
	struct mkfs_config *cfg = &o->cfg;
	uint32_t ss = cfg->sectorsize;
	long page = getpagesize();

	if (!is_pow2(ss) || ss < 4096 || ss > 65536) {
		msg_error(is_pow2(ss) ? "invalid sectorsize %u, expected range is [4K, 64K]" :
			  "invalid sectorsize %u, must be power of 2", ss);
		return -1;
	}
	if (ss != (uint32_t)page && !kernel_supports_sectorsize(ss))
		msg_warn("the filesystem may not be mountable, sectorsize %u doesn't match page size %ld",
			 ss, page);
	if (!o->nodesize_set && cfg->nodesize < ss)
		cfg->nodesize = ss;
	if (cfg->mixed || (cfg->incompat & BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS)) {
		cfg->mixed = 1;
		cfg->incompat |= BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS;
		/* both single unless given */
		if (cfg->meta_profile != cfg->data_profile) {
			msg_error("with mixed block groups data and metadata profiles must be the same");
			return -1;
		}
		if (!o->nodesize_set)
			cfg->nodesize = ss;
	} else {
		if (!o->meta_set)
			cfg->meta_profile = ndevs > 1 ? BTRFS_BLOCK_GROUP_RAID1 : BTRFS_BLOCK_GROUP_DUP;
	}
	if (check_nodesize(cfg->nodesize, ss, cfg->mixed))
		return -1;
	/* as mkfs.btrfs 6.19 (and the kernel at its first mount): nodes larger than a page */
	if (cfg->nodesize > (uint32_t)page)
		cfg->incompat |= BTRFS_FEATURE_INCOMPAT_BIG_METADATA;
	if ((cfg->data_profile | cfg->meta_profile) & BTRFS_BLOCK_GROUP_RAID56_MASK) {
		cfg->incompat |= BTRFS_FEATURE_INCOMPAT_RAID56;
		msg_warn("RAID5/6 support has known problems is strongly discouraged\n"
			 "\t to be used besides testing or evaluation.\n");
	}
	for (int k = 0; k < 2; k++) {
		uint64_t p = k ? cfg->data_profile : cfg->meta_profile;
		if (ndevs < profile_min_devs(p)) {
			msg_error("unable to create FS with %s profile %s (have %d devices but %d devices are required)",
				  k ? "data" : "metadata", fs_profile_name(p), ndevs, profile_min_devs(p));
			return -1;
		}
	}
	if ((cfg->data_profile | cfg->meta_profile) & (BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID1C4))
		cfg->incompat |= BTRFS_FEATURE_INCOMPAT_RAID1C34;
	/* the block group tree needs no-holes and the free space tree: without them it
	 * is dropped (also when asked for explicitly), as mkfs.btrfs 6.19 does */
	if ((cfg->compat_ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE) &&
	    (!(cfg->incompat & BTRFS_FEATURE_INCOMPAT_NO_HOLES) ||
	     !(cfg->compat_ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE))) {
		msg_warn("disabling block-group-tree feature due to missing no-holes and free-space-tree features");
		cfg->compat_ro &= ~BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE;
	}
	if (cfg->compress && !o->rootdir) {
		msg_error("the option --compress must be used with --rootdir");
		return -1;
	}
	if (cfg->shrink && !o->rootdir) {
		msg_error("the option --shrink must be used with --rootdir");
		return -1;
	}
	if ((o->nsubvols || o->niflags) && !o->rootdir) {
		msg_error("option --%s must be used with --rootdir", o->nsubvols ? "subvol" : "inode-flags");
		return -1;
	}
	if (cfg->incompat & BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT)
		cfg->quota = MKFS_SQUOTA;
	if (o->dev_uuid_set && ndevs > 1) {
		msg_error("--device-uuid works with one device only");
		return -1;
	}
	if (o->rootdir) {
		struct stat st;
		if (stat(o->rootdir, &st) || !S_ISDIR(st.st_mode)) {
			msg_error("--rootdir %s is not a directory", o->rootdir);
			return -1;
		}
		cfg->rootdir = o->rootdir;
	}
	return CFG_MKFS_ROOTDIR ? resolve_path_opts(o) : 0;
}

static void print_summary(const struct opts *o, const struct target *t, int ndevs,
			  const struct mkfs_result *res, int ssd)
{
	const struct mkfs_config *cfg = &o->cfg;
	char u[UUID_STR_LEN], feat[256];

	uuid_unparse(cfg->fsid, u);
	printf("btrfsbox v%s\nSee https://btrfs.readthedocs.io for more information.\n\n",
	       BTRFSBOX_VERSION);
	printf("Label:              %s\n", cfg->label[0] ? cfg->label : "(null)");
	printf("UUID:               %s\n", u);
	printf("Node size:          %u\n", cfg->nodesize);
	printf("Sector size:        %u\n", cfg->sectorsize);
	printf("Filesystem size:    %s\n", pretty_size(res->total_bytes, UNITS_DEFAULT));
	printf("Block group profiles:\n");
	if (cfg->mixed) {
		printf("  Data+Metadata:    %-8s %16s\n", fs_profile_name(cfg->data_profile), pretty_size(res->size[0], UNITS_DEFAULT));
	} else {
		printf("  Data:             %-8s %16s\n", fs_profile_name(cfg->data_profile), pretty_size(res->size[0], UNITS_DEFAULT));
		printf("  Metadata:         %-8s %16s\n", fs_profile_name(cfg->meta_profile), pretty_size(res->size[1], UNITS_DEFAULT));
	}
	printf("  System:           %-8s %16s\n", fs_profile_name(cfg->meta_profile), pretty_size(res->size[2], UNITS_DEFAULT));
	printf("SSD detected:       %s\n", ssd ? "yes" : "no");
	printf("Zoned device:       no\n");
	features_string(cfg, 0, feat, sizeof(feat));
	printf("Incompat features:  %s\n", feat);
	features_string(cfg, 1, feat, sizeof(feat));
	printf("Runtime features:   %s\n", feat);
	printf("Checksum:           %s\n", csum_name(cfg->csum_type));
	printf("Number of devices:  %d\n", ndevs);
	printf("Devices:\n   ID        SIZE  PATH\n");
	for (int i = 0; i < ndevs; i++)
		printf("  %3d  %10s  %s\n", i + 1, pretty_size(res->dev_size[i], UNITS_DEFAULT), t[i].path);
	printf("\n");
	if (cfg->csum_type == CSUM_SHA256)
		printf("NOTE: you may need to manually load kernel module implementing accelerated SHA256 in case\n"
		       "      the generic implementation is built-in, before mount. Check lsmod or /proc/crypto\n\n");
}

static uint64_t creation_time(void)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	uint64_t v;

	if (e && !cli_parse_u64(e, &v))
		return v;
	if (e)
		msg_warn("SOURCE_DATE_EPOCH is not a number, using the current time");
	return (uint64_t)time(NULL);
}

static int run(struct opts *o, int ndevs, char **paths)
{
	struct target *t = calloc((size_t)ndevs, sizeof(*t));
	struct mkfs_device *d = calloc((size_t)ndevs, sizeof(*d));
	struct mkfs_result res;
	char err[512];
	uint64_t total = 0;
	int ret = 1, ssd = 1;

	if (!t || !d) {
		msg_error("out of memory");
		goto out;
	}
	for (int i = 0; i < ndevs; i++) {
		t[i].fd = -1;
		t[i].path = paths[i];
	}
	for (int i = 0; i < ndevs; i++) {
		if (open_target(&t[i], o->force, o->rootdir && ndevs == 1))
			goto out;
		for (int j = 0; j < i; j++)
			if (same_target(&t[i].st, &t[j].st)) {
				msg_error("%s and %s are the same device", paths[j], paths[i]);
				goto out;
			}
		d[i].fd = t[i].fd;
		d[i].path = t[i].path;
		d[i].dev_size = t[i].size;
		d[i].size = o->byte_count && o->byte_count < t[i].size ? o->byte_count : t[i].size;
		if (o->byte_count > t[i].size) {
			if (!S_ISREG(t[i].st.st_mode) || ftruncate(t[i].fd, (off_t)o->byte_count)) {
				msg_error("%s is smaller than the requested size", t[i].path);
				goto out;
			}
			d[i].size = d[i].dev_size = o->byte_count;
		}
		/* like mkfs.btrfs, an image file grows to what --rootdir needs (also
		 * beyond -b) */
		d[i].grow = o->rootdir && ndevs == 1 && S_ISREG(t[i].st.st_mode);
		if (o->dev_uuid_set) {
			memcpy(d[i].uuid, o->dev_uuid, 16);
		} else if (o->cfg.reproducible && o->fsid_set) {
			/* reproducible multi-device images: device UUIDs follow from the fsid */
			memcpy(d[i].uuid, o->cfg.fsid, 16);
			d[i].uuid[1] ^= 0x77;
			d[i].uuid[14] ^= (uint8_t)(i + 1);
		} else if (uuid_generate(d[i].uuid)) {
			goto no_random;
		}
		ssd &= !rotational(&t[i].st);
	}
	for (int i = 0; i < ndevs; i++) {
		if (total + d[i].size < total) {
			msg_error("adding device of %llu (%s) bytes would exceed max file system size",
				  (unsigned long long)d[i].size, pretty_size(d[i].size, UNITS_DEFAULT));
			goto out;
		}
		total += d[i].size;
	}
	for (int i = 0; i < ndevs; i++)
		if (o->discard)
			discard_device(&t[i], d[i].size, o->verbose > 0);
	if (o->cfg.mixed) {
		if (total > (1ULL << 30))
			msg_warn("mixed block groups are meant for filesystems up to 1GiB; this one has %s",
				 pretty_size(total, UNITS_DEFAULT));
	}
	for (int i = 0; i < ndevs; i++) {
		o->cfg.skip[i].dev = t[i].st.st_dev;
		o->cfg.skip[i].ino = t[i].st.st_ino;
	}
	o->cfg.nskip = S_ISREG(t[0].st.st_mode) ? ndevs : 0;
	if (mkfs_make(&o->cfg, d, ndevs, &res, err, sizeof(err))) {
		msg_error("%s", err);
		goto out;
	}
	if (res.warnings)
		msg_warn("%s (%d such problems)", res.warn_msg, res.warnings);
	if (o->verbose)
		print_summary(o, t, ndevs, &res, ssd);
	ret = 0;
	goto out;
no_random:
	msg_error("cannot read random bytes for a UUID");
out:
	for (int i = 0; t && i < ndevs; i++)
		if (t[i].fd >= 0)
			close(t[i].fd);
	free(t);
	free(d);
	return ret;
}

int mkfs_main(int argc, char **argv)
{
	static const uint8_t zero[16];
	struct opts o;
	int r;

	memset(&o, 0, sizeof(o));
	o.verbose = 1;
	o.discard = 1;
	o.cfg.nodesize = 16384;
	o.cfg.sectorsize = 4096;
	o.cfg.csum_type = CSUM_CRC32C;
	o.cfg.incompat = DEFAULT_INCOMPAT;
	o.cfg.compat_ro = DEFAULT_COMPAT_RO;
	r = parse_args(argc, argv, &o);
	if (r)
		return r < 0 ? 1 : 0;
	if (argc - optind < 1)
		cli_usage_error(usage, "not enough arguments");
	if (settle_options(&o, argc - optind))
		return 1;
	o.cfg.now = creation_time();
	o.cfg.reproducible = getenv("SOURCE_DATE_EPOCH") != NULL;
	/* --rootdir sorts the fs tree items through temporary files here; the budget
	 * variable is for tests (forcing the spill to disk on small trees) */
	o.cfg.tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	o.cfg.writer_thread = CFG_MKFS_THREADS && workq_worthwhile();
	if (getenv("BTRFSBOX_MKFS_SORT_MEM"))
		o.cfg.sort_mem = (size_t)str_to_ull(getenv("BTRFSBOX_MKFS_SORT_MEM"), NULL, 0);
	if (!memcmp(o.cfg.fsid, zero, 16) && uuid_generate(o.cfg.fsid)) {
		msg_error("cannot read random bytes for a UUID");
		return 1;
	}
	/* the chunk tree and top subvolume UUIDs follow from the fsid when it was given,
	 * so that -U with SOURCE_DATE_EPOCH reproduces an image exactly */
	memcpy(o.cfg.chunk_uuid, o.cfg.fsid, 16);
	o.cfg.chunk_uuid[15] ^= 0x5a;
	o.cfg.chunk_uuid[0] ^= 0xa5;
	memcpy(o.cfg.fs_root_uuid, o.cfg.fsid, 16);
	o.cfg.fs_root_uuid[15] ^= 0x3c;
	o.cfg.fs_root_uuid[0] ^= 0xc3;
	return run(&o, argc - optind, argv + optind);
}
#endif
