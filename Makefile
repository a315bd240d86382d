# The README's two commands live here; everything else is Meson.
#   make demo    hibernate and resume a real Linux VM
#   make check   every test: unit tests (plain and sanitized) and VM scenarios
BUILD        ?= build
BUILD_STATIC ?= build-static
BUILD_SAN    ?= build-san
SCENARIOS    ?=
KERNELS      ?=

.PHONY: all deps build static check unit-check san-check vm-check demo clean

all: build

deps:
	scripts/install-deps

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=debugoptimized

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# The initramfs binary: no shared libraries to carry around.
$(BUILD_STATIC)/build.ninja:
	meson setup $(BUILD_STATIC) --buildtype=release -Dstatic=true -Dtests=false

static: $(BUILD_STATIC)/build.ninja
	ninja -C $(BUILD_STATIC) hibernate

$(BUILD_SAN)/build.ninja:
	meson setup $(BUILD_SAN) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false

unit-check: build
	tests/run-unit $(BUILD)

san-check: $(BUILD_SAN)/build.ninja
	ninja -C $(BUILD_SAN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		tests/run-unit $(BUILD_SAN) san

vm-check: static
	tests/vm/run $(if $(KERNELS),--kernels "$(KERNELS)") $(SCENARIOS)

check: deps
	$(MAKE) build static
	tests/check-all

demo: deps
	$(MAKE) static
	tests/vm/demo

clean:
	rm -rf $(BUILD) $(BUILD_STATIC) $(BUILD_SAN)
