/* Debug window into the read engine: read a file, list a directory, walk all trees. */
//config:config ENGINE_DEBUG
//config:	bool "engine debug commands (read-file, list-dir, walk-trees)"
//config:	default y
//config:	help
//config:	  btrfs inspect-internal read-file / list-dir / walk-trees: read files,
//config:	  directories and every tree of an unmounted filesystem through the
//config:	  engine (used by the tests).
//cmd:ENGINE_DEBUG read_file_main btrfs inspect-internal read-file|Print a file of an unmounted filesystem
//cmd:ENGINE_DEBUG list_dir_main btrfs inspect-internal list-dir|List a directory of an unmounted filesystem
//cmd:ENGINE_DEBUG walk_trees_main btrfs inspect-internal walk-trees|Walk every tree of an unmounted filesystem
#include "config.h"
#if CFG_ENGINE_DEBUG
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/le.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

USAGE(usage_read) =
	"usage: btrfs inspect-internal read-file [options] <device> [<device>...]\n\n"
	"\t--root ID      subvolume tree (default 5)\n"
	"\t--inode N      inode number\n"
	"\t--path P       path from the top of the subvolume\n"
	"\t--verify       check data checksums\n"
	"\t--extents      print the extent map instead of the contents\n"
	"\t--degraded     allow missing devices\n";
USAGE(usage_list) =
	"usage: btrfs inspect-internal list-dir [options] <device> [<device>...]\n\n"
	"\t--root ID      subvolume tree (default 5)\n"
	"\t--inode N      directory inode number (default: the subvolume top)\n"
	"\t--path P       path from the top of the subvolume\n"
	"\t--degraded     allow missing devices\n";
USAGE(usage_walk) =
	"usage: btrfs inspect-internal walk-trees [--degraded] <device> [<device>...]\n\n"
	"Walks every tree, reads every file; prints counts and errors.\n";

struct target {
	uint64_t root, ino;
	const char *path;
	int verify, extents, degraded;
};

enum { OPT_ROOT = 256, OPT_INODE, OPT_PATH, OPT_VERIFY, OPT_EXTENTS, OPT_DEGRADED };
static const struct cli_option long_opts[] = {
	{ "root", required_argument, OPT_ROOT },
	{ "inode", required_argument, OPT_INODE },
	{ "path", required_argument, OPT_PATH },
	{ "verify", no_argument, OPT_VERIFY },
	{ "extents", no_argument, OPT_EXTENTS },
	{ "degraded", no_argument, OPT_DEGRADED },
	{ NULL, 0, 0 },
};

static void parse_target(int argc, char **argv, const char *usage, struct target *t)
{
	int c;

	memset(t, 0, sizeof(*t));
	t->root = BTRFS_FS_TREE_OBJECTID;
	while ((c = cli_getopt(argc, argv, "", long_opts, usage)) != -1) {
		if ((c == OPT_ROOT && cli_parse_u64(optarg, &t->root)) ||
		    (c == OPT_INODE && cli_parse_u64(optarg, &t->ino)))
			cli_usage_error(usage, "bad number");
		if (c == OPT_PATH)
			t->path = optarg;
		t->verify |= c == OPT_VERIFY;
		t->extents |= c == OPT_EXTENTS;
		t->degraded |= c == OPT_DEGRADED;
	}
	cli_check_argc(argc, 1, -1, usage);
}

static int report(const struct fs_error *e)
{
	char buf[400];

	msg_error("%s", fs_error_format(e, buf, sizeof(buf)));
	return 1;
}

static struct fs *open_fs(int argc, char **argv, int degraded)
{
	struct fs_open_opts o;
	struct fs_error err;
	struct fs *fs;

	fs_open_opts_init(&o);
	o.allow_degraded = degraded;
	o.scan = 1;
	fs = fs_open((const char *const *)argv + optind, argc - optind, &o, &err);
	if (!fs)
		report(&err);
	else if (err.msg[0])
		msg_warn("%s", err.msg);
	return fs;
}

/* Resolves --root/--inode/--path into a tree and inode. */
static int resolve(struct fs *fs, const struct target *t, struct fs_root *root, uint64_t *ino)
{
	struct fs_root top;

	if (fs_root_lookup(fs, t->root, &top))
		return report(&fs->err);
	*root = top;
	*ino = t->ino;
	if (t->path && fs_path_lookup(fs, &top, t->path, root, ino))
		return report(&fs->err);
	if (!*ino)
		*ino = top.item_size && get_le64(&top.item.root_dirid) ? get_le64(&top.item.root_dirid)
								       : BTRFS_FIRST_FREE_OBJECTID;
	return 0;
}

static const char *kind_name(enum fs_extent_kind k)
{
	static const char *const names[] = { "hole", "inline", "regular", "prealloc" };
	return names[k];
}

static int print_extents(struct fs *fs, const struct fs_root *root, uint64_t ino)
{
	struct fs_extent_iter it;
	struct fs_extent e;
	int ret = fs_extent_iter_init(fs, root, ino, 0, &it);

	if (!ret)
		while ((ret = fs_extent_iter_next(&it, &e)) == 1)
			printf("%llu %llu %s compression %u disk %llu %llu offset %llu\n",
			       (unsigned long long)e.file_offset, (unsigned long long)e.len, kind_name(e.kind),
			       e.fe.compression, (unsigned long long)e.fe.disk_bytenr,
			       (unsigned long long)e.fe.disk_num_bytes, (unsigned long long)e.fe.offset);
	fs_extent_iter_release(&it);
	return ret < 0 ? report(&fs->err) : 0;
}

static int copy_file(struct fs *fs, const struct fs_root *root, uint64_t ino, int verify, FILE *out)
{
	static uint8_t buf[1 << 17];
	struct fs_file f;
	uint64_t off = 0;
	ssize_t n = 0;

	if (fs_file_open(fs, root, ino, &f))
		return -1;
	f.verify_csum = verify;
	while ((n = fs_file_pread(&f, buf, sizeof(buf), off)) > 0) {
		if (out && fwrite(buf, 1, (size_t)n, out) != (size_t)n)
			break;
		off += (uint64_t)n;
	}
	fs_file_close(&f);
	return n < 0 ? -1 : 0;
}

int read_file_main(int argc, char **argv)
{
	struct target t;
	struct fs_root root;
	uint64_t ino;
	struct fs *fs;
	int ret;

	parse_target(argc, argv, usage_read, &t);
	if (!t.ino && !t.path)
		cli_usage_error(usage_read, "--inode or --path is required");
	fs = open_fs(argc, argv, t.degraded);
	if (!fs)
		return 1;
	ret = resolve(fs, &t, &root, &ino);
	if (!ret && t.extents)
		ret = print_extents(fs, &root, ino);
	else if (!ret && copy_file(fs, &root, ino, t.verify, stdout))
		ret = report(&fs->err);
	fs_close(fs);
	return ret;
}

static int print_entry(void *ctx, uint64_t index, const struct fs_dir_entry *e)
{
	(void)ctx;
	printf("%llu %llu %u %u %.*s\n", (unsigned long long)index, (unsigned long long)e->location.objectid,
	       e->location.type, e->type, (int)e->name_len, e->name);
	return 0;
}

int list_dir_main(int argc, char **argv)
{
	struct target t;
	struct fs_root root;
	uint64_t ino;
	struct fs *fs;
	int ret;

	parse_target(argc, argv, usage_list, &t);
	fs = open_fs(argc, argv, t.degraded);
	if (!fs)
		return 1;
	ret = resolve(fs, &t, &root, &ino);
	if (!ret && fs_dir_iterate(fs, &root, ino, print_entry, NULL) < 0)
		ret = report(&fs->err);
	fs_close(fs);
	return ret;
}

/* ---- walk-trees: every tree block, and every regular file of every subvolume ---- */

struct walk_stats {
	struct fs *fs;
	uint64_t nodes, leaves, items, errors, files;
	uint64_t trees[64];
	int ntrees;
};

static int count_node(void *ctx, const struct fs_block *b)
{
	((struct walk_stats *)ctx)->nodes++;
	(void)b;
	return 0;
}

static void note_tree(struct walk_stats *s, uint64_t id)
{
	if (s->ntrees < (int)(sizeof(s->trees) / sizeof(s->trees[0])))
		s->trees[s->ntrees++] = id;
}

static int count_leaf(void *ctx, const struct fs_block *b)
{
	struct walk_stats *s = ctx;
	uint32_t n = fs_block_nritems(b);

	s->leaves++;
	s->items += n;
	if (fs_block_owner(b) != BTRFS_ROOT_TREE_OBJECTID)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		struct fs_key k;
		fs_item_key(b, i, &k);
		if (k.type == BTRFS_ROOT_ITEM_KEY && (!s->ntrees || s->trees[s->ntrees - 1] != k.objectid))
			note_tree(s, k.objectid);
	}
	return 0;
}

static void walk_error(void *ctx, const struct fs_error *e)
{
	((struct walk_stats *)ctx)->errors++;
	report(e);
}

static int is_subvol(uint64_t id)
{
	return id == BTRFS_FS_TREE_OBJECTID || (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

/* Reads the data extents of a file (holes skipped, at most 64 MiB; contents discarded). */
static int read_data_extents(struct fs *fs, const struct fs_root *root, uint64_t ino)
{
	static uint8_t buf[1 << 17];
	uint64_t budget = 64u << 20;
	struct fs_extent_iter it = { 0 };
	struct fs_extent e;
	struct fs_file f;
	int ret = fs_file_open(fs, root, ino, &f);

	if (!ret)
		ret = fs_extent_iter_init(fs, root, ino, 0, &it);
	while (!ret && budget && (ret = fs_extent_iter_next(&it, &e)) == 1) {
		for (uint64_t off = 0; e.kind != FS_EXT_HOLE && off < e.len && budget && ret >= 0; off += sizeof(buf)) {
			size_t n = e.len - off < sizeof(buf) ? (size_t)(e.len - off) : sizeof(buf);
			ret = fs_file_pread(&f, buf, n, e.file_offset + off) < 0 ? -1 : 1;
			budget -= n < budget ? n : budget;
		}
		ret = ret < 0 ? ret : 0;
	}
	fs_extent_iter_release(&it);
	fs_file_close(&f);
	return ret < 0 ? ret : 0;
}

/* Reads every regular file of a subvolume (contents discarded). */
static void read_all_files(struct walk_stats *s, const struct fs_root *root)
{
	struct fs_key key = { 0, 0, 0 }, k;
	struct fs_path p;
	int ret = fs_search(s->fs, root, &key, &p);

	for (; ret == 0; ret = fs_next(s->fs, &p)) {
		uint32_t size;
		const uint8_t *data = fs_path_data(&p, &size);
		const struct btrfs_inode_item *ii = fs_inode_item(data, size);

		fs_path_key(&p, &k);
		if (k.type != BTRFS_INODE_ITEM_KEY || !ii || (get_le32(&ii->mode) & 0170000) != 0100000)
			continue;
		s->files++;
		if (read_data_extents(s->fs, root, k.objectid))
			walk_error(s, &s->fs->err);
	}
	if (ret < 0)
		walk_error(s, &s->fs->err);
	fs_path_release(s->fs, &p);
}

static void walk_one(struct walk_stats *s, uint64_t id)
{
	static const struct fs_walk_ops ops = { count_node, count_leaf, walk_error };
	struct fs_root root;

	if (fs_root_lookup(s->fs, id, &root)) {
		walk_error(s, &s->fs->err);
		return;
	}
	fs_tree_walk(s->fs, &root, &ops, s);
	if (is_subvol(id))
		read_all_files(s, &root);
}

int walk_trees_main(int argc, char **argv)
{
	struct walk_stats s;
	struct target t;

	parse_target(argc, argv, usage_walk, &t);
	memset(&s, 0, sizeof(s));
	s.fs = open_fs(argc, argv, t.degraded);
	if (!s.fs)
		return 1;
	walk_one(&s, BTRFS_CHUNK_TREE_OBJECTID);
	walk_one(&s, BTRFS_ROOT_TREE_OBJECTID);
	for (int i = 0; i < s.ntrees; i++)
		walk_one(&s, s.trees[i]);
	printf("trees %d nodes %llu leaves %llu items %llu files %llu errors %llu\n", s.ntrees + 2,
	       (unsigned long long)s.nodes, (unsigned long long)s.leaves, (unsigned long long)s.items,
	       (unsigned long long)s.files, (unsigned long long)s.errors);
	fs_close(s.fs);
	return s.errors ? 2 : 0;
}
#endif
