build-prof/obj/applets/mount.o: applets/mount.c build-prof/gen/config.h \
 util/btrfs_ioctl.h util/cli.h fs/fs.h fs/format.h util/le.h
build-prof/gen/config.h:
util/btrfs_ioctl.h:
util/cli.h:
fs/fs.h:
fs/format.h:
util/le.h:
