/* btrfs inspect-internal dump-super and dump-tree: the superblock and the trees in the
 * btrfs-progs 6.2 text form (printers in applets/inspect/print.c). */
//config:config APPLET_INSPECT
//config:	bool "btrfs inspect-internal dump-super, dump-tree"
//config:	default y
//config:	help
//config:	  Print superblocks and tree blocks of an unmounted filesystem in
//config:	  the btrfs-progs text format.
//cmd:APPLET_INSPECT dump_super_main btrfs inspect-internal dump-super|Dump superblock from a device in a textual form
//cmd:APPLET_INSPECT dump_tree_main btrfs inspect-internal dump-tree|Dump tree structures from a given device
#include "config.h"
#if CFG_APPLET_INSPECT
#include "print.h"
#include "fs/core/format.h"
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/uuid.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- dump-super ---------------------------------------------------------------------- */

USAGE(dump_super_usage) =
	"usage: btrfs inspect-internal dump-super [options] device [device...]\n\n"
	"    Dump superblock from a device in a textual form\n\n"
	"    -f|--full                 print full superblock information, backup roots etc.\n"
	"    -a|--all                  print information about all superblocks\n"
	"    -s|--super <super>        specify which copy to print out (values: 0, 1, 2)\n"
	"    -F|--force                attempt to dump superblocks with bad magic\n"
	"    --bytenr <offset>         specify alternate superblock offset\n\n"
	"    Deprecated syntax:\n"
	"    -s <bytenr>               specify alternate superblock offset, values other than 0, 1, 2\n"
	"                              will be interpreted as --bytenr for backward compatibility\n"
	"    -i <super>                specify which copy to print out (values: 0, 1, 2), now moved to --super\n";

/* Prints the copy at bytenr. 0 also when the device ends before it (nothing to show). */
static int dump_one_super(const char *path, int fd, uint64_t bytenr, int full, int force)
{
	struct btrfs_super_block sb;
	ssize_t got = pread(fd, &sb, sizeof(sb), (off_t)bytenr);

	if (got == 0)
		return 0;
	if (got != (ssize_t)sizeof(sb)) {
		msg_error("failed to read the superblock on %s at %llu", path,
			  (unsigned long long)bytenr);
		msg_error("error = '%s', errno = %d", strerror(got < 0 ? errno : 0),
			  got < 0 ? errno : 0);
		return 1;
	}
	printf("superblock: bytenr=%llu, device=%s\n", (unsigned long long)bytenr, path);
	printf("---------------------------------------------------------\n");
	if (get_le64(&sb.magic) != BTRFS_MAGIC_LE && !force) {
		msg_error("bad magic on superblock on %s at %llu (use --force to dump it anyway)",
			  path, (unsigned long long)bytenr);
		return 1;
	}
	print_superblock(&sb, full);
	return 0;
}


int dump_super_main(int argc, char **argv)
{
	enum { OPT_BYTENR = 256 };
	static const struct cli_option longopts[] = {
		{ "all", no_argument, 'a' }, { "bytenr", required_argument, OPT_BYTENR },
		{ "full", no_argument, 'f' }, { "force", no_argument, 'F' },
		{ "super", required_argument, 's' }, { NULL, 0, 0 },
	};
	int all = 0, full = 0, force = 0, c;
	uint64_t bytenr = btrfs_super_offset(0), arg;

	while ((c = cli_getopt(argc, argv, "fFai:s:", longopts, dump_super_usage)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'f': full = 1; break;
		case 'F': force = 1; break;
		case 'i':
			msg_warn("option -i is deprecated, please use -s or --super");
			arg = cli_arg_u64(optarg);
			if (arg >= BTRFS_SUPER_MIRRORS) {
				msg_error("super mirror too big: %llu >= %d", (unsigned long long)arg,
					  BTRFS_SUPER_MIRRORS);
				return 1;
			}
			bytenr = btrfs_super_offset((int)arg);
			break;
		case 's':
			arg = cli_arg_u64(optarg);
			if (arg >= BTRFS_SUPER_MIRRORS) {
				msg_warn("deprecated use of -s <bytenr> with %llu, assuming --bytenr",
					 (unsigned long long)arg);
				bytenr = arg;
			} else {
				bytenr = btrfs_super_offset((int)arg);
			}
			all = 0;
			break;
		case OPT_BYTENR:
			bytenr = cli_arg_u64(optarg);
			all = 0;
			break;
		}
	}
	cli_check_argc(argc, 1, -1, dump_super_usage);
	for (int i = optind; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		int first = all ? 0 : -1, last = all ? BTRFS_SUPER_MIRRORS - 1 : -1;

		if (fd < 0) {
			msg_error("cannot open %s: %s", argv[i], strerror(errno));
			return 1;
		}
		for (int m = first; m <= last; m++) {
			if (dump_one_super(argv[i], fd, m < 0 ? bytenr : btrfs_super_offset(m), full,
					   force)) {
				close(fd);
				return 1;
			}
			putchar('\n');
		}
		close(fd);
	}
	return 0;
}

/* ---- dump-tree ----------------------------------------------------------------------- */

USAGE(dump_tree_usage) =
	"usage: btrfs inspect-internal dump-tree [options] <device> [<device> ..]\n\n"
	"    Dump tree structures from a given device\n\n"
	"    Dump tree structures from a given device in textual form, expand keys to human\n"
	"    readable equivalents where possible.\n"
	"    Note: contains file names, consider that if you're asked to send the dump\n"
	"    for analysis.\n\n"
	"    -e|--extents              print only extent info: extent and device trees\n"
	"    -d|--device               print only device info: tree root, chunk and device trees\n"
	"    -r|--roots                print only short root node info\n"
	"    -R|--backups              same as --roots plus print backup root info\n"
	"    -u|--uuid                 print only the uuid tree\n"
	"    -b|--block <block_num>    print info from the specified block only\n"
	"                              can be specified multiple times\n"
	"    -t|--tree <tree_id>       print only tree with the given id (string or number)\n"
	"    --follow                  use with -b, to show all children tree blocks of <block_num>\n"
	"    --noscan                  do not scan the devices from the filesystem, use only the listed ones\n"
	"    --bfs                     breadth-first traversal of the trees, print nodes, then leaves (default)\n"
	"    --dfs                     depth-first traversal of the trees\n"
	"    --hide-names              hide filenames/subvolume/xattrs and other name references\n"
	"    --csum-headers            print node checksums stored in headers (metadata)\n"
	"    --csum-items              print checksums stored in checksum items (data)\n";

struct dump_opts {
	int extents_only, device_only, uuid_only, roots_only, backups;
	int follow, dfs, noscan;
	uint64_t tree_id;           /* 0: all */
	uint64_t *blocks;           /* -b, sorted, no duplicates */
	int nblocks;
};

/* Addresses already printed in the current tree: a damaged tree whose pointers repeat
 * or loop prints each block once instead of without end. Open addressing, key+1 so
 * that 0 marks a free slot (a readable block is never at 2^64-1). */
struct addr_set {
	uint64_t *slot;
	size_t cap, n;
};

static int addr_set_add(struct addr_set *s, uint64_t addr)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct addr_set bigger = { calloc(s->cap ? s->cap * 2 : 1024, sizeof(uint64_t)),
					   s->cap ? s->cap * 2 : 1024, 0 };

		if (!bigger.slot)
			return 1; /* out of memory: print it anyway */
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				addr_set_add(&bigger, s->slot[i] - 1);
		free(s->slot);
		*s = bigger;
	}
	for (i = (size_t)((addr >> 12) * 0x9E3779B97F4A7C15ULL) & (s->cap - 1); s->slot[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == addr + 1)
			return 0;
	s->slot[i] = addr + 1;
	s->n++;
	return 1;
}

static void addr_set_clear(struct addr_set *s)
{
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

struct dumper {
	struct fs *fs;
	struct print_opts po;
	const struct dump_opts *o;
	struct addr_set seen;
};

static void report_fs_error(struct dumper *d, const char *what, uint64_t bytenr)
{
	char why[320];

	msg_error("%s %llu: %s", what, (unsigned long long)bytenr,
		  fs_error_format(&d->fs->err, why, sizeof(why)));
}

/* A verified tree block; gen 0 / level -1 when the caller does not know them. */
static struct fs_block *read_block(struct dumper *d, uint64_t bytenr, uint64_t gen, int level)
{
	struct fs_block_expect exp = FS_EXPECT_NONE;
	struct fs_block *b;

	exp.generation = gen;
	exp.level = level;
	b = fs_block_read(d->fs, bytenr, &exp);
	if (!b)
		report_fs_error(d, "failed to read tree block", bytenr);
	return b;
}

static void print_block(struct dumper *d, const struct fs_block *b)
{
	print_tree_block(&d->po, b->data, b->bytenr);
}

struct block_ptr {
	uint64_t bytenr, gen;
};
struct ptr_list {
	struct block_ptr *v;
	size_t n, cap;
};

static void ptr_list_add_children(struct ptr_list *l, const struct fs_block *node)
{
	uint32_t nr = fs_block_nritems(node);

	if (l->n + nr > l->cap) {
		size_t cap = (l->n + nr) * 2;
		struct block_ptr *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	for (uint32_t i = 0; i < nr; i++)
		l->v[l->n++] = (struct block_ptr){ fs_node_blockptr(node, i),
						   fs_node_ptr_generation(node, i) };
}

/* Breadth first, as the reference does by default: all nodes of one level from left
 * to right, then the next level down. The first unreadable block ends the tree. */
static void print_children_bfs(struct dumper *d, const struct fs_block *top)
{
	struct ptr_list cur = { 0 }, next = { 0 }, tmp;

	ptr_list_add_children(&cur, top);
	for (int level = fs_block_level(top) - 1; level >= 0 && cur.n; level--) {
		next.n = 0;
		for (size_t i = 0; i < cur.n; i++) {
			struct fs_block *b;

			if (!addr_set_add(&d->seen, cur.v[i].bytenr))
				continue;
			b = read_block(d, cur.v[i].bytenr, cur.v[i].gen, level);
			if (!b)
				goto out;
			print_block(d, b);
			if (level)
				ptr_list_add_children(&next, b);
			fs_block_put(d->fs, b);
		}
		tmp = cur, cur = next, next = tmp;
	}
out:
	free(cur.v);
	free(next.v);
}

/* Depth first (--dfs): each child right after its parent; bad children are skipped. */
static void print_children_dfs(struct dumper *d, const struct fs_block *node)
{
	uint32_t nr = fs_block_nritems(node);
	int level = fs_block_level(node);

	for (uint32_t i = 0; i < nr; i++) {
		uint64_t bytenr = fs_node_blockptr(node, i);
		struct fs_block *b;

		if (!addr_set_add(&d->seen, bytenr))
			continue;
		b = read_block(d, bytenr, fs_node_ptr_generation(node, i), level - 1);
		if (!b)
			continue;
		print_block(d, b);
		if (level > 1)
			print_children_dfs(d, b);
		fs_block_put(d->fs, b);
	}
}

static void print_tree(struct dumper *d, const struct fs_block *top, int follow)
{
	addr_set_clear(&d->seen);
	addr_set_add(&d->seen, top->bytenr);
	print_block(d, top);
	if (follow && fs_block_level(top) > 0) {
		if (d->o->dfs)
			print_children_dfs(d, top);
		else
			print_children_bfs(d, top);
	}
	addr_set_clear(&d->seen);
}

/* -e: only the leaves, depth first, without the checksum extras. A child on the wrong
 * level ends the node's list, as in the reference. */
static void print_leaves(struct dumper *d, const struct fs_block *b)
{
	struct print_opts plain = d->po;
	int level = fs_block_level(b);
	uint32_t nr = fs_block_nritems(b);

	if (level == 0) {
		plain.csum_headers = plain.csum_items = 0;
		print_tree_block(&plain, b->data, b->bytenr);
		return;
	}
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t bytenr = fs_node_blockptr(b, i);
		struct fs_block *c;

		if (!addr_set_add(&d->seen, bytenr))
			continue;
		c = read_block(d, bytenr, fs_node_ptr_generation(b, i), -1);
		if (!c)
			continue;
		if (fs_block_level(c) != level - 1) {
			msg_warn("eb corrupted: item %u eb level %d next level %d, skipping the rest",
				 i, fs_block_level(c), level);
			fs_block_put(d->fs, c);
			return;
		}
		print_leaves(d, c);
		fs_block_put(d->fs, c);
	}
}

/* What the reference calls each tree in "<name> tree key (...)". */
static const char *tree_label(uint64_t id)
{
	static const struct { uint64_t id; const char *name; } labels[] = {
		{ BTRFS_ROOT_TREE_OBJECTID, "root" }, { BTRFS_EXTENT_TREE_OBJECTID, "extent" },
		{ BTRFS_CHUNK_TREE_OBJECTID, "chunk" }, { BTRFS_DEV_TREE_OBJECTID, "device" },
		{ BTRFS_FS_TREE_OBJECTID, "fs" }, { BTRFS_ROOT_TREE_DIR_OBJECTID, "directory" },
		{ BTRFS_CSUM_TREE_OBJECTID, "checksum" }, { BTRFS_ORPHAN_OBJECTID, "orphan" },
		{ BTRFS_TREE_LOG_OBJECTID, "log" }, { BTRFS_TREE_LOG_FIXUP_OBJECTID, "log fixup" },
		{ BTRFS_TREE_RELOC_OBJECTID, "reloc" }, { BTRFS_DATA_RELOC_TREE_OBJECTID, "data reloc" },
		{ BTRFS_EXTENT_CSUM_OBJECTID, "extent checksum" }, { BTRFS_QUOTA_TREE_OBJECTID, "quota" },
		{ BTRFS_UUID_TREE_OBJECTID, "uuid" }, { BTRFS_FREE_SPACE_TREE_OBJECTID, "free space" },
		{ BTRFS_MULTIPLE_OBJECTIDS, "multiple" },
		{ BTRFS_BLOCK_GROUP_TREE_OBJECTID, "block group" },
	};

	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (labels[i].id == id)
			return labels[i].name;
	return "file";
}

/* Which trees -e, -d and -u keep (without them: all). */
static int tree_selected(const struct dump_opts *o, uint64_t id)
{
	switch (id) {
	case BTRFS_EXTENT_TREE_OBJECTID:
		return !o->device_only && !o->uuid_only;
	case BTRFS_DEV_TREE_OBJECTID:
		return !o->uuid_only;
	case BTRFS_ROOT_TREE_DIR_OBJECTID:
		return 1;
	case BTRFS_UUID_TREE_OBJECTID:
		return !o->extents_only && !o->device_only;
	}
	return !o->extents_only && !o->device_only && !o->uuid_only;
}

static void dump_root_item(struct dumper *d, const struct fs_key *key, const uint8_t *data,
			   uint32_t size)
{
	const struct dump_opts *o = d->o;
	uint32_t at = offsetof(struct btrfs_root_item, bytenr);
	struct fs_block *b;

	if ((o->tree_id && key->objectid != o->tree_id) || !tree_selected(o, key->objectid))
		return;
	if (size < at + 8)
		return;
	b = read_block(d, get_le64(data + at), 0, -1);
	if (!b)
		return;
	printf("%s tree ", tree_label(key->objectid));
	print_key(key->objectid, key->type, key->offset);
	if (o->extents_only) {
		putchar('\n');
		addr_set_clear(&d->seen);
		print_leaves(d, b);
		addr_set_clear(&d->seen);
	} else if (o->roots_only) {
		printf(" %llu level %d\n", (unsigned long long)b->bytenr, fs_block_level(b));
	} else {
		fputs(" \n", stdout);
		print_tree(d, b, 1);
	}
	fs_block_put(d->fs, b);
}

/* Every ROOT_ITEM of a tree of tree roots, in key order. A leaf reached a second time
 * (a damaged tree whose nodes repeat pointers) is not listed again. */
static void dump_root_items(struct dumper *d, const struct fs_root *scan)
{
	struct fs_key key = { 0, BTRFS_ROOT_ITEM_KEY, 0 };
	struct addr_set leaves = { 0 };
	uint64_t leaf = 0;
	int repeated = 0;
	struct fs_path p;
	int ret;

	fs_path_init(&p);
	ret = fs_search(d->fs, scan, &key, &p);
	if (ret < 0) {
		report_fs_error(d, "cannot read ROOT_ITEM from tree", scan->objectid);
	} else if (ret == 0) {
		do {
			const uint8_t *data;
			uint32_t size;

			if (!leaf || p.nodes[0]->bytenr != leaf) {
				leaf = p.nodes[0]->bytenr;
				repeated = !addr_set_add(&leaves, leaf);
			}
			fs_path_key(&p, &key);
			data = fs_path_data(&p, &size);
			if (!repeated && key.type == BTRFS_ROOT_ITEM_KEY && data)
				dump_root_item(d, &key, data, size);
			ret = fs_next(d->fs, &p);
		} while (ret == 0);
		if (ret < 0)
			report_fs_error(d, "cannot read the next leaf of tree", scan->objectid);
	}
	fs_path_release(d->fs, &p);
	addr_set_clear(&leaves);
}

struct top_tree {
	const char *name;       /* "root", "chunk", "log root" */
	uint64_t id, bytenr;
};

static void dump_top_tree(struct dumper *d, const struct top_tree *t)
{
	struct fs_block *b = read_block(d, t->bytenr, 0, -1);

	if (!b)
		return;
	if (d->o->roots_only) {
		printf("%s tree: %llu level %d\n", t->name, (unsigned long long)b->bytenr,
		       fs_block_level(b));
	} else {
		printf("%s tree\n", t->name);
		print_tree(d, b, 1);
	}
	fs_block_put(d->fs, b);
}

static void print_backup_root_summary(const struct btrfs_super_block *sb)
{
	int v2 = !!(get_le64(&sb->incompat_flags) & BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2);

	for (int i = 0; i < BTRFS_NUM_BACKUP_ROOTS; i++) {
		struct btrfs_root_backup b;

		memcpy(&b, &sb->super_roots[i], sizeof(b));
		printf("btrfs root backup slot %d\n", i);
		printf("\ttree root gen %llu block %llu\n",
		       (unsigned long long)get_le64(&b.tree_root_gen),
		       (unsigned long long)get_le64(&b.tree_root));
		printf("\t\t%s gen %llu block %llu\n", v2 ? "block group root" : "extent root",
		       (unsigned long long)get_le64(&b.extent_root_gen),
		       (unsigned long long)get_le64(&b.extent_root));
		printf("\t\tchunk root gen %llu block %llu\n",
		       (unsigned long long)get_le64(&b.chunk_root_gen),
		       (unsigned long long)get_le64(&b.chunk_root));
		printf("\t\tdevice root gen %llu block %llu\n",
		       (unsigned long long)get_le64(&b.dev_root_gen),
		       (unsigned long long)get_le64(&b.dev_root));
		printf("\t\tcsum root gen %llu block %llu\n",
		       (unsigned long long)get_le64(&b.csum_root_gen),
		       (unsigned long long)get_le64(&b.csum_root));
		printf("\t\tfs root gen %llu block %llu\n",
		       (unsigned long long)get_le64(&b.fs_root_gen),
		       (unsigned long long)get_le64(&b.fs_root));
		printf("\t\t%llu used %llu total %llu devices\n",
		       (unsigned long long)get_le64(&b.bytes_used),
		       (unsigned long long)get_le64(&b.total_bytes),
		       (unsigned long long)get_le64(&b.num_devices));
	}
}

/* -t for the trees that have no ROOT_ITEM (root, chunk, log) or a dedicated pointer
 * (block group tree). Returns 1 when the id was one of them. */
static int dump_special_tree(struct dumper *d, const struct top_tree *tops, int ntops)
{
	uint64_t id = d->o->tree_id;
	struct fs_root bg;

	for (int i = 0; i < ntops; i++)
		if (tops[i].id == id) {
			dump_top_tree(d, &tops[i]);
			return 1;
		}
	if (id == BTRFS_TREE_LOG_OBJECTID) {
		msg_error("cannot print log root tree, invalid pointer");
		return 1;
	}
	if (id != BTRFS_BLOCK_GROUP_TREE_OBJECTID)
		return 0;
	if (!(get_le64(&d->fs->sb.compat_ro_flags) & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE) ||
	    fs_root_lookup(d->fs, BTRFS_BLOCK_GROUP_TREE_OBJECTID, &bg)) {
		msg_error("cannot print block group tree, invalid pointer");
		return 1;
	}
	dump_top_tree(d, &(struct top_tree){ "block group", bg.objectid, bg.bytenr });
	return 1;
}

static void dump_whole_fs(struct dumper *d)
{
	const struct dump_opts *o = d->o;
	const struct btrfs_super_block *sb = &d->fs->sb;
	struct top_tree tops[3] = {
		{ "root", BTRFS_ROOT_TREE_OBJECTID, d->fs->root_bytenr },
		{ "chunk", BTRFS_CHUNK_TREE_OBJECTID, d->fs->chunk_root_bytenr },
		{ "log root", BTRFS_TREE_LOG_OBJECTID, get_le64(&sb->log_root) },
	};
	int ntops = tops[2].bytenr ? 3 : 2;
	struct fs_root scan = { .objectid = BTRFS_ROOT_TREE_OBJECTID,
				.bytenr = d->fs->root_bytenr, .level = -1 };
	char uuid[UUID_STR_LEN];

	if (!o->extents_only && !o->uuid_only && !o->tree_id)
		for (int i = 0; i < ntops; i++)
			dump_top_tree(d, &tops[i]);
	if (o->tree_id && dump_special_tree(d, tops, ntops))
		return;
	dump_root_items(d, &scan);
	if (ntops == 3) {
		scan.objectid = BTRFS_TREE_LOG_OBJECTID;
		scan.bytenr = tops[2].bytenr;
		dump_root_items(d, &scan);
	}
	if (o->extents_only || o->device_only || o->uuid_only)
		return;
	if (o->backups)
		print_backup_root_summary(sb);
	printf("total bytes %llu\nbytes used %llu\n", (unsigned long long)get_le64(&sb->total_bytes),
	       (unsigned long long)get_le64(&sb->bytes_used));
	uuid_unparse(sb->fsid, uuid);
	printf("uuid %s\n", uuid);
}

/* -b: the given blocks in address order (with --follow their subtrees). */
static void dump_blocks(struct dumper *d)
{
	for (int i = 0; i < d->o->nblocks; i++) {
		uint64_t bytenr = d->o->blocks[i];
		struct fs_block *b;

		if (bytenr % d->fs->sectorsize) {
			msg_error("tree block bytenr %llu is not aligned to sectorsize %u",
				  (unsigned long long)bytenr, d->fs->sectorsize);
			continue;
		}
		b = read_block(d, bytenr, 0, -1);
		if (!b)
			continue;
		print_tree(d, b, d->o->follow);
		fs_block_put(d->fs, b);
	}
}

/* Whether s starts with word, in any case and with '-' for '_' (free-space, tree-log). */
static int starts_with_word(const char *s, const char *word)
{
	for (; *word; s++, word++)
		if (toupper((unsigned char)*s) != *word && !(*s == '-' && *word == '_'))
			return 0;
	return 1;
}

/* Tree names for -t: ROOT, BTRFS_ROOT_TREE, root_tree_objectid, free-space ... (any case). */
static uint64_t tree_id_from_name(const char *s)
{
	static const struct { const char *name; uint64_t id; } names[] = {
		{ "ROOT", BTRFS_ROOT_TREE_OBJECTID }, { "EXTENT", BTRFS_EXTENT_TREE_OBJECTID },
		{ "CHUNK", BTRFS_CHUNK_TREE_OBJECTID }, { "DEVICE", BTRFS_DEV_TREE_OBJECTID },
		{ "DEV", BTRFS_DEV_TREE_OBJECTID }, { "FS", BTRFS_FS_TREE_OBJECTID },
		{ "CSUM", BTRFS_CSUM_TREE_OBJECTID }, { "CHECKSUM", BTRFS_CSUM_TREE_OBJECTID },
		{ "QUOTA", BTRFS_QUOTA_TREE_OBJECTID }, { "UUID", BTRFS_UUID_TREE_OBJECTID },
		{ "FREE_SPACE", BTRFS_FREE_SPACE_TREE_OBJECTID },
		{ "TREE_LOG_FIXUP", BTRFS_TREE_LOG_FIXUP_OBJECTID },
		{ "TREE_LOG", BTRFS_TREE_LOG_OBJECTID }, { "TREE_RELOC", BTRFS_TREE_RELOC_OBJECTID },
		{ "DATA_RELOC", BTRFS_DATA_RELOC_TREE_OBJECTID },
		{ "BLOCK_GROUP", BTRFS_BLOCK_GROUP_TREE_OBJECTID },
	};
	const char *p = s;
	uint64_t id = 0;

	if (starts_with_word(p, "BTRFS_"))
		p += 6;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (starts_with_word(p, names[i].name)) {
			id = names[i].id;
			p += strlen(names[i].name);
			break;
		}
	if (!id) {
		msg_error("unrecognized tree id: %s", s);
		exit(1);
	}
	if (starts_with_word(p, "_TREE"))
		p += 5;
	if (starts_with_word(p, "_OBJECTID"))
		p += 9;
	if (*p) {
		msg_error("unexpected tree id suffix of '%s': %s", s, p);
		exit(1);
	}
	return id;
}

static uint64_t parse_tree_id(const char *s)
{
	uint64_t id = 0;
	size_t i;

	for (i = 0; s[i] && isdigit((unsigned char)s[i]); i++)
		;
	if (!i || s[i])
		return tree_id_from_name(s);
	if (cli_parse_u64(s, &id) || !id) {
		msg_error("unrecognized tree id: %s", s);
		exit(1);
	}
	return id;
}

static int add_block(struct dump_opts *o, uint64_t bytenr)
{
	int i;
	uint64_t *v;

	for (i = 0; i < o->nblocks && o->blocks[i] < bytenr; i++)
		;
	if (i < o->nblocks && o->blocks[i] == bytenr) {
		msg_warn("tree block bytenr %llu is duplicated", (unsigned long long)bytenr);
		return 0;
	}
	v = realloc(o->blocks, (o->nblocks + 1) * sizeof(*v));
	if (!v) {
		msg_error("out of memory");
		return -1;
	}
	memmove(v + i + 1, v + i, (o->nblocks - i) * sizeof(*v));
	v[i] = bytenr;
	o->blocks = v;
	o->nblocks++;
	return 0;
}

/* The primary superblock of path, or the newest valid mirror. */
static int read_any_super(const char *path, struct btrfs_super_block *sb)
{
	struct btrfs_super_block copy;
	struct fs_error err;
	int ret = -EIO;

	for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++)
		if (!fs_super_read(path, m, &copy, &err) &&
		    (ret || get_le64(&copy.generation) > get_le64(&sb->generation))) {
			*sb = copy;
			ret = 0;
		}
	return ret;
}

struct dev_list {
	const char **paths;
	uint64_t *devids;
	int n;
};

static int dev_list_has(const struct dev_list *l, uint64_t devid)
{
	for (int i = 0; i < l->n; i++)
		if (l->devids[i] == devid)
			return 1;
	return 0;
}

static void dev_list_free(struct dev_list *l)
{
	free(l->paths);
	free(l->devids);
}

/* The given devices (each must hold a btrfs superblock) of the filesystem on the first;
 * the missing ones are found by fs_open's scan unless --noscan. */
static int collect_devices(struct dev_list *l, char **args, int n)
{
	struct btrfs_super_block first, sb;

	l->paths = malloc((size_t)n * sizeof(*l->paths));
	l->devids = malloc((size_t)n * sizeof(*l->devids));
	if (!l->paths || !l->devids) {
		msg_error("out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (stat(args[i], &st)) {
			msg_error("invalid argument %s: %s", args[i], strerror(errno));
			msg_error("cannot open %s: %s", args[i], strerror(errno));
			return -1;
		}
		if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
			msg_error("not a block device or regular file: %s", args[i]);
		if (read_any_super(args[i], &sb)) {
			msg_error("device scan %s: %s", args[i], strerror(EIO));
			return -1;
		}
		if (i == 0)
			first = sb;
		else if (memcmp(sb.dev_item.fsid, first.dev_item.fsid, BTRFS_FSID_SIZE) &&
			 !(get_le64(&sb.flags) & BTRFS_SUPER_FLAG_SEEDING))
			continue; /* another filesystem: the reference only registers it */
		if (dev_list_has(l, get_le64(&sb.dev_item.devid)))
			continue;
		l->paths[l->n] = args[i];
		l->devids[l->n++] = get_le64(&sb.dev_item.devid);
	}
	return 0;
}

static void parse_dump_tree_opts(int argc, char **argv, struct dump_opts *o, struct print_opts *po)
{
	enum { OPT_FOLLOW = 256, OPT_DFS, OPT_BFS, OPT_NOSCAN, OPT_HIDE_NAMES, OPT_CSUM_HEADERS,
	       OPT_CSUM_ITEMS };
	static const struct cli_option longopts[] = {
		{ "extents", no_argument, 'e' }, { "device", no_argument, 'd' },
		{ "roots", no_argument, 'r' }, { "backups", no_argument, 'R' },
		{ "uuid", no_argument, 'u' }, { "block", required_argument, 'b' },
		{ "tree", required_argument, 't' }, { "follow", no_argument, OPT_FOLLOW },
		{ "bfs", no_argument, OPT_BFS }, { "dfs", no_argument, OPT_DFS },
		{ "noscan", no_argument, OPT_NOSCAN },
		{ "hide-names", no_argument, OPT_HIDE_NAMES },
		{ "csum-headers", no_argument, OPT_CSUM_HEADERS },
		{ "csum-items", no_argument, OPT_CSUM_ITEMS }, { NULL, 0, 0 },
	};
	int c;

	while ((c = cli_getopt(argc, argv, "deb:rRut:", longopts, dump_tree_usage)) != -1) {
		switch (c) {
		case 'e': o->extents_only = 1; break;
		case 'd': o->device_only = 1; break;
		case 'r': o->roots_only = 1; break;
		case 'R': o->roots_only = o->backups = 1; break;
		case 'u': o->uuid_only = 1; break;
		case 'b':
			if (add_block(o, cli_arg_u64(optarg)))
				exit(1);
			break;
		case 't': o->tree_id = parse_tree_id(optarg); break;
		case OPT_FOLLOW: o->follow = 1; break;
		case OPT_DFS: o->dfs = 1; break;
		case OPT_BFS: o->dfs = 0; break;
		case OPT_NOSCAN: o->noscan = 1; break;
		case OPT_HIDE_NAMES: po->hide_names = 1; break;
		case OPT_CSUM_HEADERS: po->csum_headers = 1; break;
		case OPT_CSUM_ITEMS: po->csum_items = 1; break;
		}
	}
	cli_check_argc(argc, 1, -1, dump_tree_usage);
}

int dump_tree_main(int argc, char **argv)
{
	struct dump_opts o = { 0 };
	struct dumper d = { 0 };
	struct dev_list devs = { 0 };
	struct fs_open_opts oo;
	struct fs_error err;
	char why[320];
	uint64_t missing[8];
	int ret = 1;

	parse_dump_tree_opts(argc, argv, &o, &d.po);
	/* dumps run to megabytes: write in large chunks (messages flush stdout first) */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (collect_devices(&devs, argv + optind, argc - optind))
		goto out;
	printf("btrfs-progs v%s compatible (btrfsbox v%s)\n", BTRFS_PROGS_COMPAT, BTRFSBOX_VERSION);
	fs_open_opts_init(&oo);
	oo.partial = 1;
	oo.allow_degraded = 1;
	oo.scan = !o.noscan;
	d.fs = fs_open(devs.paths, devs.n, &oo, &err);
	if (!d.fs) {
		msg_error("unable to open %s: %s", argv[optind], fs_error_format(&err, why, sizeof(why)));
		goto out;
	}
	/* on stdout, as the reference */
	for (int i = 0, n = fs_missing_devids(d.fs, missing, 8); i < n && i < 8; i++)
		printf("warning, device %llu is missing\n", (unsigned long long)missing[i]);
	d.o = &o;
	d.po.nodesize = d.fs->nodesize;
	d.po.sectorsize = d.fs->sectorsize;
	d.po.csum_size = (unsigned)d.fs->csum_size;
	if (o.nblocks)
		dump_blocks(&d);
	else
		dump_whole_fs(&d);
	fs_close(d.fs);
	ret = 0;
out:
	dev_list_free(&devs);
	free(o.blocks);
	return ret;
}

#endif
