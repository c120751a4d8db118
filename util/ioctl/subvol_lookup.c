//build:Oz
/* Subvolume lookups by UUID through the UUID tree (BTRFS_IOC_TREE_SEARCH). */
#include "subvol.h"
#include "subvol_lookup.h"
#include "util/le.h"
#include <errno.h>
#include <sys/stat.h>
#include <linux/btrfs_tree.h>

int subvol_is_root_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) && st.st_ino == BTRFS_FIRST_FREE_OBJECTID;
}

struct id_list { uint64_t *ids; int n, max; };

/* An item of the UUID tree: the le64 ids of the subvolumes carrying that UUID. */
static int take_ids(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct id_list *l = ctx;
	const uint8_t *p = item;
	uint32_t i;

	for (i = 0; i + 8 <= sh->len && l->n < l->max; i += 8)
		l->ids[l->n++] = get_le64(p + i);
	return 0;
}

int subvol_find_uuid(int fd, const uint8_t uuid[16], int received, uint64_t *ids, int max)
{
	/* UUID tree key: (le64 of uuid bytes 0-7, type, le64 of uuid bytes 8-15) */
	struct tree_key key = {
		get_le64(uuid),
		received ? BTRFS_UUID_KEY_RECEIVED_SUBVOL : BTRFS_UUID_KEY_SUBVOL,
		get_le64(uuid + 8),
	};
	struct id_list l = { ids, 0, max };
	int ret = tree_search(fd, BTRFS_UUID_TREE_OBJECTID, &key, &key, take_ids, &l);

	return ret < 0 ? ret : l.n;
}
