/* btrfs filesystem du: the disk usage of files and directories from their extent maps
 * (FIEMAP): total, exclusive, and for each argument the bytes it shares, counted once
 * (the union of the shared physical ranges). */
//config:config FS_DU
//config:	bool "btrfs filesystem du"
//config:	default y
//config:	depends on APPLET_BTRFS
//config:	help
//config:	  Disk usage of files and directories with their shared and
//config:	  exclusive parts (reflinks, snapshots).
//cmd:FS_DU fs_du_main btrfs filesystem du|Summarize disk usage of each file

#include "config.h"
#if CFG_FS_DU
#include "util/cli/cli.h"
#include "util/cli/output.h"
#include "util/cli/units.h"
#include "util/ioctl/subvol.h"
#include "util/sort.h"
#include "util/vec.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

struct du {
	unsigned mode;
	int summarize;
	char path[PATH_MAX];
	size_t len;
	uint64_t (*shared)[2];   /* physical [start, end) of shared extents of the argument */
	size_t nshared, room;
	uint64_t (*seen)[2];     /* (inode, subvolume) hash set, against hard links */
	size_t nseen, seen_room;
};

/* Adds (ino, subvol) to the set; 1 when it was there already, -ENOMEM. */
static int seen_before(struct du *d, uint64_t ino, uint64_t subvol)
{
	size_t i;

	if (2 * (d->nseen + 1) > d->seen_room) {   /* grow and rehash, half full at most */
		struct du old = *d;

		d->seen_room = d->seen_room ? 2 * d->seen_room : 1024;
		d->seen = calloc(d->seen_room, sizeof(*d->seen));
		if (!d->seen)
			return -ENOMEM;
		d->nseen = 0;
		for (i = 0; i < old.seen_room; i++)
			if (old.seen[i][0])
				seen_before(d, old.seen[i][0], old.seen[i][1]);
		free(old.seen);
	}
	for (i = (ino * 0x9e3779b97f4a7c15ULL ^ subvol) & (d->seen_room - 1); d->seen[i][0];
	     i = (i + 1) & (d->seen_room - 1))
		if (d->seen[i][0] == ino && d->seen[i][1] == subvol)
			return 1;
	d->seen[i][0] = ino;
	d->seen[i][1] = subvol;
	d->nseen++;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Bytes covered by the shared ranges, each counted once; empties the list. */
static uint64_t shared_union(struct du *d)
{
	uint64_t sum = 0, end = 0;

	sort_stable(d->shared, d->nshared, sizeof(*d->shared), cmp_range);
	for (size_t i = 0; i < d->nshared; i++) {
		uint64_t s = d->shared[i][0] > end ? d->shared[i][0] : end;

		if (d->shared[i][1] > s)
			sum += d->shared[i][1] - s;
		if (d->shared[i][1] > end)
			end = d->shared[i][1];
	}
	d->nshared = 0;
	return sum;
}

/* Total and shared bytes of a file's extents; inline, delayed and unknown ones do not
 * count. Shared ranges are recorded. 0 or -errno. */
static int file_space(struct du *d, int fd, uint64_t *total, uint64_t *shared)
{
	union {
		struct fiemap fm;
		char buf[16384];
	} u;
	struct fiemap_extent *e = u.fm.fm_extents;
	const unsigned max = (sizeof(u) - sizeof(u.fm)) / sizeof(*e);
	uint64_t *range;
	int last = 0;

	memset(&u.fm, 0, sizeof(u.fm));
	while (!last) {
		u.fm.fm_length = ~0ULL;
		u.fm.fm_extent_count = max;
		if (ioctl(fd, FS_IOC_FIEMAP, &u.fm) < 0)
			return -errno;
		if (!u.fm.fm_mapped_extents)
			break;
		for (unsigned i = 0; i < u.fm.fm_mapped_extents && i < max; i++) {
			last |= e[i].fe_flags & FIEMAP_EXTENT_LAST;
			if (e[i].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
					     FIEMAP_EXTENT_DATA_INLINE))
				continue;
			if (!e[i].fe_length) {
				msg_warn("extent %llu has length 0, skipping",
					 (unsigned long long)e[i].fe_physical);
				continue;
			}
			*total += e[i].fe_length;
			if (!(e[i].fe_flags & FIEMAP_EXTENT_SHARED))
				continue;
			*shared += e[i].fe_length;
			if (!(range = vec_push(&d->shared, &d->nshared, &d->room, sizeof(*d->shared))))
				return -ENOMEM;
			range[0] = e[i].fe_physical;
			range[1] = e[i].fe_physical + e[i].fe_length;
		}
		u.fm.fm_start = e[u.fm.fm_mapped_extents - 1].fe_logical +
				e[u.fm.fm_mapped_extents - 1].fe_length;
	}
	return 0;
}

/* One file or directory name (relative to the directory at), appended to d->path: its space, its
 * line when shown (every entry, or only the arguments with -s). 0 or -errno. */
static int du_entry(struct du *d, int at, const char *name, uint64_t *total, uint64_t *shared,
		    int top)
{
	size_t len = d->len;
	uint64_t tot = 0, shr = 0, subvol;
	struct stat st;
	int fd, ret = 0;
	DIR *dir = NULL;

	if (fstatat(at, name, &st, 0))
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;
	if (snprintf(d->path + len, sizeof(d->path) - len, "%s%s",
		     len && d->path[len - 1] != '/' ? "/" : "", name) >= (int)(sizeof(d->path) - len)) {
		d->path[len] = 0;
		msg_error("path too long: %s %s", d->path, name);
		return -ENAMETOOLONG;
	}
	d->len += strlen(d->path + len);
	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	/* an empty subvolume's directory (inode 2) has no tree to look in */
	if (st.st_ino != 2 &&
	    ((ret = subvol_id_of_fd(fd, &subvol)) || (ret = seen_before(d, st.st_ino, subvol)))) {
		close(fd);
		ret = ret > 0 ? 0 : ret;
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		ret = file_space(d, fd, &tot, &shr);
		close(fd);
	} else if (!(dir = fdopendir(fd))) {
		ret = -errno;
		close(fd);
	} else {
		struct dirent *de;

		while (!ret && (de = readdir(dir))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    (de->d_type != DT_REG && de->d_type != DT_DIR))
				continue;
			ret = du_entry(d, dirfd(dir), de->d_name, &tot, &shr, 0);
			if (ret == -ENOTTY || ret == -EACCES) {
				errno = -ret;
				msg_warn("cannot access '%s': %m\n", de->d_name);
				ret = 0;
			} else if (ret) {
				errno = -ret;
				msg_warn("cannot access '%s': %m\n", de->d_name);
			}
		}
		closedir(dir);
		d->path[d->len] = 0;
	}
	if (ret)
		goto out;
	if (!d->summarize || top)
		out_say("%10s  %10s  %10s  %s\n", pretty_size(tot, d->mode), pretty_size(tot - shr, d->mode),
			!top ? "-" : pretty_size(dir ? shared_union(d) : shr, d->mode), d->path);
	*total += tot;
	*shared += shr;
out:
	d->len = len;
	d->path[len] = 0;
	return ret;
}

USAGE(usage) =
	"usage: btrfs filesystem du [options] <path> [<path>..]\n\n"
	"    -s|--summarize  only a total for each argument\n" CLI_UNITS;

int fs_du_main(int argc, char **argv)
{
	static struct du d;
	uint64_t total, shared;
	int i, ret, err = 0;

	d.mode = units_parse_args(&argc, argv, 0);
	while (cli_getopt_long(argc, argv, "s", "summarize=s", usage) != -1)
		d.summarize = 1;
	cli_check_argc(argc, 1, -1, usage);
	out_say("%10s  %10s  %10s  %s\n", "Total", "Exclusive", "Set shared", "Filename");
	for (i = optind; i < argc; i++) {
		total = shared = 0;
		ret = du_entry(&d, AT_FDCWD, argv[i], &total, &shared, 1);
		if (ret) {
			errno = -ret;
			msg_error("cannot check space of '%s': %m", argv[i]);
			err = 1;
		}
		/* hard links and shared ranges are counted per argument */
		if (d.seen)
			memset(d.seen, 0, d.seen_room * sizeof(*d.seen));
		d.nseen = d.nshared = 0;
	}
	free(d.seen);
	free(d.shared);
	return err;
}
#endif
