build-gcc/obj/fs/open.o: fs/open.c fs/fs.h fs/format.h util/csum.h \
 util/le.h
fs/fs.h:
fs/format.h:
util/csum.h:
util/le.h:
