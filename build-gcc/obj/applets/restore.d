build-gcc/obj/applets/restore.o: applets/restore.c build-gcc/gen/config.h \
 util/cli.h fs/devscan.h fs/fs.h fs/format.h fs/fs.h util/le.h fs/range.h \
 applets/restore_out.h util/units.h
build-gcc/gen/config.h:
util/cli.h:
fs/devscan.h:
fs/fs.h:
fs/format.h:
fs/fs.h:
util/le.h:
fs/range.h:
applets/restore_out.h:
util/units.h:
