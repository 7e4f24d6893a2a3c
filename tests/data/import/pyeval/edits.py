# planck's own probe (not a third-party config): a local list edited by calls planck does not
# follow, and a loop whose `break` depends on a value it does not know.
from megatron.bridge.training.config import ConfigContainer


def stale_after_unfollowed_call() -> ConfigContainer:
    cfg = ConfigContainer()
    cfg.model.pipeline_model_parallel_size = 2
    cfg.model.num_layers = 2
    cfg.train.micro_batch_size = 1
    layout = [["embedding", "decoder"]]
    layout.insert(0, ["decoder"])  # list.insert: not a call planck follows
    cfg.model.pipeline_model_parallel_layout = layout
    return cfg


def loop_with_unknown_break() -> ConfigContainer:
    cfg = ConfigContainer()
    cfg.model.pipeline_model_parallel_size = 2
    cfg.model.num_layers = 2
    cfg.train.micro_batch_size = 1
    stages = []
    for i in range(4):
        if cfg.model.unknown_flag:
            break
        stages.append(["decoder"])
    cfg.model.pipeline_model_parallel_layout = stages
    return cfg
