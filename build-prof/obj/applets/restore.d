build-prof/obj/applets/restore.o: applets/restore.c \
 build-prof/gen/config.h util/btrfs_ioctl.h util/cli.h fs/devscan.h \
 fs/fs.h fs/format.h fs/fs.h fs/inflate.h util/le.h fs/range.h \
 applets/restore_out.h util/units.h
build-prof/gen/config.h:
util/btrfs_ioctl.h:
util/cli.h:
fs/devscan.h:
fs/fs.h:
fs/format.h:
fs/fs.h:
fs/inflate.h:
util/le.h:
fs/range.h:
applets/restore_out.h:
util/units.h:
