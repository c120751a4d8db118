build-prof/obj/applets/fs_usage.o: applets/fs_usage.c \
 build-prof/gen/config.h util/btrfs_ioctl.h util/cli.h util/output.h \
 util/units.h
build-prof/gen/config.h:
util/btrfs_ioctl.h:
util/cli.h:
util/output.h:
util/units.h:
