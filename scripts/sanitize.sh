#!/usr/bin/env bash
# The unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (clang-14), in the
# same tree as the fuzz targets (scripts/sanitizer-tree.sh). Any sanitizer report fails its test
# (UBSan does not recover; LeakSanitizer is on). The real mpirun runs (exec_mpi_*) are left to
# the ordinary build: they start OpenMPI, whose own allocations LeakSanitizer would report.
#   scripts/sanitize.sh [BUILD_DIR]      (default build-san)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-san}"
. "$root/scripts/sanitizer-tree.sh"
configure_sanitizer_tree "$root" "$build"
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure --timeout 600 -E '^exec_mpi_'
