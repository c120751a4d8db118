//build:Oz
/* btrfs check: the driver, problem reporting and the root item checks.
 * What is checked, where, and the test that breaks each thing: fs/check/CHECKS.md. */
#include "internal.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Memory of all sorters alive at once (extent refs alone in stage 2; links,
 * checksum ranges and qgroup records together in stage 4), in 16ths. */
#define CHECK_DEFAULT_SORT_MEM (80u << 20)

static void ck_report(struct check_ctx *c, const struct check_problem *p)
{
	c->reported++;
	if (!p->warning && !p->quiet) {
		c->st->errors++;
		c->st->stage_errors[p->stage]++;
	}
	if (c->o->problem)
		c->o->problem(c->o->ctx, p);
}

void ck_problem(struct check_ctx *c, int warning, uint64_t root, uint64_t ino, uint64_t bytenr,
		uint64_t len, const char *fmt, ...)
{
	struct check_problem p = {
		.stage = c->stage, .warning = warning == CK_WARNING, .raw = warning == CK_RAW,
		.quiet = warning == CK_FIX,
		.root = root, .ino = ino,
		.bytenr = bytenr, .len = len,
	};
	va_list ap;

	if (CFG_CHECK_REPAIR) {
		p.fix = c->fix ? c->fix : c->fix_all;
		p.key = c->fix_key;
		memcpy(p.value, c->fix_value, sizeof(p.value));
		c->fix = CHECK_FIX_NONE;
		memset(&c->fix_key, 0, sizeof(c->fix_key));
		memset(c->fix_value, 0, sizeof(c->fix_value));
	}
	va_start(ap, fmt);
	vsnprintf(p.msg, sizeof(p.msg), fmt, ap);
	va_end(ap);
	ck_report(c, &p);
}

/* A block of another generation than its parent wants: 1, with both generations. */
static int transid_failure(const struct fs_error *e, uint64_t *wanted, uint64_t *found)
{
	unsigned long long w, f;

	if (sscanf(e->msg, "parent transid verify failed: wanted %llu found %llu", &w, &f) != 2)
		return 0;
	*wanted = w;
	*found = f;
	return 1;
}

void ck_fs_error(struct check_ctx *c, const struct fs_error *e, const struct fs_key *reached)
{
	uint64_t wanted, found;
	int stale;
	char buf[300];

	if (CFG_CHECK_THREADS && c->fsr_bg) {
		ck_fsr_redo(c);
		return;
	}
	if (e->logical) {
		for (int i = 0; i < c->nbad; i++)
			if (c->bad_blocks[i] == e->logical) {
				c->st->errors++;        /* still an error, said once */
				return;
			}
		if (c->nbad < CHECK_MAX_BAD_REPORTED)
			c->bad_blocks[c->nbad++] = e->logical;
	}
	/* a block with the wrong generation is otherwise good: copied anew, it is fixed
	 * (another tree's block there is not: it is lost); the repair gets the
	 * generations (an older one: a lost write) */
	stale = CFG_CHECK_REPAIR && transid_failure(e, &wanted, &found);
	ck_fix(c, stale && !strstr(e->msg, FS_FOREIGN_BLOCK) ? CHECK_FIX_RECOW : CHECK_FIX_UNREADABLE);
	if (CFG_CHECK_REPAIR && (reached || e->has_key))
		c->fix_key = reached ? *reached : e->key;
	if (CFG_CHECK_REPAIR && stale) {
		c->fix_value[0] = wanted;
		c->fix_value[1] = found;
	} else if (CFG_CHECK_REPAIR) {
		c->fix_value[0] = e->wanted_gen;        /* (found 0: nothing verified there) */
	}
	fs_error_format(e, buf, sizeof(buf));
	ck_err(c, e->tree, 0, e->logical, 0, "%s", buf);
}

void ck_progress(struct check_ctx *c, uint64_t done)
{
	if (c->o->progress && !(done & 0xfff))
		c->o->progress(c->o->ctx, c->stage, done);
}

struct xsort *ck_sorter(struct check_ctx *c, size_t rec_size, xsort_cmp_fn cmp, unsigned share)
{
	size_t mem = c->o->sort_mem ? c->o->sort_mem : CHECK_DEFAULT_SORT_MEM;

	struct xsort *s = xsort_new(rec_size, cmp, mem / 16 * share, c->o->tmpdir);

	if (CFG_CHECK_THREADS && s && c->o->threads != 1)
		xsort_use_thread(s);
	return s;
}

struct check_bg *ck_bg_find(struct check_ctx *c, uint64_t bytenr)
{
	int lo = 0, hi = c->nbgs;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		struct check_bg *bg = &c->bgs[mid];

		if (bytenr < bg->start)
			hi = mid;
		else if (bytenr - bg->start >= bg->len)
			lo = mid + 1;
		else
			return bg;
	}
	return NULL;
}

const char *ck_ref_words(char *buf, size_t size, uint32_t errors)
{
	static const char words[] =
		"no dir item\0no dir index\0no inode ref\0dup dir item\0dup dir index\0"
		"dup inode ref\0index mismatch\0filetype mismatch\0name too long\0no root ref\0"
		"no root backref\0";
	size_t n = 0;
	int bit = 0;

	buf[0] = 0;
	for (const char *w = words; *w && n < size; w += strlen(w) + 1, bit++)
		if (errors & (1u << bit))
			n += (size_t)snprintf(buf + n, size - n, ", %s", w);
	return buf;
}

uint32_t ck_name_hash(const char *name, size_t len)
{
	return crc32c_raw(~1u, name, len);
}

int ck_iterate(struct check_ctx *c, const struct fs_root *root, const struct fs_key *from,
	       ck_item_fn cb, void *arg)
{
	struct fs_path p;
	struct fs_key key;
	const uint8_t *data;
	uint32_t size;
	int ret;

	fs_path_init(&p);
	ret = fs_search(c->fs, root, from, &p);
	if (ret < 0) {
		ck_fs_error(c, &c->fs->err, NULL);
		fs_path_release(c->fs, &p);
		return ret;
	}
	if (ret > 0 || !p.levels) {
		fs_path_release(c->fs, &p);
		return 0;
	}
	for (;;) {
		fs_path_key(&p, &key);
		data = fs_path_data(&p, &size);
		ret = cb(c, &key, data, size, arg);
		if (ret)
			break;
		ret = fs_next(c->fs, &p);
		if (ret < 0)
			ck_fs_error(c, &c->fs->err, NULL);
		if (ret)
			break;
	}
	fs_path_release(c->fs, &p);
	return ret < 0 ? ret : 0;
}

int ck_root_from_item(const struct fs_key *key, const uint8_t *data, uint32_t size, struct fs_root *root)
{
	memset(root, 0, sizeof(*root));
	if (fs_root_item(data, size, &root->item) < 0 || root->item.level >= BTRFS_MAX_LEVEL)
		return -EUCLEAN;
	root->objectid = key->objectid;
	root->offset = key->offset;
	root->bytenr = get_le64(&root->item.bytenr);
	root->generation = get_le64(&root->item.generation);
	root->level = root->item.level;
	root->item_size = size;
	return 0;
}

int ck_iterate_logs(struct check_ctx *c, ck_item_fn cb, void *arg)
{
	struct fs_root logs = { .objectid = BTRFS_TREE_LOG_OBJECTID,
				.bytenr = get_le64(&c->fs->sb.log_root),
				.level = c->fs->sb.log_root_level };
	struct fs_key from = { 0, 0, 0 };

	if (!logs.bytenr || logs.level >= BTRFS_MAX_LEVEL)
		return 0;
	return ck_iterate(c, &logs, &from, cb, arg);
}

/* ---- pull-style iteration ---------------------------------------------------- */

void ck_cursor_init(struct ck_cursor *cu, struct check_ctx *c, const struct fs_root *root,
			const struct fs_key *from)
{
	memset(cu, 0, sizeof(*cu));
	cu->c = c;
	cu->root = root;
	cu->from = *from;
	fs_path_init(&cu->p);
}

int ck_cursor_next(struct ck_cursor *cu, struct fs_key *key, const uint8_t **data, uint32_t *size)
{
	int ret;

	if (cu->state == 2)
		return 0;
	if (cu->state == 0) {
		ret = fs_search(cu->c->fs, cu->root, &cu->from, &cu->p);
		if (ret == 0 && !cu->p.levels)
			ret = 1;
	} else {
		ret = fs_next(cu->c->fs, &cu->p);
	}
	if (ret) {
		if (ret < 0)
			ck_fs_error(cu->c, &cu->c->fs->err, NULL);
		cu->state = 2;
		return 0;
	}
	cu->state = 1;
	fs_path_key(&cu->p, key);
	*data = fs_path_data(&cu->p, size);
	return 1;
}

void ck_cursor_release(struct ck_cursor *cu)
{
	fs_path_release(cu->c->fs, &cu->p);
}

/* ---- stage 1: root items ------------------------------------------------ */

/* A dir entry's location as the kernel's tree checker wants it: an inode (of a
 * subvolume, the root tree's directory or the old inode cache) or a subvolume. */
int ck_dir_location_ok(const struct fs_key *l)
{
	if (l->type == BTRFS_INODE_ITEM_KEY)
		return !l->offset && (ck_valid_ino(l->objectid) || l->objectid == BTRFS_ROOT_TREE_DIR_OBJECTID ||
				      l->objectid == BTRFS_FREE_INO_OBJECTID);
	return l->type == BTRFS_ROOT_ITEM_KEY && ck_is_fstree(l->objectid) && (!l->offset || l->offset == UINT64_MAX);
}

/* The root tree's directory (the "default" subvolume's name): entries the kernel reads
 * (else deleted: without it the kernel mounts the top subvolume). */
static void root_dir_item(struct check_ctx *c, const struct fs_key *key, const uint8_t *data, uint32_t size)
{
	struct fs_dir_entry de;
	uint32_t pos = 0;
	int ret;

	while ((ret = fs_dir_entry_next(data, size, &pos, &de)) == 1)
		if (ck_name_hash(de.name, de.name_len) != key->offset || de.data_len || de.type == BTRFS_FT_UNKNOWN ||
		    de.type >= BTRFS_FT_XATTR || !ck_dir_location_ok(&de.location))
			break;
	if (!ret)
		return;
	if (CFG_CHECK_REPAIR)
		c->fix_key = *key;
	ck_err_fix(c, CHECK_FIX_DELETE, BTRFS_ROOT_TREE_OBJECTID, 0, 0, 0,
		   "root tree DIR_ITEM[%llu %llu] is invalid (the kernel refuses it)",
		   (unsigned long long)key->objectid, (unsigned long long)key->offset);
}

/* A root item's key as the kernel looks for it: a tree's id; offset 0 for the global
 * trees (looked up exactly), a subvolume's id (or the data relocation tree's) for a
 * relocation tree, any offset for a subvolume (its snapshot generation) and the data
 * relocation tree but the one the kernel searches with, (u64)-1 (it takes an item
 * there for corruption). */
static int root_key_ok(const struct fs_key *k)
{
	if (k->objectid == BTRFS_TREE_RELOC_OBJECTID)  /* (old kernels relocated the data one too) */
		return ck_is_fstree(k->offset) || k->offset == BTRFS_DATA_RELOC_TREE_OBJECTID;
	return ck_is_tree_id(k->objectid) &&
	       (!k->offset || ((ck_is_fstree(k->objectid) || k->objectid == BTRFS_DATA_RELOC_TREE_OBJECTID) &&
			       k->offset != UINT64_MAX));
}

/* The level of a tree's root block where its root item says another (the block read as
 * the item names it but for the level); -1 when they agree or the block does not read. */
static int root_block_level(struct check_ctx *c, uint64_t id, const struct btrfs_root_item *ri)
{
	struct fs_block_expect exp = { get_le64(&ri->generation), -1, id, NULL };
	struct fs_block *b;
	int level;

	if (!get_le64(&ri->bytenr) || !(b = fs_block_read(c->fs, get_le64(&ri->bytenr), &exp)))
		return -1;
	level = fs_block_level(b);
	fs_block_put(c->fs, b);
	return level == ri->level ? -1 : level;
}

static int root_item_cb(struct check_ctx *c, const struct fs_key *key, const uint8_t *data,
			uint32_t size, void *arg)
{
	struct btrfs_root_item ri;
	uint64_t gen;
	int level;

	(void)arg;
	if (key->type == BTRFS_DIR_ITEM_KEY)
		root_dir_item(c, key, data, size);
	if (key->type != BTRFS_ROOT_ITEM_KEY)
		return 0;
	if (!root_key_ok(key)) {
		if (CFG_CHECK_REPAIR)
			c->fix_key = *key;
		ck_err_fix(c, CHECK_FIX_ROOT_KEY, BTRFS_ROOT_TREE_OBJECTID, 0, 0, 0, "root item key (%llu ROOT_ITEM %llu) names no tree",
			   (unsigned long long)key->objectid, (unsigned long long)key->offset);
		return 0;
	}
	if (fs_root_item(data, size, &ri) < 0) {
		ck_err(c, key->objectid, 0, 0, 0, "root item of root %llu is too short (%u bytes)",
		       (unsigned long long)key->objectid, size);
		return 0;
	}
	gen = get_le64(&ri.generation);
	if (gen == 0 || gen > c->super_gen)
		ck_err_fix(c, CHECK_FIX_RECOW, key->objectid, 0, get_le64(&ri.bytenr), 0,
		       "invalid generation for root %llu, have %llu expect (0, %llu]",
		       (unsigned long long)key->objectid, (unsigned long long)gen,
		       (unsigned long long)c->super_gen);
	level = root_block_level(c, key->objectid, &ri);
	if (CFG_CHECK_REPAIR && level >= 0) {
		c->fix_key = *key;
		c->fix_value[0] = (uint64_t)level;
		c->fix_value[1] = 1;
	}
	if (level >= 0)
		ck_err_fix(c, CHECK_FIX_ROOT_FIELDS, key->objectid, 0, get_le64(&ri.bytenr), 0,
			   "root [%llu %llu] level %d does not match %u", (unsigned long long)key->objectid,
			   (unsigned long long)key->offset, level, ri.level);
	else if (ri.level >= BTRFS_MAX_LEVEL)
		ck_err(c, key->objectid, 0, get_le64(&ri.bytenr), 0,
		       "invalid level %u for root %llu", ri.level, (unsigned long long)key->objectid);
	if ((get_le64(&ri.flags) & ~CK_ROOT_FLAGS) || get_le64(&ri.generation_v2) > c->super_gen + 1 ||
	    get_le64(&ri.last_snapshot) > c->super_gen + 1 || ri.drop_level >= BTRFS_MAX_LEVEL ||
	    (ri.drop_level == 0 && get_le64(&ri.drop_progress.objectid))) {
		if (CFG_CHECK_REPAIR)
			c->fix_key = *key;
		ck_err_fix(c, CHECK_FIX_ROOT_FIELDS, key->objectid, 0, 0, 0,
			   "root item of root %llu: flags 0x%llx, generation_v2 %llu, last_snapshot %llu, drop_level %u, drop_progress %llu: the kernel refuses it",
			   (unsigned long long)key->objectid, (unsigned long long)get_le64(&ri.flags),
			   (unsigned long long)get_le64(&ri.generation_v2),
			   (unsigned long long)get_le64(&ri.last_snapshot), ri.drop_level,
			   (unsigned long long)get_le64(&ri.drop_progress.objectid));
	}
	return 0;
}

int check_root_items(struct check_ctx *c)
{
	struct fs_key from = { 0, 0, 0 };

	return ck_iterate(c, &c->root_tree, &from, root_item_cb, NULL);
}

/* ---- superblock -------------------------------------------------------------- */

/* Every superblock copy on every device that fits must be valid and belong to
 * this filesystem; a copy newer than the one in use is suspicious. */
static void check_super_copies(struct check_ctx *c)
{
	struct fs *fs = c->fs;

	for (int d = 0; d < fs->num_devs; d++) {
		struct fs_device *dev = &fs->devs[d];

		if (dev->fd < 0)
			continue;
		for (int m = 0; m < BTRFS_SUPER_MIRRORS; m++) {
			struct btrfs_super_block sb;
			struct fs_error e;
			int ret;

			/* copies past the end of the filesystem's part of the device
			 * are not its own (they may be left over from an older one) */
			if (btrfs_super_offset(m) + BTRFS_SUPER_SIZE > get_le64(&dev->sb.dev_item.total_bytes))
				break;
			fs_err_clear(&e);
			ret = fs_super_read_fd(dev->fd, m, &sb, &e);
			if (ret == -ENOENT)
				break;
			if (ret < 0) {
				if (m == 0 || get_le64(&sb.magic) == BTRFS_MAGIC_LE)
					ck_err(c, 0, 0, btrfs_super_offset(m), 0,
					       "superblock copy %d on %s: %s", m,
					       dev->path ? dev->path : "?", e.msg);
				continue;
			}
			/* the metadata fsid: the fsid of copies not yet rewritten by an
			 * interrupted fsid change (btrfstune -m) may differ */
			if (memcmp(sb.dev_item.fsid, dev->sb.dev_item.fsid, BTRFS_FSID_SIZE))
				ck_err(c, 0, 0, btrfs_super_offset(m), 0,
				       "superblock copy %d on %s belongs to another filesystem", m,
				       dev->path ? dev->path : "?");
			else if (get_le64(&sb.generation) > c->super_gen + 1)
				ck_warn(c, 0, 0, btrfs_super_offset(m), 0,
					"superblock copy %d on %s has generation %llu, newer than %llu",
					m, dev->path ? dev->path : "?",
					(unsigned long long)get_le64(&sb.generation),
					(unsigned long long)c->super_gen);
		}
	}
}

/* A copy of a tree block that failed with another copy still to try (when the last one
 * fails too, the read's error says so); the repair writes it from a good one. */
static void bad_copy(void *ctx, const struct fs_error *e)
{
	struct check_ctx *c = ctx;
	uint64_t wanted = 0, found;
	char buf[300];

	if (e->mirror >= fs_num_copies(c->fs, e->logical))
		return;
	if (CFG_CHECK_REPAIR) {
		c->fix = CHECK_FIX_BAD_COPY;
		c->fix_value[0] = (uint64_t)e->mirror;
		c->fix_value[1] = transid_failure(e, &wanted, &found) ? wanted : 0;
	}
	fs_error_format(e, buf, sizeof(buf));
	ck_warn(c, e->tree, 0, e->logical, 0, "%s (trying the next copy)", buf);
}

/* ---- driver ------------------------------------------------------------------ */

static void ck_stage(struct check_ctx *c, enum check_stage s, int fst)
{
	c->stage = s;
	if (c->o->stage)
		c->o->stage(c->o->ctx, s, fst);
}

static int load_roots(struct check_ctx *c)
{
	struct fs *fs = c->fs;
	int ret;

	memset(&c->root_tree, 0, sizeof(c->root_tree));
	if (fs_root_lookup(fs, BTRFS_ROOT_TREE_OBJECTID, &c->root_tree) < 0)
		return fs->err.code ? fs->err.code : -EIO;
	ret = fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &c->extent_root);
	c->have_extent_root = !ret;
	/* made anew when its root item is gone; a root tree leaf that cannot be read is
	 * the root tree's damage */
	if (ret)
		ck_err(c, ret == -ENOENT ? BTRFS_EXTENT_TREE_OBJECTID : BTRFS_ROOT_TREE_OBJECTID, 0, 0, 0,
		       "no extent tree root item");
	if (fs_root_lookup(fs, BTRFS_FS_TREE_OBJECTID, &(struct fs_root){ 0 }) == -ENOENT) {
		/* made again from its blocks (the extent tree's back references name them) */
		if (CFG_CHECK_REPAIR)
			c->fix_key = (struct fs_key){ BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
		ck_err_fix(c, CHECK_FIX_ROOT_LOST, BTRFS_FS_TREE_OBJECTID, 0, 0, 0, "no fs tree root item");
	}
	/* the kernel mounts no filesystem without it (made anew, empty, by the repair) */
	if (fs_root_lookup(fs, BTRFS_DATA_RELOC_TREE_OBJECTID, &(struct fs_root){ 0 }) == -ENOENT)
		ck_err(c, BTRFS_DATA_RELOC_TREE_OBJECTID, 0, 0, 0, "no data relocation tree root item");
	c->have_csum_root = fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &c->csum_root) == 0;
	return 0;
}

/* Stage 4: inodes and names of every subvolume, the log trees. */
static int fs_roots_stage(struct check_ctx *c)
{
	int ret = ck_qgroup_init(c);

	if (ret < 0)
		return ret;
	c->csum_need = ck_sorter(c, sizeof(struct check_range), ck_range_cmp, 3);
	if (!c->csum_need)
		return -ENOMEM;
	check_cache_inodes(c);
	ret = check_fs_roots(c);
	if (ret >= 0)
		check_log_trees(c);
	return ret;
}

#if CFG_CHECK_THREADS
#include "util/vec.h"
#include "util/workq.h"

/* Stage 4 on a second thread from the start, through a view with a context of its
 * own: the problems it reports are kept and reported in stage 4, in order, so the
 * output is that of one thread. Which tree blocks the first thread has in its cache
 * changes how a bad block is reported: at the first bad block (or past
 * FSR_MAX_EVENTS problems) the first thread does stage 4 anew. */
#define FSR_MAX_EVENTS 4096
/* Sort memory of each thread, in 16ths of the one thread's: the peak stays that of
 * one thread (the extent references of stage 2 alone fill less than their share). */
#define FSR_SORT_MEM 6
struct fsr_bg {
	struct workq q;
	struct check_ctx c;
	struct check_opts o;
	struct check_stats st;
	struct check_problem *ev;
	size_t n, cap;
	int ret, redo;
};

void ck_fsr_redo(struct check_ctx *c)
{
	c->fsr_bg->redo = 1;
}

static void fsr_bad_copy(void *ctx, const struct fs_error *e)
{
	(void)e;
	ck_fsr_redo(ctx);
}

static void fsr_log_problem(void *ctx, const struct check_problem *p)
{
	struct fsr_bg *bg = ((struct check_ctx *)ctx)->fsr_bg;
	struct check_problem *e = NULL;

	if (bg->n < FSR_MAX_EVENTS)
		e = vec_push(&bg->ev, &bg->n, &bg->cap, sizeof(*p));

	if (e)
		*e = *p;
	else
		bg->redo = 1;
}

static void fsr_run(void *ctx, void *rec)
{
	struct fsr_bg *bg = ctx;

	(void)rec;
	bg->ret = fs_roots_stage(&bg->c);
}

/* Halves the sort memory of both threads (mo: the first one's options). */
static struct fsr_bg *fsr_bg_start(struct check_ctx *c, struct check_opts *mo)
{
	struct fsr_bg *bg;
	size_t opts_sort_mem = mo->sort_mem;

	/* (a second handle reads the disk: not what a running transaction changed) */
	if (mo->threads == 1 || (c->fs->w && mo->generation) || !(bg = calloc(1, sizeof(*bg))))
		return NULL;
	mo->sort_mem = (mo->sort_mem ? mo->sort_mem : CHECK_DEFAULT_SORT_MEM) / 16 * FSR_SORT_MEM;
	bg->o = *mo;
	bg->o.problem = fsr_log_problem;
	bg->o.progress = NULL;
	bg->o.stage = NULL;
	bg->o.ctx = &bg->c;
	bg->c = *c;
	bg->c.o = &bg->o;
	bg->c.st = &bg->st;
	bg->c.stage = CHECK_STAGE_FS_ROOTS;
	bg->c.fsr_bg = bg;
	bg->c.data_bg = NULL;
	bg->c.fs = fs_view(c->fs, 0);
	if (bg->c.fs) {
		bg->c.fs->bad_copy = fsr_bad_copy;
		bg->c.fs->bad_copy_ctx = &bg->c;
	}
	if (!bg->c.fs || workq_start(&bg->q, 64, fsr_run, bg) < 0) {
		fs_view_free(bg->c.fs);
		free(bg);
		mo->sort_mem = opts_sort_mem;
		return NULL;
	}
	workq_reserve(&bg->q, 8);
	workq_commit(&bg->q, 8);
	return bg;
}

/* Waits for the second thread's stage 4 and reports what it found, or (too
 * much found) does stage 4 here; or (report 0: the check ended early) drops it. */
static int fsr_bg_join(struct check_ctx *c, struct fsr_bg *bg, int report)
{
	int ret;

	workq_stop(&bg->q);
	ret = bg->ret;
	if (!report || bg->redo) {
		xsort_free(bg->c.csum_need);
		ck_qgroup_free(&bg->c);
		ret = report ? fs_roots_stage(c) : 0;
	} else {
		for (size_t i = 0; i < bg->n; i++)
			ck_report(c, &bg->ev[i]);
		c->quota_root = bg->c.quota_root;
		c->qgroups = bg->c.qgroups;
		c->qgroup_err = bg->c.qgroup_err;
		c->qg = bg->c.qg;
		c->qgroup_skip = bg->c.qgroup_skip;
		c->qgroup_dropping = bg->c.qgroup_dropping;
		c->csum_need = bg->c.csum_need;
		c->st->quota_enabled = bg->st.quota_enabled;
		if (ret < 0)
			c->fs->err = bg->c.fs->err;
	}
	fs_view_free(bg->c.fs);
	free(bg->ev);
	free(bg);
	return ret;
}
#else
struct fsr_bg;
static struct fsr_bg *fsr_bg_start(struct check_ctx *c, struct check_opts *mo)
{
	(void)c, (void)mo;
	return NULL;
}

static int fsr_bg_join(struct check_ctx *c, struct fsr_bg *bg, int report)
{
	(void)c, (void)bg, (void)report;
	return 0;
}
#endif

int check_fs(struct fs *fs, const struct check_opts *opts, struct check_stats *stats)
{
	struct check_opts mo = *opts;
	struct check_ctx c = { .fs = fs, .o = &mo, .st = stats };
	struct fsr_bg *fsr_bg = NULL;
	uint64_t incompat = get_le64(&fs->sb.incompat_flags);
	uint64_t compat_ro = get_le64(&fs->sb.compat_ro_flags);
	int fst = (compat_ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE) != 0;
	int ret;

	memset(stats, 0, sizeof(*stats));
	c.super_gen = opts->generation ? opts->generation : get_le64(&fs->sb.generation);
	c.no_holes = (incompat & BTRFS_FEATURE_INCOMPAT_NO_HOLES) != 0;
	c.skinny = (incompat & BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA) != 0;
	c.stage = CHECK_STAGE_ROOT_ITEMS;
	fs->bad_copy = bad_copy;
	fs->bad_copy_ctx = &c;
	ret = load_roots(&c);
	if (ret < 0)
		return ret;
	ck_data_bg_start(&c);
	fsr_bg = fsr_bg_start(&c, &mo);

	ck_stage(&c, CHECK_STAGE_ROOT_ITEMS, fst);
	check_super_copies(&c);
	check_root_items(&c);

	ck_stage(&c, CHECK_STAGE_EXTENTS, fst);
	check_chunks_and_devices(&c);
	check_device_set(&c);
	ret = check_extents(&c);
	if (ret < 0)
		goto out;

	ck_stage(&c, CHECK_STAGE_FREE_SPACE, fst);
	check_free_space(&c);

	ck_stage(&c, CHECK_STAGE_FS_ROOTS, fst);
	ret = fsr_bg ? fsr_bg_join(&c, fsr_bg, 1) : fs_roots_stage(&c);
	fsr_bg = NULL;
	if (ret < 0)
		goto out;

	ck_stage(&c, CHECK_STAGE_CSUMS, fst);
	ret = check_csums(&c);
	if (ret < 0)
		goto out;
	check_log_csums(&c);

	ck_stage(&c, CHECK_STAGE_ROOT_REFS, fst);
	check_root_refs(&c);

	ck_stage(&c, CHECK_STAGE_QGROUPS, fst);
	ret = check_qgroups(&c);
out:
	fs->bad_copy = NULL;
	if (fsr_bg)
		fsr_bg_join(&c, fsr_bg, 0);
	ck_data_bg_free(&c);
	xsort_free(c.csum_need);
	ck_qgroup_free(&c);
	for (int i = 0; i < c.nseen; i++)
		free(c.seen[i].bits);
	free(c.seen);
	free(c.bgs);
	free(c.xrefs);
	free(c.tops);
	return ret;
}
