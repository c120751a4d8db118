/* btrfs check --repair: the check runs, what it found and knows how to fix is changed
 * in one transaction of the write engine (fs/write), the check runs again on the
 * changed filesystem (before anything is written), and the transaction is committed
 * only when that check finds no error the first one did not. So a power cut or a
 * refusal leaves the filesystem as it was; a commit leaves it with fewer errors.
 * Never prints: callbacks say what happens. */
#ifndef FS_REPAIR_H
#define FS_REPAIR_H
#include "fs/check/check.h"
#include "fs/write/write.h"

struct repair_opts {
	/* the first check: its settings, and its callbacks (what the check prints) */
	struct check_opts check;
	int init_csum_tree;             /* checksums made anew from the data */
	int init_extent_tree;           /* the extent tree made anew from every tree */
	uint64_t adopt_root;            /* nonzero: the handle's root tree is the backup root
					 * of this generation (repair_open_backup), committed
					 * as the filesystem's */
	/* a change, one line ("reset nbytes for ino 257 root 5"), said once it is written
	 * (the callbacks get check.ctx) */
	void (*fixed)(void *ctx, const char *what);
	/* each problem the last check still finds (when refused: each it would find new) */
	void (*left)(void *ctx, const struct check_problem *p);
};

struct repair_result {
	struct check_stats first, last; /* of the first and of the last check */
	uint64_t changes;               /* fixes made (when written) */
	int written;                    /* a commit wrote them */
	int refused;                    /* the changes would leave new errors: nothing written */
	int nothing;                    /* none of the errors is one it can repair */
};

/* For a filesystem whose root tree cannot be read: opens it (fs_wopen, opts as given)
 * with the newest of the superblock's backup roots whose root tree reads whole, the
 * state of an earlier transaction that copy-on-write left on the disk. NULL with err
 * when none does; *generation gets the generation of the root tree taken. */
struct fs *repair_open_backup(const char *const *paths, int n, const struct fs_wopen_opts *opts,
			      uint64_t *generation, struct fs_error *err);

/* fs comes from fs_wopen. 0 when the repair ran to its end (r says how), or a
 * negative errno when it could not (fs->err; nothing was written). */
int repair_fs(struct fs *fs, const struct repair_opts *o, struct repair_result *r);

#endif
