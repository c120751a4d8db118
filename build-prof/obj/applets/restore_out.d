build-prof/obj/applets/restore_out.o: applets/restore_out.c \
 build-prof/gen/config.h applets/restore_out.h util/cli.h util/units.h
build-prof/gen/config.h:
applets/restore_out.h:
util/cli.h:
util/units.h:
