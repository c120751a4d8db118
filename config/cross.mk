# Cross builds, included by the Makefile when ARCH is given on the command line:
#   make ARCH=mips|mipsel|armhf|aarch64 [all|units|size|sizes|cross-test]
# Static musl binaries in build/ARCH/ (the native build stays ./btrfsbox). musl, zlib,
# lzo2 and zstd are built for the target from Debian's source packages with Debian's
# cross compiler (gcc-TRIPLET) by config/deps.sh into build/deps-ARCH (cached), against
# the target's kernel headers (linux-libc-dev-*-cross). .ci/setup-cross installs them.
CROSS_TRIPLET_mips := mips-linux-gnu
CROSS_TRIPLET_mipsel := mipsel-linux-gnu
CROSS_TRIPLET_armhf := arm-linux-gnueabihf
CROSS_TRIPLET_aarch64 := aarch64-linux-gnu
CROSS_QEMU_mips := mips
CROSS_QEMU_mipsel := mipsel
CROSS_QEMU_armhf := arm
CROSS_QEMU_aarch64 := aarch64
CROSS_TRIPLET := $(CROSS_TRIPLET_$(ARCH))
ifeq ($(CROSS_TRIPLET),)
$(error ARCH=$(ARCH) is not a cross target: use mips, mipsel, armhf or aarch64)
endif
QEMU ?= qemu-$(CROSS_QEMU_$(ARCH))-static

# Code generation per target (no position-independent code on any: the Makefile's NOPIE).
# Routers run MIPS: MIPS16e, whose 16-bit instructions make the code about a third
# smaller (the 24K/74K cores of such routers run it).
CROSS_CFLAGS_mips := -mips16 -minterlink-mips16 -mplt
CROSS_CFLAGS_mipsel := $(CROSS_CFLAGS_mips)
CROSS_MUSL_CFLAGS_mips := -mplt
CROSS_MUSL_CFLAGS_mipsel := $(CROSS_MUSL_CFLAGS_mips)
CROSS_CFLAGS := $(CROSS_CFLAGS_$(ARCH))
CROSS_MUSL_CFLAGS := $(CROSS_MUSL_CFLAGS_$(ARCH))

BUILD ?= build/$(ARCH)
BIN ?= $(BUILD)/btrfsbox
DEPS ?= build/deps-$(ARCH)
CC := $(abspath $(DEPS))/musl/bin/musl-gcc
AR := $(CROSS_TRIPLET)-ar
DEPS_ENV := DEPS_TARGET=$(CROSS_TRIPLET) DEPS_CFLAGS='$(CROSS_CFLAGS)' DEPS_MUSL_CFLAGS="$(CROSS_MUSL_CFLAGS)"
CROSS_LDFLAGS_mips := -Wl,-T,$(abspath config/mips16-stubs.ld)
CROSS_LDFLAGS_mipsel := $(CROSS_LDFLAGS_mips)
CROSS_LDFLAGS := -no-pie $(CROSS_LDFLAGS_$(ARCH))
# deps.sh rebuilds when the flags above change (its stamp has them); this rule is read
# before the Makefile's first one, so the default goal is named
.DEFAULT_GOAL := all
$(DEPS)/.recipe: config/cross.mk
