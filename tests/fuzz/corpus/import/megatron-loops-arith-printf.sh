#!/bin/bash
# Seed: the bash constructs of slime's scripts/models/deepseek-v3.sh and epfllm's finetune.sh
# (C-style for, (( )) tests, printf -v, a $( ) subshell with IFS, a while/case/shift option loop,
# the script-directory idiom).
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
TP=2
while [[ $# -gt 0 ]]; do
  case $1 in
    --tp) TP="$2"; shift; shift;;
    *) echo unknown; break;;
  esac
done
arr=()
for ((i=0; i<8; i++)); do
  if (( i < 2 )); then arr+=(0); else arr+=(1); fi
done
printf -v FREQ "[%s]" "$(IFS=', '; echo "${arr[*]}")"
N=$(( TP > 1 ? TP ** 2 : 1 ))
torchrun --nproc_per_node 8 $ROOT/pretrain_gpt.py --tensor-model-parallel-size $TP \
  --num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 \
  --micro-batch-size 1 --global-batch-size $N --num-experts 8 --moe-layer-freq $FREQ
