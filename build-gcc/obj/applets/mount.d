build-gcc/obj/applets/mount.o: applets/mount.c build-gcc/gen/config.h \
 util/cli.h
build-gcc/gen/config.h:
util/cli.h:
