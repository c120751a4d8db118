//build:Oz
/* Offline send (see send.h).
 *
 * The parent and sent trees are compared in key order, skipping the subtrees they
 * share (same block); the keys that differ name the inodes to send, in inode order. A
 * full send compares against an empty tree.
 *
 * Names change in three passes, rather than the kernel's delayed and pending moves:
 *   1. each inode that loses a name (deleted, or renamed) gives it up: a file is
 *      unlinked there, or moved to an orphan name "oINO-GEN-N" at the top when it keeps
 *      none of its names; a directory moves to its orphan name;
 *   2. inode by inode: new names (created, linked, or renamed from the orphan name),
 *      xattrs, data, attributes. Parent directories not made yet are made first;
 *   3. deleted directories, empty by now, are removed from their orphan names.
 * Pass 1 frees every name that changes owner, so pass 2 never finds a name taken, and
 * since an inode is named below its parent's current name (orphan or final) the order
 * of the moves does not matter. The current path of a directory is its orphan name
 * when it is listed as moved, else its place in the parent tree (pass 1) or in the
 * sent tree (after). Directory times change with every entry made or removed: they are
 * sent last, with at most OWED directories waiting. */
#include "send.h"
#include "sendstream.h"
#include "fs/core/backref.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/sort.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PATH_SIZE 4096
#define OUT_FLUSH (192u << 10)          /* stream bytes gathered before a write */
#define READ_SIZE (1u << 20)            /* file bytes read at once */
#define OWED 64
#define MAX_CLONE_REFS 64               /* references of an extent tried as clone sources */
#define MAX_ROOTS 64

enum { CH_INODE = 1, CH_REFS = 2, CH_XATTR = 4, CH_DATA = 8 };  /* what differs for an inode */
enum { M_ORPHAN = 1, M_DEAD = 2, M_MADE = 4 };                  /* struct moved */

/* An inode not where a tree says: at an orphan name, or made before its turn. */
struct moved {
	uint64_t ino, gen;
	int flags, n;                   /* n: orphan name suffix */
};

struct snd {
	struct fs *fs;
	const struct fs_send_opts *o;
	const struct fs_root *s, *p;    /* sent and parent (NULL: full send) */
	const struct fs_root *roots[MAX_ROOTS];  /* clone sources, s first */
	int nroots, pass;
	uint64_t top, cur;              /* top directory, inode being sent */
	struct ss_writer w;
	struct moved *mv;               /* sorted by ino */
	size_t nmv, capmv;
	uint64_t owed[OWED];            /* directories whose times are still to send */
	int nowed;
	uint64_t cache_ino;             /* the directory whose path is in cache */
	char cache[PATH_SIZE];
	uint8_t *buf;                   /* READ_SIZE */
	size_t chunk;                   /* data bytes per write command */
	struct btrfs_inode_item ni, oi; /* the inode being sent, new and old */
	int is_new;
	uint64_t written;               /* end of the data sent for it */
	char ipath[PATH_SIZE];          /* its path */
	struct fs_file f;
};

/* ---- stream ---------------------------------------------------------------- */

static int out_flush(struct snd *s)
{
	int ret = s->w.failed ? -ENOMEM : s->w.len ? s->o->write(s->o->ctx, s->w.buf, s->w.len) : 0;

	s->w.len = 0;
	return ret ? fs_err(&s->fs->err, ret, "cannot write the stream") : 0;
}

static void begin(struct snd *s, unsigned cmd, const char *path)
{
	ss_begin(&s->w, cmd);
	if (path)
		ss_put_str(&s->w, SS_A_PATH, path);
}

static int end(struct snd *s)
{
	ss_end(&s->w);
	return s->w.len >= OUT_FLUSH || s->w.failed ? out_flush(s) : 0;
}

static int cmd2(struct snd *s, unsigned cmd, const char *path, unsigned attr, const char *path2)
{
	begin(s, cmd, path);
	if (path2)
		ss_put_str(&s->w, attr, path2);
	return end(s);
}

static void put_time(struct snd *s, unsigned attr, const struct btrfs_timespec *t)
{
	ss_put_time(&s->w, attr, (int64_t)get_le64(&t->sec), get_le32(&t->nsec));
}

static int utimes(struct snd *s, const char *path, const struct btrfs_inode_item *ii)
{
	begin(s, SS_C_UTIMES, path);
	put_time(s, SS_A_ATIME, &ii->atime);
	put_time(s, SS_A_MTIME, &ii->mtime);
	put_time(s, SS_A_CTIME, &ii->ctime);
	return end(s);
}

/* The UUID a receiver knows a subvolume by: the one it was received as, else its own. */
static const uint8_t *root_uuid(const struct fs_root *r)
{
	static const uint8_t none[BTRFS_UUID_SIZE];

	return memcmp(r->item.received_uuid, none, BTRFS_UUID_SIZE) ? r->item.received_uuid : r->item.uuid;
}

/* ---- state ------------------------------------------------------------------ */

static const struct fs_root *tree_now(const struct snd *s)
{
	return s->pass == 1 ? s->p : s->s;
}

static int get_inode(struct snd *s, const struct fs_root *r, uint64_t ino, struct btrfs_inode_item *ii)
{
	return r ? fs_inode_get(s->fs, r, ino, ii) : -ENOENT;
}

static size_t mv_lower(const struct snd *s, uint64_t ino)
{
	return lower_bound_u64(s->mv, s->nmv, sizeof(*s->mv), offsetof(struct moved, ino), ino);
}

/* The entry of ino; after pass 1, not the one of a deleted inode whose number came back. */
static struct moved *mv_find(struct snd *s, uint64_t ino)
{
	for (size_t i = mv_lower(s, ino); i < s->nmv && s->mv[i].ino == ino; i++)
		if (s->pass == 1 || !(s->mv[i].flags & M_DEAD))
			return &s->mv[i];
	return NULL;
}

static int mv_add(struct snd *s, const struct moved *m)
{
	size_t i;

	if (s->nmv == s->capmv) {
		struct moved *n = realloc(s->mv, (s->capmv = s->capmv * 2 + 16) * sizeof(*n));

		if (!n)
			return fs_err(&s->fs->err, -ENOMEM, "out of memory");
		s->mv = n;
	}
	i = mv_lower(s, m->ino);
	memmove(&s->mv[i + 1], &s->mv[i], (s->nmv++ - i) * sizeof(*m));
	s->mv[i] = *m;
	s->cache_ino = 0;
	return 0;
}

static void orphan_name(const struct moved *m, char *out)
{
	snprintf(out, PATH_SIZE, "o%llu-%llu-%d", (unsigned long long)m->ino, (unsigned long long)m->gen, m->n);
}

static int join(char *out, const char *dir, const char *name, size_t len)
{
	return snprintf(out, PATH_SIZE, "%s%s%.*s", dir, *dir ? "/" : "", (int)len, name) < PATH_SIZE ? 0 :
	       fs_err(NULL, -ENAMETOOLONG, "path too long");
}

/* The current path of directory ino ("" for the top). */
static int path_cur(struct snd *s, uint64_t ino, char *out)
{
	char name[BTRFS_NAME_LEN_MAX + 1];
	size_t pos = PATH_SIZE - 1, len;
	uint64_t dir = ino;
	int depth = 0, ret;

	if (ino == s->cache_ino) {
		strcpy(out, s->cache);
		return 0;
	}
	out[pos] = 0;
	while (dir != s->top) {
		struct moved *m = mv_find(s, dir);

		if (m && (m->flags & M_ORPHAN)) {
			orphan_name(m, name);
			dir = s->top;
		} else if ((ret = fs_ino_first_ref(s->fs, tree_now(s), dir, &dir, name))) {
			return ret;
		}
		len = strlen(name);
		if (len + 1 > pos || ++depth > PATH_SIZE / 2)
			return fs_err(&s->fs->err, -ENAMETOOLONG, "path of inode %llu too long",
				      (unsigned long long)ino);
		if (pos != PATH_SIZE - 1)
			out[--pos] = '/';
		memcpy(out + (pos -= len), name, len);
	}
	memmove(out, out + pos, PATH_SIZE - pos);
	strcpy(s->cache, out);
	s->cache_ino = ino;
	return 0;
}

/* Sends the times of directory dir (now, or when it has waited longest). */
static int pay(struct snd *s, uint64_t dir)
{
	struct btrfs_inode_item ii;
	char path[PATH_SIZE];
	int ret = get_inode(s, s->s, dir, &ii);

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	return path_cur(s, dir, path) ?: utimes(s, path, &ii);
}

static int owe(struct snd *s, uint64_t dir)
{
	int ret;

	for (int i = 0; i < s->nowed; i++)
		if (s->owed[i] == dir)
			return 0;
	if (s->nowed == OWED) {
		if ((ret = pay(s, s->owed[0])))
			return ret;
		memmove(s->owed, s->owed + 1, --s->nowed * sizeof(*s->owed));
	}
	s->owed[s->nowed++] = dir;
	return 0;
}

/* ---- items of an inode ------------------------------------------------------------ */

typedef int (*item_fn)(struct snd *s, const struct fs_key *k, const uint8_t *d, uint32_t size, void *arg);

/* Calls fn for the items of ino with a type in [t0, t1] until it returns nonzero. */
static int for_items(struct snd *s, const struct fs_root *r, uint64_t ino, uint8_t t0, uint8_t t1,
		     item_fn fn, void *arg)
{
	struct fs_key key = { ino, t0, 0 };
	struct fs_path p;
	int ret = fs_search(s->fs, r, &key, &p), stop = 0;

	for (; !ret && !stop; ret = fs_next(s->fs, &p)) {
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, &key);
		if (key.objectid != ino || key.type > t1)
			break;
		stop = fn(s, &key, d, size, arg);
	}
	fs_path_release(s->fs, &p);
	return stop ? stop : ret < 0 ? ret : 0;
}

typedef int (*ref_fn)(struct snd *s, uint64_t parent, const char *name, size_t len, void *arg);
struct refs {
	ref_fn fn;
	void *arg;
};

static int each_ref(struct snd *s, const struct fs_key *k, const uint8_t *d, uint32_t size, void *arg)
{
	struct refs *r = arg;
	struct fs_inode_ref ref;
	uint32_t pos = 0;
	int ret;

	while ((ret = k->type == BTRFS_INODE_REF_KEY ? fs_inode_ref_next(d, size, &pos, &ref) :
		      fs_inode_extref_next(d, size, &pos, &ref)) == 1)
		if ((ret = r->fn(s, k->type == BTRFS_INODE_REF_KEY ? k->offset : ref.parent, ref.name,
				 ref.name_len, r->arg)))
			return ret;
	return ret ? fs_err(&s->fs->err, -EUCLEAN, "bad name item of inode %llu", (unsigned long long)k->objectid) : 0;
}

/* Calls fn for each name (parent directory, name) of ino; stops at a nonzero result. */
static int for_refs(struct snd *s, const struct fs_root *r, uint64_t ino, ref_fn fn, void *arg)
{
	struct refs refs = { fn, arg };

	return for_items(s, r, ino, BTRFS_INODE_REF_KEY, BTRFS_INODE_EXTREF_KEY, each_ref, &refs);
}

struct name { uint64_t parent; const char *name; size_t len; };

static int same_name(struct snd *s, uint64_t parent, const char *name, size_t len, void *arg)
{
	const struct name *n = arg;

	(void)s;
	return parent == n->parent && len == n->len && !memcmp(name, n->name, len) ? 2 : 0;
}

/* 1 when ino has that name in tree r, 0 when not. */
static int has_ref(struct snd *s, const struct fs_root *r, uint64_t ino, uint64_t parent, const char *name,
		   size_t len)
{
	struct name n = { parent, name, len };
	int ret = r ? for_refs(s, r, ino, same_name, &n) : 0;

	return ret == 2 ? 1 : ret;
}

/* The entry `name` of the DIR_ITEM/XATTR_ITEM items of obj in r: 0 none, 1 there (with
 * value val when val is given), 2 there with another value. */
static int find_entry(struct snd *s, const struct fs_root *r, uint64_t obj, uint8_t type, const char *name,
		      size_t len, const uint8_t *val, size_t vlen)
{
	struct fs_key key = { obj, type, crc32c_raw(~1u, name, len) };
	struct fs_dir_entry e;
	struct fs_path p;
	uint32_t size, pos = 0;
	const uint8_t *d;
	int ret = r ? fs_lookup(s->fs, r, &key, &p) : -ENOENT, found = 0;

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	d = fs_path_data(&p, &size);
	while (!found && fs_dir_entry_next(d, size, &pos, &e) == 1)
		if (e.name_len == len && !memcmp(e.name, name, len))
			found = !val || (e.data_len == vlen && !memcmp(e.data, val, vlen)) ? 1 : 2;
	fs_path_release(s->fs, &p);
	return found;
}

/* ---- names ---------------------------------------------------------------------- */

/* Moves the inode at `from` to a free orphan name at the top and records it there. */
static int orphan(struct snd *s, uint64_t ino, uint64_t gen, int flags, const char *from)
{
	struct moved m = { ino, gen, flags, 0 };
	char to[PATH_SIZE];
	int ret;

	do {
		orphan_name(&m, to);
		ret = find_entry(s, s->s, s->top, BTRFS_DIR_ITEM_KEY, to, strlen(to), NULL, 0);
		if (!ret)
			ret = find_entry(s, s->p, s->top, BTRFS_DIR_ITEM_KEY, to, strlen(to), NULL, 0);
	} while (ret > 0 && ++m.n < 1000);
	return ret ?: cmd2(s, SS_C_RENAME, from, SS_A_PATH_TO, to) ?: mv_add(s, &m) ?: owe(s, s->top);
}

/* The path of the name (parent, name) now. */
static int ref_path(struct snd *s, uint64_t parent, const char *name, size_t len, char *out)
{
	char dir[PATH_SIZE];

	return path_cur(s, parent, dir) ?: join(out, dir, name, len);
}

/* The same for a name being made or removed: the parent's times are owed. */
static int name_path(struct snd *s, uint64_t parent, const char *name, size_t len, char *out)
{
	return ref_path(s, parent, name, len, out) ?: owe(s, parent);
}

struct unname {
	uint64_t ino, gen;
	int dead, kept, orphaned;
};

static int count_kept(struct snd *s, uint64_t parent, const char *name, size_t len, void *arg)
{
	struct unname *u = arg;
	int ret = has_ref(s, s->s, u->ino, parent, name, len);

	u->kept += ret > 0;
	return ret < 0 ? ret : 0;
}

/* Pass 1 for a name of a file: given up unless the sent tree keeps it. */
static int give_up(struct snd *s, uint64_t parent, const char *name, size_t len, void *arg)
{
	struct unname *u = arg;
	char path[PATH_SIZE];
	int ret = u->dead ? 0 : has_ref(s, s->s, u->ino, parent, name, len);

	if (ret)
		return ret < 0 ? ret : 0;
	if ((ret = name_path(s, parent, name, len, path)))
		return ret;
	if (u->dead || u->kept || u->orphaned)
		return cmd2(s, SS_C_UNLINK, path, 0, NULL);
	u->orphaned = 1;
	return orphan(s, u->ino, u->gen, M_ORPHAN, path);
}

/* Pass 1: an inode gives up the names it loses. */
static int unname(struct snd *s, uint64_t ino, int flags)
{
	struct btrfs_inode_item oi, ni;
	struct unname u = { ino, 0, 0, 0, 0 };
	char name[BTRFS_NAME_LEN_MAX + 1], path[PATH_SIZE];
	uint64_t parent;
	int ret = 0;

	if (!(flags & (CH_INODE | CH_REFS)) || ino == s->top || (ret = get_inode(s, s->p, ino, &oi)))
		return ret == -ENOENT ? 0 : ret;
	ret = get_inode(s, s->s, ino, &ni);
	if (ret && ret != -ENOENT)
		return ret;
	u.gen = get_le64(&oi.generation);
	u.dead = ret || get_le64(&ni.generation) != u.gen || !get_le32(&ni.nlink);
	if (!u.dead && !(flags & CH_REFS))
		return 0;
	if (!S_ISDIR(get_le32(&oi.mode)))
		return (u.dead ? 0 : for_refs(s, s->p, ino, count_kept, &u)) ?: for_refs(s, s->p, ino, give_up, &u);
	if ((ret = fs_ino_first_ref(s->fs, s->p, ino, &parent, name)) ||
	    (!u.dead && (ret = has_ref(s, s->s, ino, parent, name, strlen(name)))))
		return ret < 0 ? ret : 0;
	return name_path(s, parent, name, strlen(name), path) ?:
	       orphan(s, ino, u.gen, M_ORPHAN | (u.dead ? M_DEAD : 0), path);
}

/* The command making inode ino (item ii) at path. */
static int create(struct snd *s, uint64_t ino, const struct btrfs_inode_item *ii, const char *path)
{
	uint32_t mode = get_le32(&ii->mode);
	uint64_t rdev = get_le64(&ii->rdev);
	unsigned cmd = S_ISREG(mode) ? SS_C_MKFILE : S_ISDIR(mode) ? SS_C_MKDIR : S_ISLNK(mode) ? SS_C_SYMLINK :
		       S_ISFIFO(mode) ? SS_C_MKFIFO : S_ISSOCK(mode) ? SS_C_MKSOCK : SS_C_MKNOD;
	ssize_t n = 0;

	if (cmd == SS_C_SYMLINK) {
		struct fs_file f;

		n = fs_file_open(s->fs, s->s, ino, &f);
		if (!n)
			n = fs_file_pread(&f, s->buf, PATH_SIZE, 0);
		fs_file_close(&f);
		if (n < 0)
			return (int)n;
	}
	begin(s, cmd, path);
	ss_put_u64(&s->w, SS_A_INO, ino);
	if (cmd == SS_C_MKNOD || cmd == SS_C_MKFIFO || cmd == SS_C_MKSOCK) {
		ss_put_u64(&s->w, SS_A_MODE, mode);
		/* the kernel's device number in the stream's (new_encode_dev) form */
		ss_put_u64(&s->w, SS_A_RDEV, (rdev & 0xff) | (rdev >> 20 << 8) | (rdev & 0xfff00) << 12);
	}
	if (cmd == SS_C_SYMLINK)
		ss_put_bytes(&s->w, SS_A_PATH_LINK, s->buf, (size_t)n);
	return end(s);
}

/* Makes directory dir (and its parents) when it does not exist yet. */
static int ensure_dir(struct snd *s, uint64_t dir, int depth)
{
	struct btrfs_inode_item ii, old;
	char name[BTRFS_NAME_LEN_MAX + 1], path[PATH_SIZE];
	struct moved m = { dir, 0, M_MADE, 0 };
	uint64_t parent;
	int ret;

	if (dir == s->top || dir < s->cur || mv_find(s, dir))
		return 0;
	if ((ret = get_inode(s, s->s, dir, &ii)))
		return ret;
	m.gen = get_le64(&ii.generation);
	if (!get_inode(s, s->p, dir, &old) && get_le64(&old.generation) == m.gen)
		return 0;
	if (depth > PATH_SIZE / 2)
		return fs_err(&s->fs->err, -ELOOP, "directory %llu inside itself", (unsigned long long)dir);
	return fs_ino_first_ref(s->fs, s->s, dir, &parent, name) ?: ensure_dir(s, parent, depth + 1) ?:
	       name_path(s, parent, name, strlen(name), path) ?: create(s, dir, &ii, path) ?: mv_add(s, &m);
}

/* Where the inode being named is now: nowhere yet, at an orphan name, at a kept name. */
enum { AT_NONE, AT_ORPHAN, AT_KEPT };
struct naming {
	int at;
	char path[PATH_SIZE];
};

/* Pass 2 for a name in the sent tree that the parent tree does not have. */
static int take_name(struct snd *s, uint64_t parent, const char *name, size_t len, void *arg)
{
	struct naming *n = arg;
	char path[PATH_SIZE];
	struct moved *m;
	int ret = s->is_new ? 0 : has_ref(s, s->p, s->cur, parent, name, len);

	if (ret)
		return ret < 0 ? ret : 0;
	if ((ret = ensure_dir(s, parent, 0)) || (ret = name_path(s, parent, name, len, path)))
		return ret;
	if (n->at == AT_KEPT)
		return cmd2(s, SS_C_LINK, path, SS_A_PATH_LINK, n->path);
	if (n->at == AT_NONE) {
		ret = create(s, s->cur, &s->ni, path);
	} else if (!(ret = cmd2(s, SS_C_RENAME, n->path, SS_A_PATH_TO, path)) && (m = mv_find(s, s->cur))) {
		m->flags &= ~M_ORPHAN;
		s->cache_ino = 0;
		ret = owe(s, s->top);
	}
	n->at = AT_KEPT;
	strcpy(n->path, path);
	return ret;
}

/* A name the inode keeps, as a path now. */
static int kept_name(struct snd *s, uint64_t parent, const char *name, size_t len, void *arg)
{
	int ret = has_ref(s, s->p, s->cur, parent, name, len);

	return ret <= 0 ? ret : ref_path(s, parent, name, len, arg) ?: 2;
}

/* Pass 2: the inode gets the names it did not have. */
static int rename_inode(struct snd *s, uint64_t ino)
{
	struct naming n = { AT_NONE, "" };
	struct moved *m = mv_find(s, ino);
	int ret;

	if (m && (m->flags & M_MADE))
		return 0;
	if (m && (m->flags & M_ORPHAN)) {
		n.at = AT_ORPHAN;
		orphan_name(m, n.path);
	} else if (!s->is_new) {
		if ((ret = for_refs(s, s->s, ino, kept_name, n.path)) < 0)
			return ret;
		n.at = AT_KEPT;
	}
	return for_refs(s, s->s, ino, take_name, &n);
}

/* ---- file data ------------------------------------------------------------------ */

/* Names the file whose data could not be read in the error. */
static int read_error(struct snd *s, int ret)
{
	char prefix[PATH_SIZE + 8];

	snprintf(prefix, sizeof(prefix), "%s: ", *s->ipath ? s->ipath : ".");
	fs_err_wrap(&s->fs->err, prefix, NULL);
	return ret;
}

/* Writes [from, to) of the file (zeros when zero), in commands of s->chunk bytes. */
static int write_range(struct snd *s, uint64_t from, uint64_t to, int zero)
{
	while (from < to) {
		size_t n = to - from < READ_SIZE ? (size_t)(to - from) : READ_SIZE;
		ssize_t got = n;

		if (zero)
			memset(s->buf, 0, n);
		else if ((got = fs_file_pread(&s->f, s->buf, n, from)) != (ssize_t)n)
			return read_error(s, got < 0 ? (int)got : fs_err(&s->fs->err, -EIO, "short read"));
		for (size_t o = 0; o < n; o += s->chunk) {
			begin(s, SS_C_WRITE, s->ipath);
			ss_put_u64(&s->w, SS_A_FILE_OFFSET, from + o);
			ss_put_bytes(&s->w, SS_A_DATA, s->buf + o, n - o < s->chunk ? n - o : s->chunk);
			if ((got = end(s)))
				return (int)got;
		}
		from += n;
	}
	return 0;
}

struct clone_find {
	struct snd *s;
	const struct fs_extent *e;
	uint64_t from, len, data_off;           /* the range and its offset in the extent */
	const struct fs_root *root;             /* found: source tree, inode, offset */
	uint64_t ino, off;
	int refs;
};

static int is_root(const struct snd *s, uint64_t id)
{
	for (int i = 0; i < s->nroots; i++)
		if (s->roots[i]->objectid == id)
			return 1;
	return 0;
}

/* Does file ino of r hold the same bytes of the same extent at offset off? */
static int source_ok(struct clone_find *c, const struct fs_root *r, uint64_t ino, uint64_t off)
{
	struct snd *s = c->s;
	struct fs_extent_iter it;
	struct fs_extent e;
	uint32_t ss = s->fs->sectorsize;
	int ok = !fs_extent_iter_init(s->fs, r, ino, off, &it) && fs_extent_iter_next(&it, &e) == 1 &&
		 e.kind == FS_EXT_REG && e.fe.disk_bytenr == c->e->fe.disk_bytenr && e.file_offset == off &&
		 e.fe.offset == c->data_off && e.len >= c->len && e.fe.compression == c->e->fe.compression &&
		 (c->len % ss == 0 || (off + c->len == it.isize && c->from + c->len == get_le64(&s->ni.size))) &&
		 !(off == 0 && c->len == ss);

	fs_extent_iter_release(&it);
	return ok;
}

/* A reference to the extent: a clone source when one of the clone roots holds it there
 * (a reference from a tree that is not one may reach them through shared leaves). */
static int clone_candidate(void *ctx, const struct fs_data_ref *ref)
{
	struct clone_find *c = ctx;
	struct snd *s = c->s;
	uint64_t off = ref->offset + c->data_off;

	if (++c->refs > MAX_CLONE_REFS)
		return 2;
	for (int i = 0; i < s->nroots; i++) {
		const struct fs_root *r = s->roots[i];

		if ((ref->root != r->objectid && is_root(s, ref->root)) ||
		    (r == s->s && (ref->ino > s->cur || (ref->ino == s->cur && off + c->len > c->from))))
			continue;
		if (source_ok(c, r, ref->ino, off)) {
			c->root = r;
			c->ino = ref->ino;
			c->off = off;
			return 1;
		}
	}
	return 0;
}

/* Sends [from, to) of a regular extent as a clone of the same bytes elsewhere: 1 done,
 * 0 no source. */
static int try_clone(struct snd *s, const struct fs_extent *e, uint64_t from, uint64_t to)
{
	struct clone_find c = { s, e, from, to - from, e->fe.offset + (from - e->file_offset), NULL, 0, 0, 0 };
	char name[BTRFS_NAME_LEN_MAX + 1], path[PATH_SIZE];
	uint64_t parent;
	int ret = fs_data_refs(s->fs, e->fe.disk_bytenr, clone_candidate, &c);

	if (ret != 1)
		return 0;               /* a damaged extent tree only costs the clone */
	if (c.root == s->s)
		ret = fs_ino_first_ref(s->fs, s->s, c.ino, &parent, name) ?: ref_path(s, parent, name, strlen(name), path);
	else
		ret = fs_ino_path(s->fs, c.root, c.ino, path, sizeof(path));
	if (ret)
		return ret;
	begin(s, SS_C_CLONE, s->ipath);
	ss_put_u64(&s->w, SS_A_FILE_OFFSET, from);
	ss_put_u64(&s->w, SS_A_CLONE_LEN, to - from);
	ss_put_bytes(&s->w, SS_A_CLONE_UUID, root_uuid(c.root), BTRFS_UUID_SIZE);
	ss_put_u64(&s->w, SS_A_CLONE_CTRANSID, get_le64(&c.root->item.ctransid));
	ss_put_str(&s->w, SS_A_CLONE_PATH, path);
	ss_put_u64(&s->w, SS_A_CLONE_OFFSET, c.off);
	return end(s) ?: 1;
}

/* The compressed bytes of a whole extent as they are on disk. */
static int encoded_write(struct snd *s, const struct fs_extent *e, uint64_t from, uint64_t to)
{
	static const uint8_t type[] = { [FS_COMPRESS_ZLIB] = 1, [FS_COMPRESS_ZSTD] = 2, [FS_COMPRESS_LZO] = 3 };
	const struct fs_file_extent *fe = &e->fe;
	int ret = fs_read_data(s->fs, fe->disk_bytenr, s->buf, fe->disk_num_bytes, 1);

	if (ret)
		return read_error(s, ret);
	begin(s, SS_C_ENCODED_WRITE, s->ipath);
	ss_put_u64(&s->w, SS_A_FILE_OFFSET, from);
	ss_put_u64(&s->w, SS_A_UNENCODED_FILE_LEN, to - from);
	ss_put_u64(&s->w, SS_A_UNENCODED_LEN, fe->ram_bytes);
	ss_put_u64(&s->w, SS_A_UNENCODED_OFFSET, fe->offset + (from - e->file_offset));
	/* lzo: one type per sector size, 4K first */
	ss_put_u32(&s->w, SS_A_COMPRESSION, type[fe->compression] +
		   (fe->compression == FS_COMPRESS_LZO ? (uint32_t)__builtin_ctz(s->fs->sectorsize >> 12) : 0));
	ss_put_u32(&s->w, SS_A_ENCRYPTION, 0);
	ss_put_bytes(&s->w, SS_A_DATA, s->buf, fe->disk_num_bytes);
	return end(s);
}

static int zero_kind(const struct fs_extent *e)
{
	return e->kind == FS_EXT_HOLE || e->kind == FS_EXT_PREALLOC;
}

/* Do a and b hold the same bytes at pos (both covering it)? */
static int same_data(const struct fs_extent *a, const struct fs_extent *b, uint64_t pos)
{
	if (zero_kind(a) || zero_kind(b))
		return zero_kind(a) && zero_kind(b);
	if (a->kind != b->kind || a->fe.compression != b->fe.compression)
		return 0;
	if (a->kind == FS_EXT_INLINE)
		return a->fe.ram_bytes == b->fe.ram_bytes && a->fe.inline_len == b->fe.inline_len &&
		       !memcmp(a->fe.inline_data, b->fe.inline_data, a->fe.inline_len);
	return a->fe.disk_bytenr == b->fe.disk_bytenr &&
	       a->fe.offset + (pos - a->file_offset) == b->fe.offset + (pos - b->file_offset);
}

/* Sends [from, to) of extent e, where the receiver has what old says (NULL: nothing). */
static int send_range(struct snd *s, const struct fs_extent *e, const struct fs_extent *old, uint64_t from,
		      uint64_t to)
{
	int ret;

	if (zero_kind(e) && (!old || zero_kind(old)))
		return 0;
	if (s->o->no_data) {
		begin(s, SS_C_UPDATE_EXTENT, s->ipath);
		ss_put_u64(&s->w, SS_A_FILE_OFFSET, from);
		ss_put_u64(&s->w, SS_A_SIZE, to - from);
		ret = end(s);
	} else if (e->kind == FS_EXT_REG && (ret = try_clone(s, e, from, to))) {
		ret = ret < 0 ? ret : 0;
	} else if (e->kind == FS_EXT_REG && s->o->compressed && e->fe.compression &&
		   e->fe.compression <= FS_COMPRESS_ZSTD && e->fe.disk_num_bytes <= to - from &&
		   e->fe.disk_num_bytes <= (128u << 10)) {
		ret = encoded_write(s, e, from, to);
	} else {
		ret = write_range(s, from, to, zero_kind(e));
	}
	if (to > s->written)
		s->written = to;
	return ret;
}

/* The data of a regular file where it differs from the parent's. */
static int send_data(struct snd *s, uint64_t ino)
{
	struct fs_extent_iter ni = { 0 }, oi = { 0 };
	struct fs_extent en, eo;
	uint64_t pos = 0;
	int hn, ho = 0, ret;

	s->written = 0;
	if ((ret = fs_file_open(s->fs, s->s, ino, &s->f)))
		return ret;
	s->f.verify_csum = 1;
	hn = fs_extent_iter_init(s->fs, s->s, ino, 0, &ni) ?: fs_extent_iter_next(&ni, &en);
	if (!s->is_new && (ho = fs_extent_iter_init(s->fs, s->p, ino, 0, &oi)) == 0)
		ho = fs_extent_iter_next(&oi, &eo);
	for (ret = 0; hn > 0 && ho >= 0 && !ret;) {
		uint64_t end = en.file_offset + en.len;

		while (ho > 0 && eo.file_offset + eo.len <= pos)
			ho = fs_extent_iter_next(&oi, &eo);
		if (ho > 0 && eo.file_offset + eo.len < end)
			end = eo.file_offset + eo.len;
		if (ho >= 0 && !(ho > 0 && same_data(&en, &eo, pos)))
			ret = send_range(s, &en, ho > 0 ? &eo : NULL, pos, end);
		if ((pos = end) >= en.file_offset + en.len)
			hn = fs_extent_iter_next(&ni, &en);
	}
	fs_extent_iter_release(&ni);
	if (oi.fs)
		fs_extent_iter_release(&oi);
	fs_file_close(&s->f);
	return ret ?: hn < 0 ? read_error(s, hn) : ho < 0 ? ho : 0;
}

/* ---- xattrs and attributes -------------------------------------------------------- */

#define CAPS "security.capability"      /* cleared by chown: sent after it */

static int xattr_cmd(struct snd *s, unsigned cmd, const struct fs_dir_entry *e)
{
	begin(s, cmd, s->ipath);
	ss_put_bytes(&s->w, SS_A_XATTR_NAME, e->name, e->name_len);
	if (cmd == SS_C_SET_XATTR)
		ss_put_bytes(&s->w, SS_A_XATTR_DATA, e->data, e->data_len);
	return end(s);
}

/* What send_xattrs does with each xattr: X_NEW set it (all but CAPS, for a new inode),
 * X_SET set it unless the parent has it the same, X_RM (over the parent's) remove it
 * unless the sent tree has it, X_CAPS set only CAPS. */
enum { X_NEW, X_SET, X_RM, X_CAPS };

static int xattrs(struct snd *s, const struct fs_key *k, const uint8_t *d, uint32_t size, void *arg)
{
	int how = (int)(intptr_t)arg, ret = 0, caps;
	struct fs_dir_entry e;
	uint32_t pos = 0;

	while (!ret && (ret = fs_dir_entry_next(d, size, &pos, &e)) == 1) {
		caps = e.name_len == sizeof(CAPS) - 1 && !memcmp(e.name, CAPS, e.name_len);
		if (how == X_RM)
			ret = find_entry(s, s->s, k->objectid, k->type, e.name, e.name_len, NULL, 0);
		else if (how == X_SET)
			ret = find_entry(s, s->p, k->objectid, k->type, e.name, e.name_len, e.data, e.data_len) == 1;
		else
			ret = caps != (how == X_CAPS);
		if (!ret)
			ret = xattr_cmd(s, how == X_RM ? SS_C_REMOVE_XATTR : SS_C_SET_XATTR, &e);
		else if (ret > 0)
			ret = 0;
	}
	return ret < 0 ? fs_err(&s->fs->err, ret, "bad xattr item of inode %llu", (unsigned long long)k->objectid) : 0;
}

static int send_xattrs(struct snd *s, uint64_t ino, int how)
{
	return for_items(s, how == X_RM ? s->p : s->s, ino, BTRFS_XATTR_ITEM_KEY, BTRFS_XATTR_ITEM_KEY, xattrs,
			 (void *)(intptr_t)how);
}

static int send_attrs(struct snd *s, uint64_t ino)
{
	const struct btrfs_inode_item *n = &s->ni, *o = &s->oi;
	uint32_t mode = get_le32(&n->mode);
	uint64_t size = get_le64(&n->size);
	int chown = s->is_new || get_le32(&n->uid) != get_le32(&o->uid) || get_le32(&n->gid) != get_le32(&o->gid);
	int ret = 0;

	if (S_ISREG(mode) && (s->is_new ? s->written != size : size != get_le64(&o->size) &&
			      (size < get_le64(&o->size) || s->written != size))) {
		begin(s, SS_C_TRUNCATE, s->ipath);
		ss_put_u64(&s->w, SS_A_SIZE, size);
		ret = end(s);
	}
	if (!ret && chown) {
		begin(s, SS_C_CHOWN, s->ipath);
		ss_put_u64(&s->w, SS_A_UID, get_le32(&n->uid));
		ss_put_u64(&s->w, SS_A_GID, get_le32(&n->gid));
		ret = end(s) ?: send_xattrs(s, ino, X_CAPS);
	}
	if (!ret && !S_ISLNK(mode) && (s->is_new || mode != get_le32(&o->mode))) {
		begin(s, SS_C_CHMOD, s->ipath);
		ss_put_u64(&s->w, SS_A_MODE, mode & 07777);
		ret = end(s);
	}
	return ret ?: S_ISDIR(mode) ? owe(s, ino) : utimes(s, s->ipath, n);
}

/* The current path of the inode being sent. */
static int inode_path(struct snd *s, uint64_t ino)
{
	char name[BTRFS_NAME_LEN_MAX + 1];
	uint64_t parent;

	if (ino == s->top || S_ISDIR(get_le32(&s->ni.mode)))
		return path_cur(s, ino, s->ipath);
	return fs_ino_first_ref(s->fs, s->s, ino, &parent, name) ?:
	       name_path(s, parent, name, strlen(name), s->ipath);
}

/* Pass 2 for one inode. */
static int send_inode(struct snd *s, uint64_t ino, int flags)
{
	int ret = get_inode(s, s->s, ino, &s->ni);

	if (ret || !get_le32(&s->ni.nlink))
		return ret == -ENOENT ? 0 : ret;
	s->cur = ino;
	s->written = 0;
	ret = get_inode(s, s->p, ino, &s->oi);
	if (ret && ret != -ENOENT)
		return ret;
	s->is_new = ret || (ino != s->top && get_le64(&s->oi.generation) != get_le64(&s->ni.generation));
	if (ino != s->top && (s->is_new || (flags & CH_REFS)) && (ret = rename_inode(s, ino)))
		return ret;
	if ((ret = inode_path(s, ino)) ||
	    ((s->is_new || (flags & CH_XATTR)) &&
	     (ret = s->is_new ? send_xattrs(s, ino, X_NEW) : send_xattrs(s, ino, X_SET) ?: send_xattrs(s, ino, X_RM))) ||
	    (S_ISREG(get_le32(&s->ni.mode)) && (s->is_new || (flags & CH_DATA)) && (ret = send_data(s, ino))))
		return ret;
	return send_attrs(s, ino);
}

/* ---- comparing the trees ---------------------------------------------------------- */

/* A position in a tree: the block and slot at each level down to `level`. */
struct cursor {
	struct fs_block *nodes[BTRFS_MAX_LEVEL];
	int slots[BTRFS_MAX_LEVEL];
	int level, top, end;
	uint64_t tree;
};

static int cur_init(struct fs *fs, const struct fs_root *r, struct cursor *c)
{
	struct fs_block_expect exp = { r ? r->generation : 0, r ? r->level : -1, r ? r->objectid : 0, NULL };
	struct fs_block *b;

	memset(c, 0, sizeof(*c));
	c->end = 1;
	if (!r)
		return 0;
	if (!(b = fs_block_read(fs, r->bytenr, &exp)))
		return fs->err.code ? fs->err.code : -EIO;
	c->tree = r->objectid;
	c->level = c->top = fs_block_level(b);
	c->nodes[c->level] = b;
	c->end = !fs_block_nritems(b);
	return 0;
}

static void cur_key(const struct cursor *c, struct fs_key *k)
{
	const struct fs_block *b = c->nodes[c->level];

	c->level ? fs_node_key(b, (uint32_t)c->slots[c->level], k) : fs_item_key(b, (uint32_t)c->slots[c->level], k);
}

static int cur_down(struct fs *fs, struct cursor *c)
{
	struct fs_block *b = fs_read_child(fs, c->nodes[c->level], (uint32_t)c->slots[c->level], c->tree);

	if (!b)
		return fs->err.code ? fs->err.code : -EIO;
	fs_block_put(fs, c->nodes[--c->level]);
	c->nodes[c->level] = b;
	c->slots[c->level] = 0;
	return 0;
}

static void cur_next(struct cursor *c)
{
	while (++c->slots[c->level] >= (int)fs_block_nritems(c->nodes[c->level]))
		if (c->level++ == c->top) {
			c->end = 1;
			c->level = c->top;
			return;
		}
}

/* Items at both cursors (leaves) hold the same bytes. */
static int same_item(const struct cursor *a, const struct cursor *b)
{
	uint32_t la, lb;
	const uint8_t *da = fs_item_data(a->nodes[0], (uint32_t)a->slots[0], &la);
	const uint8_t *db = fs_item_data(b->nodes[0], (uint32_t)b->slots[0], &lb);

	return la == lb && !memcmp(da, db, la);
}

static int key_bit(uint8_t type)
{
	switch (type) {
	case BTRFS_INODE_ITEM_KEY: return CH_INODE;
	case BTRFS_INODE_REF_KEY: case BTRFS_INODE_EXTREF_KEY: return CH_REFS;
	case BTRFS_XATTR_ITEM_KEY: return CH_XATTR;
	case BTRFS_EXTENT_DATA_KEY: return CH_DATA;
	}
	return 0;
}

/* Walks the differences of the parent and sent trees, handing each inode that differs
 * with what differs in it to the pass. */
static int diff_trees(struct snd *s)
{
	struct cursor a, b = { .end = 1 };	/* b stays empty when a cannot be read */
	uint64_t ino = 0;
	int flags = 0, ret = cur_init(s->fs, s->p, &a) ?: cur_init(s->fs, s->s, &b);

	while (!ret && !(a.end && b.end)) {
		struct fs_key ka, kb, *k;
		struct cursor *c;
		int cmp;

		if (!a.end && !b.end && a.level != b.level) {
			ret = cur_down(s->fs, a.level > b.level ? &a : &b);
			continue;
		}
		if (!a.end)
			cur_key(&a, &ka);
		if (!b.end)
			cur_key(&b, &kb);
		cmp = a.end ? 1 : b.end ? -1 : fs_key_cmp(&ka, &kb);
		c = cmp < 0 ? &a : &b;
		if (c->level) {
			if (cmp || fs_node_blockptr(a.nodes[a.level], (uint32_t)a.slots[a.level]) !=
				   fs_node_blockptr(b.nodes[b.level], (uint32_t)b.slots[b.level]))
				ret = cur_down(s->fs, c);
			else
				cur_next(&a), cur_next(&b);
			continue;
		}
		k = cmp < 0 ? &ka : &kb;
		if ((cmp || !same_item(&a, &b)) && k->objectid >= BTRFS_FIRST_FREE_OBJECTID &&
		    k->objectid <= BTRFS_LAST_FREE_OBJECTID && key_bit(k->type)) {
			if (k->objectid != ino && ino)
				ret = s->pass == 1 ? unname(s, ino, flags) : send_inode(s, ino, flags);
			flags = ino == k->objectid ? flags | key_bit(k->type) : key_bit(k->type);
			ino = k->objectid;
		}
		if (cmp <= 0)
			cur_next(&a);
		if (cmp >= 0)
			cur_next(&b);
	}
	if (!ret && ino)
		ret = s->pass == 1 ? unname(s, ino, flags) : send_inode(s, ino, flags);
	for (int i = 0; i < BTRFS_MAX_LEVEL; i++) {
		fs_block_put(s->fs, a.nodes[i]);
		fs_block_put(s->fs, b.nodes[i]);
	}
	return ret;
}

/* ---- the stream --------------------------------------------------------------- */

/* SUBVOL (or SNAPSHOT of the parent): the subvolume by name and UUID. */
static int begin_subvol(struct snd *s)
{
	begin(s, s->p ? SS_C_SNAPSHOT : SS_C_SUBVOL, s->o->name);
	ss_put_bytes(&s->w, SS_A_UUID, root_uuid(s->s), BTRFS_UUID_SIZE);
	ss_put_u64(&s->w, SS_A_CTRANSID, get_le64(&s->s->item.ctransid));
	if (s->p) {
		ss_put_bytes(&s->w, SS_A_CLONE_UUID, root_uuid(s->p), BTRFS_UUID_SIZE);
		ss_put_u64(&s->w, SS_A_CLONE_CTRANSID, get_le64(&s->p->item.ctransid));
	}
	return end(s);
}

/* Pass 3: deleted directories, now empty, leave their orphan names. */
static int remove_dead(struct snd *s)
{
	char name[PATH_SIZE];
	int ret = 0;

	for (size_t i = 0; i < s->nmv && !ret; i++)
		if (s->mv[i].flags & M_DEAD) {
			orphan_name(&s->mv[i], name);
			ret = cmd2(s, SS_C_RMDIR, name, 0, NULL) ?: owe(s, s->top);
		}
	return ret;
}

int fs_send(struct fs *fs, const struct fs_root *root, const struct fs_send_opts *o)
{
	struct snd *s = calloc(1, sizeof(*s));
	int ret;

	if (!s || !(s->buf = malloc(READ_SIZE))) {
		free(s);
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	}
	s->fs = fs;
	s->o = o;
	s->s = root;
	s->p = o->parent;
	s->top = fs_root_dir(root);
	s->chunk = o->version > 1 ? 128u << 10 : 48u << 10;
	s->roots[s->nroots++] = root;
	if (s->p)
		s->roots[s->nroots++] = s->p;
	for (int i = 0; i < o->nclones && s->nroots < MAX_ROOTS; i++)
		if (!is_root(s, o->clones[i].objectid))
			s->roots[s->nroots++] = &o->clones[i];
	ss_writer_init(&s->w, o->version);
	if (o->no_header)
		s->w.len = 0;
	ret = begin_subvol(s);
	for (s->pass = s->p ? 1 : 2; !ret && s->pass <= 2; s->pass++) {
		s->cache_ino = 0;
		ret = diff_trees(s);
	}
	if (!ret && s->p)
		ret = remove_dead(s);
	while (!ret && s->nowed)
		ret = pay(s, s->owed[--s->nowed]);
	if (!ret && !o->no_end) {
		begin(s, SS_C_END, NULL);
		ret = end(s);
	}
	if (!ret)
		ret = out_flush(s);
	ss_writer_free(&s->w);
	free(s->mv);
	free(s->buf);
	free(s);
	return ret;
}
