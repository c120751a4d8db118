build-prof/obj/fs/range.o: fs/range.c fs/range.h fs/fs.h fs/format.h
fs/range.h:
fs/fs.h:
fs/format.h:
