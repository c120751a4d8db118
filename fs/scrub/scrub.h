/* Offline scrub: verify every allocated tree block and data sector of an unmounted
 * filesystem on each of its copies, and rewrite a bad copy in place from a verified
 * good one. Engine conventions (fs/core/fs.h): never prints; errors are returned.
 *
 * The work is cut into parts: a stretch of one chunk stripe on one device (at most
 * FS_SCRUB_PART bytes of it). A part is scrubbed by reading its allocated ranges (the
 * extent tree says which) in windows of up to 1 MiB, checking tree block headers
 * (checksum, bytenr, fsid, level and generation from the extent item) and data
 * sectors against the csum tree. A bad copy is repaired from another copy that
 * verifies (DUP, RAID1*, RAID10) or from the rest of the RAID5/6 full stripe; the
 * rewrite only puts back verified bytes over bad ones, so it is idempotent and an
 * interrupted scrub leaves each sector either bad as before or good. RAID5/6 parity
 * is checked against the data of rows holding allocated data. Counters follow the
 * kernel's struct btrfs_scrub_progress: errors and repairs per sector. */
#ifndef FS_SCRUB_H
#define FS_SCRUB_H
#include "fs/core/fs.h"
#include <linux/btrfs.h>

#define FS_SCRUB_PART (64u << 20)

struct fs_scrub_part {
	uint64_t devid;
	uint64_t start, end;            /* physical range on the device */
	uint64_t logical;               /* chunk start */
};

/* The parts on device devid, sorted by physical address (*parts malloc'ed). */
int fs_scrub_parts(const struct fs *fs, uint64_t devid, struct fs_scrub_part **parts, size_t *n);

enum { FS_SCRUB_READ = 1, FS_SCRUB_CSUM, FS_SCRUB_VERIFY, FS_SCRUB_PARITY };

/* One run of bad sectors, as reported to fs_scrub.report. */
struct fs_scrub_error {
	uint64_t logical, physical, devid;
	uint32_t len;
	int kind;                       /* FS_SCRUB_* */
	int metadata;
	int corrected;                  /* a good copy was found (and written unless readonly) */
	int write_error;                /* negative errno of a failed rewrite, else 0 */
};

/* Per-thread state: a struct fs of its own (the block cache is not shared). */
struct fs_scrub {
	struct fs *fs;
	int readonly;
	const int *write_fd;            /* per fs->devs index: fds from fs_scrub_open_rw, or -1 */
	void (*report)(void *ctx, struct fs *fs, const struct fs_scrub_error *e);
	void *ctx;
	const volatile int *cancel;     /* nonzero: stop at the next window (-ECANCELED) */
	struct fs_scrub_buf *b;         /* buffers, made by fs_scrub_run */
};

/* Scrubs a part, adding to *p (last_physical: how far it got). 0, -ECANCELED, or a
 * negative errno when the extent or csum tree cannot be read (fs->err). */
int fs_scrub_run(struct fs_scrub *s, const struct fs_scrub_part *part, struct btrfs_scrub_progress *p);
void fs_scrub_free(struct fs_scrub *s);
/* Checks the superblock copies of device d that fit on it: super_errors. */
void fs_scrub_supers(struct fs *fs, const struct fs_device *d, struct btrfs_scrub_progress *p);

/* The write side of repairs, kept apart: opens path read-write (O_EXCL for a block
 * device, which fails while the kernel has it mounted); fd or -errno. */
int fs_scrub_open_rw(const char *path);
/* Puts len verified bytes at physical and flushes them to the device. */
int fs_scrub_rewrite(int fd, uint64_t physical, const void *buf, size_t len);

#endif
