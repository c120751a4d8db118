build-gcc/obj/applets/mkfs.o: applets/mkfs.c build-gcc/gen/config.h \
 util/cli.h
build-gcc/gen/config.h:
util/cli.h:
