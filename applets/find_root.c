/* btrfs-find-root: candidate root blocks of a tree, found by reading every block of the
 * metadata chunks (system chunks for the chunk tree), newest generation first, as
 * btrfs-progs' tool of that name; the root tree by default. */
//config:config APPLET_FIND_ROOT
//config:	bool "btrfs-find-root"
//config:	default y
//config:	help
//config:	  btrfs-find-root [-a] [-o OBJECTID] [-l LEVEL] [-g GENERATION] DEVICE:
//config:	  the blocks that may be the root of a tree (the root tree by default),
//config:	  for btrfs restore -t when the superblock's root is lost.
//cmd:APPLET_FIND_ROOT find_root_main btrfs-find-root|Attempt to find tree roots on the device

#include "config.h"
#if CFG_APPLET_FIND_ROOT
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

USAGE(find_root_usage) =
	"usage: btrfs-find-root [options] <device>\n\n"
	"    Attempt to find tree roots on the device\n\n"
	"    -a           search through all metadata even if the root has been found\n"
	"    -o OBJECTID  filter by the tree's object id\n"
	"    -l LEVEL     filter by tree level, (default: 0)\n"
	"    -g GENERATION  filter by tree generation\n";

#define UNKNOWN UINT64_MAX

struct filter {
	uint64_t objectid, generation, level;   /* the tree; blocks at least this new and high */
	uint64_t want_gen, want_level;          /* what the superblock says (UNKNOWN: nothing) */
	int all;                                /* go on past the block that matches */
};

struct candidate { uint64_t gen, level, bytenr; };

/* The generation and level the superblock gives the tree, said as btrfs-progs says it. */
static void superblock_thinks(const struct fs *fs, struct filter *f)
{
	const struct btrfs_super_block *sb = &fs->sb;

	f->want_gen = f->want_level = UNKNOWN;
	switch (f->objectid) {
	case BTRFS_ROOT_TREE_OBJECTID:
		f->want_gen = get_le64(&sb->generation);
		f->want_level = sb->root_level;
		break;
	case BTRFS_CHUNK_TREE_OBJECTID:
		f->want_gen = get_le64(&sb->chunk_root_generation);
		f->want_level = sb->chunk_root_level;
		break;
	case BTRFS_TREE_LOG_OBJECTID:
		f->want_gen = get_le64(&sb->generation) + 1;
		f->want_level = sb->log_root_level;
		break;
	case BTRFS_UUID_TREE_OBJECTID:
		f->want_gen = get_le64(&sb->uuid_tree_generation);
		break;
	}
	if (f->want_gen != UNKNOWN)
		printf("Superblock thinks the generation is %llu\n", (unsigned long long)f->want_gen);
	else
		printf("Superblock doesn't contain generation info for root %llu\n", (unsigned long long)f->objectid);
	if (f->want_level != UNKNOWN)
		printf("Superblock thinks the level is %llu\n", (unsigned long long)f->want_level);
	else
		printf("Superblock doesn't contain the level info for root %llu\n", (unsigned long long)f->objectid);
}

/* Newest generation first; in one, the highest level first, then the highest address. */
static int candidate_order(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->gen != b->gen)
		return a->gen > b->gen ? -1 : 1;
	if (a->level != b->level)
		return a->level > b->level ? -1 : 1;
	return a->bytenr == b->bytenr ? 0 : a->bytenr > b->bytenr ? -1 : 1;
}

/* Every block of the chunks of the tree's kind that verifies and belongs to the tree:
 * kept when it passes the filter. 1 when one matched the superblock (and -a is off):
 * its address in *match. */
static int scan(struct fs *fs, const struct filter *f, struct candidate **v, size_t *n, uint64_t *match)
{
	uint64_t kind = f->objectid == BTRFS_CHUNK_TREE_OBJECTID ? BTRFS_BLOCK_GROUP_SYSTEM : BTRFS_BLOCK_GROUP_METADATA;
	size_t cap = 0;

	for (int i = 0; i < fs->num_chunks; i++) {
		const struct fs_chunk *c = &fs->chunks[i];

		if (!(c->type & kind))
			continue;
		for (uint64_t at = c->logical; at + fs->nodesize <= c->logical + c->length; at += fs->nodesize) {
			struct fs_block *b = fs_block_read(fs, at, &FS_EXPECT_NONE);
			struct candidate k;

			if (!b)
				continue;
			k = (struct candidate){ fs_block_generation(b), (uint64_t)fs_block_level(b), at };
			if (fs_block_owner(b) == f->objectid && k.level >= f->level && k.gen >= f->generation) {
				if (vec_reserve(v, &cap, *n + 1, sizeof(**v)) == 0)
					(*v)[(*n)++] = k;
				if (k.gen == f->want_gen && k.level == f->want_level && !f->all) {
					fs_block_put(fs, b);
					*match = at;
					return 1;
				}
			}
			fs_block_put(fs, b);
		}
	}
	return 0;
}

static void print_candidate(const struct candidate *k, const struct filter *f)
{
	printf("Well block %llu(gen: %llu level: %llu) seems good, ", (unsigned long long)k->bytenr,
	       (unsigned long long)k->gen, (unsigned long long)k->level);
	if (f->want_gen == UNKNOWN || f->want_level == UNKNOWN)
		printf("but we are unsure about the correct generation/level\n");
	else if (k->gen == f->want_gen && k->level == f->want_level)
		printf("and it matches superblock\n");
	else
		printf("but generation/level doesn't match, want gen: %llu level: %llu\n",
		       (unsigned long long)f->want_gen, (unsigned long long)f->want_level);
}

/* Per generation, the blocks at its highest level (more than one: its root is lost);
 * the generation that matched the superblock was said already. */
static void print_candidates(struct candidate *v, size_t n, const struct filter *f)
{
	sort_stable(v, n, sizeof(*v), candidate_order);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t top = v[i].level;     /* the group's first: its highest level */

		for (j = i; j < n && v[j].gen == v[i].gen; j++)
			if (v[j].level == top && !(v[j].gen == f->want_gen && top == f->want_level && !f->all))
				print_candidate(&v[j], f);
	}
}

/* The chunk map is enough: the root tree may be what is lost (and so the chunk tree). */
static struct fs *open_chunks(const char *dev)
{
	struct fs_open_opts o;
	struct fs_error err;
	struct fs_block *b;
	struct fs *fs;
	char buf[320];

	fs_open_opts_init(&o);
	o.scan = 1;
	o.allow_degraded = 1;
	o.partial = 1;
	fs = fs_open(&dev, 1, &o, &err);
	if (!fs) {
		o.skip_chunk_tree = 1;
		fs = fs_open(&dev, 1, &o, &err);
	}
	if (!fs) {
		msg_error("open ctree failed: %s", fs_error_format(&err, buf, sizeof(buf)));
		return NULL;
	}
	b = fs_block_read(fs, get_le64(&fs->sb.root), &FS_EXPECT_NONE);
	if (!b)
		fprintf(stderr, "Couldn't read tree root\n");
	fs_block_put(fs, b);
	return fs;
}

int find_root_main(int argc, char **argv)
{
	struct filter f = { .objectid = BTRFS_ROOT_TREE_OBJECTID };
	struct candidate *v = NULL;
	uint64_t match = 0;
	size_t n = 0;
	struct fs *fs;
	int c;

	while ((c = cli_getopt_long(argc, argv, "al:o:g:", "", find_root_usage)) != -1) {
		if (c == 'a')
			f.all = 1;
		else
			*(c == 'o' ? &f.objectid : c == 'g' ? &f.generation : &f.level) = cli_arg_u64(optarg);
	}
	cli_check_argc(argc, 1, -1, find_root_usage);
	fs = open_chunks(argv[optind]);
	if (!fs)
		return 1;
	superblock_thinks(fs, &f);
	if (scan(fs, &f, &v, &n, &match))
		printf("Found tree root at %llu gen %llu level %llu\n", (unsigned long long)match,
		       (unsigned long long)f.want_gen, (unsigned long long)f.want_level);
	print_candidates(v, n, &f);
	free(v);
	fs_close(fs);
	return 0;
}
#endif
