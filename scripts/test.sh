#!/usr/bin/env bash
# Installs what planck needs (scripts/setup.sh), builds it and runs every test through ctest,
# then runs each benchmark once (so they never rot), a 5 s libFuzzer smoke per fuzz target and
# the unit tests once more under ASan + UBSan (clang-14; any report fails), and ctest last.
# This is the README's test command and what CI runs.
#   PLANCK_FUZZ_SECONDS=N  seconds per fuzz target (default 5; 0 skips the fuzz smoke)
#   PLANCK_SANITIZE_TESTS=0  skips the sanitizer pass of the unit tests
#   PLANCK_BUILD_DIR=DIR   build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's wall time goes to stderr, so a slow CI run says where its minutes went.
phase() { echo "test.sh: $1 done at $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2; }
bash scripts/setup.sh --test
phase setup
jobs=$(nproc 2>/dev/null || echo 2)
build=${PLANCK_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPLANCK_BUILD_TESTS=ON -DPLANCK_BUILD_BENCH=ON -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" ${PLANCK_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs"
phase "Release build"
# OpenMPI refuses to start as root without these (CI runs as root); harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Benchmarks, one short pass each: they must run, their numbers live in docs/performance.md.
for b in "$build"/bench/bench_core "$build"/bench/bench_rank "$build"/bench/bench_sim "$build"/bench/bench_render; do
  [ -x "$b" ] || continue
  "$b" --benchmark_min_time=0.001 >/dev/null || { echo "benchmark $b failed" >&2; exit 1; }
done
if [ -x "$build/bench/bench_exec" ] && command -v mpirun >/dev/null; then
  mpirun --oversubscribe -np 2 "$build/bench/bench_exec" --benchmark_min_time=0.001 >/dev/null \
    || { echo "benchmark bench_exec failed" >&2; exit 1; }
fi
phase benchmarks

# The sanitizer tree (clang-14, ASan + UBSan): the fuzz smoke, then the unit tests under the
# sanitizers. Both use $build-san, so its libraries compile once.
fuzz_seconds=${PLANCK_FUZZ_SECONDS:-5}
if [ "$fuzz_seconds" != 0 ]; then
  bash scripts/fuzz.sh "$fuzz_seconds" "$build-san" >/dev/null
  phase "fuzz smoke"
fi
if [ "${PLANCK_SANITIZE_TESTS:-1}" != 0 ]; then
  bash scripts/sanitize.sh "$build-san" >"$build-san.log" 2>&1 \
    || { tail -n 60 "$build-san.log" >&2; echo "sanitizer tests failed; full log $build-san.log" >&2; exit 1; }
  tail -n 3 "$build-san.log"
  phase "sanitizer tests"
fi

# Last, so CI reads ctest's summary line as the closing line.
ctest --test-dir "$build" -j"$jobs" --output-on-failure --timeout 300
