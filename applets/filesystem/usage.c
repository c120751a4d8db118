/* btrfs filesystem usage: overall allocation, then per block group type and device
 * (linear or, with -T, a table), computed as btrfs-progs 6.2 does from the space
 * infos, the chunk tree and the device infos. */
//cmd:APPLET_FILESYSTEM fs_usage_main btrfs filesystem usage|Show detailed information about internal filesystem usage
#include "config.h"
#if CFG_APPLET_FILESYSTEM
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/table.h"
#include "util/cli/units.h"
#include "util/ioctl/btrfs_ioctl.h"
#include "util/sort.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

USAGE(usage_usage) =
	"usage: btrfs filesystem usage [options] <path> [<path>...]\n"
	"Show how the space of a mounted filesystem is allocated and used.\n\n"
	"  -T                 per-device table instead of per-type lists\n"
	"  -b|--raw  -h|--human-readable  -H  --iec  --si\n"
	"  -k|--kbytes  -m|--mbytes  -g|--gbytes  -t|--tbytes   units of the sizes\n";

/* One device as the report shows it. */
struct usage_dev {
	uint64_t devid;
	char path[BTRFS_DEVICE_PATH_NAME_MAX + 1];
	uint64_t size;        /* btrfs size of the device */
	uint64_t device_size; /* size of the block device (0: missing) */
};

/* What one mounted filesystem reports. */
struct usage {
	struct btrfs_ioctl_space_args *sa;  /* sorted: Data, Metadata, System, reserve */
	struct btrfs_chunk_usage *chunks;
	int nchunks;
	struct usage_dev *devs;
	int ndevs;
};

static int space_cmp(const void *a, const void *b)
{
	return btrfs_group_order(((const struct btrfs_ioctl_space_info *)a)->flags,
				 ((const struct btrfs_ioctl_space_info *)b)->flags);
}

static int usage_load(int fd, const char *path, struct usage *u)
{
	struct btrfs_ioctl_fs_info_args fi;
	struct btrfs_ioctl_dev_info_args *di;
	int i, n, ret;

	ret = btrfs_chunk_usage(fd, &u->chunks, &u->nchunks);
	if (ret == -EPERM)
		msg_warn("cannot read detailed chunk info, per-device usage will not be shown, run as root");
	else if (ret)
		goto fail;
	ret = btrfs_dev_infos(fd, &fi, &di, &n);
	if (ret)
		goto fail;
	u->devs = calloc(n ? n : 1, sizeof(*u->devs));
	if (!u->devs) {
		free(di);
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		struct usage_dev *d = &u->devs[i];

		d->devid = di[i].devid;
		d->size = di[i].total_bytes;
		if (di[i].path[0]) {
			snprintf(d->path, sizeof(d->path), "%s", (char *)di[i].path);
			d->device_size = btrfs_device_size(d->path);
		} else {
			strcpy(d->path, "missing");
		}
	}
	u->ndevs = n;
	free(di);
	ret = btrfs_space_info(fd, &u->sa);
	if (ret)
		goto fail;
	sort_stable(u->sa->spaces, u->sa->total_spaces, sizeof(u->sa->spaces[0]), space_cmp);
	return 0;
fail:
	errno = -ret;
	msg_error("cannot get space info on '%s': %m", path);
	return -1;
}

static void usage_free(struct usage *u)
{
	free(u->sa);
	free(u->chunks);
	free(u->devs);
}

static uint64_t slack(const struct usage_dev *d)
{
	return d->device_size > d->size ? d->device_size - d->size : 0;
}

/* Raw bytes of RAID5/6 chunks and the part of them in use: their logical use ratio
 * spread over the data stripes. Updates *max_ratio with their raid factor. */
static void raid56_raw(const struct usage *u, uint64_t raw_chunks[3], uint64_t raw_used[3],
		       double *max_ratio)
{
	static const uint64_t kinds[3] = {
		BTRFS_BLOCK_GROUP_DATA, BTRFS_BLOCK_GROUP_METADATA, BTRFS_BLOCK_GROUP_SYSTEM
	};
	int i, k;

	for (i = 0; i < u->nchunks; i++) {
		const struct btrfs_chunk_usage *c = &u->chunks[i];
		uint64_t prof = c->type & BTRFS_BLOCK_GROUP_RAID56_MASK, lused = 0, ltotal = 0, j;
		uint32_t parity = (c->type & BTRFS_BLOCK_GROUP_RAID6) ? 2 : 1, data;
		double rt;

		if (!prof)
			continue;
		for (k = 0; k < 3 && !(c->type & kinds[k]); k++)
			;
		if (k == 3 || c->num_stripes <= parity)
			continue;
		for (j = 0; j < u->sa->total_spaces; j++) {
			const struct btrfs_ioctl_space_info *s = &u->sa->spaces[j];

			if ((s->flags & prof) && (s->flags & kinds[k])) {
				lused += s->used_bytes;
				ltotal += s->total_bytes;
			}
		}
		data = c->num_stripes - parity;
		rt = (double)c->num_stripes / data;
		if (rt > *max_ratio)
			*max_ratio = rt;
		raw_chunks[k] += c->size / data;
		if (ltotal)
			raw_used[k] += (uint64_t)((c->size / data) * ((double)lused / ltotal));
	}
}

static void print_overall(const char *path, const struct usage *u, unsigned mode)
{
	uint64_t r_size = 0, r_slack = 0, r_missing = 0, r_chunks, r_used, r_unused;
	uint64_t raw_chunks[3] = { 0 }, raw_used[3] = { 0 }, l_data = 0, l_meta = 0;
	uint64_t reserve = 0, reserve_used = 0, free_est, free_min, i;
	double max_ratio = 1.0, data_ratio, meta_ratio;
	int width = (mode == UNITS_HUMAN) ? 10 : 18, mixed = 0, c, mask;
	char names[BTRFS_NR_CLASSES][BTRFS_PROFILES_LEN], types[64] = "";
	struct statfs sfs;

	for (c = 0; c < u->ndevs; c++) {
		r_size += u->devs[c].size;
		r_slack += slack(&u->devs[c]);
		if (!u->devs[c].device_size)
			r_missing += u->devs[c].size;
	}
	raid56_raw(u, raw_chunks, raw_used, &max_ratio);
	for (i = 0; i < u->sa->total_spaces; i++) {
		const struct btrfs_ioctl_space_info *s = &u->sa->spaces[i];
		int ratio = (s->flags & BTRFS_BLOCK_GROUP_RAID56_MASK) ? 0 :
			    btrfs_profile_copies(s->flags);

		if (ratio > max_ratio)
			max_ratio = ratio;
		if (s->flags & BTRFS_SPACE_INFO_GLOBAL_RSV) {
			reserve = s->total_bytes;
			reserve_used = s->used_bytes;
		}
		if ((s->flags & BTRFS_BLOCK_GROUP_DATA) && (s->flags & BTRFS_BLOCK_GROUP_METADATA))
			mixed = 1;
		if (s->flags & BTRFS_BLOCK_GROUP_DATA) {
			raw_used[0] += s->used_bytes * ratio;
			raw_chunks[0] += s->total_bytes * ratio;
			l_data += s->total_bytes;
		}
		if (s->flags & BTRFS_BLOCK_GROUP_METADATA) {
			raw_used[1] += s->used_bytes * ratio;
			raw_chunks[1] += s->total_bytes * ratio;
			l_meta += s->total_bytes;
		}
		if (s->flags & BTRFS_BLOCK_GROUP_SYSTEM) {
			raw_used[2] += s->used_bytes * ratio;
			raw_chunks[2] += s->total_bytes * ratio;
		}
	}
	r_chunks = raw_chunks[0] + raw_chunks[2] + (mixed ? 0 : raw_chunks[1]);
	r_used = raw_used[0] + raw_used[2] + (mixed ? 0 : raw_used[1]);
	r_unused = r_size - r_chunks;
	data_ratio = (double)raw_chunks[0] / l_data;
	meta_ratio = mixed ? data_ratio : (double)raw_chunks[1] / l_meta;
	free_est = (uint64_t)((raw_chunks[0] - raw_used[0]) / data_ratio);
	if (mixed)
		free_est -= reserve - reserve_used;
	free_min = free_est;
	/* Unallocated space counts when there is enough for a new chunk. */
	if (r_unused >= (16ULL << 20)) {
		free_est += (uint64_t)(r_unused / data_ratio);
		free_min += (uint64_t)(r_unused / max_ratio);
	}
	if (statfs(path, &sfs)) {
		msg_warn("cannot get space info with statfs() on '%s': %m", path);
		memset(&sfs, 0, sizeof(sfs));
	}
	printf("Overall:\n");
	printf("    Device size:\t\t%*s\n", width, pretty_size(r_size, mode));
	printf("    Device allocated:\t\t%*s\n", width, pretty_size(r_chunks, mode));
	printf("    Device unallocated:\t\t%*s\n", width, pretty_size(r_unused, mode | UNITS_NEGATIVE));
	printf("    Device missing:\t\t%*s\n", width, pretty_size(r_missing, mode));
	printf("    Device slack:\t\t%*s\n", width, pretty_size(r_slack, mode));
	printf("    Used:\t\t\t%*s\n", width, pretty_size(r_used, mode));
	printf("    Free (estimated):\t\t%*s\t(min: %s)\n", width, pretty_size(free_est, mode),
	       pretty_size(free_min, mode));
	printf("    Free (statfs, df):\t\t%*s\n", width,
	       pretty_size((uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize, mode));
	printf("    Data ratio:\t\t\t%*.2f\n", width, data_ratio);
	printf("    Metadata ratio:\t\t%*.2f\n", width, meta_ratio);
	printf("    Global reserve:\t\t%*s\t(used: %s)\n", width, pretty_size(reserve, mode),
	       pretty_size(reserve_used, mode));
	mask = btrfs_multiple_profiles(u->sa, names);
	for (c = 0; c < BTRFS_NR_CLASSES; c++) {
		static const char *const cls[BTRFS_NR_CLASSES] = {
			"data", "metadata", "data+metadata", "system"
		};

		if (mask & (1 << c))
			snprintf(types + strlen(types), sizeof(types) - strlen(types), "%s%s",
				 types[0] ? ", " : "", cls[c]);
	}
	if (types[0])
		printf("    Multiple profiles:\t\t%*s\t(%s)\n", width, "yes", types);
	else
		printf("    Multiple profiles:\t\t%*s\n", width, "no");
}

/* Bytes of chunks of exactly this type on device devid (0: any type). */
static uint64_t allocated_on(const struct usage *u, uint64_t type, uint64_t devid, int any)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < u->nchunks; i++)
		if ((any || u->chunks[i].type == type) && u->chunks[i].devid == devid)
			total += btrfs_chunk_usage_on_device(&u->chunks[i]);
	return total;
}

static void print_linear(const struct usage *u, unsigned mode)
{
	uint64_t i;
	int d;

	for (i = 0; i < u->sa->total_spaces; i++) {
		const struct btrfs_ioctl_space_info *s = &u->sa->spaces[i];

		if (s->flags & BTRFS_SPACE_INFO_GLOBAL_RSV)
			continue;
		printf("%s,%s: Size:%s, ", btrfs_group_type_str(s->flags),
		       btrfs_group_profile_str(s->flags), pretty_size(s->total_bytes, mode));
		printf("Used:%s (%.2f%%)\n", pretty_size(s->used_bytes, mode),
		       100.0f * s->used_bytes / (s->total_bytes + 1));
		for (d = 0; d < u->ndevs; d++) {
			uint64_t on = allocated_on(u, s->flags, u->devs[d].devid, 0);

			if (on)
				printf("   %s\t%10s\n", u->devs[d].path, pretty_size(on, mode));
		}
		putchar('\n');
	}
	if (!u->nchunks)
		return;
	printf("Unallocated:\n");
	for (d = 0; d < u->ndevs; d++)
		printf("   %s\t%10s\n", u->devs[d].path,
		       pretty_size(u->devs[d].size - allocated_on(u, 0, u->devs[d].devid, 1),
				   mode | UNITS_NEGATIVE));
}

/* Columns: Id, Path, one per block group type, Unallocated, Total, Slack. Rows: two
 * header lines, a rule, one per device, a rule, Total and Used. */
static void print_table(const struct usage *u, unsigned mode)
{
	const int head = 3, first = 2;
	uint64_t i, unused_sum = 0, total_sum = 0, slack_sum = 0;
	struct table t;
	int ntypes = 0, col, d, c;

	for (i = 0; i < u->sa->total_spaces; i++)
		ntypes += !(u->sa->spaces[i].flags & BTRFS_SPACE_INFO_GLOBAL_RSV);
	if (table_init(&t, first + ntypes + 3, head + u->ndevs + 3))
		return;
	table_set(&t, 0, 1, "<Id");
	table_set(&t, 1, 1, "<Path");
	for (i = 0, col = first; i < u->sa->total_spaces; i++) {
		const struct btrfs_ioctl_space_info *s = &u->sa->spaces[i];

		if (s->flags & BTRFS_SPACE_INFO_GLOBAL_RSV)
			continue;
		table_set(&t, col, 0, "<%s", btrfs_group_type_str(s->flags));
		table_set(&t, col, 1, "<%s", btrfs_group_profile_str(s->flags));
		table_set(&t, col, head + u->ndevs + 1, ">%s", pretty_size(s->total_bytes, mode));
		table_set(&t, col, head + u->ndevs + 2, ">%s", pretty_size(s->used_bytes, mode));
		for (d = 0; d < u->ndevs; d++) {
			uint64_t on = allocated_on(u, s->flags, u->devs[d].devid, 0);

			if (on)
				table_set(&t, col, head + d, ">%s", pretty_size(on, mode));
			else
				table_set(&t, col, head + d, ">-");
		}
		col++;
	}
	table_set(&t, col, 1, "<Unallocated");
	table_set(&t, col + 1, 1, "<Total");
	table_set(&t, col + 2, 1, "<Slack");
	for (d = 0; d < u->ndevs; d++) {
		const struct usage_dev *dev = &u->devs[d];
		uint64_t unused = dev->size - allocated_on(u, 0, dev->devid, 1), sl = slack(dev);

		table_set(&t, 0, head + d, ">%llu", (unsigned long long)dev->devid);
		table_set(&t, 1, head + d, "<%s", dev->path);
		table_set(&t, col, head + d, ">%s", pretty_size(unused, mode | UNITS_NEGATIVE));
		table_set(&t, col + 1, head + d, ">%s", pretty_size(dev->size, mode | UNITS_NEGATIVE));
		if (sl)
			table_set(&t, col + 2, head + d, ">%s", pretty_size(sl, mode | UNITS_NEGATIVE));
		else
			table_set(&t, col + 2, head + d, ">-");
		unused_sum += unused;
		total_sum += dev->size;
		slack_sum += sl;
	}
	for (c = 0; c < t.ncols; c++) {
		table_set(&t, c, head - 1, "*-");
		table_set(&t, c, head + u->ndevs, "*-");
	}
	table_set(&t, 1, head + u->ndevs + 1, "<Total");
	table_set(&t, col, head + u->ndevs + 1, ">%s", pretty_size(unused_sum, mode | UNITS_NEGATIVE));
	table_set(&t, col + 1, head + u->ndevs + 1, ">%s", pretty_size(total_sum, mode | UNITS_NEGATIVE));
	table_set(&t, col + 2, head + u->ndevs + 1, ">%s", pretty_size(slack_sum, mode | UNITS_NEGATIVE));
	table_set(&t, 1, head + u->ndevs + 2, "<Used");
	table_print(&t, 1);
	table_free(&t);
}

int fs_usage_main(int argc, char **argv)
{
	unsigned mode = units_parse_args(&argc, argv, 1);
	int c, i, tabular = 0, ret = 0;

	while ((c = cli_getopt(argc, argv, "T", NULL, usage_usage)) != -1)
		tabular = 1;
	cli_check_argc(argc, 1, -1, usage_usage);
	for (i = optind; i < argc && !ret; i++) {
		struct usage u = { 0 };
		int fd = btrfs_open_path(argv[i], 1, 0);

		if (fd < 0)
			return 1;
		if (i > optind)
			putchar('\n');
		if (usage_load(fd, argv[i], &u) == 0) {
			print_overall(argv[i], &u, mode);
			putchar('\n');
			if (tabular)
				print_table(&u, mode);
			else
				print_linear(&u, mode);
		} else {
			ret = 1;
		}
		usage_free(&u);
		close(fd);
	}
	return ret;
}
#endif
