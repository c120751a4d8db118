/* btrfs send: the kernel (BTRFS_IOC_SEND) writes the stream of a read-only subvolume into
 * a pipe; a thread copies it to the output file or stdout. With --device the stream of
 * an unmounted filesystem is made by applets/send/offline.c instead. */
//config:config APPLET_SEND
//config:	bool "btrfs send"
//config:	default y
//config:	help
//config:	  Write a send stream of read-only subvolumes (full or incremental).
//cmd:APPLET_SEND send_main btrfs send|Send the subvolume(s) to stdout
#include "config.h"
#if CFG_APPLET_SEND
#include "offline.h"
#include "fs/stream/sendstream.h"
#include "util/cli/cli.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/ioctl/subvol.h"
#include "util/ioctl/subvol_lookup.h"
#include "util/pio.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/btrfs.h>

USAGE(usage) =
	"usage: btrfs send [-ve] [-p <parent>] [-c <clone-src>] [-f <outfile>] <subvol> [<subvol>...]\n"
	"\n"
	"    Send the subvolume(s) to stdout.\n"
	"    <subvol> must be read-only. With -p, send an incremental stream from <parent>;\n"
	"    -c adds read-only clone sources (without -p a parent is chosen among them).\n"
	"\n"
	"    -e                if sending multiple subvols at once, omit the end-cmd between them\n"
	"    -p <parent>       send an incremental stream from <parent> to <subvol>\n"
	"    -c <clone-src>    use this snapshot as a clone source (multiple allowed)\n"
	"    -f <outfile>      write to a file instead of stdout\n"
	"    --no-data         send in NO_FILE_DATA mode (metadata only)\n"
	"    --proto N         use protocol version N, 0 for the highest the kernel supports (default 1)\n"
	"    --compressed-data send compressed data without decompressing it (implies --proto 2)\n"
	"    -v|--verbose      more messages\n"
	"    -q|--quiet        no messages\n"
#if CFG_SEND_OFFLINE
	"    --device <dev>    send from the unmounted filesystem on <dev>, a device or image\n"
	"                      file (repeat for its other devices); <subvol>, -p and -c are then\n"
	"                      paths from its top level, e.g. --device disk.img /snaps/1\n"
#endif
	;

#define MAX_CLONE_SOURCES 256
#define MAX_DEVICES 16

struct send_ctx {
	int out_fd;
	int verbose;
	uint64_t clone[MAX_CLONE_SOURCES];
	int nclone;
	uint32_t proto, proto_supported;
	uint64_t flags;
	uint8_t fsid[16];
	int have_fsid;
};

/* Opens a subvolume given on the command line and checks it is a read-only subvolume
 * of the same filesystem as the others; returns the fd and its root id. */
static int open_ro_subvol(struct send_ctx *s, const char *path, const char *role,
			  uint64_t *root_id)
{
	struct btrfs_ioctl_fs_info_args fi;
	uint64_t flags;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		msg_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (subvol_is_root_dir(fd) != 1 || subvol_id_of_fd(fd, root_id) < 0) {
		msg_error("%s is not a btrfs subvolume", path);
		goto fail;
	}
	if (ioctl(fd, BTRFS_IOC_SUBVOL_GETFLAGS, &flags) < 0) {
		msg_error("failed to get flags for subvolume %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!(flags & BTRFS_SUBVOL_RDONLY)) {
		msg_error("%s %s is not read-only", role, path);
		goto fail;
	}
	if (btrfs_fs_info(fd, &fi) < 0) {
		msg_error("cannot get the filesystem of %s: %s", path, strerror(errno));
		goto fail;
	}
	if (s->have_fsid && memcmp(fi.fsid, s->fsid, 16)) {
		msg_error("all subvolumes must be from the same filesystem");
		goto fail;
	}
	memcpy(s->fsid, fi.fsid, 16);
	s->have_fsid = 1;
	return fd;
fail:
	close(fd);
	return -1;
}

static int add_clone_source(struct send_ctx *s, uint64_t root_id)
{
	if (s->nclone == MAX_CLONE_SOURCES) {
		msg_error("too many clone sources (at most %d)", MAX_CLONE_SOURCES);
		return -1;
	}
	s->clone[s->nclone++] = root_id;
	return 0;
}

/* The root item fields of subvolume id (names not kept). */
static int root_item(int fd, uint64_t id, struct subvol_entry *e)
{
	int ret = subvol_get(fd, id, e);

	subvol_free(e);
	return ret;
}

/* The subvolume whose UUID is the parent UUID of root_id; 0 if none. */
static uint64_t snapshot_origin(int fd, uint64_t root_id, struct subvol_entry *origin)
{
	struct subvol_entry it;
	uint64_t id;

	if (root_item(fd, root_id, &it) < 0 || uuid_is_null(it.parent_uuid))
		return 0;
	if (subvol_find_uuid(fd, it.parent_uuid, 0, &id, 1) != 1 || root_item(fd, id, origin) < 0)
		return 0;
	return id;
}

/* Without -p but with -c: the snapshot origin of the subvolume when it is a clone source,
 * else the clone source sharing that origin whose ctransid is closest to the origin's. */
static int find_good_parent(struct send_ctx *s, int fd, uint64_t root_id, uint64_t *parent)
{
	struct subvol_entry origin, cand_origin, cand;
	uint64_t origin_id = snapshot_origin(fd, root_id, &origin), best_diff = UINT64_MAX;
	int i;

	*parent = 0;
	if (!origin_id)
		return -1;
	for (i = 0; i < s->nclone; i++)
		if (s->clone[i] == origin_id) {
			*parent = origin_id;
			return 0;
		}
	for (i = 0; i < s->nclone; i++) {
		uint64_t diff;

		if (snapshot_origin(fd, s->clone[i], &cand_origin) != origin_id ||
		    root_item(fd, s->clone[i], &cand) < 0)
			continue;
		diff = cand.ctransid > origin.ctransid ? cand.ctransid - origin.ctransid :
							 origin.ctransid - cand.ctransid;
		if (diff < best_diff) {
			best_diff = diff;
			*parent = s->clone[i];
		}
	}
	return *parent ? 0 : -1;
}

struct copier { int in, out; int err; };

/* Copies the kernel's stream from the pipe to the output (splice when the output allows).
 * After an output error it keeps draining the pipe, so that the kernel never blocks. */
static void *copy_stream(void *arg)
{
	struct copier *c = arg;
	static char buf[1 << 16];
	int use_splice = 1;

	for (;;) {
		ssize_t n;

		if (use_splice && !c->err) {
			n = splice(c->in, NULL, c->out, NULL, 1 << 17, SPLICE_F_MORE);
			if (n < 0 && errno == EINVAL)
				use_splice = 0;
			else if (n < 0 && errno != EINTR)
				c->err = errno;
			else if (n == 0)
				return NULL;
			continue;
		}
		n = read(c->in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !c->err)
				c->err = errno;
			return NULL;
		}
		if (!c->err)
			c->err = -pio_write(c->out, buf, (size_t)n);
	}
}

static int do_send(struct send_ctx *s, int subvol_fd, uint64_t parent, int first, int last)
{
	struct btrfs_ioctl_send_args args;
	struct copier c;
	pthread_t thread;
	int pipefd[2], ret;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		msg_error("pipe failed: %s", strerror(errno));
		return -1;
	}
	memset(&args, 0, sizeof(args));
	args.send_fd = pipefd[1];
	args.flags = s->flags;
	if (s->proto_supported > 1) {
		args.version = s->proto;
		args.flags |= BTRFS_SEND_FLAG_VERSION;
		fcntl(pipefd[0], F_SETPIPE_SZ, 1 << 18);
	}
	if (!first)
		args.flags |= BTRFS_SEND_FLAG_OMIT_STREAM_HEADER;
	if (!last)
		args.flags |= BTRFS_SEND_FLAG_OMIT_END_CMD;
	args.clone_sources = (__u64 *)s->clone;
	args.clone_sources_count = (__u64)s->nclone;
	args.parent_root = parent;
	c = (struct copier){ pipefd[0], s->out_fd, 0 };
	ret = pthread_create(&thread, NULL, copy_stream, &c);
	if (ret) {
		msg_error("thread setup failed: %s", strerror(ret));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	ret = ioctl(subvol_fd, BTRFS_IOC_SEND, &args);
	if (ret < 0) {
		ret = -errno;
		msg_error("send ioctl failed with %d: %s", ret, strerror(-ret));
		if (ret == -EINVAL && (!first || !last))
			fprintf(stderr, "Try upgrading your kernel or don't use -e.\n");
	}
	close(pipefd[1]);
	pthread_join(thread, NULL);
	close(pipefd[0]);
	if (ret < 0)
		return -1;
	if (c.err) {
		msg_error("failed to write the stream: %s", strerror(c.err));
		return -1;
	}
	return 0;
}

static uint32_t kernel_send_version(void)
{
	uint64_t v;

	if (sysfile_read_u64("/sys/fs/btrfs/features/send_stream_version", &v) || v == 0 || v > 1000)
		v = 1;
	return (uint32_t)v;
}

static int open_output(const char *name)
{
	/* an existing file first: it may be writable where creating one is not */
	int fd = open(name, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		msg_error("cannot create '%s': %s", name, strerror(errno));
	return fd;
}

/* The btrfs mount point holding path (real path resolved); 0 or -1 after an error. */
static int mount_root(const char *path, char *real, char *root)
{
	if (!realpath(path, real)) {
		msg_error("unable to resolve %s", path);
		return -1;
	}
	if (sysfile_btrfs_mount_root(real, root, PATH_MAX)) {
		msg_error("%s doesn't belong to btrfs mount point", real);
		return -1;
	}
	return 0;
}

/* As btrfs-progs: the parent lies below the mount point of the first subvolume, and
 * every subvolume is on that mount point. */
static int check_mounts(const char *parent_path, char **subvols, int n)
{
	char root[PATH_MAX], other[PATH_MAX], real[PATH_MAX];
	size_t len;

	if (mount_root(subvols[0], real, root))
		return -1;
	len = strlen(root);
	if (parent_path && (!realpath(parent_path, real) || strncmp(real, root, len) ||
			    (len > 1 && real[len] && real[len] != '/'))) {
		msg_error("not on mount point: %s", root);
		return -1;
	}
	for (int i = 1; i < n; i++) {
		if (mount_root(subvols[i], real, other))
			return -1;
		if (strcmp(root, other)) {
			msg_error("all subvolumes must be from the same filesystem");
			return -1;
		}
	}
	return 0;
}

/* Checks -p/-c subvolumes and the ones to send; returns the parent root id (0 if none). */
static int send_all(struct send_ctx *s, const char *parent_path, int explicit_clones,
		    char **subvols, int n, int end_semantic)
{
	uint64_t parent_id = 0, id;
	int i, fd;

	if (parent_path) {
		fd = open_ro_subvol(s, parent_path, "parent subvolume", &parent_id);
		if (fd < 0)
			return -1;
		close(fd);
		if (add_clone_source(s, parent_id))
			return -1;
	}
	if (check_mounts(parent_path, subvols, n))
		return -1;
	for (i = 0; i < n; i++) {
		fd = open_ro_subvol(s, subvols[i], "subvolume", &id);
		if (fd < 0)
			return -1;
		close(fd);
	}
	for (i = 0; i < n; i++) {
		int first = !end_semantic || i == 0, last = !end_semantic || i == n - 1, ret;

		if (s->verbose >= 1)
			fprintf(stderr, "At subvol %s\n", subvols[i]);
		fd = open_ro_subvol(s, subvols[i], "subvolume", &id);
		if (fd < 0)
			return -1;
		if (explicit_clones && !parent_path && find_good_parent(s, fd, id, &parent_id)) {
			msg_error("parent determination failed for %llu", (unsigned long long)id);
			close(fd);
			return -1;
		}
		ret = do_send(s, fd, parent_id, first, last);
		close(fd);
		if (ret)
			return -1;
		if (explicit_clones && !parent_path && add_clone_source(s, id))
			return -1;
	}
	return 0;
}

int send_main(int argc, char **argv)
{
	enum { OPT_NO_DATA = 256, OPT_PROTO, OPT_COMPRESSED, OPT_DEVICE };
	static const struct cli_option longopts[] = {
		{ "verbose", no_argument, 'v' },
		{ "quiet", no_argument, 'q' },
		{ "no-data", no_argument, OPT_NO_DATA },
		{ "proto", required_argument, OPT_PROTO },
		{ "compressed-data", no_argument, OPT_COMPRESSED },
#if CFG_SEND_OFFLINE
		{ "device", required_argument, OPT_DEVICE },
#endif
		{ NULL, 0, 0 }
	};
	struct send_ctx s;
	const char *outname = NULL, *parent = NULL;
	char *clones[MAX_CLONE_SOURCES], *devices[MAX_DEVICES];
	int c, end_semantic = 0, nclones = 0, ndev = 0, proto_given = 0, ret;
	uint64_t v;

	memset(&s, 0, sizeof(s));
	s.out_fd = STDOUT_FILENO;
	s.proto = 1;
	/* like the reference: "At subvol" is shown unless quiet; global -v adds one level */
	s.verbose = cli_globals.verbose < 0 ? 0 : 1 + cli_globals.verbose;
	while ((c = cli_getopt(argc, argv, "vqec:f:i:p:", longopts, usage)) != -1) {
		switch (c) {
		case 'v': s.verbose++; break;
		case 'q': s.verbose = 0; break;
		case 'e': end_semantic = 1; break;
		case 'c':
			if (nclones == MAX_CLONE_SOURCES) {
				msg_error("too many clone sources (at most %d)", MAX_CLONE_SOURCES);
				return 1;
			}
			clones[nclones++] = optarg;
			break;
		case OPT_DEVICE:
			if (ndev == MAX_DEVICES) {
				msg_error("too many devices (at most %d)", MAX_DEVICES);
				return 1;
			}
			devices[ndev++] = optarg;
			break;
		case 'f': outname = optarg; break;
		case 'p':
			if (parent) {
				msg_error("you cannot have more than one parent (-p)");
				return 1;
			}
			parent = optarg;
			break;
		case 'i':
			msg_error("option -i was removed, use -c instead");
			return 1;
		case OPT_NO_DATA: s.flags |= BTRFS_SEND_FLAG_NO_FILE_DATA; break;
		case OPT_PROTO:
			if (cli_parse_u64(optarg, &v) || v > UINT32_MAX) {
				msg_error("invalid protocol version: %s", optarg);
				return 1;
			}
			s.proto = (uint32_t)v;
			proto_given = 1;
			break;
		case OPT_COMPRESSED: s.flags |= BTRFS_SEND_FLAG_COMPRESSED; break;
		}
	}
	cli_check_argc(argc, 1, -1, usage);
	s.proto_supported = ndev ? SS_MAX_VERSION : kernel_send_version();
	if (s.proto_supported == 1 && s.proto > 1) {
		msg_error("requested version %u but kernel supports only %u", s.proto,
			  s.proto_supported);
		return 1;
	}
	if (s.flags & BTRFS_SEND_FLAG_COMPRESSED) {
		if (s.proto == 1 && !proto_given)
			s.proto = 2;
		if (s.proto == 1) {
			msg_error("--compressed-data requires protocol version >= 2 (requested 1)");
			return 1;
		}
		if (s.proto == 0 && s.proto_supported < 2) {
			msg_error("kernel does not support --compressed-data");
			return 1;
		}
	}
	if (outname) {
		s.out_fd = open_output(outname);
		if (s.out_fd < 0)
			return 1;
	}
	if (isatty(s.out_fd)) {
		msg_error("not dumping send stream into a terminal, redirect it into a file");
		return 1;
	}
	if (s.verbose >= 2 && (s.flags & BTRFS_SEND_FLAG_NO_FILE_DATA))
		fprintf(stderr, "Mode NO_FILE_DATA enabled\n");
	if (CFG_SEND_OFFLINE && ndev) {
		struct send_offline_args a = { devices, ndev, parent, clones, nclones, argv + optind, argc - optind,
					       s.proto, s.flags, end_semantic, s.verbose, s.out_fd };

		ret = send_offline(&a);
		goto out;
	}
	for (ret = 0; ret < nclones; ret++) {
		uint64_t id;
		int fd = open_ro_subvol(&s, clones[ret], "cloned subvolume", &id);

		if (fd < 0 || (close(fd), add_clone_source(&s, id)))
			return 1;
	}
	ret = send_all(&s, parent, nclones > 0, argv + optind, argc - optind, end_semantic);
out:
	if (outname)
		close(s.out_fd);
	return ret ? 1 : 0;
}
#endif
