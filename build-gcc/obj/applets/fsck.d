build-gcc/obj/applets/fsck.o: applets/fsck.c build-gcc/gen/config.h \
 util/cli.h
build-gcc/gen/config.h:
util/cli.h:
