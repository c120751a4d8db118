/* Printers for `btrfs inspect-internal dump-tree` and `dump-super`: the btrfs-progs 6.2
 * text format, byte for byte on clean filesystems. Every field is read through a
 * bounded view of the block: a field that lies outside it reads as zero, so damaged
 * items print garbage at worst, never read out of bounds. */
#include "config.h"
#if CFG_APPLET_INSPECT
#include "inspect_print.h"
#include "cli.h"
#include "csum.h"
#include "le.h"
#include "uuid.h"
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CSUM_ITEM_KEY 120  /* the old per-block csum item, still named by the reference */
#define NAME_MAX_PRINT 255 /* names longer than this are cut, as the reference does */
#define LEAF_DATA_OFF ((uint32_t)sizeof(struct btrfs_header))

/* ---- bounded reads ---------------------------------------------------------------- */

struct bview {
	const uint8_t *p;
	uint32_t len;
};

static int in_view(const struct bview *v, uint64_t off, uint64_t n)
{
	return off <= v->len && v->len - off >= n;
}
static uint64_t v64(const struct bview *v, uint64_t off)
{ return in_view(v, off, 8) ? get_le64(v->p + off) : 0; }
static uint32_t v32(const struct bview *v, uint64_t off)
{ return in_view(v, off, 4) ? get_le32(v->p + off) : 0; }
static uint16_t v16(const struct bview *v, uint64_t off)
{ return in_view(v, off, 2) ? get_le16(v->p + off) : 0; }
static uint8_t v8(const struct bview *v, uint64_t off)
{ return in_view(v, off, 1) ? v->p[off] : 0; }

/* n bytes at off; the part outside the view reads as zeros. */
static void vcopy(const struct bview *v, uint64_t off, void *dst, size_t n)
{
	size_t have = 0;

	if (off < v->len)
		have = v->len - off < n ? v->len - off : n;
	if (have)
		memcpy(dst, v->p + off, have);
	memset((uint8_t *)dst + have, 0, n - have);
}

/* Field of an on-disk structure that starts at base. */
#define F64(v, base, st, f) v64(v, (uint64_t)(base) + offsetof(st, f))
#define F32(v, base, st, f) v32(v, (uint64_t)(base) + offsetof(st, f))
#define F16(v, base, st, f) v16(v, (uint64_t)(base) + offsetof(st, f))
#define F8(v, base, st, f) v8(v, (uint64_t)(base) + offsetof(st, f))

static void print_uuid_at(const struct bview *v, uint64_t off)
{
	uint8_t u[UUID_SIZE];
	char s[UUID_STR_LEN];

	vcopy(v, off, u, sizeof(u));
	uuid_unparse(u, s);
	fputs(s, stdout);
}

static int64_t floordiv(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

static int is_leap(int64_t y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* Up to NAME_MAX_PRINT bytes of a name, stopping at a NUL like "%.*s". */
static void print_name_at(const struct bview *v, uint64_t off, uint32_t len)
{
	char buf[NAME_MAX_PRINT];

	if (len > sizeof(buf))
		len = sizeof(buf);
	vcopy(v, off, buf, len);
	printf("%.*s", (int)len, buf);
}

/* When the year does not fit an int, glibc's localtime_r has already set the time of
 * day and the truncated year before it fails; the reference prints that, with month and
 * day left over from its previous call. Reproduce it whatever the C library. */
static void overflowed_local_time(int64_t t, long offset, struct tm *tm)
{
#define LEAPS_THRU(y) (floordiv(y, 4) - floordiv(y, 100) + floordiv(y, 400))
	int64_t days = t / 86400, rem = t % 86400 + offset, y = 1970;

	while (rem < 0)
		rem += 86400, days--;
	while (rem >= 86400)
		rem -= 86400, days++;
	tm->tm_hour = (int)(rem / 3600);
	tm->tm_min = (int)(rem % 3600 / 60);
	tm->tm_sec = (int)(rem % 60);
	while (days < 0 || days >= (is_leap(y) ? 366 : 365)) {
		int64_t guess = y + days / 365 - (days % 365 < 0);

		days -= (guess - y) * 365 + LEAPS_THRU(guess - 1) - LEAPS_THRU(y - 1);
		y = guess;
	}
	tm->tm_year = (int)(uint32_t)(y - 1900);
#undef LEAPS_THRU
}

static void print_timespec_at(const struct bview *v, uint64_t off, const char *prefix)
{
	static struct tm last; /* what the previous conversion left behind */
	uint64_t sec = F64(v, off, struct btrfs_timespec, sec);
	uint32_t nsec = F32(v, off, struct btrfs_timespec, nsec);
	time_t t = (time_t)sec;
	struct tm tm = last;

	if (!localtime_r(&t, &tm)) {
		tm = last;
		overflowed_local_time((int64_t)sec, last.tm_gmtoff, &tm);
	}
	last = tm;
	/* the year as glibc's %Y writes it: no padding, no '+' */
	printf("%s%llu.%u (%lld-%02d-%02d %02d:%02d:%02d)\n", prefix, (unsigned long long)sec, nsec,
	       (long long)tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	       tm.tm_sec);
}

/* ---- names of numbers ------------------------------------------------------------- */

struct name_entry {
	uint64_t value;
	const char *name;
};

static const char *lookup(const struct name_entry *t, size_t n, uint64_t value)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == value)
			return t[i].name;
	return NULL;
}
#define LOOKUP(table, value) lookup(table, sizeof(table) / sizeof(table[0]), value)

static const struct name_entry key_type_names[] = {
	{ BTRFS_INODE_ITEM_KEY, "INODE_ITEM" }, { BTRFS_INODE_REF_KEY, "INODE_REF" },
	{ BTRFS_INODE_EXTREF_KEY, "INODE_EXTREF" }, { BTRFS_DIR_ITEM_KEY, "DIR_ITEM" },
	{ BTRFS_DIR_INDEX_KEY, "DIR_INDEX" }, { BTRFS_DIR_LOG_ITEM_KEY, "DIR_LOG_ITEM" },
	{ BTRFS_DIR_LOG_INDEX_KEY, "DIR_LOG_INDEX" }, { BTRFS_XATTR_ITEM_KEY, "XATTR_ITEM" },
	{ BTRFS_VERITY_DESC_ITEM_KEY, "VERITY_DESC_ITEM" },
	{ BTRFS_VERITY_MERKLE_ITEM_KEY, "VERITY_MERKLE_ITEM" },
	{ BTRFS_ORPHAN_ITEM_KEY, "ORPHAN_ITEM" }, { BTRFS_ROOT_ITEM_KEY, "ROOT_ITEM" },
	{ BTRFS_ROOT_REF_KEY, "ROOT_REF" }, { BTRFS_ROOT_BACKREF_KEY, "ROOT_BACKREF" },
	{ BTRFS_EXTENT_ITEM_KEY, "EXTENT_ITEM" }, { BTRFS_METADATA_ITEM_KEY, "METADATA_ITEM" },
	{ BTRFS_TREE_BLOCK_REF_KEY, "TREE_BLOCK_REF" },
	{ BTRFS_SHARED_BLOCK_REF_KEY, "SHARED_BLOCK_REF" },
	{ BTRFS_EXTENT_DATA_REF_KEY, "EXTENT_DATA_REF" },
	{ BTRFS_SHARED_DATA_REF_KEY, "SHARED_DATA_REF" },
	{ BTRFS_EXTENT_REF_V0_KEY, "EXTENT_REF_V0" }, { CSUM_ITEM_KEY, "CSUM_ITEM" },
	{ BTRFS_EXTENT_CSUM_KEY, "EXTENT_CSUM" }, { BTRFS_EXTENT_DATA_KEY, "EXTENT_DATA" },
	{ BTRFS_BLOCK_GROUP_ITEM_KEY, "BLOCK_GROUP_ITEM" },
	{ BTRFS_FREE_SPACE_INFO_KEY, "FREE_SPACE_INFO" },
	{ BTRFS_FREE_SPACE_EXTENT_KEY, "FREE_SPACE_EXTENT" },
	{ BTRFS_FREE_SPACE_BITMAP_KEY, "FREE_SPACE_BITMAP" },
	{ BTRFS_CHUNK_ITEM_KEY, "CHUNK_ITEM" }, { BTRFS_DEV_ITEM_KEY, "DEV_ITEM" },
	{ BTRFS_DEV_EXTENT_KEY, "DEV_EXTENT" }, { BTRFS_TEMPORARY_ITEM_KEY, "TEMPORARY_ITEM" },
	{ BTRFS_DEV_REPLACE_KEY, "DEV_REPLACE" }, { BTRFS_STRING_ITEM_KEY, "STRING_ITEM" },
	{ BTRFS_QGROUP_STATUS_KEY, "QGROUP_STATUS" },
	{ BTRFS_QGROUP_RELATION_KEY, "QGROUP_RELATION" },
	{ BTRFS_QGROUP_INFO_KEY, "QGROUP_INFO" }, { BTRFS_QGROUP_LIMIT_KEY, "QGROUP_LIMIT" },
	{ BTRFS_PERSISTENT_ITEM_KEY, "PERSISTENT_ITEM" },
	{ BTRFS_UUID_KEY_SUBVOL, "UUID_KEY_SUBVOL" },
	{ BTRFS_UUID_KEY_RECEIVED_SUBVOL, "UUID_KEY_RECEIVED_SUBVOL" },
};

/* Objectids with a name whatever the key type (1 and 256 depend on it, see below). */
static const struct name_entry objectid_names[] = {
	{ BTRFS_EXTENT_TREE_OBJECTID, "EXTENT_TREE" }, { BTRFS_CHUNK_TREE_OBJECTID, "CHUNK_TREE" },
	{ BTRFS_DEV_TREE_OBJECTID, "DEV_TREE" }, { BTRFS_FS_TREE_OBJECTID, "FS_TREE" },
	{ BTRFS_ROOT_TREE_DIR_OBJECTID, "ROOT_TREE_DIR" }, { BTRFS_CSUM_TREE_OBJECTID, "CSUM_TREE" },
	{ BTRFS_BALANCE_OBJECTID, "BALANCE" }, { BTRFS_ORPHAN_OBJECTID, "ORPHAN" },
	{ BTRFS_TREE_LOG_OBJECTID, "TREE_LOG" }, { BTRFS_TREE_LOG_FIXUP_OBJECTID, "LOG_FIXUP" },
	{ BTRFS_TREE_RELOC_OBJECTID, "TREE_RELOC" },
	{ BTRFS_DATA_RELOC_TREE_OBJECTID, "DATA_RELOC_TREE" },
	{ BTRFS_EXTENT_CSUM_OBJECTID, "EXTENT_CSUM" }, { BTRFS_FREE_SPACE_OBJECTID, "FREE_SPACE" },
	{ BTRFS_FREE_INO_OBJECTID, "FREE_INO" }, { BTRFS_QUOTA_TREE_OBJECTID, "QUOTA_TREE" },
	{ BTRFS_UUID_TREE_OBJECTID, "UUID_TREE" },
	{ BTRFS_FREE_SPACE_TREE_OBJECTID, "FREE_SPACE_TREE" },
	{ BTRFS_MULTIPLE_OBJECTIDS, "MULTIPLE" },
	{ BTRFS_BLOCK_GROUP_TREE_OBJECTID, "BLOCK_GROUP_TREE" }, { (uint64_t)-1, "-1" },
};

static void print_qgroupid(uint64_t id)
{
	printf("%u/%llu", (unsigned)btrfs_qgroup_level(id),
	       (unsigned long long)(id & ((1ULL << BTRFS_QGROUP_LEVEL_SHIFT) - 1)));
}

void print_objectid(uint64_t objectid, uint8_t type)
{
	const char *name;

	switch (type) {
	case BTRFS_PERSISTENT_ITEM_KEY:
		if (objectid == BTRFS_DEV_STATS_OBJECTID) {
			fputs("DEV_STATS", stdout);
			return;
		}
		/* fall through */
	case BTRFS_DEV_EXTENT_KEY: /* a device id */
		printf("%llu", (unsigned long long)objectid);
		return;
	case BTRFS_QGROUP_RELATION_KEY:
		print_qgroupid(objectid);
		return;
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		printf("0x%016llx", (unsigned long long)objectid);
		return;
	}
	if (objectid == BTRFS_ROOT_TREE_OBJECTID) /* == BTRFS_DEV_ITEMS_OBJECTID */
		name = type == BTRFS_DEV_ITEM_KEY ? "DEV_ITEMS" : "ROOT_TREE";
	else if (objectid == BTRFS_FIRST_CHUNK_TREE_OBJECTID && type == BTRFS_CHUNK_ITEM_KEY)
		name = "FIRST_CHUNK_TREE";
	else
		name = LOOKUP(objectid_names, objectid);
	if (name)
		fputs(name, stdout);
	else
		printf("%llu", (unsigned long long)objectid);
}

static void print_key_type(uint64_t objectid, uint8_t type)
{
	const char *name = LOOKUP(key_type_names, type);

	if (type == 0 && objectid == BTRFS_FREE_SPACE_OBJECTID)
		fputs("UNTYPED", stdout);
	else if (name)
		fputs(name, stdout);
	else
		printf("UNKNOWN.%d", type);
}

void print_key(uint64_t objectid, uint8_t type, uint64_t offset)
{
	fputs("key (", stdout);
	print_objectid(objectid, type);
	putchar(' ');
	print_key_type(objectid, type);
	putchar(' ');
	switch (type) {
	case BTRFS_QGROUP_RELATION_KEY:
	case BTRFS_QGROUP_INFO_KEY:
	case BTRFS_QGROUP_LIMIT_KEY:
		print_qgroupid(offset);
		break;
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		printf("0x%016llx", (unsigned long long)offset);
		break;
	case BTRFS_ROOT_ITEM_KEY:
		/* a reloc tree's ROOT_ITEM offset is the id of the tree it relocates */
		if (objectid == BTRFS_TREE_RELOC_OBJECTID)
			print_objectid(offset, type);
		else
			printf("%llu", (unsigned long long)offset);
		break;
	default:
		if (offset == (uint64_t)-1)
			fputs("-1", stdout);
		else
			printf("%llu", (unsigned long long)offset);
	}
	putchar(')');
}

static void print_key_at(const struct bview *v, uint64_t off)
{
	print_key(F64(v, off, struct btrfs_disk_key, objectid),
		  F8(v, off, struct btrfs_disk_key, type),
		  F64(v, off, struct btrfs_disk_key, offset));
}

void print_disk_key(const struct btrfs_disk_key *key)
{
	struct bview v = { (const uint8_t *)key, sizeof(*key) };

	print_key_at(&v, 0);
}

/* ---- flag words --------------------------------------------------------------------- */

struct flag_name {
	uint64_t bit;
	const char *name;
};

/* Names of the set bits joined by '|', or none_name when no known bit is set. */
static void flags_join(char *out, size_t outlen, uint64_t flags, const struct flag_name *t,
		       size_t n, const char *none_name)
{
	size_t used = 0;

	out[0] = 0;
	for (size_t i = 0; i < n; i++)
		if (flags & t[i].bit)
			used += snprintf(out + used, outlen - used, "%s%s", used ? "|" : "",
					 t[i].name);
	if (!used && none_name)
		snprintf(out, outlen, "%s", none_name);
}
#define FLAGS_JOIN(out, flags, table, none) \
	flags_join(out, sizeof(out), flags, table, sizeof(table) / sizeof(table[0]), none)

static const struct flag_name inode_flag_names[] = {
	{ 1 << 0, "NODATASUM" }, { 1 << 1, "NODATACOW" }, { 1 << 2, "READONLY" },
	{ 1 << 3, "NOCOMPRESS" }, { 1 << 4, "PREALLOC" }, { 1 << 5, "SYNC" },
	{ 1 << 6, "IMMUTABLE" }, { 1 << 7, "APPEND" }, { 1 << 8, "NODUMP" },
	{ 1 << 9, "NOATIME" }, { 1 << 10, "DIRSYNC" }, { 1 << 11, "COMPRESS" },
};

static const struct flag_name header_flag_names[] = {
	{ BTRFS_HEADER_FLAG_WRITTEN, "WRITTEN" }, { BTRFS_HEADER_FLAG_RELOC, "RELOC" },
};

/* Block group and chunk type: DATA, METADATA, SYSTEM, then the profile. The reference
 * puts '|' between the type names only after DATA, and names the profile-less case
 * "single". */
static void bg_flags_str(char *out, size_t outlen, uint64_t flags)
{
	static const struct name_entry profiles[] = { /* first match wins */
		{ BTRFS_BLOCK_GROUP_RAID10, "RAID10" }, { BTRFS_BLOCK_GROUP_RAID1, "RAID1" },
		{ BTRFS_BLOCK_GROUP_RAID1C3, "RAID1C3" }, { BTRFS_BLOCK_GROUP_RAID1C4, "RAID1C4" },
		{ BTRFS_BLOCK_GROUP_DUP, "DUP" }, { BTRFS_BLOCK_GROUP_RAID0, "RAID0" },
		{ BTRFS_BLOCK_GROUP_RAID5, "RAID5" }, { BTRFS_BLOCK_GROUP_RAID6, "RAID6" },
	};
	const char *profile = "single";
	int data = !!(flags & BTRFS_BLOCK_GROUP_DATA);

	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (flags & profiles[i].value) {
			profile = profiles[i].name;
			break;
		}
	snprintf(out, outlen, "%s%s%s%s%s|%s", data ? "DATA" : "",
		 data && (flags & BTRFS_BLOCK_GROUP_METADATA) ? "|" : "",
		 flags & BTRFS_BLOCK_GROUP_METADATA ? "METADATA" : "",
		 data && (flags & BTRFS_BLOCK_GROUP_SYSTEM) ? "|" : "",
		 flags & BTRFS_BLOCK_GROUP_SYSTEM ? "SYSTEM" : "", profile);
}

/* ---- item printers ------------------------------------------------------------------ */

struct item {
	const struct print_opts *po;
	struct bview v;         /* the whole block */
	uint64_t bytenr;        /* of the block, for messages */
	uint32_t off;           /* item data, from the start of the block */
	uint32_t size;
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
};

static void print_inode_item(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;
	uint64_t flags = F64(v, o, struct btrfs_inode_item, flags);
	char fl[160];

	FLAGS_JOIN(fl, flags, inode_flag_names, "none");
	printf("\t\tgeneration %llu transid %llu size %llu nbytes %llu\n"
	       "\t\tblock group %llu mode %o links %u uid %u gid %u rdev %llu\n"
	       "\t\tsequence %llu flags 0x%llx(%s)\n",
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, generation),
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, transid),
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, size),
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, nbytes),
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, block_group),
	       F32(v, o, struct btrfs_inode_item, mode),
	       F32(v, o, struct btrfs_inode_item, nlink),
	       F32(v, o, struct btrfs_inode_item, uid),
	       F32(v, o, struct btrfs_inode_item, gid),
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, rdev),
	       (unsigned long long)F64(v, o, struct btrfs_inode_item, sequence),
	       (unsigned long long)flags, fl);
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, atime), "\t\tatime ");
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, ctime), "\t\tctime ");
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, mtime), "\t\tmtime ");
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, otime), "\t\totime ");
}

static void print_item_name(const struct item *it, uint64_t off, uint32_t len)
{
	if (it->po->hide_names)
		fputs("HIDDEN", stdout);
	else
		print_name_at(&it->v, off, len);
}

/* INODE_REF and INODE_EXTREF items pack several (header, name) entries. */
static void print_inode_refs(const struct item *it)
{
	const struct bview *v = &it->v;
	int ext = it->type == BTRFS_INODE_EXTREF_KEY;
	uint32_t hdr = ext ? sizeof(struct btrfs_inode_extref) : sizeof(struct btrfs_inode_ref);
	uint64_t cur = 0;

	while (cur < it->size) {
		uint64_t o = it->off + cur;
		uint32_t name_len;

		if (ext) {
			name_len = F16(v, o, struct btrfs_inode_extref, name_len);
			printf("\t\tindex %llu parent %llu namelen %u ",
			       (unsigned long long)F64(v, o, struct btrfs_inode_extref, index),
			       (unsigned long long)F64(v, o, struct btrfs_inode_extref, parent_objectid),
			       name_len);
		} else {
			name_len = F16(v, o, struct btrfs_inode_ref, name_len);
			printf("\t\tindex %llu namelen %u ",
			       (unsigned long long)F64(v, o, struct btrfs_inode_ref, index), name_len);
		}
		fputs("name: ", stdout);
		print_item_name(it, o + hdr, name_len);
		putchar('\n');
		cur += hdr + name_len;
	}
}

static const char *dir_type_name(uint8_t type, char *buf, size_t len)
{
	static const char *const names[] = {
		[BTRFS_FT_REG_FILE] = "FILE", [BTRFS_FT_DIR] = "DIR",
		[BTRFS_FT_CHRDEV] = "CHRDEV", [BTRFS_FT_BLKDEV] = "BLKDEV",
		[BTRFS_FT_FIFO] = "FIFO", [BTRFS_FT_SOCK] = "SOCK",
		[BTRFS_FT_SYMLINK] = "SYMLINK", [BTRFS_FT_XATTR] = "XATTR",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	snprintf(buf, len, "DIR_ITEM.%u", type);
	return buf;
}

/* DIR_ITEM, DIR_INDEX and XATTR_ITEM: entries of (dir_item, name, data). */
static void print_dir_items(const struct item *it)
{
	const struct bview *v = &it->v;
	uint64_t cur = 0;

	while (cur < it->size) {
		uint64_t o = it->off + cur;
		uint32_t name_len = F16(v, o, struct btrfs_dir_item, name_len);
		uint32_t data_len = F16(v, o, struct btrfs_dir_item, data_len);
		uint64_t name_off = o + sizeof(struct btrfs_dir_item);
		char tbuf[24];

		fputs("\t\tlocation ", stdout);
		print_key_at(v, o + offsetof(struct btrfs_dir_item, location));
		printf(" type %s\n", dir_type_name(F8(v, o, struct btrfs_dir_item, type), tbuf,
						    sizeof(tbuf)));
		printf("\t\ttransid %llu data_len %u name_len %u\n",
		       (unsigned long long)F64(v, o, struct btrfs_dir_item, transid), data_len,
		       name_len);
		fputs("\t\tname: ", stdout);
		print_item_name(it, name_off, name_len);
		putchar('\n');
		if (data_len) {
			fputs("\t\tdata ", stdout);
			print_item_name(it, name_off + name_len, data_len);
			putchar('\n');
		}
		cur += sizeof(struct btrfs_dir_item) + name_len + data_len;
	}
}

static void print_dir_log_item(const struct item *it)
{
	printf("\t\tdir log end %llu\n",
	       (unsigned long long)F64(&it->v, it->off, struct btrfs_dir_log_item, end));
}

static void print_root_item(const struct item *it)
{
	struct btrfs_root_item ri;
	struct bview v = { (const uint8_t *)&ri, sizeof(ri) };
	uint64_t flags;

	/* A short (old format) root item: the missing tail reads as zeros. */
	memset(&ri, 0, sizeof(ri));
	vcopy(&it->v, it->off, &ri, it->size < sizeof(ri) ? it->size : sizeof(ri));
	flags = get_le64(&ri.flags);
	printf("\t\tgeneration %llu root_dirid %llu bytenr %llu byte_limit %llu bytes_used %llu\n",
	       (unsigned long long)get_le64(&ri.generation),
	       (unsigned long long)get_le64(&ri.root_dirid),
	       (unsigned long long)get_le64(&ri.bytenr),
	       (unsigned long long)get_le64(&ri.byte_limit),
	       (unsigned long long)get_le64(&ri.bytes_used));
	printf("\t\tlast_snapshot %llu flags 0x%llx(%s) refs %u\n",
	       (unsigned long long)get_le64(&ri.last_snapshot), (unsigned long long)flags,
	       flags & BTRFS_ROOT_SUBVOL_RDONLY ? "RDONLY" : "none", get_le32(&ri.refs));
	fputs("\t\tdrop_progress ", stdout);
	print_disk_key(&ri.drop_progress);
	printf(" drop_level %u\n", ri.drop_level);
	printf("\t\tlevel %u generation_v2 %llu\n", ri.level,
	       (unsigned long long)get_le64(&ri.generation_v2));
	/* The fields after generation_v2 are valid only when it matches generation. */
	if (get_le64(&ri.generation) != get_le64(&ri.generation_v2))
		return;
	fputs("\t\tuuid ", stdout);
	print_uuid_at(&v, offsetof(struct btrfs_root_item, uuid));
	fputs("\n\t\tparent_uuid ", stdout);
	print_uuid_at(&v, offsetof(struct btrfs_root_item, parent_uuid));
	fputs("\n\t\treceived_uuid ", stdout);
	print_uuid_at(&v, offsetof(struct btrfs_root_item, received_uuid));
	printf("\n\t\tctransid %llu otransid %llu stransid %llu rtransid %llu\n",
	       (unsigned long long)get_le64(&ri.ctransid),
	       (unsigned long long)get_le64(&ri.otransid),
	       (unsigned long long)get_le64(&ri.stransid),
	       (unsigned long long)get_le64(&ri.rtransid));
	print_timespec_at(&v, offsetof(struct btrfs_root_item, ctime), "\t\tctime ");
	print_timespec_at(&v, offsetof(struct btrfs_root_item, otime), "\t\totime ");
	print_timespec_at(&v, offsetof(struct btrfs_root_item, stime), "\t\tstime ");
	print_timespec_at(&v, offsetof(struct btrfs_root_item, rtime), "\t\trtime ");
}

/* ROOT_REF and ROOT_BACKREF (the reference shows these names even with --hide-names). */
static void print_root_ref(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	printf("\t\troot %s key dirid %llu sequence %llu name ",
	       it->type == BTRFS_ROOT_REF_KEY ? "ref" : "backref",
	       (unsigned long long)F64(v, o, struct btrfs_root_ref, dirid),
	       (unsigned long long)F64(v, o, struct btrfs_root_ref, sequence));
	print_name_at(v, o + sizeof(struct btrfs_root_ref),
		      F16(v, o, struct btrfs_root_ref, name_len));
	putchar('\n');
}

/* EXTENT flags as the reference spells them: FULL_BACKREF always gets a '|' first. */
static void extent_flags_str(char *out, size_t len, uint64_t flags)
{
	int data = !!(flags & BTRFS_EXTENT_FLAG_DATA);

	snprintf(out, len, "%s%s%s%s", data ? "DATA" : "",
		 data && (flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) ? "|" : "",
		 flags & BTRFS_EXTENT_FLAG_TREE_BLOCK ? "TREE_BLOCK" : "",
		 flags & BTRFS_BLOCK_FLAG_FULL_BACKREF ? "|FULL_BACKREF" : "");
}

static void print_extent_data_ref_at(const struct bview *v, uint64_t o)
{
	fputs("\t\textent data backref root ", stdout);
	print_objectid(F64(v, o, struct btrfs_extent_data_ref, root), 0);
	printf(" objectid %llu offset %llu count %u\n",
	       (unsigned long long)F64(v, o, struct btrfs_extent_data_ref, objectid),
	       (unsigned long long)F64(v, o, struct btrfs_extent_data_ref, offset),
	       F32(v, o, struct btrfs_extent_data_ref, count));
}

/* One inline back reference at o; returns its size, or 0 for an unknown type (which
 * ends the list, as in the reference). */
static uint32_t print_inline_ref(const struct bview *v, uint64_t o)
{
	uint8_t type = F8(v, o, struct btrfs_extent_inline_ref, type);
	uint64_t offset = F64(v, o, struct btrfs_extent_inline_ref, offset);
	uint64_t after = o + sizeof(struct btrfs_extent_inline_ref);

	switch (type) {
	case BTRFS_TREE_BLOCK_REF_KEY:
		fputs("\t\ttree block backref root ", stdout);
		print_objectid(offset, 0);
		putchar('\n');
		return sizeof(struct btrfs_extent_inline_ref);
	case BTRFS_SHARED_BLOCK_REF_KEY:
		printf("\t\tshared block backref parent %llu\n", (unsigned long long)offset);
		return sizeof(struct btrfs_extent_inline_ref);
	case BTRFS_EXTENT_DATA_REF_KEY: /* the data ref takes the place of offset */
		print_extent_data_ref_at(v, o + offsetof(struct btrfs_extent_inline_ref, offset));
		return offsetof(struct btrfs_extent_inline_ref, offset) +
		       sizeof(struct btrfs_extent_data_ref);
	case BTRFS_SHARED_DATA_REF_KEY:
		printf("\t\tshared data backref parent %llu count %u\n", (unsigned long long)offset,
		       F32(v, after, struct btrfs_shared_data_ref, count));
		return sizeof(struct btrfs_extent_inline_ref) + sizeof(struct btrfs_shared_data_ref);
	}
	return 0;
}

/* EXTENT_ITEM and METADATA_ITEM (skinny: the key offset is the level). */
static void print_extent_item(const struct item *it)
{
	const struct bview *v = &it->v;
	uint64_t o = it->off, end = (uint64_t)it->off + it->size;
	uint64_t flags;
	char fl[40];

	if (it->size < sizeof(struct btrfs_extent_item))
		return; /* a v0 extent item: nothing the reference prints */
	flags = F64(v, o, struct btrfs_extent_item, flags);
	extent_flags_str(fl, sizeof(fl), flags);
	printf("\t\trefs %llu gen %llu flags %s\n",
	       (unsigned long long)F64(v, o, struct btrfs_extent_item, refs),
	       (unsigned long long)F64(v, o, struct btrfs_extent_item, generation), fl);
	o += sizeof(struct btrfs_extent_item);
	if (it->type == BTRFS_METADATA_ITEM_KEY) {
		printf("\t\ttree block skinny level %d\n", (int)it->offset);
	} else if (flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) {
		fputs("\t\ttree block ", stdout);
		print_key_at(v, o + offsetof(struct btrfs_tree_block_info, key));
		printf(" level %d\n", F8(v, o, struct btrfs_tree_block_info, level));
		o += sizeof(struct btrfs_tree_block_info);
	}
	while (o < end) {
		uint32_t len = print_inline_ref(v, o);

		if (!len)
			return;
		o += len;
	}
}

static void print_extent_data_ref(const struct item *it)
{
	print_extent_data_ref_at(&it->v, it->off);
}

static void print_shared_data_ref(const struct item *it)
{
	printf("\t\tshared data backref count %u\n",
	       F32(&it->v, it->off, struct btrfs_shared_data_ref, count));
}

/* Data checksums: the range they cover, and with --csum-items the values, as many per
 * line as fill 32 bytes of digest halves (4 crc32c, 2 xxhash, 1 sha256/blake2). */
static void print_extent_csum(const struct item *it)
{
	const struct print_opts *po = it->po;
	unsigned cs = po->csum_size;
	uint32_t count, per_line, i;
	uint64_t start = it->offset;
	uint32_t len;

	if (!cs || !po->sectorsize) {
		printf("\t\trange start %llu\n", (unsigned long long)start);
		return;
	}
	count = it->size / cs;
	len = count * po->sectorsize;
	printf("\t\trange start %llu end %llu length %u\n", (unsigned long long)start,
	       (unsigned long long)(start + len), len);
	if (!po->csum_items)
		return;
	per_line = BTRFS_CSUM_SIZE / cs / 2;
	if (!per_line)
		per_line = 1;
	for (i = 0; i < count; i++) {
		uint8_t sum[CSUM_MAX_SIZE];

		fputs(i == 0 ? "\t\t" : i % per_line ? " " : "\n\t\t", stdout);
		printf("[%llu] 0x", (unsigned long long)(start + (uint64_t)i * po->sectorsize));
		vcopy(&it->v, it->off + (uint64_t)i * cs, sum, cs);
		for (unsigned b = 0; b < cs; b++)
			printf("%02x", sum[b]);
	}
	if (count)
		putchar('\n');
}

static const char *compress_name(uint8_t c, char *buf, size_t len)
{
	static const char *const names[] = { "none", "zlib", "lzo", "zstd" };

	if (c < sizeof(names) / sizeof(names[0]))
		return names[c];
	snprintf(buf, len, "UNKNOWN.%d", c);
	return buf;
}

static void print_file_extent(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;
	uint8_t type = F8(v, o, struct btrfs_file_extent_item, type);
	uint8_t comp = F8(v, o, struct btrfs_file_extent_item, compression);
	static const char *const type_names[] = { "inline", "regular", "prealloc" };
	char cbuf[24];
	const char *cname = compress_name(comp, cbuf, sizeof(cbuf));

	printf("\t\tgeneration %llu type %u (%s)\n",
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, generation), type,
	       type < 3 ? type_names[type] : "unknown");
	if (type == BTRFS_FILE_EXTENT_INLINE) {
		/* inline data starts where disk_bytenr would be */
		printf("\t\tinline extent data size %u ram_bytes %llu compression %u (%s)\n",
		       it->size - (uint32_t)offsetof(struct btrfs_file_extent_item, disk_bytenr),
		       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, ram_bytes),
		       comp, cname);
		return;
	}
	printf("\t\t%s data disk byte %llu nr %llu\n",
	       type == BTRFS_FILE_EXTENT_PREALLOC ? "prealloc" : "extent",
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, disk_bytenr),
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, disk_num_bytes));
	if (type == BTRFS_FILE_EXTENT_PREALLOC) {
		printf("\t\tprealloc data offset %llu nr %llu\n",
		       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, offset),
		       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, num_bytes));
		return;
	}
	printf("\t\textent data offset %llu nr %llu ram %llu\n",
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, offset),
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, num_bytes),
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, ram_bytes));
	printf("\t\textent compression %u (%s)\n", comp, cname);
}

static void print_block_group(const struct item *it)
{
	char fl[80];

	bg_flags_str(fl, sizeof(fl), F64(&it->v, it->off, struct btrfs_block_group_item, flags));
	printf("\t\tblock group used %llu chunk_objectid %llu flags %s\n",
	       (unsigned long long)F64(&it->v, it->off, struct btrfs_block_group_item, used),
	       (unsigned long long)F64(&it->v, it->off, struct btrfs_block_group_item,
				       chunk_objectid), fl);
}

static void print_free_space_info(const struct item *it)
{
	printf("\t\tfree space info extent count %u flags %u\n",
	       F32(&it->v, it->off, struct btrfs_free_space_info, extent_count),
	       F32(&it->v, it->off, struct btrfs_free_space_info, flags));
}

/* The free space cache header of (FREE_SPACE, 0, block group start). */
static void print_free_space_header(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	fputs("\t\tlocation ", stdout);
	print_key_at(v, o + offsetof(struct btrfs_free_space_header, location));
	printf("\n\t\tcache generation %llu entries %llu bitmaps %llu\n",
	       (unsigned long long)F64(v, o, struct btrfs_free_space_header, generation),
	       (unsigned long long)F64(v, o, struct btrfs_free_space_header, num_entries),
	       (unsigned long long)F64(v, o, struct btrfs_free_space_header, num_bitmaps));
}

/* A chunk item at o in view v (a leaf, or the superblock's sys_chunk_array). */
static void print_chunk_at(const struct bview *v, uint64_t o)
{
	uint16_t n = F16(v, o, struct btrfs_chunk, num_stripes);
	uint64_t stripes = o + offsetof(struct btrfs_chunk, stripe);
	char fl[80];

	if (n < 1) {
		printf("invalid num_stripes: %u\n", n);
		return;
	}
	if (!in_view(v, o, offsetof(struct btrfs_chunk, stripe) +
			   (uint64_t)n * sizeof(struct btrfs_stripe))) {
		fputs("\t\tchunk item invalid\n", stdout);
		return;
	}
	bg_flags_str(fl, sizeof(fl), F64(v, o, struct btrfs_chunk, type));
	printf("\t\tlength %llu owner %llu stripe_len %llu type %s\n",
	       (unsigned long long)F64(v, o, struct btrfs_chunk, length),
	       (unsigned long long)F64(v, o, struct btrfs_chunk, owner),
	       (unsigned long long)F64(v, o, struct btrfs_chunk, stripe_len), fl);
	printf("\t\tio_align %u io_width %u sector_size %u\n",
	       F32(v, o, struct btrfs_chunk, io_align), F32(v, o, struct btrfs_chunk, io_width),
	       F32(v, o, struct btrfs_chunk, sector_size));
	printf("\t\tnum_stripes %u sub_stripes %u\n", n, F16(v, o, struct btrfs_chunk, sub_stripes));
	for (unsigned i = 0; i < n; i++) {
		uint64_t s = stripes + (uint64_t)i * sizeof(struct btrfs_stripe);

		printf("\t\t\tstripe %u devid %llu offset %llu\n\t\t\tdev_uuid ", i,
		       (unsigned long long)F64(v, s, struct btrfs_stripe, devid),
		       (unsigned long long)F64(v, s, struct btrfs_stripe, offset));
		print_uuid_at(v, s + offsetof(struct btrfs_stripe, dev_uuid));
		putchar('\n');
	}
}

static void print_chunk(const struct item *it)
{
	print_chunk_at(&it->v, it->off);
}

static void print_dev_item(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	printf("\t\tdevid %llu total_bytes %llu bytes_used %llu\n"
	       "\t\tio_align %u io_width %u sector_size %u type %llu\n"
	       "\t\tgeneration %llu start_offset %llu dev_group %u\n"
	       "\t\tseek_speed %u bandwidth %u\n\t\tuuid ",
	       (unsigned long long)F64(v, o, struct btrfs_dev_item, devid),
	       (unsigned long long)F64(v, o, struct btrfs_dev_item, total_bytes),
	       (unsigned long long)F64(v, o, struct btrfs_dev_item, bytes_used),
	       F32(v, o, struct btrfs_dev_item, io_align), F32(v, o, struct btrfs_dev_item, io_width),
	       F32(v, o, struct btrfs_dev_item, sector_size),
	       (unsigned long long)F64(v, o, struct btrfs_dev_item, type),
	       (unsigned long long)F64(v, o, struct btrfs_dev_item, generation),
	       (unsigned long long)F64(v, o, struct btrfs_dev_item, start_offset),
	       F32(v, o, struct btrfs_dev_item, dev_group),
	       F8(v, o, struct btrfs_dev_item, seek_speed),
	       F8(v, o, struct btrfs_dev_item, bandwidth));
	print_uuid_at(v, o + offsetof(struct btrfs_dev_item, uuid));
	fputs("\n\t\tfsid ", stdout);
	print_uuid_at(v, o + offsetof(struct btrfs_dev_item, fsid));
	putchar('\n');
}

static void print_dev_extent(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	printf("\t\tdev extent chunk_tree %llu\n"
	       "\t\tchunk_objectid %llu chunk_offset %llu length %llu\n\t\tchunk_tree_uuid ",
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, chunk_tree),
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, chunk_objectid),
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, chunk_offset),
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, length));
	print_uuid_at(v, o + offsetof(struct btrfs_dev_extent, chunk_tree_uuid));
	putchar('\n');
}

static void print_qgroup_status(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;
	uint64_t flags = F64(v, o, struct btrfs_qgroup_status_item, flags);

	printf("\t\tversion %llu generation %llu flags %s%s%s scan %llu\n",
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_status_item, version),
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_status_item, generation),
	       flags & BTRFS_QGROUP_STATUS_FLAG_ON ? "ON" : "OFF",
	       flags & BTRFS_QGROUP_STATUS_FLAG_RESCAN ? "|SCANNING" : "",
	       flags & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT ? "|INCONSISTENT" : "",
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_status_item, rescan));
}

static void print_qgroup_info(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	printf("\t\tgeneration %llu\n\t\treferenced %llu referenced_compressed %llu\n"
	       "\t\texclusive %llu exclusive_compressed %llu\n",
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_info_item, generation),
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_info_item, rfer),
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_info_item, rfer_cmpr),
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_info_item, excl),
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_info_item, excl_cmpr));
}

static void print_qgroup_limit(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	printf("\t\tflags %llx\n\t\tmax_referenced %lld max_exclusive %lld\n"
	       "\t\trsv_referenced %lld rsv_exclusive %lld\n",
	       (unsigned long long)F64(v, o, struct btrfs_qgroup_limit_item, flags),
	       (long long)F64(v, o, struct btrfs_qgroup_limit_item, max_rfer),
	       (long long)F64(v, o, struct btrfs_qgroup_limit_item, max_excl),
	       (long long)F64(v, o, struct btrfs_qgroup_limit_item, rsv_rfer),
	       (long long)F64(v, o, struct btrfs_qgroup_limit_item, rsv_excl));
}

/* UUID tree items: a list of 64-bit subvolume ids. */
static void print_uuid_item(const struct item *it)
{
	if (it->size % sizeof(uint64_t)) {
		printf("btrfs: uuid item with illegal size %lu!\n", (unsigned long)it->size);
		return;
	}
	for (uint32_t i = 0; i < it->size; i += sizeof(uint64_t))
		printf("\t\tsubvol_id %llu\n", (unsigned long long)v64(&it->v, it->off + i));
}

static void print_string_item(const struct item *it)
{
	/* the item lies inside the block (checked by the leaf walk); "%.*s" stops at NUL */
	const char *s = (const char *)it->v.p + it->off;
	const char *nul = memchr(s, 0, it->size);

	fputs("\t\titem data ", stdout);
	fwrite(s, 1, nul ? (size_t)(nul - s) : it->size, stdout);
	putchar('\n');
}

static void print_dev_stats(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t known = BTRFS_DEV_STAT_VALUES_MAX * sizeof(uint64_t);

	printf("\t\tdevice stats\n\t\twrite_errs %llu read_errs %llu flush_errs %llu "
	       "corruption_errs %llu generation %llu\n",
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_WRITE_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_READ_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_FLUSH_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_CORRUPTION_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_GENERATION_ERRS));
	if (known >= it->size)
		return;
	/* the reference ends this line without a newline */
	printf("\t\tunknown stats item bytes %u", it->size - known);
	for (uint32_t i = BTRFS_DEV_STAT_VALUES_MAX; i * 8ULL < it->size; i++)
		printf("\t\tunknown item %u offset %zu value %llu\n", i, (size_t)i * 8,
		       (unsigned long long)v64(v, it->off + i * 8ULL));
}

static void print_persistent_item(const struct item *it)
{
	fputs("\t\tpersistent item objectid ", stdout);
	print_objectid(it->objectid, BTRFS_PERSISTENT_ITEM_KEY);
	printf(" offset %llu\n", (unsigned long long)it->offset);
	if (it->objectid == BTRFS_DEV_STATS_OBJECTID)
		print_dev_stats(it);
	else
		printf("\t\tunknown persistent item objectid %llu\n",
		       (unsigned long long)it->objectid);
}

static void print_balance_args(const struct bview *v, uint64_t o)
{
#define BA(f) F64(v, o, struct btrfs_disk_balance_args, f)
#define BA32(f) F32(v, o, struct btrfs_disk_balance_args, f)
	printf("\t\tprofiles %llu devid %llu target %llu flags %llu\n",
	       (unsigned long long)BA(profiles), (unsigned long long)BA(devid),
	       (unsigned long long)BA(target), (unsigned long long)BA(flags));
	printf("\t\tusage_min %u usage_max %u pstart %llu pend %llu\n", BA32(usage_min),
	       BA32(usage_max), (unsigned long long)BA(pstart), (unsigned long long)BA(pend));
	printf("\t\tvstart %llu vend %llu limit_min %u limit_max %u\n",
	       (unsigned long long)BA(vstart), (unsigned long long)BA(vend), BA32(limit_min),
	       BA32(limit_max));
	printf("\t\tstripes_min %u stripes_max %u\n", BA32(stripes_min), BA32(stripes_max));
#undef BA
#undef BA32
}

#define CSUM_TREE_TMP_OBJECTID 13ULL /* temporary item of a csum tree conversion */

static void print_temporary_item(const struct item *it)
{
	static const struct { const char *name; size_t off; } parts[] = {
		{ "DATA", offsetof(struct btrfs_balance_item, data) },
		{ "METADATA", offsetof(struct btrfs_balance_item, meta) },
		{ "SYSTEM", offsetof(struct btrfs_balance_item, sys) },
	};

	fputs("\t\ttemporary item objectid ", stdout);
	print_objectid(it->objectid, BTRFS_TEMPORARY_ITEM_KEY);
	printf(" offset %llu\n", (unsigned long long)it->offset);
	if (it->objectid == BTRFS_BALANCE_OBJECTID) {
		printf("\t\tbalance status flags %llu\n",
		       (unsigned long long)F64(&it->v, it->off, struct btrfs_balance_item, flags));
		for (size_t i = 0; i < 3; i++) {
			printf("\t\t%s\n", parts[i].name);
			print_balance_args(&it->v, it->off + parts[i].off);
		}
	} else if (it->objectid == CSUM_TREE_TMP_OBJECTID) {
		printf("\t\tcsum tree tmp root %llu\n", (unsigned long long)it->offset);
	} else {
		printf("\t\tunknown temporary item objectid %llu\n",
		       (unsigned long long)it->objectid);
	}
}

static void print_fixed_text(const struct item *it)
{
	static const struct name_entry texts[] = {
		{ BTRFS_ORPHAN_ITEM_KEY, "orphan item" },
		{ BTRFS_TREE_BLOCK_REF_KEY, "tree block backref" },
		{ BTRFS_SHARED_BLOCK_REF_KEY, "shared block backref" },
		{ BTRFS_EXTENT_REF_V0_KEY, "extent ref v0 (deprecated)" },
		{ CSUM_ITEM_KEY, "csum item" },
		{ BTRFS_FREE_SPACE_EXTENT_KEY, "free space extent" },
		{ BTRFS_FREE_SPACE_BITMAP_KEY, "free space bitmap" },
	};

	printf("\t\t%s\n", LOOKUP(texts, it->type));
}

typedef void item_printer(const struct item *it);

/* Key types whose items have a body the reference prints; others show the key only. */
static item_printer *const item_printers[256] = {
	[BTRFS_INODE_ITEM_KEY] = print_inode_item,
	[BTRFS_INODE_REF_KEY] = print_inode_refs,
	[BTRFS_INODE_EXTREF_KEY] = print_inode_refs,
	[BTRFS_DIR_ITEM_KEY] = print_dir_items,
	[BTRFS_DIR_INDEX_KEY] = print_dir_items,
	[BTRFS_XATTR_ITEM_KEY] = print_dir_items,
	[BTRFS_DIR_LOG_INDEX_KEY] = print_dir_log_item,
	[BTRFS_DIR_LOG_ITEM_KEY] = print_dir_log_item,
	[BTRFS_ORPHAN_ITEM_KEY] = print_fixed_text,
	[BTRFS_ROOT_ITEM_KEY] = print_root_item,
	[BTRFS_ROOT_REF_KEY] = print_root_ref,
	[BTRFS_ROOT_BACKREF_KEY] = print_root_ref,
	[BTRFS_EXTENT_ITEM_KEY] = print_extent_item,
	[BTRFS_METADATA_ITEM_KEY] = print_extent_item,
	[BTRFS_TREE_BLOCK_REF_KEY] = print_fixed_text,
	[BTRFS_SHARED_BLOCK_REF_KEY] = print_fixed_text,
	[BTRFS_EXTENT_DATA_REF_KEY] = print_extent_data_ref,
	[BTRFS_SHARED_DATA_REF_KEY] = print_shared_data_ref,
	[BTRFS_EXTENT_REF_V0_KEY] = print_fixed_text,
	[CSUM_ITEM_KEY] = print_fixed_text,
	[BTRFS_EXTENT_CSUM_KEY] = print_extent_csum,
	[BTRFS_EXTENT_DATA_KEY] = print_file_extent,
	[BTRFS_BLOCK_GROUP_ITEM_KEY] = print_block_group,
	[BTRFS_FREE_SPACE_INFO_KEY] = print_free_space_info,
	[BTRFS_FREE_SPACE_EXTENT_KEY] = print_fixed_text,
	[BTRFS_FREE_SPACE_BITMAP_KEY] = print_fixed_text,
	[BTRFS_CHUNK_ITEM_KEY] = print_chunk,
	[BTRFS_DEV_ITEM_KEY] = print_dev_item,
	[BTRFS_DEV_EXTENT_KEY] = print_dev_extent,
	[BTRFS_QGROUP_STATUS_KEY] = print_qgroup_status,
	[BTRFS_QGROUP_INFO_KEY] = print_qgroup_info,
	[BTRFS_QGROUP_LIMIT_KEY] = print_qgroup_limit,
	[BTRFS_UUID_KEY_SUBVOL] = print_uuid_item,
	[BTRFS_UUID_KEY_RECEIVED_SUBVOL] = print_uuid_item,
	[BTRFS_STRING_ITEM_KEY] = print_string_item,
	[BTRFS_PERSISTENT_ITEM_KEY] = print_persistent_item,
	[BTRFS_TEMPORARY_ITEM_KEY] = print_temporary_item,
};

/* ---- tree blocks -------------------------------------------------------------------- */

static void print_block_header(const struct print_opts *po, const struct bview *v,
			       uint64_t start)
{
	uint64_t bytenr = F64(v, 0, struct btrfs_header, bytenr);
	uint64_t raw_flags = F64(v, 0, struct btrfs_header, flags);
	uint64_t flags = raw_flags & ((1ULL << BTRFS_BACKREF_REV_SHIFT) - 1);
	uint32_t nr = F32(v, 0, struct btrfs_header, nritems);
	uint8_t level = F8(v, 0, struct btrfs_header, level);
	char fl[32];

	if (level) {
		printf("node %llu level %d items %u free space %u generation %llu owner ",
		       (unsigned long long)start, level, nr, node_ptrs_max(po->nodesize) - nr,
		       (unsigned long long)F64(v, 0, struct btrfs_header, generation));
	} else {
		/* free space: leaf data area minus item headers and the data they use */
		int64_t used = 0;

		if (nr) {
			uint64_t first = LEAF_DATA_OFF, last = first + (uint64_t)(nr - 1) * sizeof(struct btrfs_item);

			used = (int64_t)F32(v, first, struct btrfs_item, offset) +
			       F32(v, first, struct btrfs_item, size) -
			       F32(v, last, struct btrfs_item, offset) +
			       (int64_t)nr * sizeof(struct btrfs_item);
		}
		printf("leaf %llu items %u free space %d generation %llu owner ",
		       (unsigned long long)bytenr, nr,
		       (int)(int32_t)(uint32_t)((int64_t)(po->nodesize - LEAF_DATA_OFF) - used),
		       (unsigned long long)F64(v, 0, struct btrfs_header, generation));
	}
	print_objectid(F64(v, 0, struct btrfs_header, owner), 0);
	FLAGS_JOIN(fl, flags, header_flag_names, NULL);
	printf("\n%s %llu flags 0x%llx(%s) backref revision %d", level ? "node" : "leaf",
	       (unsigned long long)bytenr, (unsigned long long)flags, fl,
	       (int)(raw_flags >> BTRFS_BACKREF_REV_SHIFT));
	if (po->csum_headers) {
		fputs(" csum 0x", stdout);
		for (unsigned i = 0; i < po->csum_size && i < BTRFS_CSUM_SIZE; i++)
			printf("%02x", v->p[i]);
	}
	fputs("\nfs uuid ", stdout);
	print_uuid_at(v, offsetof(struct btrfs_header, fsid));
	fputs("\nchunk uuid ", stdout);
	print_uuid_at(v, offsetof(struct btrfs_header, chunk_tree_uuid));
	putchar('\n');
}

static void print_leaf_items(const struct print_opts *po, const struct bview *v,
			     uint64_t bytenr, uint32_t nr)
{
	uint32_t data_size = po->nodesize - LEAF_DATA_OFF;

	for (uint32_t i = 0; i < nr; i++) {
		uint64_t ih = LEAF_DATA_OFF + (uint64_t)i * sizeof(struct btrfs_item);
		uint32_t ioff = F32(v, ih, struct btrfs_item, offset);
		uint32_t isize = F32(v, ih, struct btrfs_item, size);
		struct item it = { po, *v, bytenr, LEAF_DATA_OFF + ioff, isize, 0, 0, 0 };
		item_printer *fn;

		if (!in_view(v, ih, sizeof(struct btrfs_item)) || ioff > data_size ||
		    (uint64_t)ioff + isize > data_size) {
			msg_error("leaf %llu slot %u pointer invalid, offset %u size %u leaf data limit %u",
				  (unsigned long long)bytenr, i, ioff, isize, data_size);
			msg_error("skip remaining slots");
			return;
		}
		it.objectid = F64(v, ih, struct btrfs_disk_key, objectid);
		it.type = F8(v, ih, struct btrfs_disk_key, type);
		it.offset = F64(v, ih, struct btrfs_disk_key, offset);
		printf("\titem %u ", i);
		print_key(it.objectid, it.type, it.offset);
		printf(" itemoff %u itemsize %u\n", ioff, isize);
		if (it.type == 0 && it.objectid == BTRFS_FREE_SPACE_OBJECTID)
			print_free_space_header(&it);
		fn = item_printers[it.type];
		if (fn)
			fn(&it);
	}
}

static void print_node_ptrs(const struct print_opts *po, const struct bview *v, uint32_t nr)
{
	uint32_t max = node_ptrs_max(po->nodesize);

	for (uint32_t i = 0; i < nr && i < max; i++) {
		uint64_t p = LEAF_DATA_OFF + (uint64_t)i * sizeof(struct btrfs_key_ptr);

		putchar('\t');
		print_key_at(v, p + offsetof(struct btrfs_key_ptr, key));
		printf(" block %llu gen %llu\n",
		       (unsigned long long)F64(v, p, struct btrfs_key_ptr, blockptr),
		       (unsigned long long)F64(v, p, struct btrfs_key_ptr, generation));
	}
}

void print_tree_block(const struct print_opts *po, const uint8_t *blk, uint64_t start)
{
	struct bview v = { blk, po->nodesize };
	uint32_t nr = F32(&v, 0, struct btrfs_header, nritems);

	if (F8(&v, 0, struct btrfs_header, level) == 0) {
		print_block_header(po, &v, start);
		print_leaf_items(po, &v, F64(&v, 0, struct btrfs_header, bytenr), nr);
		return;
	}
	if (nr > node_ptrs_max(po->nodesize))
		msg_warn("node nr_items corrupted, has %u limit %u, continue anyway", nr,
			 node_ptrs_max(po->nodesize));
	print_block_header(po, &v, start);
	print_node_ptrs(po, &v, nr);
}

/* ---- superblock --------------------------------------------------------------------- */

#define SUPER_FLAG_CHANGING_FSID (1ULL << 35) /* the reference's name for this bit */

static const struct flag_name super_flag_names[] = {
	{ BTRFS_HEADER_FLAG_WRITTEN, "WRITTEN" }, { BTRFS_HEADER_FLAG_RELOC, "RELOC" },
	{ SUPER_FLAG_CHANGING_FSID, "CHANGING_FSID" }, { BTRFS_SUPER_FLAG_SEEDING, "SEEDING" },
	{ BTRFS_SUPER_FLAG_METADUMP, "METADUMP" }, { BTRFS_SUPER_FLAG_METADUMP_V2, "METADUMP_V2" },
};
static const struct flag_name compat_ro_names[] = {
	{ BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE, "FREE_SPACE_TREE" },
	{ BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID, "FREE_SPACE_TREE_VALID" },
	{ BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE, "BLOCK_GROUP_TREE" },
};
static const struct flag_name incompat_names[] = {
	{ BTRFS_FEATURE_INCOMPAT_MIXED_BACKREF, "MIXED_BACKREF" },
	{ BTRFS_FEATURE_INCOMPAT_DEFAULT_SUBVOL, "DEFAULT_SUBVOL" },
	{ BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS, "MIXED_GROUPS" },
	{ BTRFS_FEATURE_INCOMPAT_COMPRESS_LZO, "COMPRESS_LZO" },
	{ BTRFS_FEATURE_INCOMPAT_COMPRESS_ZSTD, "COMPRESS_ZSTD" },
	{ BTRFS_FEATURE_INCOMPAT_BIG_METADATA, "BIG_METADATA" },
	{ BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF, "EXTENDED_IREF" },
	{ BTRFS_FEATURE_INCOMPAT_RAID56, "RAID56" },
	{ BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA, "SKINNY_METADATA" },
	{ BTRFS_FEATURE_INCOMPAT_NO_HOLES, "NO_HOLES" },
	{ BTRFS_FEATURE_INCOMPAT_METADATA_UUID, "METADATA_UUID" },
	{ BTRFS_FEATURE_INCOMPAT_RAID1C34, "RAID1C34" },
	{ BTRFS_FEATURE_INCOMPAT_ZONED, "ZONED" },
	{ BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2, "EXTENT_TREE_V2" },
};
/* What btrfs-progs 6.2 (non-experimental build) calls supported: other bits are
 * "unknown flag"; a known name is shown only while some supported bit is set. */
#define SUPER_FLAGS_SUPP (BTRFS_HEADER_FLAG_WRITTEN | BTRFS_HEADER_FLAG_RELOC | \
			  SUPER_FLAG_CHANGING_FSID | BTRFS_SUPER_FLAG_SEEDING | \
			  BTRFS_SUPER_FLAG_METADUMP | BTRFS_SUPER_FLAG_METADUMP_V2)
#define COMPAT_RO_SUPP (BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE | \
			BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID | \
			BTRFS_FEATURE_COMPAT_RO_VERITY | BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE)
#define INCOMPAT_SUPP ((BTRFS_FEATURE_INCOMPAT_ZONED << 1) - 1)

/* The "( NAME |\n  NAME )" block under a flags line. */
static void print_flag_block(uint64_t flags, const struct flag_name *t, size_t n,
			     uint64_t supported)
{
	int first = 1;

	if (!flags)
		return;
	fputs("\t\t\t( ", stdout);
	for (size_t i = 0; i < n; i++) {
		if (!(flags & supported) || !(flags & t[i].bit))
			continue;
		printf(first ? "%s " : "|\n\t\t\t  %s ", t[i].name);
		first = 0;
	}
	if (flags & ~supported)
		printf(first ? "unknown flag: 0x%llx " : "|\n\t\t\t  unknown flag: 0x%llx ",
		       (unsigned long long)(flags & ~supported));
	fputs(")\n", stdout);
}
#define FLAG_BLOCK(flags, table, supp) \
	print_flag_block(flags, table, sizeof(table) / sizeof(table[0]), supp)

static void print_sys_chunk_array(const struct btrfs_super_block *sb)
{
	struct bview v = { (const uint8_t *)sb, sizeof(*sb) };
	uint32_t size = get_le32(&sb->sys_chunk_array_size);
	uint32_t base = offsetof(struct btrfs_super_block, sys_chunk_array);
	uint32_t cur = 0, len = 0;
	uint32_t one_stripe = sizeof(struct btrfs_chunk);

	if (size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE) {
		msg_error("sys_array_size %u shouldn't exceed %u bytes", size,
			  BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
		return;
	}
	for (int item = 0; cur < size; item++) {
		const struct btrfs_disk_key *key = (const void *)(sb->sys_chunk_array + cur);
		uint16_t n;

		len = sizeof(*key);
		if (cur + len > size)
			goto short_read;
		printf("\titem %d ", item);
		print_disk_key(key);
		putchar('\n');
		cur += len;
		if (key->type != BTRFS_CHUNK_ITEM_KEY) {
			msg_error("unexpected item type %u in sys_array at offset %u", key->type, cur);
			return;
		}
		len = one_stripe;
		if (cur + len > size)
			goto short_read;
		n = F16(&v, base + cur, struct btrfs_chunk, num_stripes);
		if (!n) {
			msg_error("invalid number of stripes %u in sys_array at offset %u", n, cur);
			return;
		}
		len = one_stripe + (n - 1) * (uint32_t)sizeof(struct btrfs_stripe);
		if (cur + len > size)
			goto short_read;
		print_chunk_at(&v, base + cur);
		cur += len;
	}
	return;
short_read:
	msg_error("sys_array too short to read %u bytes at offset %u", len, cur);
}

static void print_backup_roots(const struct btrfs_super_block *sb)
{
	int v2 = !!(get_le64(&sb->incompat_flags) & BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2);
	struct bview v = { (const uint8_t *)sb, sizeof(*sb) };
#define ROW(label, tree) { label, offsetof(struct btrfs_root_backup, tree), \
	offsetof(struct btrfs_root_backup, tree##_gen), offsetof(struct btrfs_root_backup, tree##_level) }
	const struct { const char *label; size_t root, gen, level; } rows[] = {
		ROW("backup_tree_root:\t", tree_root),
		ROW("backup_chunk_root:\t", chunk_root),
		ROW("backup_extent_root:\t", extent_root),
		ROW("backup_fs_root:\t\t", fs_root),
		ROW("backup_dev_root:\t", dev_root),
		ROW("csum_root:\t", csum_root),
	};
#undef ROW

	for (int i = 0; i < BTRFS_NUM_BACKUP_ROOTS; i++) {
		uint64_t b = offsetof(struct btrfs_super_block, super_roots) +
			     (uint64_t)i * sizeof(struct btrfs_root_backup);

		if (!F64(&v, b, struct btrfs_root_backup, tree_root) &&
		    !F64(&v, b, struct btrfs_root_backup, tree_root_gen))
			continue; /* an unused slot */
		printf("\tbackup %d:\n", i);
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
			printf("\t\t%s%llu\tgen: %llu\tlevel: %d\n",
			       r == 2 && v2 ? "backup_block_group_root:\t" : rows[r].label,
			       (unsigned long long)v64(&v, b + rows[r].root),
			       (unsigned long long)v64(&v, b + rows[r].gen), v8(&v, b + rows[r].level));
		printf("\t\tbackup_total_bytes:\t%llu\n\t\tbackup_bytes_used:\t%llu\n"
		       "\t\tbackup_num_devices:\t%llu\n\n",
		       (unsigned long long)F64(&v, b, struct btrfs_root_backup, total_bytes),
		       (unsigned long long)F64(&v, b, struct btrfs_root_backup, bytes_used),
		       (unsigned long long)F64(&v, b, struct btrfs_root_backup, num_devices));
	}
}

static void print_printable(const char *s, size_t n, int stop_at_nul)
{
	for (size_t i = 0; i < n && !(stop_at_nul && !s[i]); i++)
		putchar(isprint((unsigned char)s[i]) ? s[i] : '.');
}

static void print_super_csum(const struct btrfs_super_block *sb)
{
	uint16_t type = get_le16(&sb->csum_type);
	int valid = type <= CSUM_BLAKE2;
	size_t size = valid ? csum_size(type) : BTRFS_CSUM_SIZE;
	uint8_t sum[CSUM_MAX_SIZE];

	static const char *const names[] = { "crc32c", "xxhash64", "sha256", "blake2" };

	printf("csum_type\t\t%u (%s)\n", type, valid ? names[type] : "INVALID");
	printf("csum_size\t\t%llu\n", (unsigned long long)size);
	fputs("csum\t\t\t0x", stdout);
	for (size_t i = 0; i < size; i++)
		printf("%02x", sb->csum[i]);
	if (!valid || csum_supported(type))
		fputs(" [UNKNOWN CSUM TYPE OR SIZE]\n", stdout);
	else if (!csum_compute(type, (const uint8_t *)sb + BTRFS_CSUM_SIZE,
			       sizeof(*sb) - BTRFS_CSUM_SIZE, sum) && !memcmp(sum, sb->csum, size))
		fputs(" [match]\n", stdout);
	else
		fputs(" [DON'T MATCH]\n", stdout);
}

static void print_u64_field(const char *label, uint64_t value)
{
	printf("%s%llu\n", label, (unsigned long long)value);
}

void print_superblock(const struct btrfs_super_block *sb, int full)
{
	uint64_t incompat = get_le64(&sb->incompat_flags);
	const uint8_t *meta_uuid = incompat & BTRFS_FEATURE_INCOMPAT_METADATA_UUID ?
				   sb->metadata_uuid : sb->fsid;
	const struct btrfs_dev_item *d = &sb->dev_item;
	char u[UUID_STR_LEN];

	print_super_csum(sb);
	print_u64_field("bytenr\t\t\t", get_le64(&sb->bytenr));
	printf("flags\t\t\t0x%llx\n", (unsigned long long)get_le64(&sb->flags));
	FLAG_BLOCK(get_le64(&sb->flags), super_flag_names, SUPER_FLAGS_SUPP);
	fputs("magic\t\t\t", stdout);
	print_printable((const char *)&sb->magic, sizeof(sb->magic), 0);
	puts(get_le64(&sb->magic) == BTRFS_MAGIC_LE ? " [match]" : " [DON'T MATCH]");
	uuid_unparse(sb->fsid, u);
	printf("fsid\t\t\t%s\n", u);
	uuid_unparse(meta_uuid, u);
	printf("metadata_uuid\t\t%s\n", u);
	fputs("label\t\t\t", stdout);
	print_printable(sb->label, BTRFS_LABEL_SIZE, 1);
	putchar('\n');
	print_u64_field("generation\t\t", get_le64(&sb->generation));
	print_u64_field("root\t\t\t", get_le64(&sb->root));
	print_u64_field("sys_array_size\t\t", get_le32(&sb->sys_chunk_array_size));
	print_u64_field("chunk_root_generation\t", get_le64(&sb->chunk_root_generation));
	print_u64_field("root_level\t\t", sb->root_level);
	print_u64_field("chunk_root\t\t", get_le64(&sb->chunk_root));
	print_u64_field("chunk_root_level\t", sb->chunk_root_level);
	print_u64_field("log_root\t\t", get_le64(&sb->log_root));
	print_u64_field("log_root_transid (deprecated)\t", get_le64(&sb->unused_log_root_transid));
	print_u64_field("log_root_level\t\t", sb->log_root_level);
	print_u64_field("total_bytes\t\t", get_le64(&sb->total_bytes));
	print_u64_field("bytes_used\t\t", get_le64(&sb->bytes_used));
	print_u64_field("sectorsize\t\t", get_le32(&sb->sectorsize));
	print_u64_field("nodesize\t\t", get_le32(&sb->nodesize));
	print_u64_field("leafsize (deprecated)\t", get_le32(&sb->unused_leafsize));
	print_u64_field("stripesize\t\t", get_le32(&sb->stripesize));
	print_u64_field("root_dir\t\t", get_le64(&sb->root_dir_objectid));
	print_u64_field("num_devices\t\t", get_le64(&sb->num_devices));
	printf("compat_flags\t\t0x%llx\n", (unsigned long long)get_le64(&sb->compat_flags));
	printf("compat_ro_flags\t\t0x%llx\n", (unsigned long long)get_le64(&sb->compat_ro_flags));
	FLAG_BLOCK(get_le64(&sb->compat_ro_flags), compat_ro_names, COMPAT_RO_SUPP);
	printf("incompat_flags\t\t0x%llx\n", (unsigned long long)incompat);
	FLAG_BLOCK(incompat, incompat_names, INCOMPAT_SUPP);
	print_u64_field("cache_generation\t", get_le64(&sb->cache_generation));
	print_u64_field("uuid_tree_generation\t", get_le64(&sb->uuid_tree_generation));
	uuid_unparse(d->uuid, u);
	printf("dev_item.uuid\t\t%s\n", u);
	uuid_unparse(d->fsid, u);
	printf("dev_item.fsid\t\t%s %s\n", u,
	       memcmp(d->fsid, meta_uuid, BTRFS_FSID_SIZE) ? "[DON'T MATCH]" : "[match]");
	print_u64_field("dev_item.type\t\t", get_le64(&d->type));
	print_u64_field("dev_item.total_bytes\t", get_le64(&d->total_bytes));
	print_u64_field("dev_item.bytes_used\t", get_le64(&d->bytes_used));
	print_u64_field("dev_item.io_align\t", get_le32(&d->io_align));
	print_u64_field("dev_item.io_width\t", get_le32(&d->io_width));
	print_u64_field("dev_item.sector_size\t", get_le32(&d->sector_size));
	print_u64_field("dev_item.devid\t\t", get_le64(&d->devid));
	print_u64_field("dev_item.dev_group\t", get_le32(&d->dev_group));
	print_u64_field("dev_item.seek_speed\t", d->seek_speed);
	print_u64_field("dev_item.bandwidth\t", d->bandwidth);
	print_u64_field("dev_item.generation\t", get_le64(&d->generation));
	if (!full)
		return;
	printf("sys_chunk_array[%d]:\n", BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
	print_sys_chunk_array(sb);
	printf("backup_roots[%d]:\n", BTRFS_NUM_BACKUP_ROOTS);
	print_backup_roots(sb);
}
#endif
