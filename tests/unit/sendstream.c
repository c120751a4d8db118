/* Send stream codec: round trips (v1 and v2), and every kind of damage rejected with the
 * byte offset: truncation at every byte, a flipped bit anywhere, unknown commands and
 * attributes, wrong sizes, missing/repeated attributes, huge lengths. */
#include "unit.h"
#include "fs/stream/sendstream.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const uint8_t uuid_a[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* A stream with one command of most kinds. */
static void build(struct ss_writer *w, uint32_t version)
{
	static const char data[] = "hello, world";

	ss_writer_init(w, version);
	ss_begin(w, SS_C_SUBVOL);
	ss_put_str(w, SS_A_PATH, "vol");
	ss_put_bytes(w, SS_A_UUID, uuid_a, 16);
	ss_put_u64(w, SS_A_CTRANSID, 7);
	ss_end(w);
	ss_begin(w, SS_C_MKFILE);
	ss_put_str(w, SS_A_PATH, "o257-5-0");
	ss_put_u64(w, SS_A_INO, 257);
	ss_end(w);
	ss_begin(w, SS_C_RENAME);
	ss_put_str(w, SS_A_PATH, "o257-5-0");
	ss_put_str(w, SS_A_PATH_TO, "dir/file");
	ss_end(w);
	ss_begin(w, SS_C_WRITE);
	ss_put_str(w, SS_A_PATH, "dir/file");
	ss_put_u64(w, SS_A_FILE_OFFSET, 4096);
	ss_put_bytes(w, SS_A_DATA, data, sizeof(data) - 1);
	ss_end(w);
	ss_begin(w, SS_C_SET_XATTR);
	ss_put_str(w, SS_A_PATH, "dir/file");
	ss_put_str(w, SS_A_XATTR_NAME, "user.x");
	ss_put_bytes(w, SS_A_XATTR_DATA, "", 0);
	ss_end(w);
	ss_begin(w, SS_C_UTIMES);
	ss_put_str(w, SS_A_PATH, "");
	ss_put_time(w, SS_A_ATIME, 1, 2);
	ss_put_time(w, SS_A_MTIME, 3, 4);
	ss_put_time(w, SS_A_CTIME, 5, 6);
	ss_end(w);
	if (version >= 2) {
		ss_begin(w, SS_C_FALLOCATE);
		ss_put_str(w, SS_A_PATH, "dir/file");
		ss_put_u32(w, SS_A_FALLOCATE_MODE, 1);
		ss_put_u64(w, SS_A_FILE_OFFSET, 0);
		ss_put_u64(w, SS_A_SIZE, 8192);
		ss_end(w);
	}
	ss_begin(w, SS_C_END);
	ss_end(w);
}

static int mem_fd(const uint8_t *p, size_t len)
{
	int fd = memfd_create("stream", 0);

	if (fd < 0)
		return -1;
	if (write(fd, p, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Reads a whole stream: number of commands up to END, or -1 (r.err names an offset). */
static int read_all(const uint8_t *p, size_t len, char *err, size_t errlen)
{
	struct ss_reader r;
	struct ss_cmd c;
	int fd = mem_fd(p, len), n = 0, ret;

	if (fd < 0)
		return -2;
	ss_reader_init(&r, fd);
	ret = ss_read_header(&r);
	while (ret == 0) {
		ret = ss_read_cmd(&r, &c);
		if (ret == 0 && c.type == SS_C_END)
			break;
		n++;
	}
	snprintf(err, errlen, "%s", r.err);
	ss_reader_free(&r);
	close(fd);
	return ret ? -1 : n;
}

TEST(sendstream_roundtrip_v1)
{
	struct ss_writer w;
	struct ss_reader r;
	struct ss_cmd c;
	int fd;

	build(&w, 1);
	CHECK(ss_writer_finish(&w) == 0);
	fd = mem_fd(w.buf, w.len);
	CHECK(fd >= 0);
	ss_reader_init(&r, fd);
	CHECK(ss_read_header(&r) == 0 && r.version == 1);
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_SUBVOL && !strcmp(c.path, "vol") &&
	      !memcmp(c.uuid, uuid_a, 16) && c.ctransid == 7 && c.offset == SS_HEADER_SIZE);
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_MKFILE && c.ino == 257);
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_RENAME && !strcmp(c.path_to, "dir/file"));
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_WRITE && c.file_offset == 4096 &&
	      c.data_len == 12 && !memcmp(c.data, "hello, world", 12));
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_SET_XATTR && c.xattr_len == 0 &&
	      !strcmp(c.xattr_name, "user.x"));
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_UTIMES && !strcmp(c.path, "") &&
	      c.atime.sec == 1 && c.mtime.nsec == 4 && c.ctime.sec == 5);
	CHECK(ss_read_cmd(&r, &c) == 0 && c.type == SS_C_END);
	CHECK(ss_read_header(&r) == 1);       /* clean end of input */
	CHECK(!strcmp(ss_cmd_name(SS_C_UPDATE_EXTENT), "update_extent"));
	ss_reader_free(&r);
	close(fd);
	ss_writer_free(&w);
}

TEST(sendstream_roundtrip_v2_data_without_length)
{
	struct ss_writer w;
	char err[256];
	size_t i;
	int found = 0;

	build(&w, 2);
	CHECK(read_all(w.buf, w.len, err, sizeof(err)) == 7);
	/* the v2 DATA attribute: type 19 followed directly by the bytes */
	for (i = 0; i + 14 <= w.len; i++)
		if (get_le16(w.buf + i) == SS_A_DATA && !memcmp(w.buf + i + 2, "hello, world", 12))
			found = 1;
	CHECK(found);
	/* the same bytes read as version 1 no longer parse */
	put_le32(w.buf + 13, 1);
	CHECK(read_all(w.buf, w.len, err, sizeof(err)) == -1);
	ss_writer_free(&w);
}

TEST(sendstream_truncated_at_every_byte)
{
	struct ss_writer w;
	char err[256];
	size_t k;

	build(&w, 2);
	for (k = 1; k < w.len; k++) {
		int n = read_all(w.buf, k, err, sizeof(err));

		CHECK(n == -1);
		CHECK(strstr(err, "offset") != NULL);
	}
	ss_writer_free(&w);
}

TEST(sendstream_any_flipped_bit_rejected)
{
	struct ss_writer w;
	char err[256];
	size_t i;

	build(&w, 1);
	for (i = 0; i < w.len; i++) {
		int n;

		w.buf[i] ^= 0x10;
		n = read_all(w.buf, w.len, err, sizeof(err));
		/* a changed length may still frame a damaged command; the crc or framing fails */
		CHECK(n == -1);
		w.buf[i] ^= 0x10;
	}
	CHECK(read_all(w.buf, w.len, err, sizeof(err)) == 6);
	ss_writer_free(&w);
}

/* One command built by hand, checked by ss_decode; returns its result and error text. */
static int decode_one(uint32_t version, void (*fill)(struct ss_writer *), char *err)
{
	struct ss_writer w;
	struct ss_cmd c;
	char *strings;
	int ret;

	ss_writer_init(&w, version);
	fill(&w);
	strings = malloc(w.len + 1);
	ret = ss_decode(w.buf + SS_HEADER_SIZE, w.len - SS_HEADER_SIZE, version, 1234, strings,
			&c, err, 256);
	free(strings);
	ss_writer_free(&w);
	return ret;
}

static void unknown_cmd(struct ss_writer *w) { ss_begin(w, 99); ss_end(w); }
static void v2_cmd_in_v1(struct ss_writer *w)
{
	ss_begin(w, SS_C_FILEATTR);
	ss_put_str(w, SS_A_PATH, "a");
	ss_put_u64(w, SS_A_FILEATTR, 1);
	ss_end(w);
}
static void missing_attr(struct ss_writer *w)
{
	ss_begin(w, SS_C_WRITE);
	ss_put_str(w, SS_A_PATH, "a");
	ss_put_bytes(w, SS_A_DATA, "x", 1);
	ss_end(w);
}
static void short_u64(struct ss_writer *w)
{
	ss_begin(w, SS_C_TRUNCATE);
	ss_put_str(w, SS_A_PATH, "a");
	ss_put_u32(w, SS_A_SIZE, 1);
	ss_end(w);
}
static void repeated(struct ss_writer *w)
{
	ss_begin(w, SS_C_UNLINK);
	ss_put_str(w, SS_A_PATH, "a");
	ss_put_str(w, SS_A_PATH, "b");
	ss_end(w);
}
static void foreign_attr(struct ss_writer *w)
{
	ss_begin(w, SS_C_UNLINK);
	ss_put_str(w, SS_A_PATH, "a");
	ss_put_u64(w, SS_A_CLONE_OFFSET, 1);
	ss_end(w);
}
static void nul_in_path(struct ss_writer *w)
{
	ss_begin(w, SS_C_UNLINK);
	ss_put_bytes(w, SS_A_PATH, "a\0b", 3);
	ss_end(w);
}
static void attr_too_long(struct ss_writer *w)
{
	ss_begin(w, SS_C_UNLINK);
	ss_put_str(w, SS_A_PATH, "abc");
	ss_end(w);
	put_le16(w->buf + w->len - 5, 200);   /* TLV length beyond the command */
	/* re-seal the crc so the TLV check, not the crc, rejects it */
	put_le32(w->buf + w->cmd_start + 6, 0);
	put_le32(w->buf + w->cmd_start + 6,
		 crc32c_raw(0, w->buf + w->cmd_start, w->len - w->cmd_start));
}

TEST(sendstream_bad_commands_name_offset)
{
	char err[256];

	CHECK(decode_one(1, unknown_cmd, err) == -1 && strstr(err, "unknown command 99") &&
	      strstr(err, "1234"));
	CHECK(decode_one(1, v2_cmd_in_v1, err) == -1 && strstr(err, "unknown command"));
	CHECK(decode_one(2, v2_cmd_in_v1, err) == 0);
	CHECK(decode_one(1, missing_attr, err) == -1 && strstr(err, "lacks attribute 18"));
	CHECK(decode_one(1, short_u64, err) == -1 && strstr(err, "expected 8"));
	CHECK(decode_one(1, repeated, err) == -1 && strstr(err, "repeated"));
	CHECK(decode_one(1, foreign_attr, err) == -1 && strstr(err, "does not belong"));
	CHECK(decode_one(1, nul_in_path, err) == -1 && strstr(err, "NUL"));
	CHECK(decode_one(1, attr_too_long, err) == -1 && strstr(err, "claims 200 bytes"));
}

TEST(sendstream_huge_length_refused_before_reading)
{
	struct ss_writer w;
	char err[256];

	ss_writer_init(&w, 1);
	ss_begin(&w, SS_C_END);
	ss_end(&w);
	put_le32(w.buf + SS_HEADER_SIZE, 0xfffffff0u);
	CHECK(read_all(w.buf, w.len, err, sizeof(err)) == -1 && strstr(err, "claims") &&
	      strstr(err, "offset 17"));
	ss_writer_free(&w);
}

TEST(sendstream_bad_header)
{
	char err[256];
	uint8_t h[SS_HEADER_SIZE] = "btrfs-stream";

	put_le32(h + 13, 9);
	CHECK(read_all(h, sizeof(h), err, sizeof(err)) == -1 && strstr(err, "version 9"));
	h[0] = 'x';
	CHECK(read_all(h, sizeof(h), err, sizeof(err)) == -1 && strstr(err, "header"));
}

/* Random payloads with a valid crc get past the checksum: the TLV parser must cope. */
TEST(sendstream_random_payloads_with_valid_crc)
{
	uint8_t buf[SS_CMD_HEADER_SIZE + 256];
	char strings[sizeof(buf) + 1], err[256];
	struct ss_cmd c;
	unsigned seed = 12345, i, k;
	int ok = 0;

	for (i = 0; i < 200000; i++) {
		uint32_t len = (seed = seed * 1103515245u + 12345u) >> 24;
		uint32_t version = 1 + (seed >> 8) % 3;

		for (k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[SS_CMD_HEADER_SIZE + k] = (uint8_t)(seed >> 16);
			/* small attribute numbers and lengths, so that some commands decode */
			if (k % 4 == 1 || k % 4 == 3)
				buf[SS_CMD_HEADER_SIZE + k] = 0;
			if (k % 4 == 0)
				buf[SS_CMD_HEADER_SIZE + k] %= 40;
			if (k % 4 == 2)
				buf[SS_CMD_HEADER_SIZE + k] %= 20;
		}
		put_le32(buf, len);
		put_le16(buf + 4, (uint16_t)(1 + (seed >> 4) % 27));
		put_le32(buf + 6, 0);
		put_le32(buf + 6, crc32c_raw(0, buf, SS_CMD_HEADER_SIZE + len));
		ok += ss_decode(buf, SS_CMD_HEADER_SIZE + len, version, 0, strings, &c, err,
				sizeof(err)) == 0;
	}
	CHECK(ok > 0);       /* some decoded, none crashed */
}
