build-gcc/obj/applets/check.o: applets/check.c build-gcc/gen/config.h \
 util/cli.h
build-gcc/gen/config.h:
util/cli.h:
