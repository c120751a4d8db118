build-prof/obj/applets/inspect_engine.o: applets/inspect_engine.c \
 build-prof/gen/config.h util/cli.h fs/fs.h fs/format.h util/le.h
build-prof/gen/config.h:
util/cli.h:
fs/fs.h:
fs/format.h:
util/le.h:
