build-prof/obj/applets/btrfs.o: applets/btrfs.c build-prof/gen/config.h \
 applets/applets.h util/cli.h
build-prof/gen/config.h:
applets/applets.h:
util/cli.h:
