build-prof/obj/util/crc32c.o: util/crc32c.c util/csum.h util/le.h
util/csum.h:
util/le.h:
