#!/bin/bash
# The model of THUDM/slime@624b824a898ab0ec1fcb4d373004c7f3852bf515 scripts/models/qwen3-next-80B-A3B.sh
# (copied in ../slime/models/; its first flag is --spec slime_plugins.models.qwen3_next
# get_qwen3_next_spec) on a plain Megatron-LM pretrain_gpt.py launch, with a batch and a sequence length.
source ../slime/models/qwen3-next-80B-A3B.sh
torchrun --nproc_per_node 8 pretrain_gpt.py ${MODEL_ARGS[@]} --tensor-model-parallel-size 1 \
   --expert-model-parallel-size 8 --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16 \
   --use-distributed-optimizer
