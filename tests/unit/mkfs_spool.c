/* The spool of mkfs: records past the buffer go to a temporary file and read back
 * in order, as often as asked; records never straddle wrongly at buffer edges. */
#include "unit.h"
#include "fs/mkfs/internal.h"
#include <stdint.h>
#include <string.h>

static int read_all_back(struct spool *s, uint32_t n)
{
	const void *p;
	uint32_t v, i = 0;
	int ret;

	if (spool_rewind(s))
		return -1;
	while ((ret = spool_read(s, sizeof(v), &p)) == 1) {
		memcpy(&v, p, sizeof(v));
		if (v != i * 7)
			return -1;
		/* a 1..13 byte tail of the value's low byte, read as its own record */
		if (spool_read(s, v % 13 + 1, &p) != 1 || ((const uint8_t *)p)[0] != (uint8_t)v)
			return -1;
		i++;
	}
	return ret == 0 && i == n ? 0 : -1;
}

static void fill(struct spool *s, uint32_t n)
{
	uint8_t tail[16];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = i * 7;
		memset(tail, (uint8_t)v, sizeof(tail));
		CHECK(!spool_write(s, &v, sizeof(v)) && !spool_write(s, tail, v % 13 + 1));
	}
}

TEST(spool_in_memory)
{
	struct spool s;

	CHECK(!spool_init(&s, "/tmp", 4096));
	fill(&s, 100);
	CHECK(s.fd < 0);
	CHECK(!read_all_back(&s, 100));
	CHECK(!read_all_back(&s, 100));
	spool_free(&s);
}

TEST(spool_spilled)
{
	struct spool s;

	CHECK(!spool_init(&s, "/tmp", 64));     /* records cross every buffer edge */
	fill(&s, 5000);
	CHECK(s.fd >= 0);
	CHECK(!read_all_back(&s, 5000));
	CHECK(!read_all_back(&s, 5000));
	spool_free(&s);
}

TEST(spool_empty)
{
	struct spool s;
	const void *p;

	CHECK(!spool_init(&s, "/tmp", 64));
	CHECK(!spool_rewind(&s));
	CHECK(spool_read(&s, 4, &p) == 0);
	CHECK(spool_write(&s, "x", 1) < 0);     /* reading: no more writes */
	spool_free(&s);
}
