/* btrfs receive: one large file's data written on a second thread (see recv_bulk.c).
 * The receiver decides which file goes behind and when to wait; this part only runs
 * the queued writes, attribute changes and the close of that file, in order. */
#ifndef FS_RECV_BULK_H
#define FS_RECV_BULK_H
#include "config.h"
#include "sendstream.h"
#include <stdint.h>

struct recv_bulk;
#define RECV_BULK_REREAD (-1)   /* a failure to read a write's data again */

#if CFG_RECEIVE_THREAD
/* A worker that reads write data from in_fd, a regular file holding the stream from
 * byte in_base on (ss_cmd.data_pos counts from there). NULL when the machine has no use
 * for it (one CPU, BTRFSBOX_THREADS=1) or out of memory. */
struct recv_bulk *recv_bulk_start(int in_fd, uint64_t in_base);
/* Queue for the worker, in order: the write, chmod, chown or utimes command c on fd
 * (the data of a write is read again from the stream file), and fd's close. */
void recv_bulk_cmd(struct recv_bulk *b, int fd, const struct ss_cmd *c);
void recv_bulk_close(struct recv_bulk *b, int fd);
/* Whether everything queued is done (when not, the worker is started on what waits). */
int recv_bulk_idle(struct recv_bulk *b);
/* Waits until everything queued is done. */
void recv_bulk_wait(struct recv_bulk *b);
/* The first failure since the last call: 0, or -1 with the command type that failed
 * (or RECV_BULK_REREAD) in *what and the errno value in *err. */
int recv_bulk_failed(struct recv_bulk *b, int *what, int *err);
/* Waits for the queue, ends the worker, frees b (NULL: nothing). */
void recv_bulk_stop(struct recv_bulk *b);
#else
static inline struct recv_bulk *recv_bulk_start(int in_fd, uint64_t in_base)
{
	(void)in_fd;
	(void)in_base;
	return 0;
}
static inline void recv_bulk_cmd(struct recv_bulk *b, int fd, const struct ss_cmd *c)
{
	(void)b; (void)fd; (void)c;
}
static inline void recv_bulk_close(struct recv_bulk *b, int fd) { (void)b; (void)fd; }
static inline int recv_bulk_idle(struct recv_bulk *b) { (void)b; return 1; }
static inline void recv_bulk_wait(struct recv_bulk *b) { (void)b; }
static inline int recv_bulk_failed(struct recv_bulk *b, int *what, int *err)
{
	(void)b; (void)what; (void)err;
	return 0;
}
static inline void recv_bulk_stop(struct recv_bulk *b) { (void)b; }
#endif

#endif
