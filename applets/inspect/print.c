/* Printers for `btrfs inspect-internal dump-tree` and `dump-super`: the btrfs-progs 6.2
 * text format, byte for byte on clean filesystems. Every field is read through a
 * bounded view of the block: a field that lies outside it reads as zero, so damaged
 * items print garbage at worst, never read out of bounds. */
#include "config.h"
#if CFG_APPLET_INSPECT
#include "print.h"
#include "util/cli/cli.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/uuid.h"
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CSUM_ITEM_KEY 120  /* the old per-block csum item, still named by the reference */
#define NAME_MAX_PRINT 255 /* names longer than this are cut, as the reference does */
#define LEAF_DATA_OFF ((uint32_t)sizeof(struct btrfs_header))

/* ---- output ------------------------------------------------------------------------ */

/* Dumps run to tens of megabytes and the C library's printf writes each piece of a line
 * separately: text is collected here and handed to stdio in large chunks. Every public
 * printer flushes before it returns and before any message to stderr. */
static struct {
	size_t n;
	char buf[1 << 16];
} out;

static void out_flush(void)
{
	if (out.n)
		fwrite(out.buf, 1, out.n, stdout);
	out.n = 0;
}

static void out_mem(const void *p, size_t n)
{
	if (out.n + n > sizeof(out.buf)) {
		out_flush();
		if (n > sizeof(out.buf)) {
			fwrite(p, 1, n, stdout);
			return;
		}
	}
	memcpy(out.buf + out.n, p, n);
	out.n += n;
}

static void out_str(const char *s)
{
	out_mem(s, strlen(s));
}

static void out_char(char c)
{
	if (out.n == sizeof(out.buf))
		out_flush();
	out.buf[out.n++] = c;
}

static void out_u64(uint64_t v)
{
	char t[20];
	int i = sizeof(t);

	do
		t[--i] = (char)('0' + v % 10);
	while (v /= 10);
	out_mem(t + i, sizeof(t) - (size_t)i);
}

/* Decimal with at least two digits (timestamps). */
static void out_2d(int v)
{
	if (v >= 0 && v < 10)
		out_char('0');
	if (v < 0) {
		out_char('-');
		out_u64((uint64_t)-(int64_t)v);
	} else {
		out_u64((uint64_t)v);
	}
}

/* label, then the number in decimal */
static void out_kv(const char *label, uint64_t v)
{
	out_str(label);
	out_u64(v);
}

static void out_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out_fmt(const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		out_mem(small, (size_t)n);
		return;
	}
	out_flush();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

#define report_error(...) (out_flush(), msg_error(__VA_ARGS__))
#define report_warn(...) (out_flush(), msg_warn(__VA_ARGS__))

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
	out_mem(s, UUID_STR_LEN - 1);
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
	const char *nul;

	if (len > sizeof(buf))
		len = sizeof(buf);
	vcopy(v, off, buf, len);
	nul = memchr(buf, 0, len);
	out_mem(buf, nul ? (size_t)(nul - buf) : len);
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
	out_str(prefix);
	out_u64(sec);
	out_char('.');
	out_u64(nsec);
	/* the year as glibc's %Y writes it: no padding, no '+' */
	out_fmt(" (%lld-", (long long)tm.tm_year + 1900);
	out_2d(tm.tm_mon + 1);
	out_char('-');
	out_2d(tm.tm_mday);
	out_char(' ');
	out_2d(tm.tm_hour);
	out_char(':');
	out_2d(tm.tm_min);
	out_char(':');
	out_2d(tm.tm_sec);
	out_str(")\n");
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

/* Every key type the reference names: number, name, printer of the item body (NULL: the
 * key only). One list, expanded into compact tables (a 256-entry table of pointers for the
 * names and one for the printers took 4 KB). */
#define KEY_TYPES(X) \
	X(BTRFS_INODE_ITEM_KEY, INODE_ITEM, print_inode_item) \
	X(BTRFS_INODE_REF_KEY, INODE_REF, print_inode_refs) \
	X(BTRFS_INODE_EXTREF_KEY, INODE_EXTREF, print_inode_refs) \
	X(BTRFS_DIR_ITEM_KEY, DIR_ITEM, print_dir_items) \
	X(BTRFS_DIR_INDEX_KEY, DIR_INDEX, print_dir_items) \
	X(BTRFS_DIR_LOG_ITEM_KEY, DIR_LOG_ITEM, print_dir_log_item) \
	X(BTRFS_DIR_LOG_INDEX_KEY, DIR_LOG_INDEX, print_dir_log_item) \
	X(BTRFS_XATTR_ITEM_KEY, XATTR_ITEM, print_dir_items) \
	X(BTRFS_VERITY_DESC_ITEM_KEY, VERITY_DESC_ITEM, NULL) \
	X(BTRFS_VERITY_MERKLE_ITEM_KEY, VERITY_MERKLE_ITEM, NULL) \
	X(BTRFS_ORPHAN_ITEM_KEY, ORPHAN_ITEM, print_fixed_text) \
	X(BTRFS_ROOT_ITEM_KEY, ROOT_ITEM, print_root_item) \
	X(BTRFS_ROOT_REF_KEY, ROOT_REF, print_root_ref) \
	X(BTRFS_ROOT_BACKREF_KEY, ROOT_BACKREF, print_root_ref) \
	X(BTRFS_EXTENT_ITEM_KEY, EXTENT_ITEM, print_extent_item) \
	X(BTRFS_METADATA_ITEM_KEY, METADATA_ITEM, print_extent_item) \
	X(BTRFS_TREE_BLOCK_REF_KEY, TREE_BLOCK_REF, print_fixed_text) \
	X(BTRFS_SHARED_BLOCK_REF_KEY, SHARED_BLOCK_REF, print_fixed_text) \
	X(BTRFS_EXTENT_DATA_REF_KEY, EXTENT_DATA_REF, print_extent_data_ref) \
	X(BTRFS_SHARED_DATA_REF_KEY, SHARED_DATA_REF, print_shared_data_ref) \
	X(BTRFS_EXTENT_REF_V0_KEY, EXTENT_REF_V0, print_fixed_text) \
	X(CSUM_ITEM_KEY, CSUM_ITEM, print_fixed_text) \
	X(BTRFS_EXTENT_CSUM_KEY, EXTENT_CSUM, print_extent_csum) \
	X(BTRFS_EXTENT_DATA_KEY, EXTENT_DATA, print_file_extent) \
	X(BTRFS_BLOCK_GROUP_ITEM_KEY, BLOCK_GROUP_ITEM, print_block_group) \
	X(BTRFS_FREE_SPACE_INFO_KEY, FREE_SPACE_INFO, print_free_space_info) \
	X(BTRFS_FREE_SPACE_EXTENT_KEY, FREE_SPACE_EXTENT, print_fixed_text) \
	X(BTRFS_FREE_SPACE_BITMAP_KEY, FREE_SPACE_BITMAP, print_fixed_text) \
	X(BTRFS_CHUNK_ITEM_KEY, CHUNK_ITEM, print_chunk) \
	X(BTRFS_DEV_ITEM_KEY, DEV_ITEM, print_dev_item) \
	X(BTRFS_DEV_EXTENT_KEY, DEV_EXTENT, print_dev_extent) \
	X(BTRFS_TEMPORARY_ITEM_KEY, TEMPORARY_ITEM, print_temporary_item) \
	X(BTRFS_DEV_REPLACE_KEY, DEV_REPLACE, NULL) \
	X(BTRFS_STRING_ITEM_KEY, STRING_ITEM, print_string_item) \
	X(BTRFS_QGROUP_STATUS_KEY, QGROUP_STATUS, print_qgroup_status) \
	X(BTRFS_QGROUP_RELATION_KEY, QGROUP_RELATION, NULL) \
	X(BTRFS_QGROUP_INFO_KEY, QGROUP_INFO, print_qgroup_info) \
	X(BTRFS_QGROUP_LIMIT_KEY, QGROUP_LIMIT, print_qgroup_limit) \
	X(BTRFS_PERSISTENT_ITEM_KEY, PERSISTENT_ITEM, print_persistent_item) \
	X(BTRFS_UUID_KEY_SUBVOL, UUID_KEY_SUBVOL, print_uuid_item) \
	X(BTRFS_UUID_KEY_RECEIVED_SUBVOL, UUID_KEY_RECEIVED_SUBVOL, print_uuid_item)
#define KT_NUM(num, name, fn) num,
#define KT_NAME(num, name, fn) #name "\0"
#define KT_PRINTER(num, name, fn) fn,

static const uint8_t key_type_nums[] = { KEY_TYPES(KT_NUM) };
static const char key_type_names[] = KEY_TYPES(KT_NAME);
#define NKEY_TYPES sizeof(key_type_nums)

/* 1 + the index of type in KEY_TYPES, 0 when it has no name. */
static unsigned key_type_slot(uint8_t type)
{
	static uint8_t slot[256];
	static int ready;

	if (!ready) {
		for (unsigned i = 0; i < NKEY_TYPES; i++)
			slot[key_type_nums[i]] = (uint8_t)(i + 1);
		ready = 1;
	}
	return slot[type];
}

static const char *key_type_name(unsigned slot)
{
	static const char *names[NKEY_TYPES];
	const char *s = key_type_names;

	if (!names[0])
		for (unsigned i = 0; i < NKEY_TYPES; i++, s += strlen(s) + 1)
			names[i] = s;
	return names[slot - 1];
}

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
	out_fmt("%u/%llu", (unsigned)btrfs_qgroup_level(id),
	       (unsigned long long)(id & ((1ULL << BTRFS_QGROUP_LEVEL_SHIFT) - 1)));
}

static void put_objectid(uint64_t objectid, uint8_t type)
{
	const char *name;

	switch (type) {
	case BTRFS_PERSISTENT_ITEM_KEY:
		if (objectid == BTRFS_DEV_STATS_OBJECTID) {
			out_str("DEV_STATS");
			return;
		}
		/* fall through */
	case BTRFS_DEV_EXTENT_KEY: /* a device id */
		out_u64(objectid);
		return;
	case BTRFS_QGROUP_RELATION_KEY:
		print_qgroupid(objectid);
		return;
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		out_fmt("0x%016llx", (unsigned long long)objectid);
		return;
	}
	if (objectid == BTRFS_ROOT_TREE_OBJECTID) /* == BTRFS_DEV_ITEMS_OBJECTID */
		name = type == BTRFS_DEV_ITEM_KEY ? "DEV_ITEMS" : "ROOT_TREE";
	else if (objectid == BTRFS_FIRST_CHUNK_TREE_OBJECTID && type == BTRFS_CHUNK_ITEM_KEY)
		name = "FIRST_CHUNK_TREE";
	else if (objectid > BTRFS_BLOCK_GROUP_TREE_OBJECTID && objectid < BTRFS_MULTIPLE_OBJECTIDS)
		name = NULL; /* plain numbers: inodes, subvolumes, ... */
	else
		name = LOOKUP(objectid_names, objectid);
	if (name)
		out_str(name);
	else
		out_u64(objectid);
}

static void print_key_type(uint64_t objectid, uint8_t type)
{
	unsigned slot = key_type_slot(type);

	if (type == 0 && objectid == BTRFS_FREE_SPACE_OBJECTID)
		out_str("UNTYPED");
	else if (slot)
		out_str(key_type_name(slot));
	else
		out_fmt("UNKNOWN.%d", type);
}

static void put_key(uint64_t objectid, uint8_t type, uint64_t offset)
{
	out_str("key (");
	put_objectid(objectid, type);
	out_char(' ');
	print_key_type(objectid, type);
	out_char(' ');
	switch (type) {
	case BTRFS_QGROUP_RELATION_KEY:
	case BTRFS_QGROUP_INFO_KEY:
	case BTRFS_QGROUP_LIMIT_KEY:
		print_qgroupid(offset);
		break;
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		out_fmt("0x%016llx", (unsigned long long)offset);
		break;
	case BTRFS_ROOT_ITEM_KEY:
		/* a reloc tree's ROOT_ITEM offset is the id of the tree it relocates */
		if (objectid == BTRFS_TREE_RELOC_OBJECTID)
			put_objectid(offset, type);
		else
			out_u64(offset);
		break;
	default:
		if (offset == (uint64_t)-1)
			out_str("-1");
		else
			out_u64(offset);
	}
	out_char(')');
}

static void put_key_at(const struct bview *v, uint64_t off)
{
	put_key(F64(v, off, struct btrfs_disk_key, objectid),
		  F8(v, off, struct btrfs_disk_key, type),
		  F64(v, off, struct btrfs_disk_key, offset));
}

static void put_disk_key(const struct btrfs_disk_key *key)
{
	struct bview v = { (const uint8_t *)key, sizeof(*key) };

	put_key_at(&v, 0);
}

void print_disk_key(const struct btrfs_disk_key *key)
{
	put_disk_key(key);
	out_flush();
}

void print_key(uint64_t objectid, uint8_t type, uint64_t offset)
{
	put_key(objectid, type, offset);
	out_flush();
}

void print_objectid(uint64_t objectid, uint8_t type)
{
	put_objectid(objectid, type);
	out_flush();
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
	out_kv("\t\tgeneration ", F64(v, o, struct btrfs_inode_item, generation));
	out_kv(" transid ", F64(v, o, struct btrfs_inode_item, transid));
	out_kv(" size ", F64(v, o, struct btrfs_inode_item, size));
	out_kv(" nbytes ", F64(v, o, struct btrfs_inode_item, nbytes));
	out_kv("\n\t\tblock group ", F64(v, o, struct btrfs_inode_item, block_group));
	out_fmt(" mode %o", F32(v, o, struct btrfs_inode_item, mode));
	out_kv(" links ", F32(v, o, struct btrfs_inode_item, nlink));
	out_kv(" uid ", F32(v, o, struct btrfs_inode_item, uid));
	out_kv(" gid ", F32(v, o, struct btrfs_inode_item, gid));
	out_kv(" rdev ", F64(v, o, struct btrfs_inode_item, rdev));
	out_kv("\n\t\tsequence ", F64(v, o, struct btrfs_inode_item, sequence));
	out_fmt(" flags 0x%llx(%s)\n", (unsigned long long)flags, fl);
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, atime), "\t\tatime ");
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, ctime), "\t\tctime ");
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, mtime), "\t\tmtime ");
	print_timespec_at(v, o + offsetof(struct btrfs_inode_item, otime), "\t\totime ");
}

static void print_item_name(const struct item *it, uint64_t off, uint32_t len)
{
	if (it->po->hide_names)
		out_str("HIDDEN");
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
			out_fmt("\t\tindex %llu parent %llu namelen %u ",
			       (unsigned long long)F64(v, o, struct btrfs_inode_extref, index),
			       (unsigned long long)F64(v, o, struct btrfs_inode_extref, parent_objectid),
			       name_len);
		} else {
			name_len = F16(v, o, struct btrfs_inode_ref, name_len);
			out_kv("\t\tindex ", F64(v, o, struct btrfs_inode_ref, index));
			out_kv(" namelen ", name_len);
			out_char(' ');
		}
		out_str("name: ");
		print_item_name(it, o + hdr, name_len);
		out_char('\n');
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

		out_str("\t\tlocation ");
		put_key_at(v, o + offsetof(struct btrfs_dir_item, location));
		out_str(" type ");
		out_str(dir_type_name(F8(v, o, struct btrfs_dir_item, type), tbuf, sizeof(tbuf)));
		out_kv("\n\t\ttransid ", F64(v, o, struct btrfs_dir_item, transid));
		out_kv(" data_len ", data_len);
		out_kv(" name_len ", name_len);
		out_char('\n');
		out_str("\t\tname: ");
		print_item_name(it, name_off, name_len);
		out_char('\n');
		if (data_len) {
			out_str("\t\tdata ");
			print_item_name(it, name_off + name_len, data_len);
			out_char('\n');
		}
		cur += sizeof(struct btrfs_dir_item) + name_len + data_len;
	}
}

static void print_dir_log_item(const struct item *it)
{
	out_fmt("\t\tdir log end %llu\n",
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
	out_fmt("\t\tgeneration %llu root_dirid %llu bytenr %llu byte_limit %llu bytes_used %llu\n",
	       (unsigned long long)get_le64(&ri.generation),
	       (unsigned long long)get_le64(&ri.root_dirid),
	       (unsigned long long)get_le64(&ri.bytenr),
	       (unsigned long long)get_le64(&ri.byte_limit),
	       (unsigned long long)get_le64(&ri.bytes_used));
	out_fmt("\t\tlast_snapshot %llu flags 0x%llx(%s) refs %u\n",
	       (unsigned long long)get_le64(&ri.last_snapshot), (unsigned long long)flags,
	       flags & BTRFS_ROOT_SUBVOL_RDONLY ? "RDONLY" : "none", get_le32(&ri.refs));
	out_str("\t\tdrop_progress ");
	put_disk_key(&ri.drop_progress);
	out_fmt(" drop_level %u\n", ri.drop_level);
	out_fmt("\t\tlevel %u generation_v2 %llu\n", ri.level,
	       (unsigned long long)get_le64(&ri.generation_v2));
	/* The fields after generation_v2 are valid only when it matches generation. */
	if (get_le64(&ri.generation) != get_le64(&ri.generation_v2))
		return;
	out_str("\t\tuuid ");
	print_uuid_at(&v, offsetof(struct btrfs_root_item, uuid));
	out_str("\n\t\tparent_uuid ");
	print_uuid_at(&v, offsetof(struct btrfs_root_item, parent_uuid));
	out_str("\n\t\treceived_uuid ");
	print_uuid_at(&v, offsetof(struct btrfs_root_item, received_uuid));
	out_fmt("\n\t\tctransid %llu otransid %llu stransid %llu rtransid %llu\n",
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

	out_fmt("\t\troot %s key dirid %llu sequence %llu name ",
	       it->type == BTRFS_ROOT_REF_KEY ? "ref" : "backref",
	       (unsigned long long)F64(v, o, struct btrfs_root_ref, dirid),
	       (unsigned long long)F64(v, o, struct btrfs_root_ref, sequence));
	print_name_at(v, o + sizeof(struct btrfs_root_ref),
		      F16(v, o, struct btrfs_root_ref, name_len));
	out_char('\n');
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
	out_str("\t\textent data backref root ");
	put_objectid(F64(v, o, struct btrfs_extent_data_ref, root), 0);
	out_fmt(" objectid %llu offset %llu count %u\n",
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
		out_str("\t\ttree block backref root ");
		put_objectid(offset, 0);
		out_char('\n');
		return sizeof(struct btrfs_extent_inline_ref);
	case BTRFS_SHARED_BLOCK_REF_KEY:
		out_fmt("\t\tshared block backref parent %llu\n", (unsigned long long)offset);
		return sizeof(struct btrfs_extent_inline_ref);
	case BTRFS_EXTENT_DATA_REF_KEY: /* the data ref takes the place of offset */
		print_extent_data_ref_at(v, o + offsetof(struct btrfs_extent_inline_ref, offset));
		return offsetof(struct btrfs_extent_inline_ref, offset) +
		       sizeof(struct btrfs_extent_data_ref);
	case BTRFS_SHARED_DATA_REF_KEY:
		out_fmt("\t\tshared data backref parent %llu count %u\n", (unsigned long long)offset,
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
	out_fmt("\t\trefs %llu gen %llu flags %s\n",
	       (unsigned long long)F64(v, o, struct btrfs_extent_item, refs),
	       (unsigned long long)F64(v, o, struct btrfs_extent_item, generation), fl);
	o += sizeof(struct btrfs_extent_item);
	if (it->type == BTRFS_METADATA_ITEM_KEY) {
		out_fmt("\t\ttree block skinny level %d\n", (int)it->offset);
	} else if (flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) {
		out_str("\t\ttree block ");
		put_key_at(v, o + offsetof(struct btrfs_tree_block_info, key));
		out_fmt(" level %d\n", F8(v, o, struct btrfs_tree_block_info, level));
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
	out_fmt("\t\tshared data backref count %u\n",
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
		out_fmt("\t\trange start %llu\n", (unsigned long long)start);
		return;
	}
	count = it->size / cs;
	len = count * po->sectorsize;
	out_fmt("\t\trange start %llu end %llu length %u\n", (unsigned long long)start,
	       (unsigned long long)(start + len), len);
	if (!po->csum_items)
		return;
	per_line = BTRFS_CSUM_SIZE / cs / 2;
	if (!per_line)
		per_line = 1;
	for (i = 0; i < count; i++) {
		uint8_t sum[CSUM_MAX_SIZE];

		out_str(i == 0 ? "\t\t" : i % per_line ? " " : "\n\t\t");
		out_fmt("[%llu] 0x", (unsigned long long)(start + (uint64_t)i * po->sectorsize));
		vcopy(&it->v, it->off + (uint64_t)i * cs, sum, cs);
		for (unsigned b = 0; b < cs; b++)
			out_fmt("%02x", sum[b]);
	}
	if (count)
		out_char('\n');
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

	out_fmt("\t\tgeneration %llu type %u (%s)\n",
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, generation), type,
	       type < 3 ? type_names[type] : "unknown");
	if (type == BTRFS_FILE_EXTENT_INLINE) {
		/* inline data starts where disk_bytenr would be */
		out_fmt("\t\tinline extent data size %u ram_bytes %llu compression %u (%s)\n",
		       it->size - (uint32_t)offsetof(struct btrfs_file_extent_item, disk_bytenr),
		       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, ram_bytes),
		       comp, cname);
		return;
	}
	out_fmt("\t\t%s data disk byte %llu nr %llu\n",
	       type == BTRFS_FILE_EXTENT_PREALLOC ? "prealloc" : "extent",
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, disk_bytenr),
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, disk_num_bytes));
	if (type == BTRFS_FILE_EXTENT_PREALLOC) {
		out_fmt("\t\tprealloc data offset %llu nr %llu\n",
		       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, offset),
		       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, num_bytes));
		return;
	}
	out_fmt("\t\textent data offset %llu nr %llu ram %llu\n",
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, offset),
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, num_bytes),
	       (unsigned long long)F64(v, o, struct btrfs_file_extent_item, ram_bytes));
	out_fmt("\t\textent compression %u (%s)\n", comp, cname);
}

static void print_block_group(const struct item *it)
{
	char fl[80];

	bg_flags_str(fl, sizeof(fl), F64(&it->v, it->off, struct btrfs_block_group_item, flags));
	out_fmt("\t\tblock group used %llu chunk_objectid %llu flags %s\n",
	       (unsigned long long)F64(&it->v, it->off, struct btrfs_block_group_item, used),
	       (unsigned long long)F64(&it->v, it->off, struct btrfs_block_group_item,
				       chunk_objectid), fl);
}

static void print_free_space_info(const struct item *it)
{
	out_fmt("\t\tfree space info extent count %u flags %u\n",
	       F32(&it->v, it->off, struct btrfs_free_space_info, extent_count),
	       F32(&it->v, it->off, struct btrfs_free_space_info, flags));
}

/* The free space cache header of (FREE_SPACE, 0, block group start). */
static void print_free_space_header(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	out_str("\t\tlocation ");
	put_key_at(v, o + offsetof(struct btrfs_free_space_header, location));
	out_fmt("\n\t\tcache generation %llu entries %llu bitmaps %llu\n",
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
		out_fmt("invalid num_stripes: %u\n", n);
		return;
	}
	if (!in_view(v, o, offsetof(struct btrfs_chunk, stripe) +
			   (uint64_t)n * sizeof(struct btrfs_stripe))) {
		out_str("\t\tchunk item invalid\n");
		return;
	}
	bg_flags_str(fl, sizeof(fl), F64(v, o, struct btrfs_chunk, type));
	out_fmt("\t\tlength %llu owner %llu stripe_len %llu type %s\n",
	       (unsigned long long)F64(v, o, struct btrfs_chunk, length),
	       (unsigned long long)F64(v, o, struct btrfs_chunk, owner),
	       (unsigned long long)F64(v, o, struct btrfs_chunk, stripe_len), fl);
	out_fmt("\t\tio_align %u io_width %u sector_size %u\n",
	       F32(v, o, struct btrfs_chunk, io_align), F32(v, o, struct btrfs_chunk, io_width),
	       F32(v, o, struct btrfs_chunk, sector_size));
	out_fmt("\t\tnum_stripes %u sub_stripes %u\n", n, F16(v, o, struct btrfs_chunk, sub_stripes));
	for (unsigned i = 0; i < n; i++) {
		uint64_t s = stripes + (uint64_t)i * sizeof(struct btrfs_stripe);

		out_fmt("\t\t\tstripe %u devid %llu offset %llu\n\t\t\tdev_uuid ", i,
		       (unsigned long long)F64(v, s, struct btrfs_stripe, devid),
		       (unsigned long long)F64(v, s, struct btrfs_stripe, offset));
		print_uuid_at(v, s + offsetof(struct btrfs_stripe, dev_uuid));
		out_char('\n');
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

	out_fmt("\t\tdevid %llu total_bytes %llu bytes_used %llu\n"
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
	out_str("\n\t\tfsid ");
	print_uuid_at(v, o + offsetof(struct btrfs_dev_item, fsid));
	out_char('\n');
}

static void print_dev_extent(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;

	out_fmt("\t\tdev extent chunk_tree %llu\n"
	       "\t\tchunk_objectid %llu chunk_offset %llu length %llu\n\t\tchunk_tree_uuid ",
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, chunk_tree),
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, chunk_objectid),
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, chunk_offset),
	       (unsigned long long)F64(v, o, struct btrfs_dev_extent, length));
	print_uuid_at(v, o + offsetof(struct btrfs_dev_extent, chunk_tree_uuid));
	out_char('\n');
}

static void print_qgroup_status(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t o = it->off;
	uint64_t flags = F64(v, o, struct btrfs_qgroup_status_item, flags);

	out_fmt("\t\tversion %llu generation %llu flags %s%s%s scan %llu\n",
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

	out_fmt("\t\tgeneration %llu\n\t\treferenced %llu referenced_compressed %llu\n"
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

	out_fmt("\t\tflags %llx\n\t\tmax_referenced %lld max_exclusive %lld\n"
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
		out_fmt("btrfs: uuid item with illegal size %lu!\n", (unsigned long)it->size);
		return;
	}
	for (uint32_t i = 0; i < it->size; i += sizeof(uint64_t))
		out_fmt("\t\tsubvol_id %llu\n", (unsigned long long)v64(&it->v, it->off + i));
}

static void print_string_item(const struct item *it)
{
	/* the item lies inside the block (checked by the leaf walk); "%.*s" stops at NUL */
	const char *s = (const char *)it->v.p + it->off;
	const char *nul = memchr(s, 0, it->size);

	out_str("\t\titem data ");
	out_mem(s, nul ? (size_t)(nul - s) : it->size);
	out_char('\n');
}

static void print_dev_stats(const struct item *it)
{
	const struct bview *v = &it->v;
	uint32_t known = BTRFS_DEV_STAT_VALUES_MAX * sizeof(uint64_t);

	out_fmt("\t\tdevice stats\n\t\twrite_errs %llu read_errs %llu flush_errs %llu "
	       "corruption_errs %llu generation %llu\n",
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_WRITE_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_READ_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_FLUSH_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_CORRUPTION_ERRS),
	       (unsigned long long)v64(v, it->off + 8 * BTRFS_DEV_STAT_GENERATION_ERRS));
	if (known >= it->size)
		return;
	/* the reference ends this line without a newline */
	out_fmt("\t\tunknown stats item bytes %u", it->size - known);
	for (uint32_t i = BTRFS_DEV_STAT_VALUES_MAX; i * 8ULL < it->size; i++)
		out_fmt("\t\tunknown item %u offset %zu value %llu\n", i, (size_t)i * 8,
		       (unsigned long long)v64(v, it->off + i * 8ULL));
}

static void print_persistent_item(const struct item *it)
{
	out_str("\t\tpersistent item objectid ");
	put_objectid(it->objectid, BTRFS_PERSISTENT_ITEM_KEY);
	out_fmt(" offset %llu\n", (unsigned long long)it->offset);
	if (it->objectid == BTRFS_DEV_STATS_OBJECTID)
		print_dev_stats(it);
	else
		out_fmt("\t\tunknown persistent item objectid %llu\n",
		       (unsigned long long)it->objectid);
}

static void print_balance_args(const struct bview *v, uint64_t o)
{
#define BA(f) F64(v, o, struct btrfs_disk_balance_args, f)
#define BA32(f) F32(v, o, struct btrfs_disk_balance_args, f)
	out_fmt("\t\tprofiles %llu devid %llu target %llu flags %llu\n",
	       (unsigned long long)BA(profiles), (unsigned long long)BA(devid),
	       (unsigned long long)BA(target), (unsigned long long)BA(flags));
	out_fmt("\t\tusage_min %u usage_max %u pstart %llu pend %llu\n", BA32(usage_min),
	       BA32(usage_max), (unsigned long long)BA(pstart), (unsigned long long)BA(pend));
	out_fmt("\t\tvstart %llu vend %llu limit_min %u limit_max %u\n",
	       (unsigned long long)BA(vstart), (unsigned long long)BA(vend), BA32(limit_min),
	       BA32(limit_max));
	out_fmt("\t\tstripes_min %u stripes_max %u\n", BA32(stripes_min), BA32(stripes_max));
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

	out_str("\t\ttemporary item objectid ");
	put_objectid(it->objectid, BTRFS_TEMPORARY_ITEM_KEY);
	out_fmt(" offset %llu\n", (unsigned long long)it->offset);
	if (it->objectid == BTRFS_BALANCE_OBJECTID) {
		out_fmt("\t\tbalance status flags %llu\n",
		       (unsigned long long)F64(&it->v, it->off, struct btrfs_balance_item, flags));
		for (size_t i = 0; i < 3; i++) {
			out_fmt("\t\t%s\n", parts[i].name);
			print_balance_args(&it->v, it->off + parts[i].off);
		}
	} else if (it->objectid == CSUM_TREE_TMP_OBJECTID) {
		out_fmt("\t\tcsum tree tmp root %llu\n", (unsigned long long)it->offset);
	} else {
		out_fmt("\t\tunknown temporary item objectid %llu\n",
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

	out_fmt("\t\t%s\n", LOOKUP(texts, it->type));
}

typedef void item_printer(const struct item *it);

/* Key types whose items have a body the reference prints; others show the key only. */
static item_printer *const key_type_printers[] = { KEY_TYPES(KT_PRINTER) };

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
		out_fmt("node %llu level %d items %u free space %u generation %llu owner ",
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
		out_fmt("leaf %llu items %u free space %d generation %llu owner ",
		       (unsigned long long)bytenr, nr,
		       (int)(int32_t)(uint32_t)((int64_t)(po->nodesize - LEAF_DATA_OFF) - used),
		       (unsigned long long)F64(v, 0, struct btrfs_header, generation));
	}
	put_objectid(F64(v, 0, struct btrfs_header, owner), 0);
	FLAGS_JOIN(fl, flags, header_flag_names, NULL);
	out_fmt("\n%s %llu flags 0x%llx(%s) backref revision %d", level ? "node" : "leaf",
	       (unsigned long long)bytenr, (unsigned long long)flags, fl,
	       (int)(raw_flags >> BTRFS_BACKREF_REV_SHIFT));
	if (po->csum_headers) {
		out_str(" csum 0x");
		for (unsigned i = 0; i < po->csum_size && i < BTRFS_CSUM_SIZE; i++)
			out_fmt("%02x", v->p[i]);
	}
	out_str("\nfs uuid ");
	print_uuid_at(v, offsetof(struct btrfs_header, fsid));
	out_str("\nchunk uuid ");
	print_uuid_at(v, offsetof(struct btrfs_header, chunk_tree_uuid));
	out_char('\n');
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
		unsigned slot;

		if (!in_view(v, ih, sizeof(struct btrfs_item)) || ioff > data_size ||
		    (uint64_t)ioff + isize > data_size) {
			report_error("leaf %llu slot %u pointer invalid, offset %u size %u leaf data limit %u",
				  (unsigned long long)bytenr, i, ioff, isize, data_size);
			report_error("skip remaining slots");
			return;
		}
		it.objectid = F64(v, ih, struct btrfs_disk_key, objectid);
		it.type = F8(v, ih, struct btrfs_disk_key, type);
		it.offset = F64(v, ih, struct btrfs_disk_key, offset);
		out_str("\titem ");
		out_u64(i);
		out_char(' ');
		put_key(it.objectid, it.type, it.offset);
		out_str(" itemoff ");
		out_u64(ioff);
		out_str(" itemsize ");
		out_u64(isize);
		out_char('\n');
		if (it.type == 0 && it.objectid == BTRFS_FREE_SPACE_OBJECTID)
			print_free_space_header(&it);
		slot = key_type_slot(it.type);
		if (slot && (fn = key_type_printers[slot - 1]))
			fn(&it);
	}
}

static void print_node_ptrs(const struct print_opts *po, const struct bview *v, uint32_t nr)
{
	uint32_t max = node_ptrs_max(po->nodesize);

	for (uint32_t i = 0; i < nr && i < max; i++) {
		uint64_t p = LEAF_DATA_OFF + (uint64_t)i * sizeof(struct btrfs_key_ptr);

		out_char('\t');
		put_key_at(v, p + offsetof(struct btrfs_key_ptr, key));
		out_fmt(" block %llu gen %llu\n",
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
	} else {
		if (nr > node_ptrs_max(po->nodesize))
			report_warn("node nr_items corrupted, has %u limit %u, continue anyway", nr,
				    node_ptrs_max(po->nodesize));
		print_block_header(po, &v, start);
		print_node_ptrs(po, &v, nr);
	}
	out_flush();
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
	out_str("\t\t\t( ");
	for (size_t i = 0; i < n; i++) {
		if (!(flags & supported) || !(flags & t[i].bit))
			continue;
		out_fmt(first ? "%s " : "|\n\t\t\t  %s ", t[i].name);
		first = 0;
	}
	if (flags & ~supported)
		out_fmt(first ? "unknown flag: 0x%llx " : "|\n\t\t\t  unknown flag: 0x%llx ",
		       (unsigned long long)(flags & ~supported));
	out_str(")\n");
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
		report_error("sys_array_size %u shouldn't exceed %u bytes", size,
			  BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
		return;
	}
	for (int item = 0; cur < size; item++) {
		const struct btrfs_disk_key *key = (const void *)(sb->sys_chunk_array + cur);
		uint16_t n;

		len = sizeof(*key);
		if (cur + len > size)
			goto short_read;
		out_fmt("\titem %d ", item);
		put_disk_key(key);
		out_char('\n');
		cur += len;
		if (key->type != BTRFS_CHUNK_ITEM_KEY) {
			report_error("unexpected item type %u in sys_array at offset %u", key->type, cur);
			return;
		}
		len = one_stripe;
		if (cur + len > size)
			goto short_read;
		n = F16(&v, base + cur, struct btrfs_chunk, num_stripes);
		if (!n) {
			report_error("invalid number of stripes %u in sys_array at offset %u", n, cur);
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
	report_error("sys_array too short to read %u bytes at offset %u", len, cur);
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
		out_fmt("\tbackup %d:\n", i);
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
			out_fmt("\t\t%s%llu\tgen: %llu\tlevel: %d\n",
			       r == 2 && v2 ? "backup_block_group_root:\t" : rows[r].label,
			       (unsigned long long)v64(&v, b + rows[r].root),
			       (unsigned long long)v64(&v, b + rows[r].gen), v8(&v, b + rows[r].level));
		out_fmt("\t\tbackup_total_bytes:\t%llu\n\t\tbackup_bytes_used:\t%llu\n"
		       "\t\tbackup_num_devices:\t%llu\n\n",
		       (unsigned long long)F64(&v, b, struct btrfs_root_backup, total_bytes),
		       (unsigned long long)F64(&v, b, struct btrfs_root_backup, bytes_used),
		       (unsigned long long)F64(&v, b, struct btrfs_root_backup, num_devices));
	}
}

static void print_printable(const char *s, size_t n, int stop_at_nul)
{
	for (size_t i = 0; i < n && !(stop_at_nul && !s[i]); i++)
		out_char(isprint((unsigned char)s[i]) ? s[i] : '.');
}

static void print_super_csum(const struct btrfs_super_block *sb)
{
	uint16_t type = get_le16(&sb->csum_type);
	int valid = type <= CSUM_BLAKE2;
	size_t size = valid ? csum_size(type) : BTRFS_CSUM_SIZE;
	uint8_t sum[CSUM_MAX_SIZE];

	static const char *const names[] = { "crc32c", "xxhash64", "sha256", "blake2" };

	out_fmt("csum_type\t\t%u (%s)\n", type, valid ? names[type] : "INVALID");
	out_fmt("csum_size\t\t%llu\n", (unsigned long long)size);
	out_str("csum\t\t\t0x");
	for (size_t i = 0; i < size; i++)
		out_fmt("%02x", sb->csum[i]);
	if (!valid || csum_supported(type))
		out_str(" [UNKNOWN CSUM TYPE OR SIZE]\n");
	else if (!csum_compute(type, (const uint8_t *)sb + BTRFS_CSUM_SIZE,
			       sizeof(*sb) - BTRFS_CSUM_SIZE, sum) && !memcmp(sum, sb->csum, size))
		out_str(" [match]\n");
	else
		out_str(" [DON'T MATCH]\n");
}

static void print_u64_field(const char *label, uint64_t value)
{
	out_fmt("%s%llu\n", label, (unsigned long long)value);
}

/* "label<value>" lines of n superblock fields: the labels one after the other, each
 * ending with a NUL; fields[i] = SB_FIELD(member): offset << 2 | log2 of the size. */
#define SB_FIELD(m) (uint16_t)(offsetof(struct btrfs_super_block, m) << 2 | \
	(sizeof(((struct btrfs_super_block *)0)->m) == 8 ? 3 : sizeof(((struct btrfs_super_block *)0)->m) == 4 ? 2 : 0))
static void print_sb_fields(const struct btrfs_super_block *sb, const char *labels,
			    const uint16_t *fields, size_t n)
{
	for (size_t i = 0; i < n; i++, labels += strlen(labels) + 1) {
		const uint8_t *p = (const uint8_t *)sb + (fields[i] >> 2);
		unsigned size = fields[i] & 3;

		print_u64_field(labels, size == 3 ? get_le64(p) : size == 2 ? get_le32(p) : *p);
	}
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
	out_fmt("flags\t\t\t0x%llx\n", (unsigned long long)get_le64(&sb->flags));
	FLAG_BLOCK(get_le64(&sb->flags), super_flag_names, SUPER_FLAGS_SUPP);
	out_str("magic\t\t\t");
	print_printable((const char *)&sb->magic, sizeof(sb->magic), 0);
	out_str(get_le64(&sb->magic) == BTRFS_MAGIC_LE ? " [match]\n" : " [DON'T MATCH]\n");
	uuid_unparse(sb->fsid, u);
	out_fmt("fsid\t\t\t%s\n", u);
	uuid_unparse(meta_uuid, u);
	out_fmt("metadata_uuid\t\t%s\n", u);
	out_str("label\t\t\t");
	print_printable(sb->label, BTRFS_LABEL_SIZE, 1);
	out_char('\n');
	print_sb_fields(sb,
			"generation\t\t\0"
			"root\t\t\t\0"
			"sys_array_size\t\t\0"
			"chunk_root_generation\t\0"
			"root_level\t\t\0"
			"chunk_root\t\t\0"
			"chunk_root_level\t\0"
			"log_root\t\t\0"
			"log_root_transid (deprecated)\t\0"
			"log_root_level\t\t\0"
			"total_bytes\t\t\0"
			"bytes_used\t\t\0"
			"sectorsize\t\t\0"
			"nodesize\t\t\0"
			"leafsize (deprecated)\t\0"
			"stripesize\t\t\0"
			"root_dir\t\t\0"
			"num_devices\t\t",
			(const uint16_t[]){
				SB_FIELD(generation), SB_FIELD(root), SB_FIELD(sys_chunk_array_size),
				SB_FIELD(chunk_root_generation), SB_FIELD(root_level),
				SB_FIELD(chunk_root), SB_FIELD(chunk_root_level), SB_FIELD(log_root),
				SB_FIELD(unused_log_root_transid), SB_FIELD(log_root_level),
				SB_FIELD(total_bytes), SB_FIELD(bytes_used), SB_FIELD(sectorsize),
				SB_FIELD(nodesize), SB_FIELD(unused_leafsize), SB_FIELD(stripesize),
				SB_FIELD(root_dir_objectid), SB_FIELD(num_devices) }, 18);
	out_fmt("compat_flags\t\t0x%llx\n", (unsigned long long)get_le64(&sb->compat_flags));
	out_fmt("compat_ro_flags\t\t0x%llx\n", (unsigned long long)get_le64(&sb->compat_ro_flags));
	FLAG_BLOCK(get_le64(&sb->compat_ro_flags), compat_ro_names, COMPAT_RO_SUPP);
	out_fmt("incompat_flags\t\t0x%llx\n", (unsigned long long)incompat);
	FLAG_BLOCK(incompat, incompat_names, INCOMPAT_SUPP);
	print_sb_fields(sb,
			"cache_generation\t\0"
			"uuid_tree_generation\t",
			(const uint16_t[]){
				SB_FIELD(cache_generation), SB_FIELD(uuid_tree_generation) }, 2);
	uuid_unparse(d->uuid, u);
	out_fmt("dev_item.uuid\t\t%s\n", u);
	uuid_unparse(d->fsid, u);
	out_fmt("dev_item.fsid\t\t%s %s\n", u,
	       memcmp(d->fsid, meta_uuid, BTRFS_FSID_SIZE) ? "[DON'T MATCH]" : "[match]");
	print_sb_fields(sb,
			"dev_item.type\t\t\0"
			"dev_item.total_bytes\t\0"
			"dev_item.bytes_used\t\0"
			"dev_item.io_align\t\0"
			"dev_item.io_width\t\0"
			"dev_item.sector_size\t\0"
			"dev_item.devid\t\t\0"
			"dev_item.dev_group\t\0"
			"dev_item.seek_speed\t\0"
			"dev_item.bandwidth\t\0"
			"dev_item.generation\t",
			(const uint16_t[]){
				SB_FIELD(dev_item.type), SB_FIELD(dev_item.total_bytes),
				SB_FIELD(dev_item.bytes_used), SB_FIELD(dev_item.io_align),
				SB_FIELD(dev_item.io_width), SB_FIELD(dev_item.sector_size),
				SB_FIELD(dev_item.devid), SB_FIELD(dev_item.dev_group),
				SB_FIELD(dev_item.seek_speed), SB_FIELD(dev_item.bandwidth),
				SB_FIELD(dev_item.generation) }, 11);
	if (full) {
		out_fmt("sys_chunk_array[%d]:\n", BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
		print_sys_chunk_array(sb);
		out_fmt("backup_roots[%d]:\n", BTRFS_NUM_BACKUP_ROOTS);
		print_backup_roots(sb);
	}
	out_flush();
}
#endif
