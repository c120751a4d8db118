/* A second thread working behind the first: the first appends records (any bytes) to a
 * ring, the worker hands each to a function, in order. One producer, one worker; the
 * two wait for each other on a futex (no pthread mutex or condition: they would cost
 * 4 KB of a static binary), and the worker is woken in batches (a wakeup is a system
 * call on each side). */
#ifndef UTIL_WORKQ_H
#define UTIL_WORKQ_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct workq {
	uint8_t *ring;
	size_t cap;                     /* bytes; a record holds at most cap / 4 */
	size_t head, tail;              /* bytes appended and bytes done (atomic) */
	int seq, sleepers, stop;        /* the futex word, its waiters, the end (atomic) */
	size_t gap, woken_at;           /* the producer's own: padding of the reserved
	                                 * record, head at the last wakeup */
	unsigned unwoken;               /* records since then */
	void (*run)(void *ctx, void *rec);
	void *ctx;
	pthread_t thread;
};

/* Starts the worker: run(ctx, rec) for each record, in the worker thread. 0 or
 * -errno (q then unusable). */
int workq_start(struct workq *q, size_t cap, void (*run)(void *ctx, void *rec), void *ctx);
/* Room for a record of len bytes (len <= cap / 4), 8-byte aligned; waits for the
 * worker when the ring is full. The record goes to the worker at workq_commit. */
void *workq_reserve(struct workq *q, size_t len);
/* Hands the reserved record over, len (1 to what was reserved) bytes of it. */
void workq_commit(struct workq *q, size_t len);
/* Bytes handed over and not done yet. */
size_t workq_backlog(struct workq *q);
/* Starts the worker on the records handed over so far, less than a batch (workq_commit
 * wakes it only for a batch). */
void workq_kick(struct workq *q);
/* Waits until every record handed over is done. */
void workq_drain(struct workq *q);
/* Waits until every record is done and ends the worker. */
void workq_stop(struct workq *q);
/* Whether a second thread can help: this process may run on more than one CPU and
 * BTRFSBOX_THREADS=1 (one thread: output and timing as without one) is not set. */
int workq_worthwhile(void);

#endif
