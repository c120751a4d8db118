build-gcc/obj/util/hash_blake2b.o: util/hash_blake2b.c \
 build-gcc/gen/config.h util/csum.h util/le.h
build-gcc/gen/config.h:
util/csum.h:
util/le.h:
