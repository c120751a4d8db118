build-gcc/obj/util/hash_sha256.o: util/hash_sha256.c \
 build-gcc/gen/config.h util/csum.h
build-gcc/gen/config.h:
util/csum.h:
