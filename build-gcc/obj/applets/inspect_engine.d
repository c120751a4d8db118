build-gcc/obj/applets/inspect_engine.o: applets/inspect_engine.c \
 build-gcc/gen/config.h util/cli.h fs/fs.h fs/format.h util/le.h
build-gcc/gen/config.h:
util/cli.h:
fs/fs.h:
fs/format.h:
util/le.h:
