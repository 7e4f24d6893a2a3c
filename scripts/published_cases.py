#!/usr/bin/env python3
"""Turn tests/data/published/runs.csv (published training runs, sources in SOURCES.md) into
tests/data/published/validation.csv: the rows planck's step-time model is validated on, with the
layout fields a plan needs and the fit / held-back split.

Which rows: dense models in BF16/FP16 whose layout is published (Narayanan et al. SC21 Table 1,
Korthikanti et al. 2022 Table 5, Megatron-Core r0.8.0 H100 weak scaling, torchtitan's BF16 rows
without async TP, NeMo AutoModel's Llama3-70B BF16 row), and the dense FP8 rows on DGX-H100 of
NeMo 24.07's performance summary and Megatron-Bridge's archive, whose unstated settings (recompute,
sequence parallel, TP overlap, gradient-sync dtype, FP8 recipe, model shape) are read from the
frameworks' own recipes for those releases (FP8 below; sources per fact in fp8_settings.md).
Left out, and why:
  - FP8 rows without a recipe to read: NeMo 24.03 long-sequence (no public config for the CP runs),
    Megatron-Bridge 25.11 LLAMA3-8B (its doc says FSDP, the code tagged for it full recompute
    without FSDP), torchtitan Float8 (the 500 W part, below).
  - MoE rows: expert GEMMs and all-to-all are issue 16's; the hybrid Mamba rows are not transformers.
  - Llama 3 405B: mbs, vpp, recompute and Meta's modified pipeline schedule are not published.
  - torchtitan async-TP rows: the same 500 W part as the other torchtitan rows (below).
  - Megatron-Core strong scaling: layouts not published; DeepSeek-V3: a run average.
No row is left out by a rule on its hardware: torchtitan's BF16 rows ran on H100 HBM2e 96 GB GPUs
capped at 500 W (SOURCES.md #4), priced with that part's own preset, h100-96g-500w (its HBM from
torchtitan's benchmark page; docs/simulator.md, "Validation").

Rows of runs_new.csv (sources in SOURCES_new.md, gathered for issue 31) are added by new_case().

Validation is leave-one-source-out (tests/sim/sim_published_test.cc, scripts/fit_compute.py
--loso): every row of a source is predicted by curves fitted on the other sources only; there is
no fixed fit / held-back split any more.

Assumptions where the source is silent are written per row in the `assumed` column.
Run: python3 scripts/published_cases.py  (rewrites validation.csv)."""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "published")

FIELDS = ["id", "source", "gpu", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab",
          "gated_mlp", "biases", "tied", "position_embeddings", "seq_len", "gpus", "tp", "pp", "dp", "cp",
          "vpp", "mbs", "gbs", "sequence_parallel", "data_parallel", "recompute", "attention", "dtype",
          "async_tp", "overlap_param_gather", "dp_bucket_params", "fp8", "reduce_dtype", "step_s", "assumed",
          "stack", "attention_kernel", "layer_norm", "recompute_every", "grad_sync", "gpus_per_node", "peak_memory_gb", "peak_memory_kind"]

# FP8 rows: the settings their sources leave unstated, from the frameworks' recipes of that
# release (tests/data/published/fp8_settings.md gives repo@commit:path:line for each). Model shape
# (layers, hidden, ffn, heads, kv heads, vocab as padded, gated MLP, GPT-style biases + learned
# positions), sequence parallel, TP comm overlap, recompute, gradient-sync dtype. All run
# Megatron's distributed optimizer with grad-reduce and param-gather overlap, per-tensor FP8
# scaling on every transformer layer's linears (NeMo 24.07: TE DelayedScaling, HYBRID; Bridge:
# current scaling with first_last_layers_bf16 forced off by the perf scripts).
GPT3 = dict(gated_mlp=0, biases=1, tied=1)
LLAMA = dict(gated_mlp=1, biases=0, tied=0)
NEMOTRON = dict(gated_mlp=0, biases=0, tied=0)  # squared-ReLU MLP, RoPE, no biases
FP8_ROWS = {
    # id: (layers, hidden, ffn, heads, kv, vocab, kind, sequence_parallel, tp_comm_overlap, recompute, reduce_dtype)
    "nemo2407_GPT3-5B_64gpu": (24, 4096, 16384, 32, 32, 50304, GPT3, 0, 0, "none", "bf16"),
    "nemo2407_GPT3-20B_64gpu": (44, 6144, 24576, 48, 48, 50432, GPT3, 1, 1, "none", "bf16"),
    "nemo2407_GPT3-175B_128gpu": (96, 12288, 49152, 96, 96, 50688, GPT3, 1, 0, "none", "bf16"),
    "nemo2407_GPT3-175B_512gpu": (96, 12288, 49152, 96, 96, 50688, GPT3, 1, 0, "none", "bf16"),
    "nemo2407_LLAMA2-7B_8gpu": (32, 4096, 11008, 32, 32, 32000, LLAMA, 0, 0, "none", "bf16"),
    "nemo2407_LLAMA2-13B_16gpu": (40, 5120, 13824, 40, 40, 32000, LLAMA, 0, 0, "none", "bf16"),
    "nemo2407_LLAMA2-70B_64gpu": (80, 8192, 28672, 64, 8, 32256, LLAMA, 1, 1, "none", "bf16"),
    "nemo2407_Nemotron-8B_64gpu": (32, 4096, 16384, 32, 32, 256000, NEMOTRON, 1, 1, "none", "fp32"),
    "nemo2407_Nemotron-22B_64gpu": (40, 6144, 24576, 48, 48, 256000, NEMOTRON, 1, 1, "none", "fp32"),
    "nemo2407_Nemotron-340B_128gpu": (96, 18432, 73728, 96, 8, 256000, NEMOTRON, 1, 0, "selective_attention", "bf16"),
    "nemo2407_LLAMA3-8B_8gpu": (32, 4096, 14336, 32, 8, 128256, LLAMA, 0, 0, "none", "bf16"),
    "nemo2407_LLAMA3-70B_64gpu": (80, 8192, 28672, 64, 8, 128512, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2511_h100_LLAMA3-70B": (80, 8192, 28672, 64, 8, 128512, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2511_h100_LLAMA3p1-405B": (126, 16384, 53248, 128, 8, 129024, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2509_h100_LLAMA3-8B": (32, 4096, 14336, 32, 8, 128256, LLAMA, 0, 0, "none", "bf16"),
    "mbridge2509_h100_LLAMA3-70B": (80, 8192, 28672, 64, 8, 128512, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2509_h100_LLAMA3p1-405B": (126, 16384, 53248, 128, 8, 129024, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2606_h100_LLAMA3p1-405B": (126, 16384, 53248, 128, 8, 129024, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2604p01_h100_LLAMA3-70B": (80, 8192, 28672, 64, 8, 128512, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2604p01_h100_LLAMA3p1-405B": (126, 16384, 53248, 128, 8, 129024, LLAMA, 1, 1, "none", "bf16"),
    "mbridge2602_h100_LLAMA3p1-405B": (126, 16384, 53248, 128, 8, 129024, LLAMA, 1, 1, "none", "bf16"),
}


# The software stack each source ran (training.stack, docs/simulator.md "Software stack"):
# Megatron-LM / Megatron-Core / NeMo / Megatron-Bridge run Megatron's fused kernels (and
# Transformer Engine where it exists); torchtitan's rows say whether torch.compile was on; NeMo
# AutoModel trains Hugging Face models under FSDP2 in eager mode.
STACK_OF_SOURCE = {"torchtitan_docs": "torchtitan_eager", "torchao": "torchtitan_compile","narayanan21": "megatron", "korthikanti22": "megatron", "mcore080_h100_weak": "megatron",
                   "nemo2407": "megatron", "mbridge": "megatron", "automodel": "fsdp2", "llmfoundry": "fsdp1",
                   "nanotron": "nanotron", "mlperf": "megatron"}


def num(s):
    return int(str(s).split()[0].replace("~", ""))


def source_of(rid):
    if rid in FP8_ROWS:
        return "nemo2407" if rid.startswith("nemo2407") else "mbridge"
    for prefix in ("narayanan21", "korthikanti22", "mcore080_h100_weak", "torchtitan", "automodel"):
        if rid.startswith(prefix):
            return prefix
    return None


def case(r):
    rid = r["id"]
    src = source_of(rid)
    if src is None:
        return None
    if src in ("nemo2407", "mbridge"):
        return fp8_case(r, src)
    prec = r["precision"].lower()
    if "fp8" in prec or r["moe_experts"]:
        return None
    if src == "torchtitan" and ("asyncTP" in rid or "t2_" in rid or "t4_" in rid or "t5_" in rid or "t6_" in rid):
        return None
    if src == "automodel" and "LLAMA3-70B" not in rid:
        return None
    # Framework settings the source states (0: off / the strategy's default bucket).
    c = {"id": rid, "source": src, "assumed": "", "async_tp": 0, "overlap_param_gather": 0, "dp_bucket_params": 0,
         "fp8": "none", "reduce_dtype": "fp32"}
    gpu = r["gpu"]
    c["gpu"] = "a100-80g" if "A100" in gpu else "h100-sxm"
    for k in ("layers", "hidden", "heads", "seq_len", "tp", "pp", "dp", "mbs" if src != "mcore080_h100_weak" else None,
              "gbs_seqs"):
        if k:
            c["gbs" if k == "gbs_seqs" else k] = num(r[k])
    c["gpus"] = num(r["gpus_total"])
    c["cp"] = num(r["cp"]) if r["cp"].strip()[:1].isdigit() else 1
    vpp = r["vpp"].strip()
    c["vpp"] = num(vpp) if vpp[:1].isdigit() else 1
    gpt = src in ("narayanan21", "korthikanti22", "mcore080_h100_weak")
    if gpt:
        c.update(ffn_hidden=4 * c["hidden"], kv_heads=c["heads"], gated_mlp=0, biases=1, tied=1,
                 position_embeddings=c["seq_len"])
        c["vocab"] = 51200 if src != "mcore080_h100_weak" else 131072
    else:
        c.update(ffn_hidden=num(r["ffn_hidden"]), kv_heads=num(r["kv_heads"]), gated_mlp=1, biases=0, tied=0,
                 position_embeddings=0, vocab=num(r["vocab"]))
    if src == "narayanan21":
        c.update(sequence_parallel=0, data_parallel="ddp", recompute="full", attention="standard", dtype="fp16")
    elif src == "korthikanti22":
        sel = "selective" in rid
        c.update(sequence_parallel=1 if sel else 0, data_parallel="none",
                 recompute="selective_attention" if sel else "full", attention="standard", dtype="fp16")
    elif src == "mcore080_h100_weak":
        c.update(mbs=1, sequence_parallel=1 if c["tp"] > 1 else 0, data_parallel="zero1", recompute="none",
                 attention="flash", dtype="bf16")
        c["assumed"] = ("GPT MLP 4h, MHA, vocab 131072, bf16, micro-batch 1, no recompute, no interleaving, "
                        "distributed optimizer, sequence parallel with tp, flash attention")
        # Stated in the README: --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap; the
        # DDP bucket is Megatron-Core r0.8.0's default max(4e7, 1e6 x dp) parameters
        # (megatron/core/distributed/distributed_data_parallel.py), used with --overlap-grad-reduce.
        c.update(async_tp=1 if c["tp"] > 1 else 0, overlap_param_gather=1, dp_bucket_params=max(40000000, 1000000 * c["dp"]))
    elif src == "torchtitan":
        ac = "full" if r["recompute"].startswith("full") else "selective"
        c.update(sequence_parallel=1 if c["tp"] > 1 else 0, data_parallel="fsdp", recompute=ac, attention="flash",
                 dtype="bf16")
        c["gpu"] = "h100-96g-500w"
        c["assumed"] = "bf16 without async TP"
    elif src == "automodel":
        c.update(sequence_parallel=0, data_parallel="fsdp", recompute="full", attention="flash", dtype="bf16")
    step = r["measured_step_time_s"] or r["step_time_s_derived"]
    c["step_s"] = float(step)
    return c


def fp8_case(r, src):
    layers, hidden, ffn, heads, kv, vocab, kind, sp, tpo, recompute, reduce_dtype = FP8_ROWS[r["id"]]
    vpp = r["vpp"].strip()
    c = {"id": r["id"], "source": src, "gpu": "h100-sxm", "layers": layers, "hidden": hidden, "ffn_hidden": ffn,
         "heads": heads, "kv_heads": kv, "vocab": vocab, "seq_len": num(r["seq_len"]), "gpus": num(r["gpus_total"]),
         "tp": num(r["tp"]), "pp": num(r["pp"]), "cp": num(r["cp"]), "vpp": num(vpp) if vpp[:1].isdigit() else 1,
         "mbs": num(r["mbs"]), "gbs": num(r["gbs_seqs"]), "sequence_parallel": sp, "async_tp": tpo,
         "recompute": recompute, "attention": "flash", "dtype": "bf16", "fp8": "tensorwise",
         "reduce_dtype": reduce_dtype, "overlap_param_gather": 1, **kind}
    c["dp"] = c["gpus"] // (c["tp"] * c["pp"] * c["cp"])
    # Megatron-FSDP (optim_grads_params) for Bridge 25.09's 8B row, else the distributed optimizer.
    c["data_parallel"] = "fsdp" if r["id"] == "mbridge2509_h100_LLAMA3-8B" else "zero1"
    c["position_embeddings"] = c["seq_len"] if kind is GPT3 else 0
    # Megatron-Core's DDP bucket, max(4e7, 1e6 x dp) parameters (as for the r0.8.0 rows).
    c["dp_bucket_params"] = max(40000000, 1000000 * c["dp"])
    # The recipes' own buckets (NeMo 50-400 MB, Bridge 128 MB) move these steps by at most 1%.
    c["assumed"] = ("settings from the framework's recipe of that release (fp8_settings.md); DDP bucket "
                    "Megatron-Core's default rather than the recipe's")
    c["step_s"] = float(r["measured_step_time_s"] or r["step_time_s_derived"])
    return c


# A100 SXM4 40 GB: planck's a100-40g preset (core/plan/presets.cc).
def gpu_of(text):
    if "A100" in text:
        return "a100-40g" if "40GB" in text else "a100-80g"
    if "H100" in text:
        return "h100-sxm"
    return None


def new_case(r):
    """A row of runs_new.csv (gathered for issue 31; SOURCES_new.md): llm-foundry's MPT tables
    (Composer + PyTorch FSDP1), nanotron's best-config sweep, torchtitan's historical
    docs/performance.md (A100 FSDP2 2024-04, and the 405B 2D row of 2024-10) and TorchAO's BF16 H100
    row (torchtitan with torch.compile). Left out: OLMo-core (its table gives tokens/s per GPU but
    not the GPU count); IBM fms-fsdp (the share of blocks its selective checkpointing recomputes is
    not stated); Megatron-DeepSpeed and BLOOM (V100 rows without a preset; long-sequence rows whose
    model and batch its README does not name); MLPerf's Blackwell and AMD rows (no preset) and its
    GPT-3 rows (their steps come from block timing, not a logged step time) -- its H100 Llama 3.1
    rows with a measured step are taken by mlperf_case(); the Megatron-Bridge Blackwell rows
    (no GB200/GB300 preset; FP4/MXFP8 recipes) and its H100 rows of releases not in runs.csv (their
    recipe settings are not read yet); torchtune (single consumer GPUs without a preset); MaxText
    (JAX, no stack of planck's); Colossal-AI (its table contradicts itself); FP8 rows (their recipe
    is not read); rows whose step cannot be derived."""
    rid = r["id"]
    src = ("llmfoundry" if rid.startswith("llmfoundry") else "nanotron" if rid.startswith("nanotron") else
           "torchtitan_docs" if rid.startswith("torchtitan_") else
           "torchao" if rid == "torchao_e2e_h100_llama3_8b_bf16" else None)
    if src is None or "fp8" in r["precision"].lower() or r["stack"] == "torchtitan-fp8":
        return None
    gpu = gpu_of(r["gpu"])
    step = r["measured_step_time_s"] or r["step_time_s_derived"]
    if gpu is None or not step:
        return None
    c = {"id": rid, "source": src, "gpu": gpu, "async_tp": 0, "overlap_param_gather": 0, "dp_bucket_params": 0,
         "fp8": "none", "reduce_dtype": "fp32", "stack": STACK_OF_SOURCE[src], "step_s": float(step),
         "peak_memory_gb": r["peak_memory_gb"], "peak_memory_kind": r["peak_memory_kind"]}
    for k in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "seq_len", "tp", "pp", "dp", "mbs"):
        c[k] = num(r[k])
    c["gbs"] = num(r["gbs_seqs"])
    c["gpus"] = num(r["gpus_total"])
    c["gpus_per_node"] = num(r["gpus_per_node"]) if r["gpus_per_node"].strip() else 8
    c["cp"], c["vpp"] = 1, 1
    rc = r["recompute"]
    c["recompute"] = ("full" if rc.startswith("full") or rc.startswith("selective layer") else
                      "selective" if rc.startswith("selective op") or rc.startswith("selective (per-op") else "none")
    # torchtitan's layer SAC checkpoints every 2nd block: full recompute of half the layers.
    c["recompute_every"] = 2 if rc.startswith("selective layer") else 0
    c["attention"], c["dtype"] = "flash", "bf16"
    if src == "llmfoundry":
        # MPT: GELU MLP, MHA, no linear biases (no_bias), tied embeddings, learned positions of
        # max_seq_len (the row's NumParams grows with seq_len). Composer's FSDP1 FULL_SHARD (or
        # SHARD_GRAD_OP = zero2) syncs gradients every micro-batch: Composer runs no no_sync.
        c.update(gated_mlp=0, biases=0, layer_norm=1, tied=1, position_embeddings=c["seq_len"], sequence_parallel=0,
                 data_parallel="zero2" if "SHARD_GRAD_OP" in r["dp_sharding"] else "fsdp", grad_sync="every_microbatch")
        # submit_benchmarks.py, which made these tables, sets attn_impl = 'triton' by default
        # (mosaicml/llm-foundry@12a6319 scripts/train/benchmarking/submit_benchmarks.py): MPT's
        # FA1-era Triton flash attention, priced as FlashAttention-1.
        c["attention_kernel"] = "fa1" if "Table date 2023" in r["notes"] else "fa2"
        c["assumed"] = ("gradients reduced every micro-batch (Composer FSDP1); 8 GPUs per node; attention "
                        "priced as FlashAttention-1 (attn_impl triton)")
    elif src in ("torchtitan_docs", "torchao"):
        # torchtitan's Llama (SwiGLU, RMSNorm, RoPE, untied) under FSDP2 (with TP 8 for the 405B
        # row), gradients reduced once per step; torch.compile off for docs/performance.md (its
        # default; not stated), on for torchao's harness (benchmarks/float8/training/llama3.sh).
        # SDPA's flash backend is FA2.
        c.update(gated_mlp=1, biases=0, layer_norm=0, tied=0, position_embeddings=0,
                 sequence_parallel=1 if c["tp"] > 1 else 0, data_parallel="fsdp", grad_sync="last_microbatch",
                 attention_kernel="fa2", stack="torchtitan_compile" if src == "torchao" else "torchtitan_eager")
        if "95GB" in r["gpu"] or "Grand Teton" in r["gpu"]:
            c["gpu"] = "h100-96g-500w"
        if src == "torchao":
            # TorchAO's table says "8xH100" only. Priced as the part every other H100 benchmark
            # of the PyTorch team names (torchtitan benchmarks/ and docs/performance.md: H100
            # 95-96 GB HBM2e at 500 W, Meta's Grand Teton), which the numbers support: its BF16
            # baseline, 6,150 tokens/s per GPU with torch.compile + FSDP2 + per-op SAC at 8,192
            # tokens, is 8% below torchtitan's own compiled FSDP row on that 500 W part (6,668
            # tokens/s, llama3_h100_202412_torchtitan.md), where a 700 W SXM5 part (+12% peak,
            # +40% HBM bandwidth) would run faster. Priced as h100-sxm the row is 26.1% off.
            c["gpu"] = "h100-96g-500w"
        c["assumed"] = ("torch.compile off (not stated)" if src == "torchtitan_docs" else
                        "H100 variant not stated: priced as the PyTorch team's 500 W part "
                        "(h100-96g-500w), which torchtitan's benchmarks name")
    else:
        # nanotron Llama: SwiGLU, RMSNorm, untied unless the row says tied; ZeRO-1 or plain DP,
        # 1F1B pipeline, gradients accumulated in fp32 and reduced once per step. The sweep's
        # config (huggingface/nanotron@67c5ebb6 examples/config_tiny_llama_bench.yaml, the base of
        # scripts/scaling_benchmarks.py) sets tp_mode REDUCE_SCATTER (sequence parallel) and
        # tp_linear_async_communication, which overlaps a column-parallel linear's all-gather
        # only with the matmul of the rank's own shard, 1/tp of it, then waits for the rest
        # (src/nanotron/parallel/tensor_parallel/functional.py _ColumnLinearAsyncCommunication):
        # not async TP's chunked pipeline, so priced as not overlapped.
        tied = "tied embeddings: True" in r["notes"]
        c.update(gated_mlp=1, biases=0, layer_norm=0, tied=1 if tied else 0, position_embeddings=0,
                 sequence_parallel=1 if c["tp"] > 1 else 0,
                 data_parallel="zero1" if r["dp_sharding"].startswith("zero1") else "ddp", grad_sync="last_microbatch")
        c["attention_kernel"] = "fa2"
        c["assumed"] = ("step from the published MFU and nanotron's FLOP count; sequence parallel from the sweep's base "
                        "config; its all-gather overlap with the local shard's matmul not priced")
    if c["tp"] * c["pp"] * c["dp"] * c["cp"] != c["gpus"]:
        return None
    return c


def mlperf_case(r):
    """MLPerf Training Llama 3.1 405B (v5.0) and 8B (v5.1) on H100 SXM with a measured step time
    (the median train_step_time of the audited MLLOG logs; SOURCES_new.md #8), and GPT-3 175B
    (v4.0, v4.1) timed by blocks: NVIDIA's NeMo /
    Megatron-Core implementation with FP8 linears (config_common FP8=True, per-tensor scaling),
    TP comm overlap where tp > 1, sequence parallel with tp, the distributed optimizer with
    overlapped gradient reduce and parameter gather, no recompute, gradients reduced in bf16."""
    rid = r["id"]
    gpt3 = rid.startswith("mlperfv4") and "_gpt3_" in rid and r["vpp"].strip()[:1].isdigit()
    if not (rid.startswith("mlperfv50_llama31_405b") or rid.startswith("mlperfv51_llama31_8b") or gpt3 or
            (rid.startswith("mlperfv51_llama31_405b") and "B200" in r["gpu"])):
        return None
    step = r["measured_step_time_s"] or (r["step_time_s_derived"] if gpt3 else "")
    if "H100" not in r["gpu"] or not step:
        return None
    big = "405b" in rid
    vpp = r["vpp"].strip()
    c = {"id": rid, "source": "mlperf", "gpu": "h100-sxm", "layers": num(r["layers"]), "hidden": num(r["hidden"]),
         "ffn_hidden": num(r["ffn_hidden"]), "heads": num(r["heads"]), "kv_heads": num(r["kv_heads"]),
         # Megatron pads the vocabulary to a multiple of 128 x tp (129024 for 405B at tp 8).
         "vocab": 129024 if big else 128256, "seq_len": num(r["seq_len"]), "gpus": num(r["gpus_total"]),
         "gpus_per_node": num(r["gpus_per_node"]) if r["gpus_per_node"].strip() else 8,
         "tp": num(r["tp"]), "pp": num(r["pp"]), "dp": num(r["dp"]), "cp": num(r["cp"]) if r["cp"].strip() else 1,
         "vpp": num(vpp) if vpp[:1].isdigit() else 1, "mbs": num(r["mbs"]), "gbs": num(r["gbs_seqs"]),
         "gated_mlp": 1, "biases": 0, "layer_norm": 0, "tied": 0, "position_embeddings": 0,
         "recompute": "none", "recompute_every": 0, "attention": "flash", "attention_kernel": "fa2",
         "dtype": "bf16", "fp8": "tensorwise", "reduce_dtype": "bf16", "data_parallel": "zero1",
         "grad_sync": "last_microbatch", "overlap_param_gather": 1, "stack": "megatron",
         "step_s": float(step), "peak_memory_gb": "", "peak_memory_kind": ""}
    if gpt3:
        # GPT-3 175B: GELU MLP, biases and LayerNorm, learned positions, tied embeddings, vocab
        # 50257 padded to a multiple of 128 x tp (50688 at tp 4); the step is the median block
        # time over its steps (eval excluded), v4.0 / v4.1 rows whose config names the
        # interleaving (v3.1's and Supermicro's leave it unstated).
        c.update(gated_mlp=0, biases=1, layer_norm=1, tied=1, position_embeddings=c["seq_len"], vocab=50688)
    c["sequence_parallel"] = 1 if c["tp"] > 1 else 0
    c["async_tp"] = 1 if c["tp"] > 1 else 0
    c["dp_bucket_params"] = max(40000000, 1000000 * c["dp"])
    c["assumed"] = "FP8 per-tensor, bf16 gradient reduce, no recompute (MLPerf NeMo configs); layout " + \
        r["confidence"][:60]
    if c["tp"] * c["pp"] * c["dp"] * c["cp"] != c["gpus"]:
        return None
    return c


def blackwell_case(r):
    """MLPerf Training v5.1 Llama 3.1 8B / 405B on HGX / DGX B200 and B300 (8 GPUs a node) with a
    measured step and the NeMo FP8 recipe named by its config (SOURCES_new.md #8): the rows that
    check Blackwell's dense curve, which is H100's fit scaled by the MAMF ratio and is fitted on
    none of them (validation_blackwell.csv; tests/sim/sim_published_test.cc scores them with the
    shipped presets). Left out: NVFP4 and AMBIGUOUS precisions, and GB200 / GB300 racks, whose
    NVLink domain per job MLPerf's logs do not state."""
    rid = r["id"]
    if not (rid.startswith("mlperfv51_llama31_8b") or rid.startswith("mlperfv51_llama31_405b")):
        return None
    gpu = "b200" if r["gpu"].startswith("B200-SXM") else "b300" if r["gpu"].startswith("B300-SXM") else None
    if gpu is None or not r["precision"].startswith("fp8 (NeMo MLPerf FP8"):
        return None
    c = mlperf_case(dict(r, gpu="H100 " + r["gpu"]))
    if c is None:
        return None
    c["gpu"] = gpu
    return c


def main():
    rows = list(csv.DictReader(open(os.path.join(DATA, "runs.csv"))))
    cases = []
    for r in rows:
        c = case(r)
        if c is None:
            continue
        c.setdefault("stack", "torchtitan_compile" if "compile" in c["id"] else
                     "torchtitan_eager" if c["source"] == "torchtitan" else STACK_OF_SOURCE[c["source"]])
        c.setdefault("layer_norm", c["biases"])
        c.setdefault("attention_kernel", "fa2")
        c.setdefault("recompute_every", 0)
        c.setdefault("grad_sync", "last_microbatch")
        c.setdefault("gpus_per_node", 8)
        cases.append(c)
    for r in csv.DictReader(open(os.path.join(DATA, "runs_new.csv"))):
        c = new_case(r) or mlperf_case(r)
        if c is not None:
            cases.append(c)
    blackwell = [c for c in map(blackwell_case, csv.DictReader(open(os.path.join(DATA, "runs_new.csv")))) if c]
    # Megatron-Core / NeMo attention runs through Transformer Engine, which prefers cuDNN's fused
    # attention to FlashAttention on Hopper and later (transformer_engine/pytorch/attention/
    # dot_product_attention/utils.py get_attention_backend, "FusedAttention preference on
    # Hopper+"); the A100 rows (Megatron-LM 2021-22) keep FlashAttention-2's curve.
    for c in cases + blackwell:
        if c["stack"] == "megatron" and not c["gpu"].startswith("a100"):
            c["attention_kernel"] = "cudnn"
    write_cases("validation.csv", cases)
    write_cases("validation_blackwell.csv", blackwell)


def write_cases(name, cases):
    with open(os.path.join(DATA, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        for c in cases:
            w.writerow(c)
    print(f"{name}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
