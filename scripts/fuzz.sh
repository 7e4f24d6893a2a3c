#!/usr/bin/env bash
# Fuzz smoke: configure the clang-14 ASan + UBSan tree (scripts/sanitizer-tree.sh) in build-fuzz/, build the seven
# targets and run each for N seconds (default 10) from its seed corpus. Any crash, leak, sanitizer
# report or timeout (30 s for one input: the slowest legitimate input found, a 750-node rank
# program whose size sweep spends its whole budget, takes 0.3 s in Release and ~12 s under
# ASan + coverage) fails the script and leaves the reproducer in build-fuzz/artifacts/<target>/.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
seconds="${1:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build-fuzz}"
targets=(plan_load rank_program nccl_log flight_recorder flight_recorder_json import registry)

. "$root/scripts/sanitizer-tree.sh"
configure_sanitizer_tree "$root" "$build"
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

status=0
for t in "${targets[@]}"; do
  art="$build/artifacts/$t"
  work="$build/corpus/$t"  # grows during fuzzing; the seeds in tests/fuzz/corpus stay as committed
  mkdir -p "$art" "$work"
  # Log and config readers are line-oriented: 4 KiB inputs hold dozens of lines. Without the
  # cap libFuzzer grows inputs to the largest seed (30 KB) and nccl_log ran ~150 exec/s (five
  # fuzzers on 2 loaded cores); capped, its 1 M-run campaign averaged 2,146 exec/s (two fuzzers).
  # Huge inputs are the hostile tests' job (tests/fuzz/hostile_test.cc).
  max_len=()
  case $t in nccl_log|import) max_len=(-max_len=4096) ;; esac
  # The registry target starts python3 once per input (~30 ms): a few hundred runs per smoke.
  # Its seeds are whole registries (14-40 KB), so inputs may grow to 64 KiB.
  case $t in registry) max_len=(-max_len=65536) ;; esac
  echo "== fuzz_$t for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 "${max_len[@]}" \
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
