/* Finding subvolumes of a mounted btrfs through the kernel's search ioctls: by root id,
 * by UUID or received UUID (the UUID tree), and their path from the top-level subvolume.
 * Used by send (parent and clone sources) and receive (parents, clone sources).
 * Functions return 0 or -errno; nothing prints. */
#ifndef FS_SUBVOL_LOOKUP_H
#define FS_SUBVOL_LOOKUP_H
#include <stddef.h>
#include <stdint.h>

struct subvol_item {
	uint64_t root_id, flags, ctransid, stransid;
	uint8_t uuid[16], parent_uuid[16], received_uuid[16];
};

/* Root id of the subvolume holding the open file fd. */
int subvol_root_id(int fd, uint64_t *root_id);
/* Whether fd is the top directory of a subvolume (1), not (0), or -errno. */
int subvol_is_root_dir(int fd);
/* The ROOT_ITEM of root_id (fd: any file on the filesystem). */
int subvol_get_item(int fd, uint64_t root_id, struct subvol_item *out);
/* Up to max root ids whose UUID (received == 0) or received UUID (received == 1) is
 * uuid; returns how many were found (0: none) or -errno. */
int subvol_find_uuid(int fd, const uint8_t uuid[16], int received, uint64_t *ids, int max);
/* Path of subvolume root_id relative to the top-level subvolume ("" for it). */
int subvol_path(int fd, uint64_t root_id, char *out, size_t outlen);

#endif
