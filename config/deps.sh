#!/bin/sh
# Builds size-tuned static zlib, lzo2 and zstd for one C compiler from the Debian
# bookworm source packages, and a kernel UAPI header directory usable without the
# glibc headers.  Usage: sh config/deps.sh OUTDIR CC   (e.g. build/deps-musl musl-gcc)
#
# Result:  OUTDIR/include/{zlib.h,zconf.h,lzo/*.h,zstd.h,zstd_errors.h}
#          OUTDIR/lib/{libz.a,liblzo2.a,libzstd.a}
#          OUTDIR/kinc/{linux,asm,asm-generic} -> /usr/include/...
#
# Native builds (DEPS_MUSL=1, the Makefile's default): musl itself is built first from
# Debian's source package with the host's gcc into OUTDIR/musl, as musl's configure sets it
# up by default (-Os; its malloc, string and internal functions -O3; no stack protector):
# 15 KB smaller than Debian's libc.a (-O2, stack protector); CC must be
# OUTDIR/musl/bin/musl-gcc.
# Cross builds (make ARCH=...): with DEPS_TARGET set to a GNU triplet (mips-linux-gnu),
# musl itself is built first from Debian's source package with Debian's cross compiler
# (DEPS_TARGET-gcc) into OUTDIR/musl, and CC must be OUTDIR/musl/bin/musl-gcc, the wrapper
# that build installs; kinc links the target's UAPI headers (/usr/DEPS_TARGET/include, from
# linux-libc-dev-ARCH-cross): the host's asm/ would encode ioctl numbers the host's way.
# DEPS_CFLAGS are added to every file of zlib, lzo2 and zstd (e.g. -mips16), DEPS_MUSL_CFLAGS
# to musl's.
# Cached: nothing happens while OUTDIR/.recipe matches RECIPE, CC and the target.
# Bump RECIPE whenever a source list, version or flag below changes.
set -eu
RECIPE=6

die() { echo "deps: ERROR: $*" >&2; exit 1; }

[ $# -ge 2 ] && [ -n "$1" ] && [ -n "$2" ] || die "usage: sh config/deps.sh OUTDIR CC"
out=$1
shift
cc=$*
target=${DEPS_TARGET-}
own_musl=${target:-${DEPS_MUSL-}}
stamp="RECIPE=$RECIPE CC=$cc${target:+ TARGET=$target CFLAGS=${DEPS_CFLAGS-} MUSL_CFLAGS=${DEPS_MUSL_CFLAGS-}}${DEPS_MUSL:+ MUSL=own}"
if [ -f "$out/.recipe" ] && [ "$(cat "$out/.recipe")" = "$stamp" ]; then
	touch "$out/.recipe"	# up to date: tell make so
	exit 0
fi

# Debian bookworm release versions; used when the default (possibly security
# pool) version of a source package cannot be fetched.
ZLIB_VERSION=1:1.2.13.dfsg-1
MUSL_VERSION=1.2.3-1
LZO2_VERSION=2.10-2
ZSTD_VERSION=1.5.4+dfsg2-5

# -fno-pie: linked into a static program, not position-independent (as the Makefile)
CFLAGS="-Os -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables
	-fno-unwind-tables -fno-stack-protector -fno-pie -DNDEBUG -w ${DEPS_CFLAGS-}"
# zstd: no legacy formats, threads, dictionary builder or asm; the smaller variant
# of each decoder path; no forced inlining (~110 KB instead of ~250 KB linked).
ZSTD_CFLAGS="-DZSTD_LEGACY_SUPPORT=0 -DZSTD_NO_INLINE -DHUF_FORCE_DECOMPRESS_X1
	-DZSTD_FORCE_DECOMPRESS_SEQUENCES_SHORT -DZSTD_DISABLE_ASM -DDYNAMIC_BMI2=0
	-DZSTD_TRACE=0 -DDEBUGLEVEL=0 -DXXH_NAMESPACE=ZSTD_"
# ...except the decoders where decompression spends its time (sequences, Huffman
# literals, FSE tables): built for speed they cost ~11 KB and make decompression about
# twice as fast, as fast as the distribution's libzstd (btrfs restore of zstd data was
# 1.5x slower with all of it size-tuned, and 5% slower with only the sequences fast).
ZSTD_FAST_FILES="decompress/zstd_decompress_block.c decompress/huf_decompress.c common/fse_decompress.c common/entropy_common.c"
FAST_CFLAGS="-O2 -UZSTD_NO_INLINE"
# zlib: btrfs stores zlib-wrapped deflate streams; gzip streams are not supported.
ZLIB_CFLAGS="-DNO_GZIP"

jobs=$(nproc 2>/dev/null || echo 2)
fast_files=
AR=${AR:-${target:+$target-}ar}

command -v apt-get >/dev/null || die "apt-get not found (Debian host needed)"
command -v dpkg-source >/dev/null || die "dpkg-source not found: run 'sh .ci/setup' (dpkg-dev)"
if [ -n "$target" ]; then
	command -v "$target-gcc" >/dev/null ||
		die "$target-gcc not found: run 'sh .ci/setup-cross' (Debian's gcc-$target)"
	[ -d "/usr/$target/include/asm" ] ||
		die "/usr/$target/include/asm missing: run 'sh .ci/setup-cross' (linux-libc-dev-*-cross)"
elif [ -n "$own_musl" ]; then
	command -v gcc >/dev/null || die "gcc not found: run 'sh .ci/setup'"
else
	echo 'int deps_probe;' | $cc -x c -c -o /dev/null - 2>/dev/null ||
		die "compiler '$cc' does not work"
fi

for d in .recipe include lib kinc src obj musl; do
	rm -rf "${out:?}/$d"
done
mkdir -p "$out/include" "$out/lib" "$out/kinc" "$out/src" "$out/obj"
out=$(cd "$out" && pwd)
[ -z "$own_musl" ] || cc=$out/musl/bin/musl-gcc

# fetch PACKAGE FALLBACK_VERSION: unpacks the source package under $out/src and
# sets pkg, ver and src (the unpacked tree).
fetch() {
	pkg=$1
	dir=$out/src/$1
	sandbox=""
	[ "$(id -u)" -ne 0 ] || sandbox="-oAPT::Sandbox::User=root"
	for want in "$1" "$1=$2"; do
		rm -rf "$dir" && mkdir -p "$dir"
		if (cd "$dir" && apt-get source -q $sandbox "$want") >"$dir.log" 2>&1; then
			ver=$(sed -n 's/^Version: //p' "$dir"/*.dsc)
			src=$(ls -d "$dir"/*/)
			src=${src%/}
			return 0
		fi
	done
	tail -n 5 "$dir.log" >&2
	die "cannot fetch source package $1 (deb-src missing? run 'sh .ci/setup')"
}

# build_lib NAME SRCDIR EXTRA_CFLAGS FILE...: compiles SRCDIR/FILEs in parallel
# into $out/lib/libNAME.a; a FILE named in $fast_files gets FAST_CFLAGS after the others.
build_lib() {
	name=$1 srcdir=$2 flags=$3
	shift 3
	objdir=$out/obj/$name
	mkdir -p "$objdir"
	for f in "$@"; do
		[ -f "$srcdir/$f" ] || die "$name: missing source file $f"
		printf '%s\n' "$f"
	done | CC="$cc" FLAGS="$CFLAGS $flags" FAST="$fast_files" FAST_CFLAGS="$FAST_CFLAGS" \
		xargs -P "$jobs" -I{} sh -c '
		o=$(echo "$2" | tr / _); o=${o%.c}.o
		case " $FAST " in *" $2 "*) FLAGS="$FLAGS $FAST_CFLAGS" ;; esac
		cd "$1" && $CC $FLAGS -c "$2" -o "$3/$o"' sh "$srcdir" {} "$objdir" ||
		die "$name: compilation failed"
	rm -f "$out/lib/lib$name.a"
	$AR rcs "$out/lib/lib$name.a" "$objdir"/*.o
	echo "deps: $out/lib/lib$name.a from $pkg $ver"
}

# musl for the target or this machine, from Debian's source package, static only; installs
# the musl-gcc wrapper (a gcc specs file) that the rest of the build uses as CC.
if [ -n "$own_musl" ]; then
	fetch musl "$MUSL_VERSION"
	if [ -n "$target" ]; then
		set -- --target="$target" CROSS_COMPILE="$target-" \
			CFLAGS="-Os -ffunction-sections -fdata-sections -fno-pie ${DEPS_MUSL_CFLAGS-}"
	else
		set -- CC=gcc CFLAGS=-fno-pie
	fi
	# not the calling make's variables (its ARCH=armhf would override musl's ARCH=arm)
	(unset MAKEFLAGS MFLAGS MAKELEVEL ARCH CFLAGS; cd "$src" &&
		./configure "$@" --prefix="$out/musl" --disable-shared --enable-wrapper=gcc &&
		make -j"$jobs" && make install) >"$out/src/musl-build.log" 2>&1 ||
		{ tail -n 20 "$out/src/musl-build.log" >&2; die "musl build${target:+ for $target} failed"; }
	echo "deps: $out/musl/lib/libc.a from musl $ver${target:+ for $target}"
	echo 'int deps_probe;' | $cc -x c -c -o /dev/null - 2>/dev/null ||
		die "compiler '$cc' does not work"
fi

fetch zlib "$ZLIB_VERSION"
build_lib z "$src" "$ZLIB_CFLAGS" adler32.c crc32.c deflate.c inflate.c \
	inftrees.c inffast.c trees.c zutil.c compress.c uncompr.c
cp "$src/zlib.h" "$src/zconf.h" "$out/include/"

fetch lzo2 "$LZO2_VERSION"
build_lib lzo2 "$src/src" "-I$src/include -I$src" \
	lzo1x_1.c lzo1x_d2.c lzo_init.c lzo_ptr.c lzo_util.c
mkdir -p "$out/include/lzo"
cp "$src"/include/lzo/*.h "$out/include/lzo/"

fetch libzstd "$ZSTD_VERSION"
zstd_files=""
# no compress/: util/zstd_enc.c writes the frames
for f in "$src"/lib/common/*.c "$src"/lib/decompress/*.c; do
	f=${f#"$src/lib/"}
	case $f in
	common/pool.c | common/threading.c) ;;
	*) zstd_files="$zstd_files $f" ;;
	esac
done
fast_files=$ZSTD_FAST_FILES
build_lib zstd "$src/lib" "$ZSTD_CFLAGS -I$src/lib/common" $zstd_files
fast_files=
cp "$src/lib/zstd.h" "$src/lib/zstd_errors.h" "$out/include/"

# Kernel UAPI headers only, so '-isystem OUTDIR/kinc' does not expose glibc's;
# for a target, its own (asm/ encodes ioctl numbers per architecture).
if [ -n "$target" ]; then
	inc=/usr/$target/include asm=asm
else
	inc=/usr/include
	asm=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)/asm
fi
for d in linux asm-generic "$asm"; do
	[ -d "$inc/$d" ] || die "$inc/$d missing (install linux-libc-dev${target:+-*-cross})"
	ln -s "$inc/$d" "$out/kinc/${d##*/}"
done

rm -rf "$out/src" "$out/obj"
echo "$stamp" >"$out/.recipe"
