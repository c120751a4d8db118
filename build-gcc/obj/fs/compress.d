build-gcc/obj/fs/compress.o: fs/compress.c build-gcc/gen/config.h fs/fs.h \
 fs/format.h util/le.h
build-gcc/gen/config.h:
fs/fs.h:
fs/format.h:
util/le.h:
