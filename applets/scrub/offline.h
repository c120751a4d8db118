/* btrfs scrub of an unmounted filesystem (applets/scrub/offline.c), driven by scrub.c: the
 * same options, reports, status file, cancel and resume as a scrub through the kernel. */
#ifndef APPLETS_SCRUB_OFFLINE_H
#define APPLETS_SCRUB_OFFLINE_H
#include <stdint.h>
#include <linux/btrfs.h>

struct scrub_offline;

/* 1 when *path is a device or image file that no mounted filesystem uses (scrub it
 * offline), 0 otherwise; for an image file mounted through a loop device *path is
 * changed to that device (the kernel scrubs it). */
int scrub_offline_target(const char **path);
/* Opens the filesystem on paths (and its other devices, found by a scan); fills its
 * fsid and, for the devices given, di (devid, path, bytes_used). writable: open the
 * devices for repairs too. NULL after an error message. */
struct scrub_offline *scrub_offline_open(char *const *paths, int n, int writable, uint8_t fsid[16],
					 struct btrfs_ioctl_dev_info_args **di, int *ndev);
void scrub_offline_close(struct scrub_offline *o);
/* Marks the scrub of fsid as running by this process (the file scrub cancel reads). */
void scrub_offline_mark_running(struct scrub_offline *o);
/* The pid of a running offline scrub of fsid (text form), 0 when none. */
int scrub_offline_running(const char *fsid);
/* Scrubs device a->devid from a->start (0: also its superblocks) into a->progress.
 * 0, or -1 with errno set (ECANCELED after scrub_offline_cancel). */
int scrub_offline_dev(struct scrub_offline *o, struct btrfs_ioctl_scrub_args *a);
/* The progress so far of device devid. */
void scrub_offline_progress(struct scrub_offline *o, uint64_t devid, struct btrfs_scrub_progress *p);
/* Stops the runs at their next window (async-signal-safe). */
void scrub_offline_cancel(struct scrub_offline *o);
/* btrfs scrub cancel of an unmounted filesystem: signals the process scrubbing it and
 * waits until it stopped. The exit status (2: no scrub running). */
int scrub_offline_cancel_path(const char *path);

#endif
