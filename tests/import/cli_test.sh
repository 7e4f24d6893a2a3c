#!/usr/bin/env bash
# `planck import` as users run it: exit codes (docs/verify.md#exit-codes), atomic -o, --explain on stderr, and
# `planck verify` on every imported shared config. Usage: cli_test.sh PLANCK DATA_DIR
set -u
planck=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect() {  # expect CODE DESCRIPTION -- command...
  local want=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, want $want"; sed 's/^/  stderr: /' "$tmp/err" | head -20
    fail=1
  fi
}

expect 2 "unknown framework" -- "$planck" import pytorch "$data/torchtitan/llama3_8b.toml"
expect 2 "unreadable config" -- "$planck" import torchtitan "$tmp/missing.toml"
grep -q "missing.toml" "$tmp/err" || { echo "FAIL: unreadable config message does not name the file"; fail=1; }
expect 2 "bad --nodes" -- "$planck" import torchtitan "$data/torchtitan/llama3_8b.toml" --nodes 0
expect 0 "--help" -- "$planck" import --help
grep -q "lingua-dp-rank-formula" "$tmp/out" || { echo "FAIL: --help does not list --lingua-dp-rank-formula"; fail=1; }

# Broken input: exit 2 with file:line, and no plan file left behind.
printf '[parallelism\n' >"$tmp/broken.toml"
expect 2 "broken TOML" -- "$planck" import torchtitan "$tmp/broken.toml" -o "$tmp/broken.json"
grep -q "broken.toml:1:" "$tmp/err" || { echo "FAIL: broken TOML error lacks file:line"; fail=1; }
[[ ! -e "$tmp/broken.json" ]] || { echo "FAIL: a plan was written for a broken config"; fail=1; }

# --explain goes to stderr; stdout stays one JSON plan.
expect 0 "explain" -- "$planck" import torchtitan "$data/torchtitan/llama3_8b.toml" --nodes 2 --gpus-per-node 8 --explain
grep -q "inferred as world 16" "$tmp/err" || { echo "FAIL: --explain does not show the -1 inference"; fail=1; }
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" || { echo "FAIL: stdout is not JSON"; fail=1; }

# Every shared config: import, then verify exits 0 at the world the framework would use.
run() {  # run NAME FRAMEWORK CONFIG [import flags...]
  local name=$1 fw=$2 cfg=$3
  shift 3
  expect 0 "import $name" -- "$planck" import "$fw" "$data/$cfg" -o "$tmp/$name.json" "$@"
  expect 0 "verify $name" -- "$planck" verify "$tmp/$name.json"
}
run titan torchtitan torchtitan/llama3_8b.toml --nodes 8 --gpus-per-node 8
run titan_legacy torchtitan torchtitan/llama3_8b_legacy_2024-12.toml --nodes 2 --gpus-per-node 8
run lingua lingua lingua/debug.yaml --nodes 1 --gpus-per-node 8
run megatron megatron megatron-lm/train_llama3_8b_fsdp_h100_fp8.sh
run autotp deepspeed deepspeed/ds_config_autotp_zero2.json --nodes 1 --gpus-per-node 8
run zero3 deepspeed deepspeed/ds_zero3_leaf_qwen3_5.json --nodes 1 --gpus-per-node 8
run mics deepspeed deepspeed/mics_shard8_from_docs.json --nodes 2 --gpus-per-node 8

# A layout the framework rejects is imported faithfully and verify exits 1.
sed 's/tensor_parallel_degree = 1/tensor_parallel_degree = 3/' "$data/torchtitan/llama3_8b.toml" >"$tmp/tp3.toml"
expect 0 "import tp3" -- "$planck" import torchtitan "$tmp/tp3.toml" --nodes 1 --gpus-per-node 8 -o "$tmp/tp3.json"
expect 1 "verify tp3" -- "$planck" verify "$tmp/tp3.json"
grep -q "mesh-world-mismatch" "$tmp/out" "$tmp/err" || { echo "FAIL: verify tp3 does not report mesh-world-mismatch"; fail=1; }

exit $fail
