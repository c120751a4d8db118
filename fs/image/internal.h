/* What the parts of a restore share: its state, the chunk map (map.c), and the changes
 * that make a dump of several devices one device (onedev.c). */
#ifndef FS_IMAGE_INTERNAL_H
#define FS_IMAGE_INTERNAL_H
#include "image.h"

/* Where a chunk's bytes go on the restored device: at physical, and for DUP a second
 * copy at physical_dup (0: none). */
struct chunk_place {
	uint64_t logical, length, physical, physical_dup;
	uint64_t type;
	uint64_t seq;           /* the order it was found in */
	int moved;              /* its first stripe overlapped another device's chunk */
};

/* -m: a chunk or device item of the dump's chunk tree, kept for the second pass. */
struct kept_item {
	struct fs_key key;
	uint32_t size;
	uint8_t *data;
};

struct restorer {
	int in, out;
	const struct image_restore_opts *o;
	struct fs_error *err;
	struct btrfs_super_block sb;    /* as dumped */
	uint8_t fsid[BTRFS_FSID_SIZE];  /* in tree block headers */
	uint32_t nodesize;
	int several;                    /* the dump is of a filesystem of several devices */
	struct chunk_place *chunks;     /* sorted by logical once the first pass is done */
	size_t nchunks, cap;
	struct chunk_place sys[BTRFS_SYSTEM_CHUNK_ARRAY_SIZE / sizeof(struct btrfs_chunk)];
	size_t nsys;
	int drop_space_cache;           /* a moved chunk covers a superblock copy's place */
	int multi;                      /* -m: onto the devices the filesystem had */
	struct kept_item *kept;
	size_t nkept, cap_kept;
	struct fs *fs;                  /* -m: the targets opened with the dump's chunk map */
	uint64_t offset;                /* of the next cluster in the dump */
	uint8_t *stored, *piece;        /* an item as stored, a piece of it expanded */
	uint32_t stored_cap;
};

/* map.c */
/* The next key and chunk of sb's sys_chunk_array after *pos (start at 0): 1, 0 at the
 * end, -EUCLEAN when it does not parse. */
int map_sys_array_next(const struct btrfs_super_block *sb, uint32_t *pos, struct fs_key *k,
		       const struct btrfs_chunk **c);
/* The system chunks of r->sb, for map_in_sys_chunk. */
int map_sys_array(struct restorer *r);
int map_in_sys_chunk(const struct restorer *r, uint64_t logical, uint64_t len);
/* The chunk items of the chunk tree leaves among the blocks of a piece of the dump. */
int map_chunk_blocks(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len);
/* After the first pass: chunks overlapping others moved, the map sorted. */
int map_finish(struct restorer *r);
/* The chunk holding logical, NULL when none does. */
const struct chunk_place *map_find(const struct restorer *r, uint64_t logical);

/* multi.c: -m. While the chunk tree leaves are read: their chunk and device items
 * kept. Then each target's superblock (the first one the dumped device's, the others
 * the remaining devids in order), the targets opened with the kept chunk map; each
 * piece written on every copy; synced, freed. */
int multi_keep_item(struct restorer *r, const struct fs_key *k, const uint8_t *data, uint32_t size);
int multi_start(struct restorer *r, const char *const *paths, int n);
int multi_write_piece(struct restorer *r, uint64_t logical, uint8_t *buf, size_t len);
int multi_finish(struct restorer *r);
void multi_free(struct restorer *r);

/* onedev.c: a dump of several devices restored to one. While the blocks are written:
 * the superblock's system chunks, and the chunk items of the chunk tree leaves of a
 * piece, made one stripe (two for DUP) on the restored device, where the map places
 * them; the superblock says one device. */
int onedev_superblock(const struct restorer *r, struct btrfs_super_block *sb);
void onedev_chunk_blocks(const struct restorer *r, uint64_t logical, uint8_t *buf, size_t len);
/* Afterwards, in a transaction on the restored image at path: block groups of their
 * chunk's profile, device extents made again from the chunks, the other devices'
 * items gone, the device as large as its last extent reaches. */
int onedev_finish(const char *path, struct fs_error *err);

#endif
