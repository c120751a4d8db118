//build:Oz
/* Laying out a fresh filesystem (see mkfs.h).
 *
 * Order of work: chunks are placed on the devices first (SYSTEM, METADATA, DATA, or
 * SYSTEM and a mixed DATA|METADATA group); --rootdir data is then streamed into the
 * data chunks; every tree is built bottom-up from sorted items. The extent, free space
 * and block group trees describe the blocks of all trees including themselves, so
 * their sizes are found by iterating until the block counts stop changing. */
#include "config.h"
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/pio.h"
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1024 * 1024ULL)
#define GIB (1024 * MIB)
#define META_KIND (BTRFS_BLOCK_GROUP_METADATA)

int mkfs_fail(struct mkfs_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

uint32_t btrfs_name_hash(const char *name, size_t len)
{
	return crc32c_raw(~1u, name, len);
}

void mkfs_inode(struct btrfs_inode_item *ii, uint64_t size, uint64_t nbytes, uint32_t nlink,
		uint32_t mode, uint32_t uid, uint32_t gid, uint64_t rdev)
{
	memset(ii, 0, sizeof(*ii));
	put_le64(&ii->generation, MKFS_GENERATION);
	put_le64(&ii->transid, MKFS_GENERATION);
	put_le64(&ii->size, size);
	put_le64(&ii->nbytes, nbytes);
	put_le32(&ii->nlink, nlink);
	put_le32(&ii->uid, uid);
	put_le32(&ii->gid, gid);
	put_le32(&ii->mode, mode);
	put_le64(&ii->rdev, rdev);
}

static void put_time(struct btrfs_timespec *t, const struct timespec *ts)
{
	put_le64(&t->sec, (uint64_t)ts->tv_sec);
	put_le32(&t->nsec, (uint32_t)ts->tv_nsec);
}

void mkfs_inode_times(struct btrfs_inode_item *ii, const struct timespec *atime,
		      const struct timespec *ctime, const struct timespec *mtime)
{
	put_time(&ii->atime, atime);
	put_time(&ii->ctime, ctime);
	put_time(&ii->mtime, mtime);
	put_time(&ii->otime, ctime);
}

/* The data of an INODE_REF (index, name) in buf; returns its size. Several names of
 * one inode in one directory share an item: equal keys are joined after sorting. */
static uint32_t inode_ref_fill(uint8_t *buf, uint64_t index, const char *name, size_t len)
{
	struct btrfs_inode_ref *ref = (struct btrfs_inode_ref *)buf;

	put_le64(&ref->index, index);
	put_le16(&ref->name_len, (uint16_t)len);
	memcpy(buf + sizeof(*ref), name, len);
	return (uint32_t)(sizeof(*ref) + len);
}

static int inode_ref_add(struct item_list *l, uint64_t ino, uint64_t dir, uint64_t index,
			 const char *name, size_t len)
{
	uint8_t buf[sizeof(struct btrfs_inode_ref) + BTRFS_NAME_LEN_MAX];
	uint32_t size = inode_ref_fill(buf, index, name, len);

	return items_add(l, ino, BTRFS_INODE_REF_KEY, dir, buf, size) ? 0 : -1;
}

int mkfs_fs_add(struct mkfs_ctx *c, uint64_t objectid, uint8_t type, uint64_t offset,
		const void *data, uint32_t size)
{
	int ret = fs_items_add(c->fs, c->sv[c->cur].id, objectid, type, offset, data, size);

	if (ret)
		return mkfs_fail(c, "cannot store fs tree items in %s: %s",
				 c->cfg->tmpdir ? c->cfg->tmpdir : "/tmp", strerror(-ret));
	return 0;
}

int mkfs_subvol_new(struct mkfs_ctx *c, uint64_t parent, uint64_t dirid, uint64_t index,
		    const char *name, int ro)
{
	struct mkfs_subvol *sv = realloc(c->sv, (size_t)(c->nsv + 1) * sizeof(*sv));

	if (!sv)
		return mkfs_fail(c, "out of memory");
	c->sv = sv;
	sv += c->nsv;
	memset(sv, 0, sizeof(*sv));
	/* ids in walk order from 256 (the top level is 5) */
	sv->id = c->nsv == 1 ? BTRFS_FIRST_FREE_OBJECTID : sv[-1].id + 1;
	sv->parent = parent;
	sv->dirid = dirid;
	sv->index = index;
	snprintf(sv->name, sizeof(sv->name), "%s", name);
	sv->ro = ro;
	c->cur = c->nsv++;
	return 0;
}

int mkfs_add_inode_ref(struct mkfs_ctx *c, uint64_t ino, uint64_t dir, uint64_t index,
		       const char *name, size_t len)
{
	uint8_t buf[sizeof(struct btrfs_inode_ref) + BTRFS_NAME_LEN_MAX];
	uint32_t size = inode_ref_fill(buf, index, name, len);

	return mkfs_fs_add(c, ino, BTRFS_INODE_REF_KEY, dir, buf, size);
}

static void put_extent_item(uint8_t *p, uint64_t flags)
{
	struct btrfs_extent_item *ei = (struct btrfs_extent_item *)p;
	put_le64(&ei->refs, 1);
	put_le64(&ei->generation, MKFS_GENERATION);
	put_le64(&ei->flags, flags);
}

/* Largest csum item, as the kernel limits it: what fits in a leaf beside two item
 * headers, less one checksum. */
static uint32_t max_csum_item(const struct mkfs_ctx *c)
{
	uint32_t cs = (uint32_t)csum_size(c->cfg->csum_type);
	uint32_t room = c->cfg->nodesize - (uint32_t)sizeof(struct btrfs_header) -
			2 * (uint32_t)sizeof(struct btrfs_item);
	return (room / cs - 1) * cs;
}

/* Appends the csum item being filled to the csum spool. */
static int csum_flush(struct mkfs_ctx *c)
{
	struct csum_item_hdr h = { c->csum_start, c->csum_len, 0 };
	int ret;

	if (!c->csum_len)
		return 0;
	c->csum_len = 0;
	if ((ret = spool_write(&c->csum, &h, sizeof(h))) ||
	    (ret = spool_write(&c->csum, c->csum_item, h.size)))
		return mkfs_fail(c, "cannot write to %s: %s", c->csum.tmpdir, strerror(-ret));
	return 0;
}

/* Checksums of data written at increasing addresses: a run of adjacent sectors
 * shares one csum item until it reaches the largest size. */
static int add_csums(struct mkfs_ctx *c, uint64_t logical, const uint8_t *buf, uint64_t len)
{
	uint32_t ss = c->cfg->sectorsize, cs = (uint32_t)csum_size(c->cfg->csum_type);
	uint32_t max = max_csum_item(c);

	for (uint64_t off = 0; off < len; off += ss) {
		if (c->csum_len && (c->csum_start + (uint64_t)c->csum_len / cs * ss != logical + off ||
				    c->csum_len + cs > max) && csum_flush(c))
			return -1;
		if (!c->csum_len)
			c->csum_start = logical + off;
		csum_compute(c->cfg->csum_type, buf + off, ss, c->csum_item + c->csum_len);
		c->csum_len += cs;
	}
	return 0;
}

/* Data space is handed out upwards (the floor follows the last piece): extent and
 * csum items then come in key order and are spooled as they are made. */
static int data_taken(struct mkfs_ctx *c, uint64_t logical, uint64_t len)
{
	if (!logical)
		return mkfs_fail(c, "not enough space for the data of --rootdir");
	c->al.floor = logical + len;
	return 0;
}

int mkfs_data_alloc(struct mkfs_ctx *c, uint64_t maxlen, uint64_t *logical, uint64_t *len)
{
	*logical = alloc_space_upto(&c->al, BTRFS_BLOCK_GROUP_DATA, maxlen, c->cfg->sectorsize, len);
	return data_taken(c, *logical, *len);
}

int mkfs_data_alloc_exact(struct mkfs_ctx *c, uint64_t len, uint64_t *logical)
{
	*logical = alloc_space(&c->al, BTRFS_BLOCK_GROUP_DATA, len, c->cfg->sectorsize);
	return data_taken(c, *logical, len);
}

int mkfs_data_write(struct mkfs_ctx *c, uint64_t logical, const void *buf, uint64_t len)
{
	int ret = alloc_write(&c->al, logical, buf, len);

	if (ret)
		return mkfs_fail(c, "cannot write data: %s", strerror(-ret));
	return c->nodatasum ? 0 : add_csums(c, logical, buf, len);
}

/* A piece of rootdir data in the writer's ring (MKFS_THREADS; without it the ring
 * stays NULL and the calls below are compiled out). */
struct data_piece {
	const struct alloc_chunk *chunk;
	uint64_t logical, len;
	uint8_t data[];
};

static void write_piece(void *ctx, void *rec)
{
	struct mkfs_ctx *c = ctx;
	const struct data_piece *p = rec;

	if (!c->writer_err)
		c->writer_err = alloc_chunk_write(&c->al, p->chunk, p->logical, p->data, p->len);
}

static void writer_start(struct mkfs_ctx *c)
{
	if (CFG_MKFS_THREADS && c->cfg->writer_thread)
		workq_start(&c->writer, 4 * (sizeof(struct data_piece) + 8 + MKFS_DATA_PIECE), write_piece, c);
}

/* Waits for the writes; ret is what populating returned. */
static int writer_stop(struct mkfs_ctx *c, int ret)
{
	if (CFG_MKFS_THREADS)
		workq_stop(&c->writer);
	if (!ret && c->writer_err)
		ret = mkfs_fail(c, "cannot write data: %s", strerror(-c->writer_err));
	return ret;
}

uint8_t *mkfs_data_space(struct mkfs_ctx *c, uint8_t *fallback, size_t len)
{
	if (!CFG_MKFS_THREADS || !c->writer.ring)
		return fallback;
	return ((struct data_piece *)workq_reserve(&c->writer, sizeof(struct data_piece) + len))->data;
}

int mkfs_data_put(struct mkfs_ctx *c, uint64_t logical, uint8_t *buf, size_t len)
{
	struct data_piece *p;

	if (!CFG_MKFS_THREADS || !c->writer.ring)
		return mkfs_data_write(c, logical, buf, len);
	p = (struct data_piece *)(buf - offsetof(struct data_piece, data));
	p->chunk = alloc_chunk_of(&c->al, logical, len);
	if (!p->chunk)
		return mkfs_fail(c, "cannot write data: %s", strerror(EINVAL));
	p->logical = logical;
	p->len = len;
	/* the ring's bytes stay as they are until the next mkfs_data_space */
	workq_commit(&c->writer, sizeof(*p) + len);
	return c->nodatasum ? 0 : add_csums(c, logical, buf, len);
}

int mkfs_data_extent(struct mkfs_ctx *c, uint64_t ino, uint64_t off, uint64_t logical,
		     uint64_t len)
{
	struct data_extent_rec r = { logical, len, c->sv[c->cur].id, ino, off };
	int ret;

	if (logical < c->data_floor)    /* the extent tree merge relies on the order */
		return mkfs_fail(c, "data extents out of order");
	c->data_floor = logical + len;
	c->sv[c->cur].data_bytes += len;
	ret = spool_write(&c->data_ext, &r, sizeof(r));
	if (ret)
		return mkfs_fail(c, "cannot write to %s: %s", c->data_ext.tmpdir, strerror(-ret));
	return 0;
}

/* EXTENT_ITEM of a data extent with its inline EXTENT_DATA_REF (the type byte, then
 * the data ref in place of an offset). */
#define DATA_EXTENT_ITEM (sizeof(struct btrfs_extent_item) + 1 + sizeof(struct btrfs_extent_data_ref))
static void data_extent_item(uint8_t *item, const struct data_extent_rec *r)
{
	struct btrfs_extent_data_ref *dr = (struct btrfs_extent_data_ref *)(item + 25);

	put_extent_item(item, BTRFS_EXTENT_FLAG_DATA);
	item[sizeof(struct btrfs_extent_item)] = BTRFS_EXTENT_DATA_REF_KEY;
	put_le64(&dr->root, r->root);
	put_le64(&dr->objectid, r->ino);
	put_le64(&dr->offset, r->offset);
	put_le32(&dr->count, 1);
}

/* The extent tree's items: the in-memory list (block groups, tree blocks) merged
 * with the spooled data extents. */
struct ext_source {
	const struct item_list *l;
	size_t pos;
	struct spool *data;
	int dhave;                  /* d holds the next data extent: 1, 0 at the end, -1 unread */
	struct data_extent_rec d;
	uint8_t item[DATA_EXTENT_ITEM];
};

static int ext_next(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	struct ext_source *e = ctx;
	const struct bitem *it = e->pos < e->l->n ? &e->l->v[e->pos] : NULL;

	if (e->dhave < 0) {
		const void *p;
		e->dhave = spool_read(e->data, sizeof(e->d), &p);
		if (e->dhave < 0)
			return e->dhave;
		if (e->dhave)
			memcpy(&e->d, p, sizeof(e->d));
	}
	if (e->dhave) {
		struct fs_key dk = { e->d.logical, BTRFS_EXTENT_ITEM_KEY, e->d.len };
		if (!it || fs_key_cmp(&dk, &it->key) < 0) {
			data_extent_item(e->item, &e->d);
			*key = dk;
			*data = e->item;
			*size = sizeof(e->item);
			e->dhave = -1;
			return 1;
		}
	}
	if (!it)
		return 0;
	e->pos++;
	*key = it->key;
	*data = item_data(e->l, it);
	*size = it->size;
	return 1;
}

static struct item_source ext_source(struct mkfs_ctx *c, struct ext_source *e,
				     const struct item_list *l)
{
	memset(e, 0, sizeof(*e));
	e->l = l;
	e->data = &c->data_ext;
	e->dhave = -1;
	spool_rewind(&c->data_ext);     /* written already (make): only moves to the start */
	return (struct item_source){ ext_next, e };
}

static int csum_next(void *ctx, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	struct spool *s = ctx;
	struct csum_item_hdr h;
	const void *p;
	int ret = spool_read(s, sizeof(h), &p);

	if (ret != 1)
		return ret;
	memcpy(&h, p, sizeof(h));
	if (h.size > SPOOL_BUF)
		return -EIO;
	ret = spool_read(s, h.size, &p);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	*key = (struct fs_key){ BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, h.logical };
	*data = p;
	*size = h.size;
	return 1;
}

static struct item_source csum_source(struct mkfs_ctx *c)
{
	spool_rewind(&c->csum);     /* written already: only moves to the start */
	return (struct item_source){ csum_next, &c->csum };
}

/* ---- chunk layout ---- */

static uint64_t round_down(uint64_t v, uint64_t a) { return v / a * a; }
static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static uint64_t fs_bytes(const struct mkfs_ctx *c)
{
	uint64_t t = 0;
	for (int i = 0; i < c->al.ndevs; i++)
		t += c->al.devs[i].size;
	return t;
}

/* Device extent size for a chunk that should hold `want` logical bytes. */
static uint64_t stripe_for(const struct mkfs_ctx *c, uint64_t profile, uint64_t want)
{
	int ns = profile_num_stripes(profile, c->al.ndevs);
	int nd = profile_data_stripes(profile, ns);
	return round_up((want + nd - 1) / nd, ALLOC_STRIPE_LEN);
}

static int add_chunk(struct mkfs_ctx *c, uint64_t type, uint64_t want, const char *what)
{
	if (!alloc_chunk_add(&c->al, type, stripe_for(c, type, want)))
		return mkfs_fail(c, errno == ENOSPC ?
				 "device too small for the %s block group (%s, %llu bytes)" :
				 "cannot lay out the %s block group (%s, %llu bytes)",
				 what, fs_profile_name(type), (unsigned long long)want);
	return 0;
}

/* Data chunks are at most 1 GiB each (as the kernel allocates them). */
static int add_data_chunks(struct mkfs_ctx *c, uint64_t type, uint64_t want, const char *what)
{
	do {
		uint64_t n = want > GIB ? GIB : want;
		if (add_chunk(c, type, n, what))
			return -1;
		want -= n;
	} while (want);
	return 0;
}

/* tight: --rootdir on a device too small for the usual chunk sizes: only what the
 * estimate needs (data, a MiB for the stripes around superblock copies; metadata
 * twice its items and 4 MiB, as below), a 4 MiB system chunk. */
static int layout_chunks(struct mkfs_ctx *c, const struct rootdir_estimate *est, int tight)
{
	const struct mkfs_config *cfg = c->cfg;
	uint64_t total = fs_bytes(c), meta, data, sys = 8 * MIB;
	uint64_t mprof = cfg->meta_profile, dprof = cfg->data_profile;

	/* metadata: a tenth of the filesystem split over its copies, at most 256 MiB
	 * (1 GiB above 50 GiB), at least 32 MiB or what --rootdir needs (twice its items:
	 * leaves filled greedily can waste up to half of each block with large items) */
	meta = total / 10 / profile_copies(mprof);
	if (meta > (total > 50 * GIB ? GIB : 256 * MIB))
		meta = total > 50 * GIB ? GIB : 256 * MIB;
	if (meta < 32 * MIB)
		meta = 32 * MIB;
	if (est->meta_bytes * 2 + 4 * MIB > meta)
		meta = round_up(est->meta_bytes * 2 + 4 * MIB, MIB);
	data = est->data_bytes ? round_up(est->data_bytes + est->data_bytes / 16 + 8 * MIB, MIB) : 8 * MIB;
	if (total < 256 * MIB && !est->data_bytes) {
		sys = 4 * MIB;
		meta = 16 * MIB;
	}
	if (tight) {
		sys = 4 * MIB;
		meta = round_up(est->meta_bytes * 2 + 4 * MIB, MIB);
		data = round_up(est->data_bytes + MIB, MIB);
	}
	meta = round_down(meta, ALLOC_STRIPE_LEN);
	if (add_chunk(c, BTRFS_BLOCK_GROUP_SYSTEM | mprof, sys, "system"))
		return -1;
	if (cfg->mixed)
		return add_data_chunks(c, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA | dprof,
				       round_up(meta + data, MIB), "mixed data and metadata");
	if (add_chunk(c, BTRFS_BLOCK_GROUP_METADATA | mprof, meta, "metadata"))
		return -1;
	return add_data_chunks(c, BTRFS_BLOCK_GROUP_DATA | dprof, data, "data");
}

/* ---- trees ---- */

enum tree_id { T_CHUNK, T_DEV, T_FS, T_CSUM, T_UUID, T_RELOC, T_QUOTA, T_ROOT, T_FST, T_BGT,
	       T_EXTENT, T_COUNT };

static const uint64_t tree_owner[T_COUNT] = {
	BTRFS_CHUNK_TREE_OBJECTID, BTRFS_DEV_TREE_OBJECTID, BTRFS_FS_TREE_OBJECTID,
	BTRFS_CSUM_TREE_OBJECTID, BTRFS_UUID_TREE_OBJECTID, BTRFS_DATA_RELOC_TREE_OBJECTID,
	BTRFS_QUOTA_TREE_OBJECTID, BTRFS_ROOT_TREE_OBJECTID, BTRFS_FREE_SPACE_TREE_OBJECTID,
	BTRFS_BLOCK_GROUP_TREE_OBJECTID, BTRFS_EXTENT_TREE_OBJECTID,
};

struct tree {
	struct item_list items;
	struct tree_shape shape;
	uint64_t *addrs;
	int present;
};

/* The fixed trees, then the --subvol trees: tree k >= T_COUNT is subvolume
 * c->sv[k - T_COUNT + 1] (written right after T_FS: their items follow its items). */
struct trees {
	struct tree t[T_COUNT];
	struct tree *sub;
	int nsub;
};

/* The number of --subvol trees (none in a build without --rootdir). */
static int nsub(const struct trees *T)
{
	return CFG_MKFS_ROOTDIR ? T->nsub : 0;
}

static struct tree *tree_k(struct trees *T, int k)
{
	return k < T_COUNT ? &T->t[k] : &T->sub[k - T_COUNT];
}

static uint64_t owner_k(const struct mkfs_ctx *c, int k)
{
	return k < T_COUNT ? tree_owner[k] : c->sv[k - T_COUNT + 1].id;
}

static int chunk_item(const struct mkfs_ctx *c, const struct alloc_chunk *ch, uint8_t *buf)
{
	struct btrfs_chunk *ci = (struct btrfs_chunk *)buf;
	int len = (int)(sizeof(*ci) + (ch->num_stripes - 1) * sizeof(struct btrfs_stripe));

	memset(buf, 0, (size_t)len);
	put_le64(&ci->length, ch->length);
	put_le64(&ci->owner, BTRFS_EXTENT_TREE_OBJECTID);
	put_le64(&ci->stripe_len, ALLOC_STRIPE_LEN);
	put_le64(&ci->type, ch->type);
	put_le32(&ci->io_align, ALLOC_STRIPE_LEN);
	put_le32(&ci->io_width, ALLOC_STRIPE_LEN);
	put_le32(&ci->sector_size, c->cfg->sectorsize);
	put_le16(&ci->num_stripes, (uint16_t)ch->num_stripes);
	put_le16(&ci->sub_stripes, (uint16_t)ch->sub_stripes);
	for (int i = 0; i < ch->num_stripes; i++) {
		struct btrfs_stripe *s = &ci->stripe + i;
		const struct alloc_dev *d = &c->al.devs[ch->stripe[i].dev];
		put_le64(&s->devid, d->devid);
		put_le64(&s->offset, ch->stripe[i].phys);
		memcpy(s->dev_uuid, d->uuid, BTRFS_UUID_SIZE);
	}
	return len;
}

static void dev_item(const struct mkfs_ctx *c, int i, struct btrfs_dev_item *di)
{
	const struct alloc_dev *d = &c->al.devs[i];

	memset(di, 0, sizeof(*di));
	put_le64(&di->devid, d->devid);
	put_le64(&di->total_bytes, d->size);
	put_le64(&di->bytes_used, alloc_dev_used(&c->al, i));
	put_le32(&di->io_align, c->cfg->sectorsize);
	put_le32(&di->io_width, c->cfg->sectorsize);
	put_le32(&di->sector_size, c->cfg->sectorsize);
	memcpy(di->uuid, d->uuid, BTRFS_UUID_SIZE);
	memcpy(di->fsid, c->cfg->fsid, BTRFS_FSID_SIZE);
}

#define ADD(l, o, t, off, d, s) do { if (!items_add(l, o, t, off, d, s)) return mkfs_fail(c, "out of memory"); } while (0)

static int build_chunk_and_dev_trees(struct mkfs_ctx *c, struct trees *T)
{
	uint8_t buf[sizeof(struct btrfs_chunk) + ALLOC_MAX_DEVS * sizeof(struct btrfs_stripe)];

	for (int i = 0; i < c->al.ndevs; i++) {
		struct btrfs_dev_item di;
		dev_item(c, i, &di);
		ADD(&T->t[T_CHUNK].items, BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY,
		    c->al.devs[i].devid, &di, sizeof(di));
	}
	for (int k = 0; k < c->al.nchunks; k++) {
		const struct alloc_chunk *ch = &c->al.chunks[k];
		int len = chunk_item(c, ch, buf);
		ADD(&T->t[T_CHUNK].items, BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY,
		    ch->logical, buf, (uint32_t)len);
		for (int i = 0; i < ch->num_stripes; i++) {
			struct btrfs_dev_extent de;
			memset(&de, 0, sizeof(de));
			put_le64(&de.chunk_tree, BTRFS_CHUNK_TREE_OBJECTID);
			put_le64(&de.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
			put_le64(&de.chunk_offset, ch->logical);
			put_le64(&de.length, ch->stripe_size);
			memcpy(de.chunk_tree_uuid, c->cfg->chunk_uuid, BTRFS_UUID_SIZE);
			ADD(&T->t[T_DEV].items, c->al.devs[ch->stripe[i].dev].devid,
			    BTRFS_DEV_EXTENT_KEY, ch->stripe[i].phys, &de, sizeof(de));
		}
	}
	return 0;
}

/* Root directory inode 256 with its ".." back reference (fs tree and data reloc tree). */
static int add_root_dir(struct mkfs_ctx *c, struct item_list *l, uint64_t size, uint32_t mode,
			uint32_t uid, uint32_t gid, const struct timespec *times)
{
	struct btrfs_inode_item ii;

	mkfs_inode(&ii, size, 0, 1, mode, uid, gid, 0);
	mkfs_inode_times(&ii, &times[0], &times[1], &times[2]);
	ADD(l, BTRFS_FIRST_FREE_OBJECTID, BTRFS_INODE_ITEM_KEY, 0, &ii, sizeof(ii));
	if (inode_ref_add(l, BTRFS_FIRST_FREE_OBJECTID, BTRFS_FIRST_FREE_OBJECTID, 0, "..", 2))
		return mkfs_fail(c, "out of memory");
	return 0;
}

/* The UUID of subvolume id: the top level's, or one that follows from it. */
static void subvol_uuid(const struct mkfs_ctx *c, uint64_t id, uint8_t *u)
{
	memcpy(u, c->cfg->fs_root_uuid, BTRFS_UUID_SIZE);
	if (id != BTRFS_FS_TREE_OBJECTID)
		put_le64(u + 8, get_le64(u + 8) ^ (id * 0x9E3779B97F4A7C15ULL));
}

/* The quota tree: quotas on, a qgroup 0/ID for each subvolume. Qgroups: every tree
 * block and data extent of a subvolume is its own (nothing is shared yet). Simple
 * quotas count what is made from the next generation on (as 6.19, the --rootdir data
 * is not counted). */
static int build_quota_items(struct mkfs_ctx *c, struct trees *T)
{
	struct item_list *l = &T->t[T_QUOTA].items;
	struct btrfs_qgroup_status_v2 st;
	int simple = c->cfg->quota == MKFS_SQUOTA;

	memset(&st, 0, sizeof(st));
	put_le64(&st.version, 1);
	put_le64(&st.generation, MKFS_GENERATION);
	put_le64(&st.flags, BTRFS_QGROUP_STATUS_FLAG_ON | (simple ? BTRFS_QGROUP_STATUS_FLAG_SIMPLE : 0));
	if (simple)
		put_le64(&st.enable_gen, MKFS_GENERATION + 1);
	ADD(l, 0, BTRFS_QGROUP_STATUS_KEY, 0, &st, sizeof(st));
	for (int i = 0; i < c->nsv; i++) {
		const struct tree *t = i ? &T->sub[i - 1] : &T->t[T_FS];
		uint64_t bytes = simple ? 0 : c->sv[i].data_bytes + (uint64_t)t->shape.nblocks * c->cfg->nodesize;
		struct btrfs_qgroup_info_item info = { 0 };
		struct btrfs_qgroup_limit_item limit = { 0 };

		put_le64(&info.generation, MKFS_GENERATION);
		put_le64(&info.rfer, bytes);
		put_le64(&info.rfer_cmpr, bytes);
		put_le64(&info.excl, bytes);
		put_le64(&info.excl_cmpr, bytes);
		ADD(l, 0, BTRFS_QGROUP_INFO_KEY, c->sv[i].id, &info, sizeof(info));
		ADD(l, 0, BTRFS_QGROUP_LIMIT_KEY, c->sv[i].id, &limit, sizeof(limit));
	}
	return 0;
}

static int build_small_trees(struct mkfs_ctx *c, struct trees *T)
{
	struct timespec now = { (time_t)c->cfg->now, 0 }, times[3] = { now, now, now };

	if (add_root_dir(c, &T->t[T_RELOC].items, 0, 040755, 0, 0, times))
		return -1;
	for (int i = 0; i < c->nsv; i++) {
		uint8_t u[BTRFS_UUID_SIZE], id[8];

		/* uuid tree key: (first 8 uuid bytes, SUBVOL, last 8 bytes), both little-endian */
		subvol_uuid(c, c->sv[i].id, u);
		put_le64(id, c->sv[i].id);
		ADD(&T->t[T_UUID].items, get_le64(u), BTRFS_UUID_KEY_SUBVOL, get_le64(u + 8), id, 8);
	}
	return CFG_MKFS_QUOTA && T->t[T_QUOTA].present ? build_quota_items(c, T) : 0;
}

/* Allocates blocks for a tree of the given shape. */
static int place_tree(struct mkfs_ctx *c, struct tree *t, uint64_t kind)
{
	free(t->addrs);
	t->addrs = calloc(t->shape.nblocks, sizeof(uint64_t));
	if (!t->addrs)
		return mkfs_fail(c, "out of memory");
	for (uint32_t i = 0; i < t->shape.nblocks; i++) {
		t->addrs[i] = alloc_space(&c->al, kind, c->cfg->nodesize, c->cfg->nodesize);
		if (!t->addrs[i])
			return mkfs_fail(c, "not enough metadata space");
	}
	return 0;
}

static int shape_of(struct mkfs_ctx *c, struct tree *t, const char *name)
{
	items_sort(&t->items);
	if (tree_shape(&t->items, c->cfg->nodesize, &t->shape))
		return mkfs_fail(c, "an item of the %s tree does not fit in a node", name);
	return 0;
}


/* Extent tree items but the data extents (ext_source adds them): block groups
 * (unless in their own tree) and every tree block. */
static int build_extent_items(struct mkfs_ctx *c, struct trees *T, struct item_list *l)
{
	int skinny = !!(c->cfg->incompat & BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);
	int bgt = T->t[T_BGT].present;

	items_free(l);
	items_free(&T->t[T_BGT].items);
	for (int k = 0; k < c->al.nchunks; k++) {
		const struct alloc_chunk *ch = &c->al.chunks[k];
		struct btrfs_block_group_item bg;
		put_le64(&bg.used, ch->used);
		put_le64(&bg.chunk_objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
		put_le64(&bg.flags, ch->type);
		ADD(bgt ? &T->t[T_BGT].items : l, ch->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, ch->length,
		    &bg, sizeof(bg));
	}
	for (int t = 0; t < T_COUNT + nsub(T); t++) {
		struct tree *tr = tree_k(T, t);
		if (!tr->present)
			continue;
		for (uint32_t b = 0; b < tr->shape.nblocks; b++) {
			uint8_t buf[24 + sizeof(struct btrfs_tree_block_info) + 9];
			uint8_t level = tree_block_level(&tr->shape, b);
			uint8_t *ref = buf + 24;

			put_extent_item(buf, BTRFS_EXTENT_FLAG_TREE_BLOCK);
			if (!skinny) {
				struct btrfs_tree_block_info *tbi = (struct btrfs_tree_block_info *)ref;
				memset(tbi, 0, sizeof(*tbi));
				tbi->level = level;
				ref += sizeof(*tbi);
			}
			ref[0] = BTRFS_TREE_BLOCK_REF_KEY;
			put_le64(ref + 1, owner_k(c, t));
			if (skinny)
				ADD(l, tr->addrs[b], BTRFS_METADATA_ITEM_KEY, level, buf, (uint32_t)(ref + 9 - buf));
			else
				ADD(l, tr->addrs[b], BTRFS_EXTENT_ITEM_KEY, c->cfg->nodesize, buf,
				    (uint32_t)(ref + 9 - buf));
		}
	}
	items_sort(l);
	return 0;
}

/* Length of the extent an extent tree item describes (0: not an extent). */
static uint64_t extent_len(const struct mkfs_ctx *c, const struct fs_key *k)
{
	if (k->type == BTRFS_METADATA_ITEM_KEY)
		return c->cfg->nodesize;
	if (k->type == BTRFS_EXTENT_ITEM_KEY)
		return k->offset;
	return 0;
}

/* Free space tree: for each block group an info item and one item per free range
 * (the block group minus its extents, superblock stripes included as free). */
static int build_fst_items(struct mkfs_ctx *c, const struct item_source *ext, struct item_list *l)
{
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;
	int have = ext->next(ext->ctx, &key, &data, &size);

	items_free(l);
	for (int k = 0; k < c->al.nchunks; k++) {
		const struct alloc_chunk *ch = &c->al.chunks[k];
		uint64_t pos = ch->logical, end = ch->logical + ch->length;
		size_t info = l->n;
		uint32_t count = 0;
		struct btrfs_free_space_info fi = { 0, 0 };

		ADD(l, ch->logical, BTRFS_FREE_SPACE_INFO_KEY, ch->length, &fi, sizeof(fi));
		for (; have == 1 && key.objectid < end; have = ext->next(ext->ctx, &key, &data, &size)) {
			uint64_t len = extent_len(c, &key);
			if (!len || key.objectid < ch->logical)
				continue;
			if (key.objectid > pos) {
				ADD(l, pos, BTRFS_FREE_SPACE_EXTENT_KEY, key.objectid - pos, NULL, 0);
				count++;
			}
			pos = key.objectid + len;
		}
		if (have < 0)
			break;
		if (pos < end) {
			ADD(l, pos, BTRFS_FREE_SPACE_EXTENT_KEY, end - pos, NULL, 0);
			count++;
		}
		put_le32(l->arena + l->v[info].data, count);
	}
	if (have < 0)
		return mkfs_fail(c, "cannot read the data extents back: %s", strerror(-have));
	items_sort(l);
	return 0;
}

static int same_shape(const struct tree_shape *a, const struct tree_shape *b)
{
	return a->nblocks == b->nblocks && a->level == b->level;
}

/* Places the extent, free space and block group trees. Their contents depend on
 * where all blocks are, their own included: start from one leaf each and grow until
 * the shapes computed from the contents match the shapes placed. */
static int place_self_describing_trees(struct mkfs_ctx *c, struct trees *T)
{
	static const int ids[] = { T_FST, T_BGT, T_EXTENT };
	struct alloc_mark *mark = malloc(sizeof(*mark));
	struct ext_source es;
	struct item_source src;
	int ret = -1;

	if (!mark)
		return mkfs_fail(c, "out of memory");
	alloc_save(&c->al, mark);
	for (size_t k = 0; k < 3; k++)
		T->t[ids[k]].shape = (struct tree_shape){ .nblocks = 1, .width = { 1 } };
	for (int round = 0; round < 16; round++) {
		struct tree_shape want[3];
		int stable = 1;

		alloc_restore(&c->al, mark);
		for (size_t k = 0; k < 3; k++)
			if (T->t[ids[k]].present && place_tree(c, &T->t[ids[k]], META_KIND))
				goto out;
		if (build_extent_items(c, T, &T->t[T_EXTENT].items))
			goto out;
		src = ext_source(c, &es, &T->t[T_EXTENT].items);
		if (T->t[T_FST].present && build_fst_items(c, &src, &T->t[T_FST].items))
			goto out;
		for (size_t k = 0; k < 3; k++) {
			struct tree *t = &T->t[ids[k]];
			int r;
			if (!t->present)
				continue;
			items_sort(&t->items);
			if (ids[k] == T_EXTENT) {
				src = ext_source(c, &es, &t->items);
				r = tree_shape_source(&src, c->cfg->nodesize, &want[k]);
			} else {
				r = tree_shape(&t->items, c->cfg->nodesize, &want[k]);
			}
			if (r < -1) {
				mkfs_fail(c, "cannot read the data extents back: %s", strerror(-r));
				goto out;
			}
			if (r)
				goto out_fit;
			if (!same_shape(&want[k], &t->shape))
				stable = 0;
			t->shape = want[k];
		}
		if (stable) {
			ret = 0;
			goto out;
		}
	}
	mkfs_fail(c, "extent tree layout did not settle");
	goto out;
out_fit:
	mkfs_fail(c, "an extent item does not fit in a node");
out:
	free(mark);
	return ret;
}

/* subvol: 0 an internal tree, 1 a tree with a root directory, 2 a subvolume (the top
 * level or --subvol sv) */
static void root_item(const struct mkfs_ctx *c, const struct tree *t, struct btrfs_root_item *ri,
		      int subvol, const struct mkfs_subvol *sv)
{
	struct timespec now = { (time_t)c->cfg->now, 0 };

	memset(ri, 0, sizeof(*ri));
	mkfs_inode(&ri->inode, 3, c->cfg->nodesize, 1, 040755, 0, 0, 0);
	put_le64(&ri->generation, MKFS_GENERATION);
	put_le64(&ri->bytenr, t->addrs[t->shape.nblocks - 1]);
	put_le64(&ri->bytes_used, (uint64_t)t->shape.nblocks * c->cfg->nodesize);
	put_le32(&ri->refs, 1);
	ri->level = t->shape.level;
	put_le64(&ri->generation_v2, MKFS_GENERATION);
	if (subvol)
		put_le64(&ri->root_dirid, BTRFS_FIRST_FREE_OBJECTID);
	if (subvol == 2) {
		/* without this flag the kernel clears the root item flags (read-only) */
		put_le64(&ri->inode.flags, BTRFS_INODE_ROOT_ITEM_INIT);
		subvol_uuid(c, sv->id, ri->uuid);
		put_time(&ri->ctime, &now);
		put_time(&ri->otime, &now);
		if (sv->ro)
			put_le64(&ri->flags, BTRFS_ROOT_SUBVOL_RDONLY);
	}
}

/* ROOT_REF in the parent's and ROOT_BACKREF in the subvolume's key of the root tree:
 * where the subvolume's directory entry is. */
static int add_root_refs(struct mkfs_ctx *c, struct item_list *l, const struct mkfs_subvol *sv)
{
	uint8_t buf[sizeof(struct btrfs_root_ref) + BTRFS_NAME_LEN_MAX];
	struct btrfs_root_ref *ref = (struct btrfs_root_ref *)buf;
	uint16_t len = (uint16_t)strlen(sv->name);

	put_le64(&ref->dirid, sv->dirid);
	put_le64(&ref->sequence, sv->index);
	put_le16(&ref->name_len, len);
	memcpy(buf + sizeof(*ref), sv->name, len);
	ADD(l, sv->parent, BTRFS_ROOT_REF_KEY, sv->id, buf, sizeof(*ref) + len);
	ADD(l, sv->id, BTRFS_ROOT_BACKREF_KEY, sv->parent, buf, sizeof(*ref) + len);
	return 0;
}

static int build_root_tree(struct mkfs_ctx *c, struct trees *T)
{
	static const struct { int id, subvol; } roots[] = {
		{ T_EXTENT, 0 }, { T_DEV, 0 }, { T_FS, 2 }, { T_CSUM, 0 }, { T_QUOTA, 0 },
		{ T_UUID, 0 }, { T_FST, 0 }, { T_BGT, 0 }, { T_RELOC, 1 },
	};
	struct item_list *l = &T->t[T_ROOT].items;
	struct timespec now = { (time_t)c->cfg->now, 0 };
	struct btrfs_inode_item ii;
	uint8_t buf[sizeof(struct btrfs_dir_item) + 8];
	struct btrfs_dir_item *di = (struct btrfs_dir_item *)buf;

	items_free(l);
	for (size_t k = 0; k < sizeof(roots) / sizeof(roots[0]); k++) {
		struct btrfs_root_item ri;
		const struct tree *t = &T->t[roots[k].id];
		if (!t->present)
			continue;
		if (t->addrs)
			root_item(c, t, &ri, roots[k].subvol, c->sv);
		else
			memset(&ri, 0, sizeof(ri));  /* sizing pass: values come later */
		ADD(l, tree_owner[roots[k].id], BTRFS_ROOT_ITEM_KEY, 0, &ri, sizeof(ri));
	}
	for (int i = 0; i < nsub(T); i++) {
		struct btrfs_root_item ri;
		const struct mkfs_subvol *sv = &c->sv[i + 1];

		if (T->sub[i].addrs)
			root_item(c, &T->sub[i], &ri, 2, sv);
		else
			memset(&ri, 0, sizeof(ri));
		ADD(l, sv->id, BTRFS_ROOT_ITEM_KEY, 0, &ri, sizeof(ri));
		if (add_root_refs(c, l, sv))
			return -1;
	}
	/* the root tree directory (objectid 6) with "default" pointing at the top subvolume */
	mkfs_inode(&ii, 0, 0, 1, 040755, 0, 0, 0);
	mkfs_inode_times(&ii, &now, &now, &now);
	ADD(l, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_INODE_ITEM_KEY, 0, &ii, sizeof(ii));
	if (inode_ref_add(l, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_ROOT_TREE_DIR_OBJECTID, 0, "..", 2))
		return mkfs_fail(c, "out of memory");
	memset(buf, 0, sizeof(buf));
	put_le64(&di->location.objectid, c->default_id ? c->default_id : BTRFS_FS_TREE_OBJECTID);
	di->location.type = BTRFS_ROOT_ITEM_KEY;
	put_le64(&di->location.offset, c->default_id ? 0 : (uint64_t)-1);
	put_le16(&di->name_len, 7);
	di->type = BTRFS_FT_DIR;
	memcpy(buf + sizeof(*di), "default", 7);
	ADD(l, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY, btrfs_name_hash("default", 7),
	    buf, sizeof(*di) + 7);
	items_sort(l);
	return 0;
}

static int write_block(void *ctx, uint64_t bytenr, const void *buf, uint32_t len)
{
	return alloc_write(&((struct mkfs_ctx *)ctx)->al, bytenr, buf, len);
}

static int write_trees(struct mkfs_ctx *c, struct trees *T)
{
	for (int k = 0; k < T_COUNT + nsub(T); k++) {
		/* the subvolume trees in the order of their items: T_FS, then the others */
		int t = k <= T_FS ? k : k <= T_FS + nsub(T) ? T_COUNT + k - T_FS - 1 : k - nsub(T);
		struct tree *tr = tree_k(T, t);
		struct tree_params p = {
			.nodesize = c->cfg->nodesize, .csum_type = c->cfg->csum_type,
			.owner = owner_k(c, t), .generation = MKFS_GENERATION,
			.fsid = c->cfg->fsid, .chunk_tree_uuid = c->cfg->chunk_uuid,
			.write_block = write_block, .ctx = c,
		};
		struct list_source ls;
		struct ext_source es;
		struct item_source src = t == T_FS ? fs_items_source(c->fs, 0) :
					 t >= T_COUNT ? fs_items_source(c->fs, t - T_COUNT + 1) :
					 t == T_CSUM ? csum_source(c) :
					 t == T_EXTENT ? ext_source(c, &es, &tr->items) :
					 list_source(&ls, &tr->items);
		int ret;

		if (!tr->present)
			continue;
		ret = tree_write_source(&src, &p, tr->addrs, tr->shape.nblocks);
		if (ret)
			return mkfs_fail(c, "cannot write tree blocks: %s", strerror(-ret));
	}
	return 0;
}

static uint64_t root_of(const struct tree *t)
{
	return t->addrs[t->shape.nblocks - 1];
}

static void fill_backup_root(const struct mkfs_ctx *c, const struct trees *T,
			     struct btrfs_super_block *sb, uint64_t used)
{
	struct btrfs_root_backup *b = &sb->super_roots[0];
	const struct tree *t = T->t;

	put_le64(&b->tree_root, root_of(&t[T_ROOT]));
	put_le64(&b->chunk_root, root_of(&t[T_CHUNK]));
	put_le64(&b->extent_root, root_of(&t[T_EXTENT]));
	put_le64(&b->fs_root, root_of(&t[T_FS]));
	put_le64(&b->dev_root, root_of(&t[T_DEV]));
	put_le64(&b->csum_root, root_of(&t[T_CSUM]));
	put_le64(&b->tree_root_gen, MKFS_GENERATION);
	put_le64(&b->chunk_root_gen, MKFS_GENERATION);
	put_le64(&b->extent_root_gen, MKFS_GENERATION);
	put_le64(&b->fs_root_gen, MKFS_GENERATION);
	put_le64(&b->dev_root_gen, MKFS_GENERATION);
	put_le64(&b->csum_root_gen, MKFS_GENERATION);
	b->tree_root_level = t[T_ROOT].shape.level;
	b->chunk_root_level = t[T_CHUNK].shape.level;
	b->extent_root_level = t[T_EXTENT].shape.level;
	b->fs_root_level = t[T_FS].shape.level;
	b->dev_root_level = t[T_DEV].shape.level;
	b->csum_root_level = t[T_CSUM].shape.level;
	put_le64(&b->total_bytes, fs_bytes(c));
	put_le64(&b->bytes_used, used);
	put_le64(&b->num_devices, (uint64_t)c->al.ndevs);
}

/* The superblock common to all devices (dev_item, bytenr and csum set per copy). */
static int build_super(struct mkfs_ctx *c, const struct trees *T, struct btrfs_super_block *sb)
{
	const struct mkfs_config *cfg = c->cfg;
	uint64_t used = 0;
	uint32_t array = 0;

	memset(sb, 0, sizeof(*sb));
	memcpy(sb->fsid, cfg->fsid, BTRFS_FSID_SIZE);
	put_le64(&sb->flags, BTRFS_HEADER_FLAG_WRITTEN);
	put_le64(&sb->magic, BTRFS_MAGIC_LE);
	put_le64(&sb->generation, MKFS_GENERATION);
	put_le64(&sb->root, root_of(&T->t[T_ROOT]));
	sb->root_level = T->t[T_ROOT].shape.level;
	put_le64(&sb->chunk_root, root_of(&T->t[T_CHUNK]));
	sb->chunk_root_level = T->t[T_CHUNK].shape.level;
	put_le64(&sb->chunk_root_generation, MKFS_GENERATION);
	put_le64(&sb->total_bytes, fs_bytes(c));
	for (int k = 0; k < c->al.nchunks; k++)
		used += c->al.chunks[k].used;
	put_le64(&sb->bytes_used, used);
	put_le64(&sb->root_dir_objectid, BTRFS_ROOT_TREE_DIR_OBJECTID);
	put_le64(&sb->num_devices, (uint64_t)c->al.ndevs);
	put_le32(&sb->sectorsize, cfg->sectorsize);
	put_le32(&sb->nodesize, cfg->nodesize);
	put_le32(&sb->unused_leafsize, cfg->nodesize);
	put_le32(&sb->stripesize, cfg->sectorsize);
	put_le64(&sb->compat_ro_flags, cfg->compat_ro);
	put_le64(&sb->incompat_flags, cfg->incompat);
	put_le16(&sb->csum_type, (uint16_t)cfg->csum_type);
	memcpy(sb->label, cfg->label, BTRFS_LABEL_SIZE);
	sb->label[BTRFS_LABEL_SIZE - 1] = 0;
	/* without the free space tree the kernel uses the v1 space cache */
	put_le64(&sb->cache_generation, T->t[T_FST].present ? 0 : (uint64_t)-1);
	put_le64(&sb->uuid_tree_generation, MKFS_GENERATION);
	for (int k = 0; k < c->al.nchunks; k++) {
		const struct alloc_chunk *ch = &c->al.chunks[k];
		uint8_t buf[sizeof(struct btrfs_chunk) + ALLOC_MAX_DEVS * sizeof(struct btrfs_stripe)];
		struct btrfs_disk_key key;
		int len;

		if (!(ch->type & BTRFS_BLOCK_GROUP_SYSTEM))
			continue;
		len = chunk_item(c, ch, buf);
		if (array + sizeof(key) + (uint32_t)len > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
			return mkfs_fail(c, "system chunk array overflow");
		put_le64(&key.objectid, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
		key.type = BTRFS_CHUNK_ITEM_KEY;
		put_le64(&key.offset, ch->logical);
		memcpy(sb->sys_chunk_array + array, &key, sizeof(key));
		memcpy(sb->sys_chunk_array + array + sizeof(key), buf, (size_t)len);
		array += (uint32_t)(sizeof(key) + (size_t)len);
	}
	put_le32(&sb->sys_chunk_array_size, array);
	fill_backup_root(c, T, sb, used);
	return 0;
}

/* Every device flushed first: no superblock names a tree that is not on disk yet. */
static int sync_devices(struct mkfs_ctx *c)
{
	for (int i = 0; i < c->al.ndevs; i++) {
		int ret = pio_dev_sync(c->al.devs[i].fd);

		if (ret)
			return mkfs_fail(c, "cannot sync device %d: %s", i + 1, strerror(-ret));
	}
	return 0;
}

static int write_supers(struct mkfs_ctx *c, struct btrfs_super_block *sb)
{
	if (sync_devices(c))
		return -1;
	for (int i = 0; i < c->al.ndevs; i++) {
		struct alloc_dev *d = &c->al.devs[i];

		dev_item(c, i, &sb->dev_item);
		/* mirrors first, the primary copy last */
		for (int m = BTRFS_SUPER_MIRRORS - 1; m >= 0; m--) {
			uint64_t off = btrfs_super_offset(m);
			int ret;

			if (off + BTRFS_SUPER_SIZE > d->size)
				continue;
			put_le64(&sb->bytenr, off);
			csum_stamp(c->cfg->csum_type, sb, BTRFS_SUPER_SIZE);
			if ((ret = pio_dev_write(d->fd, sb, BTRFS_SUPER_SIZE, (off_t)off)))
				return mkfs_fail(c, "cannot write the superblock: %s", strerror(-ret));
		}
	}
	return sync_devices(c);
}

/* Zeroes what could identify an older filesystem: the first and last 2 MiB and every
 * superblock copy inside the device. */
static int wipe_device(struct mkfs_ctx *c, const struct mkfs_device *d, uint64_t real_size)
{
	enum { ZERO_BUF = 65536 };
	uint8_t *zero;
	uint64_t ranges[8][2];
	int n = 0, ret = 0;

	ranges[n][0] = 0;
	ranges[n++][1] = real_size < 2 * MIB ? real_size : 2 * MIB;
	if (real_size > 2 * MIB) {
		ranges[n][0] = real_size - 2 * MIB;
		ranges[n++][1] = 2 * MIB;
	}
	if (d->size < real_size && d->size > 2 * MIB) {
		ranges[n][0] = d->size - 2 * MIB;
		ranges[n++][1] = 2 * MIB;
	}
	for (int m = 1; m < BTRFS_SUPER_MIRRORS; m++)
		if (btrfs_super_offset(m) + BTRFS_SUPER_SIZE <= real_size) {
			ranges[n][0] = btrfs_super_offset(m);
			ranges[n++][1] = BTRFS_SUPER_SIZE;
		}
	zero = calloc(1, ZERO_BUF);
	if (!zero)
		return mkfs_fail(c, "out of memory");
	for (int i = 0; i < n && !ret; i++)
		for (uint64_t off = ranges[i][0]; off < ranges[i][0] + ranges[i][1] && !ret; off += ZERO_BUF) {
			size_t len = ranges[i][0] + ranges[i][1] - off < ZERO_BUF ?
				     (size_t)(ranges[i][0] + ranges[i][1] - off) : ZERO_BUF;
			if ((ret = pio_dev_write(d->fd, zero, len, (off_t)off)))
				ret = mkfs_fail(c, "cannot write to %s: %s", d->path, strerror(-ret));
		}
	free(zero);
	/* on disk before any new block overwrites the old filesystem's */
	if (!ret && (ret = pio_dev_sync(d->fd)))
		ret = mkfs_fail(c, "cannot sync %s: %s", d->path, strerror(-ret));
	return ret;
}

static int build_fs_tree(struct mkfs_ctx *c)
{
	struct timespec now = { (time_t)c->cfg->now, 0 }, times[3] = { now, now, now };

	struct item_list l = { 0 };
	int ret = 0;

	if (CFG_MKFS_ROOTDIR && c->cfg->rootdir) {
		writer_start(c);
		return writer_stop(c, rootdir_populate(c, c->cfg->rootdir));
	}
	if (add_root_dir(c, &l, 0, 040755, 0, 0, times))
		ret = -1;
	for (size_t i = 0; i < l.n && !ret; i++)
		ret = mkfs_fs_add(c, l.v[i].key.objectid, l.v[i].key.type, l.v[i].key.offset,
				  item_data(&l, &l.v[i]), l.v[i].size);
	items_free(&l);
	return ret;
}

static void report(struct mkfs_ctx *c)
{
	static const uint64_t kinds[3] = { BTRFS_BLOCK_GROUP_DATA, BTRFS_BLOCK_GROUP_METADATA,
					   BTRFS_BLOCK_GROUP_SYSTEM };
	memset(c->res->size, 0, sizeof(c->res->size));
	for (int k = 0; k < c->al.nchunks; k++)
		for (int i = 0; i < 3; i++)
			if (c->al.chunks[k].type & kinds[i])
				c->res->size[i] += c->al.chunks[k].length;
	c->res->total_bytes = fs_bytes(c);
	for (int i = 0; i < c->al.ndevs && i < 64; i++)
		c->res->dev_size[i] = c->al.devs[i].size;
}

/* --shrink: each device ends where its last device extent ends (image files are
 * truncated there). */
static int shrink_devices(struct mkfs_ctx *c, struct mkfs_device *devs)
{
	for (int i = 0; i < c->al.ndevs; i++) {
		struct alloc_dev *d = &c->al.devs[i];
		struct stat st;
		d->size = d->next_phys;
		if (!fstat(d->fd, &st) && S_ISREG(st.st_mode) && ftruncate(d->fd, (off_t)d->size))
			return mkfs_fail(c, "--shrink: cannot truncate %s: %s", devs[i].path, strerror(errno));
		devs[i].size = d->size;
	}
	return 0;
}

/* Lays out the chunks on devices of the given sizes. */
static int try_layout(struct mkfs_ctx *c, const struct mkfs_device *devs, int ndevs,
		      const uint64_t *size, const struct rootdir_estimate *est, int tight)
{
	alloc_free(&c->al);
	alloc_init(&c->al);
	for (int i = 0; i < ndevs; i++) {
		struct alloc_dev *d = &c->al.devs[c->al.ndevs++];
		d->fd = devs[i].fd;
		d->size = size[i] / c->cfg->sectorsize * c->cfg->sectorsize;
		d->devid = (uint64_t)i + 1;
		d->next_phys = ALLOC_DEV_START;
		memcpy(d->uuid, devs[i].uuid, BTRFS_UUID_SIZE);
	}
	return layout_chunks(c, est, tight);
}

/* Chunk layout; an image file marked growable is enlarged (by whole MiBs, the least
 * that works) when --rootdir needs more than it has. */
static int place_chunks(struct mkfs_ctx *c, struct mkfs_device *devs, int ndevs,
			const struct rootdir_estimate *est)
{
	uint64_t size[ALLOC_MAX_DEVS], lo, hi;
	int g = -1;

	for (int i = 0; i < ndevs; i++) {
		size[i] = devs[i].size;
		if (devs[i].grow)
			g = i;
	}
	if (!try_layout(c, devs, ndevs, size, est, 0))
		return 0;
	if ((est->data_bytes || est->meta_bytes) && !try_layout(c, devs, ndevs, size, est, 1))
		return 0;
	if (g < 0)
		return -1;
	lo = size[g] / MIB;
	hi = lo < 64 ? 128 : 2 * lo;
	for (size[g] = hi * MIB; try_layout(c, devs, ndevs, size, est, 0); size[g] = hi * MIB) {
		if (hi > (1ULL << 40))
			return -1;
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {       /* hi works, lo does not */
		uint64_t mid = lo + (hi - lo) / 2;
		size[g] = mid * MIB;
		if (try_layout(c, devs, ndevs, size, est, 0))
			lo = mid;
		else
			hi = mid;
	}
	size[g] = hi * MIB;
	if (try_layout(c, devs, ndevs, size, est, 0))
		return -1;
	if (size[g] > devs[g].dev_size && ftruncate(devs[g].fd, (off_t)size[g]))
		return mkfs_fail(c, "cannot grow %s: %s", devs[g].path, strerror(errno));
	devs[g].size = size[g];
	if (size[g] > devs[g].dev_size)
		devs[g].dev_size = size[g];
	return 0;
}

/* The spooled data extents and csum items are complete: read them from the start
 * from now on; the csum tree's shape. */
static int settle_data_items(struct mkfs_ctx *c, struct tree_shape *csum_shape)
{
	struct item_source src;
	int ret;

	if (csum_flush(c))
		return -1;
	if ((ret = spool_rewind(&c->data_ext)) || (ret = spool_rewind(&c->csum)))
		return mkfs_fail(c, "cannot write to %s: %s", c->csum.tmpdir, strerror(-ret));
	src = csum_source(c);
	ret = tree_shape_source(&src, c->cfg->nodesize, csum_shape);
	if (ret == -1)
		return mkfs_fail(c, "an item of the csum tree does not fit in a node");
	if (ret)
		return mkfs_fail(c, "cannot read the csum items back: %s", strerror(-ret));
	return 0;
}

static int make(struct mkfs_ctx *c, struct mkfs_device *devs, int ndevs, struct trees *T)
{
	struct rootdir_estimate est = { 0, 0 };
	struct btrfs_super_block *sb;
	static const int normal[] = { T_DEV, T_FS, T_CSUM, T_UUID, T_RELOC, T_QUOTA, T_ROOT };
	struct tree_shape *shapes;
	int ret;

	if (CFG_MKFS_ROOTDIR && c->cfg->rootdir && rootdir_estimate(c, c->cfg->rootdir, &est))
		return -1;
	if (place_chunks(c, devs, ndevs, &est))
		return -1;
	for (int i = 0; i < ndevs; i++)
		if (wipe_device(c, &devs[i], devs[i].dev_size))
			return -1;
	for (int t = 0; t < T_COUNT; t++)
		T->t[t].present = 1;
	T->t[T_FST].present = !!(c->cfg->compat_ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
	T->t[T_BGT].present = !!(c->cfg->compat_ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE);
	T->t[T_QUOTA].present = CFG_MKFS_QUOTA && c->cfg->quota;

	if (build_fs_tree(c))
		return -1;
	if (c->cfg->shrink && shrink_devices(c, devs))
		return -1;
	c->al.floor = 0;        /* metadata may use what data left below (mixed groups) */
	T->sub = calloc((size_t)c->nsv, sizeof(*T->sub));
	shapes = calloc((size_t)c->nsv, sizeof(*shapes));
	if (!T->sub || !shapes) {
		free(shapes);
		return mkfs_fail(c, "out of memory");
	}
	T->nsub = c->nsv - 1;
	ret = fs_items_settle(c, shapes, c->nsv);        /* their shapes; placed below */
	T->t[T_FS].shape = shapes[0];
	for (int i = 0; i < nsub(T); i++) {
		T->sub[i].shape = shapes[i + 1];
		T->sub[i].present = 1;
	}
	free(shapes);
	if (ret || settle_data_items(c, &T->t[T_CSUM].shape))
		return -1;
	if (build_chunk_and_dev_trees(c, T) || build_small_trees(c, T) || build_root_tree(c, T))
		return -1;
	if (shape_of(c, &T->t[T_CHUNK], "chunk") || place_tree(c, &T->t[T_CHUNK], BTRFS_BLOCK_GROUP_SYSTEM))
		return -1;
	for (size_t k = 0; k < sizeof(normal) / sizeof(normal[0]); k++)
		if (T->t[normal[k]].present &&
		    ((normal[k] != T_FS && normal[k] != T_CSUM && shape_of(c, &T->t[normal[k]], "a")) ||
		     place_tree(c, &T->t[normal[k]], META_KIND)))
			return -1;
	for (int i = 0; i < nsub(T); i++)
		if (place_tree(c, &T->sub[i], META_KIND))
			return -1;
	if (place_self_describing_trees(c, T) || build_root_tree(c, T))
		return -1;
	ret = write_trees(c, T);
	if (ret)
		return -1;
	ret = alloc_write_parity(&c->al);
	if (ret)
		return mkfs_fail(c, "cannot write RAID5/6 parity: %s", strerror(-ret));
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return mkfs_fail(c, "out of memory");
	ret = build_super(c, T, sb);
	if (!ret)
		ret = write_supers(c, sb);
	free(sb);
	if (!ret)
		report(c);
	return ret;
}

int mkfs_make(const struct mkfs_config *cfg, struct mkfs_device *devs, int ndevs,
	      struct mkfs_result *res, char *err, size_t errlen)
{
	struct mkfs_ctx c = { .cfg = cfg, .err = err, .errlen = errlen, .res = res, .nsv = 1 };
	struct trees T;
	int ret;

	if (ndevs < 1 || ndevs > ALLOC_MAX_DEVS) {
		snprintf(err, errlen, "between 1 and %d devices are supported", ALLOC_MAX_DEVS);
		return -1;
	}
	memset(&T, 0, sizeof(T));
	memset(res, 0, sizeof(*res));
	alloc_init(&c.al);
	ret = spool_init(&c.data_ext, cfg->tmpdir, SPOOL_BUF);
	ret |= spool_init(&c.csum, cfg->tmpdir, SPOOL_BUF);
	c.fs = fs_items_new(cfg->sort_mem, cfg->tmpdir);
	c.csum_item = malloc(cfg->nodesize);
	c.sv = calloc(1, sizeof(*c.sv));
	if (!ret && c.fs && c.csum_item && c.sv) {
		c.sv[0].id = BTRFS_FS_TREE_OBJECTID;
		ret = make(&c, devs, ndevs, &T);
	} else {
		ret = mkfs_fail(&c, "out of memory");
	}
	for (int t = 0; t < T_COUNT + nsub(&T); t++) {
		items_free(&tree_k(&T, t)->items);
		free(tree_k(&T, t)->addrs);
	}
	free(T.sub);
	free(c.sv);
	fs_items_free(c.fs);
	free(c.csum_item);
	spool_free(&c.data_ext);
	spool_free(&c.csum);
	free(c.seen);
	alloc_free(&c.al);
	return ret;
}
