build-prof/obj/util/csum.o: util/csum.c build-prof/gen/config.h \
 util/csum.h util/le.h
build-prof/gen/config.h:
util/csum.h:
util/le.h:
