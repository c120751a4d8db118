build-prof/obj/applets/check.o: applets/check.c build-prof/gen/config.h \
 util/cli.h
build-prof/gen/config.h:
util/cli.h:
