/* Checksums: published vectors, vectors from python3 hashlib and xxhsum, every fast path
 * against the portable code (and crc32c against a bit-at-a-time reference). */
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "unit.h"
#include "util/csum/csum.h"
#include "util/le.h"

static void fill_pattern(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
}

static int digest_is(const uint8_t *d, size_t len, const char *hex)
{
	char s[2 * CSUM_MAX_SIZE + 1];

	for (size_t i = 0; i < len; i++)
		snprintf(s + 2 * i, 3, "%02x", d[i]);
	return !strcmp(s, hex);
}

/* Digests of fill_pattern(len): xxh64 from `xxhsum -H1`, sha256 and blake2b-256
 * from python3 hashlib. The lengths straddle the block and padding boundaries. */
static const struct { size_t len; uint64_t xxh; const char *sha256, *blake2b; } vectors[] = {
	{ 0, 0xef46db3751d8e999ull,
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	  "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8" },
	{ 1, 0x1f25c8d0bc1f4bb6ull,
	  "084fed08b978af4d7d196a7446a86b58009e636b611db16211b65a9aadff29c5",
	  "e88bd757ad5b9bedf372d8d3f0cf6c962a469db61a265f6418e1ffed86da29ec" },
	{ 3, 0x31d2363f52e564c9ull,
	  "6ab0dba1f4f1dfbb37b4f9eeb092c09fca4900ad32bdcd147d8dde35d6c87c35",
	  "9facd640130c81e7f318a8d5c660bc1b0f5d03861ffbd4cc1358e0e904593c28" },
	{ 4, 0x9bb64b7d66ee9fdaull,
	  "42a146d9caf95c0d29b3ea8e3574f3c47758bec2cdcb99e6f10381de77ab6d54",
	  "b75b126cb5d38e778e68f816466e7e87a521aac845965572c0350281ccad5b53" },
	{ 7, 0x9a7b149959ce60d8ull,
	  "ab764db46a4b504f034619a51475e900366a04738693b13a742845930daf74e4",
	  "8f3edbe2b1456581d088ff16bfbb4df1a92a9ffffcacb5066739848087d2015e" },
	{ 8, 0xdab99d95c6f90092ull,
	  "0865c1be255b33b69c4c1b7df3646cd2b7feab36f595044ab191176f1668d9ad",
	  "2d43d7039ce17f2453034c4769608cd36030e90b5a93d9f8d7d19d44a8b88772" },
	{ 31, 0xa2aa5f33cc4a6119ull,
	  "721f1b54dd0f746ef819ba479fcd63b6117bfbe44acc432bf0cb0a639fd41766",
	  "eb761e66d010cbc36adb8215c3c1681e1d5d35a86d5f4d074ffcb74e66e7234a" },
	{ 32, 0x23c3c17ef790fd97ull,
	  "ab5f8b5cb9435354c7b58603592d5faf081e17ceb05f7a7c67f4b666f12ca457",
	  "656300678ffaf08eb513046f55da054581a34f21f3fd453641bd1e8a4ede0113" },
	{ 33, 0x50a7cfc7ba588784ull,
	  "90f90857a7d1aad4925c6d5edbda0abfc8270e3fe5d6da2dd5eae75009cd7609",
	  "ab4bcdb5beabda8c7bcebe5dfb66fc2951de324ce89eef8ef032a6b79065cbc0" },
	{ 55, 0x0a815463dd86507aull,
	  "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b",
	  "03d4607f1e3d3c6054d276c53eab4ee4de04446370d6aaab103b24060349bf47" },
	{ 56, 0xed350c04e51a88e9ull,
	  "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27",
	  "70571de6bad6d1fd028eba4676464563ca74841bb72de0e8878c02bba841f72d" },
	{ 63, 0x5e3e54b431c7493cull,
	  "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055",
	  "a69e023685fa5f19fca13acc02142a9cf8450ce5b77966586e0d000c4a4ea942" },
	{ 64, 0x0eb64b3ef6eeb01full,
	  "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241",
	  "586c0dd87616ec042093edc5f87f880d37ca73618e99b03d5850ce9be478721f" },
	{ 100, 0xa61f8d4c170fe531ull,
	  "5a2cda2351d1cdd9dd7957e57c0b3c8522451f25b6494569b7e94388c46f0980",
	  "012c2a13c1f9c73f0b65bdb7aa77e5cf316c915d0bb15b373fb2b0d7f4d9d6c4" },
	{ 127, 0x0c2b3713c3edbeb3ull,
	  "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07",
	  "c9ae3859964b35f04c54b36d33cf299d7290ee621005d28e51598a943560aaaa" },
	{ 128, 0x46fbcfbf0150793full,
	  "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6",
	  "f0501d06597880592bc49234eef100ec1ff349058d0e9d9b753504e24af86dd6" },
	{ 129, 0x3eb5d118151c8303ull,
	  "307f8fc2c1622b92762e818d39a185d4d667ad49a4b07ceae1f4afa008a93ec4",
	  "a34a4e1e03c541dfbf3099c4b6c143c022ced65c28bd7e8a10e0a098461aecf0" },
	{ 256, 0x00cfc5207dd8e201ull,
	  "d9c76fa34978cb9620dab8c3f46bbe075fddc145eb282b39009141f98d0cfe82",
	  "d93ebb9c802f5630ab22516fd82b6c21bc8bd551d531349b715f046ed11ed871" },
	{ 1000, 0x5f235fa033f1a3fbull,
	  "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371",
	  "d62b6c768ce1afc8367e0498ab2f8e3f7c178c35b1429f14c4604b545d200f52" },
	{ 4096, 0x796398cd432797ccull,
	  "7486da8f1e13943fae21a0b043f1e99640d7d8ebafb25266478b5cddae1272b5",
	  "3b7dcca5dcb409b9ee1d33ac58a03966d5e86581278891945e3d2fd80e3aad58" },
};

static uint32_t crc32c_bitwise(const uint8_t *p, size_t len)
{
	uint32_t crc = ~0u;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}

/* The CPU feature sets to test: all, each fast path alone, none (portable). */
static const unsigned cpu_masks[] = { ~0u, CPU_CRC32, CPU_SHA, 0 };
#define NR_MASKS (int)(sizeof(cpu_masks) / sizeof(cpu_masks[0]))

TEST(crc32c_known_values)
{
	static const uint8_t zeros[32];

	for (int m = 0; m < NR_MASKS; m++) {
		csum_cpu_limit(cpu_masks[m]);
		CHECK(crc32c("123456789", 9) == 0xe3069283);
		CHECK(crc32c(zeros, 32) == 0x8a9136aa);
		CHECK(crc32c("", 0) == 0);
		/* crc32c_raw continues a running value. */
		CHECK(~crc32c_raw(crc32c_raw(~0u, "1234", 4), "56789", 5) == 0xe3069283);
	}
	csum_cpu_limit(~0u);
}

/* Random lengths (mostly up to a sector, sometimes past crc32c's 3-stream block of
 * 4080 bytes and several sha256/blake2b blocks) at random alignments: every path
 * gives what the portable code gives. */
TEST(csum_paths_agree)
{
	enum { MAX = 3 * 4100 + 16 };
	uint8_t *buf = malloc(MAX), want[CSUM_MAX_SIZE], got[CSUM_MAX_SIZE];

	srand(12345);
	for (size_t i = 0; i < MAX; i++)
		buf[i] = (uint8_t)rand();
	for (int i = 0; i < 2000; i++) {
		size_t len = (size_t)rand() % (i % 10 ? 4101 : MAX - 16);
		size_t off = (size_t)rand() % 16;
		for (int type = 0; type < 4; type++) {
			if (csum_supported(type))
				continue;
			csum_cpu_limit(0);
			csum_compute(type, buf + off, len, want);
			for (int m = 0; m < NR_MASKS - 1; m++) {
				csum_cpu_limit(cpu_masks[m]);
				csum_compute(type, buf + off, len, got);
				CHECK(!memcmp(want, got, CSUM_MAX_SIZE));
			}
		}
		if (i % 50 == 0) {
			csum_cpu_limit(0);
			CHECK(crc32c(buf + off, len) == crc32c_bitwise(buf + off, len));
		}
	}
	csum_cpu_limit(~0u);
	free(buf);
}

static void check_vector(const uint8_t *data, size_t i)
{
	uint8_t out[CSUM_MAX_SIZE];
	size_t len = vectors[i].len;

	if (!csum_supported(CSUM_XXHASH)) {
		csum_compute(CSUM_XXHASH, data, len, out);
		CHECK(get_le64(out) == vectors[i].xxh);
	}
	if (!csum_supported(CSUM_SHA256)) {
		csum_compute(CSUM_SHA256, data, len, out);
		CHECK(digest_is(out, 32, vectors[i].sha256));
	}
	if (!csum_supported(CSUM_BLAKE2)) {
		csum_compute(CSUM_BLAKE2, data, len, out);
		CHECK(digest_is(out, 32, vectors[i].blake2b));
	}
}

TEST(csum_vectors)
{
	uint8_t data[4096];

	fill_pattern(data, sizeof(data));
	for (int m = 0; m < NR_MASKS; m++) {
		csum_cpu_limit(cpu_masks[m]);
		for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++)
			check_vector(data, i);
	}
	csum_cpu_limit(~0u);
}

TEST(csum_dispatch)
{
	static const int built[] = { 1, CFG_CSUM_XXHASH, CFG_CSUM_SHA256, CFG_CSUM_BLAKE2 };
	static const size_t sizes[] = { 4, 8, 32, 32 };
	static const char *names[] = { "crc32c", "xxhash64", "sha256", "blake2b" };
	uint8_t out[CSUM_MAX_SIZE];

	for (int t = 0; t < 4; t++) {
		CHECK(csum_size(t) == sizes[t]);
		CHECK(!strcmp(csum_name(t), names[t]));
		CHECK(csum_type_from_name(names[t]) == t);
		CHECK((csum_supported(t) == 0) == built[t]);
		memset(out, 0xff, sizeof(out));
		CHECK(csum_compute(t, "abc", 3, out) == (built[t] ? 0 : -1));
		if (built[t])
			for (size_t i = sizes[t]; i < CSUM_MAX_SIZE; i++)
				CHECK(out[i] == 0);
	}
	CHECK(csum_supported(4) == -1 && csum_supported(-1) == -1);
	CHECK(csum_size(4) == 0 && csum_name(4) == NULL);
	CHECK(csum_compute(4, "abc", 3, out) == -1);
	CHECK(csum_type_from_name("XXHASH") == CSUM_XXHASH);
	CHECK(csum_type_from_name("blake2") == CSUM_BLAKE2);
	CHECK(csum_type_from_name("md5") == -1);

	/* Digests are stored little-endian. */
	csum_compute(CSUM_CRC32C, "123456789", 9, out);
	CHECK(digest_is(out, 4, "839206e3"));
#if CFG_CSUM_XXHASH
	csum_compute(CSUM_XXHASH, "abc", 3, out);
	CHECK(digest_is(out, 8, "990977adf52cbc44"));
#endif
#if CFG_CSUM_SHA256
	csum_compute(CSUM_SHA256, "abc", 3, out);
	CHECK(digest_is(out, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
#endif
}
