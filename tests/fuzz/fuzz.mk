# libFuzzer targets, built with clang straight from the library's sources
# (no meson): make -f tests/fuzz/fuzz.mk [BUILD_FUZZ=build-fuzz]
# The top-level Makefile's `fuzz` and `fuzz-smoke` call this, then tests/fuzz/run.
# See tests/fuzz/README.md.

BUILD_FUZZ ?= build-fuzz
FUZZ_CC    ?= clang
FUZZ_TARGETS := tail header map block image config cmdline tpmkey

# The library as meson.build builds it: its sources and its dependencies, read from
# there (tests/fuzz/meson-list), so the fuzzers follow the tree as it changes.
MESON_DEPS := $(shell tests/fuzz/meson-list deps)
LIB_SRCS   := $(shell tests/fuzz/meson-list sources)
ifeq ($(strip $(LIB_SRCS)),)
LIB_SRCS   := $(sort $(wildcard lib/*/*.c))
endif

SAN      := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
INCLUDES := -Iinclude -Ilib -Itests/unit -Itests/fuzz \
            $(shell pkg-config --cflags $(MESON_DEPS))
DEFS     := -D_GNU_SOURCE -DXXH_STATIC_LINKING_ONLY -DHIB_VERSION_STRING='"fuzz"'
CFLAGS_FUZZ := -std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter $(SAN) $(DEFS) $(INCLUDES)
LIBS     := $(shell pkg-config --libs $(MESON_DEPS)) -lpthread

LIB_OBJS := $(patsubst lib/%.c,$(BUILD_FUZZ)/obj/lib/%.o,$(LIB_SRCS))
FUZZERS  := $(addprefix $(BUILD_FUZZ)/fuzz_,$(FUZZ_TARGETS))

.PHONY: all
all: $(FUZZERS) $(BUILD_FUZZ)/make-seeds

# Library objects: coverage-instrumented, sanitized, no libFuzzer main.
$(BUILD_FUZZ)/obj/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

# The fake snapshot device is the harness's kernel, not code under test: sanitized
# but not coverage-instrumented (its page generator would cost half the time of
# fuzz_image and feed the fuzzer features that say nothing about the library).
$(BUILD_FUZZ)/obj/lib/snapshot/snapshot-fake.o: lib/snapshot/snapshot-fake.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CFLAGS_FUZZ) -MMD -MP -c $< -o $@

$(BUILD_FUZZ)/obj/fuzz_%.o: tests/fuzz/fuzz_%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD_FUZZ)/fuzz_%: $(BUILD_FUZZ)/obj/fuzz_%.o $(LIB_OBJS)
	$(FUZZ_CC) $(SAN) -fsanitize=fuzzer $^ $(LIBS) -o $@

# The seed generator (tests/fuzz/make-seeds.sh): same objects, its own main().
$(BUILD_FUZZ)/obj/make-seeds.o: tests/fuzz/make-seeds.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD_FUZZ)/make-seeds: $(BUILD_FUZZ)/obj/make-seeds.o $(LIB_OBJS)
	$(FUZZ_CC) $(SAN) $^ $(LIBS) -o $@

-include $(LIB_OBJS:.o=.d) $(wildcard $(BUILD_FUZZ)/obj/*.d)
