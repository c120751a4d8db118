/* UUID generation, text form and strict parsing. */
#include <string.h>
#include "unit.h"
#include "util/uuid.h"

TEST(uuid_round_trip)
{
	static const uint8_t bytes[UUID_SIZE] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
						  0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };
	const char *text = "01234567-89ab-cdef-fedc-ba9876543210";
	char s[UUID_STR_LEN];
	uint8_t u[UUID_SIZE];

	uuid_unparse(bytes, s);
	CHECK(!strcmp(s, text));
	CHECK(uuid_parse(text, u) == 0 && !memcmp(u, bytes, UUID_SIZE));
	CHECK(uuid_parse("01234567-89AB-CDEF-FEDC-BA9876543210", u) == 0 && !memcmp(u, bytes, UUID_SIZE));
}

TEST(uuid_parse_rejects)
{
	static const char *bad[] = {
		"",
		"01234567-89ab-cdef-fedc-ba987654321",
		"01234567-89ab-cdef-fedc-ba98765432100",
		"0123456789ab-cdef-fedc-ba9876543210-",
		"01234567-89ab-cdef-fedc_ba9876543210",
		"01234567-89ab-cdef-fedc-ba987654321g",
		"{1234567-89ab-cdef-fedc-ba9876543210",
		" 1234567-89ab-cdef-fedc-ba9876543210",
		"0123456789abcdeffedcba9876543210",
	};
	uint8_t u[UUID_SIZE], zero[UUID_SIZE] = { 0 };

	memset(u, 0, sizeof(u));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(uuid_parse(bad[i], u) == -1);
	CHECK(!memcmp(u, zero, UUID_SIZE)); /* untouched on error */
}

TEST(uuid_generate_v4)
{
	uint8_t a[UUID_SIZE], b[UUID_SIZE], back[UUID_SIZE];
	char s[UUID_STR_LEN];

	CHECK(uuid_generate(a) == 0 && uuid_generate(b) == 0);
	CHECK(memcmp(a, b, UUID_SIZE) != 0);
	CHECK(!uuid_is_null(a));
	CHECK(a[6] >> 4 == 4 && (a[8] & 0xc0) == 0x80);
	uuid_unparse(a, s);
	CHECK(strlen(s) == 36 && s[14] == '4');
	for (const char *p = s; *p; p++)
		CHECK((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-');
	CHECK(uuid_parse(s, back) == 0 && !memcmp(a, back, UUID_SIZE));
	memset(a, 0, sizeof(a));
	CHECK(uuid_is_null(a));
}
