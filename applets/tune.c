/* btrfstune: features and identity of an unmounted filesystem changed in its
 * superblocks, as btrfs-progs' tool of that name: the seeding flag (-S), the legacy
 * features that later became defaults (-r, -x, -n), a new fsid kept apart from the
 * metadata's (-m, -M: the tree blocks keep the old one as metadata_uuid), or written
 * into every tree block (-u, -U); the free space and block group trees converted to,
 * simple quotas switched on and off (each one transaction). */
//config:config APPLET_TUNE
//config:	bool "btrfstune"
//config:	default y
//config:	help
//config:	  btrfstune -S 0|1, -r, -x, -n, -m, -M UUID: change the seeding flag,
//config:	  legacy features or the fsid of an unmounted filesystem (with --undo).
//cmd:APPLET_TUNE tune_main btrfstune|Tune settings of filesystem features on an unmounted device

#include "config.h"
#if CFG_APPLET_TUNE
#include "fs/core/devscan.h"
#include "fs/write/write.h"
#include "util/cli/cli.h"
#include "util/csum/csum.h"
#include "util/le.h"
#include "util/uuid.h"
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

USAGE(tune_usage) =
	"usage: btrfstune [options] device\n\n"
	"    Tune settings of filesystem features on an unmounted device\n\n"
	"    Options:\n"
	"    Change feature status:\n"
	"    -r           enable extended inode refs (mkfs: extref, for hardlink limits)\n"
	"    -x           enable skinny metadata extent refs (mkfs: skinny-metadata)\n"
	"    -n           enable no-holes feature (mkfs: no-holes, more efficient sparse file representation)\n"
	"    -S <0|1>     set/unset seeding status of a device\n"
	"    --convert-to-block-group-tree\n"
	"                 convert filesystem to track block groups in the separate block-group-tree instead of extent tree (sets the incompat bit)\n"
	"    --convert-from-block-group-tree\n"
	"                 convert the block group tree back to extent tree (remove the incompat bit)\n"
	"    --convert-to-free-space-tree\n"
	"                 convert filesystem to use free space tree (v2 cache)\n\n"
	"    UUID changes:\n"
	"    -u           rewrite fsid, use a random one\n"
	"    -U UUID      rewrite fsid to UUID\n"
	"    -m           change fsid to a random UUID, copy original fsid into metadata_uuid if it's not NULL,\n"
	"                 this is an incompat change (more lightweight than -u|-U)\n"
	"    -M UUID      change fsid to UUID, copy original fsid into metadata_uuid if it's not NULL,\n"
	"                 this is an incompat change (more lightweight than -u|-U)\n\n"
	"    General:\n"
	"    -f           allow dangerous operations, make sure that you are aware of the dangers\n"
	"    --undo FILE  save what is overwritten to FILE (btrfs rescue undo puts it back)\n"
	"    --help       print this help and exit\n";

struct tune {
	const char *device, *undo, *fsid_text;
	int seeding;                    /* -1: not asked, else the value of -S */
	uint64_t incompat;              /* -r, -x, -n */
	int metadata_uuid;              /* -m or -M */
	int rewrite_fsid;               /* -u or -U: every tree block gets the new fsid */
	int to_bgt, from_bgt, to_fst;   /* --convert-* */
	int simple_quota;               /* 1: --enable-simple-quota, -1: --remove-simple-quota */
	int force;
};

struct fsid_seen { const uint8_t *fsid; int seen; };

/* A block device holding a filesystem with this fsid: seen (and the scan stops). */
static int fsid_seen(const char *path, const struct btrfs_super_block *sb, void *ctx)
{
	struct fsid_seen *s = ctx;

	(void)path;
	s->seen |= !memcmp(sb->fsid, s->fsid, BTRFS_FSID_SIZE);
	return s->seen;
}

/* No block device holds a filesystem with this fsid. */
static int fsid_unique(const uint8_t *fsid)
{
	struct fsid_seen seen = { fsid, 0 };

	fs_scan_block_devices(fsid_seen, &seen);
	return !seen.seen;
}

static int ask(const char *question)
{
	printf("%s [y/N]: ", question);
	fflush(stdout);
	return isatty(STDIN_FILENO) && tolower(getchar()) == 'y';
}

/* -S: 0 when the superblock is to be written, else the exit code. */
static int set_seeding(struct fs *fs, const struct tune *t)
{
	uint64_t flags = get_le64(&fs->sb.flags);

	if (get_le64(&fs->sb.incompat_flags) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID) {
		msg_error("SEED flag cannot be changed on a metadata-uuid changed fs");
		return 1;
	}
	if (t->seeding && (flags & BTRFS_SUPER_FLAG_SEEDING)) {
		if (!t->force)
			msg_warn("seeding flag is already set on %s", t->device);
		return !t->force;
	}
	if (t->seeding && get_le64(&fs->sb.log_root)) {
		msg_error("filesystem with dirty log detected, not setting seed flag");
		return 1;
	}
	if (!t->seeding && !(flags & BTRFS_SUPER_FLAG_SEEDING)) {
		msg_warn("seeding flag is not set on %s", t->device);
		return 1;
	}
	if (!t->seeding && !t->force) {
		msg_warn("this is dangerous, clearing the seeding flag may cause the derived device not to be mountable!");
		if (!ask("We are going to clear the seeding flag, are you sure?")) {
			msg_error("clear seeding flag canceled");
			return 1;
		}
	}
	put_le64(&fs->sb.flags, t->seeding ? flags | BTRFS_SUPER_FLAG_SEEDING : flags & ~BTRFS_SUPER_FLAG_SEEDING);
	if (!t->seeding)
		msg_warn("seeding flag cleared on %s", t->device);
	return 0;
}

/* A metadata uuid change cut short: a device still says it is in progress. */
static int metadata_uuid_cut_short(const struct fs *fs)
{
	for (int i = 0; i < fs->num_devs; i++)
		if (get_le64(&fs->devs[i].sb.flags) & BTRFS_SUPER_FLAG_CHANGING_FSID_V2)
			return 1;
	return 0;
}

/* -m / -M: the new fsid; the blocks keep theirs as the metadata_uuid (none when the
 * fsid goes back to it). Two commits: the change marked in progress, then made. A
 * change cut short is finished instead: the newest superblock's fsid on every device. */
static int set_metadata_uuid(struct fs *fs, const struct tune *t)
{
	struct btrfs_super_block *sb = &fs->sb;
	uint64_t incompat = get_le64(&sb->incompat_flags), flags = get_le64(&sb->flags);
	int changed = !!(incompat & BTRFS_FEATURE_INCOMPAT_METADATA_UUID), unfinished = metadata_uuid_cut_short(fs);
	int new_fsid;
	uint8_t fsid[BTRFS_FSID_SIZE];

	if (flags & BTRFS_SUPER_FLAG_SEEDING) {
		msg_error("cannot set metadata UUID on a seed device");
		return 1;
	}
	if (t->fsid_text)
		uuid_parse(t->fsid_text, fsid);
	else if (unfinished)
		memcpy(fsid, sb->fsid, BTRFS_FSID_SIZE);
	else
		uuid_generate(fsid);
	new_fsid = !!memcmp(fsid, sb->fsid, BTRFS_FSID_SIZE);
	if (unfinished && new_fsid) {
		msg_error("new fsid %s is not the same with unfinished fsid change", t->fsid_text);
		return 1;
	}
	if (!new_fsid && !unfinished)
		return 0;
	put_le64(&sb->flags, flags | BTRFS_SUPER_FLAG_CHANGING_FSID_V2);
	if (fs_super_commit(fs))
		return -1;
	if (new_fsid && changed && !memcmp(sb->metadata_uuid, fsid, BTRFS_FSID_SIZE)) {
		put_le64(&sb->incompat_flags, incompat & ~BTRFS_FEATURE_INCOMPAT_METADATA_UUID);
		memset(sb->metadata_uuid, 0, BTRFS_FSID_SIZE);
	} else if (new_fsid && !changed) {
		put_le64(&sb->incompat_flags, incompat | BTRFS_FEATURE_INCOMPAT_METADATA_UUID);
		memcpy(sb->metadata_uuid, sb->fsid, BTRFS_FSID_SIZE);
	}
	memcpy(sb->fsid, fsid, BTRFS_FSID_SIZE);
	put_le64(&sb->flags, flags & ~BTRFS_SUPER_FLAG_CHANGING_FSID_V2);
	return 0;
}

/* ---- -u / -U ------------------------------------------------------------------- */

/* A tree block written in its place with the new fsid in its header (every copy; the
 * undo file keeps the old bytes). */
static int restamp_block(struct fs *fs, uint64_t bytenr, const uint8_t *fsid, uint8_t *buf)
{
	struct fs_block *b = fs_block_read(fs, bytenr, &FS_EXPECT_NONE);
	struct btrfs_header *h = (struct btrfs_header *)buf;

	if (!b)
		return fs->err.code ? fs->err.code : -EIO;
	memcpy(buf, b->data, fs->nodesize);
	fs_block_forget(fs, b);         /* read again, it has the new fsid */
	if (!memcmp(h->fsid, fsid, BTRFS_FSID_SIZE))
		return 0;       /* done before the cut */
	memcpy(h->fsid, fsid, BTRFS_FSID_SIZE);
	csum_stamp(fs->csum_type, buf, fs->nodesize);
	return fs_write_logical(fs, bytenr, buf, fs->nodesize);
}

/* Every tree block the extent tree knows (the chunk tree's too). */
static int restamp_blocks(struct fs *fs, const uint8_t *fsid)
{
	struct fs_key k = { 0, 0, 0 };
	uint8_t *buf = malloc(fs->nodesize);
	struct fs_root er;
	struct fs_path p;
	int ret = buf ? fs_root_lookup(fs, BTRFS_EXTENT_TREE_OBJECTID, &er) : -ENOMEM;

	fs_path_init(&p);
	for (ret = ret ? ret : fs_search(fs, &er, &k, &p); ret == 0; ret = fs_next(fs, &p)) {
		struct fs_extent_info ei;
		uint32_t size;
		const uint8_t *d = fs_path_data(&p, &size);

		fs_path_key(&p, &k);
		if ((k.type == BTRFS_METADATA_ITEM_KEY || k.type == BTRFS_EXTENT_ITEM_KEY) &&
		    !fs_extent_item(d, size, k.type, &ei) && (ei.flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) &&
		    (ret = restamp_block(fs, k.objectid, fsid, buf)))
			break;
	}
	fs_path_release(fs, &p);
	free(buf);
	return ret < 0 ? ret : 0;
}

struct restamp { struct fs *fs; const uint8_t *fsid; };

/* The fsid of each device item of a chunk tree leaf, the leaf written in its place. */
static int restamp_dev_items(void *ctx, const struct fs_block *b)
{
	struct fs *fs = ((struct restamp *)ctx)->fs;
	const uint8_t *fsid = ((struct restamp *)ctx)->fsid;
	uint8_t *buf = malloc(b->size);
	int changed = 0, ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, b->data, b->size);
	for (uint32_t i = 0; i < fs_block_nritems(b); i++) {
		struct fs_key k;
		uint32_t size;
		const uint8_t *d = fs_item_data(b, i, &size);

		fs_item_key(b, i, &k);
		if (k.type == BTRFS_DEV_ITEM_KEY && fs_dev_item(d, size) &&
		    memcmp(((const struct btrfs_dev_item *)d)->fsid, fsid, BTRFS_FSID_SIZE)) {
			memcpy(buf + (d - b->data) + offsetof(struct btrfs_dev_item, fsid), fsid, BTRFS_FSID_SIZE);
			changed = 1;
		}
	}
	if (changed) {
		csum_stamp(fs->csum_type, buf, b->size);
		ret = fs_write_logical(fs, b->bytenr, buf, b->size);
	}
	free(buf);
	return ret;
}

/* -u / -U: the new fsid in the superblocks first (marked CHANGING_FSID, the dev items
 * keep the old one: a change cut short is finished by running it again), then in every
 * tree block, then in the device items; the mark goes last. */
static int rewrite_fsid(struct fs *fs, const struct tune *t)
{
	struct btrfs_super_block *sb = &fs->sb;
	struct fs_walk_ops ops = { NULL, restamp_dev_items, NULL };
	uint8_t fsid[BTRFS_FSID_SIZE];
	char was[UUID_STR_LEN], now[UUID_STR_LEN];
	struct fs_root chunk;
	struct restamp ctx = { fs, fsid };

	if (get_le64(&sb->incompat_flags) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID) {
		msg_error("Cannot rewrite fsid while METADATA_UUID flag is active. \n"
			  "Ensure fsid and metadata_uuid match before retrying.");
		return 1;
	}
	if (fs->num_seeds || get_le64(&sb->log_root)) {
		msg_error(fs->num_seeds ? "cannot rewrite the fsid of a filesystem with seed devices"
					: "filesystem with dirty log detected, not rewriting the fsid");
		return 1;
	}
	if (fs->changing_fsid && t->fsid_text && uuid_parse(t->fsid_text, fsid) == 0 &&
	    memcmp(fsid, sb->fsid, BTRFS_FSID_SIZE)) {
		msg_error("new fsid %s is not the same with unfinished fsid change", t->fsid_text);
		return 1;
	}
	if (fs->changing_fsid)
		memcpy(fsid, sb->fsid, BTRFS_FSID_SIZE);
	else if (t->fsid_text)
		uuid_parse(t->fsid_text, fsid);
	else
		uuid_generate(fsid);
	if (!t->force) {
		msg_warn("it's recommended to run 'btrfs check --readonly' before this operation.\n"
			 "\tThe whole operation must finish before the filesystem can be mounted again.\n"
			 "\tIf cancelled or interrupted, run 'btrfstune -u' to restart.");
		if (!ask("We are going to change UUID, are your sure?")) {
			msg_error("UUID change canceled");
			return 1;
		}
	}
	uuid_unparse(fs->meta_uuid, was);
	uuid_unparse(fsid, now);
	printf("Current fsid: %s\nNew fsid: %s\nSet superblock flag CHANGING_FSID\n", was, now);
	put_le64(&sb->flags, get_le64(&sb->flags) | BTRFS_SUPER_FLAG_CHANGING_FSID);
	memcpy(sb->fsid, fsid, BTRFS_FSID_SIZE);
	if (fs_super_commit(fs))
		return -1;
	memcpy(fs->fsid, fsid, BTRFS_FSID_SIZE);
	fs->changing_fsid = 1;
	printf("Change fsid in extent tree\n");
	if (restamp_blocks(fs, fsid) || fs_flush(fs))
		return -1;
	printf("Change fsid in chunk tree\n");
	if (fs_root_lookup(fs, BTRFS_CHUNK_TREE_OBJECTID, &chunk) || fs_tree_walk(fs, &chunk, &ops, &ctx) ||
	    fs_flush(fs))
		return -1;
	for (int i = 0; i < fs->num_devs; i++)
		memcpy(fs->devs[i].sb.dev_item.fsid, fsid, BTRFS_FSID_SIZE);
	memcpy(sb->dev_item.fsid, fsid, BTRFS_FSID_SIZE);
	memcpy(fs->meta_uuid, fsid, BTRFS_FSID_SIZE);
	printf("Clear superblock flag CHANGING_FSID\n");
	put_le64(&sb->flags, get_le64(&sb->flags) & ~BTRFS_SUPER_FLAG_CHANGING_FSID);
	if (fs_super_commit(fs))
		return -1;
	printf("Fsid change finished\n");
	return 0;
}

/* ---- conversions ------------------------------------------------------------------- */

static int to_fst(struct fs *fs, void *ctx)
{
	(void)ctx;
	return fs_space_cache_v1_clear(fs) || fs_fst_rebuild(fs) ? -1 : 0;
}

static int to_bgt(struct fs *fs, void *ctx)
{
	return fs_block_group_tree_convert(fs, *(int *)ctx);
}

/* --convert-*: one transaction each (a power cut leaves the old or the new). */
static int convert(struct fs *fs, const struct tune *t)
{
	uint64_t ro = get_le64(&fs->sb.compat_ro_flags);
	int own = t->to_bgt;

	if (t->to_bgt && t->from_bgt) {
		msg_error("option --convert-to-block-group-tree conflicts with --convert-from-block-group-tree");
		return 1;
	}
	if (t->to_fst) {
		if (ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID) {
			msg_error("filesystem already has free-space-tree feature");
			return 1;
		}
		return fs_tx_run(fs, to_fst, NULL) ? -1 : 0;
	}
	if (t->to_bgt && (ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE)) {
		msg_error("the filesystem already has block group tree feature");
		return 1;
	}
	if (t->to_bgt && !(ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID)) {
		msg_error("the filesystem doesn't have space cache v2, needs to be mounted with \"-o space_cache=v2\" first");
		return 1;
	}
	if (t->from_bgt && !(ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE)) {
		msg_error("filesystem doesn't have block-group-tree feature");
		return 1;
	}
	return fs_tx_run(fs, to_bgt, &own) ? -1 : 0;
}

static int simple_quota(struct fs *fs, void *ctx)
{
	return *(int *)ctx > 0 ? fs_simple_quota_enable(fs) : fs_simple_quota_remove(fs);
}

/* The change asked for, in the superblocks: 0, or the exit code (-1: writing failed). */
static int tune(struct fs *fs, const struct tune *t)
{
	int ret = 0;

	if (t->rewrite_fsid)
		return rewrite_fsid(fs, t);
	if (t->to_bgt || t->from_bgt || t->to_fst)
		return convert(fs, t);
	if (t->simple_quota)
		return fs_tx_run(fs, simple_quota, (void *)&t->simple_quota) ? -1 : 0;
	if (t->seeding >= 0)
		ret = set_seeding(fs, t);
	else if (t->incompat)
		put_le64(&fs->sb.incompat_flags, get_le64(&fs->sb.incompat_flags) | t->incompat);
	else
		ret = set_metadata_uuid(fs, t);
	return ret ? ret : fs_super_commit(fs) ? -1 : 0;
}

static void parse(int argc, char **argv, struct tune *t)
{
	int c, groups;

	memset(t, 0, sizeof(*t));
	t->seeding = -1;
	while ((c = cli_getopt_long(argc, argv, "S:rxnfmM:uU:", "undo:=Z convert-to-block-group-tree=B "
				    "convert-from-block-group-tree=E convert-to-free-space-tree=F enable-simple-quota=q "
				    "remove-simple-quota=Q", tune_usage)) != -1) {
		if (c == 'S')
			t->seeding = (int)cli_arg_u64(optarg);
		else if (c == 'r' || c == 'x' || c == 'n')
			t->incompat |= c == 'r' ? BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF :
				       c == 'x' ? BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA : BTRFS_FEATURE_INCOMPAT_NO_HOLES;
		else if (c == 'm' || c == 'M')
			t->metadata_uuid = 1, t->fsid_text = c == 'M' ? optarg : NULL;
		else if (c == 'u' || c == 'U')
			t->rewrite_fsid = 1, t->fsid_text = c == 'U' ? optarg : NULL;
		else if (c == 'f')
			t->force = 1;
		else if (c == 'B' || c == 'E')
			*(c == 'B' ? &t->to_bgt : &t->from_bgt) = 1;
		else if (c == 'F')
			t->to_fst = 1;
		else if (c == 'q' || c == 'Q')
			t->simple_quota = c == 'q' ? 1 : -1;
		else
			t->undo = optarg;
	}
	cli_check_argc(argc, 1, 1, tune_usage);
	t->device = argv[optind];
	groups = (t->seeding >= 0) + !!t->incompat + t->metadata_uuid + t->rewrite_fsid + (t->to_bgt || t->from_bgt) +
		 t->to_fst + !!t->simple_quota;
	if (groups != 1)
		cli_usage_error(tune_usage, groups ? "too many conflicting options specified"
						   : "at least one option should be specified");
}

int tune_main(int argc, char **argv)
{
	struct fs_wopen_opts o;
	struct fs_error err;
	struct tune t;
	struct fs *fs;
	uint8_t fsid[BTRFS_FSID_SIZE];
	char buf[320];
	int ret;

	parse(argc, argv, &t);
	if (t.fsid_text && uuid_parse(t.fsid_text, fsid)) {
		msg_error("could not parse UUID: %s", t.fsid_text);
		return 1;
	}
	fs_wopen_opts_init(&o);
	/* the superblocks are all the others change */
	o.open.partial = o.open.skip_chunk_tree = !t.rewrite_fsid && !t.to_bgt && !t.from_bgt && !t.to_fst &&
						  !t.simple_quota;
	o.open.fsid_change = t.rewrite_fsid;
	fs = fs_wopen(&t.device, 1, &o, &err);
	if (!fs) {
		msg_error(err.code == -EBUSY ? "%s is mounted" : "open ctree failed: %s",
			  err.code == -EBUSY ? t.device : fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	if ((t.metadata_uuid || t.rewrite_fsid) && fs->num_devs < (int)get_le64(&fs->sb.num_devices)) {
		msg_error("missing %d device(s), failing the command", (int)get_le64(&fs->sb.num_devices) - fs->num_devs);
		fs_wclose(fs);
		return 1;
	}
	if (t.fsid_text && !(fs->changing_fsid && !memcmp(fsid, fs->sb.fsid, BTRFS_FSID_SIZE)) &&
	    !fsid_unique(fsid)) {
		/* (a change cut short, finished with its own fsid, is no clash) */
		msg_error("fsid %s is not unique", t.fsid_text);
		fs_wclose(fs);
		return 1;
	}
	ret = t.undo && fs_undo_start(fs, t.undo) ? -1 : tune(fs, &t);
	if (ret < 0)
		msg_error("btrfstune failed: %s", fs_error_format(&fs->err, buf, sizeof(buf)));
	if (fs_wclose(fs) && !ret)
		ret = -1;
	return ret ? 1 : 0;
}
#endif
