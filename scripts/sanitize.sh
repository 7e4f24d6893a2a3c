#!/usr/bin/env bash
# The unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (clang-14), in the
# same tree as the fuzz targets (scripts/sanitizer-tree.sh). Any sanitizer report fails its test
# (UBSan does not recover; LeakSanitizer is on). The real mpirun runs (exec_mpi_*) are left to
# the ordinary build: they start OpenMPI, whose own allocations LeakSanitizer would report.
# The package test (cli_ci_recipe: cpack, apt-get install of the .deb) is the Release tree's.
# The end-to-end suites that replay whole real-config corpora through the binary (cli_corpus,
# import_cli, cli_report_schemas, observed_consistency, observed_python_*, report_chromium_dom)
# are left to the ordinary build too: under ASan at -O0 they took 190 of the pass's 237 s (2 cores)
# and their parsers are already under the sanitizers here through the fuzz targets and the unit
# tests of each reader. So are the published-layout enumerations (published_layouts_*: whole
# 256- to 8,192-GPU searches through the code the enumerate unit tests already cover) and the
# enumerate --plan runs of whole searches (enumerate_plan_*, except the bad-template cases, whose
# error paths stay under the sanitizers) and sim_enumerate_fsdp_tp8_* (two 256-GPU searches, 28 s
# under ASan). So are the published-run regressions (sim_published_*: the step-time model over
# 300+ published runs and a grid fit, 320 s of the pass's CPU under ASan, through code the sim
# unit tests cover) and the two largest hostile inputs (a 68 MB flight-recorder file, 109 s, and
# a 6-million-reference pickle, 11 s): their point is the Release binary's time and memory, which
# ASan's shadow memory changes; the smaller hostile inputs of the same readers stay here.
#   scripts/sanitize.sh [BUILD_DIR]      (default build-san)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-san}"
. "$root/scripts/sanitizer-tree.sh"
configure_sanitizer_tree "$root" "$build"
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure --timeout 600 \
  -E '^(exec_mpi_|cli_ci_recipe$|cli_corpus$|import_cli$|cli_report_schemas$|observed_consistency|observed_python_|report_chromium_dom$|published_layouts_|enumerate_plan_(lingua|text|hsdp|flags)|sim_enumerate_fsdp_tp8|sim_published_|a flight-recorder JSON of 68 MB|a pickle of 6 million)'
