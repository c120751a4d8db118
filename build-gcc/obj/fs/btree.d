build-gcc/obj/fs/btree.o: fs/btree.c fs/fs.h fs/format.h util/le.h
fs/fs.h:
fs/format.h:
util/le.h:
