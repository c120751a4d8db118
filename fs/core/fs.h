/* The btrfs engine's read core, and the conventions of the whole engine.
 *
 * This header is the API of fs/core: opening an unmounted filesystem, its superblock
 * and chunk map, verified tree blocks, B-tree searches and walks, item decoding,
 * files, directories and compressed data. The other subsystems build on it, each in
 * its folder of fs/ with its own header: write/ (crash-safe changes), check/,
 * repair/, mkfs/, stream/ (send and receive), scrub/; fs/README draws the map.
 *
 * Conventions (all of fs/):
 * - The engine never prints and never exits. Functions returning int give 0 on
 *   success, a negative errno on failure (-EIO read failed, -EUCLEAN corrupt
 *   structure, -ENOENT not found, -ENOMEM, -ENOTSUP feature not built/known,
 *   -EINVAL bad argument) and, where stated, a positive value for a benign
 *   condition (end of iteration).
 * - Details of the last failure are stored in a struct fs_error: the one inside
 *   the handle (fs->err) for calls taking a struct fs *, or one the caller passes.
 *   fs_error_format() renders it as one line for the applet to print.
 * - No globals: one struct fs per opened filesystem. Nothing read from disk is
 *   trusted: every pointer handed out is inside a verified block or item.
 * - Keys and numbers in the API are CPU-endian; pointers into on-disk structures
 *   (struct btrfs_inode_item etc. from <linux/btrfs_tree.h>) are little-endian,
 *   read them with util/le.h. */
#ifndef FS_FS_H
#define FS_FS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "format.h"

/* On-disk compression types (btrfs_file_extent_item.compression). */
enum { FS_COMPRESS_NONE = 0, FS_COMPRESS_ZLIB = 1, FS_COMPRESS_LZO = 2, FS_COMPRESS_ZSTD = 3 };
/* Inline ref naming the owner root of a tree block (simple quotas). */
#define FS_EXTENT_OWNER_REF_KEY 172

/* ---- keys (fs/core/key.c) ---------------------------------------------- */

struct fs_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
};
void fs_key_from_disk(struct fs_key *k, const struct btrfs_disk_key *d);
void fs_key_to_disk(struct btrfs_disk_key *d, const struct fs_key *k);
int fs_key_cmp(const struct fs_key *a, const struct fs_key *b);
/* The key after k in key order (k unchanged when it is the largest key). */
void fs_key_next(struct fs_key *k);

/* ---- errors (fs/core/error.c) ------------------------------------------ */

struct fs_error {
	int code;               /* negative errno; 0: no error */
	uint64_t tree;          /* tree objectid, 0 when not known */
	uint64_t logical;       /* logical (or physical for superblocks) address, 0 if none */
	int has_key;
	struct fs_key key;      /* item/key involved when has_key */
	int mirror;             /* copy number involved, 0 if none */
	uint64_t wanted_gen;    /* (a tree block that is not one written at its place: bad
				 * checksum, address or fsid) the generation its parent
				 * pointer or root item wants; 0 if not known */
	char msg[200];          /* the reason, e.g. "bad checksum" */
};
/* Record an error (replacing any earlier one) and return code; e may be NULL.
 * fs_err_at also sets the tree and logical address; set key/mirror after. */
int fs_err(struct fs_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int fs_err_at(struct fs_error *e, int code, uint64_t tree, uint64_t logical, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void fs_err_clear(struct fs_error *e);
/* Attaches a key to the recorded error; returns its code (-EUCLEAN if e is NULL). */
int fs_err_key(struct fs_error *e, const struct fs_key *key);
/* Adds text before/after the message (either may be NULL). */
void fs_err_wrap(struct fs_error *e, const char *prefix, const char *suffix);
/* One line: "<msg> (tree T, block L, key (O T F), mirror M)". Returns buf. */
const char *fs_error_format(const struct fs_error *e, char *buf, size_t size);

/* ---- superblock (fs/core/super.c) -------------------------------------- */

/* Checks magic, checksum (with csum_type), bytenr == offset of copy `mirror`
 * (-1: don't check), sizes (sectorsize power of two 4K..64K, nodesize power of
 * two sectorsize..64K, stripesize), known csum type, sys_chunk_array_size
 * bounds, root levels. 0, or -EUCLEAN/-ENOTSUP with the reason in err. */
int fs_super_check(const struct btrfs_super_block *sb, int mirror, struct fs_error *err);
/* Reads superblock copy `mirror` (0..2) of an open file descriptor into *sb and
 * validates it. -ENOENT when the copy lies beyond the end of the device, -EIO
 * on a short read; when the copy was read but is invalid, *sb holds it anyway
 * and the return is the fs_super_check() error (dump-super -f prints it). */
int fs_super_read_fd(int fd, int mirror, struct btrfs_super_block *sb, struct fs_error *err);
/* The same by path. */
int fs_super_read(const char *path, int mirror, struct btrfs_super_block *sb, struct fs_error *err);
/* Size of the device or image behind fd (0 on failure). */
uint64_t fs_fd_size(int fd);

/* ---- opening a filesystem (fs/core/open.c) ---------------------------- */

struct fs;
struct fs_open_opts {
	int writable;           /* reserved, must be 0 (write/write.h: fs_wopen) */
	int allow_degraded;     /* open even when devices are missing */
	int scan;               /* look for missing and seed devices among the block devices */
	int super_mirror;       /* -1: primary, falling back to copies 1, 2; else 0..2 */
	int backup_root;        /* -1: none; 0..3: use superblock backup root slot */
	uint64_t tree_root;     /* nonzero: explicit root tree bytenr */
	uint64_t chunk_root;    /* nonzero: explicit chunk tree bytenr */
	size_t cache_bytes;     /* tree block cache limit, 0: FS_DEFAULT_CACHE */
	int skip_chunk_tree;    /* only the sys_chunk_array is mapped (recovery) */
	int partial;            /* succeed even when the root tree root is unreadable */
	int fsid_change;        /* open one whose fsid change was cut short (btrfstune -u) */
	/* recovery of a lost chunk tree: when set, the chunk tree is not read; once the
	 * sys_chunk_array is mapped, add_chunks adds the other chunks (fs_chunk_add) from
	 * what it finds; nonzero fails the open (fs->err says why) */
	int (*add_chunks)(struct fs *fs, void *ctx);
	void *add_chunks_ctx;
};
#define FS_DEFAULT_CACHE (4u << 20)
void fs_open_opts_init(struct fs_open_opts *o);

struct fs_device {
	int fd;                 /* -1 when missing */
	char *path;             /* NULL when missing */
	uint64_t devid;
	uint8_t uuid[BTRFS_UUID_SIZE];
	uint64_t size;          /* of the file/device */
	uint64_t total_bytes;   /* from its dev item */
	int super_mirror;       /* which copy of its superblock was used */
	struct btrfs_super_block sb;
};

struct fs_chunk_stripe {
	uint64_t devid;
	uint64_t offset;        /* physical */
	uint8_t dev_uuid[BTRFS_UUID_SIZE];
	struct fs_device *dev;  /* NULL when missing */
};
struct fs_chunk {
	uint64_t logical, length, type, stripe_len;
	uint16_t num_stripes, sub_stripes;
	struct fs_chunk_stripe *stripes;
};

struct fs_block_cache;

/* Called (if set) for each copy that failed to read or verify while another
 * copy was tried; err says which copy (err->mirror) and why. */
typedef void (*fs_bad_copy_fn)(void *ctx, const struct fs_error *err);

/* Decompression state kept between calls: contexts are made on first use and
 * released by fs_inflater_free. Start from a zeroed struct; one per thread. */
struct fs_inflater {
	void *zstd;                     /* ZSTD_DCtx */
	void *zlib;                     /* z_stream */
};

struct fs {
	struct btrfs_super_block sb;    /* the superblock in use (CPU reads via le.h) */
	uint32_t nodesize, sectorsize, stripesize;
	int csum_type;
	size_t csum_size;
	uint8_t fsid[BTRFS_FSID_SIZE];          /* sb.fsid */
	uint8_t meta_uuid[BTRFS_FSID_SIZE];     /* written into tree headers */
	int changing_fsid;              /* an fsid change (btrfstune -u) was cut short: tree
					 * headers carry meta_uuid (the old fsid, still in the
					 * dev items) or fsid (the new one) */
	uint64_t generation;
	uint64_t root_bytenr, chunk_root_bytenr; /* what this open used */
	uint64_t root_gen, chunk_root_gen;       /* 0: not checked (explicit bytenr) */
	int root_level, chunk_root_level;        /* -1: take it from the block */
	struct fs_device *devs;         /* given, scanned and seed devices */
	int num_devs, cap_devs;
	int num_seeds;                  /* of devs, seed devices of a sprouted filesystem */
	struct fs_chunk *chunks;        /* sorted by logical */
	int num_chunks, cap_chunks;
	struct fs_block_cache *cache;
	fs_bad_copy_fn bad_copy;
	void *bad_copy_ctx;
	struct fs_error err;            /* last error of a call on this handle */
	struct fs_inflater inflater;    /* for file extents (fs_file_pread) */
	uint8_t *disk_buf;              /* compressed extent being read, grown as needed */
	size_t disk_buf_cap;
	uint8_t *align_buf;             /* fs_read_data's whole sectors around an unaligned range */
	size_t align_buf_cap;
	uint8_t *spare_ext_buf;         /* a closed file's ext_buf, for the next file */
	size_t spare_ext_cap;
	struct fs_wstate *w;            /* the write side's state (write/write.h), NULL read-only */
};

/* Opens the devices/images (any order; each must belong to the filesystem on
 * paths[0] or be one of its seed devices), reads the chunk tree and the root
 * tree root. A device belongs when its superblock has the same metadata fsid
 * (dev_item.fsid); a chunk stripe is on the device with its devid
 * and dev uuid. With opts->scan, devices of the filesystem that were not given
 * and the seed devices its chunks use (SEEDING flag, devid and dev uuid of a
 * stripe) are looked for among the block devices. On failure returns NULL and
 * describes why in *err (e.g. "missing devices: devid 2"). Missing devices are
 * listed in err->msg even on a degraded success (err->code 0). */
struct fs *fs_open(const char *const *paths, int npaths, const struct fs_open_opts *opts,
		   struct fs_error *err);
void fs_close(struct fs *fs);
/* A second read-only handle on an open filesystem, for another thread: the devices
 * (pread) and the chunk map are shared and must not change while it lives; the block
 * cache (of cache_bytes, 0: the default), the error and the buffers are its own. */
struct fs *fs_view(const struct fs *fs, size_t cache_bytes);
void fs_view_free(struct fs *view);
struct fs_device *fs_device_by_id(struct fs *fs, uint64_t devid);
/* A seed device (its superblock has another metadata fsid and the SEEDING flag). */
int fs_device_is_seed(const struct fs *fs, const struct fs_device *d);
/* The distinct devids that chunk stripes name but no open device provides,
 * ascending; up to max of them stored, the count returned. */
int fs_missing_devids(const struct fs *fs, uint64_t *ids, int max);
/* The open device a stripe is on (NULL: missing): the one with its devid and
 * dev uuid, else (a damaged uuid) the filesystem's own device with that devid. */
struct fs_device *fs_stripe_device(struct fs *fs, const struct fs_chunk_stripe *st);
/* 1 when copy `mirror` of logical lies on a missing device. */
int fs_copy_missing(struct fs *fs, uint64_t logical, int mirror);
/* After copy `mirror` (1..) of logical failed (reason in fs->err): keeps in *first
 * the reason to give when every copy fails (copy 1's, or the first present copy's
 * when copy 1 is on a missing device) and tells fs->bad_copy, except for copies on
 * a missing device (said once, when the filesystem was opened). */
void fs_copy_failed(struct fs *fs, uint64_t logical, int mirror, struct fs_error *first, int *first_missing);

/* ---- chunk map (fs/core/chunk.c) --------------------------------------- */

/* Adds one chunk (from the sys_chunk_array or a CHUNK_ITEM); validates it. */
int fs_chunk_add(struct fs *fs, uint64_t logical, const struct btrfs_chunk *c, uint32_t size);
/* Takes the chunk at logical out of the map (a chunk a cancelled transaction made). */
void fs_chunk_remove(struct fs *fs, uint64_t logical);
/* The chunk item of ch (io_align and io_width its stripe_len, as mkfs writes them) into
 * buf, which has room for fs_chunk_item_size(ch->num_stripes) bytes; returns its size. */
uint32_t fs_chunk_encode(const struct fs_chunk *ch, uint32_t sectorsize, uint8_t *buf);
/* Parses a sys_chunk_array (bounds-checked) into the map. */
int fs_chunk_load_sys_array(struct fs *fs, const uint8_t *array, uint32_t size);
/* Reads every CHUNK_ITEM of the chunk tree into the map. */
int fs_chunk_load_tree(struct fs *fs);
const struct fs_chunk *fs_chunk_find(const struct fs *fs, uint64_t logical);
/* Bytes one stripe of the chunk takes on its device (a device extent's length). */
uint64_t fs_chunk_stripe_length(const struct fs_chunk *ch);
/* Number of copies of the data at logical (1 for SINGLE/RAID0/RAID5/6 data,
 * 2 for DUP/RAID1/RAID10...). 0 when logical is not mapped. */
int fs_num_copies(const struct fs *fs, uint64_t logical);

struct fs_phys {
	struct fs_device *dev;  /* NULL: that device is missing */
	uint64_t devid;
	uint64_t physical;
	uint64_t len;           /* contiguous bytes from here within this stripe */
};
/* Maps logical for copy `mirror` (1..copies; 0 means 1). */
int fs_map(struct fs *fs, uint64_t logical, int mirror, struct fs_phys *out);
/* Each contiguous piece of [logical, +len) on copy `mirror` (1..copies), crossing
 * stripes: read into buf (io NULL), or handed to io (the write side), which sets
 * fs->err when it fails. A piece on a missing device is -EIO. */
typedef int (*fs_io_fn)(struct fs *fs, struct fs_device *dev, uint64_t physical, void *buf, size_t len);
int fs_io_logical(struct fs *fs, uint64_t logical, void *buf, size_t len, int mirror, fs_io_fn io);
/* Reads len bytes at logical from copy `mirror` (1..copies), crossing stripes. */
int fs_read_logical(struct fs *fs, uint64_t logical, void *buf, size_t len, int mirror);
/* Reads from physical offset of a device (pread loop; -EIO on short read). */
int fs_read_phys(struct fs_device *dev, uint64_t physical, void *buf, size_t len);
/* Calls cb for every tree block of the filesystem on device d, read whole from its
 * first MiB on (fs/core/blockscan.c): a block whose header names the filesystem and
 * whose checksum is right, wherever it is mapped or not. cb returns nonzero to stop
 * the scan (that value returned); a read error is -EIO in fs->err. */
typedef int (*fs_scan_fn)(void *ctx, const struct fs_device *d, uint64_t physical, const uint8_t *block);
int fs_scan_tree_blocks(struct fs *fs, struct fs_device *d, fs_scan_fn cb, void *ctx);
/* Profile name of chunk type bits ("single", "DUP", "RAID1", ...). */
const char *fs_profile_name(uint64_t type);

/* ---- tree blocks (fs/core/block.c) ------------------------------------- */

struct fs_block {
	uint64_t bytenr;
	uint32_t size;          /* nodesize */
	int mirror;             /* the copy it was read from */
	int refs;               /* users; cached blocks stay until evicted */
	int cached;
	struct fs_block *lru_prev, *lru_next, *hash_next;
	uint8_t data[];         /* verified: header and every item/ptr in bounds */
};

/* What the caller knows about the block; 0 / -1 fields are not checked. */
struct fs_block_expect {
	uint64_t generation;    /* 0: unknown */
	int level;              /* -1: unknown */
	uint64_t owner;         /* 0: unknown (only sanity-checked then) */
	const struct fs_key *first_key; /* NULL: unknown */
};
#define FS_EXPECT_NONE ((struct fs_block_expect){ 0, -1, 0, NULL })
/* Whether a block owned by `found` can be in tree `want` (the kernel's rule): a
 * subvolume's blocks are a subvolume's (shared by snapshots), every other tree's its own
 * (log and relocation trees are not checked). */
int fs_owner_fits(uint64_t want, uint64_t found);
/* What a "parent transid verify failed" error adds when the block there is another
 * tree's (followed by its owner and ")"): not an older copy of the block wanted. */
#define FS_FOREIGN_BLOCK " (a block of tree"

/* Pure verifier of one tree block image (unit-testable): checksum (csum_type),
 * bytenr, fsid (== meta_uuid), level <= 7, nritems fits nodesize, every item
 * offset/size inside the block and item data not overlapping the item array,
 * keys sorted strictly, expectation fields. */
struct fs_block_ctx {
	uint32_t nodesize;
	int csum_type;
	const uint8_t *fsid;    /* NULL: not checked */
	uint64_t bytenr;
	int skip_csum;
};
int fs_block_check(const uint8_t *buf, const struct fs_block_ctx *ctx,
		   const struct fs_block_expect *exp, struct fs_error *err);

/* Reads (or finds in the cache) and verifies the block at bytenr, trying other
 * copies when one is bad (each bad copy reported to fs->bad_copy). Returns a
 * referenced block, or NULL with fs->err set. Release with fs_block_put. */
struct fs_block *fs_block_read(struct fs *fs, uint64_t bytenr, const struct fs_block_expect *exp);
/* Reads one given copy without the cache (for check/dump of all mirrors). */
struct fs_block *fs_block_read_mirror(struct fs *fs, uint64_t bytenr, int mirror,
				      const struct fs_block_expect *exp);
void fs_block_put(struct fs *fs, struct fs_block *b);
void fs_cache_set_limit(struct fs *fs, size_t bytes);
/* Write side: a new zeroed block at bytenr, in the cache with the caller's reference
 * (-EUCLEAN when the cache holds a tree block there: it is not free space);
 * fs_block_forget takes a block out of the cache and drops the caller's reference. */
struct fs_block *fs_block_create(struct fs *fs, uint64_t bytenr);
void fs_block_forget(struct fs *fs, struct fs_block *b);
void fs_block_cache_free(struct fs *fs);        /* by fs_close */

static inline const struct btrfs_header *fs_block_header(const struct fs_block *b)
{ return (const struct btrfs_header *)b->data; }
uint32_t fs_block_nritems(const struct fs_block *b);
int fs_block_level(const struct fs_block *b);
uint64_t fs_block_generation(const struct fs_block *b);
uint64_t fs_block_owner(const struct fs_block *b);
uint64_t fs_block_flags(const struct fs_block *b);
/* Leaf items: key, data pointer and size (NULL when slot out of range). */
int fs_item_key(const struct fs_block *b, uint32_t slot, struct fs_key *key);
const uint8_t *fs_item_data(const struct fs_block *b, uint32_t slot, uint32_t *size);
/* Node pointers (-EINVAL when slot is out of range or b is a leaf). */
int fs_node_key(const struct fs_block *b, uint32_t slot, struct fs_key *key);
uint64_t fs_node_blockptr(const struct fs_block *b, uint32_t slot);
uint64_t fs_node_ptr_generation(const struct fs_block *b, uint32_t slot);
/* Binary searches of a verified block (its keys are in order): the first slot
 * whose key is >= key (nritems when none), and the node pointer whose subtree
 * holds key (the last one whose key is <= key; 0 when all are greater). */
uint32_t fs_block_lower_bound(const struct fs_block *b, const struct fs_key *key);
uint32_t fs_node_child_slot(const struct fs_block *b, const struct fs_key *key);

/* ---- trees (fs/core/btree.c) ------------------------------------------ */

/* A tree to search: its objectid, root block, and the root item when it came
 * from the root tree (item zero-filled past item_size for old short items). */
struct fs_root {
	uint64_t objectid;
	uint64_t offset;        /* ROOT_ITEM key offset (snapshot creation transid) */
	uint64_t bytenr;
	uint64_t generation;    /* 0: unknown */
	int level;              /* -1: unknown */
	uint32_t item_size;     /* 0 for the root and chunk trees */
	struct btrfs_root_item item;
};
/* The root tree, chunk tree, or the ROOT_ITEM with the highest offset for
 * objectid in the root tree. -ENOENT when absent. */
int fs_root_lookup(struct fs *fs, uint64_t objectid, struct fs_root *root);
/* Objectid of the tree holding block group items (block group tree or extent tree). */
uint64_t fs_block_group_tree_id(const struct fs *fs);
/* The first root item of a subvolume tree (the top one, or 256 and on) at or after *k in
 * the root tree: *k gets its key, *ri its data (zeroed when it does not parse). 0, 1 when
 * there is none, or -errno. A search of its own: the root tree may change between calls. */
int fs_next_subvol_root(struct fs *fs, struct fs_key *k, struct btrfs_root_item *ri);

/* A cursor on an item: blocks from the root (nodes[levels-1]) to the leaf
 * (nodes[0]) with the slot in each. */
struct fs_path {
	struct fs_block *nodes[BTRFS_MAX_LEVEL];
	int slots[BTRFS_MAX_LEVEL];
	int levels;
	uint64_t tree;
};
/* Positions p on the first item >= key. 0: positioned (item key may be
 * greater), 1: no item >= key (p stays on the last item of the tree, or
 * p->levels == 0 when the tree is empty), <0 error. Release p in every case. */
int fs_search(struct fs *fs, const struct fs_root *root, const struct fs_key *key, struct fs_path *p);
/* Child slot of node parent (of tree), verified against the pointer's key, level and
 * generation. NULL with fs->err set. */
struct fs_block *fs_read_child(struct fs *fs, const struct fs_block *parent, uint32_t slot, uint64_t tree);
/* Next/previous item across leaves. 0 ok, 1 no more (path kept), <0 error. */
int fs_next(struct fs *fs, struct fs_path *p);
int fs_prev(struct fs *fs, struct fs_path *p);
void fs_path_init(struct fs_path *p);
void fs_path_release(struct fs *fs, struct fs_path *p);
/* The current item. */
void fs_path_key(const struct fs_path *p, struct fs_key *key);
const uint8_t *fs_path_data(const struct fs_path *p, uint32_t *size);
/* Exact lookup: copies nothing, positions p on the item or returns -ENOENT. */
int fs_lookup(struct fs *fs, const struct fs_root *root, const struct fs_key *key, struct fs_path *p);
/* Positions p on the last item with objectid/type matching and offset <= key->offset.
 * 0 ok, -ENOENT none. */
int fs_search_le(struct fs *fs, const struct fs_root *root, const struct fs_key *key, struct fs_path *p);

/* Child `slot` of node parent in tree `tree`, verified against the pointer's key,
 * level and generation; NULL with fs->err set (tree and key too). */
struct fs_block *fs_read_child(struct fs *fs, const struct fs_block *parent, uint32_t slot, uint64_t tree);

/* Pre-order walk of a whole tree. node/leaf callbacks return 0 to go on,
 * 1 (node only) to skip its children, <0 to stop the walk (returned). Bad
 * blocks are reported to error (with tree, bytenr, parent key) and skipped.
 * A walk visiting more blocks than the metadata chunks can hold stops with
 * -ELOOP (pointers looping through shared blocks). */
struct fs_walk_ops {
	int (*node)(void *ctx, const struct fs_block *b);
	int (*leaf)(void *ctx, const struct fs_block *b);
	void (*error)(void *ctx, const struct fs_error *err);
};
int fs_tree_walk(struct fs *fs, const struct fs_root *root, const struct fs_walk_ops *ops, void *ctx);

/* ---- item decoding (fs/core/item.c) ----------------------------------- */
/* Each returns NULL / negative when the item is too short or malformed. */

const struct btrfs_inode_item *fs_inode_item(const void *data, uint32_t size);
const struct btrfs_block_group_item *fs_block_group_item(const void *data, uint32_t size);
const struct btrfs_dev_extent *fs_dev_extent_item(const void *data, uint32_t size);
const struct btrfs_dev_item *fs_dev_item(const void *data, uint32_t size);
/* Root item: copies min(size, full) bytes into *out and zero-fills the rest;
 * -EUCLEAN when shorter than the oldest format (up to 'level'). */
int fs_root_item(const void *data, uint32_t size, struct btrfs_root_item *out);
/* Chunk: validates num_stripes against size; stripe i via fs_chunk_stripe. */
const struct btrfs_chunk *fs_chunk_item(const void *data, uint32_t size);
const struct btrfs_stripe *fs_chunk_stripe(const struct btrfs_chunk *c, uint16_t i);
/* Bytes a chunk item with num_stripes stripes takes (0 for num_stripes 0). */
uint32_t fs_chunk_item_size(uint32_t num_stripes);
/* Number of checksums in an EXTENT_CSUM item. */
uint32_t fs_csum_item_count(uint32_t size, size_t csum_size);

/* Iterators over items holding several variable-size records: start with
 * *pos = 0; each call returns 1 with the next record, 0 at the end, -EUCLEAN
 * when the record does not fit (name_len/data_len past the item). */
struct fs_dir_entry {                 /* DIR_ITEM, DIR_INDEX, XATTR_ITEM */
	struct fs_key location;
	uint64_t transid;
	uint8_t type;                  /* BTRFS_FT_* */
	const char *name;              /* not NUL-terminated */
	uint16_t name_len;
	const uint8_t *data;           /* xattr value */
	uint16_t data_len;
};
int fs_dir_entry_next(const void *data, uint32_t size, uint32_t *pos, struct fs_dir_entry *e);

struct fs_inode_ref {                 /* INODE_REF (parent = key offset) and INODE_EXTREF */
	uint64_t parent;               /* extref only (ref: the key's offset) */
	uint64_t index;
	const char *name;
	uint16_t name_len;
};
int fs_inode_ref_next(const void *data, uint32_t size, uint32_t *pos, struct fs_inode_ref *r);
int fs_inode_extref_next(const void *data, uint32_t size, uint32_t *pos, struct fs_inode_ref *r);

struct fs_root_ref {                  /* ROOT_REF / ROOT_BACKREF */
	uint64_t dirid, sequence;
	const char *name;
	uint16_t name_len;
};
int fs_root_ref(const void *data, uint32_t size, struct fs_root_ref *r);

/* File extent item (EXTENT_DATA). Inline data starts at offset 21 of the item. */
#define FS_FILE_EXTENT_INLINE_START 21
struct fs_file_extent {
	uint64_t generation, ram_bytes;
	uint8_t compression, encryption, type;  /* BTRFS_FILE_EXTENT_{INLINE,REG,PREALLOC} */
	uint16_t other_encoding;
	/* REG/PREALLOC */
	uint64_t disk_bytenr, disk_num_bytes, offset, num_bytes;
	/* INLINE */
	const uint8_t *inline_data;
	uint32_t inline_len;
};
int fs_file_extent(const void *data, uint32_t size, struct fs_file_extent *fe);

/* EXTENT_ITEM / METADATA_ITEM: header fields and inline refs. */
struct fs_extent_info {
	uint64_t refs, generation, flags;
	int has_tree_info;              /* non-skinny tree block: key + level follow */
	struct fs_key tree_key;
	int tree_level;
	uint32_t refs_start;            /* offset of the first inline ref */
};
/* key_type is EXTENT_ITEM_KEY or METADATA_ITEM_KEY. -EUCLEAN for short/v0 items. */
int fs_extent_item(const void *data, uint32_t size, uint8_t key_type, struct fs_extent_info *ei);
struct fs_inline_ref {
	uint8_t type;                   /* BTRFS_{TREE_BLOCK,SHARED_BLOCK,EXTENT_DATA,SHARED_DATA}_REF_KEY, EXTENT_OWNER_REF */
	uint64_t offset;                /* root (tree block ref), parent (shared refs) */
	uint64_t root, objectid, file_offset; /* extent data ref */
	uint32_t count;                 /* data refs */
	uint32_t size;                  /* bytes this ref takes */
};
/* Start with *pos = ei->refs_start. 1 next ref, 0 end, -EUCLEAN bad type/size. */
int fs_inline_ref_next(const void *data, uint32_t size, uint32_t *pos, struct fs_inline_ref *r);
/* Size of an inline ref of the given type, 0 for unknown types. */
uint32_t fs_inline_ref_size(uint8_t type);
/* Key offset of the keyed EXTENT_DATA_REF of (root, objectid, offset). */
uint64_t fs_data_ref_hash(uint64_t root, uint64_t objectid, uint64_t offset);

/* ---- files and directories (fs/core/file.c) --------------------------- */

/* The inode item of ino in root (copied; -ENOENT when absent). */
int fs_inode_get(struct fs *fs, const struct fs_root *root, uint64_t ino, struct btrfs_inode_item *out);

/* One stretch of a file: a hole (explicit or implicit), inline, regular or
 * prealloc extent. Iteration covers [start, i_size) without gaps; extents are
 * clipped to what is left to cover, fe.offset is adjusted to match (for inline
 * extents it is the offset into the inline data). */
enum fs_extent_kind { FS_EXT_HOLE, FS_EXT_INLINE, FS_EXT_REG, FS_EXT_PREALLOC };
struct fs_extent {
	uint64_t file_offset, len;
	uint64_t key_offset;            /* EXTENT_DATA key offset (0 for implicit holes) */
	enum fs_extent_kind kind;
	struct fs_file_extent fe;       /* inline_data valid until the next call */
};
struct fs_extent_iter {
	struct fs *fs;
	struct fs_root root;
	uint64_t ino, isize, pos;
	struct fs_path path;
	int path_valid;                 /* path is on an EXTENT_DATA item of ino */
	int advance;                    /* step path before looking at it */
};
/* Starts at file offset `start` (0 for the whole file). */
int fs_extent_iter_init(struct fs *fs, const struct fs_root *root, uint64_t ino, uint64_t start,
			struct fs_extent_iter *it);
/* 1: *ext filled, 0: end of file, <0 error (fs->err). */
int fs_extent_iter_next(struct fs_extent_iter *it, struct fs_extent *ext);
void fs_extent_iter_release(struct fs_extent_iter *it);

/* Reading file bytes. Holds the last decompressed extent between calls. */
struct fs_file {
	struct fs *fs;
	struct fs_root root;
	uint64_t ino, isize;
	int verify_csum;                /* check data against the csum tree */
	uint8_t *ext_buf;               /* last decoded compressed extent */
	size_t ext_buf_len, ext_buf_cap;
	uint64_t ext_bytenr;            /* its disk_bytenr, 0 none */
};
int fs_file_open(struct fs *fs, const struct fs_root *root, uint64_t ino, struct fs_file *f);
/* Reads up to len bytes at off (stops at i_size). Returns bytes read or <0. */
ssize_t fs_file_pread(struct fs_file *f, void *buf, size_t len, uint64_t off);
void fs_file_close(struct fs_file *f);

/* Reads data bytes at logical, optionally verifying each sector against the
 * csum tree and retrying other copies on mismatch (bad copies reported). */
int fs_read_data(struct fs *fs, uint64_t logical, void *buf, size_t len, int verify);

/* Calls cb for every DIR_INDEX entry of directory ino, in index order.
 * cb returns 0 to go on, nonzero to stop (returned). Malformed items are
 * reported with -EUCLEAN. */
typedef int (*fs_dir_fn)(void *ctx, uint64_t index, const struct fs_dir_entry *e);
int fs_dir_iterate(struct fs *fs, const struct fs_root *root, uint64_t ino, fs_dir_fn cb, void *ctx);
/* The directory at the top of a root (root_dirid; 256 for trees without a root item). */
uint64_t fs_root_dir(const struct fs_root *r);
/* Resolves an absolute path ("/a/b") from the top of root, entering
 * subvolumes; *out_root / *ino receive the result. */
int fs_path_lookup(struct fs *fs, const struct fs_root *root, const char *path,
		   struct fs_root *out_root, uint64_t *ino);

/* ---- compression (fs/core/compress.c) ------------------------------- */

/* type: FS_COMPRESS_ZLIB/LZO/ZSTD. Decompresses into out (out_len bytes
 * room); *got = bytes produced (may be < out_len). sectorsize matters for the
 * lzo framing. -ENOTSUP when the algorithm is not built in, -EUCLEAN on
 * corrupt input. inf keeps the contexts (see struct fs_inflater). */
int fs_decompress(struct fs_inflater *inf, int type, const void *in, size_t in_len, void *out,
		  size_t out_len, size_t *got, uint32_t sectorsize);
void fs_inflater_free(struct fs_inflater *inf);
/* Compression levels the kernel uses (mount -o compress=ALGO:LEVEL); lzo has none. */
#define FS_COMPRESS_DEFAULT_LEVEL 3
#define FS_ZLIB_MAX_LEVEL 9
#define FS_ZSTD_MAX_LEVEL 15
/* Compression state kept between calls, as struct fs_inflater. level: zlib
 * 1..FS_ZLIB_MAX_LEVEL, zstd 1..FS_ZSTD_MAX_LEVEL, 0 for the default. Set it
 * before the first call: it stays for the deflater's life. */
struct fs_deflater {
	void *zstd;                     /* zstd_encode's state */
	void *zlib;                     /* z_stream */
	void *lzo;                      /* lzo1x_1 work memory */
	int level;
};
/* Compresses in into out (out_cap room); -E2BIG when it does not shrink. zstd takes
 * at most 128 KiB (one btrfs compressed extent; -EINVAL beyond). */
int fs_compress(struct fs_deflater *def, int type, const void *in, size_t in_len, void *out,
		size_t out_cap, size_t *out_len, uint32_t sectorsize);
void fs_deflater_free(struct fs_deflater *def);

#endif
