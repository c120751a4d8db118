/* Text form of btrfs tree blocks, items and superblocks, as `btrfs inspect-internal
 * dump-tree` / `dump-super` (btrfs-progs 6.2) print them. Everything goes to stdout;
 * reports about damage the printers step over go to stderr. The printers read raw
 * on-disk bytes and never read outside the buffer they are given. */
#ifndef APPLETS_INSPECT_PRINT_H
#define APPLETS_INSPECT_PRINT_H
#include <stdint.h>
#include "fs/core/format.h"

struct print_opts {
	uint32_t nodesize;      /* length of every tree block buffer */
	uint32_t sectorsize;    /* for csum item ranges */
	unsigned csum_size;     /* bytes per checksum (superblock csum_type) */
	unsigned hide_names:1;  /* --hide-names */
	unsigned csum_headers:1;/* --csum-headers */
	unsigned csum_items:1;  /* --csum-items */
};

/* "key (OBJECTID TYPE OFFSET)" with the symbolic names, no newline. */
void print_key(uint64_t objectid, uint8_t type, uint64_t offset);
void print_disk_key(const struct btrfs_disk_key *key);
/* An objectid as the reference names it (ROOT_TREE, FS_TREE, -1, ...); type picks the
 * meaning where one number has several. */
void print_objectid(uint64_t objectid, uint8_t type);

/* One tree block of po->nodesize bytes read from logical address start: the header
 * lines, then the items (leaf) or the key pointers (node). */
void print_tree_block(const struct print_opts *po, const uint8_t *blk, uint64_t start);

/* Number of key pointers a node of this size can hold. */
static inline uint32_t node_ptrs_max(uint32_t nodesize)
{
	return (nodesize - (uint32_t)sizeof(struct btrfs_header)) / sizeof(struct btrfs_key_ptr);
}

/* The superblock fields, with the sys_chunk_array and backup roots when full. */
void print_superblock(const struct btrfs_super_block *sb, int full);

#endif
