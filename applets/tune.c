/* btrfstune: features and identity of an unmounted filesystem changed in its
 * superblocks, as btrfs-progs' tool of that name: the seeding flag (-S), the legacy
 * features that later became defaults (-r, -x, -n), a new fsid kept apart from the
 * metadata's (-m, -M: the tree blocks keep the old one as metadata_uuid). */
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
#include "util/le.h"
#include "util/uuid.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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
	"    -S <0|1>     set/unset seeding status of a device\n\n"
	"    UUID changes:\n"
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

/* -m / -M: the new fsid; the blocks keep theirs as the metadata_uuid (none when the
 * fsid goes back to it). Two commits: the change marked in progress, then made. */
static int set_metadata_uuid(struct fs *fs, const struct tune *t)
{
	struct btrfs_super_block *sb = &fs->sb;
	uint64_t incompat = get_le64(&sb->incompat_flags), flags = get_le64(&sb->flags);
	int changed = !!(incompat & BTRFS_FEATURE_INCOMPAT_METADATA_UUID);
	uint8_t fsid[BTRFS_FSID_SIZE];

	if (flags & BTRFS_SUPER_FLAG_SEEDING) {
		msg_error("cannot set metadata UUID on a seed device");
		return 1;
	}
	if (t->fsid_text)
		uuid_parse(t->fsid_text, fsid);
	else
		uuid_generate(fsid);
	if (!memcmp(fsid, sb->fsid, BTRFS_FSID_SIZE))
		return 0;
	put_le64(&sb->flags, flags | BTRFS_SUPER_FLAG_CHANGING_FSID_V2);
	if (fs_super_commit(fs))
		return -1;
	if (changed && !memcmp(sb->metadata_uuid, fsid, BTRFS_FSID_SIZE)) {
		put_le64(&sb->incompat_flags, incompat & ~BTRFS_FEATURE_INCOMPAT_METADATA_UUID);
		memset(sb->metadata_uuid, 0, BTRFS_FSID_SIZE);
	} else if (!changed) {
		put_le64(&sb->incompat_flags, incompat | BTRFS_FEATURE_INCOMPAT_METADATA_UUID);
		memcpy(sb->metadata_uuid, sb->fsid, BTRFS_FSID_SIZE);
	}
	memcpy(sb->fsid, fsid, BTRFS_FSID_SIZE);
	put_le64(&sb->flags, flags & ~BTRFS_SUPER_FLAG_CHANGING_FSID_V2);
	return 0;
}

/* The change asked for, in the superblocks: 0, or the exit code (-1: writing failed). */
static int tune(struct fs *fs, const struct tune *t)
{
	int ret = 0;

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
	while ((c = cli_getopt_long(argc, argv, "S:rxnfmM:", "undo:=U", tune_usage)) != -1) {
		if (c == 'S')
			t->seeding = (int)cli_arg_u64(optarg);
		else if (c == 'r' || c == 'x' || c == 'n')
			t->incompat |= c == 'r' ? BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF :
				       c == 'x' ? BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA : BTRFS_FEATURE_INCOMPAT_NO_HOLES;
		else if (c == 'm' || c == 'M')
			t->metadata_uuid = 1, t->fsid_text = c == 'M' ? optarg : NULL;
		else if (c == 'f')
			t->force = 1;
		else
			t->undo = optarg;
	}
	cli_check_argc(argc, 1, 1, tune_usage);
	t->device = argv[optind];
	groups = (t->seeding >= 0) + !!t->incompat + t->metadata_uuid;
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
	if (t.fsid_text) {
		struct fsid_seen seen = { fsid, 0 };

		fs_scan_block_devices(fsid_seen, &seen);
		if (seen.seen) {
			msg_error("fsid %s is not unique", t.fsid_text);
			return 1;
		}
	}
	fs_wopen_opts_init(&o);
	o.open.partial = o.open.skip_chunk_tree = 1;    /* the superblocks are all it changes */
	fs = fs_wopen(&t.device, 1, &o, &err);
	if (!fs) {
		msg_error(err.code == -EBUSY ? "%s is mounted" : "open ctree failed: %s",
			  err.code == -EBUSY ? t.device : fs_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	if (t.metadata_uuid && fs->num_devs < (int)get_le64(&fs->sb.num_devices)) {
		msg_error("missing %d device(s), failing the command", (int)get_le64(&fs->sb.num_devices) - fs->num_devs);
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
