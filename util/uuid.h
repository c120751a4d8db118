/* 16-byte UUIDs as btrfs stores them (fsid, chunk tree, subvolume UUIDs). */
#ifndef UTIL_UUID_H
#define UTIL_UUID_H
#include <stdint.h>

#define UUID_SIZE 16
#define UUID_STR_LEN 37 /* 36 characters and the NUL */

/* Random (version 4, RFC 4122 variant) UUID from getrandom(); 0 or -errno. */
int uuid_generate(uint8_t uuid[UUID_SIZE]);
/* Lowercase "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
void uuid_unparse(const uint8_t uuid[UUID_SIZE], char out[UUID_STR_LEN]);
/* Exactly that form (hex digits in either case); 0, or -1 with uuid unchanged. */
int uuid_parse(const char *s, uint8_t uuid[UUID_SIZE]);
/* 1 when all 16 bytes are zero (btrfs uses that for "no UUID"). */
int uuid_is_null(const uint8_t uuid[UUID_SIZE]);

#endif
