build-prof/obj/fs/super_label.o: fs/super_label.c fs/super_label.h \
 util/csum.h fs/fs.h fs/format.h util/le.h
fs/super_label.h:
util/csum.h:
fs/fs.h:
fs/format.h:
util/le.h:
