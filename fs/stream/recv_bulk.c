/* The second writer of btrfs receive. Writing a large file into the page cache keeps one
 * CPU busy (the kernel copies every byte into fresh pages), while the other waits: the
 * stream brings the files one after another. So when the stream is a regular file, the
 * receiver hands a large file over to this worker and goes on with the next file while
 * the worker writes it: the worker reads each write's data again from the stream file
 * (the receiver has checked the command, its crc included, and keeps no copy), so only
 * small records wait in the queue. */
#include "config.h"
#if CFG_RECEIVE_THREAD
//config:config RECEIVE_THREAD
//config:	bool "btrfs receive on two cores"
//config:	default y
//config:	depends on APPLET_RECEIVE
//config:	help
//config:	  When the stream is read from a file, btrfs receive writes the data
//config:	  of a large file on a second thread while it goes on with the next
//config:	  file (1 MiB of queue, plus one write's data). BTRFSBOX_THREADS=1
//config:	  keeps it to one thread.
#include "recv_bulk.h"
#include "util/pio.h"
#include "util/workq.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BULK_QUEUE (1u << 20)   /* about 25000 records: a 1 GiB file's writes ahead */

enum { BULK_CLOSE = 0 };        /* other records carry a command type (SS_C_*) */

struct bulk_rec {
	uint32_t type, len;             /* len: bytes of a write */
	int32_t fd;
	uint32_t mode;
	uint64_t pos, off;              /* write: data at pos in the stream, file offset */
	uint64_t uid, gid;
	struct timespec times[2];       /* utimes: atime, mtime */
};

struct recv_bulk {
	struct workq q;
	int in_fd;
	uint64_t in_base;
	uint8_t *buf;                   /* the worker's: data of one write */
	size_t buf_cap;
	int failed;                     /* what and err: a failure not taken yet (atomic) */
	int what, err;
};

static void bulk_fail(struct recv_bulk *b, int what, int e)
{
	if (__atomic_load_n(&b->failed, __ATOMIC_ACQUIRE))
		return;
	b->what = what;
	b->err = e;
	__atomic_store_n(&b->failed, 1, __ATOMIC_RELEASE);
}

/* Makes room for len bytes of data in b->buf; 0 or ENOMEM. */
static int data_room(struct recv_bulk *b, uint32_t len)
{
	uint8_t *p;

	if (len <= b->buf_cap)
		return 0;
	p = realloc(b->buf, len);
	if (!p)
		return ENOMEM;
	b->buf = p;
	b->buf_cap = len;
	return 0;
}

static void run_write(struct recv_bulk *b, const struct bulk_rec *k)
{
	int e = data_room(b, k->len);

	if (!e)
		e = -pio_all(b->in_fd, b->buf, k->len, (off_t)(b->in_base + k->pos), 0);
	if (e) {
		bulk_fail(b, RECV_BULK_REREAD, e);
		return;
	}
	e = -pio_all(k->fd, b->buf, k->len, (off_t)k->off, 1);
	if (e)
		bulk_fail(b, SS_C_WRITE, e);
}

static void bulk_run(void *ctx, void *rec)
{
	struct recv_bulk *b = ctx;
	const struct bulk_rec *k = rec;
	int ret = 0;

	switch (k->type) {
	case BULK_CLOSE:
		close(k->fd);
		return;
	case SS_C_WRITE:
		run_write(b, k);
		return;
	case SS_C_CHMOD:
		ret = fchmod(k->fd, (mode_t)k->mode);
		break;
	case SS_C_CHOWN:
		ret = fchown(k->fd, (uid_t)k->uid, (gid_t)k->gid);
		break;
	case SS_C_UTIMES:
		ret = futimens(k->fd, k->times);
		break;
	}
	if (ret < 0)
		bulk_fail(b, (int)k->type, errno);
}

struct recv_bulk *recv_bulk_start(int in_fd, uint64_t in_base)
{
	struct recv_bulk *b;

	if (!workq_worthwhile())
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->in_fd = in_fd;
	b->in_base = in_base;
	if (workq_start(&b->q, BULK_QUEUE, bulk_run, b)) {
		free(b);
		return NULL;
	}
	return b;
}

static void queue(struct recv_bulk *b, const struct bulk_rec *k)
{
	*(struct bulk_rec *)workq_reserve(&b->q, sizeof(*k)) = *k;
	workq_commit(&b->q, sizeof(*k));
}

void recv_bulk_cmd(struct recv_bulk *b, int fd, const struct ss_cmd *c)
{
	struct bulk_rec k = {
		.type = c->type, .len = c->data_len, .fd = fd, .mode = (uint32_t)(c->mode & 07777),
		.pos = c->data_pos, .off = c->file_offset, .uid = c->uid, .gid = c->gid,
		.times = { { (time_t)c->atime.sec, (long)c->atime.nsec },
			   { (time_t)c->mtime.sec, (long)c->mtime.nsec } },
	};

	queue(b, &k);
}

void recv_bulk_close(struct recv_bulk *b, int fd)
{
	struct bulk_rec k = { .type = BULK_CLOSE, .fd = fd };

	queue(b, &k);
}

int recv_bulk_idle(struct recv_bulk *b)
{
	if (!workq_backlog(&b->q))
		return 1;
	/* the tail of a file is often less than a batch: left there, it would keep the
	 * worker asleep and busy for good */
	workq_kick(&b->q);
	return 0;
}

void recv_bulk_wait(struct recv_bulk *b)
{
	workq_drain(&b->q);
}

int recv_bulk_failed(struct recv_bulk *b, int *what, int *err)
{
	if (!__atomic_load_n(&b->failed, __ATOMIC_ACQUIRE))
		return 0;
	*what = b->what;
	*err = b->err;
	__atomic_store_n(&b->failed, 0, __ATOMIC_RELEASE);
	return -1;
}

void recv_bulk_stop(struct recv_bulk *b)
{
	if (!b)
		return;
	workq_stop(&b->q);
	free(b->buf);
	free(b);
}
#endif
