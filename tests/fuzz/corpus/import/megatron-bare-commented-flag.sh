#!/bin/bash
ARGS=(
    --tensor-model-parallel-size 2
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096
    --micro-batch-size 1 --global-batch-size 16
    # --num-distributed-optimizer-instances
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${ARGS[@]}"
