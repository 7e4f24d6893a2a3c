#!/usr/bin/env bash
# Installs what planck needs (scripts/setup.sh), builds it and runs every test through ctest.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
build=${PLANCK_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPLANCK_BUILD_TESTS=ON -DPLANCK_BUILD_BENCH=ON ${PLANCK_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs"
# OpenMPI refuses to start as root without these (CI runs as root); harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "$build" -j"$jobs" --output-on-failure --timeout 300
