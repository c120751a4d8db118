/* btrfs subvolume: create, delete, snapshot, list, show, get-default, set-default, sync
 * on a mounted filesystem, through the subvolume ioctls (util/ioctl/subvol.h). */
//config:config APPLET_SUBVOLUME
//config:	bool "btrfs subvolume"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Create, snapshot, delete, list and inspect subvolumes of a
//config:	  mounted filesystem.
//cmd:APPLET_SUBVOLUME subvol_create_main btrfs subvolume create|Create a subvolume
//cmd:APPLET_SUBVOLUME subvol_delete_main btrfs subvolume delete|Delete subvolume(s)
//cmd:APPLET_SUBVOLUME subvol_snapshot_main btrfs subvolume snapshot|Create a snapshot of a subvolume
//cmd:APPLET_SUBVOLUME subvol_list_main btrfs subvolume list|List subvolumes and snapshots
//cmd:APPLET_SUBVOLUME subvol_show_main btrfs subvolume show|Show details of a subvolume
//cmd:APPLET_SUBVOLUME subvol_get_default_main btrfs subvolume get-default|Show the default subvolume
//cmd:APPLET_SUBVOLUME subvol_set_default_main btrfs subvolume set-default|Set the default subvolume
//cmd:APPLET_SUBVOLUME subvol_find_new_main btrfs subvolume find-new|List files modified since a generation
//cmd:APPLET_SUBVOLUME subvol_sync_main btrfs subvolume sync|Wait until deleted subvolumes are cleaned

#include "config.h"
#if CFG_APPLET_SUBVOLUME
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/timefmt.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "util/ioctl/subvol.h"
#include "util/sort.h"
#include "util/strnum.h"
#include <libgen.h>
#include <limits.h>
#include <time.h>
#include <linux/btrfs_tree.h>

/* The UUID, or "-" when it is null (btrfs-progs' listing). */
static const char *uuid_text(const uint8_t uuid[UUID_SIZE], char buf[UUID_STR_LEN])
{
	if (uuid_is_null(uuid))
		strcpy(buf, "-");
	else
		uuid_unparse(uuid, buf);
	return buf;
}

/* Splits path into a malloc'ed directory and name (dirname/basename semantics). */
static void split_path(const char *path, char **dir, char **name)
{
	char *a = strdup(path), *b = strdup(path);

	if (!a || !b) {
		msg_error("out of memory");
		exit(1);
	}
	*dir = strdup(dirname(a));
	*name = strdup(basename(b));
	free(a);
	free(b);
	if (!*dir || !*name) {
		msg_error("out of memory");
		exit(1);
	}
}

/* subvol_check_path() with the error printed (btrfs-progs wording); 0 when path is
 * the root of a subvolume. */
static int check_subvol_path(const char *path)
{
	return btrfs_check_subvol_path(path);
}

static int valid_subvol_name(const char *name)
{
	return strcmp(name, ".") && strcmp(name, "..") && !strchr(name, '/') && *name;
}

/* "-i LEVEL/ID" options as a struct btrfs_qgroup_inherit with n qgroups. */
struct inherit {
	struct btrfs_qgroup_inherit *qi;
	size_t n;
};

static int inherit_add(struct inherit *in, const char *arg)
{
	unsigned long long level, id;
	char *end;
	void *p;

	level = str_to_ull(arg, &end, 10);
	if (*end != '/' || level > 0xffff)
		goto bad;
	id = str_to_ull(end + 1, &end, 10);
	if (*end || id >> 48)
		goto bad;
	p = realloc(in->qi, sizeof(*in->qi) + (in->n + 1) * sizeof(uint64_t));
	if (!p)
		return -1;
	in->qi = p;
	if (!in->n)
		memset(in->qi, 0, sizeof(*in->qi));
	in->qi->qgroups[in->n++] = level << 48 | id;
	in->qi->num_qgroups = in->n;
	return 0;
bad:
	msg_error("invalid qgroupid %s", arg);
	return -1;
}

/* The ioctl argument of a new subvolume or snapshot: its name and qgroups. */
static void new_subvol_args(struct btrfs_ioctl_vol_args_v2 *args, const char *name,
			    const struct inherit *in)
{
	memset(args, 0, sizeof(*args));
	snprintf(args->name, sizeof(args->name), "%s", name);
	if (!in->n)
		return;
	args->flags |= BTRFS_SUBVOL_QGROUP_INHERIT;
	args->size = sizeof(*in->qi) + in->n * sizeof(uint64_t);
	args->qgroup_inherit = in->qi;
}

USAGE(create_usage) =
	"usage: btrfs subvolume create [-i <qgroupid>] [-p] [<dest>/]<name> [[<dest>/]<name>...]\n\n"
	"    Create subvolumes <name> in <dest> (default: the current directory); a\n"
	"    failure on one does not stop the others (exit status 1).\n\n"
	"    -i <qgroupid>   add the new subvolume to this qgroup (repeatable)\n"
	"    -p|--parents    create missing parent directories (like mkdir -p)\n";

/* mkdir -p of the directories above path (create -p). 0 or -1 (reported). */
static int make_parents(const char *path)
{
	char p[PATH_MAX];
	size_t i;
	struct stat st;

	snprintf(p, sizeof(p), "%s", path);
	for (i = 1; p[i]; i++) {
		if (p[i] != '/' || p[i - 1] == '/')
			continue;
		p[i] = 0;
		if (stat(p, &st) && errno == ENOENT && mkdir(p, 0777)) {
			msg_error("failed to create directory %s: %m", p);
			return -1;
		}
		if (stat(p, &st) || !S_ISDIR(st.st_mode)) {
			errno = errno ? errno : ENOTDIR;
			msg_error("failed to check directory %s before creation: %m", p);
			return -1;
		}
		p[i] = '/';
	}
	return 0;
}

/* Creates one subvolume (and with parents the directories above it); 0, or 1 after
 * printing the error. */
static int create_one(const char *arg, const struct inherit *in, int parents)
{
	struct btrfs_ioctl_vol_args_v2 args;
	char *dir, *name, path[PATH_MAX];
	size_t n = strlen(arg);
	struct stat st;
	int fd, ret = 1;

	while (n > 1 && arg[n - 1] == '/')
		n--;            /* "a/subv//": the subvolume is subv, no directory of that name */
	if (n >= sizeof(path)) {
		msg_error("path too long: %s", arg);
		return 1;
	}
	memcpy(path, arg, n);
	path[n] = 0;
	if (parents && make_parents(path))
		return 1;
	if (stat(path, &st) == 0) {
		msg_error("target path already exists: %s", path);
		return 1;
	}
	if (errno != ENOENT) {
		msg_error("cannot access %s: %s", path, strerror(errno));
		return 1;
	}
	split_path(path, &dir, &name);
	if (!valid_subvol_name(name))
		msg_error("invalid subvolume name: %s", name);
	else if (strlen(name) > BTRFS_SUBVOL_NAME_MAX)
		msg_error("subvolume name too long: %s", name);
	else if ((fd = btrfs_open_path(dir, 1, 0)) >= 0) {
		out_say("Create subvolume '%s/%s'\n", dir, name);
		new_subvol_args(&args, name, in);
		if (ioctl(fd, BTRFS_IOC_SUBVOL_CREATE_V2, &args) < 0)
			msg_error("cannot create subvolume: %s", strerror(errno));
		else
			ret = 0;
		close(fd);
	}
	free(dir);
	free(name);
	return ret;
}

int subvol_create_main(int argc, char **argv)
{
	struct inherit in = { 0 };
	int c, ret = 0, parents = 0;

	while ((c = cli_getopt_long(argc, argv, "i:p", "parents=p", create_usage)) != -1)
		if (c == 'p')
			parents = 1;
		else if (inherit_add(&in, optarg))
			return 1;
	cli_check_argc(argc, 1, -1, create_usage);
	for (int i = optind; i < argc; i++)
		ret |= create_one(argv[i], &in, parents);
	free(in.qi);
	return ret;
}

/* Waits for the commit of the current transaction of fd's filesystem. */
static int commit_and_wait(int fd)
{
	uint64_t transid;

	if (ioctl(fd, BTRFS_IOC_START_SYNC, &transid) < 0 ||
	    ioctl(fd, BTRFS_IOC_WAIT_SYNC, &transid) < 0)
		return -1;
	return 0;
}

USAGE(delete_usage) =
	"usage: btrfs subvolume delete [options] <subvolume> [<subvolume>...]\n"
	"       btrfs subvolume delete [options] -i|--subvolid <subvolid> <path>\n\n"
	"    Delete subvolumes by path, or by id below the mounted filesystem at <path>.\n\n"
	"    -c|--commit-after   wait for a transaction commit at the end\n"
	"    -C|--commit-each    wait for a transaction commit after each deletion\n"
	"    -i|--subvolid ID    delete the subvolume with this id\n"
	"    -R|--recursive      delete the subvolumes beneath each subvolume first\n"
	"    -v|--verbose        more output\n";

enum { COMMIT_NONE, COMMIT_AFTER, COMMIT_EACH };

struct delete_opts {
	int commit;
	uint64_t subvolid;
	int last;      /* this is the last argument */
};

/* Deletes one subvolume: path (by name in its parent), or opts->subvolid below path.
 * Returns 0, or 1 after printing the error. *commit_fd gets the fd to sync later. */
static int delete_one(const char *path, const struct delete_opts *o, int *commit_fd)
{
	char *real, *dir = NULL, *name = NULL, *subpath = NULL;
	struct btrfs_ioctl_vol_args_v2 args;
	uint64_t def_id = 0, target = o->subvolid;
	int fd = -1, ret = 1, err;

	if (o->subvolid) {
		fd = btrfs_open_path(path, 1, 0);
		if (fd < 0)
			return 1;
		err = subvol_path(fd, o->subvolid, &subpath);
		close(fd);
		fd = -1;
		if (err && err != -ENOENT) {
			msg_error("Could not search B-tree: %s", strerror(-err));
			return 1;
		}
	}
	if (check_subvol_path(path))
		goto out;
	real = realpath(path, NULL);
	if (!real) {
		msg_error("cannot find real path for '%s': %s", path, strerror(errno));
		goto out;
	}
	split_path(real, &dir, &name);
	fd = btrfs_open_path(o->subvolid ? real : dir, 1, 0);
	free(real);
	if (fd < 0)
		goto out;
	subvol_default_id(fd, &def_id);
	if (!o->subvolid) {
		int sfd = open(path, O_RDONLY | O_DIRECTORY);

		if (sfd < 0 || subvol_id_of_fd(sfd, &target)) {
			if (sfd >= 0)
				close(sfd);
			goto out;
		}
		close(sfd);
	}
	if (target == def_id) {
		if (o->subvolid)
			msg_warn("not deleting default subvolume id %llu '%s/%s'",
				 (unsigned long long)def_id, path, subpath ? subpath : "");
		else
			msg_warn("not deleting default subvolume id %llu '%s/%s'",
				 (unsigned long long)def_id, dir, name);
		goto out;
	}
	out_say("Delete subvolume (%s): ", o->commit == COMMIT_EACH ||
	    (o->commit == COMMIT_AFTER && o->last) ? "commit" : "no-commit");
	if (!o->subvolid)
		out_say("'%s/%s'\n", dir, name);
	else if (subpath)
		out_say("'%s/%s'\n", path, subpath);
	else
		out_say("subvolid=%llu\n", (unsigned long long)o->subvolid);
	if (cli_globals.dry_run) {  /* btrfs --dry-run: the message only */
		ret = 0;
		goto out;
	}
	memset(&args, 0, sizeof(args));
	if (o->subvolid) {
		args.flags = BTRFS_SUBVOL_SPEC_BY_ID;
		args.subvolid = o->subvolid;
	} else {
		snprintf(args.name, sizeof(args.name), "%s", name);
	}
	if (ioctl(fd, BTRFS_IOC_SNAP_DESTROY_V2, &args) < 0) {
		int e = errno;

		msg_error("Could not destroy subvolume/snapshot: %s", strerror(e));
		if (e == EPERM)
			msg_warn("deletion failed with EPERM, you don't have permissions or send may be in progress");
		goto out;
	}
	ret = 0;
	if (o->commit == COMMIT_EACH && commit_and_wait(fd)) {
		msg_error("unable to wait for commit after '%s': %s", path, strerror(errno));
		ret = 1;
	} else if (o->commit == COMMIT_AFTER && *commit_fd < 0) {
		*commit_fd = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	free(name);
	free(subpath);
	return ret;
}

/* Deletes the subvolumes nested in subvolume id (path its root), the deepest first.
 * Returns 0, or 1 when one of them failed. */
static int delete_nested(const char *path, uint64_t id, const struct subvol_entry *all, size_t n,
			 const struct delete_opts *o, int *commit_fd)
{
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		char *sub;

		if (all[i].parent_id != id || !all[i].rel_path || all[i].id == id)
			continue;
		if (asprintf(&sub, "%s/%s", path, all[i].rel_path) < 0) {
			msg_error("out of memory");
			return 1;
		}
		ret |= delete_nested(sub, all[i].id, all, n, o, commit_fd);
		ret |= delete_one(sub, o, commit_fd);
		free(sub);
	}
	return ret;
}

/* --recursive: what is beneath path goes first. */
static int delete_beneath(const char *path, const struct delete_opts *o, int *commit_fd)
{
	struct delete_opts nested = *o;
	struct subvol_entry *all;
	size_t n;
	uint64_t id;
	int fd = open(path, O_RDONLY | O_DIRECTORY), err, ret;

	if (fd < 0 || subvol_id_of_fd(fd, &id) || (err = subvol_get_all(fd, &all, &n))) {
		msg_error("cannot list the subvolumes beneath %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	nested.last = 0;
	ret = delete_nested(path, id, all, n, &nested, commit_fd);
	subvol_free_all(all, n);
	return ret;
}

int subvol_delete_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "commit-after", no_argument, 'c' },
		{ "commit-each", no_argument, 'C' },
		{ "subvolid", required_argument, 'i' },
		{ "recursive", no_argument, 'R' },
		{ "verbose", no_argument, 'v' },
		{ NULL, 0, 0 }
	};
	struct delete_opts o = { 0 };
	int c, i, ret = 0, commit_fd = -1, recursive = 0;

	while ((c = cli_getopt(argc, argv, "cCi:Rv", longopts, delete_usage)) != -1) {
		if (c == 'R')
			recursive = 1;
		else if (c == 'c')
			o.commit = COMMIT_AFTER;
		else if (c == 'C')
			o.commit = COMMIT_EACH;
		else if (c == 'v')
			cli_globals.verbose++;
		else if (c == 'i' && !(o.subvolid = cli_arg_u64(optarg))) {
			msg_error("invalid subvolume id: %s", optarg);
			return 1;
		}
	}
	cli_check_argc(argc, 1, o.subvolid ? 1 : -1, delete_usage);
	if (recursive && o.subvolid) {
		msg_error("option --recursive is not supported with --subvolid");
		return 1;
	}
	/* shown from the second -v (global or local) on, as btrfs-progs does */
	if (cli_globals.verbose > 1)
		printf("Transaction commit: %s\n", o.commit == COMMIT_NONE ? "none (default)" :
		       o.commit == COMMIT_AFTER ? "at the end" : "after each");
	/* one filesystem is synced at the end (the common case of one mount) */
	for (i = optind; i < argc; i++) {
		o.last = i + 1 == argc;
		if (recursive && !subvol_check_path(argv[i]))
			ret |= delete_beneath(argv[i], &o, &commit_fd);
		ret |= delete_one(argv[i], &o, &commit_fd);
	}
	if (commit_fd >= 0) {
		if (commit_and_wait(commit_fd)) {
			msg_error("unable to do final sync after deletion: %s", strerror(errno));
			ret = 1;
		}
		close(commit_fd);
	}
	return ret;
}

USAGE(snapshot_usage) =
	"usage: btrfs subvolume snapshot [-r] [-i <qgroupid>] <subvolume> { <subdir>/<name> | <subdir> }\n\n"
	"    Snapshot <subvolume> as <subdir>/<name>, or into <subdir> under the\n"
	"    subvolume's own name.\n\n"
	"    -r              make the snapshot read-only\n"
	"    -i <qgroupid>   add the snapshot to this qgroup (repeatable)\n";

int subvol_snapshot_main(int argc, char **argv)
{
	struct btrfs_ioctl_vol_args_v2 args;
	struct inherit in = { 0 };
	const char *subvol, *dst;
	char *dir = NULL, *name = NULL, *unused;
	int c, readonly = 0, fd = -1, fddst = -1, ret = 1;
	struct stat st;

	while ((c = cli_getopt(argc, argv, "ri:", NULL, snapshot_usage)) != -1) {
		if (c == 'r')
			readonly = 1;
		else if (c == 'i' && inherit_add(&in, optarg))
			return 1;
	}
	cli_check_argc(argc, 2, 2, snapshot_usage);
	subvol = argv[optind];
	dst = argv[optind + 1];
	if (check_subvol_path(subvol))
		goto out;
	if (stat(dst, &st) == 0 && !S_ISDIR(st.st_mode)) {
		msg_error("'%s' exists and it is not a directory", dst);
		goto out;
	}
	if (stat(dst, &st) == 0) {
		split_path(subvol, &unused, &name);
		free(unused);
		dir = strdup(dst);
	} else if (errno != ENOENT) {
		msg_error("cannot access %s: %s", dst, strerror(errno));
		goto out;
	} else {
		split_path(dst, &dir, &name);
	}
	if (!dir || !valid_subvol_name(name)) {
		msg_error("invalid snapshot name '%s'", name);
		goto out;
	}
	if (strlen(name) > BTRFS_SUBVOL_NAME_MAX) {
		msg_error("snapshot name too long '%s'", name);
		goto out;
	}
	if ((fddst = btrfs_open_path(dir, 1, 0)) < 0 || (fd = btrfs_open_path(subvol, 1, 0)) < 0)
		goto out;
	out_say("Create a %ssnapshot of '%s' in '%s/%s'\n", readonly ? "readonly " : "",
	    subvol, dir, name);
	new_subvol_args(&args, name, &in);
	args.fd = fd;
	if (readonly)
		args.flags |= BTRFS_SUBVOL_RDONLY;
	if (ioctl(fddst, BTRFS_IOC_SNAP_CREATE_V2, &args) < 0)
		msg_error("cannot snapshot '%s': %s", subvol, strerror(errno));
	else
		ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (fddst >= 0)
		close(fddst);
	free(in.qi);
	free(dir);
	free(name);
	return ret;
}

/* ---- list ---- */

enum list_col { COL_ID, COL_GEN, COL_CGEN, COL_PARENT, COL_TOP, COL_OTIME, COL_PUUID,
		COL_RUUID, COL_UUID, COL_PATH, NCOLS };
static const char *const col_name[NCOLS] = {
	"ID", "gen", "cgen", "parent", "top level", "otime", "parent_uuid", "received_uuid",
	"uuid", "path"
};

/* One row: the subvolume plus what the listing derives from its position. */
struct row {
	struct subvol_entry *e;
	char *full_path;
	uint64_t top_id;
	int deleted;
};

enum filter_kind { F_SNAPSHOT, F_FLAGS, F_GEN_EQ, F_GEN_LE, F_GEN_GE, F_CGEN_EQ, F_CGEN_LE,
		   F_CGEN_GE, F_TOPID, F_FULL_PATH };
struct filter { enum filter_kind kind; uint64_t data; };
enum sort_key { S_ROOTID, S_OGEN, S_GEN, S_PATH };
struct sort { enum sort_key key; int descending; };

struct list_opts {
	int cols[NCOLS];
	int table, only_deleted;
	struct filter filters[32];
	int nfilters;
	struct sort sorts[32];
	int nsorts;
};

USAGE(list_usage) =
	"usage: btrfs subvolume list [options] <path>\n\n"
	"    List the subvolumes and snapshots of the filesystem mounted at <path>.\n\n"
	"    -o   only subvolumes below <path>\n"
	"    -a   all subvolumes, paths below other subvolumes marked <FS_TREE>\n"
	"    -p   print the parent id           -c   print the creation generation\n"
	"    -g   print the generation          -u   print the UUID\n"
	"    -q   print the parent UUID         -R   print the received UUID\n"
	"    -s   snapshots only                -r   read-only subvolumes only\n"
	"    -d   deleted subvolumes not yet cleaned\n"
	"    -t   table layout\n"
	"    -G [+|-]GEN    generation >= (+), <= (-) or = GEN\n"
	"    -C [+|-]GEN    creation generation >= (+), <= (-) or = GEN\n"
	"    --sort=[+|-]KEY,...   sort by gen, ogen, rootid or path (- descending)\n";

static int cmp_u64(uint64_t a, uint64_t b) { return a > b ? 1 : a < b ? -1 : 0; }

static int row_cmp_key(const struct row *a, const struct row *b, enum sort_key k)
{
	switch (k) {
	case S_OGEN: return cmp_u64(a->e->otransid ? a->e->otransid : a->e->root_offset,
				    b->e->otransid ? b->e->otransid : b->e->root_offset);
	case S_GEN: return cmp_u64(a->e->generation, b->e->generation);
	case S_PATH: { int c = strcmp(a->full_path, b->full_path); return c > 0 ? 1 : c < 0 ? -1 : 0; }
	default: return cmp_u64(a->e->id, b->e->id);
	}
}

static const struct list_opts *sort_opts;

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int i, c;

	for (i = 0; i < sort_opts->nsorts; i++) {
		c = row_cmp_key(a, b, sort_opts->sorts[i].key);
		if (sort_opts->sorts[i].descending)
			c = -c;
		if (c)
			return c;
	}
	return row_cmp_key(a, b, S_ROOTID);
}

static uint64_t ogen_of(const struct subvol_entry *e)
{
	return e->otransid ? e->otransid : e->root_offset;
}

static const struct subvol_entry *find_entry(const struct subvol_entry *v, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].id == id)
			return &v[mid];
		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Joins the relative paths up to top_id (or the top level); -ENOENT when a link of
 * the chain is missing (a deleted subvolume). Sets r->top_id to the parent. */
static int resolve_full_path(struct row *r, const struct subvol_entry *v, size_t n, uint64_t top_id)
{
	const struct subvol_entry *e = r->e;
	char *acc = NULL, *tmp;

	for (;;) {
		if (!e->parent_id || !e->rel_path) {
			free(acc);
			return -ENOENT;
		}
		if (asprintf(&tmp, "%s%s%s", e->rel_path, acc ? "/" : "", acc ? acc : "") < 0) {
			msg_error("out of memory");
			exit(1);
		}
		free(acc);
		acc = tmp;
		if (!r->top_id)
			r->top_id = e->parent_id;
		if (e->parent_id == top_id || e->parent_id == BTRFS_FS_TREE_OBJECTID)
			break;
		e = find_entry(v, n, e->parent_id);
		if (!e) {
			free(acc);
			return -ENOENT;
		}
	}
	r->full_path = acc;
	return 0;
}

static int filter_row(struct row *r, const struct list_opts *o)
{
	const struct subvol_entry *e = r->e;
	char *tmp;

	if (r->deleted != o->only_deleted)
		return 0;
	for (int i = 0; i < o->nfilters; i++) {
		uint64_t d = o->filters[i].data;
		int keep = 1;

		switch (o->filters[i].kind) {
		case F_SNAPSHOT: keep = e->root_offset != 0; break;
		case F_FLAGS: keep = (e->flags & d) != 0; break;
		case F_GEN_EQ: keep = e->generation == d; break;
		case F_GEN_LE: keep = e->generation <= d; break;
		case F_GEN_GE: keep = e->generation >= d; break;
		case F_CGEN_EQ: keep = ogen_of(e) == d; break;
		case F_CGEN_LE: keep = ogen_of(e) <= d; break;
		case F_CGEN_GE: keep = ogen_of(e) >= d; break;
		case F_TOPID: keep = r->top_id == d; break;
		case F_FULL_PATH:
			if (r->full_path && r->top_id != d) {
				if (asprintf(&tmp, "<FS_TREE>/%s", r->full_path) < 0) {
					msg_error("out of memory");
					exit(1);
				}
				free(r->full_path);
				r->full_path = tmp;
			}
			break;
		}
		if (!keep)
			return 0;
	}
	return 1;
}

static void print_col(const struct row *r, enum list_col c)
{
	const struct subvol_entry *e = r->e;
	char buf[64];

	switch (c) {
	case COL_ID: printf("%llu", (unsigned long long)e->id); break;
	case COL_GEN: printf("%llu", (unsigned long long)e->generation); break;
	case COL_CGEN: printf("%llu", (unsigned long long)ogen_of(e)); break;
	case COL_PARENT: printf("%llu", (unsigned long long)e->parent_id); break;
	case COL_TOP: printf("%llu", (unsigned long long)r->top_id); break;
	case COL_OTIME:
		fputs(local_time_text(e->otime, "%Y-%m-%d %X", buf, sizeof(buf)), stdout);
		break;
	case COL_PUUID: uuid_text(e->parent_uuid, buf); printf("%-36s", buf); break;
	case COL_RUUID: uuid_text(e->received_uuid, buf); printf("%-36s", buf); break;
	case COL_UUID: uuid_text(e->uuid, buf); printf("%-36s", buf); break;
	case COL_PATH: printf("%s", r->full_path); break;
	default: break;
	}
}

/* JSON member names of the columns (those of later btrfs-progs releases). */
static const char *const col_json[NCOLS] = {
	"id", "generation", "cgeneration", "parent", "top_level", "otime", "parent_uuid",
	"received_uuid", "uuid", "path"
};

