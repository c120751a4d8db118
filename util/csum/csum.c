/* Checksum dispatch by btrfs_super_block.csum_type. */
#include <string.h>
#include <strings.h>
#include "config.h"
#include "csum.h"
#include "util/le.h"

static const struct {
	const char *name, *alias;
	uint8_t size, built;
} csums[] = {
	[CSUM_CRC32C] = { "crc32c", NULL, 4, 1 },
	[CSUM_XXHASH] = { "xxhash64", "xxhash", 8, CFG_CSUM_XXHASH },
	[CSUM_SHA256] = { "sha256", NULL, 32, CFG_CSUM_SHA256 },
	[CSUM_BLAKE2] = { "blake2b", "blake2", 32, CFG_CSUM_BLAKE2 },
};
#define NR_CSUMS (int)(sizeof(csums) / sizeof(csums[0]))

static unsigned cpu_has, cpu_use;

#if defined(__x86_64__)
#include <cpuid.h>

__attribute__((constructor))
static void detect_cpu(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	cpu_has = (c & bit_SSE4_2 ? CPU_CRC32 : 0) | (c & bit_PCLMUL ? CPU_CLMUL : 0);
	if (c & bit_SSE4_1 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && b & bit_SHA)
		cpu_has |= CPU_SHA;
	cpu_use = cpu_has;
}
#endif

int csum_cpu(unsigned features)
{
	return (cpu_use & features) == features;
}

unsigned csum_cpu_limit(unsigned mask)
{
	cpu_use = cpu_has & mask;
	return cpu_has;
}

static int known(int type)
{
	return type >= 0 && type < NR_CSUMS;
}

int csum_supported(int type)
{
	return known(type) && csums[type].built ? 0 : -1;
}

size_t csum_size(int type)
{
	return known(type) ? csums[type].size : 0;
}

const char *csum_name(int type)
{
	return known(type) ? csums[type].name : NULL;
}

int csum_type_from_name(const char *name)
{
	for (int i = 0; i < NR_CSUMS; i++)
		if (!strcasecmp(name, csums[i].name) ||
		    (csums[i].alias && !strcasecmp(name, csums[i].alias)))
			return i;
	return -1;
}

int csum_compute(int type, const void *buf, size_t len, uint8_t out[CSUM_MAX_SIZE])
{
	if (csum_supported(type))
		return -1;
	memset(out, 0, CSUM_MAX_SIZE);
	switch (type) {
	case CSUM_CRC32C:
		put_le32(out, crc32c(buf, len));
		break;
#if CFG_CSUM_XXHASH
	case CSUM_XXHASH:
		put_le64(out, xxh64(buf, len, 0));
		break;
#endif
#if CFG_CSUM_SHA256
	case CSUM_SHA256:
		sha256(buf, len, out);
		break;
#endif
#if CFG_CSUM_BLAKE2
	case CSUM_BLAKE2:
		blake2b_256(buf, len, out);
		break;
#endif
	}
	return 0;
}

void csum_stamp(int type, void *buf, size_t len)
{
	enum { CSUM_FIELD = 32 };       /* btrfs_header.csum, btrfs_super_block.csum */
	uint8_t sum[CSUM_MAX_SIZE] = { 0 };

	csum_compute(type, (uint8_t *)buf + CSUM_FIELD, len - CSUM_FIELD, sum);
	memcpy(buf, sum, CSUM_FIELD);
}
