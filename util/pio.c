/* Whole-range positioned I/O, scratch files, and the write log of the tests. */
//config:config WRITE_LOG
//config:	bool "Write log for the power-cut tests (BTRFSBOX_WRITE_LOG)"
//config:	default y
//config:	help
//config:	  With BTRFSBOX_WRITE_LOG=FILE set, every write to a filesystem's
//config:	  devices and every flush is recorded in FILE: tests/crash.py builds
//config:	  from it the images a power cut would leave. Costs under 1 KB.
#include "config.h"
#include "pio.h"
#include <errno.h>
#include <fcntl.h>
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

/* The write log of tests (see pio.h): opened on first use, -1 when not asked for. */
static int write_log = -2;

static void log_record(int fd, char kind, const void *buf, size_t len, off_t off)
{
	char link[40], path[4096], head[4200];
	ssize_t n;
	int hl;

	if (!CFG_WRITE_LOG)
		return;
	if (write_log == -2) {
		const char *name = getenv("BTRFSBOX_WRITE_LOG");
		write_log = name ? open(name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
	}
	if (write_log < 0)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n < 0 ? 0 : n] = 0;
	hl = kind == 'W' ? snprintf(head, sizeof(head), "W %s %lld %zu\n", path, (long long)off, len)
			 : snprintf(head, sizeof(head), "F %s\n", path);
	if (write(write_log, head, (size_t)hl) != hl || (len && write(write_log, buf, len) != (ssize_t)len))
		write_log = -1;
}

int pio_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int pio_dev_write(int fd, const void *buf, size_t len, off_t off)
{
	int ret = pio_all(fd, (void *)buf, len, off, 1);

	if (!ret)
		log_record(fd, 'W', buf, len, off);
	return ret;
}

int pio_dev_sync(int fd)
{
	if (fsync(fd))
		return -errno;
	log_record(fd, 'F', NULL, 0, 0);
	return 0;
}
