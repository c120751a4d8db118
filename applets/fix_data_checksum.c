/* btrfs rescue fix-data-checksum: every copy of every data sector that has a checksum
 * read and verified; the mismatches listed with the files they belong to, and (-m N)
 * each checksum made again from copy N, as btrfs-progs 6.19's command. */
//config:config RESCUE_FIX_DATA_CHECKSUM
//config:	bool "btrfs rescue fix-data-checksum"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  List data sectors whose copies do not match their checksum, with the
//config:	  files they belong to; -m N takes copy N as right.
//cmd:RESCUE_FIX_DATA_CHECKSUM fix_data_checksum_main btrfs rescue fix-data-checksum|Fix data checksum mismatches.

#include "config.h"
#if CFG_RESCUE_FIX_DATA_CHECKSUM
#include "fs/core/backref.h"
#include "fs/write/write.h"
#include "util/cli/cli.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/vec.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

USAGE(fix_data_checksum_usage) =
	"usage: btrfs rescue fix-data-checksum <device>\n\n"
	"    Fix data checksum mismatches.\n\n"
	"    -r|--readonly        readonly mode, only report errors without repair\n"
	"    -i|--interactive     interactive mode, ignore the error by default.\n"
	"    -m|--mirror <mirror> update csum item using specified mirror\n";

enum mode { READONLY, INTERACTIVE, UPDATE };

/* A data sector with copies that do not match its checksum (bit m-1: copy m). */
struct bad_sector { uint64_t logical; uint32_t bad; int copies; };

struct scan {
	struct fs *fs;
	uint8_t *buf;
	struct bad_sector *v;
	size_t n, cap;
};

/* Every copy of the sector at logical against its checksum sum. */
static int verify_sector(struct scan *s, uint64_t logical, const uint8_t *sum)
{
	struct fs *fs = s->fs;
	int copies = fs_num_copies(fs, logical);
	uint32_t bad = 0;
	uint8_t got[CSUM_MAX_SIZE];

	for (int m = 1; m <= copies && m <= 32; m++)
		if (fs_read_logical(fs, logical, s->buf, fs->sectorsize, m) ||
		    csum_compute(fs->csum_type, s->buf, fs->sectorsize, got) || memcmp(got, sum, fs->csum_size))
			bad |= 1u << (m - 1);
	if (!bad)
		return 0;
	if (vec_reserve(&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	s->v[s->n++] = (struct bad_sector){ logical, bad, copies };
	return 0;
}

/* Each checksum of the csum tree, each sector verified. */
static int scan_csums(struct scan *s)
{
	struct fs *fs = s->fs;
	struct fs_key k = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, 0 };
	struct fs_root r;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &r);

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &r, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		uint32_t size, n;
		const uint8_t *sums = fs_path_data(&p, &size);

		fs_path_key(&p, &k);
		if (k.objectid != BTRFS_EXTENT_CSUM_OBJECTID || k.type != BTRFS_EXTENT_CSUM_KEY)
			continue;
		n = fs_csum_item_count(size, fs->csum_size);
		for (uint32_t i = 0; i < n && ret == 0; i++)
			ret = verify_sector(s, k.offset + (uint64_t)i * fs->sectorsize, sums + i * fs->csum_size);
		if (ret)
			break;
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

static int print_file(void *ctx, const struct fs_data_ref *d)
{
	struct fs *fs = ctx;
	struct fs_root r;
	char path[4096];

	if (fs_root_lookup(fs, d->root, &r) || fs_ino_path(fs, &r, d->ino, path, sizeof(path)))
		printf("  (subvolume %llu) inode %llu\n", (unsigned long long)d->root, (unsigned long long)d->ino);
	else
		printf("  (subvolume %llu)/%s\n", (unsigned long long)d->root, path);
	return 0;
}

/* The checksum of the sector at logical made again from copy m, in a transaction. */
static int update_csum(struct fs *fs, uint64_t logical, int m, uint8_t *buf)
{
	struct fs_key k = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, logical };
	uint8_t sum[CSUM_MAX_SIZE];
	struct fs_root r;
	struct fs_path p;
	uint64_t at;
	uint32_t size;
	uint8_t *d;
	int ret;

	if (fs_read_logical(fs, logical, buf, fs->sectorsize, m))
		return fs_err_at(&fs->err, -EIO, 0, logical, "cannot read copy %d", m);
	csum_compute(fs->csum_type, buf, fs->sectorsize, sum);
	if ((ret = fs_tx_begin(fs)))
		return ret;
	if (!(ret = fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &r)) && !(ret = fs_search_le(fs, &r, &k, &p))) {
		fs_path_key(&p, &k);
		fs_path_release(fs, &p);
		d = fs_item_mut(fs, BTRFS_CSUM_TREE_OBJECTID, &k, &size);
		at = (logical - k.offset) / fs->sectorsize * fs->csum_size;
		ret = !d ? fs->err.code : at + fs->csum_size > size ?
		      fs_err_at(&fs->err, -ENOENT, BTRFS_CSUM_TREE_OBJECTID, logical, "no checksum item holds it") : 0;
		if (!ret)
			memcpy(d + at, sum, fs->csum_size);
	}
	if (ret) {
		fs_tx_abort(fs);
		return ret;
	}
	return fs_tx_commit(fs);
}

/* -i: "ignore" (the default) or "update-csum" with a copy; 0 to ignore. */
static int ask_copy(int copies)
{
	char line[64];

	for (;;) {
		printf("[ignore|update-csum <mirror 1..%d>] (default ignore): ", copies);
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin) || line[0] == '\n' || !strncasecmp(line, "ignore", 6))
			return 0;
		if (!strncasecmp(line, "update-csum", 11)) {
			int m = atoi(line + 11);

			if (m >= 1 && m <= copies)
				return m;
			msg_warn("invalid mirror number %d, must be in range [1, %d], please retry", m, copies);
		} else {
			msg_warn("invalid action, please retry");
		}
	}
}

/* Each bad sector said, with its files; mended as mode says. */
static int report(struct scan *s, enum mode mode, int mirror)
{
	if (!s->n)
		printf("no data checksum mismatch found\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct bad_sector *b = &s->v[i];
		const char *sep = "";
		int m = 0;

		printf("logical=%llu corrtuped mirrors=", (unsigned long long)b->logical);
		for (int c = 0; c < b->copies && c < 32; c++)
			if (b->bad & (1u << c)) {
				printf("%s%d", sep, c + 1);
				sep = ",";
			}
		printf(" affected files:\n");
		fs_data_refs(s->fs, b->logical, print_file, s->fs);
		if (mode == INTERACTIVE)
			m = ask_copy(b->copies);
		else if (mode == UPDATE)
			m = mirror % (b->copies + 1);
		if (m && update_csum(s->fs, b->logical, m, s->buf))
			return -1;
		if (m)
			printf("Csum item for logical %llu updated using data from mirror %d\n",
			       (unsigned long long)b->logical, m);
	}
	return 0;
}

int fix_data_checksum_main(int argc, char **argv)
{
	struct fs_wopen_opts o;
	struct fs_error err;
	struct scan s = { 0 };
	enum mode mode = READONLY;
	uint64_t mirror = 0;
	const char *dev;
	char buf[320];
	int c, ret;

	while ((c = cli_getopt_long(argc, argv, "rim:", "readonly=r interactive=i mirror:=m",
				    fix_data_checksum_usage)) != -1) {
		mode = c == 'r' ? READONLY : c == 'i' ? INTERACTIVE : UPDATE;
		if (c == 'm' && !(mirror = cli_arg_u64(optarg))) {
			msg_error("invalid mirror number 0, must be >= 1");
			return 1;
		}
	}
	cli_check_argc(argc, 1, -1, fix_data_checksum_usage);
	dev = argv[optind];
	fs_wopen_opts_init(&o);
	s.fs = fs_wopen(&dev, 1, &o, &err);
	if (!s.fs) {
		msg_error(err.code == -EBUSY ? "%s is currently mounted" : "failed to open btrfs at %s: %s", dev,
			  fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	s.buf = malloc(s.fs->sectorsize);
	ret = s.buf ? scan_csums(&s) : -ENOMEM;
	if (ret)
		msg_error("failed to iterate csum tree: %s", fs_error_format(&s.fs->err, buf, sizeof(buf)));
	if (report(&s, mode, (int)(mirror > 32 ? 0 : mirror)) && !ret)
		ret = -1, msg_error("failed to fix data checksums: %s", fs_error_format(&s.fs->err, buf, sizeof(buf)));
	free(s.buf);
	free(s.v);
	if (fs_wclose(s.fs) && !ret)
		ret = -1;
	return ret ? 1 : 0;
}
#endif
