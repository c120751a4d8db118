//build:Oz
/* Chunk and device-extent allocator of the write side (see alloc.h). */
#include "alloc.h"
#include "fs/core/format.h"
#include "util/pio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROFILE_MASK BTRFS_BLOCK_GROUP_PROFILE_MASK

int profile_min_devs(uint64_t profile)
{
	switch (profile & PROFILE_MASK) {
	case BTRFS_BLOCK_GROUP_RAID1: case BTRFS_BLOCK_GROUP_RAID10:
	case BTRFS_BLOCK_GROUP_RAID5:
		return 2;
	case BTRFS_BLOCK_GROUP_RAID6: case BTRFS_BLOCK_GROUP_RAID1C3:
		return 3;
	case BTRFS_BLOCK_GROUP_RAID1C4:
		return 4;
	default:
		return 1;
	}
}

int profile_copies(uint64_t profile)
{
	switch (profile & PROFILE_MASK) {
	case BTRFS_BLOCK_GROUP_DUP: case BTRFS_BLOCK_GROUP_RAID1:
	case BTRFS_BLOCK_GROUP_RAID10: case BTRFS_BLOCK_GROUP_RAID5:
		return 2;
	case BTRFS_BLOCK_GROUP_RAID1C3: case BTRFS_BLOCK_GROUP_RAID6:
		return 3;
	case BTRFS_BLOCK_GROUP_RAID1C4:
		return 4;
	default:
		return 1;
	}
}

int profile_num_stripes(uint64_t profile, int ndevs)
{
	switch (profile & PROFILE_MASK) {
	case BTRFS_BLOCK_GROUP_DUP: case BTRFS_BLOCK_GROUP_RAID1:
		return 2;
	case BTRFS_BLOCK_GROUP_RAID1C3:
		return 3;
	case BTRFS_BLOCK_GROUP_RAID1C4:
		return 4;
	case BTRFS_BLOCK_GROUP_RAID0: case BTRFS_BLOCK_GROUP_RAID5: case BTRFS_BLOCK_GROUP_RAID6:
		return ndevs;
	case BTRFS_BLOCK_GROUP_RAID10:
		return ndevs & ~1;
	default:
		return 1;
	}
}

int profile_data_stripes(uint64_t profile, int num_stripes)
{
	switch (profile & PROFILE_MASK) {
	case BTRFS_BLOCK_GROUP_RAID0:
		return num_stripes;
	case BTRFS_BLOCK_GROUP_RAID10:
		return num_stripes / 2;
	case BTRFS_BLOCK_GROUP_RAID5:
		return num_stripes - 1;
	case BTRFS_BLOCK_GROUP_RAID6:
		return num_stripes - 2;
	default:
		return 1;
	}
}

void alloc_init(struct alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->next_logical = ALLOC_DEV_START;
}

void alloc_free(struct alloc *a)
{
	free(a->chunks);
	a->chunks = NULL;
	a->nchunks = 0;
}

uint64_t alloc_dev_free(const struct alloc *a, int i)
{
	const struct alloc_dev *d = &a->devs[i];
	return d->size > d->next_phys ? d->size - d->next_phys : 0;
}

uint64_t alloc_dev_used(const struct alloc *a, int i)
{
	return a->devs[i].next_phys - ALLOC_DEV_START;
}

/* Devices ordered by free space (most first; ties by index). */
static void devs_by_free(const struct alloc *a, int *order)
{
	for (int i = 0; i < a->ndevs; i++)
		order[i] = i;
	for (int i = 1; i < a->ndevs; i++)
		for (int j = i; j > 0 && alloc_dev_free(a, order[j]) > alloc_dev_free(a, order[j - 1]); j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
}

struct alloc_chunk *alloc_chunk_add(struct alloc *a, uint64_t type, uint64_t stripe_size)
{
	int order[ALLOC_MAX_DEVS], n = profile_num_stripes(type, a->ndevs);
	int dup = (type & PROFILE_MASK) == BTRFS_BLOCK_GROUP_DUP;
	struct alloc_chunk *c;

	if (n < 1 || n > a->ndevs * (dup ? 2 : 1) || a->nchunks >= ALLOC_MAX_CHUNKS || !stripe_size) {
		errno = EINVAL;
		return NULL;
	}
	if (!a->chunks && !(a->chunks = calloc(ALLOC_MAX_CHUNKS, sizeof(*a->chunks)))) {
		errno = ENOMEM;
		return NULL;
	}
	devs_by_free(a, order);
	for (int i = 0; i < (dup ? 1 : n); i++)
		if (alloc_dev_free(a, order[i]) < stripe_size * (dup ? 2 : 1)) {
			errno = ENOSPC;
			return NULL;
		}
	c = &a->chunks[a->nchunks++];
	memset(c, 0, sizeof(*c));
	c->type = type;
	c->stripe_size = stripe_size;
	c->num_stripes = n;
	c->sub_stripes = (type & PROFILE_MASK) == BTRFS_BLOCK_GROUP_RAID10 ? 2 : 1;
	for (int i = 0; i < n; i++) {
		struct alloc_dev *d = &a->devs[dup ? order[0] : order[i]];
		c->stripe[i].dev = (int)(d - a->devs);
		c->stripe[i].phys = d->next_phys;
		d->next_phys += stripe_size;
	}
	c->logical = a->next_logical;
	c->length = stripe_size * (uint64_t)profile_data_stripes(type, n);
	a->next_logical += c->length;
	return c;
}

/* Geometry of the 64 KiB stripe holding chunk offset off. */
struct stripe_pos {
	int first, count;       /* copies: stripes first..first+count-1 */
	uint64_t dev_off;       /* offset inside each device extent */
	uint64_t room;          /* bytes until the stripe ends */
};

static void map_offset(const struct alloc_chunk *c, uint64_t off, struct stripe_pos *p)
{
	uint64_t sn = off / ALLOC_STRIPE_LEN, in = off % ALLOC_STRIPE_LEN;
	int n = c->num_stripes, nd = profile_data_stripes(c->type, n);

	p->room = ALLOC_STRIPE_LEN - in;
	switch (c->type & PROFILE_MASK) {
	case BTRFS_BLOCK_GROUP_RAID0:
		p->first = (int)(sn % n);
		p->count = 1;
		p->dev_off = sn / n * ALLOC_STRIPE_LEN + in;
		break;
	case BTRFS_BLOCK_GROUP_RAID10:
		p->first = (int)(sn % nd) * 2;
		p->count = 2;
		p->dev_off = sn / nd * ALLOC_STRIPE_LEN + in;
		break;
	case BTRFS_BLOCK_GROUP_RAID5: case BTRFS_BLOCK_GROUP_RAID6: {
		/* data stripe d of full stripe f lives on stripe (d + f) % n */
		uint64_t f = sn / nd;
		p->first = (int)((sn % nd + f) % n);
		p->count = 1;
		p->dev_off = f * ALLOC_STRIPE_LEN + in;
		break;
	}
	default:
		p->first = 0;
		p->count = n;
		p->dev_off = off;
		p->room = c->length - off;
	}
}

static struct alloc_chunk *chunk_of(struct alloc *a, uint64_t logical)
{
	for (int i = 0; i < a->nchunks; i++)
		if (logical >= a->chunks[i].logical &&
		    logical - a->chunks[i].logical < a->chunks[i].length)
			return &a->chunks[i];
	return NULL;
}

const struct alloc_chunk *alloc_chunk_of(struct alloc *a, uint64_t logical, size_t len)
{
	const struct alloc_chunk *c = chunk_of(a, logical);

	return c && logical + len <= c->logical + c->length ? c : NULL;
}

int alloc_write(struct alloc *a, uint64_t logical, const void *buf, size_t len)
{
	const struct alloc_chunk *c = alloc_chunk_of(a, logical, len);

	return c ? alloc_chunk_write(a, c, logical, buf, len) : -EINVAL;
}

int alloc_chunk_write(const struct alloc *a, const struct alloc_chunk *c, uint64_t logical,
		      const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		struct stripe_pos sp;
		size_t n;

		map_offset(c, logical - c->logical, &sp);
		n = len < sp.room ? len : (size_t)sp.room;
		for (int i = sp.first; i < sp.first + sp.count; i++) {
			const struct alloc_stripe *s = &c->stripe[i];
			int ret = pio_dev_write(a->devs[s->dev].fd, p, n, (off_t)(s->phys + sp.dev_off));
			if (ret)
				return ret;
		}
		p += n;
		len -= n;
		logical += n;
	}
	return 0;
}

/* Whether chunk range [off, off+len) holds a superblock copy on any device. The kernel
 * keeps the whole 64 KiB stripe around each copy out of use. */
static int overlaps_super(const struct alloc *a, const struct alloc_chunk *c, uint64_t off,
			  uint64_t len)
{
	for (uint64_t o = off & ~(ALLOC_STRIPE_LEN - 1); o < off + len; o += ALLOC_STRIPE_LEN) {
		struct stripe_pos sp;
		map_offset(c, o, &sp);
		for (int i = 0; i < c->num_stripes; i++) {
			uint64_t start = c->stripe[i].phys + (sp.dev_off & ~(ALLOC_STRIPE_LEN - 1));
			for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
				uint64_t so = btrfs_super_offset(m);
				if (so >= start && so < start + ALLOC_STRIPE_LEN &&
				    so < a->devs[c->stripe[i].dev].size)
					return 1;
			}
		}
	}
	return 0;
}

uint64_t alloc_space(struct alloc *a, uint64_t kind, uint64_t len, uint64_t align)
{
	for (int i = 0; i < a->nchunks; i++) {
		struct alloc_chunk *c = &a->chunks[i];
		uint64_t pos;

		if (!(c->type & kind) || c->logical + c->length <= a->floor)
			continue;
		pos = c->cursor;
		if (c->logical + pos < a->floor)
			pos = a->floor - c->logical;
		pos = (pos + align - 1) / align * align;
		while (pos + len <= c->length && overlaps_super(a, c, pos, len))
			pos = (pos | (ALLOC_STRIPE_LEN - 1)) + 1;
		if (pos + len > c->length)
			continue;
		c->cursor = pos + len;
		c->used += len;
		return c->logical + pos;
	}
	return 0;
}

uint64_t alloc_space_upto(struct alloc *a, uint64_t kind, uint64_t maxlen, uint64_t align,
			  uint64_t *got)
{
	uint64_t at = alloc_space(a, kind, align, align), len = align;
	struct alloc_chunk *c = at ? chunk_of(a, at) : NULL;

	if (!c)
		return 0;
	/* grow the piece one 64 KiB stripe at a time while it stays clear */
	while (len < maxlen && c->cursor < c->length) {
		uint64_t step = ALLOC_STRIPE_LEN - (c->cursor % ALLOC_STRIPE_LEN);
		if (step > maxlen - len)
			step = maxlen - len;
		if (step > c->length - c->cursor)
			step = c->length - c->cursor;
		if (overlaps_super(a, c, c->cursor, step))
			break;
		c->cursor += step;
		c->used += step;
		len += step;
	}
	*got = len;
	return at;
}

void alloc_save(const struct alloc *a, struct alloc_mark *m)
{
	for (int i = 0; i < a->nchunks; i++) {
		m->cursor[i] = a->chunks[i].cursor;
		m->used[i] = a->chunks[i].used;
	}
}

void alloc_restore(struct alloc *a, const struct alloc_mark *m)
{
	for (int i = 0; i < a->nchunks; i++) {
		a->chunks[i].cursor = m->cursor[i];
		a->chunks[i].used = m->used[i];
	}
}

static int pread_stripe(int fd, uint8_t *buf, uint64_t off)
{
	size_t done = 0;

	while (done < ALLOC_STRIPE_LEN) {
		ssize_t n = pread(fd, buf + done, ALLOC_STRIPE_LEN - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		done += (size_t)n;
	}
	memset(buf + done, 0, ALLOC_STRIPE_LEN - done);   /* past the end of an image */
	return 0;
}

/* Multiplication by 2 in GF(2^8) with the RAID6 polynomial x^8+x^4+x^3+x^2+1. */
static uint8_t gf_mul2(uint8_t v)
{
	return (uint8_t)(v << 1) ^ (v & 0x80 ? 0x1d : 0);
}

/* Full stripe f of a RAID5/6 chunk: data stripe d is on stripe (f + d) % n, P on
 * (f + nd) % n, Q on (f + nd + 1) % n, all at offset f * 64 KiB of their extents. */
static int parity_of_row(struct alloc *a, const struct alloc_chunk *c, uint64_t f, uint8_t *buf)
{
	int n = c->num_stripes, nd = profile_data_stripes(c->type, n);
	int raid6 = (c->type & PROFILE_MASK) == BTRFS_BLOCK_GROUP_RAID6;
	uint8_t *data = buf, *p = buf + ALLOC_STRIPE_LEN, *q = p + ALLOC_STRIPE_LEN;
	uint64_t off = f * ALLOC_STRIPE_LEN;
	int ret;

	memset(p, 0, 2 * ALLOC_STRIPE_LEN);
	/* Q by Horner's rule from the last data stripe down to the first */
	for (int d = nd - 1; d >= 0; d--) {
		const struct alloc_stripe *s = &c->stripe[(f + (uint64_t)d) % (uint64_t)n];
		ret = pread_stripe(a->devs[s->dev].fd, data, s->phys + off);
		if (ret)
			return ret;
		for (size_t i = 0; i < ALLOC_STRIPE_LEN; i++) {
			p[i] ^= data[i];
			q[i] = gf_mul2(q[i]) ^ data[i];
		}
	}
	for (int k = 0; k < (raid6 ? 2 : 1); k++) {
		const struct alloc_stripe *s = &c->stripe[(f + (uint64_t)nd + (uint64_t)k) % (uint64_t)n];
		ret = pio_dev_write(a->devs[s->dev].fd, k ? q : p, ALLOC_STRIPE_LEN, (off_t)(s->phys + off));
		if (ret)
			return ret;
	}
	return 0;
}

int alloc_write_parity(struct alloc *a)
{
	uint8_t *buf = NULL;
	int ret = 0;

	for (int i = 0; i < a->nchunks && !ret; i++) {
		const struct alloc_chunk *c = &a->chunks[i];
		uint64_t row;

		if (!(c->type & BTRFS_BLOCK_GROUP_RAID56_MASK))
			continue;
		if (!buf && !(buf = malloc(3 * ALLOC_STRIPE_LEN)))
			return -ENOMEM;
		row = ALLOC_STRIPE_LEN * (uint64_t)profile_data_stripes(c->type, c->num_stripes);
		for (uint64_t f = 0; f < (c->cursor + row - 1) / row && !ret; f++)
			ret = parity_of_row(a, c, f, buf);
	}
	free(buf);
	return ret;
}
