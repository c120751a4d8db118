/* Who refers to what: the files referring to a data extent, and the path of an inode
 * (for naming damaged files, and for send's clone sources). Engine conventions (fs.h). */
#ifndef FS_BACKREF_H
#define FS_BACKREF_H
#include "fs.h"

/* A file extent item referring to the data extent at bytenr: root, inode, and the file
 * offset where the extent's first byte would be (key offset minus extent offset). */
struct fs_data_ref {
	uint64_t bytenr, root, ino, offset;
};
typedef int (*fs_data_ref_fn)(void *ctx, const struct fs_data_ref *r);
/* Calls cb for each reference to the data extent holding logical: its inline and
 * keyed EXTENT_DATA_REFs, and for each SHARED_DATA_REF every file extent item of that
 * leaf pointing at the extent (root: the leaf's owner). 0, the first nonzero cb
 * result, or a negative errno. */
int fs_data_refs(struct fs *fs, uint64_t bytenr, fs_data_ref_fn cb, void *ctx);

/* Path of inode ino below the top directory of root ("dir/file", "" for the top),
 * following the first INODE_REF or INODE_EXTREF of each inode. 0 or -ENOENT,
 * -ENAMETOOLONG, -ELOOP, -EUCLEAN. */
int fs_ino_path(struct fs *fs, const struct fs_root *root, uint64_t ino, char *buf, size_t size);

/* The first INODE_REF or INODE_EXTREF of ino: parent directory and name (copied into
 * name, NUL-terminated; BTRFS_NAME_LEN_MAX + 1 bytes). 0 or -ENOENT, -EUCLEAN. */
int fs_ino_first_ref(struct fs *fs, const struct fs_root *root, uint64_t ino, uint64_t *parent,
		     char *name);

#endif
