build-gcc/obj/util/units.o: util/units.c util/units.h
util/units.h:
