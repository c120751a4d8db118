build-gcc/obj/fs/chunk.o: fs/chunk.c fs/fs.h fs/format.h util/le.h
fs/fs.h:
fs/format.h:
util/le.h:
