/* The btrfs on-disk format, defined once for reading and writing.
 * Item structures, key types, objectids and feature bits come from the kernel UAPI
 * (<linux/btrfs_tree.h>, <linux/btrfs.h>); this file adds what those headers keep
 * kernel-internal: the superblock, tree block header, leaf item and node pointer.
 * All multi-byte fields are little-endian and unaligned: access them with util/le.h
 * (get_le64(&sb->generation)). Sizes are asserted below. */
#ifndef FS_FORMAT_H
#define FS_FORMAT_H
#include <stdint.h>
#include <linux/types.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>

#define BTRFS_MAGIC_LE              0x4D5F53665248425FULL /* "_BHRfS_M" */
#define BTRFS_SUPER_OFFSET          65536ULL            /* primary superblock */
#define BTRFS_SUPER_MIRROR_SHIFT    12                  /* mirror i>0 at 16KiB << (12*i) */
#define BTRFS_SUPER_MIRRORS         3
#define BTRFS_SUPER_SIZE            4096
#define BTRFS_SYSTEM_CHUNK_ARRAY_SIZE 2048
#define BTRFS_NUM_BACKUP_ROOTS      4
#define BTRFS_MAX_LEVEL             8
#define BTRFS_CSUM_SIZE             32
#define BTRFS_FSID_SIZE             16
#define BTRFS_NAME_LEN_MAX          255
/* Header flags (btrfs_header.flags): written, reloc; backref revision in bits 56.. */
#define BTRFS_HEADER_FLAG_WRITTEN  (1ULL << 0)
#define BTRFS_HEADER_FLAG_RELOC    (1ULL << 1)
#define BTRFS_MIXED_BACKREF_REV     1ULL
#define BTRFS_BACKREF_REV_SHIFT     56
/* Superblock flags */
#define BTRFS_SUPER_FLAG_SEEDING   (1ULL << 32)
#define BTRFS_SUPER_FLAG_METADUMP  (1ULL << 33)
#define BTRFS_SUPER_FLAG_METADUMP_V2 (1ULL << 34)
#define BTRFS_SUPER_FLAG_CHANGING_FSID (1ULL << 35)
#define BTRFS_SUPER_FLAG_CHANGING_FSID_V2 (1ULL << 36)
#define BTRFS_SUPER_FLAG_CHANGING_BG_TREE (1ULL << 38) /* btrfs-progs' conversion cut short */

/* btrfs_inode_item.flags (not in the UAPI headers) */
#define BTRFS_INODE_NODATASUM (1ULL << 0)
#define BTRFS_INODE_NODATACOW (1ULL << 1)
#define BTRFS_INODE_ROOT_ITEM_INIT (1ULL << 31)   /* in a root item's inode: flags valid */

/* Simple quotas (kernel 6.7; newer than some UAPI headers): the incompat bit and the
 * status flag, and the status item with the generation accounting starts at. */
#define BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA_BIT (1ULL << 16)
#define BTRFS_QGROUP_STATUS_FLAG_SIMPLE (1ULL << 3)
struct btrfs_qgroup_status_v2 {
	__le64 version, generation, flags, rescan;
	__le64 enable_gen;                /* simple quotas: extents of this generation on */
} __attribute__((packed));

/* Byte offset of superblock copy i (0: 64KiB, 1: 64MiB, 2: 256GiB). */
static inline uint64_t btrfs_super_offset(int i)
{
	return i ? (16384ULL << (BTRFS_SUPER_MIRROR_SHIFT * i)) : BTRFS_SUPER_OFFSET;
}

struct btrfs_root_backup {
	__le64 tree_root, tree_root_gen;
	__le64 chunk_root, chunk_root_gen;
	__le64 extent_root, extent_root_gen;
	__le64 fs_root, fs_root_gen;
	__le64 dev_root, dev_root_gen;
	__le64 csum_root, csum_root_gen;
	__le64 total_bytes, bytes_used, num_devices;
	__le64 unused_64[4];
	__u8 tree_root_level, chunk_root_level, extent_root_level, fs_root_level;
	__u8 dev_root_level, csum_root_level;
	__u8 unused_8[10];
} __attribute__((packed));

struct btrfs_super_block {
	__u8 csum[BTRFS_CSUM_SIZE];
	__u8 fsid[BTRFS_FSID_SIZE];      /* the first three fields match btrfs_header */
	__le64 bytenr;                    /* byte offset of this copy */
	__le64 flags;
	__le64 magic;
	__le64 generation;
	__le64 root;                      /* root tree */
	__le64 chunk_root;
	__le64 log_root;
	__le64 unused_log_root_transid;
	__le64 total_bytes;
	__le64 bytes_used;
	__le64 root_dir_objectid;
	__le64 num_devices;
	__le32 sectorsize;
	__le32 nodesize;
	__le32 unused_leafsize;           /* equals nodesize */
	__le32 stripesize;
	__le32 sys_chunk_array_size;
	__le64 chunk_root_generation;
	__le64 compat_flags;
	__le64 compat_ro_flags;
	__le64 incompat_flags;
	__le16 csum_type;
	__u8 root_level;
	__u8 chunk_root_level;
	__u8 log_root_level;
	struct btrfs_dev_item dev_item;   /* the device this copy is on */
	char label[BTRFS_LABEL_SIZE];
	__le64 cache_generation;
	__le64 uuid_tree_generation;
	__u8 metadata_uuid[BTRFS_FSID_SIZE];
	__le64 nr_global_roots;
	__le64 reserved[27];
	/* (btrfs_disk_key, btrfs_chunk with its stripes) pairs for the SYSTEM chunks */
	__u8 sys_chunk_array[BTRFS_SYSTEM_CHUNK_ARRAY_SIZE];
	struct btrfs_root_backup super_roots[BTRFS_NUM_BACKUP_ROOTS];
	__u8 padding[565];
} __attribute__((packed));

/* Every tree block (node or leaf) starts with this header. */
struct btrfs_header {
	__u8 csum[BTRFS_CSUM_SIZE];       /* over the block from fsid to its end */
	__u8 fsid[BTRFS_FSID_SIZE];
	__le64 bytenr;                    /* logical address of this block */
	__le64 flags;
	__u8 chunk_tree_uuid[BTRFS_UUID_SIZE];
	__le64 generation;
	__le64 owner;                     /* tree objectid */
	__le32 nritems;
	__u8 level;                       /* 0: leaf */
} __attribute__((packed));

/* Leaf: header, then nritems btrfs_item; item data grows from the end of the block
 * backwards. offset is relative to the end of the header. */
struct btrfs_item {
	struct btrfs_disk_key key;
	__le32 offset;
	__le32 size;
} __attribute__((packed));

/* Node: header, then nritems key pointers to the blocks one level down. */
struct btrfs_key_ptr {
	struct btrfs_disk_key key;
	__le64 blockptr;
	__le64 generation;
} __attribute__((packed));

_Static_assert(sizeof(struct btrfs_super_block) == BTRFS_SUPER_SIZE, "superblock size");
_Static_assert(sizeof(struct btrfs_root_backup) == 168, "backup root size");
_Static_assert(sizeof(struct btrfs_header) == 101, "header size");
_Static_assert(sizeof(struct btrfs_item) == 25, "item size");
_Static_assert(sizeof(struct btrfs_key_ptr) == 33, "key ptr size");
_Static_assert(sizeof(struct btrfs_disk_key) == 17, "disk key size");

/* The checksum covers a block from just after the csum field to its end. */
#define BTRFS_CSUM_START BTRFS_CSUM_SIZE

#endif
