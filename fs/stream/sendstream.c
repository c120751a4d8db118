//build:Oz
/* Send stream codec; the format is described in sendstream.h. */
#include "sendstream.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum attr_kind { K_NONE, K_U8, K_U32, K_U64, K_UUID, K_TIME, K_STR, K_BIN };

/* Value type of every attribute (kernel's btrfs_send_attr definitions). */
static const unsigned char attr_kind[SS_A_MAX + 1] = {
	[SS_A_UUID] = K_UUID, [SS_A_CTRANSID] = K_U64, [SS_A_INO] = K_U64,
	[SS_A_SIZE] = K_U64, [SS_A_MODE] = K_U64, [SS_A_UID] = K_U64, [SS_A_GID] = K_U64,
	[SS_A_RDEV] = K_U64, [SS_A_CTIME] = K_TIME, [SS_A_MTIME] = K_TIME,
	[SS_A_ATIME] = K_TIME, [SS_A_OTIME] = K_TIME, [SS_A_XATTR_NAME] = K_STR,
	[SS_A_XATTR_DATA] = K_BIN, [SS_A_PATH] = K_STR, [SS_A_PATH_TO] = K_STR,
	[SS_A_PATH_LINK] = K_STR, [SS_A_FILE_OFFSET] = K_U64, [SS_A_DATA] = K_BIN,
	[SS_A_CLONE_UUID] = K_UUID, [SS_A_CLONE_CTRANSID] = K_U64,
	[SS_A_CLONE_PATH] = K_STR, [SS_A_CLONE_OFFSET] = K_U64, [SS_A_CLONE_LEN] = K_U64,
	[SS_A_FALLOCATE_MODE] = K_U32, [SS_A_FILEATTR] = K_U64,
	[SS_A_UNENCODED_FILE_LEN] = K_U64, [SS_A_UNENCODED_LEN] = K_U64,
	[SS_A_UNENCODED_OFFSET] = K_U64, [SS_A_COMPRESSION] = K_U32,
	[SS_A_ENCRYPTION] = K_U32, [SS_A_VERITY_ALGORITHM] = K_U8,
	[SS_A_VERITY_BLOCK_SIZE] = K_U32, [SS_A_VERITY_SALT_DATA] = K_BIN,
	[SS_A_VERITY_SIG_DATA] = K_BIN,
};

#define A(x) (1ull << SS_A_##x)
/* Attributes each command must carry and may carry besides (what the kernel emits). */
static const struct cmd_spec {
	const char *name;
	uint64_t need, may;
} cmd_spec[SS_C_MAX + 1] = {
	[SS_C_SUBVOL] = { "subvol", A(PATH) | A(UUID) | A(CTRANSID), 0 },
	[SS_C_SNAPSHOT] = { "snapshot", A(PATH) | A(UUID) | A(CTRANSID) | A(CLONE_UUID) |
			    A(CLONE_CTRANSID), 0 },
	[SS_C_MKFILE] = { "mkfile", A(PATH) | A(INO), A(MODE) | A(RDEV) },
	[SS_C_MKDIR] = { "mkdir", A(PATH) | A(INO), A(MODE) | A(RDEV) },
	[SS_C_MKNOD] = { "mknod", A(PATH) | A(INO) | A(MODE) | A(RDEV), 0 },
	[SS_C_MKFIFO] = { "mkfifo", A(PATH) | A(INO), A(MODE) | A(RDEV) },
	[SS_C_MKSOCK] = { "mksock", A(PATH) | A(INO), A(MODE) | A(RDEV) },
	[SS_C_SYMLINK] = { "symlink", A(PATH) | A(INO) | A(PATH_LINK), A(MODE) | A(RDEV) },
	[SS_C_RENAME] = { "rename", A(PATH) | A(PATH_TO), 0 },
	[SS_C_LINK] = { "link", A(PATH) | A(PATH_LINK), 0 },
	[SS_C_UNLINK] = { "unlink", A(PATH), 0 },
	[SS_C_RMDIR] = { "rmdir", A(PATH), 0 },
	[SS_C_SET_XATTR] = { "set_xattr", A(PATH) | A(XATTR_NAME) | A(XATTR_DATA), 0 },
	[SS_C_REMOVE_XATTR] = { "remove_xattr", A(PATH) | A(XATTR_NAME), 0 },
	[SS_C_WRITE] = { "write", A(PATH) | A(FILE_OFFSET) | A(DATA), 0 },
	[SS_C_CLONE] = { "clone", A(PATH) | A(FILE_OFFSET) | A(CLONE_LEN) | A(CLONE_UUID) |
			 A(CLONE_CTRANSID) | A(CLONE_PATH) | A(CLONE_OFFSET), 0 },
	[SS_C_TRUNCATE] = { "truncate", A(PATH) | A(SIZE), 0 },
	[SS_C_CHMOD] = { "chmod", A(PATH) | A(MODE), 0 },
	[SS_C_CHOWN] = { "chown", A(PATH) | A(UID) | A(GID), 0 },
	[SS_C_UTIMES] = { "utimes", A(PATH) | A(ATIME) | A(MTIME) | A(CTIME), A(OTIME) },
	[SS_C_END] = { "end", 0, 0 },
	[SS_C_UPDATE_EXTENT] = { "update_extent", A(PATH) | A(FILE_OFFSET) | A(SIZE), 0 },
	[SS_C_FALLOCATE] = { "fallocate", A(PATH) | A(FALLOCATE_MODE) | A(FILE_OFFSET) |
			     A(SIZE), 0 },
	[SS_C_FILEATTR] = { "fileattr", A(PATH) | A(FILEATTR), 0 },
	[SS_C_ENCODED_WRITE] = { "encoded_write", A(PATH) | A(FILE_OFFSET) |
				 A(UNENCODED_FILE_LEN) | A(UNENCODED_LEN) |
				 A(UNENCODED_OFFSET) | A(DATA),
				 A(COMPRESSION) | A(ENCRYPTION) },
	[SS_C_ENABLE_VERITY] = { "enable_verity", A(PATH) | A(VERITY_ALGORITHM) |
				 A(VERITY_BLOCK_SIZE),
				 A(VERITY_SALT_DATA) | A(VERITY_SIG_DATA) },
};
#undef A

/* Highest command and attribute number each stream version defines. */
static unsigned max_cmd(uint32_t version)
{ return version <= 1 ? SS_C_UPDATE_EXTENT : version == 2 ? SS_C_ENCODED_WRITE : SS_C_MAX; }
static unsigned max_attr(uint32_t version)
{ return version <= 1 ? SS_A_CLONE_LEN : version == 2 ? SS_A_ENCRYPTION : SS_A_MAX; }

const char *ss_cmd_name(unsigned cmd)
{
	return cmd <= SS_C_MAX ? cmd_spec[cmd].name : NULL;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The stream's checksum: crc32c with seed 0 and no final inversion over the command
 * header (crc field taken as zero) and the payload. */
static uint32_t cmd_crc(const uint8_t *cmd, size_t len)
{
	static const uint8_t zero[4];
	uint32_t crc = crc32c_raw(0, cmd, 6);

	crc = crc32c_raw(crc, zero, 4);
	return crc32c_raw(crc, cmd + SS_CMD_HEADER_SIZE, len - SS_CMD_HEADER_SIZE);
}

static void store_attr(struct ss_cmd *c, unsigned type, const uint8_t *v, uint32_t len,
		       const char *str)
{
	uint64_t u = attr_kind[type] == K_U64 ? get_le64(v) :
		     attr_kind[type] == K_U32 ? get_le32(v) :
		     attr_kind[type] == K_U8 ? v[0] : 0;
	struct ss_time t = { 0, 0 };

	if (attr_kind[type] == K_TIME)
		t = (struct ss_time){ (int64_t)get_le64(v), get_le32(v + 8) };
	switch (type) {
	case SS_A_UUID: memcpy(c->uuid, v, SS_UUID_SIZE); break;
	case SS_A_CLONE_UUID: memcpy(c->clone_uuid, v, SS_UUID_SIZE); break;
	case SS_A_CTRANSID: c->ctransid = u; break;
	case SS_A_INO: c->ino = u; break;
	case SS_A_SIZE: c->size = u; break;
	case SS_A_MODE: c->mode = u; break;
	case SS_A_UID: c->uid = u; break;
	case SS_A_GID: c->gid = u; break;
	case SS_A_RDEV: c->rdev = u; break;
	case SS_A_CTIME: c->ctime = t; break;
	case SS_A_MTIME: c->mtime = t; break;
	case SS_A_ATIME: c->atime = t; break;
	case SS_A_OTIME: c->otime = t; break;
	case SS_A_XATTR_NAME: c->xattr_name = str; break;
	case SS_A_XATTR_DATA: c->xattr_data = v; c->xattr_len = len; break;
	case SS_A_PATH: c->path = str; break;
	case SS_A_PATH_TO: c->path_to = str; break;
	case SS_A_PATH_LINK: c->path_link = str; break;
	case SS_A_FILE_OFFSET: c->file_offset = u; break;
	case SS_A_DATA: c->data = v; c->data_len = len; break;
	case SS_A_CLONE_CTRANSID: c->clone_ctransid = u; break;
	case SS_A_CLONE_PATH: c->clone_path = str; break;
	case SS_A_CLONE_OFFSET: c->clone_offset = u; break;
	case SS_A_CLONE_LEN: c->clone_len = u; break;
	case SS_A_FALLOCATE_MODE: c->fallocate_mode = (uint32_t)u; break;
	case SS_A_FILEATTR: c->fileattr = u; break;
	case SS_A_UNENCODED_FILE_LEN: c->unencoded_file_len = u; break;
	case SS_A_UNENCODED_LEN: c->unencoded_len = u; break;
	case SS_A_UNENCODED_OFFSET: c->unencoded_offset = u; break;
	case SS_A_COMPRESSION: c->compression = (uint32_t)u; break;
	case SS_A_ENCRYPTION: c->encryption = (uint32_t)u; break;
	case SS_A_VERITY_ALGORITHM: c->verity_algorithm = (uint8_t)u; break;
	case SS_A_VERITY_BLOCK_SIZE: c->verity_block_size = (uint32_t)u; break;
	case SS_A_VERITY_SALT_DATA: c->verity_salt = v; c->verity_salt_len = len; break;
	case SS_A_VERITY_SIG_DATA: c->verity_sig = v; c->verity_sig_len = len; break;
	}
}

static uint32_t kind_size(unsigned kind)
{
	switch (kind) {
	case K_U8: return 1;
	case K_U32: return 4;
	case K_U64: return 8;
	case K_UUID: return SS_UUID_SIZE;
	case K_TIME: return 12;
	default: return 0;
	}
}

/* Checks one attribute (number, repetition, size) and stores it. `strings` receives
 * NUL-terminated copies of string values. */
static int decode_attr(struct ss_cmd *c, uint32_t version, unsigned type, const uint8_t *v,
		       uint32_t len, char **strings, uint64_t at, char *err, size_t errlen)
{
	const char *name = cmd_spec[c->type].name;
	unsigned kind;
	char *str = NULL;

	if (type == 0 || type > max_attr(version))
		return fail(err, errlen, "unknown attribute %u in %s command at byte offset %llu",
			    type, name, (unsigned long long)at);
	if (c->present & (1ull << type))
		return fail(err, errlen, "attribute %u repeated in %s command at byte offset %llu",
			    type, name, (unsigned long long)at);
	if (!((cmd_spec[c->type].need | cmd_spec[c->type].may) & (1ull << type)))
		return fail(err, errlen, "attribute %u does not belong to a %s command (byte offset %llu)",
			    type, name, (unsigned long long)at);
	kind = attr_kind[type];
	if (kind_size(kind) && len != kind_size(kind))
		return fail(err, errlen, "attribute %u of %s command at byte offset %llu has %u bytes, expected %u",
			    type, name, (unsigned long long)at, len, kind_size(kind));
	if (kind == K_STR) {
		if (memchr(v, 0, len))
			return fail(err, errlen, "string attribute %u of %s command at byte offset %llu contains a NUL byte",
				    type, name, (unsigned long long)at);
		str = *strings;
		memcpy(str, v, len);
		str[len] = 0;
		*strings += len + 1;
	}
	c->present |= 1ull << type;
	store_attr(c, type, v, len, str);
	return 0;
}

int ss_decode(const uint8_t *buf, size_t len, uint32_t version, uint64_t offset,
	      char *strings, struct ss_cmd *c, char *err, size_t errlen)
{
	uint32_t plen, pos = 0;
	unsigned type;
	uint64_t missing;

	memset(c, 0, sizeof(*c));
	c->offset = offset;
	if (len < SS_CMD_HEADER_SIZE || len - SS_CMD_HEADER_SIZE != get_le32(buf))
		return fail(err, errlen, "command at byte offset %llu is truncated",
			    (unsigned long long)offset);
	plen = get_le32(buf);
	type = get_le16(buf + 4);
	if (cmd_crc(buf, len) != get_le32(buf + 6))
		return fail(err, errlen, "bad crc32c in command at byte offset %llu",
			    (unsigned long long)offset);
	if (type == 0 || type > max_cmd(version))
		return fail(err, errlen, "unknown command %u (stream version %u) at byte offset %llu",
			    type, version, (unsigned long long)offset);
	c->type = type;
	buf += SS_CMD_HEADER_SIZE;
	while (pos < plen) {
		uint64_t at = offset + SS_CMD_HEADER_SIZE + pos;
		unsigned atype;
		uint32_t alen;

		if (plen - pos < 2)
			return fail(err, errlen, "attribute header truncated at byte offset %llu",
				    (unsigned long long)at);
		atype = get_le16(buf + pos);
		pos += 2;
		if (version >= 2 && atype == SS_A_DATA) {
			alen = plen - pos;       /* v2+: runs to the end of the command */
		} else {
			if (plen - pos < 2)
				return fail(err, errlen, "attribute header truncated at byte offset %llu",
					    (unsigned long long)at);
			alen = get_le16(buf + pos);
			pos += 2;
			if (alen > plen - pos)
				return fail(err, errlen, "attribute %u at byte offset %llu claims %u bytes, only %u left in the command",
					    atype, (unsigned long long)at, alen, plen - pos);
		}
		if (decode_attr(c, version, atype, buf + pos, alen, &strings, at, err, errlen))
			return -1;
		if (atype == SS_A_DATA)
			c->data_pos = offset + SS_CMD_HEADER_SIZE + pos;
		pos += alen;
	}
	missing = cmd_spec[type].need & ~c->present;
	if (missing) {
		unsigned a = (unsigned)__builtin_ctzll(missing);

		return fail(err, errlen, "%s command at byte offset %llu lacks attribute %u",
			    cmd_spec[type].name, (unsigned long long)offset, a);
	}
	return 0;
}

/* ---- reader ---- */

void ss_reader_init(struct ss_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
}

void ss_reader_free(struct ss_reader *r)
{
	free(r->buf);
	free(r->strings);
	r->buf = NULL;
	r->strings = NULL;
	r->cap = r->head = r->tail = r->strings_cap = 0;
}

/* Makes need unconsumed bytes available at r->buf + r->head, reading as much as fits.
 * 0: done; 1: the input ended first (r->tail - r->head bytes are there); -1: error. */
static int fill(struct ss_reader *r, size_t need)
{
	size_t have = r->tail - r->head;

	if (have >= need)
		return 0;
	if (need > r->cap) {
		size_t cap = need <= SS_READ_CHUNK ? SS_READ_CHUNK : need + SS_READ_CHUNK;
		uint8_t *b = malloc(cap);

		if (!b)
			return fail(r->err, sizeof(r->err), "out of memory for a %zu-byte command", need);
		if (have)
			memcpy(b, r->buf + r->head, have);
		free(r->buf);
		r->buf = b;
		r->cap = cap;
	} else if (r->head && have) {
		memmove(r->buf, r->buf + r->head, have);
	}
	r->head = 0;
	r->tail = have;
	while (r->tail < need) {
		ssize_t n = read(r->fd, r->buf + r->tail, r->cap - r->tail);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(r->err, sizeof(r->err), "reading the stream at byte offset %llu: %s",
				    (unsigned long long)(r->pos + r->tail), strerror(errno));
		if (n == 0)
			return 1;
		r->tail += (size_t)n;
	}
	return 0;
}

/* The next len bytes of input, which fill() made available; they count as consumed. */
static const uint8_t *consume(struct ss_reader *r, size_t len)
{
	const uint8_t *p = r->buf + r->head;

	r->head += len;
	r->pos += len;
	return p;
}

static int truncated(struct ss_reader *r, const char *what, uint64_t start)
{
	return fail(r->err, sizeof(r->err), "stream truncated at byte offset %llu (%s at byte offset %llu)",
		    (unsigned long long)(r->pos + (r->tail - r->head)), what,
		    (unsigned long long)start);
}

int ss_read_header(struct ss_reader *r)
{
	uint64_t start = r->pos;
	const uint8_t *hdr;
	int ret = fill(r, SS_HEADER_SIZE);

	if (ret < 0)
		return -1;
	if (ret == 1 && r->tail == r->head)
		return 1;
	if (ret == 1)
		return truncated(r, "stream header", start);
	hdr = consume(r, SS_HEADER_SIZE);
	if (memcmp(hdr, SS_MAGIC, sizeof(SS_MAGIC)))
		return fail(r->err, sizeof(r->err), "no send stream header at byte offset %llu",
			    (unsigned long long)start);
	r->version = get_le32(hdr + sizeof(SS_MAGIC));
	if (r->version < 1 || r->version > SS_MAX_VERSION)
		return fail(r->err, sizeof(r->err), "stream version %u at byte offset %llu not supported",
			    r->version, (unsigned long long)start);
	return 0;
}

/* Room for the NUL-terminated strings of a command of len bytes (each string is shorter
 * than its attribute, header included). */
static int reserve_strings(struct ss_reader *r, size_t len)
{
	char *s;

	if (len < r->strings_cap)
		return 0;
	s = realloc(r->strings, len + 1);
	if (!s)
		return fail(r->err, sizeof(r->err), "out of memory for a %zu-byte command", len);
	r->strings = s;
	r->strings_cap = len + 1;
	return 0;
}

int ss_read_cmd(struct ss_reader *r, struct ss_cmd *c)
{
	uint64_t start = r->pos;
	size_t total;
	uint32_t len;
	int ret = fill(r, SS_CMD_HEADER_SIZE);

	if (ret < 0)
		return -1;
	if (ret == 1 && r->tail == r->head)
		return fail(r->err, sizeof(r->err), "stream ends at byte offset %llu without an end command",
			    (unsigned long long)start);
	if (ret == 1)
		return truncated(r, "command header", start);
	len = get_le32(r->buf + r->head);
	if (len > SS_MAX_CMD_LEN)
		return fail(r->err, sizeof(r->err), "command at byte offset %llu claims %u bytes (limit %u)",
			    (unsigned long long)start, len, SS_MAX_CMD_LEN);
	total = SS_CMD_HEADER_SIZE + (size_t)len;
	ret = fill(r, total);
	if (ret < 0)
		return -1;
	if (ret == 1)
		return truncated(r, "command", start);
	if (reserve_strings(r, total))
		return -1;
	return ss_decode(consume(r, total), total, r->version, start, r->strings, c, r->err,
			 sizeof(r->err));
}

/* ---- writer ---- */

static uint8_t *grow(struct ss_writer *w, size_t n)
{
	uint8_t *p;

	if (w->failed)
		return NULL;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;

		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->buf, cap);
		if (!p) {
			w->failed = 1;
			return NULL;
		}
		w->buf = p;
		w->cap = cap;
	}
	p = w->buf + w->len;
	w->len += n;
	return p;
}

void ss_writer_init(struct ss_writer *w, uint32_t version)
{
	uint8_t *p;

	memset(w, 0, sizeof(*w));
	w->version = version;
	p = grow(w, SS_HEADER_SIZE);
	if (p) {
		memcpy(p, SS_MAGIC, sizeof(SS_MAGIC));
		put_le32(p + sizeof(SS_MAGIC), version);
	}
}

void ss_begin(struct ss_writer *w, unsigned cmd)
{
	uint8_t *p;

	w->cmd_start = w->len;
	p = grow(w, SS_CMD_HEADER_SIZE);
	if (p) {
		memset(p, 0, SS_CMD_HEADER_SIZE);
		put_le16(p + 4, (uint16_t)cmd);
	}
}

void ss_put_bytes(struct ss_writer *w, unsigned attr, const void *v, size_t len)
{
	int implicit = w->version >= 2 && attr == SS_A_DATA;
	uint8_t *p;

	if (!implicit && len > 0xffff)
		w->failed = 1;             /* does not fit a TLV length */
	p = grow(w, (implicit ? 2 : 4) + len);
	if (!p)
		return;
	put_le16(p, (uint16_t)attr);
	if (!implicit)
		put_le16(p + 2, (uint16_t)len);
	if (len)
		memcpy(p + (implicit ? 2 : 4), v, len);
}

void ss_put_u8(struct ss_writer *w, unsigned attr, uint8_t v) { ss_put_bytes(w, attr, &v, 1); }

void ss_put_u32(struct ss_writer *w, unsigned attr, uint32_t v)
{
	uint8_t b[4];

	put_le32(b, v);
	ss_put_bytes(w, attr, b, sizeof(b));
}

void ss_put_u64(struct ss_writer *w, unsigned attr, uint64_t v)
{
	uint8_t b[8];

	put_le64(b, v);
	ss_put_bytes(w, attr, b, sizeof(b));
}

void ss_put_str(struct ss_writer *w, unsigned attr, const char *s)
{
	ss_put_bytes(w, attr, s, strlen(s));
}

void ss_put_time(struct ss_writer *w, unsigned attr, int64_t sec, uint32_t nsec)
{
	uint8_t b[12];

	put_le64(b, (uint64_t)sec);
	put_le32(b + 8, nsec);
	ss_put_bytes(w, attr, b, sizeof(b));
}

void ss_end(struct ss_writer *w)
{
	uint8_t *cmd;
	size_t len;

	if (w->failed)
		return;
	cmd = w->buf + w->cmd_start;
	len = w->len - w->cmd_start;
	put_le32(cmd, (uint32_t)(len - SS_CMD_HEADER_SIZE));
	put_le32(cmd + 6, 0);
	put_le32(cmd + 6, cmd_crc(cmd, len));
}

int ss_writer_finish(struct ss_writer *w)
{
	return w->failed ? -1 : 0;
}

void ss_writer_free(struct ss_writer *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}
