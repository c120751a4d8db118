//build:Oz
/* Spools of mkfs: records written once in order, read back as often as needed
 * (see fs/mkfs/internal.h). Plain pread/pwrite through one buffer, no stdio: the C
 * library's stream buffers are small (1 KiB with musl), a syscall every few items. */
#include "internal.h"
#include "util/pio.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int spool_init(struct spool *s, const char *tmpdir, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->tmpdir = tmpdir ? tmpdir : "/tmp";
	s->cap = cap;
	s->buf = malloc(cap);
	return s->buf ? 0 : -ENOMEM;
}

void spool_free(struct spool *s)
{
	free(s->buf);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* Writes the buffer to the file (made on the first spill). */
static int spill(struct spool *s)
{
	int ret;

	if (s->fd < 0) {
		if ((ret = pio_tmpfile(s->tmpdir, "mkfs")) < 0)
			return ret;
		s->fd = ret;
	}
	ret = pio_all(s->fd, s->buf, s->len, s->end, 1);
	if (ret)
		return ret;
	s->end += (off_t)s->len;
	s->len = 0;
	return 0;
}

int spool_write(struct spool *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (s->reading)
		return -EINVAL;
	while (len) {
		size_t n = s->cap - s->len < len ? s->cap - s->len : len;
		int ret;

		memcpy(s->buf + s->len, p, n);
		s->len += n;
		p += n;
		len -= n;
		if (s->len == s->cap && (ret = spill(s)))
			return ret;
	}
	return 0;
}

int spool_rewind(struct spool *s)
{
	int ret;

	if (!s->reading) {
		s->reading = 1;
		if (s->fd < 0) {        /* everything is in the buffer */
			s->end = (off_t)s->len;
		} else if ((ret = spill(s))) {
			return ret;
		}
	}
	s->pos = 0;
	if (s->fd >= 0) {
		s->len = 0;
		s->next = 0;
	}
	return 0;
}

int spool_read(struct spool *s, size_t len, const void **out)
{
	size_t have = s->len - s->pos, want;
	int ret;

	if (!s->reading || len > s->cap)
		return -EINVAL;
	if (have < len && s->fd >= 0 && s->next < s->end) {
		memmove(s->buf, s->buf + s->pos, have);
		s->pos = 0;
		want = s->cap - have;
		if ((off_t)want > s->end - s->next)
			want = (size_t)(s->end - s->next);
		ret = pio_all(s->fd, s->buf + have, want, s->next, 0);
		if (ret)
			return ret;
		s->next += (off_t)want;
		s->len = have + want;
		have = s->len;
	}
	if (!have && len)
		return 0;
	if (have < len)
		return -EIO;            /* our own file, cut short underneath us */
	*out = s->buf + s->pos;
	s->pos += len;
	return 1;
}
