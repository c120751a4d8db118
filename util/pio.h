/* Whole-range positioned I/O, and scratch files for spilling to disk. */
#ifndef UTIL_PIO_H
#define UTIL_PIO_H
#include <stddef.h>
#include <sys/types.h>

/* A new file in dir named btrfsbox-TAG.XXXXXX, already unlinked (gone when closed,
 * even after a crash). Returns the descriptor or -errno. */
int pio_tmpfile(const char *dir, const char *tag);

/* The whole of len bytes at off, written (do_write) or read; -errno, or -EIO when short. */
int pio_all(int fd, void *buf, size_t len, off_t off, int do_write);

/* All of len bytes written at fd's position (a pipe, a stream file), retried after
 * short writes and EINTR; 0 or -errno. */
int pio_write(int fd, const void *buf, size_t len);

/* Every write to a filesystem's devices and every flush of them goes through these two
 * (mkfs and the write engine), so that a test can record them: with BTRFSBOX_WRITE_LOG
 * set to a file name, each write is appended to it as "W PATH OFFSET LENGTH\n" and the
 * bytes, each flush as "F PATH\n" (PATH: what /proc/self/fd names; tests/crash.py
 * replays the log to build the images a power cut would leave). */
int pio_dev_write(int fd, const void *buf, size_t len, off_t off);
int pio_dev_sync(int fd);

#endif
