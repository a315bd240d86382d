#!/usr/bin/env bash
# Regenerate the committed seed corpus, tests/fuzz/corpus/<target>/, from images
# written through the fake snapshot device (tests/fuzz/make-seeds.c). Deterministic:
# the same library and lz4/zstd versions give the same bytes.
# Usage: tests/fuzz/make-seeds.sh   (or: make fuzz-seeds)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_FUZZ:-build-fuzz}
make --no-print-directory -f tests/fuzz/fuzz.mk BUILD_FUZZ="$build" "$build/make-seeds"
ASAN_OPTIONS=detect_leaks=1 "$build/make-seeds" tests/fuzz/corpus
du -sh tests/fuzz/corpus
