build-prof/obj/applets/mkfs.o: applets/mkfs.c build-prof/gen/config.h \
 util/cli.h
build-prof/gen/config.h:
util/cli.h:
