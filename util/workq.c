/* Records in the ring: an 8-byte length, then the record, padded to 8 bytes. A record
 * never wraps: where it would not fit before the end, a length of 0 (or no room for a
 * length) sends the reader back to the start. */
#include "workq.h"
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HDR 8
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)
#define LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

/* After progress: bumps the futex word, and wakes the other thread if it sleeps. */
static void wake(struct workq *q)
{
	__atomic_add_fetch(&q->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->sleepers, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &q->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps unless the futex word moved since seen was read (then the condition the
 * caller checked after reading it may have changed: no wakeup is lost). */
static void sleep_on(struct workq *q, int seen)
{
	__atomic_add_fetch(&q->sleepers, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &q->seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
	__atomic_sub_fetch(&q->sleepers, 1, __ATOMIC_SEQ_CST);
}

static int seq_now(struct workq *q)
{
	return __atomic_load_n(&q->seq, __ATOMIC_SEQ_CST);
}

/* Runs the records in [q->tail, head); tells the producer every eighth of the ring. */
static void run_records(struct workq *q, size_t head)
{
	size_t t = q->tail, told = t;

	while (t != head) {
		size_t pos = t % q->cap;
		uint64_t len = q->cap - pos < HDR ? 0 : *(uint64_t *)(q->ring + pos);

		if (!len) {
			t += q->cap - pos;
		} else {
			q->run(q->ctx, q->ring + pos + HDR);
			t += HDR + ALIGN8(len);
		}
		if (t - told >= q->cap / 8 || t == head) {
			STORE(&q->tail, t);
			wake(q);
			told = t;
		}
	}
}

static void *worker(void *arg)
{
	struct workq *q = arg;

	for (;;) {
		int seen = seq_now(q);
		size_t head = LOAD(&q->head);

		if (head != q->tail)
			run_records(q, head);
		else if (LOAD(&q->stop))
			return NULL;
		else
			sleep_on(q, seen);
	}
}

int workq_start(struct workq *q, size_t cap, void (*run)(void *ctx, void *rec), void *ctx)
{
	*q = (struct workq){ .cap = cap, .run = run, .ctx = ctx };
	q->ring = malloc(cap);
	if (!q->ring)
		return -ENOMEM;
	int ret = pthread_create(&q->thread, NULL, worker, q);
	if (ret) {
		free(q->ring);
		q->ring = NULL;
	}
	return -ret;
}

void *workq_reserve(struct workq *q, size_t len)
{
	size_t need = HDR + ALIGN8(len);

	for (;;) {
		int seen = seq_now(q);
		size_t pos = q->head % q->cap;

		q->gap = q->cap - pos < need ? q->cap - pos : 0;
		if (q->cap - (q->head - LOAD(&q->tail)) >= q->gap + need)
			break;
		wake(q);        /* the worker may be waiting for a batch */
		if (seq_now(q) == seen + 1)
			sleep_on(q, seen + 1);
	}
	if (q->gap >= HDR)
		*(uint64_t *)(q->ring + q->head % q->cap) = 0;
	return q->ring + (q->head + q->gap) % q->cap + HDR;
}

void workq_commit(struct workq *q, size_t len)
{
	uint8_t *rec = q->ring + (q->head + q->gap) % q->cap;

	*(uint64_t *)rec = len;
	STORE(&q->head, q->head + q->gap + HDR + ALIGN8(len));
	/* the worker starts when a batch is there: an eighth of the ring or 64 records */
	if (q->head - q->woken_at >= q->cap / 8 || ++q->unwoken >= 64) {
		q->woken_at = q->head;
		q->unwoken = 0;
		wake(q);
	}
}

void workq_kick(struct workq *q)
{
	if (q->head == q->woken_at)
		return;
	q->woken_at = q->head;
	q->unwoken = 0;
	wake(q);
}

void workq_drain(struct workq *q)
{
	for (;;) {
		int seen = seq_now(q);

		if (q->head == LOAD(&q->tail))
			return;
		wake(q);
		if (seq_now(q) == seen + 1)
			sleep_on(q, seen + 1);
	}
}

size_t workq_backlog(struct workq *q)
{
	return q->head - LOAD(&q->tail);
}

void workq_stop(struct workq *q)
{
	if (!q->ring)
		return;
	STORE(&q->stop, 1);
	wake(q);
	pthread_join(q->thread, NULL);
	free(q->ring);
	q->ring = NULL;
}

/* CPUs counted as musl's sysconf(_SC_NPROCESSORS_ONLN) does (sysconf would link 1 KB) */
int workq_worthwhile(void)
{
	const char *t = getenv("BTRFSBOX_THREADS");
	cpu_set_t cpus;

	return !(t && !strcmp(t, "1")) && !sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_COUNT(&cpus) > 1;
}
