/* Stage 6: subvolume links. A ROOT_REF (parent tree, child tree) needs its
 * ROOT_BACKREF with the same directory, index and name, and the parent tree
 * needs the matching DIR_ITEM and DIR_INDEX pointing at the child's root; every
 * live subvolume needs a backref. One lookup per subvolume, nothing kept. */
#include "check_internal.h"
#include "le.h"
#include <stdio.h>
#include <string.h>

static int ref_equal(const struct fs_root_ref *a, const struct fs_root_ref *b)
{
	return a->dirid == b->dirid && a->sequence == b->sequence && a->name_len == b->name_len &&
	       !memcmp(a->name, b->name, a->name_len);
}

/* Looks up key in tree and runs match over the item; 1 when match said so. */
static int item_matches(struct check_ctx *c, const struct fs_root *tree, const struct fs_key *key,
			int (*match)(const uint8_t *data, uint32_t size, const void *arg),
			const void *arg)
{
	struct fs_path p;
	const uint8_t *data;
	uint32_t size;
	int ok = 0;

	fs_path_init(&p);
	if (fs_lookup(c->fs, tree, key, &p) == 0) {
		data = fs_path_data(&p, &size);
		ok = data && match(data, size, arg);
	}
	fs_path_release(c->fs, &p);
	return ok;
}

static int match_root_ref(const uint8_t *data, uint32_t size, const void *arg)
{
	struct fs_root_ref r;

	return fs_root_ref(data, size, &r) == 0 && ref_equal(&r, arg);
}

struct dir_want {
	uint64_t child;
	const char *name;
	uint16_t name_len;
};

static int match_dir_entry(const uint8_t *data, uint32_t size, const void *arg)
{
	const struct dir_want *w = arg;
	struct fs_dir_entry de;
	uint32_t pos = 0;

	while (fs_dir_entry_next(data, size, &pos, &de) == 1)
		if (de.location.type == BTRFS_ROOT_ITEM_KEY && de.location.objectid == w->child &&
		    de.name_len == w->name_len && !memcmp(de.name, w->name, w->name_len))
			return 1;
	return 0;
}

static void check_root_ref(struct check_ctx *c, const struct fs_key *key, const struct fs_root_ref *r)
{
	uint64_t parent = key->objectid, child = key->offset;
	struct fs_key back = { child, BTRFS_ROOT_BACKREF_KEY, parent };
	struct dir_want w = { child, r->name, r->name_len };
	struct fs_root ptree;
	struct fs_key k;
	char name[64];

	snprintf(name, sizeof(name), "%.*s", r->name_len > 60 ? 60 : r->name_len, r->name);
	if (!item_matches(c, &c->root_tree, &back, match_root_ref, r))
		ck_err(c, child, 0, 0, 0,
		       "root %llu: ROOT_REF from %llu (dir %llu index %llu name %s) has no matching ROOT_BACKREF",
		       (unsigned long long)child, (unsigned long long)parent,
		       (unsigned long long)r->dirid, (unsigned long long)r->sequence, name);
	if (fs_root_lookup(c->fs, parent, &ptree) < 0) {
		ck_err(c, child, 0, 0, 0, "root %llu is linked from root %llu, which does not exist",
		       (unsigned long long)child, (unsigned long long)parent);
		return;
	}
	k = (struct fs_key){ r->dirid, BTRFS_DIR_INDEX_KEY, r->sequence };
	if (!item_matches(c, &ptree, &k, match_dir_entry, &w))
		ck_err(c, child, 0, 0, 0,
		       "root %llu: no dir index %llu for it in dir %llu of root %llu (name %s)",
		       (unsigned long long)child, (unsigned long long)r->sequence,
		       (unsigned long long)r->dirid, (unsigned long long)parent, name);
	k = (struct fs_key){ r->dirid, BTRFS_DIR_ITEM_KEY, ck_name_hash(r->name, r->name_len) };
	if (!item_matches(c, &ptree, &k, match_dir_entry, &w))
		ck_err(c, child, 0, 0, 0, "root %llu: no dir item for it in dir %llu of root %llu (name %s)",
		       (unsigned long long)child, (unsigned long long)r->dirid,
		       (unsigned long long)parent, name);
}

static int has_backref(struct check_ctx *c, uint64_t root)
{
	struct fs_key k = { root, BTRFS_ROOT_BACKREF_KEY, 0 }, found;
	struct fs_path p;
	int ok = 0;

	fs_path_init(&p);
	if (fs_search(c->fs, &c->root_tree, &k, &p) == 0 && p.levels) {
		fs_path_key(&p, &found);
		ok = found.objectid == root && found.type == BTRFS_ROOT_BACKREF_KEY;
	}
	fs_path_release(c->fs, &p);
	return ok;
}

static int root_ref_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		       uint32_t size, void *arg)
{
	struct fs_root_ref r;

	(void)arg;
	if (key->type == BTRFS_ROOT_REF_KEY) {
		if (fs_root_ref(data, size, &r) < 0)
			ck_err(c, key->offset, 0, 0, 0, "corrupt ROOT_REF (%llu %llu)",
			       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		else
			check_root_ref(c, key, &r);
	} else if (key->type == BTRFS_ROOT_BACKREF_KEY) {
		struct fs_key fwd = { key->offset, BTRFS_ROOT_REF_KEY, key->objectid };

		if (fs_root_ref(data, size, &r) < 0)
			ck_err(c, key->objectid, 0, 0, 0, "corrupt ROOT_BACKREF (%llu %llu)",
			       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		else if (!item_matches(c, &c->root_tree, &fwd, match_root_ref, &r))
			ck_err(c, key->objectid, 0, 0, 0,
			       "root %llu: ROOT_BACKREF to %llu has no matching ROOT_REF",
			       (unsigned long long)key->objectid, (unsigned long long)key->offset);
	} else if (key->type == BTRFS_ROOT_ITEM_KEY && key->objectid >= BTRFS_FIRST_FREE_OBJECTID &&
		   key->objectid <= BTRFS_LAST_FREE_OBJECTID) {
		struct btrfs_root_item ri;

		if (fs_root_item(data, size, &ri) == 0 && get_le32(&ri.refs) > 0 &&
		    !get_le64(&ri.drop_progress.objectid) && !has_backref(c, key->objectid))
			ck_err(c, key->objectid, 0, 0, 0,
			       "root %llu is not linked from any directory (no ROOT_BACKREF)",
			       (unsigned long long)key->objectid);
	}
	return 0;
}

int check_root_refs(struct check_ctx *c)
{
	struct fs_key from = { 0, 0, 0 };

	return ck_iterate(c, &c->root_tree, &from, root_ref_cb, NULL);
}
