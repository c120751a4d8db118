//build:Oz
/* Stage 6: subvolume links, the uuid tree and the device stats items.
 *
 * A subvolume is named by a ROOT_REF (parent tree, child) and a ROOT_BACKREF
 * (child, parent) with the same directory, index and name, and by a DIR_ITEM
 * and DIR_INDEX in the parent tree pointing at the child's ROOT_ITEM. The
 * names of a subvolume that have their ROOT_REF and DIR_ITEM must number
 * its root item's refs; a subvolume without any (deleted, being dropped) needs
 * an orphan item. The root tree is streamed in key order: a child's backrefs
 * follow its root item, so each child is finished before the next, with a few
 * lookups per name and nothing kept but damage found on the way. Messages are
 * the reference's ("fs tree 256 refs mismatch found 0 expect 1"). */
#include "config.h"
#include "internal.h"
#include "util/le.h"
#include "util/uuid.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int match_root_ref_name(const uint8_t *data, uint32_t size, const void *arg)
{
	const struct fs_root_ref *want = arg;
	struct fs_root_ref r;

	return fs_root_ref(data, size, &r) == 0 && r.dirid == want->dirid &&
	       r.name_len == want->name_len && !memcmp(r.name, want->name, r.name_len);
}

/* The ROOT_REF/ROOT_BACKREF item holding the same name, its index in *seq. */
static int other_ref(struct check_ctx *c, const struct fs_key *key, const struct fs_root_ref *r,
		     uint64_t *seq)
{
	struct fs_path p;
	const uint8_t *data;
	uint32_t size;
	struct fs_root_ref o;
	int ok = 0;

	fs_path_init(&p);
	if (fs_lookup(c->fs, &c->root_tree, key, &p) == 0 && (data = fs_path_data(&p, &size)) &&
	    match_root_ref_name(data, size, r) && fs_root_ref(data, size, &o) == 0) {
		*seq = o.sequence;
		ok = 1;
	}
	fs_path_release(c->fs, &p);
	return ok;
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

/* A name of a subvolume, with what was found of it. */
struct subvol_name {
	uint64_t child, parent, dirid, index;
	char name[64];
	uint16_t name_len;
	uint16_t errors;
	int reachable;          /* ROOT_REF and DIR_ITEM both found */
};

/* Names of a subvolume found before its own items (a ROOT_REF whose
 * ROOT_BACKREF is missing, with a parent numbered lower): damage only. */
#define PENDING_MAX 32
#define LISTED_MAX 8

struct rr_state {
	uint64_t child;
	int have_item;
	uint32_t refs;
	uint32_t found;                 /* reachable names */
	struct subvol_name bad[LISTED_MAX];     /* reachable names with errors */
	int nbad;
	struct subvol_name pending[PENDING_MAX];
	int npending;
};

/* Looks for the parent tree's DIR_ITEM and DIR_INDEX of a subvolume name. */
static void find_dir_entries(struct check_ctx *c, const struct fs_root_ref *r, struct subvol_name *n)
{
	struct dir_want w = { n->child, r->name, r->name_len };
	struct fs_root ptree;
	struct fs_key k;

	if (fs_root_lookup(c->fs, n->parent, &ptree) < 0) {
		n->errors |= REF_NO_DIR_ITEM | REF_NO_DIR_INDEX;
		return;
	}
	k = (struct fs_key){ r->dirid, BTRFS_DIR_ITEM_KEY, ck_name_hash(r->name, r->name_len) };
	if (!item_matches(c, &ptree, &k, match_dir_entry, &w))
		n->errors |= REF_NO_DIR_ITEM;
	k = (struct fs_key){ r->dirid, BTRFS_DIR_INDEX_KEY, r->sequence };
	if (!item_matches(c, &ptree, &k, match_dir_entry, &w))
		n->errors |= REF_NO_DIR_INDEX;
}

static void subvol_name_init(struct subvol_name *n, uint64_t child, uint64_t parent,
			     const struct fs_root_ref *r)
{
	memset(n, 0, sizeof(*n));
	n->child = child;
	n->parent = parent;
	n->dirid = r->dirid;
	n->index = r->sequence;
	n->name_len = r->name_len;
	snprintf(n->name, sizeof(n->name), "%.*s", r->name_len > 63 ? 63 : r->name_len, r->name);
}

static void keep_name(struct rr_state *s, const struct subvol_name *n)
{
	if (!n->reachable)
		return;
	s->found++;
	if (n->errors && s->nbad < LISTED_MAX)
		s->bad[s->nbad++] = *n;
}

/* Repair: what the next report of subvolume id is about (how: CHECK_FIX_SUBVOL). */
static void fix_subvol(struct check_ctx *c, uint64_t parent, uint64_t dirid, uint64_t index, uint64_t errors,
		       uint64_t how)
{
	if (!CFG_CHECK_REPAIR)
		return;
	c->fix = CHECK_FIX_SUBVOL;
	c->fix_key = (struct fs_key){ parent, 0, dirid };
	c->fix_value[0] = errors;
	c->fix_value[1] = index;
	c->fix_value[2] = how;
}

/* "fs tree C refs N" and an "unresolved ref" line per name with errors. */
static void report_names(struct check_ctx *c, uint64_t id, uint32_t found, int have_item,
			 const struct subvol_name *names, int n)
{
	if (CFG_CHECK_REPAIR && !have_item) {
		c->fix = CHECK_FIX_ROOT_LOST;
		c->fix_key = (struct fs_key){ id, BTRFS_ROOT_ITEM_KEY, 0 };
	}
	ck_raw(c, id, 0, "fs tree %llu refs %u %s", (unsigned long long)id, found,
	       have_item ? "" : "not found");
	for (int i = 0; i < n; i++) {
		char words[100];

		fix_subvol(c, names[i].parent, names[i].dirid, names[i].index, names[i].errors, 0);
		ck_raw(c, id, 0, "\tunresolved ref root %llu dir %llu index %llu namelen %u name %s errors %x%s",
		       (unsigned long long)names[i].parent, (unsigned long long)names[i].dirid,
		       (unsigned long long)names[i].index, names[i].name_len, names[i].name,
		       names[i].errors, ck_ref_words(words, sizeof(words), names[i].errors));
	}
}

static int has_orphan_item(struct check_ctx *c, uint64_t rootid)
{
	struct fs_key k = { BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, rootid };
	struct fs_path p;
	int ret;

	fs_path_init(&p);
	ret = fs_lookup(c->fs, &c->root_tree, &k, &p);
	fs_path_release(c->fs, &p);
	return ret == 0;
}

static void finish_child(struct check_ctx *c, struct rr_state *s)
{
	uint64_t id = s->child;

	if (id < BTRFS_FIRST_FREE_OBJECTID || id > BTRFS_LAST_FREE_OBJECTID)
		return;
	for (int i = 0; i < s->npending; i++)
		if (s->pending[i].child == id) {
			keep_name(s, &s->pending[i]);
			s->pending[i--] = s->pending[--s->npending];
		}
	if (s->have_item && s->found != s->refs) {
		if (s->found)
			fix_subvol(c, 0, 0, s->found, 0, 2);
		ck_raw(c, id, 0, "fs tree %llu refs mismatch found %u expect %u", (unsigned long long)id,
		       s->found, s->refs);
	} else if (s->have_item && !s->refs && !has_orphan_item(c, id)) {
		fix_subvol(c, 0, 0, 0, 0, 1);
		ck_raw(c, id, 0, "fs tree %llu missing orphan item", (unsigned long long)id);
	}
	else if (s->nbad || (!s->have_item && s->found))
		report_names(c, id, s->found, s->have_item, s->bad, s->nbad);
}

/* ROOT_BACKREF (child, parent): the name seen from the child. */
static void child_backref(struct check_ctx *c, struct rr_state *s, const struct fs_key *key,
			  const struct fs_root_ref *r)
{
	struct fs_key fwd = { key->offset, BTRFS_ROOT_REF_KEY, key->objectid };
	struct fs_root_ref named = *r;  /* the parent's word on the index */
	struct subvol_name n;
	int have_fwd = other_ref(c, &fwd, r, &named.sequence);

	subvol_name_init(&n, key->objectid, key->offset, &named);
	if (!have_fwd)
		n.errors |= REF_NO_ROOT_REF;
	else if (named.sequence != r->sequence)
		n.errors |= REF_INDEX_UNMATCH;
	find_dir_entries(c, &named, &n);
	n.reachable = !(n.errors & (REF_NO_ROOT_REF | REF_NO_DIR_ITEM));
	keep_name(s, &n);
	/* a name whose ROOT_REF alone is missing, or (both root refs there) whose dir item or
	 * index is, counts for nothing; the repair hears of it */
	if (CFG_CHECK_REPAIR && !n.reachable && (have_fwd || !(n.errors & (REF_NO_DIR_ITEM | REF_NO_DIR_INDEX)))) {
		fix_subvol(c, n.parent, n.dirid, n.index, n.errors, 0);
		ck_problem(c, CK_FIX, n.child, 0, 0, 0, "name of subvolume %llu", (unsigned long long)n.child);
	}
}

/* ROOT_REF (parent, child) without its ROOT_BACKREF: the child counts it
 * when its turn comes, or it is reported now when the child came first. */
static void parent_ref(struct check_ctx *c, struct rr_state *s, const struct fs_key *key,
		       const struct fs_root_ref *r)
{
	struct fs_key back = { key->offset, BTRFS_ROOT_BACKREF_KEY, key->objectid };
	struct subvol_name n;
	uint64_t seq;

	if (other_ref(c, &back, r, &seq))
		return;         /* checked from the child's side */
	subvol_name_init(&n, key->offset, key->objectid, r);
	n.errors = REF_NO_ROOT_BACKREF;
	find_dir_entries(c, r, &n);
	n.reachable = !(n.errors & REF_NO_DIR_ITEM);
	if (key->offset > key->objectid && s->npending < PENDING_MAX)
		s->pending[s->npending++] = n;
	else if (n.reachable)
		report_names(c, key->offset, 1, 1, &n, 1);
}

static int root_ref_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
		       uint32_t size, void *arg)
{
	struct rr_state *s = arg;
	struct fs_root_ref r;

	if (key->objectid != s->child) {
		finish_child(c, s);
		s->child = key->objectid;
		s->have_item = 0;
		s->found = 0;
		s->nbad = 0;
	}
	if (key->type == BTRFS_ROOT_ITEM_KEY) {
		struct btrfs_root_item ri;

		if (fs_root_item(data, size, &ri) == 0) {
			s->have_item = 1;
			s->refs = get_le32(&ri.refs);
		}
		return 0;
	}
	if (key->type != BTRFS_ROOT_REF_KEY && key->type != BTRFS_ROOT_BACKREF_KEY)
		return 0;
	if (fs_root_ref(data, size, &r) < 0) {
		/* deleted: the subvolume's link, when whole, makes it again */
		c->fix_key = *key;
		ck_err_fix(c, CHECK_FIX_DELETE, BTRFS_ROOT_TREE_OBJECTID, 0, 0, 0, "corrupt %s (%llu %llu)",
		       key->type == BTRFS_ROOT_REF_KEY ? "ROOT_REF" : "ROOT_BACKREF",
		       (unsigned long long)key->objectid, (unsigned long long)key->offset);
		return 0;
	}
	if (key->type == BTRFS_ROOT_BACKREF_KEY)
		child_backref(c, s, key, &r);
	else
		parent_ref(c, s, key, &r);
	return 0;
}

/* ---- the uuid tree ------------------------------------------------------------------ */

/* UUID_KEY_SUBVOL / UUID_KEY_RECEIVED_SUBVOL items: the key is the uuid (two
 * little-endian halves), the data the ids of the subvolumes with that uuid
 * (received uuid). The kernel drops entries whose subvolume is gone or has
 * another uuid when it rescans the tree, and send/receive trust the rest:
 * such entries are worth a warning, a malformed item is an error. */
static void uuid_of_key(const struct fs_key *key, uint8_t uuid[16])
{
	put_le64(uuid, key->objectid);
	put_le64(uuid + 8, key->offset);
}

static int uuid_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			uint32_t size, void *arg)
{
	int received = key->type == BTRFS_UUID_KEY_RECEIVED_SUBVOL;
	char text[UUID_STR_LEN];
	uint8_t uuid[16];

	(void)arg;
	if (key->type != BTRFS_UUID_KEY_SUBVOL && !received)
		return 0;       /* old kernels gave the tree a root directory */
	uuid_of_key(key, uuid);
	uuid_unparse(uuid, text);
	if (!size || size % 8) {
		if (CFG_CHECK_REPAIR) {         /* the kernel adds what is missing from the tree */
			c->fix = CHECK_FIX_DELETE;
			c->fix_key = *key;
		}
		ck_err(c, BTRFS_UUID_TREE_OBJECTID, 0, 0, 0, "uuid tree item of %s %s has size %u",
		       received ? "received uuid" : "uuid", text, size);
		return 0;
	}
	for (uint32_t i = 0; i < size; i += 8) {
		uint64_t id = get_le64(data + i);
		struct fs_root sv;
		const uint8_t *have;

		if (fs_root_lookup(c->fs, id, &sv) < 0 || !ck_is_fstree(id)) {
			ck_warn(c, BTRFS_UUID_TREE_OBJECTID, 0, 0, 0,
				"uuid tree: %s %s names subvolume %llu, which does not exist",
				received ? "received uuid" : "uuid", text, (unsigned long long)id);
			continue;
		}
		have = received ? sv.item.received_uuid : sv.item.uuid;
		if (memcmp(have, uuid, 16))
			ck_warn(c, BTRFS_UUID_TREE_OBJECTID, 0, 0, 0,
				"uuid tree: %s %s names subvolume %llu, which has another one",
				received ? "received uuid" : "uuid", text, (unsigned long long)id);
	}
	return 0;
}

static int match_subvol_id(const uint8_t *data, uint32_t size, const void *arg)
{
	for (uint32_t i = 0; i + 8 <= size; i += 8)
		if (get_le64(data + i) == *(const uint64_t *)arg)
			return 1;
	return 0;
}

/* Every live subvolume is found by its uuid (and its received uuid), unless
 * the kernel rescans the tree at the next mount (its generation is behind). */
static int subvol_uuid_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			  uint32_t size, void *arg)
{
	const struct fs_root *uuid_root = arg;
	static const uint8_t zero[16];
	struct btrfs_root_item ri;

	if (key->type != BTRFS_ROOT_ITEM_KEY || !ck_is_fstree(key->objectid) ||
	    key->objectid == BTRFS_FS_TREE_OBJECTID || fs_root_item(data, size, &ri) < 0 ||
	    !get_le32(&ri.refs) || size < sizeof(ri))
		return 0;
	for (int received = 0; received < 2; received++) {
		const uint8_t *u = received ? ri.received_uuid : ri.uuid;
		struct fs_key k = { get_le64(u), received ? BTRFS_UUID_KEY_RECEIVED_SUBVOL
							  : BTRFS_UUID_KEY_SUBVOL, get_le64(u + 8) };
		char text[UUID_STR_LEN];

		if (!memcmp(u, zero, 16) || item_matches(c, uuid_root, &k, match_subvol_id, &key->objectid))
			continue;
		uuid_unparse(u, text);
		ck_warn(c, key->objectid, 0, 0, 0, "uuid tree: no entry for the %s %s of subvolume %llu",
			received ? "received uuid" : "uuid", text, (unsigned long long)key->objectid);
	}
	return 0;
}

static void check_uuid_tree(struct check_ctx *c)
{
	struct fs_key from = { 0, 0, 0 };
	struct fs_root uuid_root;

	if (fs_root_lookup(c->fs, BTRFS_UUID_TREE_OBJECTID, &uuid_root) < 0)
		return;
	ck_iterate(c, &uuid_root, &from, uuid_item_cb, NULL);
	if (get_le64(&c->fs->sb.uuid_tree_generation) == c->super_gen)
		ck_iterate(c, &c->root_tree, &from, subvol_uuid_cb, &uuid_root);
}

/* ---- device stats ------------------------------------------------------------------- */

static int match_any(const uint8_t *data, uint32_t size, const void *arg)
{
	(void)data, (void)size, (void)arg;
	return 1;
}

/* (DEV_STATS, PERSISTENT_ITEM, devid) in the device tree: u64 counters of a
 * device that exists. The kernel reads as many as the item holds. */
static int dev_stats_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			uint32_t size, void *arg)
{
	(void)data;
	if (key->objectid != BTRFS_DEV_STATS_OBJECTID)
		return 1;
	if (key->type != BTRFS_PERSISTENT_ITEM_KEY)
		return 0;
	if (size % 8)
		ck_warn(c, BTRFS_DEV_TREE_OBJECTID, 0, 0, 0,
			"device stats item of devid %llu has size %u, not a multiple of 8",
			(unsigned long long)key->offset, size);
	if (!item_matches(c, arg, &(struct fs_key){ BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY,
						    key->offset }, match_any, NULL))
		ck_warn(c, BTRFS_DEV_TREE_OBJECTID, 0, 0, 0,
			"device stats item for devid %llu, which is not a device of this filesystem",
			(unsigned long long)key->offset);
	return 0;
}

int check_root_refs(struct check_ctx *c)
{
	struct fs_key from = { 0, 0, 0 };
	struct rr_state *s = calloc(1, sizeof(*s));
	struct fs_root dev_root, chunk_root;
	int ret;

	if (!s)
		return -ENOMEM;
	ret = ck_iterate(c, &c->root_tree, &from, root_ref_cb, s);
	finish_child(c, s);
	free(s);
	if (!CFG_CHECK_THOROUGH)
		return ret;
	check_uuid_tree(c);
	if (fs_root_lookup(c->fs, BTRFS_DEV_TREE_OBJECTID, &dev_root) == 0 &&
	    fs_root_lookup(c->fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk_root) == 0)
		ck_iterate(c, &dev_root, &from, dev_stats_cb, &chunk_root);
	return ret;
}
