build-prof/obj/util/btrfs_ioctl.o: util/btrfs_ioctl.c util/btrfs_ioctl.h \
 util/cli.h util/le.h
util/btrfs_ioctl.h:
util/cli.h:
util/le.h:
