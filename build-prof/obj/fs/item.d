build-prof/obj/fs/item.o: fs/item.c fs/fs.h fs/format.h util/le.h
fs/fs.h:
fs/format.h:
util/le.h:
