build-prof/obj/fs/devscan.o: fs/devscan.c fs/devscan.h fs/fs.h \
 fs/format.h util/le.h
fs/devscan.h:
fs/fs.h:
fs/format.h:
util/le.h:
