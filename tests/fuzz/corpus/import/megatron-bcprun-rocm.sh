bcprun -n 2 -p 8 --env A=1 -c "python pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 2"
bcprun --nnodes=2 --cmd="eval \$X"
export HSA_X=1
bcprun -c
bcprun -p
