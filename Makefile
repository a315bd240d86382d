# The README's two commands live here; everything else is Meson.
#   make demo    hibernate and resume a real Linux VM
#   make check   every test: unit tests (plain and sanitized), shellcheck and VM scenarios
#   make check-long   the slow VM scenarios (tagged long) on the three kernel series
BUILD        ?= build
BUILD_STATIC ?= build-static
BUILD_STATIC_TEST ?= build-static-test
BUILD_SAN    ?= build-san
SCENARIOS    ?=
KERNELS      ?=

.PHONY: all deps build static static-test check check-long unit-check san-check vm-check demo clean bench-pipeline deb bench bench-quick

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

# The same with the test-only environment variables (hibernate(8)): the VM
# scenarios that pause a cycle or fake doctor's root run it as hibernate-test.
$(BUILD_STATIC_TEST)/build.ninja:
	meson setup $(BUILD_STATIC_TEST) --buildtype=release -Dstatic=true -Dtests=false -Dtest_knobs=true

static-test: $(BUILD_STATIC_TEST)/build.ninja
	ninja -C $(BUILD_STATIC_TEST) hibernate

$(BUILD_SAN)/build.ninja:
	meson setup $(BUILD_SAN) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false

unit-check: build
	tests/run-unit $(BUILD)

san-check: $(BUILD_SAN)/build.ninja
	ninja -C $(BUILD_SAN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/unit/lsan.supp:print_suppressions=0 \
		tests/run-unit $(BUILD_SAN) san

vm-check: static static-test
	tests/vm/run $(if $(KERNELS),--kernels "$(KERNELS)") $(SCENARIOS)

check: deps
	$(MAKE) build static static-test
	tests/check-all

# The VM scenarios tagged "long", kept out of make check for time (together
# with make check: every scenario but the harness self-tests).
check-long: deps
	$(MAKE) build static static-test
	tests/vm/run --long $(if $(KERNELS),--kernels "$(KERNELS)")

demo: deps
	$(MAKE) static
	tests/vm/demo

# Host pipeline throughput against memcpy and the raw O_DIRECT bandwidth of
# BENCH_DIR, for 1..N threads (bench/README.md). BENCH_STREAM: a captured stream.
BENCH_DIR    ?= /var/tmp
bench-pipeline: deps build
	$(BUILD)/bench-pipeline --dir $(BENCH_DIR) $(if $(BENCH_STREAM),--stream $(BENCH_STREAM))

# The Debian package (debian/): built from a copy of the tree (tracked and
# new files, as they are now) in $(BUILD_DEB), where the .deb lands too.
BUILD_DEB    ?= build-deb
deb: deps
	scripts/make-deb $(BUILD_DEB)

# The kernel's own hibernation and hibernate side by side in the VM
# (bench/README.md): the full matrix writes docs/benchmarks.md; bench-quick
# is one run each of kernel 6.12 LZO, lz4 and hibernate at 150 MB/s, and of
# the encrypted workload's kernel-luks, ours-enc and ours-enc-preload.
# Knobs: BENCH_RUNS BENCH_KERNELS BENCH_SPEEDS BENCH_CONFIGS BENCH_WORKLOADS
# BENCH_ENC_CONFIGS BENCH_TYPE_DELAY.  Both end with the line
# "BENCH hibernate_ratio=... resume_ratio=... size_ratio=... responsive_ratio=... encrypted_ratio=...".
bench: deps
	$(MAKE) static
	bench/vm/run

bench-quick: deps
	$(MAKE) static
	bench/vm/run --quick

clean:
	rm -rf $(BUILD) $(BUILD_STATIC) $(BUILD_STATIC_TEST) $(BUILD_SAN) $(BUILD_DEB)

# Fuzzing (tests/fuzz/README.md): clang + libFuzzer + ASan/UBSan, its own build dir.
#   make fuzz          every target FUZZ_SECONDS (60) each; new inputs in $(BUILD_FUZZ)/corpus
#   make fuzz-smoke    replay seeds and known crashes, then FUZZ_SMOKE_SECONDS (5) each
BUILD_FUZZ         ?= build-fuzz
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_TARGETS       ?=

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-seeds fuzz-clean

fuzz-build:
	$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk BUILD_FUZZ=$(BUILD_FUZZ)

fuzz: fuzz-build
	BUILD_FUZZ=$(BUILD_FUZZ) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run fuzz $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	BUILD_FUZZ=$(BUILD_FUZZ) FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) tests/fuzz/run smoke $(FUZZ_TARGETS)

# Rewrite the committed seed corpus (tests/fuzz/corpus) from real images.
fuzz-seeds: fuzz-build
	BUILD_FUZZ=$(BUILD_FUZZ) tests/fuzz/make-seeds.sh

fuzz-clean:
	rm -rf $(BUILD_FUZZ)
