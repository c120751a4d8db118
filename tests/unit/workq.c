/* The work queue: every record arrives once, in order, intact, across the ring's end,
 * with the worker slower and faster than the producer; stop runs what is left; a kick
 * starts the worker on less than a batch. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "unit.h"
#include "util/workq.h"

struct seen {
	uint32_t next;          /* sequence number expected */
	int bad;
	int slow;               /* the worker naps now and then */
};

/* A record: its sequence number, its length, then bytes derived from both. */
static uint8_t byte_at(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 31 + i * 7);
}

static void check_rec(void *ctx, void *rec)
{
	struct seen *s = ctx;
	uint32_t seq, len;

	memcpy(&seq, rec, 4);
	memcpy(&len, (uint8_t *)rec + 4, 4);
	if (seq != s->next++)
		s->bad++;
	for (size_t i = 8; i < len; i++)
		if (((uint8_t *)rec)[i] != byte_at(seq, i)) {
			s->bad++;
			break;
		}
	if (s->slow && seq % 97 == 0)
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
}

static void run(int slow, uint32_t n, size_t cap)
{
	struct workq q;
	struct seen s = { 0, 0, slow };

	srand(99);
	CHECK(workq_start(&q, cap, check_rec, &s) == 0);
	for (uint32_t seq = 0; seq < n; seq++) {
		/* mostly small, some up to the largest record (a quarter of the ring) */
		uint32_t len = seq % 50 ? 8 + (uint32_t)rand() % 300 : (uint32_t)(cap / 4);
		uint8_t *rec = workq_reserve(&q, len);
		CHECK(((uintptr_t)rec & 7) == 0);
		memcpy(rec, &seq, 4);
		memcpy(rec + 4, &len, 4);
		for (size_t i = 8; i < len; i++)
			rec[i] = byte_at(seq, i);
		workq_commit(&q, len);
		CHECK(workq_backlog(&q) <= cap);
	}
	workq_stop(&q);
	CHECK(s.next == n);
	CHECK(s.bad == 0);
}

TEST(workq_order_and_content)
{
	run(0, 20000, 64 << 10);
}

TEST(workq_slow_worker)
{
	run(1, 5000, 16 << 10);
}

TEST(workq_stop_without_records)
{
	struct workq q;
	struct seen s = { 0, 0, 0 };

	CHECK(workq_start(&q, 4096, check_rec, &s) == 0);
	workq_stop(&q);
	CHECK(s.next == 0);
}

/* Commits records seq .. seq+n-1 of 8 bytes. */
static void commit_small(struct workq *q, uint32_t seq, uint32_t n)
{
	for (uint32_t len = 8; n--; seq++) {
		uint8_t *rec = workq_reserve(q, len);

		memcpy(rec, &seq, 4);
		memcpy(rec + 4, &len, 4);
		workq_commit(q, len);
	}
}

/* Polls the backlog for up to 5 s: 1 when it went to 0. */
static int backlog_gone(struct workq *q)
{
	for (int polls = 0; workq_backlog(q) && polls < 5000; polls++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	return workq_backlog(q) == 0;
}

/* A few records, less than a batch, while the worker sleeps: it runs them after a kick,
 * without a drain or a stop (the producer only polls the backlog). */
TEST(workq_kick_runs_a_short_batch)
{
	struct workq q;
	struct seen s = { 0, 0, 0 };

	CHECK(workq_start(&q, 64 << 10, check_rec, &s) == 0);
	commit_small(&q, 0, 64);                        /* a batch: the worker is woken */
	CHECK(backlog_gone(&q));
	nanosleep(&(struct timespec){ 0, 20000000 }, NULL);     /* it goes back to sleep */
	commit_small(&q, 64, 5);
	workq_kick(&q);
	CHECK(backlog_gone(&q));
	CHECK(s.next == 69);
	workq_stop(&q);
	CHECK(s.bad == 0);
}
