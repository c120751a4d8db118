build-gcc/obj/util/hash_xxhash.o: util/hash_xxhash.c \
 build-gcc/gen/config.h util/csum.h util/le.h
build-gcc/gen/config.h:
util/csum.h:
util/le.h:
