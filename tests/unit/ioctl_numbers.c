/* ioctl request numbers as this build encodes them, checked against the encoding of the
 * target's kernel, computed here from direction, type, number and argument size without
 * the headers' _IOC macros. Architectures differ: MIPS, PowerPC, SPARC and Alpha put the
 * direction in the top 3 bits (none 1, read 2, write 4) above a 13-bit size; the others
 * in the top 2 bits (none 0, write 1, read 2) above a 14-bit size. A build against another
 * architecture's asm/ headers gets every number wrong and the kernel rejects them all.
 * Prints "ioctl NAME 0xNUMBER" lines, which make cross-test compares with the numbers the
 * cross compiler reads from the target's own headers (tests/cross/ioctl.sh). */
#include "unit.h"
#include <stddef.h>
#include <sys/ioctl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/loop.h>

#if defined(__mips__) || defined(__powerpc__) || defined(__sparc__) || defined(__alpha__)
enum { N = 1, R = 2, W = 4, SIZE_BITS = 13 };
#else
enum { N = 0, W = 1, R = 2, SIZE_BITS = 14 };
#endif

struct ioc {
	const char *name;
	unsigned long value;          /* as the headers define it */
	unsigned dir, type, nr;
	size_t size;
};

#define IOC(name, dir, type, nr, arg) { #name, name, dir, type, nr, sizeof(arg) }
#define VOL struct btrfs_ioctl_vol_args
#define VOL2 struct btrfs_ioctl_vol_args_v2
static const struct ioc iocs[] = {
	IOC(BTRFS_IOC_RESIZE, W, 0x94, 3, VOL),
	IOC(BTRFS_IOC_SCAN_DEV, W, 0x94, 4, VOL),
	IOC(BTRFS_IOC_FORGET_DEV, W, 0x94, 5, VOL),
	IOC(BTRFS_IOC_ADD_DEV, W, 0x94, 10, VOL),
	IOC(BTRFS_IOC_SUBVOL_CREATE, W, 0x94, 14, VOL),
	IOC(BTRFS_IOC_DEFRAG_RANGE, W, 0x94, 16, struct btrfs_ioctl_defrag_range_args),
	IOC(BTRFS_IOC_TREE_SEARCH, R | W, 0x94, 17, struct btrfs_ioctl_search_args),
	IOC(BTRFS_IOC_INO_LOOKUP, R | W, 0x94, 18, struct btrfs_ioctl_ino_lookup_args),
	IOC(BTRFS_IOC_DEFAULT_SUBVOL, W, 0x94, 19, __u64),
	IOC(BTRFS_IOC_SPACE_INFO, R | W, 0x94, 20, struct btrfs_ioctl_space_args),
	IOC(BTRFS_IOC_WAIT_SYNC, W, 0x94, 22, __u64),
	IOC(BTRFS_IOC_SNAP_CREATE_V2, W, 0x94, 23, VOL2),
	IOC(BTRFS_IOC_START_SYNC, R, 0x94, 24, __u64),
	IOC(BTRFS_IOC_SUBVOL_CREATE_V2, W, 0x94, 24, VOL2),
	IOC(BTRFS_IOC_SUBVOL_GETFLAGS, R, 0x94, 25, __u64),
	IOC(BTRFS_IOC_SUBVOL_SETFLAGS, W, 0x94, 26, __u64),
	IOC(BTRFS_IOC_SCRUB, R | W, 0x94, 27, struct btrfs_ioctl_scrub_args),
	{ "BTRFS_IOC_SCRUB_CANCEL", BTRFS_IOC_SCRUB_CANCEL, N, 0x94, 28, 0 },
	IOC(BTRFS_IOC_SCRUB_PROGRESS, R | W, 0x94, 29, struct btrfs_ioctl_scrub_args),
	IOC(BTRFS_IOC_DEV_INFO, R | W, 0x94, 30, struct btrfs_ioctl_dev_info_args),
	IOC(BTRFS_IOC_FS_INFO, R, 0x94, 31, struct btrfs_ioctl_fs_info_args),
	IOC(BTRFS_IOC_SET_RECEIVED_SUBVOL, R | W, 0x94, 37, struct btrfs_ioctl_received_subvol_args),
	IOC(BTRFS_IOC_SEND, W, 0x94, 38, struct btrfs_ioctl_send_args),
	IOC(BTRFS_IOC_DEVICES_READY, R, 0x94, 39, VOL),
	IOC(BTRFS_IOC_GET_DEV_STATS, R | W, 0x94, 52, struct btrfs_ioctl_get_dev_stats),
	IOC(BTRFS_IOC_RM_DEV_V2, W, 0x94, 58, VOL2),
	IOC(BTRFS_IOC_SNAP_DESTROY_V2, W, 0x94, 63, VOL2),
	IOC(BTRFS_IOC_ENCODED_WRITE, W, 0x94, 64, struct btrfs_ioctl_encoded_io_args),
	{ "BTRFS_IOC_SYNC", BTRFS_IOC_SYNC, N, 0x94, 8, 0 },
	IOC(FICLONERANGE, W, 0x94, 13, struct file_clone_range),
	IOC(FS_IOC_GETFSLABEL, R, 0x94, 49, char[FSLABEL_MAX]),
	IOC(FS_IOC_SETFSLABEL, W, 0x94, 50, char[FSLABEL_MAX]),
	IOC(FS_IOC_ENABLE_VERITY, W, 'f', 133, struct fsverity_enable_arg),
	IOC(BLKGETSIZE64, R, 0x12, 114, size_t),
	{ "BLKDISCARD", BLKDISCARD, N, 0x12, 119, 0 },
};

static unsigned long encode(const struct ioc *c)
{
	return (unsigned long)c->dir << (16 + SIZE_BITS) | (unsigned long)c->size << 16 |
	       c->type << 8 | c->nr;
}

TEST(ioctl_numbers_encoded_for_target)
{
	for (size_t i = 0; i < sizeof(iocs) / sizeof(iocs[0]); i++) {
		printf("ioctl %s 0x%08lx\n", iocs[i].name, iocs[i].value);
		if (iocs[i].value != encode(&iocs[i]))
			fprintf(stderr, "  %s is 0x%08lx, the kernel wants 0x%08lx\n",
				iocs[i].name, iocs[i].value, encode(&iocs[i]));
		CHECK(iocs[i].value == encode(&iocs[i]));
	}
}

/* The loop device ioctls are plain numbers, the same everywhere. */
TEST(ioctl_loop_numbers)
{
	static const struct { const char *name; unsigned long value, want; } loop[] = {
		{ "LOOP_SET_FD", LOOP_SET_FD, 0x4C00 },
		{ "LOOP_CLR_FD", LOOP_CLR_FD, 0x4C01 },
		{ "LOOP_SET_STATUS64", LOOP_SET_STATUS64, 0x4C04 },
		{ "LOOP_CONFIGURE", LOOP_CONFIGURE, 0x4C0A },
		{ "LOOP_CTL_GET_FREE", LOOP_CTL_GET_FREE, 0x4C82 },
	};

	for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++) {
		printf("ioctl %s 0x%08lx\n", loop[i].name, loop[i].value);
		CHECK(loop[i].value == loop[i].want);
	}
}

/* One spelled out: a MIPS kernel wants 0x4400941f, x86, ARM and AArch64 ones 0x8400941f. */
TEST(ioctl_fs_info_literal)
{
	CHECK(BTRFS_IOC_FS_INFO == (R == 2 && W == 4 ? 0x4400941fUL : 0x8400941fUL));
}
