#!/usr/bin/env bash
# Fuzz smoke: configure a clang-14 libFuzzer + ASan + UBSan build in build-fuzz/, build the five
# targets and run each for N seconds (default 10) from its seed corpus. Any crash, leak, sanitizer
# report or timeout fails the script and leaves the reproducer in build-fuzz/artifacts/<target>/.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
seconds="${1:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build-fuzz}"
targets=(plan_load rank_program nccl_log flight_recorder import)

if ! command -v clang++-14 >/dev/null; then
  echo "fuzz.sh: clang++-14 not found; install it with scripts/setup.sh (Debian package clang-14)" >&2
  exit 2
fi

# -fsanitize=fuzzer-no-link instruments the libraries for coverage; the targets add the
# libFuzzer main (tests/fuzz/CMakeLists.txt). PLANCK_SANITIZE adds ASan + UBSan everywhere.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
  -DPLANCK_FUZZ=ON -DPLANCK_SANITIZE=ON -DPLANCK_BUILD_BENCH=OFF \
  -DPLANCK_TEST_AREAS=fuzz >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

status=0
for t in "${targets[@]}"; do
  art="$build/artifacts/$t"
  work="$build/corpus/$t"  # grows during fuzzing; the seeds in tests/fuzz/corpus stay as committed
  mkdir -p "$art" "$work"
  echo "== fuzz_$t for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$art/" -print_final_stats=1 "$work" "$root/tests/fuzz/corpus/$t" \
      >"$build/fuzz_$t.log" 2>&1; then
    echo "fuzz.sh: fuzz_$t FAILED; log $build/fuzz_$t.log, reproducer in $art/" >&2
    tail -n 40 "$build/fuzz_$t.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units' "$build/fuzz_$t.log" || true
  fi
done
exit $status
