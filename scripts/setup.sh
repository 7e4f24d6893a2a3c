#!/usr/bin/env bash
# Installs the Debian 12 packages planck builds and runs with (scripts/demo.sh); with --test, also
# what only the tests need (scripts/test.sh). Idempotent: packages already present are not
# touched and nothing is printed for them. Run as root (or with sudo available).
#   bash scripts/setup.sh          build and run planck
#   bash scripts/setup.sh --test   build and run planck, its tests, benchmarks, sanitizers, packages
set -euo pipefail

# Required to build and run planck (exec runs under mpirun; python3 reads torchtitan registries).
pkgs=(cmake g++ make pkg-config nlohmann-json3-dev libgraphviz-dev graphviz fonts-dejavu-core
      libopenmpi-dev openmpi-bin libcli11-dev libtomlplusplus-dev libyaml-cpp-dev python3)
optional=()
if [[ "${1:-}" == --test ]]; then
  # Required by the tests: doctest, Google Benchmark, clang-14 for the sanitizer and fuzz trees,
  # dpkg-dev and file for the .deb packages (cpack), chromium for the report_chromium_dom test
  # (headless; it skips without it).
  pkgs+=(doctest-dev libbenchmark-dev clang-14 libclang-rt-14-dev dpkg-dev file chromium)
  # Optional: a real torch.distributed run for the live process-group helper; the SARIF / JUnit
  # schema validators of `planck verify` output (tests skip with a message without them).
  optional=(python3-torch python3-jsonschema python3-lxml)
fi

want_optional=1
[[ "${PLANCK_SKIP_OPTIONAL:-0}" == 1 || ${#optional[@]} == 0 ]] && want_optional=0

missing() {
  local out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
  done
  echo "${out[@]:-}"
}

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

need=$(missing "${pkgs[@]}")
opt_need=""
[[ $want_optional == 1 ]] && opt_need=$(missing "${optional[@]}")
if [[ -z "$need" && -z "$opt_need" ]]; then exit 0; fi

export DEBIAN_FRONTEND=noninteractive
echo "setup: installing: $need $opt_need" >&2
"${sudo_cmd[@]}" apt-get update -qq >/dev/null
if [[ -n "$need" ]]; then
  # shellcheck disable=SC2086
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
if [[ -n "$opt_need" ]]; then
  # shellcheck disable=SC2086
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends $opt_need >/dev/null \
    || echo "setup: optional packages ($opt_need) could not be installed; their tests will skip" >&2
fi
