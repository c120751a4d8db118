build-gcc/obj/applets/btrfsbox.o: applets/btrfsbox.c applets/applets.h \
 util/cli.h build-gcc/gen/config.h build-gcc/gen/commands.h
applets/applets.h:
util/cli.h:
build-gcc/gen/config.h:
build-gcc/gen/commands.h:
