/* mount.btrfs: the mount(8) helper. Image files go through an autoclear loop device
 * (freed by the kernel at umount), btrfs options are checked before mount(2), and
 * nothing is written to /etc/mtab. */
//config:config APPLET_MOUNT
//config:	bool "mount.btrfs"
//config:	default y
//config:	help
//config:	  mount.btrfs SOURCE TARGET [-o OPTIONS]: mounts a btrfs block device or
//config:	  image file (through a loop device), as mount(8) calls it for -t btrfs.
//cmd:APPLET_MOUNT mount_main mount.btrfs|mount.btrfs
#include "config.h"
#if CFG_APPLET_MOUNT
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/sysfile.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/loop.h>

USAGE(usage) =
	"usage: mount.btrfs SOURCE TARGET [-o OPTIONS] [-r] [-w] [-v] [-n] [-s] [-f]\n"
	"Mount a btrfs block device or image file (image files through an autoclear loop device).\n"
	"\n"
	"  -o OPTIONS  comma-separated mount flags and btrfs options; loop=/dev/loopN picks the\n"
	"              loop device, device=PATH registers another device of the filesystem\n"
	"  -r, -w      mount read-only / read-write\n"
	"  -v          say what is done\n"
	"  -n          do not write /etc/mtab (never written anyway)\n"
	"  -s          ignore unknown options instead of failing\n"
	"  -f          do everything but the mount(2) call\n";

/* What the command line asks for. */
struct mount_req {
	const char *source, *target;
	unsigned long flags;     /* MS_* */
	char data[4096];         /* btrfs options for the kernel, comma-separated */
	const char *loop_dev;    /* -o loop=/dev/loopN */
	const char *devices[64]; /* -o device=PATH */
	int ndevices;
	int verbose, sloppy, fake;
};

/* Generic mount flags: name, MS_ bit, set (1) or clear (0). */
static const struct { char name[12]; unsigned flag : 31, set : 1; } flag_opts[] = {
	{ "ro", MS_RDONLY, 1 }, { "rw", MS_RDONLY, 0 },
	{ "noatime", MS_NOATIME, 1 }, { "atime", MS_NOATIME, 0 },
	{ "relatime", MS_RELATIME, 1 }, { "norelatime", MS_RELATIME, 0 },
	{ "strictatime", MS_STRICTATIME, 1 },
	{ "nodiratime", MS_NODIRATIME, 1 }, { "diratime", MS_NODIRATIME, 0 },
	{ "nodev", MS_NODEV, 1 }, { "dev", MS_NODEV, 0 },
	{ "nosuid", MS_NOSUID, 1 }, { "suid", MS_NOSUID, 0 },
	{ "noexec", MS_NOEXEC, 1 }, { "exec", MS_NOEXEC, 0 },
	{ "sync", MS_SYNCHRONOUS, 1 }, { "async", MS_SYNCHRONOUS, 0 },
	{ "dirsync", MS_DIRSYNC, 1 },
	{ "lazytime", MS_LAZYTIME, 1 }, { "nolazytime", MS_LAZYTIME, 0 },
	{ "silent", MS_SILENT, 1 }, { "loud", MS_SILENT, 0 },
	{ "remount", MS_REMOUNT, 1 },
};

/* Options for mount(8) and fstab only; the helper ignores them. */
static const char *const userspace_opts[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group",
	"nofail", "_netdev", "loop", NULL
};

/* How a btrfs option's value is checked. */
enum val { V_NONE, V_UINT, V_SIZE, V_TEXT, V_COMPRESS, V_RESCUE, V_ENUM };

/* The options the kernel's btrfs accepts (its mount parameter table), by the value they
 * take, then those with a choice of values. Security module options (context, ...,
 * seclabel) the kernel takes for any filesystem. */
static const char *const btrfs_opts[V_ENUM] = {
	[V_NONE] = "acl noacl autodefrag noautodefrag barrier nobarrier clear_cache "
		   "datacow nodatacow datasum nodatasum degraded nodiscard enospc_debug "
		   "noenospc_debug flushoncommit noflushoncommit nologreplay norecovery "
		   "ref_verify rescan_uuid_tree skip_balance nospace_cache ssd nossd "
		   "ssd_spread nossd_spread treelog notreelog usebackuproot "
		   "user_subvol_rm_allowed seclabel",
	[V_UINT] = "commit subvolid thread_pool",
	[V_SIZE] = "max_inline",
	[V_TEXT] = "device subvol context fscontext defcontext rootcontext",
	[V_COMPRESS] = "compress compress-force",
	[V_RESCUE] = "rescue",
};
static const struct { char name[16]; char choices[20]; } btrfs_enum_opts[] = {
	{ "discard", "sync async" }, { "fatal_errors", "bug panic" },
	{ "fragment", "data metadata all" }, { "space_cache", "v1 v2" },
};
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Valid names of rescue=, joined by ':'. */
static const char rescue_choices[] =
	"usebackuproot nologreplay ignorebadroots ibadroots ignoredatacsums idatacsums "
	"ignoremetacsums imetacsums ignoresuperflags isuperflags all";

/* Is word (of length n) one of the space-separated choices? */
static int in_choices(const char *word, size_t n, const char *choices)
{
	const char *c = choices;

	while (*c) {
		size_t len = strcspn(c, " ");

		if (len == n && !strncmp(c, word, n))
			return 1;
		c += len;
		c += *c == ' ';
	}
	return 0;
}

/* compress[-force]=zlib[:1-9] | lzo | zstd[:1-15] | no | none. */
static int compress_ok(const char *v)
{
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	long level;

	if (!colon)
		return in_choices(v, n, "zlib lzo zstd no none");
	if (!cli_all_digits(colon + 1) || strlen(colon + 1) > 2)
		return 0;
	level = atoi(colon + 1);
	if (n == 4 && !strncmp(v, "zlib", 4))
		return level >= 1 && level <= 9;
	if (n == 4 && !strncmp(v, "zstd", 4))
		return level >= 1 && level <= 15;
	return 0;
}

static int rescue_ok(const char *v)
{
	while (*v) {
		size_t n = strcspn(v, ":");

		if (!in_choices(v, n, rescue_choices))
			return 0;
		v += n;
		if (*v == ':' && !*++v)
			return 0;
	}
	return 1;
}

/* A number with an optional k/m/g suffix (max_inline). */
static int size_ok(const char *v)
{
	size_t n = strspn(v, "0123456789");

	return n > 0 && (!v[n] || (!v[n + 1] && strchr("kKmMgG", v[n])));
}

static int value_ok(enum val val, const char *choices, const char *v)
{
	switch (val) {
	case V_NONE:     return v == NULL;
	case V_UINT:     return v && cli_all_digits(v);
	case V_SIZE:     return v && size_ok(v);
	case V_TEXT:     return v && *v;
	case V_COMPRESS: return !v || compress_ok(v);
	case V_ENUM:     return !v || in_choices(v, strlen(v), choices);
	case V_RESCUE:   return v && *v && rescue_ok(v);
	}
	return 0;
}

/* 1 for a known btrfs option with a valid value, 0 for an unknown name, -1 for a bad
 * value of a known one. opt is "name" or "name=value". */
static int btrfs_option_check(const char *opt)
{
	const char *eq = strchr(opt, '=');
	size_t n = eq ? (size_t)(eq - opt) : strlen(opt);
	size_t i;

	for (i = 0; i < V_ENUM; i++)
		if (in_choices(opt, n, btrfs_opts[i]))
			return value_ok(i, NULL, eq ? eq + 1 : NULL) ? 1 : -1;
	for (i = 0; i < ARRAY_LEN(btrfs_enum_opts); i++)
		if (strlen(btrfs_enum_opts[i].name) == n && !strncmp(btrfs_enum_opts[i].name, opt, n))
			return value_ok(V_ENUM, btrfs_enum_opts[i].choices, eq ? eq + 1 : NULL) ?
				1 : -1;
	return 0;
}

static int append_data(struct mount_req *r, const char *opt)
{
	size_t len = strlen(r->data);

	if (len + strlen(opt) + 2 > sizeof(r->data)) {
		msg_error("mount options too long");
		return -1;
	}
	if (len)
		r->data[len++] = ',';
	strcpy(r->data + len, opt);
	return 0;
}

/* Sorts one option into flags, helper settings or kernel data. */
static int take_option(struct mount_req *r, char *opt)
{
	size_t i;
	int known;

	if (!*opt)
		return 0;
	for (i = 0; i < ARRAY_LEN(flag_opts); i++) {
		if (strcmp(opt, flag_opts[i].name))
			continue;
		if (flag_opts[i].set)
			r->flags |= flag_opts[i].flag;
		else
			r->flags &= ~flag_opts[i].flag;
		return 0;
	}
	for (i = 0; userspace_opts[i]; i++)
		if (!strcmp(opt, userspace_opts[i]))
			return 0;
	if (!strncmp(opt, "x-", 2) || !strncmp(opt, "comment=", 8))
		return 0;
	if (!strcmp(opt, "bind") || !strcmp(opt, "rbind") || !strcmp(opt, "move")) {
		msg_error("mount option '%s' is not for mount.btrfs: use mount(8)", opt);
		return -1;
	}
	if (!strncmp(opt, "loop=", 5)) {
		r->loop_dev = opt + 5;
		return 0;
	}
	known = btrfs_option_check(opt);
	if (known == 0 && r->sloppy)
		return 0;
	if (known <= 0) {
		msg_error(known ? "invalid value in mount option '%s'" :
			  "unknown mount option '%s'", opt);
		return -1;
	}
	if (!strncmp(opt, "device=", 7)) {
		if (r->ndevices == (int)ARRAY_LEN(r->devices)) {
			msg_error("too many device= options");
			return -1;
		}
		r->devices[r->ndevices++] = opt + 7;
	}
	return append_data(r, opt);
}

static int take_options(struct mount_req *r, char *list)
{
	char *save = NULL, *opt;

	for (opt = strtok_r(list, ",", &save); opt; opt = strtok_r(NULL, ",", &save))
		if (take_option(r, opt))
			return -1;
	return 0;
}

/* The mount(8) helper convention: SOURCE TARGET, options anywhere after them:
 * -o LIST (repeatable), -r, -w, -v, -n, -s, -f, -i, -t TYPE, -N NAMESPACE. */
static int parse_args(int argc, char **argv, struct mount_req *r)
{
	char *lists[16];
	int i, npos = 0, nlists = 0;

	for (i = 1; i < argc; i++) {
		char *a = argv[i];

		if (a[0] != '-' || !a[1]) {
			if (npos == 2)
				cli_usage_error(usage, "too many arguments");
			*(npos++ ? &r->target : &r->source) = a;
			continue;
		}
		if (!strcmp(a, "--help")) {
			cli_put_usage(usage, stdout);
			exit(0);
		}
		if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
			cli_print_version("mount.btrfs");
			exit(0);
		}
		if (a[1] == 'o' || a[1] == 't' || a[1] == 'N') {
			char *v = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v)
				cli_usage_error(usage, "option needs an argument");
			if (a[1] == 'o') {
				if (nlists == (int)ARRAY_LEN(lists))
					cli_usage_error(usage, "too many -o options");
				lists[nlists++] = v; /* after all flags: -s may come later */
			}
			if (a[1] == 't' && strcmp(v, "btrfs") && strncmp(v, "btrfs.", 6)) {
				msg_error("mount.btrfs mounts only btrfs, not '%s'", v);
				return -1;
			}
			continue;
		}
		for (a++; *a; a++) {
			switch (*a) {
			case 'r': r->flags |= MS_RDONLY; break;
			case 'w': r->flags &= ~MS_RDONLY; break;
			case 'v': r->verbose++; break;
			case 's': r->sloppy = 1; break;
			case 'f': r->fake = 1; break;
			case 'n': case 'i': break;
			default:
				cli_usage_error(usage, "invalid option");
			}
		}
	}
	if (npos < 2)
		cli_usage_error(usage, "SOURCE and TARGET are required");
	for (i = 0; i < nlists; i++)
		if (take_options(r, lists[i]))
			return -1;
	return 0;
}

/* Does the primary superblock carry the btrfs magic? 1 yes, 0 no, -errno. */
static int has_btrfs_magic(int fd)
{
	static const char magic[8] = { '_', 'B', 'H', 'R', 'f', 'S', '_', 'M' };
	char buf[8];
	ssize_t n = pread(fd, buf, sizeof(buf), 65536 + 64); /* btrfs_super_block.magic */

	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(buf) && !memcmp(buf, magic, sizeof(buf));
}

/* Makes /dev/loopN when the system has no node for it (a minimal initramfs): the
 * device number comes from sysfs, else the loop major 7 with minor N. */
static int ensure_loop_node(const char *path, int n)
{
	char sys[64];
	dev_t dev;

	if (access(path, F_OK) == 0)
		return 0;
	snprintf(sys, sizeof(sys), "/sys/block/loop%d/dev", n);
	if (sysfile_read_devnum(sys, &dev))
		dev = makedev(7, (unsigned)n);
	if (mknod(path, S_IFBLK | 0660, dev) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Binds the backing file to the open loop device: LOOP_CONFIGURE, or on kernels
 * before 5.8 LOOP_SET_FD then LOOP_SET_STATUS64. */
static int loop_bind(int loop_fd, int file_fd, const char *file, int ro)
{
	struct loop_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned)file_fd;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | (ro ? LO_FLAGS_READ_ONLY : 0);
	snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", file);
	if (ioctl(loop_fd, LOOP_CONFIGURE, &cfg) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOTTY)
		return -errno;
	if (ioctl(loop_fd, LOOP_SET_FD, file_fd))
		return -errno;
	if (ioctl(loop_fd, LOOP_SET_STATUS64, &cfg.info)) {
		int e = errno;

		ioctl(loop_fd, LOOP_CLR_FD, 0);
		return -e;
	}
	return 0;
}

/* Attaches file (open as file_fd) to a loop device: the one named, or a free one from
 * /dev/loop-control (retrying when another process takes it first). Returns the open
 * loop device fd and its path in dev, or -1 after an error message. */
static int loop_attach(const char *file, int file_fd, const char *want, int ro,
		       char *dev, size_t size)
{
	int tries, ctl = -1, fd, ret = -EBUSY;

	for (tries = 0; tries < 16 && ret == -EBUSY; tries++) {
		if (want) {
			snprintf(dev, size, "%s", want);
		} else {
			int n;

			if (ctl < 0)
				ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
			if (ctl < 0 || (n = ioctl(ctl, LOOP_CTL_GET_FREE)) < 0) {
				msg_error("no free loop device (/dev/loop-control): %m");
				goto fail;
			}
			snprintf(dev, size, "/dev/loop%d", n);
			if ((ret = ensure_loop_node(dev, n))) {
				errno = -ret;
				msg_error("cannot create %s: %m", dev);
				goto fail;
			}
		}
		fd = open(dev, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (fd < 0) {
			msg_error("cannot open loop device %s: %m", dev);
			goto fail;
		}
		ret = loop_bind(fd, file_fd, file, ro);
		if (!ret) {
			if (ctl >= 0)
				close(ctl);
			return fd;
		}
		close(fd);
		if (want)
			break;
	}
	errno = -ret;
	msg_error("cannot set up loop device %s for %s: %m", dev, file);
fail:
	if (ctl >= 0)
		close(ctl);
	return -1;
}

/* Registers another device of a multi-device filesystem with the kernel. */
static int scan_device(const char *path)
{
	int ret = btrfs_control_ioctl(BTRFS_IOC_SCAN_DEV, path);

	if (ret < 0) {
		errno = -ret;
		msg_error("cannot register device %s: %m", path);
	}
	return ret < 0 ? ret : 0;
}

/* A multi-device filesystem needs all its devices known to the kernel before mount(2):
 * register every block device of /proc/partitions that carries the same fsid (what
 * `btrfs device scan` would do). Failures only mean the kernel may not find them. */
static int register_if_same_fs(const char *path, void *fsid)
{
	struct btrfs_super_block sb;

	if (!fs_super_read(path, 0, &sb, NULL) && !memcmp(sb.fsid, fsid, sizeof(sb.fsid)))
		btrfs_control_ioctl(BTRFS_IOC_SCAN_DEV, path);
	return 0;
}

static void scan_siblings(int src_fd)
{
	struct btrfs_super_block sb;

	if (fs_super_read_fd(src_fd, 0, &sb, NULL) || get_le64(&sb.num_devices) < 2)
		return;
	btrfs_each_block_device(register_if_same_fs, sb.fsid);
}

static int kernel_has_btrfs(void)
{
	char line[256];
	FILE *f = fopen("/proc/filesystems", "r");
	int found = 0;

	if (!f)
		return 1; /* cannot tell: do not claim otherwise */
	while (!found && fgets(line, sizeof(line), f))
		found = cli_strstr(line, "\tbtrfs\n") != NULL;
	fclose(f);
	return found;
}

/* A line that tells what to do about a failed mount(2). */
static const char *mount_hint(int err, const struct mount_req *r)
{
	switch (err) {
	case ENODEV:
		return kernel_has_btrfs() ? "the device is not usable" :
			"kernel has no btrfs support (try: modprobe btrfs)";
	case EINVAL:
		return "bad superblock, missing device (see -o device=, degraded) or an option "
		       "the kernel rejects; dmesg tells more";
	case ENOENT:
		return r->data[0] && cli_strstr(r->data, "subvol") ?
			"the subvolume or mount point does not exist" :
			"the mount point or device does not exist";
	case EBUSY:
		return "already mounted or the device is busy";
	case EACCES: case EROFS:
		return "the device is read-only: mount with -o ro";
	case EPERM:
		return "must be root";
	case ENOTDIR:
		return "the mount point is not a directory";
	}
	return "dmesg may tell more";
}

/* Opens the source, checks its magic; for a regular file *is_file is set. Returns
 * the fd or -1 after an error message. */
static int open_source(struct mount_req *r, int *is_file)
{
	struct stat st;
	int fd, magic;

	fd = open(r->source, ((r->flags & MS_RDONLY) ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0 && (errno == EROFS || errno == EACCES) && !(r->flags & MS_RDONLY)) {
		fd = open(r->source, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			msg_warn("%s is write-protected, mounting read-only", r->source);
			r->flags |= MS_RDONLY;
		}
	}
	if (fd < 0 || fstat(fd, &st)) {
		msg_error("cannot open %s: %m", r->source);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		msg_error("%s is neither a block device nor a regular file", r->source);
		close(fd);
		return -1;
	}
	magic = has_btrfs_magic(fd);
	if (magic <= 0) {
		errno = magic ? -magic : 0;
		if (magic)
			msg_error("cannot read %s: %m", r->source);
		else
			msg_error("not a btrfs filesystem: %s (no btrfs superblock magic)", r->source);
		close(fd);
		return -1;
	}
	*is_file = S_ISREG(st.st_mode);
	return fd;
}

static int do_mount(struct mount_req *r)
{
	char loop[64];
	const char *dev = r->source;
	int src_fd = -1, loop_fd = -1, is_file = 0, i, ret = 1;

	if (!(r->flags & MS_REMOUNT)) {
		src_fd = open_source(r, &is_file);
		if (src_fd < 0)
			return 1;
		if (!is_file && r->loop_dev) {
			msg_error("loop= is only for image files, %s is a block device", r->source);
			goto out;
		}
	}
	if (is_file) {
		loop_fd = loop_attach(r->source, src_fd, r->loop_dev, !!(r->flags & MS_RDONLY),
				      loop, sizeof(loop));
		if (loop_fd < 0)
			goto out;
		dev = loop;
		if (r->verbose)
			printf("mount.btrfs: %s attached to %s\n", r->source, loop);
	}
	for (i = 0; i < r->ndevices; i++)
		if (scan_device(r->devices[i]))
			goto out;
	if (src_fd >= 0)
		scan_siblings(src_fd);
	if (r->fake) {
		ret = 0;
		goto out;
	}
	if (mount(dev, r->target, "btrfs", r->flags, r->data[0] ? r->data : NULL)) {
		int e = errno;

		msg_error("cannot mount %s on %s: %s", r->source, r->target, strerror(e));
		fprintf(stderr, "HINT: %s\n", mount_hint(e, r));
		goto out;
	}
	if (r->verbose)
		printf("mount.btrfs: %s mounted on %s%s%s\n", dev, r->target,
		       r->data[0] ? " with " : "", r->data);
	ret = 0;
out:
	if (loop_fd >= 0) {
		/* On success the mount holds the device and autoclear frees it at umount;
		 * on failure detach it now rather than rely on the last close. */
		if (ret || r->fake)
			ioctl(loop_fd, LOOP_CLR_FD, 0);
		close(loop_fd);
	}
	if (src_fd >= 0)
		close(src_fd);
	return ret;
}

int mount_main(int argc, char **argv)
{
	static struct mount_req req;

	if (parse_args(argc, argv, &req))
		return 1;
	return do_mount(&req);
}
#endif