static void json_col(struct out *out, const struct row *r, enum list_col c)
{
	const struct subvol_entry *e = r->e;
	char buf[64];

	switch (c) {
	case COL_ID: out_u64(out, NULL, col_json[c], e->id); break;
	case COL_GEN: out_u64(out, NULL, col_json[c], e->generation); break;
	case COL_CGEN: out_u64(out, NULL, col_json[c], ogen_of(e)); break;
	case COL_PARENT: out_u64(out, NULL, col_json[c], e->parent_id); break;
	case COL_TOP: out_u64(out, NULL, col_json[c], r->top_id); break;
	case COL_OTIME:
		out_str(out, NULL, col_json[c],
			local_time_text(e->otime, "%Y-%m-%d %X %z", buf, sizeof(buf)));
		break;
	case COL_PUUID: out_uuid(out, NULL, col_json[c], e->parent_uuid); break;
	case COL_RUUID: out_uuid(out, NULL, col_json[c], e->received_uuid); break;
	case COL_UUID: out_uuid(out, NULL, col_json[c], e->uuid); break;
	case COL_PATH: out_str(out, NULL, col_json[c], r->full_path); break;
	default: break;
	}
}

/* `btrfs --format json subvolume list`: "subvolume-list", one object per row with the
 * selected columns. */
static void print_rows_json(const struct row *rows, size_t n, const struct list_opts *o)
{
	struct out out;

	out_start(&out, 0, 0);
	out_group_begin(&out, "subvolume-list", OUT_LIST);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].e->id == BTRFS_FS_TREE_OBJECTID)
			continue;
		out_group_begin(&out, NULL, OUT_MAP);
		for (int c = 0; c < NCOLS; c++)
			if (o->cols[c])
				json_col(&out, &rows[i], c);
		out_group_end(&out);
	}
	out_group_end(&out);
	out_end(&out);
}

static void print_rows(const struct row *rows, size_t n, const struct list_opts *o)
{
	if (out_json()) {
		print_rows_json(rows, n, o);
		return;
	}
	int c;

	if (out_quiet())
		return;
	if (o->table) {
		for (c = 0; c < NCOLS; c++)
			if (o->cols[c])
				printf("%s\t", col_name[c]);
		putchar('\n');
		for (c = 0; c < NCOLS; c++)
			if (o->cols[c])
				printf("%.*s\t", (int)strlen(col_name[c]), "-------------");
		putchar('\n');
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].e->id == BTRFS_FS_TREE_OBJECTID)
			continue;
		for (c = 0; c < NCOLS; c++) {
			if (!o->cols[c])
				continue;
			if (!o->table)
				printf("%s ", col_name[c]);
			print_col(&rows[i], c);
			if (c != COL_PATH)
				fputs(o->table && c == COL_TOP ? "\t\t" : o->table ? "\t" : " ", stdout);
		}
		putchar('\n');
	}
}

static int add_filter(struct list_opts *o, enum filter_kind k, uint64_t data)
{
	if (o->nfilters == (int)(sizeof(o->filters) / sizeof(o->filters[0]))) {
		msg_error("too many filters");
		return -1;
	}
	o->filters[o->nfilters].kind = k;
	o->filters[o->nfilters++].data = data;
	return 0;
}

/* -G/-C argument: "+N" (>=), "-N" (<=) or "N" (=); eq is the "=" filter kind. */
static int add_gen_filter(struct list_opts *o, const char *arg, enum filter_kind eq)
{
	enum filter_kind k = eq;

	if (*arg == '+') {
		k = eq + 2;
		arg++;
	} else if (*arg == '-') {
		k = eq + 1;
		arg++;
	}
	return add_filter(o, k, cli_arg_u64(arg));
}

static int parse_sort(struct list_opts *o, char *arg)
{
	static const char *const keys[] = { "rootid", "ogen", "gen", "path" };
	char *save = NULL, *p;

	for (p = strtok_r(arg, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		int desc = 0, k;

		if (*p == '+' || *p == '-')
			desc = *p++ == '-';
		for (k = 0; k < 4 && strcmp(p, keys[k]); k++)
			;
		if (k == 4 || o->nsorts == (int)(sizeof(o->sorts) / sizeof(o->sorts[0])))
			return -1;
		o->sorts[o->nsorts].key = (enum sort_key)k;
		o->sorts[o->nsorts++].descending = desc;
	}
	return 0;
}

static int list_subvolumes(int fd, struct list_opts *o, uint64_t top_id)
{
	struct subvol_entry *all;
	struct row *rows;
	size_t n, nrows = 0;
	int ret = subvol_get_all(fd, &all, &n);

	if (ret) {
		msg_error("can't perform the search: %s", strerror(-ret));
		return 1;
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		msg_error("out of memory");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		struct row *r = &rows[nrows];

		memset(r, 0, sizeof(*r));
		r->e = &all[i];
		if (resolve_full_path(r, all, n, top_id)) {
			r->deleted = r->e->id != BTRFS_FS_TREE_OBJECTID;
			r->full_path = strdup(r->deleted ? "DELETED" : "TOPLEVEL");
		}
		if (filter_row(r, o))
			nrows++;
		else
			free(r->full_path);
	}
	sort_opts = o;
	sort_stable(rows, nrows, sizeof(*rows), row_cmp);
	print_rows(rows, nrows, o);
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].full_path);
	free(rows);
	subvol_free_all(all, n);
	return 0;
}

int subvol_list_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "sort", required_argument, 'S' },
		{ NULL, 0, 0 }
	};
	struct list_opts o;
	int c, all = 0, only_below = 0, fd, ret;
	uint64_t flags = 0, top_id;

	memset(&o, 0, sizeof(o));
	while ((c = cli_getopt(argc, argv, "acdgopqsurRG:C:t", longopts, list_usage)) != -1) {
		switch (c) {
		case 'p': o.cols[COL_PARENT] = 1; break;
		case 'a': all = 1; break;
		case 'c': o.cols[COL_CGEN] = 1; break;
		case 'd': o.only_deleted = 1; break;
		case 'g': o.cols[COL_GEN] = 1; break;
		case 'o': only_below = 1; break;
		case 't': o.table = 1; break;
		case 's':
			if (add_filter(&o, F_SNAPSHOT, 0))
				return 1;
			o.cols[COL_CGEN] = o.cols[COL_OTIME] = 1;
			break;
		case 'u': o.cols[COL_UUID] = 1; break;
		case 'q': o.cols[COL_PUUID] = 1; break;
		case 'R': o.cols[COL_RUUID] = 1; break;
		case 'r': flags |= BTRFS_ROOT_SUBVOL_RDONLY; break;
		case 'G':
			o.cols[COL_GEN] = 1;
			if (add_gen_filter(&o, optarg, F_GEN_EQ))
				cli_usage_error(list_usage, NULL);
			break;
		case 'C':
			o.cols[COL_CGEN] = 1;
			if (add_gen_filter(&o, optarg, F_CGEN_EQ))
				cli_usage_error(list_usage, NULL);
			break;
		case 'S':
			if (parse_sort(&o, optarg))
				cli_usage_error(list_usage, NULL);
			break;
		}
	}
	cli_check_argc(argc, 1, 1, list_usage);
	fd = btrfs_open_path(argv[optind], 1, 0);
	if (fd < 0) {
		msg_error("can't access '%s'", argv[optind]);
		return 1;
	}
	if (flags && add_filter(&o, F_FLAGS, flags))
		return 1;
	ret = subvol_id_of_fd(fd, &top_id);
	if (ret) {
		msg_error("cannot resolve rootid for path: %s", strerror(-ret));
		close(fd);
		return 1;
	}
	if ((all && add_filter(&o, F_FULL_PATH, top_id)) ||
	    (!all && only_below && add_filter(&o, F_TOPID, top_id)))
		return 1;
	o.cols[COL_ID] = o.cols[COL_GEN] = o.cols[COL_TOP] = o.cols[COL_PATH] = 1;
	ret = list_subvolumes(fd, &o, all || only_below ? 0 : top_id);
	close(fd);
	return ret;
}

/* ---- show ---- */

USAGE(show_usage) =
	"usage: btrfs subvolume show [options] <path>\n\n"
	"    Show the subvolume at <path>, or the one with the given id or UUID on\n"
	"    the filesystem of <path>.\n\n"
	"    -r|--rootid ID     the subvolume with this id\n"
	"    -u|--uuid UUID     the subvolume with this UUID\n";


/* Full paths of all subvolumes (NULL when unreachable), indexed like all[]. */
static char **full_paths(const struct subvol_entry *all, size_t n)
{
	char **paths = calloc(n ? n : 1, sizeof(*paths));
	int progress = 1;

	if (!paths) {
		msg_error("out of memory");
		exit(1);
	}
	/* parents may have larger ids than children: repeat until nothing changes */
	while (progress) {
		progress = 0;
		for (size_t i = 0; i < n; i++) {
			const struct subvol_entry *p;
			const char *base;

			if (paths[i] || !all[i].rel_path || !all[i].parent_id)
				continue;
			if (all[i].parent_id == BTRFS_FS_TREE_OBJECTID) {
				base = "";
			} else {
				p = find_entry(all, n, all[i].parent_id);
				if (!p || !paths[p - all])
					continue;
				base = paths[p - all];
			}
			if (asprintf(&paths[i], "%s%s%s", base, *base ? "/" : "", all[i].rel_path) < 0) {
				msg_error("out of memory");
				exit(1);
			}
			progress = 1;
		}
	}
	return paths;
}

/* Prints paths of snapshots of uuid below parent in depth-first order by id, the
 * order of a walk of the ROOT_REF items from the top level. */
static void print_snapshots_below(const struct subvol_entry *all, char **paths, size_t n,
				  uint64_t parent, const uint8_t uuid[16], int depth)
{
	if (depth > 4096)
		return;
	for (size_t i = 0; i < n; i++) {
		if (all[i].parent_id != parent || !paths[i] || all[i].id == parent)
			continue;
		if (!memcmp(all[i].parent_uuid, uuid, 16))
			out_say("\t\t\t\t%s\n", paths[i]);
		print_snapshots_below(all, paths, n, all[i].id, uuid, depth + 1);
	}
}

/* The quota group of the subvolume, when quotas are on. 0 or -errno. */
static int print_subvol_quota(int fd, uint64_t id, unsigned mode)
{
	struct subvol_qgroup q;
	int ret = subvol_qgroup(fd, id, &q);

	if (ret == -ENOTTY)
		return 0;
	if (ret) {
		msg_error("quota query failed: %s", strerror(-ret));
		return ret;
	}
	out_say("\tQuota group:\t\t0/%llu\n", (unsigned long long)id);
	out_say("\t  Limit referenced:\t%s\n", q.max_rfer ? pretty_size(q.max_rfer, mode) : "-");
	out_say("\t  Limit exclusive:\t%s\n", q.max_excl ? pretty_size(q.max_excl, mode) : "-");
	out_say("\t  Usage referenced:\t%s\n", pretty_size(q.rfer, mode));
	out_say("\t  Usage exclusive:\t%s\n", pretty_size(q.excl, mode));
	return 0;
}

static void print_subvol_show(const struct subvol_entry *sv, const char *path,
			      const struct subvol_entry *all, size_t n)
{
	char buf[64], ctime_buf[64];
	char **paths;

	if (memcmp(sv->received_uuid, (uint8_t[16]){ 0 }, 16) &&
	    !(sv->flags & BTRFS_ROOT_SUBVOL_RDONLY))
		msg_warn("the subvolume is read-write and has received_uuid set,\n"
			 "\t don't use it for incremental send. Please see section\n"
			 "\t 'SUBVOLUME FLAGS' in manual page btrfs-subvolume for\n"
			 "\t further information.");
	if (sv->id == BTRFS_FS_TREE_OBJECTID) {
		out_say("/\n\tName: \t\t\t<FS_TREE>\n");
	} else {
		const char *slash = strrchr(path, '/');

		out_say("%s\n\tName: \t\t\t%s\n", path, slash ? slash + 1 : path);
	}
	uuid_text(sv->uuid, buf);
	out_say("\tUUID: \t\t\t%s\n", buf);
	uuid_text(sv->parent_uuid, buf);
	out_say("\tParent UUID: \t\t%s\n", buf);
	uuid_text(sv->received_uuid, buf);
	out_say("\tReceived UUID: \t\t%s\n", buf);
	local_time_text(sv->otime, "%Y-%m-%d %X %z", ctime_buf, sizeof(ctime_buf));
	out_say("\tCreation time: \t\t%s\n", ctime_buf);
	out_say("\tSubvolume ID: \t\t%llu\n", (unsigned long long)sv->id);
	out_say("\tGeneration: \t\t%llu\n", (unsigned long long)sv->generation);
	out_say("\tGen at creation: \t%llu\n", (unsigned long long)sv->otransid);
	out_say("\tParent ID: \t\t%llu\n", (unsigned long long)sv->parent_id);
	out_say("\tTop level ID: \t\t%llu\n", (unsigned long long)sv->parent_id);
	out_say("\tFlags: \t\t\t%s\n", sv->flags & BTRFS_ROOT_SUBVOL_RDONLY ? "readonly" : "-");
	out_say("\tSend transid: \t\t%llu\n", (unsigned long long)sv->stransid);
	/* btrfs-progs 6.2 prints the creation time here; kept for identical output */
	out_say("\tSend time: \t\t%s\n", ctime_buf);
	out_say("\tReceive transid: \t%llu\n", (unsigned long long)sv->rtransid);
	local_time_text(sv->rtime, "%Y-%m-%d %X %z", buf, sizeof(buf));
	out_say("\tReceive time: \t\t%s\n", buf);
	out_say("\tSnapshot(s):\n");
	paths = full_paths(all, n);
	print_snapshots_below(all, paths, n, BTRFS_FS_TREE_OBJECTID, sv->uuid, 0);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int subvol_show_main(int argc, char **argv)
{
	static const struct cli_option longopts[] = {
		{ "rootid", required_argument, 'r' },
		{ "uuid", required_argument, 'u' },
		{ NULL, 0, 0 }
	};
	struct subvol_entry sv, *all = NULL;
	const struct subvol_entry *found = NULL;
	uint64_t rootid = 0;
	uint8_t uuid[16];
	int c, by_uuid = 0, fd = -1, ret = 1, err;
	char *real = NULL, *path = NULL;
	size_t n = 0;

	memset(&sv, 0, sizeof(sv));
	unsigned mode = units_parse_args(&argc, argv, 1);

	while ((c = cli_getopt(argc, argv, "r:u:", longopts, show_usage)) != -1) {
		if (c == 'r')
			rootid = cli_arg_u64(optarg);
		if (c == 'u') {
			memset(uuid, 0, sizeof(uuid));
			uuid_parse(optarg, uuid);
			by_uuid = 1;
		}
	}
	cli_check_argc(argc, 1, 1, show_usage);
	if (rootid && by_uuid) {
		msg_error("options --rootid and --uuid cannot be used at the same time");
		cli_usage_error(show_usage, NULL);
	}
	real = realpath(argv[optind], NULL);
	if (!real) {
		msg_error("cannot find real path for '%s': %s", argv[optind], strerror(errno));
		return 1;
	}
	fd = open(real, O_RDONLY);
	if (fd < 0) {
		msg_error("can't access '%s'", real);
		goto out;
	}
	if (!by_uuid && !rootid && check_subvol_path(real))
		goto out;
	err = subvol_get_all(fd, &all, &n);
	if (err) {
		msg_error("Could not search B-tree: %s", strerror(-err));
		goto out;
	}
	if (by_uuid) {
		for (size_t i = 0; i < n && !found; i++)
			if (all[i].has_root_item && !memcmp(all[i].uuid, uuid, 16))
				found = &all[i];
		if (!found) {
			char text[UUID_STR_LEN];

			uuid_unparse(uuid, text);
			msg_error("can't find uuid '%s' on '%s'", text, real);
			goto out;
		}
		rootid = found->id;
	}
	err = subvol_get(fd, rootid, &sv);
	if (!err && sv.id != BTRFS_FS_TREE_OBJECTID)
		err = subvol_path(fd, sv.id, &path);
	if (err) {
		errno = -err;
		msg_error("%s: %s", err == -ENOENT ? "Subvolume not found" : "Could not search B-tree",
			  strerror(-err));
		goto out;
	}
	print_subvol_show(&sv, path ? path : "", all, n);
	ret = print_subvol_quota(fd, sv.id, mode) ? 1 : 0;
out:
	subvol_free(&sv);
	subvol_free_all(all, n);
	free(path);
	free(real);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* ---- default subvolume, sync ---- */

USAGE(get_default_usage) =
	"usage: btrfs subvolume get-default <path>\n\n"
	"    Show the default subvolume of the filesystem mounted at <path>.\n";

int subvol_get_default_main(int argc, char **argv)
{
	struct subvol_entry sv;
	uint64_t id;
	char *path;
	int fd, err;

	cli_no_options(argc, argv, 1, 1, get_default_usage);
	fd = btrfs_open_path(argv[optind], 1, 0);
	if (fd < 0)
		return 1;
	err = subvol_default_id(fd, &id);
	if (!err && id == BTRFS_FS_TREE_OBJECTID) {
		out_say("ID 5 (FS_TREE)\n");
		close(fd);
		return 0;
	}
	if (!err)
		err = subvol_get(fd, id, &sv);
	if (err) {
		msg_error("Could not search B-tree: %s", strerror(-err));
		close(fd);
		return 1;
	}
	err = subvol_path(fd, id, &path);
	close(fd);
	if (err) {
		msg_error("Could not search B-tree: %s", strerror(-err));
		subvol_free(&sv);
		return 1;
	}
	out_say("ID %llu gen %llu top level %llu path %s\n", (unsigned long long)sv.id,
	    (unsigned long long)sv.generation, (unsigned long long)sv.parent_id, path);
	subvol_free(&sv);
	free(path);
	return 0;
}

USAGE(set_default_usage) =
	"usage: btrfs subvolume set-default <subvolume>\n"
	"       btrfs subvolume set-default <subvolid> <path>\n\n"
	"    Make a subvolume the one mounted by default.\n";

int subvol_set_default_main(int argc, char **argv)
{
	uint64_t id = 0;
	const char *path;
	int fd, err, ret = 1;

	cli_no_options(argc, argv, 1, 2, set_default_usage);
	path = argv[argc - 1];
	if (argc - optind == 2) {
		if (!(id = cli_arg_u64(argv[optind])))
			id = BTRFS_FS_TREE_OBJECTID;
	} else if (check_subvol_path(path)) {
		return 1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		msg_error("Could not open: %s", strerror(errno));
		return 1;
	}
	if (!id && (err = subvol_id_of_fd(fd, &id)))
		msg_error("Could not lookup inode: %s", strerror(-err));
	else if (ioctl(fd, BTRFS_IOC_DEFAULT_SUBVOL, &id) < 0)
		msg_error("Could not set default subvolume: %s", strerror(errno));
	else
		ret = 0;
	close(fd);
	return ret;
}

/* ---- find-new ---- */

USAGE(find_new_usage) =
	"usage: btrfs subvolume find-new <path> <lastgen>\n\n"
	"    List the file extents of the subvolume at <path> written in generation\n"
	"    <lastgen> or later.\n";

struct find_new {
	int fd;
	uint64_t since;
	uint64_t cached_ino;
	char *cached_path;
};

/* One EXTENT_DATA item (struct btrfs_file_extent_item; inline ones end after the
 * type byte and keep their data there). */
static int print_new_extent(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct btrfs_file_extent_item fe;
	struct find_new *f = ctx;
	uint64_t gen, len, start = 0, off = 0;
	int flags = 0;

	if (sh->type != BTRFS_EXTENT_DATA_KEY)
		return 0;
	memset(&fe, 0, sizeof(fe));
	memcpy(&fe, item, sh->len < sizeof(fe) ? sh->len : sizeof(fe));
	gen = get_le64(&fe.generation);
	if (gen < f->since)
		return 0;
	if (sh->objectid != f->cached_ino || !f->cached_path) {
		free(f->cached_path);
		f->cached_path = NULL;
		f->cached_ino = sh->objectid;
		if (subvol_inode_path(f->fd, sh->objectid, &f->cached_path))
			return -EIO;
	}
	if (fe.type == BTRFS_FILE_EXTENT_REG || fe.type == BTRFS_FILE_EXTENT_PREALLOC) {
		start = get_le64(&fe.disk_bytenr);
		off = get_le64(&fe.offset);
		len = get_le64(&fe.num_bytes);
	} else if (fe.type == BTRFS_FILE_EXTENT_INLINE) {
		len = get_le64(&fe.ram_bytes);
	} else {
		msg_error("unhandled extent type %d for inode %llu file offset %llu gen %llu",
			  fe.type, (unsigned long long)sh->objectid,
			  (unsigned long long)sh->offset, (unsigned long long)gen);
		return -EIO;
	}
	out_say("inode %llu file offset %llu len %llu disk start %llu offset %llu gen %llu flags ",
	    (unsigned long long)sh->objectid, (unsigned long long)sh->offset,
	    (unsigned long long)len, (unsigned long long)start, (unsigned long long)off,
	    (unsigned long long)gen);
	if (fe.compression)
		out_say("%sCOMPRESS", flags++ ? "|" : "");
	if (fe.type == BTRFS_FILE_EXTENT_PREALLOC)
		out_say("%sPREALLOC", flags++ ? "|" : "");
	if (fe.type == BTRFS_FILE_EXTENT_INLINE)
		out_say("%sINLINE", flags++ ? "|" : "");
	out_say("%s %s\n", flags ? "" : "NONE", f->cached_path);
	return 0;
}

int subvol_find_new_main(int argc, char **argv)
{
	struct tree_key min = { 0, 0, 0 };
	struct tree_key max = { (uint64_t)-1, BTRFS_EXTENT_DATA_KEY, (uint64_t)-1 };
	struct find_new f = { -1, 0, 0, NULL };
	struct subvol_entry sv;
	int err, ret = 1;

	cli_no_options(argc, argv, 2, 2, find_new_usage);
	if (cli_parse_u64(argv[optind + 1], &f.since)) {
		msg_error("%s is not a valid numeric value", argv[optind + 1]);
		return 1;
	}
	if (check_subvol_path(argv[optind]))
		return 1;
	f.fd = btrfs_open_path(argv[optind], 1, 0);
	if (f.fd < 0)
		return 1;
	if (ioctl(f.fd, BTRFS_IOC_SYNC, NULL) < 0) {
		msg_error("Could not sync filesystem: %s", strerror(errno));
		goto out;
	}
	/* the subvolume's generation now: what a later call passes as <lastgen> */
	if ((err = subvol_get(f.fd, 0, &sv))) {
		msg_error("Could not search B-tree: %s", strerror(-err));
		goto out;
	}
	err = tree_search_since(f.fd, 0, &min, &max, f.since, print_new_extent, &f);
	if (err < 0 && err != -EIO)
		msg_error("can't perform the search: %s", strerror(-err));
	out_say("transid marker was %llu\n", (unsigned long long)sv.generation);
	subvol_free(&sv);
	ret = err < 0;
out:
	free(f.cached_path);
	close(f.fd);
	return ret;
}

USAGE(sync_usage) =
	"usage: btrfs subvolume sync <path> [<subvolid>...]\n\n"
	"    Wait until the given deleted subvolumes (default: all deleted now) are\n"
	"    cleaned from the filesystem.\n\n"
	"    -s <N>   check every N seconds (default 1)\n";

int subvol_sync_main(int argc, char **argv)
{
	uint64_t *ids = NULL;
	size_t count, done = 0, i;
	int c, fd, err, interval = 1, ret = 1;

	while ((c = cli_getopt(argc, argv, "s:", NULL, sync_usage)) != -1) {
		if (c == 's' && (interval = atoi(optarg)) < 1) {
			msg_error("invalid sleep interval %s", optarg);
			return 1;
		}
	}
	cli_check_argc(argc, 1, -1, sync_usage);
	fd = btrfs_open_path(argv[optind++], 1, 0);
	if (fd < 0)
		return 1;
	count = (size_t)(argc - optind);
	if (!count) {
		err = subvol_deleted_ids(fd, &ids, &count);
		if (err) {
			msg_error("Could not search B-tree: %s", strerror(-err));
			goto out;
		}
	} else {
		ids = calloc(count, sizeof(*ids));
		for (i = 0; ids && i < count; i++) {
			if (cli_parse_u64(argv[optind + i], &ids[i]) ||
			    ids[i] < BTRFS_FIRST_FREE_OBJECTID || ids[i] > BTRFS_LAST_FREE_OBJECTID) {
				msg_error("subvolume id %s out of range", argv[optind + i]);
				goto out;
			}
		}
	}
	if (!count) {
		ret = 0;
		goto out;
	}
	out_say("Waiting for %zu subvolume%s\n", count, count > 1 ? "s" : "");
	while (done < count) {
		for (i = 0; i < count; i++) {
			struct subvol_entry sv;

			if (!ids[i])
				continue;
			err = subvol_get(fd, ids[i], &sv);
			if (err == -ENOENT) {
				out_say("Subvolume id %llu is gone (%zu/%zu)\n",
				    (unsigned long long)ids[i], ++done, count);
				ids[i] = 0;
			} else if (err) {
				msg_error("Could not search B-tree: %s", strerror(-err));
				goto out;
			} else {
				subvol_free(&sv);
			}
		}
		if (done < count)
			sleep((unsigned)interval);
	}
	ret = 0;
out:
	free(ids);
	close(fd);
	return ret;
}
#endif
