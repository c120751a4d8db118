build-prof/obj/fs/super.o: fs/super.c fs/fs.h fs/format.h util/csum.h \
 util/le.h
fs/fs.h:
fs/format.h:
util/csum.h:
util/le.h:
