/* Write side: devices, chunks (with their device extents) and the logical address
 * space of a filesystem being built. Chunks are laid out from 1 MiB on each device;
 * space inside a chunk is handed out in order, never over a superblock copy. */
#ifndef FS_ALLOC_H
#define FS_ALLOC_H
#include <stdint.h>
#include <stddef.h>

#define ALLOC_MAX_DEVS 64
#define ALLOC_MAX_CHUNKS 4096
#define ALLOC_STRIPE_LEN 65536ULL
#define ALLOC_DEV_START (1024 * 1024ULL)   /* the first MiB of a device stays unused */

struct alloc_dev {
	int fd;
	uint64_t size;          /* usable bytes (-b or the device size) */
	uint64_t devid;
	uint8_t uuid[16];
	uint64_t next_phys;     /* where the next device extent starts */
};

struct alloc_stripe {
	int dev;                /* index into alloc.devs */
	uint64_t phys;
};

struct alloc_chunk {
	uint64_t logical, length;
	uint64_t type;          /* BTRFS_BLOCK_GROUP_* kind and profile */
	uint64_t stripe_size;   /* bytes of each device extent */
	int num_stripes, sub_stripes;
	struct alloc_stripe stripe[ALLOC_MAX_DEVS];
	uint64_t cursor;        /* next free byte, relative to logical */
	uint64_t used;          /* bytes handed out */
};

struct alloc {
	struct alloc_dev devs[ALLOC_MAX_DEVS];
	int ndevs;
	struct alloc_chunk *chunks;
	int nchunks;
	uint64_t next_logical;
	uint64_t floor;         /* no space below this logical address is handed out */
};

/* Profile facts: devices needed, copies of each byte, data stripes for n devices. */
int profile_min_devs(uint64_t profile);
int profile_copies(uint64_t profile);
/* Device extents a chunk of this profile has on ndevs devices. */
int profile_num_stripes(uint64_t profile, int ndevs);
/* Logical bytes a chunk holds per byte of stripe_size. */
int profile_data_stripes(uint64_t profile, int num_stripes);

void alloc_init(struct alloc *a);
void alloc_free(struct alloc *a);
/* Adds a chunk of the given type whose device extents are stripe_size bytes each.
 * Returns the chunk or NULL when the devices have no room (errno ENOSPC). */
struct alloc_chunk *alloc_chunk_add(struct alloc *a, uint64_t type, uint64_t stripe_size);
/* Free bytes left on device i. */
uint64_t alloc_dev_free(const struct alloc *a, int i);
/* Takes len bytes (aligned to align, at or above a->floor) from the chunks whose type
 * has any bit of kind set. Returns the logical address or 0 when they are full. */
uint64_t alloc_space(struct alloc *a, uint64_t kind, uint64_t len, uint64_t align);
/* Takes up to maxlen bytes (at least align) of contiguous space, stopping before a
 * superblock stripe or the end of a chunk. Returns the address (0 when full) and the
 * length taken in *got. */
uint64_t alloc_space_upto(struct alloc *a, uint64_t kind, uint64_t maxlen, uint64_t align,
			  uint64_t *got);
/* Writes buf at a logical address to every copy (len must stay inside one chunk).
 * RAID5/6 parity is written later by alloc_write_parity. Returns 0 or -errno. */
int alloc_write(struct alloc *a, uint64_t logical, const void *buf, size_t len);
/* alloc_write in two steps: the chunk holding [logical, logical + len) (NULL when no
 * one chunk does), then the writing, which reads only what stays fixed once a chunk
 * exists (its stripes, the devices): a second thread may do it while chunks are added. */
const struct alloc_chunk *alloc_chunk_of(struct alloc *a, uint64_t logical, size_t len);
int alloc_chunk_write(const struct alloc *a, const struct alloc_chunk *c, uint64_t logical,
		      const void *buf, size_t len);
/* RAID5/6: computes and writes the parity (P, and Q for RAID6) of every full stripe
 * in use, from the data on the devices. Call after all data and tree blocks are
 * written. Returns 0 or -errno. */
int alloc_write_parity(struct alloc *a);
/* Bytes of all device extents on device i. */
uint64_t alloc_dev_used(const struct alloc *a, int i);
/* Saves and restores the allocation cursors (for trial layouts). */
struct alloc_mark { uint64_t cursor[ALLOC_MAX_CHUNKS], used[ALLOC_MAX_CHUNKS]; };
void alloc_save(const struct alloc *a, struct alloc_mark *m);
void alloc_restore(struct alloc *a, const struct alloc_mark *m);

#endif
