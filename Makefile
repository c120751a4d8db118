# btrfsbox — one static multicall binary for the btrfs user-space tools.
#   make               build ./btrfsbox (static, musl; `make CC=gcc` links glibc statically)
#   make test          unit tests and shell tests; last line "N passed, N failed, N skipped"
#   make crashtest     power cuts at every write of the write paths (long)
#   make repair-campaign  random damage repaired by btrfsbox and the reference (long)
#   make sanitize      the same tests against an ASan+UBSan build (glibc, dynamic)
#   make demo          mkfs --rootdir -> check -> mount -> restore on an image file
#   make defconfig | tinyconfig | oldconfig | menuconfig
#   make size | sizes  stripped size and what each part contributes
#   make bench | fuzz
#   make ARCH=mips|mipsel|armhf|aarch64 [sizes|cross-test]   other CPUs (config/cross.mk)
#   make initramfs | vm-test   rescue initramfs; boot test on Debian's kernel in qemu
# V=1 shows full commands; BUILD=dir puts objects elsewhere; CONFIG_FILE picks a config.

# make ARCH=mips|mipsel|armhf|aarch64: cross builds (config/cross.mk)
ifeq ($(origin ARCH),command line)
ifneq ($(ARCH),)
include config/cross.mk
endif
endif
# By default musl itself is built from source too, with musl's own size-first settings
# (config/deps.sh; Debian's libc.a costs 15 KB more). `make CC=musl-gcc` uses Debian's.
ifeq ($(origin CC),default)
CC := $(abspath $(or $(DEPS),build/deps-musl))/musl/bin/musl-gcc
endif
BUILD ?= build
BIN ?= btrfsbox
CONFIG_FILE ?= .config
GEN := $(BUILD)/gen
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
say = $(if $(filter 1,$(V)),,@printf '  %-7s %s\n' $(1) $(2);)

SRCS := $(sort $(wildcard applets/*.c applets/*/*.c fs/*/*.c util/*.c util/*/*.c))
OBJS := $(SRCS:%.c=$(BUILD)/obj/%.o)
LIB_OBJS := $(filter $(BUILD)/obj/fs/% $(BUILD)/obj/util/%,$(OBJS))
UNIT_SRCS := $(filter-out tests/unit/unit_main.c,$(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)

WARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
# SIZE_OVER_SPEED (tinyconfig): -Oz and link-time optimization (see applets/btrfsbox.c)
ifeq ($(origin OPT),undefined)
OPT = $(if $(shell grep -sx 'CONFIG_SIZE_OVER_SPEED=y' $(CONFIG_FILE)),-Oz -flto=auto,-Os)
endif
CFLAGS_BASE := -std=gnu11 $(WARN) -ffunction-sections -fdata-sections -D_GNU_SOURCE \
	-I$(GEN) -I.
ifeq ($(SANITIZE),1)
OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSTATIC :=
STRIP :=
else
LDSTATIC := -static
STRIP := -s
# no unwinding in C: .eh_frame is ~6% of the binary
OPT += -fno-asynchronous-unwind-tables -fno-unwind-tables
# code and read-only data share pages: no page-alignment padding between them (~8 KB)
LDSTATIC += -Wl,-z,noseparate-code -Wl,--build-id=none
# a static program is not position-independent: absolute addresses, no GOT (a
# compiler that makes PIE by default, as Debian's: 8.8 KB smaller on x86-64; on MIPS
# direct calls); config/deps.sh builds musl and the libraries so too
NOPIE := -fno-pie
endif

ifneq ($(findstring musl,$(CC)),)
ifneq ($(filter %/musl/bin/musl-gcc,$(CC)),)
# the musl that config/deps.sh builds into DEPS (config/cross.mk sets DEPS_ENV for a target)
DEPS ?= $(patsubst %/musl/bin/musl-gcc,%,$(CC))
DEPS_ENV ?= DEPS_MUSL=1
else
DEPS ?= build/deps-$(notdir $(CC))
endif
DEPS_STAMP := $(DEPS)/.recipe
CFLAGS_DEPS := -isystem $(DEPS)/kinc -I$(DEPS)/include
LDLIBS := -L$(DEPS)/lib -lzstd -llzo2 -lz
# static musl programs do not apply RELRO: without it the data segment need not start
# its own page in the file (2-4 KB of padding less)
LDSTATIC += -Wl,-z,norelro -Wl,-z,common-page-size=64
# glibc's strerror() texts (util/errstr.c)
LDSTATIC += -Wl,--wrap=strerror,-u,__wrap_strerror
else
DEPS_STAMP :=
CFLAGS_DEPS :=
LDLIBS := -lzstd -llzo2 -lz
endif
# Per file: -Oz for applets/ (option parsing and printing; the work is done in fs/ and
# util/: 2.3 KB smaller, no measurable slowdown) and for sources marked //build:Oz (cold
# helpers), -O2 for sources marked //build:O2 (hot loops).
file_opt = $(if $(filter applets/%,$(1)),-Oz,$(shell sed -n 's,^//build:\(O[2z]\)$$,-\1,p' $(1)))
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS_DEPS) $(OPT) $(NOPIE) $(CROSS_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(LDSTATIC) -Wl,--gc-sections $(STRIP) $(OPT) $(NOPIE) $(CROSS_LDFLAGS) $(LDFLAGS)

all: $(BIN)

$(CONFIG_FILE):
	$(Q)sh config/gen.sh defconfig $(CONFIG_FILE) $(SRCS)

$(GEN)/stamp: $(CONFIG_FILE) $(SRCS) config/gen.sh config/gen.awk
	$(call say,GEN,$(GEN))
	$(Q)sh config/gen.sh headers $(CONFIG_FILE) $(GEN) $(SRCS)
	$(Q)touch $@

# The usage texts, compressed (COMPRESS_USAGE): config/usage.sh reads them from the
# preprocessed sources; SRC_ID (applets/mkfs.c -> applets_mkfs) names each source's texts.
$(GEN)/usage.stamp: $(SRCS) util/cli/cli.h $(GEN)/stamp config/usage.sh config/usage.awk $(DEPS_STAMP)
	$(call say,GEN,$(GEN)/usage.h)
	$(Q)sh config/usage.sh $(GEN) $(CC) $(ALL_CFLAGS) -- $(SRCS)
	$(Q)touch $@

$(DEPS_STAMP): config/deps.sh
	$(call say,DEPS,$(DEPS))
	$(Q)$(DEPS_ENV) sh config/deps.sh $(DEPS) $(CC)

# Rebuild everything when the compiler or its flags change (e.g. CC=gcc after musl-gcc).
$(BUILD)/cflags: FORCE
	$(Q)mkdir -p $(BUILD)
	$(Q)echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL)' | cmp -s - $@ || echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL)' > $@

$(BUILD)/obj/%.o: %.c $(BUILD)/cflags | $(GEN)/stamp $(GEN)/usage.stamp $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(call file_opt,$<) -DSRC_ID=$(subst /,_,$*) -MMD -MP -c $< -o $@

$(BIN): $(OBJS) $(BUILD)/cflags $(DEPS_STAMP)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS_ALL) -Wl,-Map=$(BUILD)/btrfsbox.map -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/libbox.a: $(LIB_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $(LIB_OBJS)

$(BUILD)/unit/%: tests/unit/%.c tests/unit/unit_main.c tests/unit/unit.h $(BUILD)/libbox.a
	$(call say,UNIT,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(LDSTATIC) -o $@ $< tests/unit/unit_main.c $(BUILD)/libbox.a $(LDLIBS)

units: $(UNIT_BINS)

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libbox.a
	$(call say,BENCH,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -O2 $(LDSTATIC) -o $@ $< $(BUILD)/libbox.a $(LDLIBS)

test: $(BIN) $(UNIT_BINS)
	$(Q)TEST_CC=$(CC) BOX=$(abspath $(BIN)) UNIT_DIR=$(abspath $(BUILD)/unit) SANITIZE=$(SANITIZE) sh tests/run.sh $(T)

# every power-cut point of every write path (make test samples them): mkfs, label, rescue,
# undo, offline scrub (tests/crash.test), repair (tests/repair-crash.test), resize
# (run.sh's pattern picks the units too: one run per pattern)
CRASH_ENV = CRASH_ALL=1 CRASH_COUNT_FILE=$(abspath $(BUILD)/crash.count) TEST_TIMEOUT=14400 T_TIMEOUT=7200 \
	BOX=$(abspath $(BIN)) UNIT_DIR=$(abspath $(BUILD)/unit)
crashtest: $(BIN) $(BUILD)/unit/write_model
	$(Q)rm -f $(BUILD)/crash.count
	$(Q)$(CRASH_ENV) TESTS='tests/crash.test tests/repair-crash.test' sh tests/run.sh crash
	$(Q)$(CRASH_ENV) TESTS=tests/resize_offline.test sh tests/run.sh resize_offline
	$(Q)awk '{ n += $$1; k++ } END { printf "%d power cuts in %d write runs, each image the old or the new filesystem\n", n, k }' \
		$(BUILD)/crash.count

# the repair campaign (tests/repair_campaign.py): CAMPAIGN_TRIALS random damages through
# the repair sequence of btrfsbox and of the reference (btrfs-progs 6.19 where it is built,
# REF619, else Debian's), judged by the reference check, the kernel and the files (root)
REF619 ?= /work/ref619/src
CAMPAIGN_TRIALS ?= 196
repair-campaign: $(BIN)
	$(Q)ref=$$([ -x $(REF619)/btrfs ] && echo $(REF619)/btrfs || command -v btrfs); \
	mkfs=$$([ -x $(REF619)/mkfs.btrfs ] && echo $(REF619)/mkfs.btrfs || command -v mkfs.btrfs); \
	python3 tests/repair_campaign.py bases $(BUILD)/campaign/bases --mkfs "$$mkfs" --btrfs "$$ref" && \
	python3 tests/repair_campaign.py run --box $(abspath $(BIN)) --bases $(BUILD)/campaign/bases \
		--work $(BUILD)/campaign/work -n $(CAMPAIGN_TRIALS) --seed $(or $(SEED),1) --ref "$$ref" --judge "$$ref"

sanitize:
	$(Q)$(MAKE) --no-print-directory CC=gcc BUILD=build/sanitize BIN=build/sanitize/btrfsbox SANITIZE=1 test

demo: $(BIN)
	$(Q)BOX=$(abspath $(BIN)) sh tests/demo.sh

bench: $(BIN)
	$(Q)BOX=$(abspath $(BIN)) sh tests/bench.sh

fuzz:
	$(Q)sh tests/fuzz/run.sh $(FUZZ_SECONDS)

size: $(BIN)
	$(Q)sh config/size.sh $(BIN) $(BUILD)/btrfsbox.map

# each configuration in its own sub-make (in parallel with -j2); the .config is written
# before the build starts (as one make, both goals wrote it at the same time)
sizes: sizes-defconfig sizes-tinyconfig
	$(Q)printf 'defconfig  %9d bytes\ntinyconfig %9d bytes\n' $$(stat -c %s $(BUILD)/defconfig/btrfsbox) $$(stat -c %s $(BUILD)/tinyconfig/btrfsbox)
	$(Q)sh config/size.sh $(BUILD)/defconfig/btrfsbox $(BUILD)/defconfig/btrfsbox.map | \
		awk '$$1 ~ /^fs\/write\/|^applets\/rescue$$/ { n += $$2 } END { printf "write side %9d bytes (fs/write, applets/rescue in defconfig)\n", n }'

sizes-defconfig sizes-tinyconfig: sizes-%: | $(DEPS_STAMP)
	$(Q)$(call make_in,$(BUILD),$*) $*
	$(Q)$(call make_in,$(BUILD),$*) all

# make_in BUILD CONFIG: a sub-make building into BUILD/CONFIG with BUILD/CONFIG/.config
make_in = $(MAKE) --no-print-directory BUILD=$(1)/$(2) CONFIG_FILE=$(1)/$(2)/.config BIN=$(1)/$(2)/btrfsbox

defconfig tinyconfig:
	$(Q)mkdir -p $(dir $(CONFIG_FILE))
	$(Q)sh config/gen.sh $@ $(CONFIG_FILE) $(SRCS)

oldconfig:
	$(Q)sh config/gen.sh oldconfig $(CONFIG_FILE) $(SRCS)

menuconfig:
	$(Q)sh config/gen.sh kconfig-frag $(CONFIG_FILE) $(SRCS)
	$(Q)command -v kconfig-mconf >/dev/null || { echo "menuconfig needs kconfig-mconf (apt-get install kconfig-frontends-nox)"; exit 1; }
	$(Q)KCONFIG_CONFIG=$(CONFIG_FILE) kconfig-mconf config/Config.in

# ---- other CPUs and a rescue boot: cross-test, vm-test, initramfs (tests/cross, tests/vm) ----
# make cross-test ARCH=...  the target's defconfig build: unit tests and tests/cross/*.test
#                           under qemu-ARCH-static, compared with the native build/defconfig
# make vm-test              boots Debian's kernel in qemu-system-x86_64 on the initramfs
# make initramfs            build/initramfs.cpio.gz: static btrfsbox, applet links, /init
$(BUILD)/tools/%: tests/cross/%.c $(BUILD)/libbox.a
	$(call say,TOOL,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDSTATIC) -o $@ $< $(BUILD)/libbox.a $(LDLIBS)

# the native defconfig build (build/defconfig): what the targets are compared with
native-defconfig:
	$(Q)$(call make_in,build,defconfig) ARCH= defconfig
	$(Q)$(call make_in,build,defconfig) ARCH= all cross-tools

cross-test: $(if $(CROSS_TRIPLET),sizes native-defconfig,cross-test-needs-arch)
	$(Q)$(call make_in,$(BUILD),defconfig) units cross-tools
	$(Q)ARCH=$(ARCH) QEMU=$(QEMU) CROSS_TRIPLET=$(CROSS_TRIPLET) TEST_CC=$(CC) \
	 BOX=$(abspath $(BUILD)/defconfig/btrfsbox) TINY_BOX=$(abspath $(BUILD)/tinyconfig/btrfsbox) \
	 NATIVE_BOX=$(abspath build/defconfig/btrfsbox) TOOLS=$(abspath $(BUILD)/defconfig/tools) \
	 NATIVE_TOOLS=$(abspath build/defconfig/tools) UNIT_DIR=$(abspath $(BUILD)/defconfig/unit) \
	 UNIT_RUNNER=$(QEMU) TESTS='tests/cross/*.test' sh tests/run.sh $(T)

cross-tools: $(BUILD)/tools/recv_plain
	@:

initramfs: $(BIN)
	$(Q)sh config/initramfs.sh $(BIN) $(BUILD)/initramfs.cpio.gz $(BUILD)/vm

vm-test: native-defconfig
	$(Q)BOX=$(abspath build/defconfig/btrfsbox) VM_CACHE=$(abspath build/vm) UNIT_DIR=/nonexistent \
	 TESTS='tests/vm/*.test' sh tests/run.sh $(T)

cross-test-needs-arch:
	@echo "cross-test: name the target: make cross-test ARCH=mips|mipsel|armhf|aarch64"; exit 2

clean:
	rm -rf $(BUILD)/obj $(BUILD)/gen $(BUILD)/unit $(BUILD)/sanitize $(BUILD)/defconfig $(BUILD)/tinyconfig $(BUILD)/libbox.a $(BIN)

FORCE:
.PHONY: FORCE all test units crashtest sanitize demo bench fuzz size sizes sizes-defconfig sizes-tinyconfig \
	cross-test cross-tools cross-test-needs-arch native-defconfig initramfs vm-test defconfig tinyconfig oldconfig menuconfig clean \
	repair-campaign
.DELETE_ON_ERROR:
-include $(OBJS:.o=.d)
