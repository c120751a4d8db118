//build:Oz
/* btrfs-image -ss: names replaced by others with the same btrfs name hash, so that the
 * keys of directory items (which hold the hash) stay right in a sanitized dump. */
#include "image.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <string.h>

#define CRC32C_POLY 0x82f63b78u /* reflected */

/* crc32c runs one byte into its 32-bit register: reg = reg >> 8 ^ T[(reg ^ byte) & 0xff].
 * Four bytes b run from register c end where four zero bytes run from c ^ le32(b) end,
 * and running a zero byte is undone knowing that T[i] >> 24 differs for every i. */
struct crc_tables {
	uint32_t t[256];
	uint8_t index_of_top[256];
};

static void crc_tables_init(struct crc_tables *c)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t r = i;

		for (int k = 0; k < 8; k++)
			r = r & 1 ? r >> 1 ^ CRC32C_POLY : r >> 1;
		c->t[i] = r;
		c->index_of_top[r >> 24] = (uint8_t)i;
	}
}

/* The register that four zero bytes take to reg. */
static uint32_t unrun_four_zeros(const struct crc_tables *c, uint32_t reg)
{
	for (int k = 0; k < 4; k++) {
		uint8_t i = c->index_of_top[reg >> 24];

		reg = (reg ^ c->t[i]) << 8 | i;
	}
	return reg;
}

static int name_char(uint8_t ch)
{
	return ch >= ' ' && ch <= '~' && ch != '/';
}

/* The next prefix in counting order over the name characters; 0 after the last. */
static int next_prefix(char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '~') {
			p[i] += p[i] == '.' ? 2 : 1;        /* '/' is skipped */
			return 1;
		}
		p[i] = ' ';
	}
	return 0;
}

int image_name_collision(const char *name, size_t len, char *out)
{
	struct crc_tables c;
	uint32_t want = crc32c_raw(~1u, name, len);
	char sub[256];

	if (len <= 4 || len > sizeof(sub))
		return -1;
	crc_tables_init(&c);
	memset(sub, ' ', len - 4);
	do {
		uint32_t reg = crc32c_raw(~1u, sub, len - 4);

		put_le32(sub + len - 4, unrun_four_zeros(&c, want) ^ reg);
		if (name_char(sub[len - 4]) && name_char(sub[len - 3]) && name_char(sub[len - 2]) &&
		    name_char(sub[len - 1]) && memcmp(sub, name, len)) {
			memcpy(out, sub, len);
			return 0;
		}
	} while (next_prefix(sub, len - 4));
	return -1;
}
