build-gcc/obj/applets/btrfs.o: applets/btrfs.c build-gcc/gen/config.h \
 applets/applets.h util/cli.h
build-gcc/gen/config.h:
applets/applets.h:
util/cli.h:
