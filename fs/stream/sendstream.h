/* The btrfs send stream (versions 1, 2 and 3): encoder and decoder.
 *
 * Stream layout (all integers little-endian):
 *   header   "btrfs-stream\0" (13 bytes) + le32 version
 *   command  le32 len (payload bytes after this 10-byte header), le16 cmd,
 *            le32 crc32c (Castagnoli, seed 0, no final inversion) over the header with
 *            the crc field zeroed followed by the payload; then `len` bytes of TLVs
 *   TLV      le16 type, le16 len, value. From version 2 on, the DATA attribute has no
 *            length field: it is the last one and runs to the end of the command.
 * A stream ends with an END command; several streams may follow each other, or one
 * stream may carry several subvolumes (each starting with SUBVOL or SNAPSHOT).
 * Nothing here prints or exits: errors are returned with a message that names the byte
 * offset in the stream. */
#ifndef FS_SENDSTREAM_H
#define FS_SENDSTREAM_H
#include <stddef.h>
#include <stdint.h>

#define SS_MAGIC "btrfs-stream"          /* followed by its NUL: 13 bytes */
#define SS_HEADER_SIZE 17
#define SS_CMD_HEADER_SIZE 10
#define SS_MAX_VERSION 3
/* Largest command accepted. The kernel emits at most 64 KiB (v1) or 16 KiB plus 128 KiB of
 * compressed data (v2+); anything far beyond is hostile and refused before allocating. */
#define SS_MAX_CMD_LEN (16u << 20)
#define SS_UUID_SIZE 16

enum ss_cmd_type {
	SS_C_SUBVOL = 1, SS_C_SNAPSHOT, SS_C_MKFILE, SS_C_MKDIR, SS_C_MKNOD, SS_C_MKFIFO,
	SS_C_MKSOCK, SS_C_SYMLINK, SS_C_RENAME, SS_C_LINK, SS_C_UNLINK, SS_C_RMDIR,
	SS_C_SET_XATTR, SS_C_REMOVE_XATTR, SS_C_WRITE, SS_C_CLONE, SS_C_TRUNCATE, SS_C_CHMOD,
	SS_C_CHOWN, SS_C_UTIMES, SS_C_END, SS_C_UPDATE_EXTENT,          /* v1: 1..22 */
	SS_C_FALLOCATE, SS_C_FILEATTR, SS_C_ENCODED_WRITE,               /* v2: 23..25 */
	SS_C_ENABLE_VERITY,                                              /* v3: 26 */
	SS_C_MAX = SS_C_ENABLE_VERITY
};

enum ss_attr_type {
	SS_A_UUID = 1, SS_A_CTRANSID, SS_A_INO, SS_A_SIZE, SS_A_MODE, SS_A_UID, SS_A_GID,
	SS_A_RDEV, SS_A_CTIME, SS_A_MTIME, SS_A_ATIME, SS_A_OTIME, SS_A_XATTR_NAME,
	SS_A_XATTR_DATA, SS_A_PATH, SS_A_PATH_TO, SS_A_PATH_LINK, SS_A_FILE_OFFSET, SS_A_DATA,
	SS_A_CLONE_UUID, SS_A_CLONE_CTRANSID, SS_A_CLONE_PATH, SS_A_CLONE_OFFSET,
	SS_A_CLONE_LEN,                                                  /* v1: 1..24 */
	SS_A_FALLOCATE_MODE, SS_A_FILEATTR, SS_A_UNENCODED_FILE_LEN, SS_A_UNENCODED_LEN,
	SS_A_UNENCODED_OFFSET, SS_A_COMPRESSION, SS_A_ENCRYPTION,        /* v2: 25..31 */
	SS_A_VERITY_ALGORITHM, SS_A_VERITY_BLOCK_SIZE, SS_A_VERITY_SALT_DATA,
	SS_A_VERITY_SIG_DATA,                                            /* v3: 32..35 */
	SS_A_MAX = SS_A_VERITY_SIG_DATA
};

/* Name of a command as `receive --dump` and messages spell it ("mkfile"); NULL if unknown. */
const char *ss_cmd_name(unsigned cmd);

struct ss_time { int64_t sec; uint32_t nsec; };

/* One decoded command. Strings are NUL-terminated (a NUL inside one is refused); byte
 * fields point into the reader's buffer and stay valid until the next ss_read_cmd(). */
struct ss_cmd {
	unsigned type;
	uint64_t offset;                    /* byte offset of the command in the input */
	uint64_t present;                   /* bit n set: attribute n was present */
	const char *path, *path_to, *path_link, *clone_path, *xattr_name;
	const uint8_t *data, *xattr_data, *verity_salt, *verity_sig;
	uint32_t data_len, xattr_len, verity_salt_len, verity_sig_len;
	uint64_t data_pos;                  /* byte offset of data in the input */
	uint8_t uuid[SS_UUID_SIZE], clone_uuid[SS_UUID_SIZE];
	uint64_t ctransid, clone_ctransid, ino, size, mode, uid, gid, rdev;
	uint64_t file_offset, clone_offset, clone_len, fileattr;
	uint64_t unencoded_file_len, unencoded_len, unencoded_offset;
	uint32_t fallocate_mode, compression, encryption, verity_block_size;
	uint8_t verity_algorithm;
	struct ss_time atime, mtime, ctime, otime;
};

/* Reads a stream from a file descriptor through a buffer of SS_READ_CHUNK bytes or more,
 * so that one read() call brings in many small commands; a decoded command points into
 * the buffer (no copy of its data). Memory: the largest command, at most
 * SS_MAX_CMD_LEN, twice, plus SS_READ_CHUNK. */
#define SS_READ_CHUNK (256u << 10)
struct ss_reader {
	int fd;
	uint32_t version;
	uint64_t pos;                       /* bytes consumed so far */
	uint8_t *buf;                       /* unconsumed input: buf[head..tail) */
	size_t cap, head, tail;
	char *strings;                      /* NUL-terminated copies of string attributes */
	size_t strings_cap;
	char err[256];
};

void ss_reader_init(struct ss_reader *r, int fd);
void ss_reader_free(struct ss_reader *r);
/* Reads the stream header. 0: ok (r->version set); 1: end of input before any byte
 * (no further stream); -1: error in r->err. */
int ss_read_header(struct ss_reader *r);
/* Reads, checks (crc, command number, attributes: known for the version, not repeated,
 * the right size, the ones the command needs present) and decodes one command.
 * 0: ok; -1: error in r->err (the stream cannot be trusted any further). */
int ss_read_cmd(struct ss_reader *r, struct ss_cmd *cmd);

/* Decodes one command held in memory (header included, len bytes). Same checks. */
int ss_decode(const uint8_t *buf, size_t len, uint32_t version, uint64_t offset,
	      char *strings, struct ss_cmd *cmd, char *err, size_t errlen);

/* Builds a stream in memory (tests, tools). Calls after an allocation failure are no-ops
 * and ss_writer_finish reports it. */
struct ss_writer {
	uint8_t *buf;
	size_t len, cap, cmd_start;
	uint32_t version;
	int failed;
};
void ss_writer_init(struct ss_writer *w, uint32_t version);  /* writes the header */
void ss_begin(struct ss_writer *w, unsigned cmd);
void ss_put_u8(struct ss_writer *w, unsigned attr, uint8_t v);
void ss_put_u32(struct ss_writer *w, unsigned attr, uint32_t v);
void ss_put_u64(struct ss_writer *w, unsigned attr, uint64_t v);
void ss_put_bytes(struct ss_writer *w, unsigned attr, const void *p, size_t len);
void ss_put_str(struct ss_writer *w, unsigned attr, const char *s);
void ss_put_time(struct ss_writer *w, unsigned attr, int64_t sec, uint32_t nsec);
void ss_end(struct ss_writer *w);                 /* fills in length and crc */
/* 0 and the stream in w->buf/w->len, or -1 after an allocation failure. */
int ss_writer_finish(struct ss_writer *w);
void ss_writer_free(struct ss_writer *w);

#endif
