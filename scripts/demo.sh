#!/usr/bin/env bash
# Installs what planck needs, builds it, and runs the main job on the bundled example plans:
# verify catches the seed bugs (flattened HSDP from the plan and from a run's NCCL log, Lingua's
# rank arithmetic, per-micro-batch gradient sync) and passes the fixed plans; groups, simulate,
# enumerate, render and import show the rest; exec runs the HSDP 2x4 plan over 8 MPI processes.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 2
jobs=$(nproc 2>/dev/null || echo 2)
build=${PLANCK_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPLANCK_BUILD_TESTS=OFF -DPLANCK_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null || exit 2
cmake --build "$build" -j"$jobs" --target planck >/dev/null || exit 2
planck="$build/cli/planck"
out=${PLANCK_DEMO_OUT:-$build/demo}
mkdir -p "$out"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; echo "(exit $?)"; }

# The seed bugs, caught before a GPU is spent.
step "$planck" verify plans/torchtitan-hsdp-2x8-flattened.json
step "$planck" verify plans/torchtitan-hsdp-2x8.json
step "$planck" verify plans/torchtitan-hsdp-2x8.json --observed tests/data/observed/torchtitan/hsdp_flattened.log
step "$planck" verify plans/lingua-8x4-before.json
step "$planck" verify plans/lingua-2x4-before.json
step "$planck" verify plans/lingua-4x4-before.json
step "$planck" verify plans/lingua-8x4-after.json
step "$planck" verify plans/ddp-8-sync-every-microbatch.json
# The communicators, the predicted cost, the best layouts, a picture.
step "$planck" groups plans/torchtitan-hsdp-2x8.json --dim dp_shard --dim dp_replicate
step "$planck" simulate plans/hsdp-2x4.json
step "$planck" enumerate --world 64 --gpus-per-node 8 --model llama3-8b --top 5
step "$planck" render plans/torchtitan-hsdp-2x8-flattened.json -o "$out/flattened.svg"
step "$planck" import torchtitan tests/data/import/torchtitan/llama3_8b.toml --nodes 2 --gpus-per-node 8 -o "$out/imported.json"
step "$planck" verify "$out/imported.json"
# The same plan for real: 8 MPI processes on this machine, measured against the prediction.
if command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Calibrate this machine's links first, so the predicted times are a verdict (without
  # --topology exec says "uncalibrated" and gives no time ratio).
  step mpirun --oversubscribe -np 8 "$planck" calibrate --max-bytes 4194304 --iters 3 -o "$out/topo.json"
  step mpirun --oversubscribe -np 8 "$planck" exec plans/hsdp-2x4.json --max-bytes 4194304 --iters 3 \
    --topology "$out/topo.json" -o "$out/exec.json"
fi
echo
echo "outputs in $out/"
exit 0
