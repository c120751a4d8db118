build-prof/obj/fs/compress.o: fs/compress.c build-prof/gen/config.h \
 fs/fs.h fs/format.h util/le.h build/deps-musl/include/zlib.h \
 build/deps-musl/include/zconf.h build/deps-musl/include/lzo/lzo1x.h \
 build/deps-musl/include/lzo/lzoconf.h \
 build/deps-musl/include/lzo/lzodefs.h build/deps-musl/include/zstd.h
build-prof/gen/config.h:
fs/fs.h:
fs/format.h:
util/le.h:
build/deps-musl/include/zlib.h:
build/deps-musl/include/zconf.h:
build/deps-musl/include/lzo/lzo1x.h:
build/deps-musl/include/lzo/lzoconf.h:
build/deps-musl/include/lzo/lzodefs.h:
build/deps-musl/include/zstd.h:
