build-prof/obj/fs/block.o: fs/block.c fs/fs.h fs/format.h util/csum.h \
 util/le.h
fs/fs.h:
fs/format.h:
util/csum.h:
util/le.h:
