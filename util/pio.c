#include "pio.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pio_tmpfile(const char *dir, const char *tag)
{
	size_t n = strlen(dir) + strlen(tag) + 32;
	char *path = malloc(n);
	int fd, e;

	if (!path)
		return -ENOMEM;
	snprintf(path, n, "%s/btrfsbox-%s.XXXXXX", dir, tag);
	fd = mkstemp(path);
	e = errno;
	if (fd >= 0)
		unlink(path);
	free(path);
	return fd < 0 ? -e : fd;
}

int pio_all(int fd, void *buf, size_t len, off_t off, int do_write)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = do_write ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}
