/* Subvolumes of a mounted btrfs, through the kernel's tree search and inode lookup
 * ioctls (root tree items: ROOT_ITEM, ROOT_BACKREF, the "default" DIR_ITEM, ORPHAN
 * items). Functions return 0 or a negative errno; they never print. */
#ifndef UTIL_SUBVOL_H
#define UTIL_SUBVOL_H
#include <stddef.h>
#include <stdint.h>
#include <linux/btrfs.h>

struct subvol_entry {
	uint64_t id;
	uint64_t parent_id;    /* tree holding the directory entry, 0 when unlinked */
	uint64_t dir_id;       /* inode of that directory in parent_id */
	uint64_t root_offset;  /* ROOT_ITEM key offset: the source generation of a snapshot */
	uint64_t flags;        /* BTRFS_ROOT_SUBVOL_RDONLY ... */
	uint64_t generation, otransid, ctransid, stransid, rtransid;
	int64_t otime, stime, rtime;     /* seconds */
	uint8_t uuid[16], parent_uuid[16], received_uuid[16];
	char *name;            /* name in its directory, NULL without a ROOT_BACKREF */
	char *rel_path;        /* path below parent_id (directories + name), NULL if unresolved */
	int has_root_item;
};

struct tree_key { uint64_t objectid; uint8_t type; uint64_t offset; };

/* Calls fn for every item with min <= (objectid, type, offset) <= max in tree
 * tree_id. fn returns 0 to go on, anything else to stop (returned as is).
 * item_len is checked against the search buffer. */
typedef int (*tree_search_fn)(const struct btrfs_ioctl_search_header *sh,
			      const void *item, void *ctx);
int tree_search(int fd, uint64_t tree_id, const struct tree_key *min,
		const struct tree_key *max, tree_search_fn fn, void *ctx);
/* The same over tree blocks written in transaction min_transid or later only. */
int tree_search_since(int fd, uint64_t tree_id, const struct tree_key *min,
		      const struct tree_key *max, uint64_t min_transid, tree_search_fn fn,
		      void *ctx);

/* Path of inode ino inside the subvolume of fd, from its first INODE_REF
 * ("dir/name"), malloc'ed. -ENOENT when it has none. */
int subvol_inode_path(int fd, uint64_t ino, char **path);
/* Id of the subvolume containing the open file fd. */
int subvol_id_of_fd(int fd, uint64_t *id);
/* One subvolume (id 0: the one containing fd); -ENOENT when it has no ROOT_ITEM. */
int subvol_get(int fd, uint64_t id, struct subvol_entry *out);
/* Every subvolume with a ROOT_ITEM or ROOT_BACKREF (FS_TREE included), sorted by id,
 * with rel_path resolved where possible. Free with subvol_free_all. */
int subvol_get_all(int fd, struct subvol_entry **out, size_t *count);
void subvol_free(struct subvol_entry *e);
void subvol_free_all(struct subvol_entry *all, size_t count);
/* Path of subvolume id from the top level (""), malloc'ed; -ENOENT when unreachable. */
int subvol_path(int fd, uint64_t id, char **path);
/* Quota group 0/id: usage and limits (0: no limit). -ENOTTY when quotas are off,
 * -ENODATA when the qgroup does not exist. */
struct subvol_qgroup { uint64_t rfer, excl, max_rfer, max_excl; };
int subvol_qgroup(int fd, uint64_t id, struct subvol_qgroup *q);
/* Default subvolume id (the "default" entry of the root tree directory). */
int subvol_default_id(int fd, uint64_t *id);
/* Ids of deleted subvolumes not yet cleaned (orphan items), malloc'ed. */
int subvol_deleted_ids(int fd, uint64_t **ids, size_t *count);
/* 0 when path is the root directory of a subvolume on btrfs, -ENOTTY when not on
 * btrfs, -EINVAL when not a subvolume, other -errno when stat fails. */
int subvol_check_path(const char *path);
/* Human text for subvol_check_path()'s errors, the wording of btrfs-progs. */
const char *subvol_strerror(int err);

#endif
