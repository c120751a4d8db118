build-prof/obj/util/output.o: util/output.c util/output.h util/cli.h \
 util/uuid.h
util/output.h:
util/cli.h:
util/uuid.h:
