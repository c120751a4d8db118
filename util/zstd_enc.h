/* A compact zstd frame encoder (RFC 8878) for btrfs compressed extents. */
#ifndef FS_ZSTD_ENC_H
#define FS_ZSTD_ENC_H
#include <stddef.h>

/* The largest input: one btrfs compressed extent, one zstd block. */
#define ZSTD_ENC_MAX_INPUT (128 * 1024)

/* Compresses in (at most ZSTD_ENC_MAX_INPUT bytes) into one zstd frame with the content
 * size in its header, so the frame's window is the input (what the kernel's btrfs decoder
 * is sized for). level 1..15 picks the match finder's effort. *state holds the encoder
 * (1.25 MiB, made on first use; release it with free()). Returns 0 with *out_len
 * set, -E2BIG when the frame does not fit out_cap, -EINVAL for a larger input, -ENOMEM. */
int zstd_encode(void **state, int level, const void *in, size_t in_len, void *out, size_t out_cap,
		size_t *out_len);

#endif
