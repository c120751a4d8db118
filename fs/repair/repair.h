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
	int rebuild_chunks;             /* the handle's chunk map came from repair_open_chunks:
					 * the chunk tree is made anew from it */
	uint64_t adopt_root;            /* nonzero: the handle's root tree is the backup root
					 * of this generation (repair_open_backup), committed
					 * as the filesystem's */
	int in_place;                   /* lost writes are mended where they are (no backup
					 * root is whole): no need_backup for them */
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
	int need_chunks;                /* chunks are missing or wrong: nothing was done, the
					 * repair needs a handle from repair_open_chunks */
	int need_backup;                /* a root tree leaf is lost: nothing was done, the
					 * repair needs a handle from repair_open_backup */
	int lost_writes;                /* (with need_backup) blocks hold older ones than
					 * their parents want, or blocks of the last
					 * transaction that the repair could not do without
					 * are lost: the backup root taken must have every
					 * tree whole */
	uint64_t names;                 /* (with lost_writes) the names in directories
					 * (count_names) the backup root taken must have
					 * at least: those that can be read now, one more
					 * than a repair in place keeps */
};

/* For a filesystem whose root tree cannot be read, or whose last transactions' writes
 * are lost: opens it (fs_wopen, opts as given) with the newest of the superblock's
 * backup roots whose root tree (all_trees: every tree) reads whole and whose
 * directories hold at least min_names names, the state of an earlier transaction that
 * copy-on-write left on the disk. NULL with err when none does; *generation gets the
 * generation of the root tree taken. */
struct fs *repair_open_backup(const char *const *paths, int n, const struct fs_wopen_opts *opts,
			      int all_trees, uint64_t min_names, uint64_t *generation, struct fs_error *err);

/* What the scan of repair_open_chunks found: chunks taken from their chunk items, made
 * from their block group and device extents, and block groups none could be made for
 * (the first of them at first_lost: its data is out of reach). */
struct repair_chunks {
	int from_items, made, lost;
	uint64_t first_lost;
};

/* For a filesystem whose chunk tree cannot be read or does not match its block groups
 * (the check's CHECK_FIX_CHUNKS): opens it (fs_wopen, opts as given) with the chunk map
 * recovered from a scan of every device: the system chunks from the superblock, every
 * other one from the chunk items, block group items and device extents found. NULL with
 * err when a device is missing. repair_fs with rebuild_chunks then writes it. */
struct fs *repair_open_chunks(const char *const *paths, int n, const struct fs_wopen_opts *opts,
			      struct repair_chunks *found, struct fs_error *err);

/* fs comes from fs_wopen. 0 when the repair ran to its end (r says how), or a
 * negative errno when it could not (fs->err; nothing was written). */
int repair_fs(struct fs *fs, const struct repair_opts *o, struct repair_result *r);

#endif
