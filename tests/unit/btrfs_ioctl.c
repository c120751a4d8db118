/* util/btrfs_ioctl: the parts that need no mounted filesystem. */
#include "unit.h"
#include "util/ioctl/btrfs_ioctl.h"
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

TEST(group_names)
{
	CHECK(!strcmp(btrfs_group_type_str(BTRFS_BLOCK_GROUP_DATA), "Data"));
	CHECK(!strcmp(btrfs_group_type_str(BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA),
		      "Data+Metadata"));
	CHECK(!strcmp(btrfs_group_type_str(BTRFS_SPACE_INFO_GLOBAL_RSV), "GlobalReserve"));
	CHECK(!strcmp(btrfs_group_profile_str(BTRFS_BLOCK_GROUP_METADATA), "single"));
	CHECK(!strcmp(btrfs_group_profile_str(BTRFS_SPACE_INFO_GLOBAL_RSV), "single"));
	CHECK(!strcmp(btrfs_group_profile_str(BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP), "DUP"));
	CHECK(!strcmp(btrfs_group_profile_str(BTRFS_BLOCK_GROUP_RAID1C3), "RAID1C3"));
	CHECK(!strcmp(btrfs_group_profile_str(BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID1),
		      "UNKNOWN"));
	CHECK(btrfs_profile_copies(BTRFS_BLOCK_GROUP_DUP) == 2);
	CHECK(btrfs_profile_copies(BTRFS_BLOCK_GROUP_RAID1C4) == 4);
	CHECK(btrfs_profile_copies(0) == 1);
}

TEST(group_order)
{
	const uint64_t d = BTRFS_BLOCK_GROUP_DATA, m = BTRFS_BLOCK_GROUP_METADATA,
		       s = BTRFS_BLOCK_GROUP_SYSTEM;

	CHECK(btrfs_group_order(d, m) < 0);
	CHECK(btrfs_group_order(s, m) > 0);
	CHECK(btrfs_group_order(m, s) < 0);
	CHECK(btrfs_group_order(d, d | BTRFS_BLOCK_GROUP_RAID1) < 0);
	CHECK(btrfs_group_order(d, d) == 0);
}

TEST(chunk_size_on_device)
{
	struct btrfs_chunk_usage dup = { BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP, 1, 2 << 20, 2 };
	struct btrfs_chunk_usage r0 = { BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID0, 1, 3 << 20, 3 };
	struct btrfs_chunk_usage r10 = { BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID10, 1, 4 << 20, 4 };
	struct btrfs_chunk_usage r6 = { BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID6, 1, 4 << 20, 4 };

	CHECK(btrfs_chunk_usage_on_device(&dup) == 2 << 20);
	CHECK(btrfs_chunk_usage_on_device(&r0) == 1 << 20);
	CHECK(btrfs_chunk_usage_on_device(&r10) == 2 << 20);
	CHECK(btrfs_chunk_usage_on_device(&r6) == 2 << 20);
}

TEST(multiple_profiles)
{
	struct btrfs_ioctl_space_args *sa = calloc(1, sizeof(*sa) + 4 * sizeof(sa->spaces[0]));
	char p[BTRFS_NR_CLASSES][BTRFS_PROFILES_LEN];

	sa->total_spaces = 3;
	sa->spaces[0].flags = BTRFS_BLOCK_GROUP_DATA;
	sa->spaces[1].flags = BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP;
	sa->spaces[2].flags = BTRFS_SPACE_INFO_GLOBAL_RSV;
	CHECK(btrfs_multiple_profiles(sa, p) == 0);
	sa->total_spaces = 4;
	sa->spaces[3].flags = BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID1;
	CHECK(btrfs_multiple_profiles(sa, p) == 1 << BTRFS_CLASS_DATA);
	CHECK(!strcmp(p[BTRFS_CLASS_DATA], "single, raid1"));
	free(sa);
}

TEST(sysfs_read_not_btrfs)
{
	char buf[16] = "junk";
	int fd = open("/proc", O_RDONLY | O_DIRECTORY);

	/* no BTRFS_IOC_FS_INFO outside btrfs: an error and an empty buffer */
	CHECK(fd >= 0 && btrfs_sysfs_read(fd, "exclusive_operation", buf, sizeof(buf)) < 0);
	CHECK(buf[0] == 0);
	if (fd >= 0)
		close(fd);
}
