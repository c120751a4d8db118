//build:Oz
/* UUIDs: random ones from getrandom(2), text form both ways (see uuid.h). */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include "uuid.h"

/* Offsets of the dashes in the text form. */
static int is_dash_pos(int i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

int uuid_generate(uint8_t uuid[UUID_SIZE])
{
	size_t got = 0;

	while (got < UUID_SIZE) {
		ssize_t n = getrandom(uuid + got, UUID_SIZE - got, 0);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80); /* variant 10xx */
	return 0;
}

void uuid_unparse(const uint8_t uuid[UUID_SIZE], char out[UUID_STR_LEN])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0, b = 0; i < UUID_STR_LEN - 1; i++) {
		if (is_dash_pos(i)) {
			out[i] = '-';
			continue;
		}
		out[i] = hex[b & 1 ? uuid[b / 2] & 15 : uuid[b / 2] >> 4];
		b++;
	}
	out[UUID_STR_LEN - 1] = '\0';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int uuid_parse(const char *s, uint8_t uuid[UUID_SIZE])
{
	uint8_t tmp[UUID_SIZE] = { 0 };

	for (int i = 0, b = 0; i < UUID_STR_LEN - 1; i++) {
		if (is_dash_pos(i)) {
			if (s[i] != '-')
				return -1;
			continue;
		}
		int v = hex_value(s[i]);
		if (v < 0)
			return -1;
		tmp[b / 2] = (uint8_t)(tmp[b / 2] << 4 | v);
		b++;
	}
	if (s[UUID_STR_LEN - 1])
		return -1;
	memcpy(uuid, tmp, UUID_SIZE);
	return 0;
}

int uuid_is_null(const uint8_t uuid[UUID_SIZE])
{
	uint8_t any = 0;

	for (int i = 0; i < UUID_SIZE; i++)
		any |= uuid[i];
	return !any;
}
