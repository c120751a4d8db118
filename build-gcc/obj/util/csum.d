build-gcc/obj/util/csum.o: util/csum.c build-gcc/gen/config.h util/csum.h \
 util/le.h
build-gcc/gen/config.h:
util/csum.h:
util/le.h:
