/* The write engine against a model: many random inserts, deletes, replaces, in-place
 * changes and range deletes of xattr items of the root directory (items the checkers
 * understand: name hash in the key, lengths inside), committed or aborted at random.
 * After each commit the tree must hold exactly the model and the filesystem, reopened
 * read-only, must pass btrfsbox's own check. Needs $BOX (mkfs.btrfs) for the image.
 * With WRITE_MODEL_KEEP=DIR the images and the models (name value-hex per line) stay
 * in DIR for tests/engine_write.test (reference check, kernel mount, getfattr). */
#include "unit.h"
#include "fs/check/check.h"
#include "fs/mkfs/mkfs.h"
#include "fs/write/write.h"
#include "util/le.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_X 20000
#define ROOT_DIR 256

struct xattr { uint32_t hash; char name[24]; uint8_t *val; uint32_t len; };
struct model { struct xattr v[MAX_X]; int n; };

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return n ? (uint32_t)(rng_state >> 33) % n : 0;
}

static int find(const struct model *m, uint32_t hash)
{
	for (int i = 0; i < m->n; i++)
		if (m->v[i].hash == hash)
			return i;
	return -1;
}

static void model_clear(struct model *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->v[i].val);
	m->n = 0;
}

static void model_copy(struct model *dst, const struct model *src)
{
	model_clear(dst);
	dst->n = src->n;
	for (int i = 0; i < src->n; i++) {
		dst->v[i] = src->v[i];
		dst->v[i].val = malloc(src->v[i].len + 1);
		memcpy(dst->v[i].val, src->v[i].val, src->v[i].len);
	}
}

/* The XATTR_ITEM of one xattr: dir item, name, value. */
static uint32_t item_of(const struct xattr *x, uint8_t *buf)
{
	struct btrfs_dir_item *d = (void *)buf;
	size_t nl = strlen(x->name);

	memset(d, 0, sizeof(*d));
	put_le64(&d->transid, 1);
	put_le16(&d->data_len, (uint16_t)x->len);
	put_le16(&d->name_len, (uint16_t)nl);
	d->type = BTRFS_FT_XATTR;
	memcpy(buf + sizeof(*d), x->name, nl);
	memcpy(buf + sizeof(*d) + nl, x->val, x->len);
	return (uint32_t)(sizeof(*d) + nl + x->len);
}

static struct fs_key key_of(uint32_t hash)
{
	return (struct fs_key){ ROOT_DIR, BTRFS_XATTR_ITEM_KEY, hash };
}

static int cmp_hash(const void *a, const void *b)
{
	const struct xattr *x = a, *y = b;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* The tree holds exactly the model. */
static int same_as_model(struct fs *fs, struct model *m)
{
	struct fs_root root;
	struct fs_path p;
	struct fs_key k = key_of(0);
	uint8_t buf[70000];
	int i = 0, ret, bad = 0;

	qsort(m->v, (size_t)m->n, sizeof(m->v[0]), cmp_hash);
	if (fs_root_lookup(fs, BTRFS_FS_TREE_OBJECTID, &root))
		return 0;
	ret = fs_search(fs, &root, &k, &p);
	for (; ret == 0; ret = fs_next(fs, &p)) {
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, &k);
		if (k.objectid != ROOT_DIR || k.type != BTRFS_XATTR_ITEM_KEY)
			break;
		if (i >= m->n || k.offset != m->v[i].hash || size != item_of(&m->v[i], buf) ||
		    memcmp(d, buf, size)) {
			fprintf(stderr, "  item %d (hash %llu) differs from the model\n", i,
				(unsigned long long)k.offset);
			bad = 1;
			break;
		}
		i++;
	}
	fs_path_release(fs, &p);
	if (!bad && i != m->n)
		fprintf(stderr, "  %d items in the tree, %d in the model\n", i, m->n);
	return !bad && i == m->n && ret >= 0;
}

static void problem(void *ctx, const struct check_problem *p)
{
	(void)ctx;
	if (!p->warning)
		fprintf(stderr, "  check: %s (root %llu bytenr %llu)\n", p->msg, (unsigned long long)p->root,
			(unsigned long long)p->bytenr);
}

/* Reopened read-only: the model is on disk and btrfsbox's check finds nothing. */
static int on_disk_ok(const char *const *paths, int n, struct model *m)
{
	struct check_opts o = { .problem = problem, .tmpdir = getenv("TMPDIR") };
	struct check_stats st;
	struct fs_error err;
	struct fs *fs = fs_open(paths, n, NULL, &err);
	int ok;

	if (!fs) {
		fprintf(stderr, "  reopen: %s\n", err.msg);
		return 0;
	}
	ok = same_as_model(fs, m) && !check_fs(fs, &o, &st) && !st.errors;
	fs_close(fs);
	return ok;
}

static void random_value(struct xattr *x, uint32_t max)
{
	uint32_t len = rnd(8) ? rnd(300) : rnd(max);

	free(x->val);
	x->val = malloc(len + 1);
	for (uint32_t i = 0; i < len; i++)
		x->val[i] = (uint8_t)rnd(256);
	x->len = len;
}

static void save_model(const struct model *m, const char *path)
{
	FILE *f = fopen(path, "w");

	for (int i = 0; f && i < m->n; i++) {
		fprintf(f, "%s ", m->v[i].name);
		for (uint32_t j = 0; j < m->v[i].len; j++)
			fprintf(f, "%02x", m->v[i].val[j]);
		fputc('\n', f);
	}
	if (f)
		fclose(f);
}

/* One random change, applied to the tree and the model. The tree grows, then
 * shrinks (merges, lower roots), then both, in turn. */
static int step(struct fs *fs, struct model *m, uint32_t max, int *counter, int phase)
{
	static const uint32_t inserts[3] = { 70, 10, 40 }, deletes[3] = { 80, 80, 65 };
	uint8_t buf[70000];
	uint32_t op = rnd(1000) / 10, size;
	int i = m->n ? (int)rnd((uint32_t)m->n) : -1, ret = 0;

	if (op >= inserts[phase] && op < deletes[phase])
		op = 50;                /* delete */
	else if (op < inserts[phase])
		op = 0;                 /* insert */
	else
		op = 80 + (op - deletes[phase]) * 20 / (100 - deletes[phase]);
	if (op == 99 && rnd(5))
		op = 98;
	if (op < 45 || i < 0) {
		struct xattr x = { 0 };
		struct fs_key k;

		if (m->n >= MAX_X)
			return 0;
		snprintf(x.name, sizeof(x.name), "user.m%d", (*counter)++);
		x.hash = btrfs_name_hash(x.name, strlen(x.name));
		if (find(m, x.hash) >= 0)
			return 0;               /* a hash collision: not this name */
		random_value(&x, max);
		k = key_of(x.hash);
		ret = fs_item_insert(fs, BTRFS_FS_TREE_OBJECTID, &k, buf, item_of(&x, buf));
		m->v[m->n++] = x;
	} else if (op < 70) {
		struct fs_key k = key_of(m->v[i].hash);

		ret = fs_item_delete(fs, BTRFS_FS_TREE_OBJECTID, &k);
		free(m->v[i].val);
		m->v[i] = m->v[--m->n];
	} else if (op < 90) {
		struct fs_key k = key_of(m->v[i].hash);

		random_value(&m->v[i], max);
		ret = fs_item_replace(fs, BTRFS_FS_TREE_OBJECTID, &k, buf, item_of(&m->v[i], buf));
	} else if (op < 99) {
		struct fs_key k = key_of(m->v[i].hash);
		uint8_t *d = fs_item_mut(fs, BTRFS_FS_TREE_OBJECTID, &k, &size);
		uint32_t at = (uint32_t)(sizeof(struct btrfs_dir_item) + strlen(m->v[i].name));

		if (!d)
			return -1;
		for (uint32_t j = 0; j < m->v[i].len; j += 1 + rnd(50))
			d[at + j] = m->v[i].val[j] = (uint8_t)rnd(256);
	} else {
		/* a range of keys, by hash: about 1/64 of them */
		uint32_t lo = m->v[i].hash, hi = lo + (lo < 0xfc000000u ? 0x4000000u : 0);
		struct fs_key from = key_of(lo), to = key_of(hi);
		uint64_t count;

		ret = fs_items_delete_range(fs, BTRFS_FS_TREE_OBJECTID, &from, &to, &count);
		for (int j = 0; j < m->n; j++)
			if (m->v[j].hash >= lo && m->v[j].hash <= hi) {
				free(m->v[j].val);
				m->v[j--] = m->v[--m->n];
			}
	}
	if (ret)
		fprintf(stderr, "  op %u: %s\n", op, fs->err.msg);
	return ret;
}

/* The images of a model run: name's one or two (ndevs) 256 MiB files in img[],
 * made by btrfsbox's mkfs with the node size and more options. 0: cannot (a SKIP said
 * when $BOX is not set: *skipped). */
static int make_images(char img[2][512], const char *name, const char *nodesize, const char *mkfs, int ndevs,
		       int *skipped)
{
	const char *box = getenv("BOX"), *keep = getenv("WRITE_MODEL_KEEP");
	const char *dir = keep ? keep : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char cmd[1800], pid[24] = "";

	*skipped = !box;
	if (!box) {
		printf("SKIP %s: BOX (the btrfsbox binary, for mkfs) is not set\n", name);
		return 0;
	}
	/* without WRITE_MODEL_KEEP, the pid keeps two runs at once (two checkouts) apart */
	if (!keep)
		snprintf(pid, sizeof(pid), ".%ld", (long)getpid());
	for (int i = 0; i < 2; i++)
		snprintf(img[i], sizeof(img[i]), "%s/%s%s%s.img", dir, name, i ? "-2" : "", pid);
	/* UNIT_RUNNER: the emulator that runs a cross build (make cross-test) */
	return snprintf(cmd, sizeof(cmd), "rm -f %s %s && truncate -s 256M %s %s && %s %s mkfs.btrfs -q -f -n %s %s %s %s",
			img[0], img[1], img[0], img[1], getenv("UNIT_RUNNER") ? getenv("UNIT_RUNNER") : "", box,
			nodesize, mkfs, img[0], ndevs > 1 ? img[1] : "") < (int)sizeof(cmd) && !system(cmd);
}

/* The end of a model run: the images and the model kept for engine_write.test
 * (WRITE_MODEL_KEEP), else removed. */
static void finish_images(char img[2][512], const char *name, const struct model *m)
{
	const char *keep = getenv("WRITE_MODEL_KEEP");
	char path[600];

	if (keep) {
		snprintf(path, sizeof(path), "%s/%s.model", keep, name);
		save_model(m, path);
	} else {
		unlink(img[0]);
		unlink(img[1]);
	}
}

/* seed, nodesize, steps; name: of the images; mkfs: more options; ndevs: 1 or 2 */
static int run_model(uint64_t seed, const char *nodesize, int steps, const char *name, const char *mkfs,
		     int ndevs)
{
	static struct model m, committed;
	char img[2][512];
	const char *paths[2] = { img[0], img[1] };
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;
	int ok = 1, counter = 0, done = 0, most = 0, runs = 1, skipped;

	/* WRITE_MODEL_SEED=N tries other sequences (for hunting bugs by hand) */
	rng_state = seed + (getenv("WRITE_MODEL_SEED") ? strtoull(getenv("WRITE_MODEL_SEED"), NULL, 0) : 0);
	if (!make_images(img, name, nodesize, mkfs, ndevs, &skipped))
		return skipped;
	fs_wopen_opts_init(&o);
	fs = fs_wopen(paths, ndevs, &o, &err);
	if (!fs)
		return 0;
	while (ok && done < steps) {
		int n = 1 + (int)rnd(400), abort_it = !rnd(10);

		ok = !fs_tx_begin(fs);
		for (int i = 0; ok && i < n; i++, done++)
			ok = !step(fs, &m, (uint32_t)atoi(nodesize) / 3, &counter, done / 5000 % 3);
		if (ok && abort_it) {
			fs_tx_abort(fs);
			model_copy(&m, &committed);
		} else if (ok) {
			ok = !fs_tx_commit(fs);
			if (!ok)
				fprintf(stderr, "  commit: %s\n", fs->err.msg);
			ok = ok && same_as_model(fs, &m);
			model_copy(&committed, &m);
			if (m.n > most)
				most = m.n;
		}
		/* a new run now and then: the blocks freed by the last one are free again */
		if (ok && !rnd(4)) {
			ok = !fs_wclose(fs) && on_disk_ok(paths, ndevs, &m);
			fs = ok ? fs_wopen(paths, ndevs, &o, &err) : NULL;
			ok = fs != NULL;
			runs++;
		}
	}
	if (fs_wclose(fs))
		ok = 0;
	ok = ok && on_disk_ok(paths, ndevs, &m);
	finish_images(img, name, &m);
	fprintf(stderr, "  %s: seed %llu %s after %d steps in %d runs, %d items (most %d)\n", name,
		(unsigned long long)seed, ok ? "passed" : "failed", done, runs, m.n, most);
	model_clear(&m);
	model_clear(&committed);
	return ok;
}

/* Metadata grown far past its first chunk in transactions of big xattrs: new chunks
 * are made (the one a cancelled transaction made leaves the chunk map again); then the
 * filesystem holds the model. */
static int run_fill(uint64_t seed, const char *mkfs, const char *name, int ndevs)
{
	static struct model m;
	char img[2][512];
	const char *paths[2] = { img[0], img[1] };
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;
	int ok = 1, counter = 0, skipped, first, cancelled = 0;
	uint8_t buf[8000];

	rng_state = seed;
	if (!make_images(img, name, "16384", mkfs, ndevs, &skipped))
		return skipped;
	fs_wopen_opts_init(&o);
	fs = fs_wopen(paths, ndevs, &o, &err);
	if (!fs)
		return 0;
	first = fs->num_chunks;
	for (int t = 0; ok && t < 10; t++) {
		int before = fs->num_chunks, added = 0;

		ok = !fs_tx_begin(fs);
		for (int i = 0; ok && i < 500 && m.n < MAX_X; i++) {
			struct xattr x = { 0 };
			struct fs_key k;

			snprintf(x.name, sizeof(x.name), "user.f%d", counter++);
			x.hash = btrfs_name_hash(x.name, strlen(x.name));
			if (find(&m, x.hash) >= 0)
				continue;
			x.len = 6500 + rnd(500);  /* two a leaf; the names fit one listxattr */
			x.val = malloc(x.len);
			memset(x.val, 'a' + t, x.len);
			k = key_of(x.hash);
			ok = !fs_item_insert(fs, BTRFS_FS_TREE_OBJECTID, &k, buf, item_of(&x, buf));
			m.v[m.n++] = x;
			added++;
		}
		if (!ok)
			fprintf(stderr, "  insert: %s\n", fs->err.msg);
		if (ok && !cancelled && fs->num_chunks > before) {
			/* the first transaction that made a chunk is cancelled, then made again */
			fs_tx_abort(fs);
			ok = fs->num_chunks == before;
			cancelled = 1;
			while (added--)
				free(m.v[--m.n].val);
			t--;
			continue;
		}
		ok = ok && !fs_tx_commit(fs);
		/* blocks freed by a commit are allocated again by the next handle */
		if (ok) {
			ok = !fs_wclose(fs);
			fs = ok ? fs_wopen(paths, ndevs, &o, &err) : NULL;
			ok = fs != NULL;
		}
	}
	if (!fs)
		return 0;
	fprintf(stderr, "  %s: %d chunks, %d at first, a cancelled one: %d\n", name, fs->num_chunks, first, cancelled);
	ok = ok && fs->num_chunks > first && cancelled;
	if (fs_wclose(fs))
		ok = 0;
	ok = ok && on_disk_ok(paths, ndevs, &m);
	finish_images(img, name, &m);
	model_clear(&m);
	return ok;
}

TEST(write_model_small_nodes)
{
	CHECK(run_model(1, "4096", 25000, "model4k", "", 1));
}

TEST(write_model_default_nodes)
{
	CHECK(run_model(7, "16384", 12000, "model16k", "", 1));
}

/* The older formats: extent items with tree block info, no free space tree (v1 or no
 * cache), and metadata mirrored on two devices. */
TEST(write_model_old_format_raid1)
{
	CHECK(run_model(11, "8192", 8000, "modelold", "-O ^skinny-metadata,^free-space-tree,^block-group-tree -m raid1 -d raid1", 2));
}

TEST(write_model_new_metadata_chunks)
{
	CHECK(run_fill(5, "", "modelfull", 1));
	CHECK(run_fill(6, "-m raid1 -d single", "modelfull2", 2));
}

/* With WRITE_MODEL_KEEP: an image with what the old inode number cache left in the
 * fs tree (its inode, an inline extent, the free space header), for clear-ino-cache. */
TEST(write_inocache_image)
{
	const char *box = getenv("BOX"), *keep = getenv("WRITE_MODEL_KEEP");
	struct btrfs_inode_item ii = { 0 };
	struct btrfs_free_space_header h = { 0 };
	uint8_t fe[FS_FILE_EXTENT_INLINE_START + 100] = { 0 };
	struct fs_key kii = { BTRFS_FREE_INO_OBJECTID, BTRFS_INODE_ITEM_KEY, 0 };
	struct fs_key kfe = { BTRFS_FREE_INO_OBJECTID, BTRFS_EXTENT_DATA_KEY, 0 };
	struct fs_key kh = { BTRFS_FREE_SPACE_OBJECTID, 0, 0 };
	char img[600], cmd[1400];
	struct fs_wopen_opts o;
	struct fs_error err;
	struct fs *fs;

	if (!box || !keep)
		return;
	snprintf(img, sizeof(img), "%s/inocache.img", keep);
	snprintf(cmd, sizeof(cmd), "truncate -s 160M %s && %s mkfs.btrfs -q -f %s", img, box, img);
	CHECK(!system(cmd));
	fs_wopen_opts_init(&o);
	fs = fs_wopen((const char *const[]){ img }, 1, &o, &err);
	CHECK(fs != NULL);
	if (!fs)
		return;
	put_le32(&ii.mode, 0100600);
	put_le32(&ii.nlink, 1);
	put_le64(&ii.size, 100);
	put_le64(&ii.flags, 3);                       /* NODATASUM, NODATACOW */
	put_le64(&fe[8], 100);                          /* ram_bytes */
	fe[20] = BTRFS_FILE_EXTENT_INLINE;
	put_le64(&h.location.objectid, BTRFS_FREE_INO_OBJECTID);
	h.location.type = BTRFS_INODE_ITEM_KEY;
	CHECK(!fs_tx_begin(fs));
	CHECK(!fs_item_insert(fs, BTRFS_FS_TREE_OBJECTID, &kii, &ii, sizeof(ii)));
	CHECK(!fs_item_insert(fs, BTRFS_FS_TREE_OBJECTID, &kfe, fe, sizeof(fe)));
	CHECK(!fs_item_insert(fs, BTRFS_FS_TREE_OBJECTID, &kh, &h, sizeof(h)));
	CHECK(!fs_tx_commit(fs));
	CHECK(!fs_wclose(fs));
}
