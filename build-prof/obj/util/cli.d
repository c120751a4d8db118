build-prof/obj/util/cli.o: util/cli.c util/cli.h
util/cli.h:
