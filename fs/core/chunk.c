/* The chunk map: logical address -> (device, physical) for every RAID profile. */
#include "fs.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *fs_profile_name(uint64_t type)
{
	static const struct { uint64_t bit; const char *name; } names[] = {
		{ BTRFS_BLOCK_GROUP_DUP, "DUP" }, { BTRFS_BLOCK_GROUP_RAID0, "RAID0" },
		{ BTRFS_BLOCK_GROUP_RAID1, "RAID1" }, { BTRFS_BLOCK_GROUP_RAID1C3, "RAID1C3" },
		{ BTRFS_BLOCK_GROUP_RAID1C4, "RAID1C4" }, { BTRFS_BLOCK_GROUP_RAID10, "RAID10" },
		{ BTRFS_BLOCK_GROUP_RAID5, "RAID5" }, { BTRFS_BLOCK_GROUP_RAID6, "RAID6" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (type & names[i].bit)
			return names[i].name;
	return "single";
}

/* Stripes holding parity in a RAID5/6 full stripe (0 for other profiles). */
static int parity_stripes(uint64_t type)
{
	if (type & BTRFS_BLOCK_GROUP_RAID5)
		return 1;
	return type & BTRFS_BLOCK_GROUP_RAID6 ? 2 : 0;
}

/* Minimum stripe count the profile needs; sub_stripes is checked for RAID10. */
static int chunk_shape_ok(uint64_t type, uint16_t num, uint16_t sub)
{
	uint64_t p = type & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (p & (p - 1))
		return 0;               /* more than one profile bit */
	if (p == BTRFS_BLOCK_GROUP_RAID10)
		return sub >= 2 && num >= sub && num % sub == 0;
	if (p == BTRFS_BLOCK_GROUP_DUP)
		return num == 2;
	if (p == BTRFS_BLOCK_GROUP_RAID1)
		return num == 2;
	if (p == BTRFS_BLOCK_GROUP_RAID1C3)
		return num == 3;
	if (p == BTRFS_BLOCK_GROUP_RAID1C4)
		return num == 4;
	if (p & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6))
		return num > parity_stripes(type);
	return p ? num >= 1 : num == 1;
}

/* The type bits the kernel accepts: one kind at least, system alone, data and metadata
 * together only with mixed block groups. */
static int chunk_type_ok(const struct fs *fs, uint64_t type)
{
	uint64_t kind = type & BTRFS_BLOCK_GROUP_TYPE_MASK, both = BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA;

	if (type & ~(BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_PROFILE_MASK) || !kind)
		return 0;
	if (kind & BTRFS_BLOCK_GROUP_SYSTEM)
		return kind == BTRFS_BLOCK_GROUP_SYSTEM;
	return (kind & both) != both || (get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS);
}

static int chunk_insert(struct fs *fs, const struct fs_chunk *c)
{
	int i;

	for (i = fs->num_chunks; i > 0 && fs->chunks[i - 1].logical > c->logical; i--)
		;
	if (i > 0 && fs->chunks[i - 1].logical + fs->chunks[i - 1].length > c->logical) {
		if (fs->chunks[i - 1].logical == c->logical && fs->chunks[i - 1].length == c->length)
			return 1;       /* already known (sys array and chunk tree) */
		return fs_err_at(&fs->err, -EUCLEAN, BTRFS_CHUNK_TREE_OBJECTID, c->logical,
				 "chunk overlaps the chunk at %llu", (unsigned long long)fs->chunks[i - 1].logical);
	}
	if (i < fs->num_chunks && c->logical + c->length > fs->chunks[i].logical)
		return fs_err_at(&fs->err, -EUCLEAN, BTRFS_CHUNK_TREE_OBJECTID, c->logical,
				 "chunk overlaps the chunk at %llu", (unsigned long long)fs->chunks[i].logical);
	if (fs->num_chunks == fs->cap_chunks) {
		int cap = fs->cap_chunks ? fs->cap_chunks * 2 : 16;
		struct fs_chunk *n = realloc(fs->chunks, (size_t)cap * sizeof(*n));
		if (!n)
			return fs_err(&fs->err, -ENOMEM, "out of memory for the chunk map");
		fs->chunks = n;
		fs->cap_chunks = cap;
	}
	memmove(&fs->chunks[i + 1], &fs->chunks[i], (size_t)(fs->num_chunks - i) * sizeof(*c));
	fs->chunks[i] = *c;
	fs->num_chunks++;
	return 0;
}

int fs_chunk_add(struct fs *fs, uint64_t logical, const struct btrfs_chunk *disk, uint32_t size)
{
	const struct btrfs_chunk *c = fs_chunk_item(disk, size);
	struct fs_chunk ch;
	int ret;

	if (!c || size != fs_chunk_item_size(get_le16(&c->num_stripes)))
		return fs_err_at(&fs->err, -EUCLEAN, BTRFS_CHUNK_TREE_OBJECTID, logical,
				 "chunk item size %u does not fit its stripes", size);
	ch.logical = logical;
	ch.length = get_le64(&c->length);
	ch.type = get_le64(&c->type);
	ch.stripe_len = get_le64(&c->stripe_len);
	ch.num_stripes = get_le16(&c->num_stripes);
	ch.sub_stripes = get_le16(&c->sub_stripes);
	/* as the kernel's chunk checker: aligned, stripes of 64 KiB and below 2^32 of them,
	 * the filesystem's sector size, a type it knows */
	if (!ch.length || logical + ch.length < logical || ch.stripe_len != 65536 ||
	    (fs->sectorsize && ((logical | ch.length) % fs->sectorsize ||
				get_le32(&c->sector_size) != fs->sectorsize)) ||
	    ch.length >= (0xffffffffULL << 16) || !chunk_type_ok(fs, ch.type) ||
	    !chunk_shape_ok(ch.type, ch.num_stripes, ch.sub_stripes))
		return fs_err_at(&fs->err, -EUCLEAN, BTRFS_CHUNK_TREE_OBJECTID, logical,
				 "invalid chunk (length %llu, stripe_len %llu, %u stripes, type 0x%llx, sector size %u)",
				 (unsigned long long)ch.length, (unsigned long long)ch.stripe_len,
				 ch.num_stripes, (unsigned long long)ch.type, get_le32(&c->sector_size));
	ch.stripes = calloc(ch.num_stripes, sizeof(*ch.stripes));
	if (!ch.stripes)
		return fs_err(&fs->err, -ENOMEM, "out of memory for the chunk map");
	for (uint16_t i = 0; i < ch.num_stripes; i++) {
		const struct btrfs_stripe *s = fs_chunk_stripe(c, i);
		ch.stripes[i].devid = get_le64(&s->devid);
		ch.stripes[i].offset = get_le64(&s->offset);
		memcpy(ch.stripes[i].dev_uuid, s->dev_uuid, BTRFS_UUID_SIZE);
		ch.stripes[i].dev = fs_stripe_device(fs, &ch.stripes[i]);
	}
	ret = chunk_insert(fs, &ch);
	if (ret)
		free(ch.stripes);
	return ret < 0 ? ret : 0;
}

/* The sys_chunk_array holds (btrfs_disk_key, btrfs_chunk + stripes) pairs. */
int fs_chunk_load_sys_array(struct fs *fs, const uint8_t *array, uint32_t size)
{
	uint32_t pos = 0;

	if (size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
		return fs_err(&fs->err, -EUCLEAN, "sys_chunk_array_size %u too large", size);
	while (pos < size) {
		struct fs_key key;
		uint32_t left, len;
		int ret;

		if (size - pos < sizeof(struct btrfs_disk_key) + sizeof(struct btrfs_chunk))
			return fs_err(&fs->err, -EUCLEAN, "sys_chunk_array truncated at %u", pos);
		fs_key_from_disk(&key, (const struct btrfs_disk_key *)(array + pos));
		pos += sizeof(struct btrfs_disk_key);
		if (key.type != BTRFS_CHUNK_ITEM_KEY)
			return fs_err(&fs->err, -EUCLEAN, "sys_chunk_array: key type %u is not a chunk", key.type);
		left = size - pos;
		len = fs_chunk_item_size(get_le16(&((const struct btrfs_chunk *)(array + pos))->num_stripes));
		if (!len || len > left)
			return fs_err(&fs->err, -EUCLEAN, "sys_chunk_array: chunk at %llu truncated",
				      (unsigned long long)key.offset);
		ret = fs_chunk_add(fs, key.offset, (const struct btrfs_chunk *)(array + pos), len);
		if (ret)
			return ret;
		pos += len;
	}
	return 0;
}

const struct fs_chunk *fs_chunk_find(const struct fs *fs, uint64_t logical)
{
	int lo = 0, hi = fs->num_chunks;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const struct fs_chunk *c = &fs->chunks[mid];
		if (logical < c->logical)
			hi = mid;
		else if (logical - c->logical >= c->length)
			lo = mid + 1;
		else
			return c;
	}
	return NULL;
}

static int chunk_copies(const struct fs_chunk *c)
{
	if (c->type & (BTRFS_BLOCK_GROUP_DUP | BTRFS_BLOCK_GROUP_RAID1 |
		       BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID1C4))
		return c->num_stripes;
	if (c->type & BTRFS_BLOCK_GROUP_RAID10)
		return c->sub_stripes;
	return 1;
}

int fs_num_copies(const struct fs *fs, uint64_t logical)
{
	const struct fs_chunk *c = fs_chunk_find(fs, logical);
	return c ? chunk_copies(c) : 0;
}

/* Picks the stripe and the offset inside it for byte `off` of the chunk. */
static void chunk_locate(const struct fs_chunk *c, uint64_t off, int mirror,
			 uint32_t *index, uint64_t *stripe_off)
{
	uint64_t nr = off / c->stripe_len, in = off % c->stripe_len;
	uint64_t p = c->type & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (p & BTRFS_BLOCK_GROUP_RAID0) {
		*index = (uint32_t)(nr % c->num_stripes);
		*stripe_off = nr / c->num_stripes * c->stripe_len + in;
	} else if (p & BTRFS_BLOCK_GROUP_RAID10) {
		uint32_t groups = c->num_stripes / c->sub_stripes;
		*index = (uint32_t)(nr % groups) * c->sub_stripes + (uint32_t)mirror;
		*stripe_off = nr / groups * c->stripe_len + in;
	} else if (p & (BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6)) {
		/* data stripe k of full stripe f sits on device (f + k) % num: parity rotates */
		uint32_t data = c->num_stripes - (uint32_t)parity_stripes(c->type);
		uint64_t full = nr / data;
		*index = (uint32_t)((full + nr % data) % c->num_stripes);
		*stripe_off = full * c->stripe_len + in;
	} else {
		*index = (uint32_t)mirror;       /* SINGLE, DUP, RAID1*: whole copies */
		*stripe_off = off;
	}
}

int fs_map(struct fs *fs, uint64_t logical, int mirror, struct fs_phys *out)
{
	const struct fs_chunk *c = fs_chunk_find(fs, logical);
	uint64_t off, stripe_off;
	uint32_t index;

	if (!c)
		return fs_err_at(&fs->err, -ENOENT, 0, logical, "logical address not mapped by any chunk");
	if (mirror <= 0)
		mirror = 1;
	if (mirror > chunk_copies(c))
		return fs_err_at(&fs->err, -EINVAL, 0, logical, "copy %d does not exist", mirror);
	off = logical - c->logical;
	chunk_locate(c, off, mirror - 1, &index, &stripe_off);
	out->devid = c->stripes[index].devid;
	out->dev = c->stripes[index].dev;
	out->physical = c->stripes[index].offset + stripe_off;
	if (c->type & BTRFS_BLOCK_GROUP_PROFILE_MASK & ~(BTRFS_BLOCK_GROUP_DUP | BTRFS_BLOCK_GROUP_RAID1 |
			BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID1C4))
		out->len = c->stripe_len - off % c->stripe_len;
	else
		out->len = c->length - off;
	return 0;
}

int fs_copy_missing(struct fs *fs, uint64_t logical, int mirror)
{
	struct fs_phys ph;

	return !fs_map(fs, logical, mirror, &ph) && !ph.dev;
}

void fs_copy_failed(struct fs *fs, uint64_t logical, int mirror, struct fs_error *first, int *first_missing)
{
	int missing = fs_copy_missing(fs, logical, mirror);

	if (mirror == 1 || (*first_missing && !missing)) {
		*first = fs->err;
		*first_missing = missing;
	}
	if (fs->bad_copy && !missing)
		fs->bad_copy(fs->bad_copy_ctx, &fs->err);
}

int fs_read_phys(struct fs_device *dev, uint64_t physical, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(dev->fd, p, len, (off_t)physical);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		physical += (uint64_t)n;
	}
	return 0;
}

/* A RAID5/6 piece whose device is missing, made again from the same full stripe:
 * the XOR of the other data stripes and P (Q is not needed for one lost device).
 * n stays inside one stripe (fs_map's len). */
static int read_rebuilt(struct fs *fs, uint64_t logical, uint8_t *buf, size_t n)
{
	const struct fs_chunk *c = fs_chunk_find(fs, logical);
	uint64_t off = logical - c->logical, nr = off / c->stripe_len;
	uint32_t data = c->num_stripes - (uint32_t)parity_stripes(c->type);
	uint64_t full = nr / data, stripe_off = full * c->stripe_len + off % c->stripe_len;
	uint32_t lost = (uint32_t)((full + nr % data) % c->num_stripes);
	uint8_t *tmp = malloc(n);

	if (!tmp)
		return fs_err_at(&fs->err, -ENOMEM, 0, logical, "out of memory");
	memset(buf, 0, n);
	for (uint32_t k = 0; k <= data; k++) {     /* data stripes, then P */
		const struct fs_chunk_stripe *st = &c->stripes[(full + k) % c->num_stripes];

		if (st == &c->stripes[lost])
			continue;
		if (!st->dev || fs_read_phys(st->dev, st->offset + stripe_off, tmp, n)) {
			free(tmp);
			return fs_err_at(&fs->err, -EIO, 0, logical,
					 "device %llu is missing and the parity cannot make it again",
					 (unsigned long long)c->stripes[lost].devid);
		}
		for (size_t i = 0; i < n; i++)
			buf[i] ^= tmp[i];
	}
	free(tmp);
	return 0;
}

static int is_parity_raid(const struct fs *fs, uint64_t logical)
{
	const struct fs_chunk *c = fs_chunk_find(fs, logical);

	return c && parity_stripes(c->type);
}

int fs_io_logical(struct fs *fs, uint64_t logical, void *buf, size_t len, int mirror, fs_io_fn io)
{
	uint8_t *p = buf;

	while (len) {
		struct fs_phys ph;
		size_t n;
		int ret = fs_map(fs, logical, mirror, &ph);

		if (ret)
			return ret;
		n = len < ph.len ? len : (size_t)ph.len;
		if (!ph.dev && !io && p && is_parity_raid(fs, logical))
			ret = read_rebuilt(fs, logical, p, n);
		else if (!ph.dev)
			ret = fs_err_at(&fs->err, -EIO, 0, logical, "device %llu is missing",
					(unsigned long long)ph.devid);
		else if (io)
			ret = io(fs, ph.dev, ph.physical, p, n);
		else if (fs_read_phys(ph.dev, ph.physical, p, n))
			ret = fs_err_at(&fs->err, -EIO, 0, logical, "read error on %s at %llu", ph.dev->path,
					(unsigned long long)ph.physical);
		if (ret) {
			fs->err.mirror = mirror;
			return ret;
		}
		p += p ? n : 0;
		len -= n;
		logical += n;
	}
	return 0;
}

int fs_read_logical(struct fs *fs, uint64_t logical, void *buf, size_t len, int mirror)
{
	return fs_io_logical(fs, logical, buf, len, mirror, NULL);
}

/* Device items (objectid DEV_ITEMS_OBJECTID) sort before the chunk items. */
static int load_chunk_tree_item(struct fs *fs, const struct fs_path *p)
{
	struct fs_key key;
	uint32_t size;
	const uint8_t *data = fs_path_data(p, &size);

	fs_path_key(p, &key);
	if (key.type == BTRFS_DEV_ITEM_KEY) {
		const struct btrfs_dev_item *d = fs_dev_item(data, size);
		struct fs_device *dev = d ? fs_device_by_id(fs, get_le64(&d->devid)) : NULL;
		if (dev)
			dev->total_bytes = get_le64(&d->total_bytes);
		return 0;
	}
	if (key.type != BTRFS_CHUNK_ITEM_KEY)
		return 0;
	return fs_chunk_add(fs, key.offset, (const struct btrfs_chunk *)data, size);
}

int fs_chunk_load_tree(struct fs *fs)
{
	struct fs_key key = { BTRFS_DEV_ITEMS_OBJECTID, 0, 0 };
	struct fs_root root;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &root);

	if (ret)
		return ret;
	fs_path_init(&p);
	ret = fs_search(fs, &root, &key, &p);
	while (ret == 0) {
		ret = load_chunk_tree_item(fs, &p);
		if (!ret)
			ret = fs_next(fs, &p);
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

/* Bytes one stripe of a chunk takes on its device. */
uint64_t fs_chunk_stripe_length(const struct fs_chunk *ch)
{
	uint64_t t = ch->type & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	uint64_t n = ch->num_stripes ? ch->num_stripes : 1;

	if (t & BTRFS_BLOCK_GROUP_RAID0)
		return ch->length / n;
	if (t & BTRFS_BLOCK_GROUP_RAID10)
		return ch->length * (ch->sub_stripes ? ch->sub_stripes : 2) / n;
	if (t & BTRFS_BLOCK_GROUP_RAID5)
		return n > 1 ? ch->length / (n - 1) : ch->length;
	if (t & BTRFS_BLOCK_GROUP_RAID6)
		return n > 2 ? ch->length / (n - 2) : ch->length;
	return ch->length;
}

void fs_chunk_remove(struct fs *fs, uint64_t logical)
{
	for (int i = 0; i < fs->num_chunks; i++)
		if (fs->chunks[i].logical == logical) {
			free(fs->chunks[i].stripes);
			memmove(&fs->chunks[i], &fs->chunks[i + 1], (size_t)(fs->num_chunks - i - 1) * sizeof(*fs->chunks));
			fs->num_chunks--;
			return;
		}
}

uint32_t fs_chunk_encode(const struct fs_chunk *ch, uint32_t sectorsize, uint8_t *buf)
{
	struct btrfs_chunk *c = (struct btrfs_chunk *)buf;
	uint32_t len = fs_chunk_item_size(ch->num_stripes);

	memset(buf, 0, len);
	put_le64(&c->length, ch->length);
	put_le64(&c->owner, BTRFS_EXTENT_TREE_OBJECTID);
	put_le64(&c->stripe_len, ch->stripe_len);
	put_le64(&c->type, ch->type);
	put_le32(&c->io_align, (uint32_t)ch->stripe_len);
	put_le32(&c->io_width, (uint32_t)ch->stripe_len);
	put_le32(&c->sector_size, sectorsize);
	put_le16(&c->num_stripes, ch->num_stripes);
	put_le16(&c->sub_stripes, ch->sub_stripes);
	for (uint16_t i = 0; i < ch->num_stripes; i++) {
		struct btrfs_stripe *s = &c->stripe + i;

		put_le64(&s->devid, ch->stripes[i].devid);
		put_le64(&s->offset, ch->stripes[i].offset);
		memcpy(s->dev_uuid, ch->stripes[i].dev_uuid, BTRFS_UUID_SIZE);
	}
	return len;
}
