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

#endif
