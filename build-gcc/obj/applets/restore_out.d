build-gcc/obj/applets/restore_out.o: applets/restore_out.c \
 build-gcc/gen/config.h applets/restore_out.h util/cli.h util/units.h
build-gcc/gen/config.h:
applets/restore_out.h:
util/cli.h:
util/units.h:
