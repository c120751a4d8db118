//build:Oz
/* Subvolumes of a mounted btrfs through tree search and inode lookup (see subvol.h). */
#include "subvol.h"
#include "util/le.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/btrfs_tree.h>
#include <linux/magic.h>

static void key_next(struct btrfs_ioctl_search_key *sk, uint64_t obj, uint8_t type, uint64_t off)
{
	sk->min_objectid = obj;
	sk->min_type = type;
	sk->min_offset = off + 1;
	if (sk->min_offset)
		return;
	if (++sk->min_type)
		return;
	sk->min_objectid++;
}

int tree_search(int fd, uint64_t tree_id, const struct tree_key *min,
		const struct tree_key *max, tree_search_fn fn, void *ctx)
{
	return tree_search_since(fd, tree_id, min, max, 0, fn, ctx);
}

/* One search: BTRFS_IOC_TREE_SEARCH_V2 with room for the largest leaf (the first
 * ioctl's buffer holds 3992 bytes: a larger item, such as a UUID tree item naming
 * hundreds of subvolumes, comes with a length of 0), or where the kernel lacks it (before
 * 3.15), BTRFS_IOC_TREE_SEARCH. *v2 is allocated at the first call. */
#define SEARCH_V2_BUF 65536
static int search_ioctl(int fd, struct btrfs_ioctl_search_args *v1,
			struct btrfs_ioctl_search_args_v2 **v2, int *old_kernel)
{
	if (!*old_kernel) {
		if (!*v2 && !(*v2 = calloc(1, sizeof(**v2) + SEARCH_V2_BUF)))
			return -ENOMEM;
		(*v2)->key = v1->key;
		(*v2)->buf_size = SEARCH_V2_BUF;
		if (ioctl(fd, BTRFS_IOC_TREE_SEARCH_V2, *v2) == 0) {
			v1->key = (*v2)->key;
			return 0;
		}
		if (errno != ENOTTY)
			return -errno;
		*old_kernel = 1;
	}
	return ioctl(fd, BTRFS_IOC_TREE_SEARCH, v1) < 0 ? -errno : 0;
}

/* Hands the items of one search's buffer to fn and moves sk past the last (*done
 * when nothing is left): 0, or fn's value that stops, or an error. */
static int search_items(struct btrfs_ioctl_search_key *sk, const char *buf, size_t size,
			const struct tree_key *max, tree_search_fn fn, void *ctx, int *done)
{
	struct btrfs_ioctl_search_header sh;
	size_t off = 0;
	int ret;

	*done = sk->nr_items == 0;
	if (*done)
		return 0;
	for (uint32_t i = 0; i < sk->nr_items; i++) {
		if (off + sizeof(sh) > size)
			return -EIO;
		memcpy(&sh, buf + off, sizeof(sh));
		off += sizeof(sh);
		if (sh.len > size - off)
			return -EIO;
		ret = fn(&sh, buf + off, ctx);
		if (ret)
			return ret;
		off += sh.len;
		key_next(sk, sh.objectid, (uint8_t)sh.type, sh.offset);
	}
	/* the last key was the maximum: the increment wrapped around */
	*done = (sh.objectid == max->objectid && sh.type == max->type && sh.offset == max->offset) ||
		sk->min_objectid < sh.objectid;
	return 0;
}

int tree_search_since(int fd, uint64_t tree_id, const struct tree_key *min,
		      const struct tree_key *max, uint64_t min_transid, tree_search_fn fn,
		      void *ctx)
{
	struct btrfs_ioctl_search_args args;
	struct btrfs_ioctl_search_args_v2 *v2 = NULL;
	struct btrfs_ioctl_search_key *sk = &args.key;
	int ret, done = 0, old_kernel = 0;

	memset(&args, 0, sizeof(args));
	sk->tree_id = tree_id;
	sk->min_objectid = min->objectid;
	sk->min_type = min->type;
	sk->min_offset = min->offset;
	sk->max_objectid = max->objectid;
	sk->max_type = max->type;
	sk->max_offset = max->offset;
	sk->min_transid = min_transid;
	sk->max_transid = (uint64_t)-1;
	do {
		sk->nr_items = 4096;
		ret = search_ioctl(fd, &args, &v2, &old_kernel);
		if (!ret)
			ret = search_items(sk, old_kernel ? args.buf : (const char *)v2->buf,
					   old_kernel ? sizeof(args.buf) : SEARCH_V2_BUF, max, fn, ctx, &done);
	} while (!ret && !done);
	free(v2);
	return ret;
}

int subvol_id_of_fd(int fd, uint64_t *id)
{
	struct btrfs_ioctl_ino_lookup_args args;

	memset(&args, 0, sizeof(args));
	args.objectid = BTRFS_FIRST_FREE_OBJECTID;
	if (ioctl(fd, BTRFS_IOC_INO_LOOKUP, &args) < 0)
		return -errno;
	*id = args.treeid;
	return 0;
}

/* struct btrfs_root_item (packed, little-endian); short v0 items lack the tail. */
static void parse_root_item(struct subvol_entry *e, const void *item, uint32_t len)
{
	struct btrfs_root_item ri;

	memset(&ri, 0, sizeof(ri));
	memcpy(&ri, item, len < sizeof(ri) ? len : sizeof(ri));
	e->has_root_item = 1;
	e->generation = get_le64(&ri.generation);
	e->flags = get_le64(&ri.flags);
	if (len < sizeof(ri))
		return;
	e->otransid = get_le64(&ri.otransid);
	e->ctransid = get_le64(&ri.ctransid);
	e->stransid = get_le64(&ri.stransid);
	e->rtransid = get_le64(&ri.rtransid);
	e->otime = (int64_t)get_le64(&ri.otime.sec);
	e->stime = (int64_t)get_le64(&ri.stime.sec);
	e->rtime = (int64_t)get_le64(&ri.rtime.sec);
	memcpy(e->uuid, ri.uuid, 16);
	memcpy(e->parent_uuid, ri.parent_uuid, 16);
	memcpy(e->received_uuid, ri.received_uuid, 16);
}

/* struct btrfs_root_ref: dirid, sequence, name_len, then the name. */
static int parse_root_backref(struct subvol_entry *e, uint64_t parent, const void *item,
			      uint32_t len)
{
	const struct btrfs_root_ref *ref = item;
	uint16_t name_len;

	if (len < sizeof(*ref))
		return -EIO;
	name_len = get_le16(&ref->name_len);
	if (name_len > len - sizeof(*ref) || name_len == 0)
		return -EIO;
	free(e->name);
	e->name = strndup((const char *)(ref + 1), name_len);
	if (!e->name)
		return -ENOMEM;
	e->parent_id = parent;
	e->dir_id = get_le64(&ref->dirid);
	return 0;
}

/* Applies one ROOT_ITEM or ROOT_BACKREF item to its entry. */
static int apply_root_tree_item(struct subvol_entry *e, const struct btrfs_ioctl_search_header *sh,
				const void *item)
{
	if (sh->type == BTRFS_ROOT_BACKREF_KEY)
		return parse_root_backref(e, sh->offset, item, sh->len);
	if (sh->type == BTRFS_ROOT_ITEM_KEY) {
		parse_root_item(e, item, sh->len);
		if (sh->offset)
			e->root_offset = sh->offset;
	}
	return 0;
}

static int one_item(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	return apply_root_tree_item(ctx, sh, item);
}

int subvol_get(int fd, uint64_t id, struct subvol_entry *out)
{
	struct tree_key min = { 0, BTRFS_ROOT_ITEM_KEY, 0 };
	struct tree_key max = { 0, BTRFS_ROOT_BACKREF_KEY, (uint64_t)-1 };
	int ret;

	memset(out, 0, sizeof(*out));
	if (!id && (ret = subvol_id_of_fd(fd, &id)))
		return ret;
	min.objectid = max.objectid = id;
	out->id = id;
	ret = tree_search(fd, BTRFS_ROOT_TREE_OBJECTID, &min, &max, one_item, out);
	if (!ret && !out->has_root_item)
		ret = -ENOENT;
	if (ret)
		subvol_free(out);
	return ret;
}

void subvol_free(struct subvol_entry *e)
{
	free(e->name);
	free(e->rel_path);
	e->name = e->rel_path = NULL;
}

void subvol_free_all(struct subvol_entry *all, size_t count)
{
	for (size_t i = 0; i < count; i++)
		subvol_free(&all[i]);
	free(all);
}

struct collect {
	struct subvol_entry *v;
	size_t n, cap;
};

static int collect_item(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct collect *c = ctx;
	struct subvol_entry *e;

	if (sh->type != BTRFS_ROOT_BACKREF_KEY &&
	    !(sh->type == BTRFS_ROOT_ITEM_KEY &&
	      (sh->objectid >= BTRFS_FIRST_FREE_OBJECTID || sh->objectid == BTRFS_FS_TREE_OBJECTID)))
		return 0;
	/* keys come sorted by objectid: the entry is the last one or a new one */
	if (!c->n || c->v[c->n - 1].id != sh->objectid) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			void *p = realloc(c->v, cap * sizeof(*c->v));

			if (!p)
				return -ENOMEM;
			c->v = p;
			c->cap = cap;
		}
		e = &c->v[c->n++];
		memset(e, 0, sizeof(*e));
		e->id = sh->objectid;
	}
	return apply_root_tree_item(&c->v[c->n - 1], sh, item);
}

/* Directory path of dir_id inside tree_id, with a trailing '/' ("" at its root). */
static int lookup_dir(int fd, uint64_t tree_id, uint64_t dir_id, char *out, size_t size)
{
	struct btrfs_ioctl_ino_lookup_args args;

	memset(&args, 0, sizeof(args));
	args.treeid = tree_id;
	args.objectid = dir_id;
	if (ioctl(fd, BTRFS_IOC_INO_LOOKUP, &args) < 0)
		return -errno;
	args.name[sizeof(args.name) - 1] = 0;
	snprintf(out, size, "%s", args.name);
	return 0;
}

static int resolve_rel_path(int fd, struct subvol_entry *e)
{
	char dir[BTRFS_INO_LOOKUP_PATH_MAX];
	int ret;

	if (!e->parent_id || !e->name)
		return -ENOENT;
	ret = lookup_dir(fd, e->parent_id, e->dir_id, dir, sizeof(dir));
	if (ret)
		return ret;
	if (asprintf(&e->rel_path, "%s%s", dir, e->name) < 0) {
		e->rel_path = NULL;
		return -ENOMEM;
	}
	return 0;
}

int subvol_get_all(int fd, struct subvol_entry **out, size_t *count)
{
	struct tree_key min = { BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	struct tree_key max = { BTRFS_LAST_FREE_OBJECTID, BTRFS_ROOT_BACKREF_KEY, (uint64_t)-1 };
	struct collect c = { 0 };
	int ret;

	ret = tree_search(fd, BTRFS_ROOT_TREE_OBJECTID, &min, &max, collect_item, &c);
	for (size_t i = 0; !ret && i < c.n; i++) {
		ret = resolve_rel_path(fd, &c.v[i]);
		if (ret == -ENOENT) {  /* the directory is gone: a deleted subvolume */
			c.v[i].parent_id = 0;
			ret = 0;
		}
	}
	if (ret) {
		subvol_free_all(c.v, c.n);
		return ret;
	}
	*out = c.v;
	*count = c.n;
	return 0;
}

int subvol_path(int fd, uint64_t id, char **path)
{
	char *acc = strdup(""), *tmp;
	struct subvol_entry e;
	int ret = 0;

	while (acc && id != BTRFS_FS_TREE_OBJECTID) {
		ret = subvol_get(fd, id, &e);
		if (!ret)
			ret = resolve_rel_path(fd, &e);
		if (ret) {
			subvol_free(&e);
			free(acc);
			return ret;
		}
		if (asprintf(&tmp, "%s%s%s", e.rel_path, *acc ? "/" : "", acc) < 0)
			tmp = NULL;
		free(acc);
		acc = tmp;
		id = e.parent_id;
		subvol_free(&e);
	}
	if (!acc)
		return -ENOMEM;
	*path = acc;
	return 0;
}

struct qgroup_found { struct subvol_qgroup *q; uint64_t id; int found; };

/* QGROUP_INFO (struct btrfs_qgroup_info_item) and QGROUP_LIMIT
 * (struct btrfs_qgroup_limit_item) items of the quota tree, keyed (0, type, qgroupid). */
static int qgroup_item(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct qgroup_found *f = ctx;

	/* the key range also holds other qgroups' INFO items (offset > id) */
	if (sh->offset != f->id || sh->objectid != 0)
		return 0;
	if (sh->type == BTRFS_QGROUP_INFO_KEY && sh->len >= sizeof(struct btrfs_qgroup_info_item)) {
		const struct btrfs_qgroup_info_item *info = item;

		f->q->rfer = get_le64(&info->rfer);
		f->q->excl = get_le64(&info->excl);
		f->found = 1;
	} else if (sh->type == BTRFS_QGROUP_LIMIT_KEY &&
		   sh->len >= sizeof(struct btrfs_qgroup_limit_item)) {
		const struct btrfs_qgroup_limit_item *lim = item;

		f->q->max_rfer = get_le64(&lim->max_rfer);
		f->q->max_excl = get_le64(&lim->max_excl);
		f->found = 1;
	}
	return 0;
}

int subvol_qgroup(int fd, uint64_t id, struct subvol_qgroup *q)
{
	struct tree_key min = { 0, BTRFS_QGROUP_INFO_KEY, id };
	struct tree_key max = { 0, BTRFS_QGROUP_LIMIT_KEY, id };
	struct qgroup_found f = { q, id, 0 };
	int ret;

	memset(q, 0, sizeof(*q));
	ret = tree_search(fd, BTRFS_QUOTA_TREE_OBJECTID, &min, &max, qgroup_item, &f);
	if (ret == -ENOENT)
		return -ENOTTY;
	if (ret)
		return ret;
	return f.found ? 0 : -ENODATA;
}

struct inode_ref { uint64_t dir; char *name; };

/* The first INODE_REF of an inode: key offset = parent directory, then struct
 * btrfs_inode_ref (index, name_len) and the name. */
static int first_inode_ref(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	const struct btrfs_inode_ref *ref = item;
	struct inode_ref *r = ctx;
	uint16_t len;

	if (sh->type != BTRFS_INODE_REF_KEY || sh->len < sizeof(*ref))
		return 0;
	len = get_le16(&ref->name_len);
	if (len > sh->len - sizeof(*ref))
		return -EIO;
	r->dir = sh->offset;
	r->name = strndup((const char *)(ref + 1), len);
	return r->name ? 1 : -ENOMEM;
}

int subvol_inode_path(int fd, uint64_t ino, char **path)
{
	struct tree_key min = { ino, BTRFS_INODE_REF_KEY, 0 };
	struct tree_key max = { ino, BTRFS_INODE_REF_KEY, (uint64_t)-1 };
	char dir[BTRFS_INO_LOOKUP_PATH_MAX];
	struct inode_ref r = { 0, NULL };
	int ret = tree_search(fd, 0, &min, &max, first_inode_ref, &r);

	if (ret < 0)
		return ret;
	if (!r.name)
		return -ENOENT;
	ret = lookup_dir(fd, 0, r.dir, dir, sizeof(dir));
	if (!ret && asprintf(path, "%s%s", dir, r.name) < 0)
		ret = -ENOMEM;
	free(r.name);
	return ret;
}

/* The root tree directory holds one DIR_ITEM named "default" whose location key
 * names the default subvolume (struct btrfs_dir_item, then the name). */
static int find_default(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	const struct btrfs_dir_item *di = item;
	uint32_t off = 0;

	if (sh->type != BTRFS_DIR_ITEM_KEY)
		return 0;
	while (off + sizeof(*di) <= sh->len) {
		uint16_t name_len, data_len;

		di = (const void *)((const char *)item + off);
		name_len = get_le16(&di->name_len);
		data_len = get_le16(&di->data_len);
		if (off + sizeof(*di) + name_len + data_len > sh->len)
			return -EIO;
		if (name_len == 7 && !memcmp(di + 1, "default", 7)) {
			*(uint64_t *)ctx = get_le64(&di->location.objectid);
			return 1;
		}
		off += sizeof(*di) + name_len + data_len;
	}
	return 0;
}

int subvol_default_id(int fd, uint64_t *id)
{
	struct tree_key min = { BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY, 0 };
	struct tree_key max = { BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY, (uint64_t)-1 };
	uint64_t found = 0;
	int ret = tree_search(fd, BTRFS_ROOT_TREE_OBJECTID, &min, &max, find_default, &found);

	if (ret < 0)
		return ret;
	*id = found ? found : BTRFS_FS_TREE_OBJECTID;
	return 0;
}

struct id_list { uint64_t *v; size_t n; };

static int collect_orphan(const struct btrfs_ioctl_search_header *sh, const void *item, void *ctx)
{
	struct id_list *l = ctx;
	uint64_t *p;

	(void)item;
	if (sh->type != BTRFS_ORPHAN_ITEM_KEY)
		return 0;
	p = realloc(l->v, (l->n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	l->v = p;
	l->v[l->n++] = sh->offset;
	return 0;
}

int subvol_deleted_ids(int fd, uint64_t **ids, size_t *count)
{
	struct tree_key min = { BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, 0 };
	struct tree_key max = { BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, (uint64_t)-1 };
	struct id_list l = { 0 };
	int ret = tree_search(fd, BTRFS_ROOT_TREE_OBJECTID, &min, &max, collect_orphan, &l);

	if (ret < 0) {
		free(l.v);
		return ret;
	}
	*ids = l.v;
	*count = l.n;
	return 0;
}

int subvol_check_path(const char *path)
{
	struct statfs sfs;
	struct stat st;

	if (statfs(path, &sfs) < 0)
		return -errno;
	if (sfs.f_type != BTRFS_SUPER_MAGIC)
		return -ENOTTY;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_ino != BTRFS_FIRST_FREE_OBJECTID)
		return -EINVAL;
	return 0;
}

const char *subvol_strerror(int err)
{
	switch (err) {
	case -ENOTTY: return "Not a Btrfs filesystem";
	case -EINVAL: return "Not a Btrfs subvolume";
	default: return "Could not statfs";
	}
}
