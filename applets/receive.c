/* btrfs receive: applies send streams below MOUNT, or prints them (--dump).
 *
 * Confinement (always on): every path of a stream is resolved beneath the subvolume
 * being received. Paths must be relative, without "." or ".." components; the parent
 * directory is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) (or a component walk with O_NOFOLLOW where openat2 is missing)
 * and the last component is used with *at() calls that do not follow symlinks. So a
 * stream cannot reach outside the subvolume nor write through a symlink. Parent and
 * clone-source subvolumes are looked up by UUID on the destination filesystem and are
 * accepted only beneath <mount> (where incremental backups keep them) or beneath a
 * --search-dir directory: a crafted stream cannot snapshot or reflink data out of other
 * subvolumes of the filesystem. */
//config:config APPLET_RECEIVE
//config:	bool "btrfs receive"
//config:	default y
//config:	help
//config:	  Receive subvolumes from a send stream (or dump the stream).
//cmd:APPLET_RECEIVE receive_main btrfs receive|Receive subvolumes from a stream
#include "config.h"
#if CFG_APPLET_RECEIVE
#include "fs/stream/receive.h"
#include "fs/stream/sendstream.h"
#include "util/cli/cli.h"
#include "util/cli/timefmt.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/ioctl/subvol_lookup.h"
#include "util/sysfile.h"
#include "util/uuid.h"
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

USAGE(usage) =
	"usage: btrfs receive [options] <mount>\n"
	"       btrfs receive --dump [options]\n"
	"\n"
	"    Receive subvolumes from a stream\n"
	"    Receives one or more subvolumes that were previously sent with btrfs send and\n"
	"    stores them into <mount>, then makes them read-only. Every path of the stream\n"
	"    is confined to the subvolume being received.\n"
	"\n"
	"    -q|--quiet            suppress all messages, except errors\n"
	"    -f FILE               read the stream from FILE instead of stdin\n"
	"    -e                    terminate after receiving an <end cmd> marker in the stream\n"
	"    -C|--chroot           confine the process to <mount> using chroot\n"
	"    -E|--max-errors NERR  terminate as soon as NERR errors occur (default 1, 0: no limit)\n"
	"    -m ROOTMOUNT          the root mount point of the destination filesystem\n"
	"    --search-dir DIR      also accept parent and clone-source subvolumes beneath DIR\n"
	"                          (repeatable; by default only those beneath <mount> are used)\n"
	"    --force-decompress    decompress compressed data instead of writing it encoded\n"
	"    --dump                dump stream metadata, one line per operation\n"
	"    -v                    more messages\n";

/* ---- --dump: the reference's text format ---- */

struct dump {
	char subvol[PATH_MAX + 2];        /* "./NAME" of the current subvolume, "." before */
};

/* n bytes of s with control characters, spaces, backslashes and bytes past ASCII
 * escaped (a name with a newline stays on its line); *len counts what was printed. */
static void print_escaped_n(const char *s, size_t n, int *len)
{
	static const char esc_from[] = "\a\b\033\f\n\r\t\v \\", esc_to[] = "abefnrtv \\";

	for (const char *end = s + n; s < end; s++) {
		unsigned char c = (unsigned char)*s;
		const char *e = c ? strchr(esc_from, c) : NULL;

		if (e) {
			printf("\\%c", esc_to[e - esc_from]);
			*len += 2;
		} else if (c < 0x20 || c > 0x7e) {
			printf("\\%o%o%o", c >> 6, (c >> 3) & 7, c & 7);
			*len += 4;
		} else {
			putchar(c);
			(*len)++;
		}
	}
}

static void print_escaped(const char *s, int *len)
{
	print_escaped_n(s, strlen(s), len);
}

/* An xattr value as 6.2 prints it (its bytes up to the first NUL), its control
 * characters escaped as 6.19 does (a newline in it stays on its line). */
static void print_value(const char *s, size_t n)
{
	int len = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			print_escaped_n(s + i, 1, &len);
		else
			putchar(s[i]);
}

/* p1 "/" p2, each without one trailing slash (the reference's joining rule). */
static int join(char *out, size_t outlen, const char *p1, const char *p2)
{
	size_t l1 = strlen(p1), l2 = strlen(p2);

	if (l1 + l2 + 2 >= outlen || l1 + l2 + 2 >= PATH_MAX)
		return -1;
	if (l1 && p1[l1 - 1] == '/')
		l1--;
	if (l2 && p2[l2 - 1] == '/')
		l2--;
	snprintf(out, outlen, "%.*s/%.*s", (int)l1, p1, (int)l2, p2);
	return 0;
}

/* "TITLE(16) PATH" then, when there is more, padding to column 48 and the rest. */
static int dump_line(struct dump *d, const char *title, const char *path, int is_subvol,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int dump_line(struct dump *d, const char *title, const char *path, int is_subvol,
		     const char *fmt, ...)
{
	char full[PATH_MAX + 2];
	int len = 0;
	va_list ap;

	if (join(full, sizeof(full), is_subvol ? "." : d->subvol, path)) {
		msg_error("%s: path invalid: %s", title, path);
		return -1;
	}
	if (is_subvol)
		strcpy(d->subvol, full);
	printf("%-16s", title);
	print_escaped(full, &len);
	if (!fmt) {
		putchar('\n');
		return 0;
	}
	do
		putchar(' ');
	while (++len < 32);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	return 0;
}

static int dump_dest(struct dump *d, const struct ss_cmd *c, const char *dest)
{
	int len = 0;

	if (dump_line(d, ss_cmd_name(c->type), c->path, 0, "dest="))
		return -1;
	print_escaped(dest, &len);
	putchar('\n');
	return 0;
}

static void format_time(const struct ss_time *t, char *out, size_t outlen)
{
	time_t sec = (time_t)t->sec;
	struct tm tm;

	if (!localtime_r(&sec, &tm) || !tm_format(out, outlen, "%FT%T%z", &tm))
		snprintf(out, outlen, "%lld", (long long)t->sec);
}

static int dump_cmd(struct dump *d, const struct ss_cmd *c)
{
	char a[40], b[40], t1[64], t2[64], t3[64], full[PATH_MAX + 2];
	const char *name = ss_cmd_name(c->type);
	unsigned long long off = c->file_offset;
	int len = 0;

	switch (c->type) {
	case SS_C_SUBVOL:
		uuid_unparse(c->uuid, a);
		return dump_line(d, name, c->path, 1, "uuid=%s transid=%llu\n", a,
				 (unsigned long long)c->ctransid);
	case SS_C_SNAPSHOT:
		uuid_unparse(c->uuid, a);
		uuid_unparse(c->clone_uuid, b);
		return dump_line(d, name, c->path, 1,
				 "uuid=%s transid=%llu parent_uuid=%s parent_transid=%llu\n", a,
				 (unsigned long long)c->ctransid, b,
				 (unsigned long long)c->clone_ctransid);
	case SS_C_MKFILE: case SS_C_MKDIR: case SS_C_MKFIFO: case SS_C_MKSOCK:
	case SS_C_UNLINK: case SS_C_RMDIR:
		return dump_line(d, name, c->path, 0, NULL);
	case SS_C_MKNOD:
		return dump_line(d, name, c->path, 0, "mode=%llo dev=0x%llx\n",
				 (unsigned long long)c->mode, (unsigned long long)c->rdev);
	case SS_C_SYMLINK: case SS_C_LINK:
		return dump_dest(d, c, c->path_link);
	case SS_C_RENAME:
		if (join(full, sizeof(full), d->subvol, c->path_to)) {
			msg_error("rename: path invalid: %s", c->path_to);
			return -1;
		}
		return dump_dest(d, c, full);
	case SS_C_WRITE:
		return dump_line(d, name, c->path, 0, "offset=%llu len=%u\n", off, c->data_len);
	case SS_C_CLONE:
		if (join(full, sizeof(full), d->subvol, c->clone_path)) {
			msg_error("clone: path invalid: %s", c->clone_path);
			return -1;
		}
		if (dump_line(d, name, c->path, 0, "offset=%llu len=%llu from=", off, (unsigned long long)c->clone_len))
			return -1;
		print_escaped(full, &len);
		printf(" clone_offset=%llu\n", (unsigned long long)c->clone_offset);
		return 0;
	case SS_C_SET_XATTR:
		/* (6.2's words around 6.19's escaping: the same line for plain names and values) */
		if (dump_line(d, name, c->path, 0, "name="))
			return -1;
		print_escaped(c->xattr_name, &len);
		printf(" data=");
		print_value((const char *)c->xattr_data, c->xattr_len);
		printf(" len=%u\n", c->xattr_len);
		return 0;
	case SS_C_REMOVE_XATTR:
		if (dump_line(d, name, c->path, 0, "name="))
			return -1;
		print_escaped(c->xattr_name, &len);
		putchar('\n');
		return 0;
	case SS_C_TRUNCATE:
		return dump_line(d, name, c->path, 0, "size=%llu\n", (unsigned long long)c->size);
	case SS_C_CHMOD:
		return dump_line(d, name, c->path, 0, "mode=%llo\n", (unsigned long long)c->mode);
	case SS_C_CHOWN:
		return dump_line(d, name, c->path, 0, "gid=%llu uid=%llu\n",
				 (unsigned long long)c->gid, (unsigned long long)c->uid);
	case SS_C_UTIMES:
		format_time(&c->atime, t1, sizeof(t1));
		format_time(&c->mtime, t2, sizeof(t2));
		format_time(&c->ctime, t3, sizeof(t3));
		return dump_line(d, name, c->path, 0, "atime=%s mtime=%s ctime=%s\n", t1, t2, t3);
	case SS_C_UPDATE_EXTENT:
		return dump_line(d, name, c->path, 0, "offset=%llu len=%llu\n", off,
				 (unsigned long long)c->size);
	case SS_C_FALLOCATE:
		return dump_line(d, name, c->path, 0, "mode=%d offset=%llu len=%llu\n",
				 (int)c->fallocate_mode, off, (unsigned long long)c->size);
	case SS_C_FILEATTR:
		/* the reference prints the value in decimal after "0x" */
		return dump_line(d, name, c->path, 0, "fileattr=0x%llu\n",
				 (unsigned long long)c->fileattr);
	case SS_C_ENCODED_WRITE:
		return dump_line(d, name, c->path, 0,
				 "offset=%llu len=%u, unencoded_file_len=%llu, unencoded_len=%llu, unencoded_offset=%llu, compression=%u, encryption=%u\n",
				 off, c->data_len, (unsigned long long)c->unencoded_file_len,
				 (unsigned long long)c->unencoded_len,
				 (unsigned long long)c->unencoded_offset, c->compression, c->encryption);
	case SS_C_ENABLE_VERITY:
		return dump_line(d, name, c->path, 0, "algorithm=%u block_size=%u salt_len=%u sig_len=%u\n",
				 c->verity_algorithm, c->verity_block_size, c->verity_salt_len,
				 c->verity_sig_len);
	}
	return 0;
}

/* Like the reference: the first stream of the input, up to its end command. */
static int dump_stream(int fd)
{
	struct ss_reader r;
	struct ss_cmd c;
	struct dump d;
	int ret;

	strcpy(d.subvol, ".");	/* no initializer: that would be a 4 KB constant */

	ss_reader_init(&r, fd);
	ret = ss_read_header(&r);
	if (ret == 1) {
		msg_error("failed to dump the send stream: No data available");
		ret = -1;
	}
	while (ret == 0) {
		ret = ss_read_cmd(&r, &c);
		if (ret == 0 && c.type == SS_C_END)
			break;
		if (ret == 0)
			ret = dump_cmd(&d, &c);
	}
	if (ret < 0 && r.err[0])
		msg_error("failed to dump the send stream: %s", r.err);
	ss_reader_free(&r);
	fflush(stdout);
	return ret ? 1 : 0;
}

/* ---- receiving ---- */

struct recv_opts {
	int verbose, honor_end, chroot, force_decompress;
	uint64_t max_errors;
	const char *root_mount;
	const char *search[RECV_MAX_SEARCH - 1];  /* --search-dir */
	int nsearch;
};

/* Whether fds a and b are on the same btrfs filesystem. */
static int same_fs(int a, int b)
{
	struct btrfs_ioctl_fs_info_args x, y;

	return !btrfs_fs_info(a, &x) && !btrfs_fs_info(b, &y) && !memcmp(x.fsid, y.fsid, 16);
}

/* --search-dir: fds[i] opened (-1 before), added to the receiver. */
static int add_search_dirs(const struct recv_opts *o, struct receiver *r, int *fds)
{
	for (int i = 0; i < o->nsearch; i++) {
		fds[i] = open(o->search[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0) {
			msg_error("cannot open %s: %s", o->search[i], strerror(errno));
			return -1;
		}
		if (!same_fs(fds[i], r->dest_fd)) {
			msg_error("%s is not on the filesystem of the destination", o->search[i]);
			return -1;
		}
		if (recv_add_search(r, fds[i])) {
			msg_error("%s", r->err);
			return -1;
		}
	}
	return 0;
}

/* Opens the destination and the root of its mount (same filesystem). */
static int open_destination(const struct recv_opts *o, const char *dest, char *full,
			    int *dest_fd, int *mnt_fd)
{
	char root[PATH_MAX];

	if (!realpath(dest, full)) {
		msg_error("realpath(%s) failed: %s", dest, strerror(errno));
		return -1;
	}
	*dest_fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dest_fd < 0) {
		msg_error("cannot open destination directory %s: %s", full, strerror(errno));
		return -1;
	}
	if (o->root_mount)
		snprintf(root, sizeof(root), "%s", o->root_mount);
	else if (sysfile_btrfs_mount_root(full, root, sizeof(root))) {
		msg_error("%s doesn't belong to btrfs mount point", full);
		return -1;
	}
	*mnt_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*mnt_fd < 0) {
		msg_error("cannot open %s: %s", root, strerror(errno));
		return -1;
	}
	if (!same_fs(*dest_fd, *mnt_fd)) {
		msg_error("%s and %s are not on the same btrfs filesystem", full, root);
		return -1;
	}
	return 0;
}

/* Progress on stderr: subvolumes by default, their UUIDs with -v, every command with -vv. */
static void report(const struct recv_opts *o, const struct ss_cmd *c)
{
	char u[UUID_STR_LEN], p[UUID_STR_LEN];
	int subvol = c->type == SS_C_SUBVOL, snap = c->type == SS_C_SNAPSHOT;

	if ((subvol || snap) && o->verbose >= 1)
		fprintf(stderr, "At %s %s\n", subvol ? "subvol" : "snapshot", c->path);
	if ((subvol || snap) && o->verbose >= 2) {
		uuid_unparse(c->uuid, u);
		uuid_unparse(c->clone_uuid, p);
		if (subvol)
			fprintf(stderr, "receiving subvol %s uuid=%s, stransid=%llu\n", c->path, u,
				(unsigned long long)c->ctransid);
		else
			fprintf(stderr, "receiving snapshot %s uuid=%s, ctransid=%llu parent_uuid=%s, parent_ctransid=%llu\n",
				c->path, u, (unsigned long long)c->ctransid, p,
				(unsigned long long)c->clone_ctransid);
	} else if (o->verbose >= 3) {
		fprintf(stderr, "%s %s\n", ss_cmd_name(c->type), c->path ? c->path : "");
	}
}

/* Applies the commands of one stream up to its end command. */
/* Reports the receiver's error; 1 when the stream must stop there. */
static int counted_error(const struct recv_opts *o, const struct receiver *r, uint64_t *errors)
{
	msg_error("%s", r->err);
	++*errors;
	return r->fatal || (o->max_errors && *errors >= o->max_errors);
}

static int receive_stream(const struct recv_opts *o, struct receiver *r, struct ss_reader *rd,
			  uint64_t *errors)
{
	struct ss_cmd c;

	for (;;) {
		if (ss_read_cmd(rd, &c)) {
			if (recv_settle(r, NULL))
				msg_error("%s", r->err);
			if (recv_failed_behind(r))
				msg_error("%s", r->err);
			msg_error("%s", rd->err);
			return -1;
		}
		/* a creation held back by the receiver is carried out first */
		if (recv_settle(r, c.type == SS_C_END ? NULL : &c) && counted_error(o, r, errors))
			return -1;
		if (recv_failed_behind(r) && counted_error(o, r, errors))
			return -1;
		if (c.type == SS_C_END)
			return 0;
		report(o, &c);
		if (recv_apply(r, &c) && counted_error(o, r, errors))
			return -1;
	}
}

static int receive_all(const struct recv_opts *o, struct receiver *r, int fd)
{
	struct ss_reader rd;
	uint64_t errors = 0;
	int n, ret = 0;

	ss_reader_init(&rd, fd);
	for (n = 0; ret == 0; n++) {
		ret = ss_read_header(&rd);
		if (ret == 1 && n > 0) {
			ret = 0;
			break;
		}
		if (ret) {
			msg_error("%s", ret == 1 ? "empty stream is not considered valid" : rd.err);
			ret = -1;
			break;
		}
		ret = receive_stream(o, r, &rd, &errors);
		if (ret == 0 && recv_finish_subvol(r)) {
			msg_error("%s", r->err);
			ret = -1;
		}
		if (o->honor_end)
			break;
	}
	ss_reader_free(&rd);
	return ret || errors ? -1 : 0;
}

/* The directory cache of the receiver takes up to a quarter of the descriptors the
 * soft limit allows: raise it (within the hard limit) to what a full cache needs. */
static void more_descriptors(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= RECV_FD_WANTED)
		return;
	rl.rlim_cur = rl.rlim_max < RECV_FD_WANTED ? rl.rlim_max : RECV_FD_WANTED;
	prlimit(0, RLIMIT_NOFILE, &rl, NULL); /* setrlimit: 1.5 KB more in musl (its pre-2.6.36 fallback) */
}

/* A stream read from a regular file lets the receiver write large files on a second
 * thread, which reads their data again from the file. */
static void input_file(struct receiver *r, int fd)
{
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);

	if (at >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode))
		recv_input_file(r, fd, (uint64_t)at);
}

static int recv_run(const struct recv_opts *o, const char *dest, int fd)
{
	struct receiver r;
	char full[PATH_MAX];
	int dest_fd = -1, mnt_fd = -1, ret = -1, search_fds[RECV_MAX_SEARCH - 1], i;

	for (i = 0; i < o->nsearch; i++)
		search_fds[i] = -1;
	if (open_destination(o, dest, full, &dest_fd, &mnt_fd))
		goto out;
	more_descriptors();
	if (recv_init(&r, dest_fd, mnt_fd)) {
		msg_error("%s", r.err);
		goto out;
	}
	r.force_decompress = o->force_decompress;
	input_file(&r, fd);
	if (add_search_dirs(o, &r, search_fds))
		goto release;
	if (o->chroot) {
		if (chroot(full) || chdir("/")) {
			msg_error("failed to chroot to %s: %s", full, strerror(errno));
			goto release;
		}
		fprintf(stderr, "Chroot to %s\n", full);
	}
	ret = receive_all(o, &r, fd);
release:
	recv_release(&r);
out:
	for (i = 0; i < o->nsearch; i++)
		if (search_fds[i] >= 0)
			close(search_fds[i]);
	if (dest_fd >= 0)
		close(dest_fd);
	if (mnt_fd >= 0)
		close(mnt_fd);
	return ret ? 1 : 0;
}

int receive_main(int argc, char **argv)
{
	enum { OPT_DUMP = 256, OPT_FORCE_DECOMPRESS, OPT_SEARCH_DIR };
	static const struct cli_option longopts[] = {
		{ "max-errors", required_argument, 'E' },
		{ "chroot", no_argument, 'C' },
		{ "dump", no_argument, OPT_DUMP },
		{ "quiet", no_argument, 'q' },
		{ "force-decompress", no_argument, OPT_FORCE_DECOMPRESS },
		{ "search-dir", required_argument, OPT_SEARCH_DIR },
		{ NULL, 0, 0 }
	};
	struct recv_opts o = { 0 };
	const char *file = NULL;
	int c, dump = 0, fd = STDIN_FILENO, ret;

	o.max_errors = 1;
	o.verbose = cli_globals.verbose < 0 ? 0 : 1 + cli_globals.verbose;
	while ((c = cli_getopt(argc, argv, "Cevqf:m:E:", longopts, usage)) != -1) {
		switch (c) {
		case 'v': o.verbose++; break;
		case 'q': o.verbose = 0; break;
		case 'f': file = optarg; break;
		case 'e': o.honor_end = 1; break;
		case 'C': o.chroot = 1; break;
		case 'E':
			if (cli_parse_u64(optarg, &o.max_errors)) {
				msg_error("invalid number of errors: %s", optarg);
				return 1;
			}
			break;
		case 'm': o.root_mount = optarg; break;
		case OPT_DUMP: dump = 1; break;
		case OPT_FORCE_DECOMPRESS: o.force_decompress = 1; break;
		case OPT_SEARCH_DIR:
			if (o.nsearch == RECV_MAX_SEARCH - 1) {
				msg_error("at most %d --search-dir options", RECV_MAX_SEARCH - 1);
				return 1;
			}
			o.search[o.nsearch++] = optarg;
			break;
		}
	}
	cli_check_argc(argc, dump ? 0 : 1, dump ? 0 : 1, usage);
	if (file) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			msg_error("cannot open %s: %s", file, strerror(errno));
			return 1;
		}
	}
	ret = dump ? dump_stream(fd) : recv_run(&o, argv[optind], fd);
	if (file)
		close(fd);
	return ret;
}
#endif
