build-prof/obj/util/uuid.o: util/uuid.c util/uuid.h
util/uuid.h:
