build-prof/obj/applets/filesystem.o: applets/filesystem.c \
 build-prof/gen/config.h util/btrfs_ioctl.h util/cli.h fs/fs.h \
 fs/format.h util/le.h util/output.h fs/super_label.h util/units.h \
 util/uuid.h
build-prof/gen/config.h:
util/btrfs_ioctl.h:
util/cli.h:
fs/fs.h:
fs/format.h:
util/le.h:
util/output.h:
fs/super_label.h:
util/units.h:
util/uuid.h:
