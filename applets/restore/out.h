/* The output side of `btrfs restore`: everything it creates goes through here.
 * Names come from a possibly hostile image: each is one path component, checked,
 * and created relative to an open directory descriptor with O_NOFOLLOW, so nothing
 * lands outside OUTDIR and no symlink (restored or planted) is ever followed. */
#ifndef APPLETS_RESTORE_OUT_H
#define APPLETS_RESTORE_OUT_H
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

/* A growing "/a/b/c" path (as in the image) for messages, regex matching and -v. */
struct rpath {
	char *s;
	size_t len, cap;
};
/* Appends "/name"; returns the previous length for rpath_pop, or (size_t)-1 on ENOMEM. */
size_t rpath_push(struct rpath *p, const char *name, size_t len);
void rpath_pop(struct rpath *p, size_t old_len);

/* The file being written: what was written of it (a new file needs no ftruncate
 * when its data ends at its size) and whether writing it failed. */
struct rout_file {
	int fd;
	int failed;
	uint64_t end;
};

struct rout {
	const char *outdir;     /* as given, for messages */
	int dry_run, overwrite, verbose, ignore_errors;
	int warned_existing;
	int progress;           /* stderr is a terminal: keep a progress line */
	int progress_shown;
	struct timespec progress_at;
	uint64_t files, dirs, symlinks, bytes, skipped;
	struct rout_file file;  /* the last file rout_file created */
	int file_queued;        /* its operations go to the writer */
	struct rout_writer *writer;     /* see rout_writer_start */
	int late_errors;        /* failures of the writer stopped, not told yet */
};

/* NULL when name may be created, else why not ("contains '/'", ...). */
const char *rout_bad_name(const char *name, size_t len);

/* OUTDIR + path with control characters escaped (names are untrusted), for
 * messages; the result lives until the next call. */
const char *rout_shown(const struct rout *o, const char *path);

/* Each returns 0 on success, 1 when the entry was skipped (exists and no -o, or a
 * dry run), a negative errno after printing an error naming `path`.
 * In a dry run nothing is created and the returned descriptors are -1. */

/* Opens (creating when needed) directory name in parent. Never follows a symlink:
 * -ENOTDIR (reported) when something else stands there and -o is not given. */
int rout_dir(struct rout *o, int parent, const char *name, const char *path, int *fd);
/* Creates regular file name in parent for writing (truncated). */
int rout_file(struct rout *o, int parent, const char *name, const char *path, int *fd);
int rout_symlink(struct rout *o, int parent, const char *name, const char *target, const char *path);

/* pwrite all of buf at off; all-zero blocks are left as holes (the file is new or
 * truncated, so a hole reads as the zeros it stands for). */
int rout_write(struct rout *o, int fd, const void *buf, size_t len, uint64_t off, const char *path);
/* Sets the final size (extends with a hole). */
int rout_size(struct rout *o, int fd, uint64_t size, const char *path);

struct rout_meta {
	uint32_t uid, gid, mode;
	struct timespec atime, mtime;
};
/* Metadata of an open file or directory in two steps: the owner first, then (after
 * the xattrs: chown drops security.capability) mode and times. Symlinks by name
 * (owner and times; a symlink has no mode of its own). */
int rout_owner_fd(struct rout *o, int fd, const struct rout_meta *m, const char *path);
int rout_mode_times_fd(struct rout *o, int fd, const struct rout_meta *m, const char *path);
int rout_meta_link(struct rout *o, int parent, const char *name, const struct rout_meta *m,
		   const char *path);
int rout_xattr(struct rout *o, int fd, const char *name, const void *value, size_t len,
	       const char *path);

/* Writing behind: after rout_writer_start, what follows rout_file on its descriptor
 * (rout_write, rout_size, rout_owner_fd, rout_xattr, rout_mode_times_fd, rout_close)
 * is queued, in order, for a second thread, while the caller reads and decompresses
 * the next data. Errors of queued operations are reported by that thread and counted
 * (rout_late_errors); the calls themselves then return 0. Returns 0, or -errno (and
 * everything stays synchronous). */
int rout_writer_start(struct rout *o, uint32_t sectorsize);
/* Waits until everything queued is done and ends the thread. Returns how many
 * compressed extents it could not decompress (reported). */
int rout_writer_stop(struct rout *o);
/* Queues the decompression of zlen bytes z (compression type, ram_len bytes when
 * decompressed), read into a rout_buffer, and the writing of len of its bytes from
 * offset from on at file offset off. The writer reports an extent that does not
 * decompress. -1 (nothing done) when z is not in the buffer rout_buffer gave last. */
int rout_write_compressed(struct rout *o, int fd, int type, const void *z, size_t zlen,
			  size_t ram_len, size_t from, size_t len, uint64_t off);
/* Queued operations that failed since the last call. */
int rout_late_errors(struct rout *o);
/* Room for len bytes of file data: the next rout_write of this buffer queues it
 * without a copy. NULL without a writer or when len is too large for the queue. */
void *rout_buffer(struct rout *o, size_t len);
/* Closes fd (after its queued operations). */
void rout_close(struct rout *o, int fd);

/* Progress line on a terminal (rate limited) and its removal. */
void rout_progress(struct rout *o, const char *path);
void rout_progress_clear(struct rout *o);

#endif
