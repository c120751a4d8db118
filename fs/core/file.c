/* Files and directories: inode lookup, file extents, reading data, dir entries. */
#include "fs.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Larger compressed extents than this are corrupt (btrfs uses 128 KiB). */
#define MAX_COMPRESSED_EXTENT (1u << 20)

static void set_key_ctx(struct fs *fs, uint64_t tree, uint64_t objectid, uint8_t type, uint64_t offset)
{
	fs->err.tree = tree;
	fs->err.has_key = 1;
	fs->err.key = (struct fs_key){ objectid, type, offset };
}

int fs_inode_get(struct fs *fs, const struct fs_root *root, uint64_t ino, struct btrfs_inode_item *out)
{
	struct fs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	const struct btrfs_inode_item *ii;
	const uint8_t *data;
	struct fs_path p;
	uint32_t size;
	int ret = fs_lookup(fs, root, &key, &p);

	if (ret == -ENOENT)
		fs_err_at(&fs->err, ret, root->objectid, 0, "inode %llu not found", (unsigned long long)ino);
	if (ret)
		return ret;
	data = fs_path_data(&p, &size);
	ii = fs_inode_item(data, size);
	if (ii)
		memcpy(out, ii, sizeof(*out));
	fs_path_release(fs, &p);
	if (!ii) {
		fs_err(&fs->err, -EUCLEAN, "inode item too short (%u bytes)", size);
		set_key_ctx(fs, root->objectid, ino, BTRFS_INODE_ITEM_KEY, 0);
		return -EUCLEAN;
	}
	return 0;
}

/* ---- extent iteration ---------------------------------------------------- */

int fs_extent_iter_init(struct fs *fs, const struct fs_root *root, uint64_t ino, uint64_t start,
			struct fs_extent_iter *it)
{
	struct fs_key key = { ino, BTRFS_EXTENT_DATA_KEY, start };
	struct btrfs_inode_item ii;
	int ret = fs_inode_get(fs, root, ino, &ii);

	memset(it, 0, sizeof(*it));
	if (ret)
		return ret;
	it->fs = fs;
	it->root = *root;
	it->ino = ino;
	it->isize = get_le64(&ii.size);
	it->pos = start;
	/* the extent covering start begins at or before it */
	ret = fs_search_le(fs, root, &key, &it->path);
	if (ret == -ENOENT)
		ret = fs_search(fs, root, &key, &it->path);
	if (ret < 0)
		return ret;
	it->path_valid = 1;
	return 0;
}

void fs_extent_iter_release(struct fs_extent_iter *it)
{
	fs_path_release(it->fs, &it->path);
	it->path_valid = 0;
}

/* The current item when it is an EXTENT_DATA item of the file (else 0). */
static int current_extent(struct fs_extent_iter *it, struct fs_key *key)
{
	if (!it->path_valid || !it->path.levels)
		return 0;
	fs_path_key(&it->path, key);
	return key->objectid == it->ino && key->type == BTRFS_EXTENT_DATA_KEY;
}

static int step(struct fs_extent_iter *it)
{
	int ret = fs_next(it->fs, &it->path);

	if (ret > 0)
		it->path_valid = 0;
	return ret < 0 ? ret : 0;
}

/* Bytes of the file an extent item covers. */
static uint64_t extent_span(const struct fs_file_extent *fe)
{
	return fe->type == BTRFS_FILE_EXTENT_INLINE ? fe->ram_bytes : fe->num_bytes;
}

static void emit_hole(struct fs_extent_iter *it, struct fs_extent *ext, uint64_t end)
{
	memset(ext, 0, sizeof(*ext));
	ext->kind = FS_EXT_HOLE;
	ext->file_offset = it->pos;
	ext->len = end - it->pos;
	it->pos = end;
}

static int parse_current(struct fs_extent_iter *it, const struct fs_key *key, struct fs_file_extent *fe)
{
	uint32_t size;
	const uint8_t *data = fs_path_data(&it->path, &size);
	int ret = fs_file_extent(data, size, fe);

	if (ret) {
		fs_err(&it->fs->err, ret, "bad file extent item (%u bytes)", size);
		set_key_ctx(it->fs, it->root.objectid, key->objectid, key->type, key->offset);
	}
	return ret;
}

static enum fs_extent_kind kind_of(const struct fs_file_extent *fe)
{
	if (fe->type == BTRFS_FILE_EXTENT_INLINE)
		return FS_EXT_INLINE;
	if (fe->type == BTRFS_FILE_EXTENT_PREALLOC)
		return FS_EXT_PREALLOC;
	return fe->disk_bytenr ? FS_EXT_REG : FS_EXT_HOLE;
}

int fs_extent_iter_next(struct fs_extent_iter *it, struct fs_extent *ext)
{
	struct fs_file_extent fe;
	struct fs_key key;
	int ret;

	while (it->pos < it->isize) {
		if (it->advance) {
			it->advance = 0;
			if ((ret = step(it)))
				return ret;
		}
		if (!current_extent(it, &key)) {
			emit_hole(it, ext, it->isize);          /* implicit hole to EOF */
			return 1;
		}
		if ((ret = parse_current(it, &key, &fe)))
			return ret;
		if (key.offset > it->pos) {                    /* implicit hole before it */
			emit_hole(it, ext, key.offset < it->isize ? key.offset : it->isize);
			return 1;
		}
		it->advance = 1;
		if (key.offset + extent_span(&fe) <= it->pos || key.offset + extent_span(&fe) < key.offset)
			continue;                              /* entirely before pos */
		memset(ext, 0, sizeof(*ext));
		ext->fe = fe;
		ext->kind = kind_of(&fe);
		ext->key_offset = key.offset;
		ext->file_offset = it->pos;
		ext->fe.offset += it->pos - key.offset;
		ext->len = key.offset + extent_span(&fe) - it->pos;
		if (ext->len > it->isize - it->pos)
			ext->len = it->isize - it->pos;
		it->pos += ext->len;
		return 1;
	}
	return 0;
}

/* ---- data reading with checksums ----------------------------------------- */

/* Verifies the sectors of [logical, +len) (sector aligned) that have a checksum. */
static int verify_data_csums(struct fs *fs, uint64_t logical, const uint8_t *buf, size_t len)
{
	struct fs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, logical }, found;
	struct fs_root root;
	struct fs_path p;
	int ret = fs_root_lookup(fs, BTRFS_CSUM_TREE_OBJECTID, &root);

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = fs_search_le(fs, &root, &key, &p);
	if (ret == -ENOENT)
		ret = fs_search(fs, &root, &key, &p);
	for (; ret == 0; ret = fs_next(fs, &p)) {
		uint32_t size, n;
		const uint8_t *sums = fs_path_data(&p, &size);

		fs_path_key(&p, &found);
		if (found.objectid != key.objectid || found.type != key.type || found.offset >= logical + len)
			break;
		n = fs_csum_item_count(size, fs->csum_size);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t sector = found.offset + (uint64_t)i * fs->sectorsize;
			uint8_t c[CSUM_MAX_SIZE];
			if (sector < logical || sector >= logical + len)
				continue;
			csum_compute(fs->csum_type, buf + (sector - logical), fs->sectorsize, c);
			if (memcmp(c, sums + (size_t)i * fs->csum_size, fs->csum_size)) {
				fs_path_release(fs, &p);
				return fs_err_at(&fs->err, -EUCLEAN, BTRFS_CSUM_TREE_OBJECTID, sector,
						 "data checksum mismatch");
			}
		}
	}
	fs_path_release(fs, &p);
	return ret < 0 ? ret : 0;
}

static int read_copy(struct fs *fs, uint64_t start, uint8_t *buf, size_t len, int mirror, int verify)
{
	int ret = fs_read_logical(fs, start, buf, len, mirror);

	if (!ret && verify)
		ret = verify_data_csums(fs, start, buf, len);
	if (ret)
		fs->err.mirror = mirror;
	return ret;
}

/* Makes *buf (*cap bytes) hold at least want bytes; the contents are not kept. */
static int reserve(uint8_t **buf, size_t *cap, size_t want)
{
	if (*cap >= want)
		return 0;
	free(*buf);
	*cap = 0;
	*buf = malloc(want);
	if (!*buf)
		return -ENOMEM;
	*cap = want;
	return 0;
}

/* Checksums cover whole sectors: an unaligned verified read goes through
 * fs->align_buf, kept between calls (no allocation per read). */
int fs_read_data(struct fs *fs, uint64_t logical, void *buf, size_t len, int verify)
{
	uint64_t start = verify ? logical / fs->sectorsize * fs->sectorsize : logical;
	uint64_t end = verify ? (logical + len + fs->sectorsize - 1) / fs->sectorsize * fs->sectorsize
			      : logical + len;
	int copies = fs_num_copies(fs, logical), first_missing = 0;
	uint8_t *tmp = buf;
	struct fs_error first;
	int ret = -EIO;

	if (start != logical || end != logical + len) {
		if (reserve(&fs->align_buf, &fs->align_buf_cap, end - start))
			return fs_err(&fs->err, -ENOMEM, "out of memory");
		tmp = fs->align_buf;
	}
	if (!copies)
		ret = fs_err_at(&fs->err, -EUCLEAN, 0, logical, "data address not mapped by any chunk");
	for (int m = 1; m <= copies; m++) {
		ret = read_copy(fs, start, tmp, end - start, m, verify);
		if (!ret)
			break;
		fs_copy_failed(fs, start, m, &first, &first_missing);
	}
	if (ret && copies)
		fs->err = first;
	if (!ret && tmp != buf)
		memcpy(buf, tmp + (logical - start), len);
	return ret;
}

/* ---- reading files --------------------------------------------------------- */

int fs_file_open(struct fs *fs, const struct fs_root *root, uint64_t ino, struct fs_file *f)
{
	struct btrfs_inode_item ii;
	int ret = fs_inode_get(fs, root, ino, &ii);

	memset(f, 0, sizeof(*f));
	if (ret)
		return ret;
	f->fs = fs;
	f->root = *root;
	f->ino = ino;
	f->isize = get_le64(&ii.size);
	return 0;
}

/* The decoded extent buffer goes back to the fs (the larger of the two is kept), so
 * reading many files does not allocate (and with some mallocs, map) one per file. */
void fs_file_close(struct fs_file *f)
{
	struct fs *fs = f->fs;

	if (fs && f->ext_buf_cap > fs->spare_ext_cap) {
		free(fs->spare_ext_buf);
		fs->spare_ext_buf = f->ext_buf;
		fs->spare_ext_cap = f->ext_buf_cap;
	} else {
		free(f->ext_buf);
	}
	f->ext_buf = NULL;
	f->ext_buf_cap = f->ext_buf_len = 0;
}

/* Decodes compressed bytes into f->ext_buf (at least `want` bytes of room). */
static int decode_into_buf(struct fs_file *f, int type, const uint8_t *in, size_t in_len, size_t want)
{
	struct fs *fs = f->fs;
	size_t got;
	int ret;

	f->ext_bytenr = 0;
	f->ext_buf_len = 0;
	if (!f->ext_buf) {
		f->ext_buf = fs->spare_ext_buf;
		f->ext_buf_cap = fs->spare_ext_cap;
		fs->spare_ext_buf = NULL;
		fs->spare_ext_cap = 0;
	}
	if (reserve(&f->ext_buf, &f->ext_buf_cap, want))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	ret = fs_decompress(&fs->inflater, type, in, in_len, f->ext_buf, want, &got, fs->sectorsize);
	if (ret)
		return fs_err(&fs->err, ret, ret == -ENOTSUP ? "compression type %d not supported"
			      : "corrupt compressed data (type %d)", type);
	memset(f->ext_buf + got, 0, want - got);
	f->ext_buf_len = want;
	return 0;
}

/* Makes f->ext_buf hold the whole decompressed regular extent. */
static int load_compressed(struct fs_file *f, const struct fs_file_extent *fe)
{
	struct fs *fs = f->fs;
	int ret;

	if (f->ext_buf && f->ext_bytenr == fe->disk_bytenr && f->ext_buf_len == fe->ram_bytes)
		return 0;
	if (fe->disk_num_bytes > MAX_COMPRESSED_EXTENT || fe->ram_bytes > MAX_COMPRESSED_EXTENT ||
	    !fe->ram_bytes)
		return fs_err_at(&fs->err, -EUCLEAN, f->root.objectid, fe->disk_bytenr,
				 "compressed extent too large (%llu -> %llu bytes)",
				 (unsigned long long)fe->disk_num_bytes, (unsigned long long)fe->ram_bytes);
	if (reserve(&fs->disk_buf, &fs->disk_buf_cap, fe->disk_num_bytes ? fe->disk_num_bytes : 1))
		return fs_err(&fs->err, -ENOMEM, "out of memory");
	ret = fs_read_data(fs, fe->disk_bytenr, fs->disk_buf, fe->disk_num_bytes, f->verify_csum);
	if (!ret)
		ret = decode_into_buf(f, fe->compression, fs->disk_buf, fe->disk_num_bytes,
				      fe->ram_bytes);
	if (!ret)
		f->ext_bytenr = fe->disk_bytenr;
	return ret;
}

/* Copies n bytes from `src` (src_len long) at off, zero beyond its end. */
static void copy_or_zero(uint8_t *dst, size_t n, const uint8_t *src, size_t src_len, uint64_t off)
{
	size_t avail = off < src_len ? src_len - (size_t)off : 0;

	if (avail > n)
		avail = n;
	if (avail)
		memcpy(dst, src + off, avail);
	memset(dst + avail, 0, n - avail);
}

static int read_inline(struct fs_file *f, const struct fs_extent *e, uint8_t *dst, size_t n)
{
	const struct fs_file_extent *fe = &e->fe;
	size_t want;
	int ret;

	if (fe->compression == FS_COMPRESS_NONE) {
		copy_or_zero(dst, n, fe->inline_data, fe->inline_len, fe->offset);
		return 0;
	}
	/* the payload may decompress to a whole sector rather than ram_bytes */
	want = fe->ram_bytes > f->fs->sectorsize ? fe->ram_bytes : f->fs->sectorsize;
	if (want > MAX_COMPRESSED_EXTENT)
		return fs_err(&f->fs->err, -EUCLEAN, "inline extent ram_bytes %llu too large",
			      (unsigned long long)fe->ram_bytes);
	ret = decode_into_buf(f, fe->compression, fe->inline_data, fe->inline_len, want);
	if (ret)
		return ret;
	copy_or_zero(dst, n, f->ext_buf, fe->ram_bytes, fe->offset);
	return 0;
}

static int read_extent(struct fs_file *f, const struct fs_extent *e, uint8_t *dst, size_t n)
{
	const struct fs_file_extent *fe = &e->fe;
	int ret;

	switch (e->kind) {
	case FS_EXT_HOLE:
	case FS_EXT_PREALLOC:
		memset(dst, 0, n);
		return 0;
	case FS_EXT_INLINE:
		return read_inline(f, e, dst, n);
	case FS_EXT_REG:
		break;
	}
	if (fe->compression == FS_COMPRESS_NONE)
		return fs_read_data(f->fs, fe->disk_bytenr + fe->offset, dst, n, f->verify_csum);
	ret = load_compressed(f, fe);
	if (!ret)
		copy_or_zero(dst, n, f->ext_buf, f->ext_buf_len, fe->offset);
	return ret;
}

ssize_t fs_file_pread(struct fs_file *f, void *buf, size_t len, uint64_t off)
{
	struct fs_extent_iter it;
	struct fs_extent e;
	size_t done = 0;
	int ret;

	if (off >= f->isize || !len)
		return 0;
	if (len > f->isize - off)
		len = (size_t)(f->isize - off);
	ret = fs_extent_iter_init(f->fs, &f->root, f->ino, off, &it);
	it.isize = f->isize;
	while (!ret && done < len) {
		size_t n;

		ret = fs_extent_iter_next(&it, &e);
		if (ret <= 0)
			break;
		n = e.len < len - done ? (size_t)e.len : len - done;
		ret = read_extent(f, &e, (uint8_t *)buf + done, n);
		done += n;
	}
	fs_extent_iter_release(&it);
	return ret < 0 ? ret : (ssize_t)done;
}

/* ---- directories ------------------------------------------------------------ */

static int dir_item_entries(struct fs *fs, const struct fs_path *p, uint64_t tree, fs_dir_fn cb, void *ctx)
{
	struct fs_dir_entry e;
	struct fs_key key;
	uint32_t size, pos = 0;
	const uint8_t *data = fs_path_data(p, &size);
	int ret;

	fs_path_key(p, &key);
	while ((ret = fs_dir_entry_next(data, size, &pos, &e)) == 1) {
		ret = cb(ctx, key.offset, &e);
		if (ret)
			return ret;
	}
	if (ret < 0) {
		fs_err(&fs->err, ret, "dir item entry exceeds the item");
		set_key_ctx(fs, tree, key.objectid, key.type, key.offset);
	}
	return ret;
}

int fs_dir_iterate(struct fs *fs, const struct fs_root *root, uint64_t ino, fs_dir_fn cb, void *ctx)
{
	struct fs_key key = { ino, BTRFS_DIR_INDEX_KEY, 0 }, found;
	struct fs_path p;
	int stop = 0, ret = fs_search(fs, root, &key, &p);

	for (; ret == 0 && !stop; ret = fs_next(fs, &p)) {
		fs_path_key(&p, &found);
		if (found.objectid != ino || found.type != BTRFS_DIR_INDEX_KEY)
			break;
		stop = dir_item_entries(fs, &p, root->objectid, cb, ctx);
	}
	fs_path_release(fs, &p);
	if (stop)
		return stop;
	return ret < 0 ? ret : 0;
}

struct name_match {
	const char *name;
	size_t len;
	struct fs_key location;
	int found;
};

static int match_name(void *ctx, uint64_t index, const struct fs_dir_entry *e)
{
	struct name_match *m = ctx;

	(void)index;
	if (e->name_len != m->len || memcmp(e->name, m->name, m->len))
		return 0;
	m->location = e->location;
	m->found = 1;
	return 1;
}

uint64_t fs_root_dir(const struct fs_root *r)
{
	uint64_t d = r->item_size ? get_le64(&r->item.root_dirid) : 0;
	return d ? d : BTRFS_FIRST_FREE_OBJECTID;
}

/* Follows one directory entry; a ROOT_ITEM location enters that subvolume. */
static int enter(struct fs *fs, struct fs_root *cur, uint64_t *ino, const struct name_match *m)
{
	int ret;

	if (m->location.type != BTRFS_ROOT_ITEM_KEY) {
		*ino = m->location.objectid;
		return 0;
	}
	ret = fs_root_lookup(fs, m->location.objectid, cur);
	if (!ret)
		*ino = fs_root_dir(cur);
	return ret;
}

int fs_path_lookup(struct fs *fs, const struct fs_root *root, const char *path,
		   struct fs_root *out_root, uint64_t *ino)
{
	struct fs_root cur = *root;
	uint64_t dir = fs_root_dir(root);
	int ret = 0;

	while (*path) {
		struct name_match m = { path, 0, { 0, 0, 0 }, 0 };

		while (*path == '/')
			path++;
		m.name = path;
		while (*path && *path != '/')
			path++;
		m.len = (size_t)(path - m.name);
		if (!m.len)
			break;
		ret = fs_dir_iterate(fs, &cur, dir, match_name, &m);
		if (ret < 0)
			return ret;
		if (!m.found)
			return fs_err_at(&fs->err, -ENOENT, cur.objectid, 0, "%.*s: not found in directory %llu",
					 (int)m.len, m.name, (unsigned long long)dir);
		ret = enter(fs, &cur, &dir, &m);
		if (ret)
			return ret;
	}
	*out_root = cur;
	*ino = dir;
	return 0;
}
