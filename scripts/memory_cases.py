#!/usr/bin/env python3
"""Write tests/data/published/memory_validation.csv: published peak memory per GPU with the layout
and the software settings that decide it, one row per run, for the reserved-memory validation
(tests/sim/sim_published_memory_test.cc, docs/simulator.md "Memory as the allocator sees it").

The published figures are read from runs.csv + memory_for_existing_rows.csv (torchtitan's
benchmark tables, Trainy's H200 report), runs_new.csv (TorchAO's float8/MX end-to-end table) and
validation.csv (nanotron's best-config sweep); SOURCES.md / SOURCES_new.md give each source.
What a source leaves unstated and this script fills in is written per row in `assumed`; the facts
read from the frameworks' code are cited below.

Kinds (`memory_kind`):
  reserved   torch.cuda.max_memory_reserved (torchtitan logs reserved_bytes.all.peak: torchtitan
             @9dec370 train.py:393, metrics.py at later commits)
  allocated_or_reserved
             nanotron's figure: its benchmark CSV logs both torch.cuda.max_memory_allocated and
             max_memory_reserved (huggingface/nanotron@c2528430 src/nanotron/helpers.py:609-610)
             and the summary figure does not say which one it plots

Settings read from code:
  - torchtitan @9dec370 (the 2024-12 benchmark tables): the loss is not compiled ("TODO: compiling
    loss function causes CUDA errors", train.py:136-138), so cross_entropy = eager for every row;
    run_llama_train.sh sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; FSDP shards over
    dp_shard x cp; under PP the blocks do not reshard after forward and micro-batches default to
    the PP degree (parallelisms/pipelining_utils.py:79-81); loss_parallel on with TP.
  - torchtitan compiles the loss with the model from bbb1b616 (2025-04-02): Trainy's e7c0cae
    (2025-06) and TorchAO's 2025-08 runs have cross_entropy = compiled; TorchAO's H100 rows ran
    torchtitan 0.0.2 (2025-03), eager.
  - nanotron's benchmark config (examples/config_tiny_llama_bench.yaml @67c5ebb6): pp_engine
    1f1b, tp_mode REDUCE_SCATTER (sequence parallel), accumulate_grad_in_fp32, no recompute.

Run: python3 scripts/memory_cases.py  (rewrites memory_validation.csv)."""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "published")

FIELDS = ["id", "source", "gpu", "gpu_memory_gib", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab",
          "tied", "seq_len", "gpus", "gpus_per_node", "pp", "dp", "cp", "tp", "vpp", "mbs", "gbs",
          "sequence_parallel", "async_tp", "data_parallel", "recompute", "fp8", "stack", "cross_entropy",
          "memory_gib", "memory_kind", "assumed", "locator"]

LLAMA3 = {"8b": (32, 4096, 14336, 32, 8), "70b": (80, 8192, 28672, 64, 8), "405b": (126, 16384, 53248, 128, 8)}


def rows(name):
    with open(os.path.join(DATA, name)) as f:
        return list(csv.DictReader(f))


def llama(size, **kw):
    l, h, f, a, g = LLAMA3[size]
    r = {"layers": l, "hidden": h, "ffn_hidden": f, "heads": a, "kv_heads": g, "vocab": 128256, "tied": 0}
    r.update(kw)
    return r


def torchtitan_bench(out):
    mem = {r["id"]: r for r in rows("memory_for_existing_rows.csv")}
    runs = {r["id"]: r for r in rows("runs.csv")}
    for rid, m in mem.items():
        if not rid.startswith("torchtitan_"):
            continue
        r = runs[rid]
        size = "405b" if "405" in r["model"] else "70b" if "70" in r["model"] else "8b"
        fw = r["framework"]
        stack = "torchtitan_compile" if "compile" in fw else "torchtitan_eager"
        fp8 = "tensorwise" if "fp8" in r["precision"].lower() else "none"
        tp, pp, cp, dp = (int(r[k]) for k in ("tp", "pp", "cp", "dp"))
        seq = int(r["seq_len"])
        local = int(r["mbs"])  # torchtitan's local batch per data-parallel rank
        vpp = 2 if "Interleaved" in r["pp_schedule"] else 1
        assumed = "seq_len 8192 from train_configs where the table omits it"
        mbs, gbs = local, local * dp
        if pp > 1:
            # torchtitan @9dec370 splits the local batch into pp micro-batches by default.
            mbs = local // pp
            assumed += "; micro-batches = PP degree (torchtitan default), micro-batch " + str(mbs)
        rec = "full" if r["recompute"].startswith("full") else "selective"
        out.append(dict(llama(size), id=rid, source="torchtitan_bench", gpu="h100-96g-500w", gpu_memory_gib="",
                        seq_len=seq, gpus=int(r["gpus_total"]), gpus_per_node=8, pp=pp, dp=dp, cp=cp, tp=tp,
                        vpp=vpp, mbs=mbs, gbs=gbs, sequence_parallel=int(tp > 1), async_tp=int("AsyncTP" in fw),
                        data_parallel="fsdp", recompute=rec, fp8=fp8, stack=stack, cross_entropy="eager",
                        memory_gib=m["peak_memory_gb"], memory_kind="reserved", assumed=assumed,
                        locator=m["source_locator"]))


def trainy(out):
    mem = {r["id"]: r for r in rows("memory_for_existing_rows.csv")}
    for r in rows("runs.csv"):
        if not r["id"].startswith("trainy_"):
            continue
        gpus = int(r["gpus_total"])
        out.append(dict(llama("8b"), id=r["id"], source="trainy", gpu="h200", gpu_memory_gib="", seq_len=8192,
                        gpus=gpus, gpus_per_node=8, pp=1, dp=gpus, cp=1, tp=1, vpp=1, mbs=2, gbs=2 * gpus,
                        sequence_parallel=0, async_tp=0, data_parallel="fsdp", recompute="selective",
                        fp8="tensorwise", stack="torchtitan_compile", cross_entropy="compiled",
                        memory_gib=mem[r["id"]]["peak_memory_gb"], memory_kind="reserved",
                        assumed="llama3_8b.toml defaults @e7c0cae (seq 8192, op SAC)",
                        locator=mem[r["id"]]["source_locator"]))


def torchao(out):
    for r in rows("runs_new.csv"):
        if not r["id"].startswith("torchao_e2e_"):
            continue
        # "8xH100" is all the table says: the PyTorch team's 500 W part, as the step-time rows
        # (scripts/published_cases.py says why).
        gpu, mem_gib = "h100-96g-500w", ""
        assumed = "H100 variant unstated: the PyTorch team's 500 W part (h100-96g-500w)"
        if "_mi300x_" in r["id"]:
            gpu, mem_gib = "mi300x", 192
            assumed = "MI300X: planck's mi300x preset (196592 MiB as PyTorch reports it)"
        elif "_b200_" in r["id"]:
            gpu, assumed = "b200", "B200 \"power limited\", the limit not stated: priced as b200"
        # torchtitan 0.0.2 (2025-03) for the H100 rows: before the compiled loss; 2025-08 after.
        ce = "eager" if "_h100_" in r["id"] else "compiled"
        p = r["precision"].lower()
        fp8 = "mxfp8" if "mxfp8" in p else "rowwise" if "rowwise" in p else "tensorwise" if "fp8" in p else "none"
        out.append(dict(llama("8b"), id=r["id"], source="torchao", gpu=gpu, gpu_memory_gib=mem_gib, seq_len=8192,
                        gpus=8, gpus_per_node=8, pp=1, dp=8, cp=1, tp=1, vpp=1, mbs=1, gbs=8, sequence_parallel=0,
                        async_tp=0, data_parallel="fsdp", recompute="selective", fp8=fp8, stack="torchtitan_compile",
                        cross_entropy=ce, memory_gib=r["peak_memory_gb"], memory_kind="reserved",
                        assumed=assumed,
                        locator=r["source_locator"]))


def nanotron(out):
    for r in rows("validation.csv"):
        if r["source"] != "nanotron":
            continue
        tp = int(r["tp"])
        out.append({"id": r["id"], "source": "nanotron", "gpu": "h100-sxm", "gpu_memory_gib": "",
                    "layers": r["layers"], "hidden": r["hidden"], "ffn_hidden": r["ffn_hidden"], "heads": r["heads"],
                    "kv_heads": r["kv_heads"], "vocab": r["vocab"], "tied": r["tied"], "seq_len": r["seq_len"],
                    "gpus": r["gpus"], "gpus_per_node": 8, "pp": r["pp"], "dp": r["dp"], "cp": 1, "tp": tp, "vpp": 1,
                    "mbs": r["mbs"], "gbs": r["gbs"], "sequence_parallel": int(tp > 1), "async_tp": 0,
                    "data_parallel": r["data_parallel"], "recompute": "none", "fp8": "none", "stack": "nanotron",
                    "cross_entropy": "fused", "memory_gib": r["peak_memory_gb"],
                    "memory_kind": "allocated_or_reserved",
                    "assumed": "rank 0 (first pipeline stage) is the busiest GPU",
                    "locator": "huggingface/nanotron@2411b022:docs/benchmark_summary.svg"})


def main():
    out = []
    torchtitan_bench(out)
    trainy(out)
    torchao(out)
    nanotron(out)
    with open(os.path.join(DATA, "memory_validation.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        for r in out:
            w.writerow(r)
    print(f"{len(out)} rows")


if __name__ == "__main__":
    main()
