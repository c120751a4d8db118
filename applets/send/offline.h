/* btrfs send --device: the send stream of subvolumes of an unmounted filesystem
 * (applets/send/offline.c), with the options send.c parsed. */
#ifndef APPLETS_SEND_OFFLINE_H
#define APPLETS_SEND_OFFLINE_H
#include <stddef.h>
#include <stdint.h>

struct send_offline_args {
	char **devices;                 /* the filesystem's devices or image files */
	int ndev;
	const char *parent;             /* -p: path inside the filesystem, or NULL */
	char **clones;                  /* -c paths */
	int nclones;
	char **subvols;                 /* the subvolumes to send */
	int nsubvols;
	uint32_t version;               /* stream version; 0: the highest */
	uint64_t flags;                 /* BTRFS_SEND_FLAG_NO_FILE_DATA, _COMPRESSED */
	int end_semantic, verbose, out_fd;
};

/* Sends them; 0, or 1 after an error message. */
int send_offline(const struct send_offline_args *a);

#endif
