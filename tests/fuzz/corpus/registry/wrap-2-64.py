def wrap() -> Trainer.Config:
    return Trainer.Config(parallelism=ParallelismConfig(data_parallel_shard_degree=2**64 - 1))
