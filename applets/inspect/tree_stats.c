/* btrfs inspect-internal tree-stats: size, node counts per level, seeks between
 * sibling blocks and clusters of adjacent ones, of the main trees of an unmounted
 * filesystem (read through the engine). */
//config:config TREE_STATS
//config:	bool "btrfs inspect-internal tree-stats"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Print statistics of the root, extent, csum and fs trees of an
//config:	  unmounted filesystem.
//cmd:TREE_STATS tree_stats_main btrfs inspect-internal tree-stats|Print various stats for trees

#include "config.h"
#if CFG_TREE_STATS
#include "fs/core/devscan.h"
#include "fs/core/fs.h"
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/le.h"
#include "util/sort.h"
#include "util/vec.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

struct stats {
	struct fs *fs;
	int inline_data;            /* count inline file data (fs trees) */
	uint64_t nodes, bytes, inline_bytes, seeks, forward, backward, seek_len, max_seek;
	uint64_t clusters, cluster_bytes, min_cluster, max_cluster, lowest, highest;
	uint64_t per_level[BTRFS_MAX_LEVEL];
	int root_level;             /* of the first block walked */
	uint64_t *dist;             /* every seek distance, for the histogram */
	size_t ndist, room;
};

static void count_block(struct stats *s, int level, uint64_t n)
{
	if (!s->nodes)
		s->root_level = level;
	s->nodes += n;
	s->bytes += n * s->fs->nodesize;
	s->per_level[level] += n;
}

static int stats_leaf(void *ctx, const struct fs_block *b)
{
	struct stats *s = ctx;
	struct fs_key k;
	uint32_t i, size;
	const uint8_t *d;

	count_block(s, 0, 1);
	for (i = 0; s->inline_data && i < fs_block_nritems(b); i++)
		if (!fs_item_key(b, i, &k) && k.type == BTRFS_EXTENT_DATA_KEY &&
		    (d = fs_item_data(b, i, &size)) && size > FS_FILE_EXTENT_INLINE_START &&
		    d[20] == BTRFS_FILE_EXTENT_INLINE)   /* the type byte of the item */
			s->inline_bytes += size - FS_FILE_EXTENT_INLINE_START;
	return 0;
}

/* A node: its pointers in order make seeks (a child not right after the previous
 * one) and clusters (runs of adjacent children; a node's last run is not counted, as
 * in btrfs-progs). Leaves below level 1 need not be read unless inline data counts. */
static int stats_node(void *ctx, const struct fs_block *b)
{
	struct stats *s = ctx;
	uint64_t ns = s->fs->nodesize, last = b->bytenr, cluster = ns, *dist;
	uint32_t n = fs_block_nritems(b);
	int level = fs_block_level(b);

	count_block(s, level, 1);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t cur = fs_node_blockptr(b, i);

		if (last + ns != cur) {
			uint64_t d = last + ns > cur ? last + ns - cur : cur - last - ns;

			s->seeks++;
			s->seek_len += d;
			s->max_seek = d > s->max_seek ? d : s->max_seek;
			if (!(dist = vec_push(&s->dist, &s->ndist, &s->room, sizeof(*dist))))
				return -ENOMEM;
			*dist = d;
			*(last < cur ? &s->forward : &s->backward) += 1;
			if (cluster != ns) {
				s->cluster_bytes += cluster;
				s->clusters++;
				s->min_cluster = cluster < s->min_cluster ? cluster : s->min_cluster;
				s->max_cluster = cluster > s->max_cluster ? cluster : s->max_cluster;
			}
			cluster = ns;
		} else {
			cluster += ns;
		}
		last = cur;
		s->lowest = cur < s->lowest ? cur : s->lowest;
		s->highest = cur > s->highest ? cur : s->highest;
	}
	if (level > 1 || s->inline_data)
		return 0;
	count_block(s, 0, n);
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void histogram_line(uint64_t from, uint64_t to, uint64_t count, uint64_t ticks, int digits)
{
	out_say("\t\t%*llu - %*llu: %*llu ", digits, (unsigned long long)from, digits,
		(unsigned long long)to, digits, (unsigned long long)count);
	for (uint64_t i = 0; i < ticks; i++)
		out_say("#");
	out_say(ticks ? "\n" : "|\n");
}

/* Seek distances with a count (one '#' per 5% of the seeks); rare distances are
 * grouped (btrfs-progs' rules, a dropped rare one after a big group included). */
static void print_histogram(struct stats *s)
{
	uint64_t tick = s->seeks / 20, start = 0, end = 0, group = 0, m = s->max_seek;
	int digits = 1;
	size_t i, j;

	if (s->seeks < 20)
		return;
	while ((m /= 10))
		digits++;
	out_say("\tSeek histogram\n");
	sort_stable(s->dist, s->ndist, sizeof(*s->dist), cmp_u64);
	for (i = 0; i < s->ndist; i = j) {
		uint64_t count, ticks;

		for (j = i; j < s->ndist && s->dist[j] == s->dist[i]; j++)
			;
		count = j - i;
		ticks = count / tick;
		if (ticks <= 2 && group / tick <= 2) {
			start = group ? start : s->dist[i];
			end = s->dist[i];
			group += count;
			continue;
		}
		if (group)
			histogram_line(start, end, group, group / tick, digits);
		group = 0;
		if (ticks > 2)
			histogram_line(s->dist[i], s->dist[i], count, ticks, digits);
	}
	if (group)
		histogram_line(start, end, group, group / tick, digits);
}

static void error_ignored(void *ctx, const struct fs_error *e)
{
	char buf[300];

	(void)ctx;
	msg_error("%s", fs_error_format(e, buf, sizeof(buf)));
}

/* Walks tree id and prints its statistics. 0 or 1. */
static int tree_stats(struct fs *fs, uint64_t id, int inline_data, unsigned mode)
{
	static const struct fs_walk_ops ops = { stats_node, stats_leaf, error_ignored };
	struct stats s = { .fs = fs, .inline_data = inline_data, .min_cluster = UINT64_MAX,
			   .max_cluster = fs->nodesize };
	struct timeval t0, t1;
	struct fs_root root;
	int levels, i, ret;

	if (fs_root_lookup(fs, id, &root)) {
		msg_error("failed to read root %llu", (unsigned long long)id);
		return 1;
	}
	s.lowest = s.highest = root.bytenr;
	gettimeofday(&t0, NULL);
	ret = fs_tree_walk(fs, &root, &ops, &s);
	gettimeofday(&t1, NULL);
	if (ret) {
		free(s.dist);
		return 1;
	}
	if (!s.root_level)   /* a single leaf: no time taken, as btrfs-progs says */
		t1 = t0;
	if (s.min_cluster == UINT64_MAX) {
		s.min_cluster = 0;
		s.clusters = 1;
	}
	out_say("\tTotal size: %s\n\t\tInline data: %s\n", pretty_size(s.bytes, mode),
		pretty_size(s.inline_bytes, mode));
	out_say("\tTotal seeks: %llu\n\t\tForward seeks: %llu\n\t\tBackward seeks: %llu\n",
		(unsigned long long)s.seeks, (unsigned long long)s.forward,
		(unsigned long long)s.backward);
	out_say("\t\tAvg seek len: %s\n", pretty_size(s.seeks ? s.seek_len / s.seeks : 0, mode));
	print_histogram(&s);
	out_say("\tTotal clusters: %llu\n\t\tAvg cluster size: %s\n", (unsigned long long)s.clusters,
		pretty_size(s.cluster_bytes / s.clusters, mode));
	out_say("\t\tMin cluster size: %s\n\t\tMax cluster size: %s\n",
		pretty_size(s.min_cluster, mode), pretty_size(s.max_cluster, mode));
	out_say("\tTotal disk spread: %s\n", pretty_size(s.highest - s.lowest, mode));
	i = (int)((t1.tv_sec - t0.tv_sec) * 1000000 + t1.tv_usec - t0.tv_usec);
	out_say("\tTotal read time: %d s %d us\n", i / 1000000, i % 1000000);
	levels = s.root_level + 1;
	out_say("\tLevels: %d\n\tTotal nodes: %llu\n", levels, (unsigned long long)s.nodes);
	for (i = 0; i < levels; i++) {
		out_say("\t\tOn level %d: %8llu", i, (unsigned long long)s.per_level[i]);
		if (i)
			out_say("  (avg fanout %llu)", (unsigned long long)(s.per_level[i] ?
				s.per_level[i - 1] / s.per_level[i] : 0));
		out_say("\n");
	}
	free(s.dist);
	return 0;
}

USAGE(usage) =
	"usage: btrfs inspect-internal tree-stats [-b] [-t <tree_id>] <device>\n\n"
	"    -b  raw numbers in bytes   -t <tree_id>  only this tree\n"
	CLI_UNITS;

int tree_stats_main(int argc, char **argv)
{
	static const char *const names[] = { "root", "extent", "csum", "fs" };
	static const uint64_t ids[] = { BTRFS_ROOT_TREE_OBJECTID, BTRFS_EXTENT_TREE_OBJECTID,
					BTRFS_CSUM_TREE_OBJECTID, BTRFS_FS_TREE_OBJECTID };
	unsigned mode = units_parse_args(&argc, argv, 0);
	struct fs_open_opts o;
	struct fs_error err;
	uint64_t id = 0;
	struct fs *fs;
	int c, ret = 0;

	while ((c = cli_getopt(argc, argv, "vbt:", NULL, usage)) != -1) {
		if (c == 'b')
			mode = UNITS_RAW;
		else if (c == 't')
			id = cli_arg_u64(optarg);
	}
	cli_check_argc(argc, 1, 1, usage);
	if (fs_path_mounted(argv[optind]) > 0)
		msg_warn("%s already mounted, results may be inaccurate", argv[optind]);
	fs_open_opts_init(&o);
	fs = fs_open((const char *const *)argv + optind, 1, &o, &err);
	if (!fs) {
		msg_error("cannot open ctree");
		return 1;
	}
	if (id) {
		out_say("Calculating size of tree (%llu)\n", (unsigned long long)id);
		ret = tree_stats(fs, id, 1, mode);
	}
	for (c = 0; !id && !ret && c < 4; c++) {
		out_say("Calculating size of %s tree\n", names[c]);
		ret = tree_stats(fs, ids[c], c == 3, mode);
	}
	fs_close(fs);
	return ret;
}
#endif
