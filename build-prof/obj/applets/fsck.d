build-prof/obj/applets/fsck.o: applets/fsck.c build-prof/gen/config.h \
 util/cli.h
build-prof/gen/config.h:
util/cli.h:
