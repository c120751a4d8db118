/* btrfs property get|set|list: ro of a subvolume, label of a filesystem (its mount
 * point, a device or, with -t device, an image file) and compression of an inode. */
//config:config APPLET_PROPERTY
//config:	bool "btrfs property"
//config:	default y
//config:	depends on APPLET_FILESYSTEM
//config:	help
//config:	  Get and set the read-only flag of subvolumes, the label of a
//config:	  filesystem and the compression of files and directories.
//cmd:APPLET_PROPERTY property_main btrfs property get|Get a property value of a btrfs object
//cmd:APPLET_PROPERTY property_main btrfs property set|Set a property on a btrfs object
//cmd:APPLET_PROPERTY property_main btrfs property list|List the properties of an object

#include "config.h"
#if CFG_APPLET_PROPERTY
#include "applets.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/ioctl/subvol.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

/* object types, btrfs-progs' bits and -t letters (inode, subvol, filesystem, device) */
enum { T_INODE = 1, T_SUBVOL = 2, T_ROOT = 4, T_DEV = 8 };

/* The fsid of the btrfs holding path; -errno (-ENOTTY: not on btrfs). */
static int fsid_of(const char *path, uint8_t fsid[16])
{
	struct btrfs_ioctl_fs_info_args fi;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = btrfs_fs_info(fd, &fi);
	close(fd);
	memcpy(fsid, fi.fsid, 16);
	return ret;
}

/* The types path can be (0 when none); -1 after an error. */
static int object_types(const char *path)
{
	uint8_t fsid[16], parent_fsid[16];
	char *up, *real;
	struct stat st;
	int types = 0, ret;

	if (stat(path, &st)) {
		msg_error("failed to open %s: %m", path);
		msg_error("failed to detect object type: %m");
		return -1;
	}
	if (S_ISBLK(st.st_mode))
		types = T_DEV;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || fsid_of(path, fsid))
		return types;
	types |= T_INODE | (st.st_ino == BTRFS_FIRST_FREE_OBJECTID ? T_SUBVOL : 0);
	/* the filesystem itself: "/" or a directory whose parent is on another filesystem */
	real = realpath(path, NULL);
	if (!real || asprintf(&up, "%s/..", path) < 0) {
		free(real);
		msg_error("failed to detect object type: %m");
		return -1;
	}
	ret = strcmp(real, "/") ? fsid_of(up, parent_fsid) : -ENOTTY;
	free(real);
	free(up);
	if (ret == -ENOTTY || (!ret && memcmp(fsid, parent_fsid, 16)))
		types |= T_ROOT;
	return types;
}

/* ---- the properties: get when value is NULL, else set. Exit status. ---- */

static int prop_ro(const char *path, const char *value, int force)
{
	struct subvol_entry sv;
	uint64_t flags = 0;
	int fd, ret = 1, received;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BTRFS_IOC_SUBVOL_GETFLAGS, &flags) < 0) {
		msg_error("%s: %m", fd < 0 ? "Cannot open file or directory" :
			  "Could not get subvolume flags");
		goto out;
	}
	if (!value) {
		out_say("ro=%s\n", flags & BTRFS_SUBVOL_RDONLY ? "true" : "false");
		ret = 0;
		goto out;
	}
	if (strcmp(value, "true") && strcmp(value, "false")) {
		msg_error("invalid value for property: %s", value);
		goto out;
	}
	if (*value == 't' && (flags & BTRFS_SUBVOL_RDONLY)) {   /* no change */
		ret = 0;
		goto out;
	}
	received = 0;
	if (!subvol_get(fd, 0, &sv)) {
		received = !uuid_is_null(sv.received_uuid);
		subvol_free(&sv);
	}
	if (received && (flags & BTRFS_SUBVOL_RDONLY) && !force) {
		msg_error("cannot flip ro->rw with received_uuid set, use force if you really want that");
		goto out;
	}
	if (received && !(flags & BTRFS_SUBVOL_RDONLY))
		msg_warn("read-write subvolume with received_uuid, this is bad");
	flags = *value == 't' ? flags | BTRFS_SUBVOL_RDONLY : flags & ~(uint64_t)BTRFS_SUBVOL_RDONLY;
	if (ioctl(fd, BTRFS_IOC_SUBVOL_SETFLAGS, &flags) < 0) {
		msg_error("Could not set subvolume flags: %m");
		goto out;
	}
	ret = 0;
	if (received && *value == 'f') {   /* forced: the received UUID goes */
		struct btrfs_ioctl_received_subvol_args clear = { 0 };

		if (ioctl(fd, BTRFS_IOC_SET_RECEIVED_SUBVOL, &clear) < 0)
			msg_warn("failed to clear received_uuid: %m");
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int prop_label(const char *path, const char *value, int force)
{
	(void)force;
	return fs_label(path, value, "label=");
}

static int prop_compression(const char *path, const char *value, int force)
{
	char buf[64];
	ssize_t n;
	int fd = btrfs_open_path(path, 0, 0);

	(void)force;
	if (fd < 0)
		return 1;
	n = value ? fsetxattr(fd, "btrfs.compression", value, strlen(value), 0) :
		    fgetxattr(fd, "btrfs.compression", buf, sizeof(buf));
	close(fd);
	if (n < 0 && errno != ENODATA) {
		msg_error("failed to %s compression for %s: %m", value ? "set" : "get", path);
		return 1;
	}
	if (!value && n >= 0)
		out_say("compression=%.*s\n", (int)n, buf);
	return 0;
}

static const struct prop {
	char name[12];
	uint8_t types;
	int (*fn)(const char *path, const char *value, int force);
	const char *desc;
} props[] = {
	{ "ro", T_SUBVOL, prop_ro, "read-only status of a subvolume" },
	{ "label", T_DEV | T_ROOT, prop_label, "label of the filesystem" },
	{ "compression", T_INODE, prop_compression, "compression algorithm for the file or directory" },
};

USAGE(usage) =
	"usage: btrfs property get [-t <type>] <object> [<name>]\n"
	"       btrfs property set [-f] [-t <type>] <object> <name> <value>\n"
	"       btrfs property list [-t <type>] <object>\n\n"
	"    Properties: ro (subvolume), label (filesystem, device), compression (inode).\n"
	"    -t inode|subvol|filesystem|device (or i/s/f/d)   -f  force (ro with received_uuid)\n";

int property_main(int argc, char **argv)
{
	static const char type_names[][11] = { "inode", "subvol", "filesystem", "device" };
	int c, i, types = 0, force = 0, set = !strcmp(argv[0], "set"), list = argv[0][0] == 'l';
	const struct prop *p;
	const char *path, *name, *value;

	while ((c = cli_getopt(argc, argv, "ft:", NULL, usage)) != -1) {
		if (c == 'f') {
			force = 1;
			continue;
		}
		for (i = 0; i < 4 && strcmp(optarg, type_names[i]) &&
			    (optarg[0] != type_names[i][0] || optarg[1]); i++)
			;
		if (i == 4) {
			msg_error("invalid object type: %s", optarg);
			return 1;
		}
		types = 1 << i;
	}
	cli_check_argc(argc, set ? 3 : 1, -1, usage);   /* btrfs-progs' two checks */
	cli_check_argc(argc, 0, list ? 1 : set ? 3 : 2, usage);
	path = argv[optind];
	name = argv[optind + 1];
	value = set ? argv[optind + 2] : NULL;
	if (!types && (types = object_types(path)) <= 0) {
		if (!types)
			msg_error("object is not a btrfs object: %s", path);
		return 1;
	}
	if (!name) {   /* list, or get of all: once for every type they share */
		for (p = props; p < props + 3; p++)
			for (c = 1; c <= T_DEV; c <<= 1)
				if (types & p->types & c) {
					if (list)
						out_say("%-20s%s\n", p->name, p->desc);
					else if (p->fn(path, NULL, 0))
						return 1;
				}
		return 0;
	}
	for (p = props; p < props + 3 && strcmp(p->name, name); p++)
		;
	if (p == props + 3) {
		msg_error("unknown property: %s", name);
		return 1;
	}
	types &= p->types;
	if (!types || (types & (types - 1))) {
		msg_error(types ? "type of object is ambiguous, please use option -t" :
			  "object is not compatible with property: %s", p->name);
		return 1;
	}
	return p->fn(path, value, force);
}
#endif
