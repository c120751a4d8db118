/* Finding subvolumes of a mounted btrfs by UUID or received UUID (the UUID tree), for
 * send (parent among clone sources) and receive (parents and clone sources). The rest
 * (root items, paths, ids) is util/ioctl/subvol.h. Functions return -errno on error and never
 * print. */
#ifndef FS_SUBVOL_LOOKUP_H
#define FS_SUBVOL_LOOKUP_H
#include <stdint.h>

/* Whether fd is the top directory of a subvolume (1), not (0), or -errno. */
int subvol_is_root_dir(int fd);
/* The most ids one UUID tree item holds (a 64 KiB leaf of le64 ids). */
#define SUBVOL_UUID_MAX_IDS 8192
/* Up to max root ids whose UUID (received == 0) or received UUID (received == 1) is
 * uuid; returns how many were found (0: none) or -errno. fd: any file on the fs. */
int subvol_find_uuid(int fd, const uint8_t uuid[16], int received, uint64_t *ids, int max);

#endif
