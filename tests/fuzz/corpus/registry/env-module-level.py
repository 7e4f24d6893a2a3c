import os
TP = int(os.environ.get("TP", "8"))
A = B
B = A
def f() -> Config:
    if os.getenv("X", "0") == "1":
        return Config(parallelism=ParallelismConfig(tensor_parallel_degree=TP))
    return Config(parallelism=ParallelismConfig(tensor_parallel_degree=A))
#--init--
