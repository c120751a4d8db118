/* Applying decoded send-stream commands to a mounted btrfs, confined to the subvolume
 * being received (see receive.c for the rules). Never prints: a failing call leaves a
 * one-line message in r->err and sets r->fatal when the receive must stop whatever the
 * error limit (a path escaping the subvolume, a symlink in the way, a broken stream). */
#ifndef FS_RECEIVE_H
#define FS_RECEIVE_H
#include "sendstream.h"
#include "fs/core/fs.h"
#include <limits.h>
#include <stdint.h>
#include <time.h>

/* One cached directory of the subvolume being received (see receive.c). */
#define RECV_DIR_KEY 116              /* longer directory paths are not cached */
#define RECV_DIR_WAYS 8
#define RECV_DIR_MAX_SETS 256
#define RECV_FD_WANTED (4 * RECV_DIR_MAX_SETS * RECV_DIR_WAYS)
struct recv_dir {
	int fd;                       /* O_PATH, -1: free */
	uint32_t used;                /* clock of the last use */
	int times_held;               /* a utimes of the directory not done yet: times */
	struct timespec times[2];
	char path[RECV_DIR_KEY];
};

/* A directory beneath which parent and clone-source subvolumes are accepted. */
#define RECV_MAX_SEARCH 16
struct recv_search {
	int fd;                       /* borrowed from the caller */
	char *path;                   /* from the top level of the filesystem ("" for it) */
};

struct receiver {
	int dest_fd;                  /* directory the subvolumes are created in */
	int mnt_fd;                   /* root of the destination mount (UUID lookups) */
	struct recv_search search[RECV_MAX_SEARCH];   /* the destination first */
	int nsearch;
	int subvol_fd;                /* subvolume being received, -1 between subvolumes */
	char subvol_name[256];
	uint8_t received_uuid[16];
	uint64_t stransid;
	int write_fd;                 /* cached for consecutive writes to one file */
	char write_path[PATH_MAX];
	struct recv_bulk *bulk;       /* the second writer; NULL: none */
	int bulk_fd;                  /* the file it writes, -1: none */
	char bulk_path[PATH_MAX];
	char late_err[PATH_MAX + 128];  /* a failure behind the commands (the second writer's,
					   a held utimes'), not reported yet ("": none) */
	int late_fatal;
	struct recv_dir *dirs;        /* dir_sets sets of RECV_DIR_WAYS; NULL: no cache */
	unsigned dir_sets;
	uint32_t dir_clock;
	int force_decompress;
	struct fs_inflater inflater;  /* for encoded writes decompressed here */
	int fatal;
	char err[PATH_MAX + 256];
	struct ss_cmd held;           /* a creating command held back (recv_settle) */
	char held_path[PATH_MAX], held_link[PATH_MAX];
	int holding, renamed;
};

/* dest_fd and mnt_fd stay owned by the caller; they must be on the same filesystem.
 * Parents and clone sources are accepted beneath dest_fd only, and beneath the
 * directories added with recv_add_search (fd kept open by the caller until release).
 * The directory cache takes up to a quarter of the descriptors RLIMIT_NOFILE allows;
 * a full one (RECV_DIR_MAX_SETS * RECV_DIR_WAYS) wants a limit of RECV_FD_WANTED. */
int recv_init(struct receiver *r, int dest_fd, int mnt_fd);
int recv_add_search(struct receiver *r, int fd);
/* The stream comes from fd, a regular file, from byte base on: large files may then be
 * written by a second thread (recv_bulk.h), which reads their data from fd again. */
void recv_input_file(struct receiver *r, int fd, uint64_t base);
/* One command (not END). 0 or -1 with r->err (and r->fatal) set. Call recv_settle
 * first. */
int recv_apply(struct receiver *r, const struct ss_cmd *c);
/* A creating command (mkfile, mkdir, mknod, mkfifo, mksock, symlink) is held back by
 * recv_apply until the next command: when that renames the new entry, it is created
 * at the new name directly and the rename is done (a send stream names each new inode
 * o<ino>-<gen>-<seq> first and renames it right after: one rename less per entry).
 * recv_settle(next) carries the held command out unless next takes it over; next NULL
 * at the end of a stream. 0 or -1 with r->err set (an error of the held command). */
int recv_settle(struct receiver *r, const struct ss_cmd *next);
/* A failure of the second writer (recv_input_file) not reported yet: -1 with r->err
 * set, else 0. Call after each command: the second writer runs behind the commands. */
int recv_failed_behind(struct receiver *r);
/* Marks the current subvolume received (received UUID, stransid) and read-only. */
int recv_finish_subvol(struct receiver *r);
void recv_release(struct receiver *r);
/* Opens directory rel (relative, no "." or ".." components) beneath root as an O_PATH
 * descriptor without following any symlink: openat2 with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, or a component walk with O_NOFOLLOW when walk is set or the kernel
 * lacks openat2. -1 with errno (ELOOP for a symlink in the way). */
int recv_open_beneath(int root, const char *rel, int walk);

#endif
