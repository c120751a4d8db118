build-prof/obj/util/hash_sha256.o: util/hash_sha256.c \
 build-prof/gen/config.h util/csum.h
build-prof/gen/config.h:
util/csum.h:
