#!/usr/bin/env python3
"""Published MoE runs (tests/data/published/moe_runs.csv, sources in SOURCES_moe.md) -> the rows
tests/sim/sim_published_moe_test.cc simulates (tests/data/published/moe_validation.csv).

Kept: H100, B200, B300, GB200 and GB300 rows of models planck has a preset for, with a stated precision planck prices
(bf16, FP8 current scaling, FP8 blockwise / sub-channel, MXFP8) and a step time. Left out, with the
reason printed: NVFP4, unstated precision, hybrid Mamba models, rows without a layout, and runs
on AWS EFA (p5 / p6 instances: NCCL through aws-ofi-nccl and DeepEP through a host proxy or UCCL,
a network planck's GPU presets do not describe; they price InfiniBand / RoCE NICs at 47/50 of
line rate). Settings the row does not state are
read as the recipe's defaults and listed in `assumed`."""
import csv
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "published"

MODELS = {"Qwen3-30B-A3B": "qwen3-30b-a3b", "Qwen3-235B-A22B": "qwen3-235b-a22b", "DeepSeek-V3": "deepseek-v3",
          "DeepSeek-V3 (no MTP in layout)": "deepseek-v3", "GPT-OSS-120B": "gpt-oss-120b",
          "Mixtral-8x22B": "mixtral-8x22b"}


# The GPU column's part -> planck's preset. GB200 / GB300 run on NVL72 racks: trays of 4 GPUs
# (gpus_per_node 4), and the job's NVLink domain is the Slurm segment Bridge's executor asks for:
# all the trays up to 18, else the largest divisor of the tray count up to 18
# (scripts/performance/utils/executors.py, "add --segment flag to sbatch if job uses GB200"):
# 256 GPUs = 64 trays run as 4 segments of 16 trays, 64 GPUs each.
GPUS = [("H100", "h100-sxm"), ("B200", "b200"), ("GB200", "gb200"), ("GB300", "gb300"), ("B300", "b300")]
NVL72 = ("gb200", "gb300")
# Megatron-Core's recompute_modules names (megatron/core/transformer/transformer_config.py).
RECOMPUTE_MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")


def fp8_of(p, gpu):
    pl = p.lower()
    if pl.startswith("bf16"):
        return "none"
    if "nvfp4" in pl or "not stated" in pl:
        return None
    if "mxfp8" in pl or "fp8-mx" in pl:
        return "mxfp8"
    # Megatron-Bridge 25.09's "FP8alt" footnote: sub-channel scaling on H100, "MX 32x32" on
    # GB200 / B200 (Blackwell runs the MX recipe).
    if "or mx 32x32 (gb200/b200)" in pl and gpu in ("b200", "b300", "gb200", "gb300"):
        return "mxfp8"
    if "sub-channel" in pl or "blockwise" in pl:
        return "blockwise"
    if "fp8" in pl:
        return "tensorwise"
    return None


def dispatcher_of(d):
    dl = d.lower()
    if "uccl" in dl:
        return None, ""
    # Megatron-Bridge 25.09's run_script.py: token drop "disables DeepEP" (the text names DeepEP).
    if "token drop" in dl:
        return "alltoall", ""
    if "hybridep" in dl:
        return "hybridep", ""
    if "deepep" in dl:
        return "deepep", ""
    if "alltoall" in dl or "all-to-all" in dl:
        return "alltoall", ""
    return "alltoall", "dispatcher not stated: alltoall (Megatron-Bridge provider default)"


def megatron_layout(cell):
    """The row's pipeline layout in Megatron's --pipeline-model-parallel-layout syntax. moe_runs.csv
    writes Megatron-Bridge's layout_map entries in a shorthand ("E+4t|(4t|)x14|1t+mL" for
    [["embedding"] + ["decoder"] * 4] + [["decoder"] * 4] * 14 + [["decoder"] + ["mtp"] + ["loss"]],
    src/megatron/bridge/recipes/deepseek/deepseek_v3.py layout_map at 97ad8cc6f), which Megatron's
    parser would refuse; the same layout in its syntax is "Et*4|(t*4|)*14tmL"."""
    layout = cell.split(" ")[0] if cell[:1] == "E" else ""
    # (The (8, 1) map of the same recipe, [["embedding"] + ["decoder"] * 8] + [["decoder"] * 8] * 6 +
    # [["decoder"] * 5 + ["mtp", "loss"]], is written "E+8t|8t x6|5t+mL".)
    return {"E+4t|(4t|)x14|1t+mL": "Et*4|(t*4|)*14tmL", "E+8t|8t": "Et*8|(t*8|)*6t*5mL"}.get(layout, layout)


def layout_stages(layout):
    """Stages of a Megatron layout string: '|'-separated after expanding (...)*n and x*n."""
    import re
    prev = None
    while prev != layout:
        prev = layout
        layout = re.sub(r"\(([^()]*)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), layout)
    layout = re.sub(r"([A-Za-z])\*(\d+)", lambda m: m.group(1) * int(m.group(2)), layout)
    return len([s for s in layout.split("|") if s != ""])


def main():
    rows = list(csv.DictReader(open(DATA / "moe_runs.csv")))
    out = []
    for r in rows:
        why = None
        model = MODELS.get(r["model"])
        gpu = next((preset for prefix, preset in GPUS if r["gpu"].startswith(prefix)), None)
        fp8 = fp8_of(r["precision"], gpu)
        disp, disp_note = dispatcher_of(r["dispatcher"])
        step = r["measured_step_time_s"] or r["step_time_s_derived"]
        if not model:
            why = "no planck preset for " + r["model"]
        elif not gpu:
            why = "GPU " + r["gpu"] + " has no planck preset"
        elif fp8 is None:
            why = "precision " + r["precision"][:30]
        elif "EFA" in r["interconnect"] + r["source"] + r["dispatcher"] or "p5." in r["gpu"] or disp is None:
            why = "AWS EFA network (not modelled)"
        elif not step or not r["tp"] or not r["pp"] or not r["ep"]:
            why = "no step time or layout"
        elif int(r["gpus_total"]) % (int(r["pp"]) * int(r["ep"])) != 0:
            # Megatron-Core's expert grid is pp x etp x ep x edp = world (RankGenerator refuses
            # the rest): 25.09's GB200 DeepSeek-V3 "alternate" cells (PP 8, EP 64 on 256 GPUs)
            # mix two layouts' values.
            why = "layout impossible on its GPUs (pp x ep does not divide the world)"
        if why:
            print("skip", r["id"], "-", why, file=sys.stderr)
            continue
        assumed = [disp_note] if disp_note else []
        nvlink_domain = ""
        if gpu in NVL72:
            trays = int(r["gpus_total"]) // 4
            segment = trays if trays <= 18 else max(d for d in range(1, 19) if trays % d == 0)
            nvlink_domain = str(4 * segment)
            if not r["source"].startswith("Megatron-Bridge"):
                assumed.append("NVLink domain " + nvlink_domain + " GPUs (Megatron-Bridge's Slurm segment rule)")
        rc = r["recompute"].lower()
        recompute = "full" if rc.startswith("full") else "none"
        modules = []
        if rc.startswith("selective"):
            # Megatron's --recompute-modules (transformer_config.py recompute_modules) as the row
            # names them; "selective" alone is Megatron's default, the attention core.
            recompute = "selective_attention"
            body = re.sub(r"\([^)]*\)", "", rc.split(";")[0])[len("selective"):].replace("mla up_proj", "mla_up_proj")
            for tok in re.split(r"[,:\s]+", body):
                tok = {"shared_expert": "shared_experts"}.get(tok, tok)
                if tok in RECOMPUTE_MODULES and tok not in modules:
                    modules.append(tok)
            if "moe" in modules:
                assumed.append("Megatron's moe module recompute priced as none")
            if "optimizer-state offload" in rc:
                assumed.append("optimizer-state offload priced as none")
            elif "offload" in rc:
                assumed.append("activation offload priced as none")
        elif not rc.startswith("none") and not rc.startswith("full"):
            assumed.append("recompute not stated: none")
        vpp = r["vpp"] if r["vpp"].isdigit() else "1"
        tp, cp, ep = int(r["tp"]), int(r["cp"] or 1), int(r["ep"])
        capacity = "1.0" if "token drop" in r["dispatcher"].lower() else ""
        # Only the expert-parallel overlap flag: the same cell may say moe_shared_expert_overlap=True
        # or tp_comm_overlap=True, which are other features.
        overlap = "1" if "overlap_moe_expert_parallel_comm=true" in r["overlap"].lower() else "0"
        bridge = r["source"].startswith("Megatron-Bridge")
        mzoo = r["source"].startswith("Megatron-LM MoE model zoo")
        # Gradient reduction dtype: every Megatron-Bridge MoE recipe sets grad_reduce_in_fp32 = False
        # (scripts/performance/configs/*/..._llm_pretrain.py, 25.09's yaml); Megatron-LM with --bf16
        # and no --grad-reduce-in-bf16 reduces in fp32 (the model zoo's yaml).
        reduce_dtype = "bf16" if bridge else "fp32"
        # The model zoo's sbatch_benchmarking.sh adds --tp-comm-overlap for PR=bf16; the Bridge
        # recipes of these TP > 1 rows set tp_comm_overlap=False.
        async_tp = "1" if mzoo and fp8 == "none" and tp > 1 else "0"
        # Model zoo Qwen3-235B-A22B.yaml: --account-for-embedding/loss-in-pipeline-split; other rows
        # that split this way say so in their layout cell.
        account = "1" if (mzoo and "qwen3-235b" in r["id"]) or "account-for-embedding" in r["pipeline_layout"] else "0"
        if "account-for-embedding" in r["pipeline_layout"] and "assumed" in r["pipeline_layout"]:
            assumed.append("--account-for-embedding/loss-in-pipeline-split (" + r["model"] + "'s layers on pp x vp stages)")
        # Megatron-FSDP shards gradients (the model zoo's memory estimate divides all 18 bytes by
        # the DP size: optim_grads_params), so each micro-batch's gradients are reduce-scattered.
        grad_sync = "every_microbatch" if "fsdp on" in r["dp_sharding"].lower() else ""
        # Megatron-Bridge 25.09 run_script.py: DeepSeek-V3 on H100 sets overlap_grad_reduce = False.
        # CUDA graphs the recipe or command states: Megatron --cuda-graph-impl transformer_engine
        # --cuda-graph-scope ... (Megatron-Bridge cuda_graph_impl / cuda_graph_scope).
        m = re.search(r"cuda[_ ]graph[=: ]*(?:transformer_engine:)?\(?([a-z_, ]+)", r["overlap"] + " " + r["notes"], re.I)
        graphs = ",".join(x.strip() for x in m.group(1).replace(" ", ",").split(",") if x.strip() in
                          ("attn", "moe_router", "moe_preprocess", "mlp", "moe", "full_iteration")) if m else ""
        # The model zoo's GB200 / GB300 script comments: "paged stash + full-iteration CUDA graph".
        if re.search(r"full-iteration cuda graph", r["overlap"] + " " + r["notes"], re.I):
            graphs = "full_iteration"
        grad_overlap = "0" if "overlap_grad_reduce=false" in (r["notes"] + r["overlap"]).lower().replace(" ", "") else "1"
        layout = megatron_layout(r["pipeline_layout"])
        if layout and "prints none" in r["pipeline_layout"]:
            assumed.append("pipeline layout " + layout + " from " + ("Megatron-LM's recipe of this layout"
                           if "assumed" not in r["pipeline_layout"] else "Megatron-LM's pp 8 x vp 4 recipe"))
        if layout and layout_stages(layout) != int(r["pp"]) * int(vpp):
            # Megatron derives the virtual stages from the layout (megatron/training/arguments.py
            # checks layout stages == pp x vp): 25.09's DeepSeek-V3 B200 row states PP 16, VP 1 and
            # run_script.py's 32-stage layout "Et|(tt|)*30mL", which runs as 2 chunks per rank.
            assumed.append("virtual stages " + str(layout_stages(layout) // int(r["pp"])) + " from the " +
                           str(layout_stages(layout)) + "-stage pipeline layout (the table says " + vpp + ")")
            vpp = str(layout_stages(layout) // int(r["pp"]))
        out.append({"id": r["id"], "source": r["source"], "model": model, "gpu": gpu, "gpus": r["gpus_total"],
                    "gpus_per_node": r["gpus_per_node"], "nvlink_domain": nvlink_domain, "tp": tp, "pp": r["pp"], "cp": cp, "ep": ep, "vpp": vpp,
                    "mbs": r["mbs"], "gbs": r["gbs_seqs"], "seq_len": r["seq_len"], "fp8": fp8,
                    "recompute": recompute, "recompute_modules": ",".join(modules),
                    "data_parallel": "fsdp" if "fsdp on" in r["dp_sharding"].lower() else "zero1", "dispatcher": disp, "capacity_factor": capacity, "ep_overlap": overlap,
                    "pipeline_layout": layout, "reduce_dtype": reduce_dtype, "async_tp": async_tp,
                    "account_for_embedding_and_loss": account, "grad_sync": grad_sync, "grad_overlap": grad_overlap, "cuda_graphs": graphs,
                    "group": r["same_model_group"], "step_s": step,
                    "assumed": "; ".join(assumed)})
    with open(DATA / "moe_validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        w.writeheader()
        w.writerows(out)
    print(len(out), "rows", file=sys.stderr)


if __name__ == "__main__":
    main()
