/* The scrub status file shared with btrfs-progs (scrub.status.FSID), so that `scrub
 * status` and `scrub resume` work across invocations and tools. Format, version 1:
 *   "scrub status:1\n", then one line per device:
 *   FSID:DEVID|key:value|key:value...\n
 * with the counters of struct btrfs_scrub_progress by name (unverified_errors is not
 * kept) followed by t_start, t_resumed, duration, canceled, finished; decimal values.
 * Functions return 0 or -errno and never print. */
#ifndef UTIL_SCRUB_STATUS_H
#define UTIL_SCRUB_STATUS_H
#include <stddef.h>
#include <stdint.h>
#include <linux/btrfs.h>

#define SCRUB_STATUS_DIR "/var/lib/btrfs"
#define SCRUB_STATUS_DIR_FALLBACK "/run/btrfs"   /* when the root is read-only */
#define SCRUB_STATUS_DIR_ENV "BTRFS_SCRUB_STATE_DIR"

struct scrub_stats {
	uint64_t t_start, t_resumed, duration, finished, canceled;  /* seconds, flags */
	int in_progress;                                            /* not stored */
};

struct scrub_record {
	uint64_t devid;
	struct btrfs_scrub_progress p;
	struct scrub_stats s;
};

/* The counters of struct btrfs_scrub_progress kept in the file, in file order. */
#define SCRUB_PROGRESS_FIELDS(X) X(data_extents_scrubbed) X(tree_extents_scrubbed) \
	X(data_bytes_scrubbed) X(tree_bytes_scrubbed) X(read_errors) X(csum_errors) \
	X(verify_errors) X(no_csum) X(csum_discards) X(super_errors) X(malloc_errors) \
	X(uncorrectable_errors) X(corrected_errors) X(last_physical)

/* Directory for new status files: $BTRFS_SCRUB_STATE_DIR, else /var/lib/btrfs, else
 * /run/btrfs (created as needed); *fell_back is set when /run/btrfs had to be used.
 * NULL when none is writable. */
const char *scrub_status_dir(int *fell_back);
/* Reads the records of fsid (36-char text) from the file status and resume use:
 * in $BTRFS_SCRUB_STATE_DIR when set, else the newer of /var/lib/btrfs and /run/btrfs.
 * No file: 0 records. -EINVAL for a file of another format. */
int scrub_status_read(const char *fsid, struct scrub_record **out, size_t *count);
/* Parses a file's text (modified in place); lines of other filesystems and malformed
 * lines are skipped. */
int scrub_status_parse(char *text, const char *fsid, struct scrub_record **out, size_t *count);
/* Replaces the status file of fsid in dir (written to a temporary, then renamed). */
int scrub_status_write(const char *dir, const char *fsid, const struct scrub_record *v, size_t n);
/* Adds the counters of from to to (not last_physical, a position, nor
 * unverified_errors, which the status file does not keep). */
void scrub_progress_add(struct btrfs_scrub_progress *to, const struct btrfs_scrub_progress *from);
/* The record of devid in v, or NULL. */
struct scrub_record *scrub_status_find(struct scrub_record *v, size_t n, uint64_t devid);

#endif
