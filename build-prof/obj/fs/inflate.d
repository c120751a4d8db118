build-prof/obj/fs/inflate.o: fs/inflate.c build-prof/gen/config.h \
 fs/inflate.h fs/fs.h fs/format.h build/deps-musl/include/zstd.h
build-prof/gen/config.h:
fs/inflate.h:
fs/fs.h:
fs/format.h:
build/deps-musl/include/zstd.h:
