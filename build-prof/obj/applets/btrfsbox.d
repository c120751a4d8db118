build-prof/obj/applets/btrfsbox.o: applets/btrfsbox.c applets/applets.h \
 util/cli.h build-prof/gen/config.h build-prof/gen/commands.h
applets/applets.h:
util/cli.h:
build-prof/gen/config.h:
build-prof/gen/commands.h:
