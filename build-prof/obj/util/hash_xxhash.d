build-prof/obj/util/hash_xxhash.o: util/hash_xxhash.c \
 build-prof/gen/config.h util/csum.h util/le.h
build-prof/gen/config.h:
util/csum.h:
util/le.h:
