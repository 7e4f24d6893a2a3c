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

# `planck verify CONFIG`: detected from the content, imported in memory, findings at the config's line.
toml=$data/torchtitan/llama3_70b_2025-12.toml
expect 2 "verify toml without cluster size" -- "$planck" verify "$toml"
grep -q -- "--nodes N --gpus-per-node G" "$tmp/err" || { echo "FAIL: missing cluster size does not name --nodes/--gpus-per-node"; fail=1; }
expect 1 "verify toml on 12 GPUs" -- "$planck" verify "$toml" --nodes 1 --gpus-per-node 12
shard_line=$(grep -n '^data_parallel_shard_degree' "$toml" | cut -d: -f1)
grep -q "llama3_70b_2025-12.toml:$shard_line:1: error\[mesh-world-mismatch\]" "$tmp/out" ||
  { echo "FAIL: mesh-world-mismatch not at the toml's data_parallel_shard_degree line $shard_line"; cat "$tmp/out"; fail=1; }
expect 1 "verify toml sarif" -- "$planck" verify "$toml" --nodes 1 --gpus-per-node 12 --format sarif
python3 - "$tmp/out" "$shard_line" <<'PY' || { echo "FAIL: SARIF does not point into the toml"; fail=1; }
import json, sys
loc = json.load(open(sys.argv[1]))["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
assert loc["artifactLocation"]["uri"].endswith("llama3_70b_2025-12.toml"), loc
assert loc["region"]["startLine"] == int(sys.argv[2]), loc
PY
reg=$data/torchtitan/pkg-b5bcd76c/torchtitan/models
expect 0 "verify qwen3 registry, every function" -- "$planck" verify "$reg/qwen3/config_registry.py" --nodes 8 --gpus-per-node 8
expect 0 "verify one registry function" -- "$planck" verify "$reg/llama3/config_registry.py:llama3_70b" --nodes 8 --gpus-per-node 8
# 405B with tp 8 on 8 GPUs (dp 1) does not fit an H100: reported at the registry's function.
expect 1 "verify llama3 registry" -- "$planck" verify "$reg/llama3/config_registry.py" --nodes 1 --gpus-per-node 8
grep -q "config_registry.py:[0-9]*:1: error\[memory-exceeds\]: \[llama3_405b\]" "$tmp/out" ||
  { echo "FAIL: llama3_405b memory finding not located in the registry"; fail=1; }
gpt3=$data/megatron-lm/train_gpt3_175b_distributed.sh
expect 1 "verify gpt3 script (its own 1 x 8 world)" -- "$planck" verify "$gpt3"
tp_line=$(grep -n -- '--tensor-model-parallel-size 8' "$gpt3" | cut -d: -f1)
grep -q "train_gpt3_175b_distributed.sh:$tp_line:1: error\[mesh-world-mismatch\]" "$tmp/out" ||
  { echo "FAIL: gpt3 mesh-world-mismatch not at line $tp_line"; cat "$tmp/out"; fail=1; }
expect 0 "verify sc21 script through its sourced files" -- "$planck" verify "$data/megatron-lm/sc21/run_figure_15.sh" --nodes 4 --gpus-per-node 8
# Issue 30: what planck does not price is a warning at its line (exit 0), and --strict fails on it.
nvlm=$data/megatron-lm/nvlm/pretrain_qwen20_72b_internvit_6b.sh
expect 0 "verify nvlm 72b with frozen towers" -- "$planck" verify "$nvlm" --nodes 1 --gpus-per-node 8
vis_line=$(grep -n -- '--vision-model-type' "$nvlm" | cut -d: -f1)
grep -q "pretrain_qwen20_72b_internvit_6b.sh:$vis_line:1: warning\[setting-unmodelled\]" "$tmp/out" ||
  { echo "FAIL: --vision-model-type not a setting-unmodelled warning at line $vis_line"; cat "$tmp/out"; fail=1; }
expect 1 "verify nvlm --strict" -- "$planck" verify "$nvlm" --nodes 1 --gpus-per-node 8 --strict
sed 's/"offload_param"/"offload_parm"/' "$data/deepspeed/llamafactory_ds_z3_offload_config.json" >"$tmp/typo.json"
expect 0 "verify deepspeed typo" -- "$planck" verify "$tmp/typo.json" --nodes 1 --gpus-per-node 8
grep -q "typo.json:24:1: warning\[unknown-key\].*did you mean 'offload_param'" "$tmp/out" ||
  { echo "FAIL: misspelt DeepSpeed key not an unknown-key warning at line 24"; cat "$tmp/out"; fail=1; }
# Offload is priced in time: LLaMA-Factory's ZeRO-3 offload with Llama-3-70B on 8 H100s moves
# the bf16 parameter shard in twice (forward, backward), the gradient shard out and the updated
# shard back: 8 bytes x 70.55e9 parameters / 8 ranks a step over PCIe Gen5 at 64 GB/s = 1.10 s.
expect 0 "import deepspeed offload" -- "$planck" import deepspeed "$data/deepspeed/llamafactory_ds_z3_offload_config.json" --nodes 1 --gpus-per-node 8 --model llama3-70b -o "$tmp/offload.json"
python3 - "$tmp/offload.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["training"].update({"seq_len": 2048, "micro_batch": 1, "global_batch": 8, "grad_accumulation": 1, "activation_checkpointing": "full"})
json.dump(p, open(sys.argv[1], "w"))
PY
expect 0 "simulate deepspeed offload" -- "$planck" simulate "$tmp/offload.json" --format json
python3 - "$tmp/out" <<'PY' || { echo "FAIL: offload host-link time is not the closed form"; fail=1; }
import json, sys
r = json.load(open(sys.argv[1]))
layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
params = 80 * layer + 2 * 128256 * 8192 + 8192
assert r["memory"]["optimizer"] == 0, r["memory"]
assert abs(r["memory"]["host_traffic"] - params * 8 / 8) < 1e-6 * params, r["memory"]
assert abs(r["compute"]["host_s"] - params * 8 / 8 / 64e9) < 1e-3, r["compute"]
assert any("offload:" in n for n in r["notes"]), r["notes"]
PY
# A launch script named by its bare file name, run from its own directory (the commonest way): its
# directory is ".", never the empty path std::filesystem::absolute refuses (an internal error before).
gpt_oss=$data/megatron-bridge/067f987d/examples/models/gpt_oss
expect 0 "verify bridge launch by bare name" -- bash -c 'cd "$1" && "$2" verify slurm_pretrain.sh' _ "$gpt_oss" "$planck"
grep -q "internal error" "$tmp/err" && { echo "FAIL: bare launch script name gives an internal error"; fail=1; }
grep -q "slurm_pretrain.sh: ok" "$tmp/out" || { echo "FAIL: bare launch script name not verified"; cat "$tmp/out"; fail=1; }
expect 0 "import megatron script by bare name" -- bash -c 'cd "$1" && "$2" import megatron train_gpt3_175b_distributed.sh' _ "$data/megatron-lm" "$planck"
printf 'hello\n' >"$tmp/what.txt"
expect 2 "verify unrecognised input" -- "$planck" verify "$tmp/what.txt"
grep -q -- "--framework" "$tmp/err" || { echo "FAIL: unrecognised input does not suggest --framework"; fail=1; }

# allenai/open-instruct's accelerate config writes its DeepSpeed settings inline (zero_stage: 3), with
# no deepspeed_config_file: the config DeepSpeedPlugin builds from them is the run (ZeRO-3 on its 8
# processes), and verify reads it.
expect 0 "import accelerate config with inline DeepSpeed" -- "$planck" import accelerate "$data/accelerate/open_instruct_deepspeed_zero3.yaml" -o "$tmp/accel.json"
grep -q '"zero3"' "$tmp/accel.json" || { echo "FAIL: inline accelerate DeepSpeed settings not read as ZeRO-3"; fail=1; }
expect 0 "verify accelerate config with inline DeepSpeed" -- "$planck" verify "$data/accelerate/open_instruct_deepspeed_zero3.yaml"
# EleutherAI/gpt-neox configs (YAML of NeoXArgs and DeepSpeed keys): read as NeoX's, not as DeepSpeed JSON.
expect 0 "verify a GPT-NeoX config" -- "$planck" verify "$data/neox/pythia_1B.yml" --nodes 2 --gpus-per-node 8
cat "$tmp/out" "$tmp/err" | grep -q "unknown-key" && { echo "FAIL: NeoX keys reported as unknown"; fail=1; }
expect 0 "import a GPT-NeoX config" -- "$planck" import neox "$data/neox/pythia_12B.yml" --nodes 2 --gpus-per-node 8 -o "$tmp/neox12.json"
expect 2 "import a GPT-NeoX config as deepspeed (refused)" -- "$planck" import deepspeed "$data/neox/rwkv_170M.yml" -o "$tmp/neox.json"
# ms-swift's argument file shares gradient_accumulation_steps with DeepSpeed: not read as DeepSpeed.
expect 2 "verify ms-swift argument file" -- "$planck" verify "$data/deepspeed/ms_swift_sft_args.json"
grep -q "memory-exceeds" "$tmp/out" && { echo "FAIL: ms-swift argument file priced as a DeepSpeed config"; fail=1; }

exit $fail
