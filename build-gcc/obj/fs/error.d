build-gcc/obj/fs/error.o: fs/error.c fs/fs.h fs/format.h util/le.h
fs/fs.h:
fs/format.h:
util/le.h:
