/* Checksums used by btrfs metadata, data and send streams. */
#ifndef UTIL_CSUM_H
#define UTIL_CSUM_H
#include <stddef.h>
#include <stdint.h>

/* Values of btrfs_super_block.csum_type (on-disk). */
enum csum_type { CSUM_CRC32C = 0, CSUM_XXHASH = 1, CSUM_SHA256 = 2, CSUM_BLAKE2 = 3 };
#define CSUM_MAX_SIZE 32

/* crc32c as btrfs uses it: seed ~0, result inverted (so crc32c(~0, "", 0) == 0).
 * crc32c_raw() continues a running value without the final inversion. */
uint32_t crc32c(const void *buf, size_t len);
uint32_t crc32c_raw(uint32_t crc, const void *buf, size_t len);

/* CPU features the x86-64 fast paths use, detected at startup (none elsewhere). */
enum {
	CPU_CRC32 = 1,  /* SSE4.2 crc32 */
	CPU_CLMUL = 2,  /* pclmulqdq */
	CPU_SHA = 4,    /* SHA extensions with SSE4.1 */
};
/* Nonzero when all the features are present and allowed. */
int csum_cpu(unsigned features);
/* Allows only the features in mask (0: portable code everywhere); returns what the CPU
 * has. For tests and benchmarks, before any checksumming (not thread-safe). */
unsigned csum_cpu_limit(unsigned mask);

/* Returns 0, or -1 when the type is unknown or not built in this configuration. */
int csum_supported(int type);
/* Digest size in bytes: 4, 8, 32, 32; 0 for an unknown type. */
size_t csum_size(int type);
/* "crc32c", "xxhash64", "sha256", "blake2b" (as btrfs-progs prints them), NULL if unknown. */
const char *csum_name(int type);
/* Writes csum_size(type) bytes to out (out has CSUM_MAX_SIZE room; the rest is zeroed). */
int csum_compute(int type, const void *buf, size_t len, uint8_t out[CSUM_MAX_SIZE]);
/* Tree blocks and superblocks open with the checksum of the rest of them: the checksum
 * of buf[32..len) written over buf[0..32). */
void csum_stamp(int type, void *buf, size_t len);
/* Type for a --csum argument ("crc32c", "xxhash64"/"xxhash", "sha256", "blake2b"/"blake2",
 * any case), -1 if unknown. Says nothing about whether the type is built in. */
int csum_type_from_name(const char *name);

/* The individual algorithms (each built only with its CFG_CSUM_* option). */
uint64_t xxh64(const void *buf, size_t len, uint64_t seed);
void sha256(const void *buf, size_t len, uint8_t out[32]);
void blake2b_256(const void *buf, size_t len, uint8_t out[32]);

#endif
