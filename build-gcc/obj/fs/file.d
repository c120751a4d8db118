build-gcc/obj/fs/file.o: fs/file.c fs/fs.h fs/format.h util/csum.h \
 util/le.h
fs/fs.h:
fs/format.h:
util/csum.h:
util/le.h:
