/* recv_plain STREAM DIR: applies full send streams to a plain directory with the
 * receive engine: the part of btrfs receive that needs no btrfs ioctl. make cross-test
 * runs it under qemu-user (which passes no btrfs ioctl) and natively and compares the
 * trees. Each subvolume becomes a plain directory DIR/NAME; compressed data is always
 * decompressed here; btrfs properties (btrfs.* xattrs) are left out; snapshots
 * (incremental streams) and clones need the kernel and are refused. Exit 0 when every
 * command applied. */
#include "fs/stream/receive.h"
#include "fs/stream/sendstream.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "recv_plain: %s: %s\n", what, why);
	return 1;
}

/* A subvolume command: a plain directory instead, entered as the subvolume. */
static int enter_dir(struct receiver *r, const struct ss_cmd *c)
{
	if (r->subvol_fd >= 0 || strchr(c->path, '/') || mkdirat(r->dest_fd, c->path, 0755))
		return fail(c->path, "cannot make the subvolume directory");
	r->subvol_fd = openat(r->dest_fd, c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	return r->subvol_fd < 0 ? fail(c->path, "cannot open the subvolume directory") : 0;
}

static int apply_stream(struct receiver *r, struct ss_reader *rd)
{
	struct ss_cmd c;

	for (;;) {
		if (ss_read_cmd(rd, &c))
			return fail("stream", rd->err);
		/* a held-back creating command first (recv_apply's contract) */
		if (recv_settle(r, c.type == SS_C_END ? NULL : &c))
			return fail("create", r->err);
		if (c.type == SS_C_END)
			return 0;
		if (c.type == SS_C_SNAPSHOT || c.type == SS_C_CLONE)
			return fail(ss_cmd_name(c.type), "needs the kernel");
		if (c.type == SS_C_SET_XATTR && !strncmp(c.xattr_name, "btrfs.", 6))
			continue;       /* a btrfs property (compression): no other fs keeps it */
		if (c.type == SS_C_SUBVOL ? enter_dir(r, &c) : recv_apply(r, &c) != 0)
			return r->err[0] ? fail(ss_cmd_name(c.type), r->err) : 1;
	}
}

int main(int argc, char **argv)
{
	struct receiver r;
	struct ss_reader rd;
	int fd, ret = 0, n;

	if (argc != 3)
		return fail("usage", "recv_plain STREAM DIR");
	memset(&r, 0, sizeof(r));
	fd = open(argv[1], O_RDONLY);
	r.dest_fd = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (fd < 0 || r.dest_fd < 0)
		return fail(argv[fd < 0 ? 1 : 2], "cannot open");
	r.mnt_fd = r.dest_fd;
	ss_reader_init(&rd, fd);
	for (n = 0; ret == 0; n++) {
		r.subvol_fd = r.write_fd = -1;
		r.force_decompress = 1;
		ret = ss_read_header(&rd);
		if (ret == 1 && n > 0) {
			ret = 0;
			break;
		}
		ret = ret ? fail("stream header", rd.err) : apply_stream(&r, &rd);
		recv_release(&r);
	}
	ss_reader_free(&rd);
	return ret;
}
