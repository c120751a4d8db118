build-prof/obj/util/hash_blake2b.o: util/hash_blake2b.c \
 build-prof/gen/config.h util/csum.h util/le.h
build-prof/gen/config.h:
util/csum.h:
util/le.h:
