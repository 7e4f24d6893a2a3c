#!/usr/bin/env bash
# Installs what planck needs, builds it, and runs the main job on the bundled example plans:
# verify catches the seed bugs (flattened HSDP, Lingua's rank arithmetic, per-micro-batch gradient
# sync) and passes the fixed plans; groups lists a real layout's communicators.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 2
jobs=$(nproc 2>/dev/null || echo 2)
build=${PLANCK_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 2
cmake --build "$build" -j"$jobs" --target planck >/dev/null || exit 2
planck="$build/cli/planck"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; echo "(exit $?)"; }

step "$planck" verify plans/torchtitan-hsdp-2x8-flattened.json
step "$planck" verify plans/torchtitan-hsdp-2x8.json
step "$planck" groups plans/torchtitan-hsdp-2x8.json --dim dp_shard --dim dp_replicate --dim dp
step "$planck" verify plans/lingua-8x4-before.json
step "$planck" verify plans/lingua-8x4-after.json
step "$planck" verify plans/ddp-8-sync-every-microbatch.json
step "$planck" verify plans/megatron-tp2-pp4-dp2.json
exit 0
