#!/usr/bin/env python3
"""Published MoE runs (tests/data/published/moe_runs.csv, sources in SOURCES_moe.md) -> the rows
tests/sim/sim_published_moe_test.cc simulates (tests/data/published/moe_validation.csv).

Kept: H100 and B200 rows of models planck has a preset for, with a stated precision planck prices
(bf16, FP8 current scaling, FP8 blockwise / sub-channel, MXFP8) and a step time. Left out, with the
reason printed: NVFP4, unstated precision, hybrid Mamba models, rows without a layout, and runs
on AWS EFA (p5 / p6 instances: NCCL through aws-ofi-nccl and DeepEP through a host proxy or UCCL,
a network planck's GPU presets do not describe; they price InfiniBand / RoCE NICs at 47/50 of
line rate). Settings the row does not state are
read as the recipe's defaults and listed in `assumed`."""
import csv
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "published"

MODELS = {"Qwen3-30B-A3B": "qwen3-30b-a3b", "Qwen3-235B-A22B": "qwen3-235b-a22b", "DeepSeek-V3": "deepseek-v3",
          "DeepSeek-V3 (no MTP in layout)": "deepseek-v3", "GPT-OSS-120B": "gpt-oss-120b",
          "Mixtral-8x22B": "mixtral-8x22b"}


def fp8_of(p):
    pl = p.lower()
    if pl.startswith("bf16"):
        return "none"
    if "nvfp4" in pl or "not stated" in pl:
        return None
    if "mxfp8" in pl or "fp8-mx" in pl:
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
    if "hybridep" in dl:
        return "hybridep", ""
    if "deepep" in dl:
        return "deepep", ""
    if "alltoall" in dl or "all-to-all" in dl:
        return "alltoall", ""
    return "alltoall", "dispatcher not stated: alltoall (Megatron-Bridge provider default)"


def main():
    rows = list(csv.DictReader(open(DATA / "moe_runs.csv")))
    out = []
    for r in rows:
        why = None
        model = MODELS.get(r["model"])
        gpu = "h100-sxm" if r["gpu"].startswith("H100") else "b200" if r["gpu"].startswith("B200") else None
        fp8 = fp8_of(r["precision"])
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
        if why:
            print("skip", r["id"], "-", why, file=sys.stderr)
            continue
        assumed = [disp_note] if disp_note else []
        rc = r["recompute"].lower()
        recompute = "full" if rc.startswith("full") else "none"
        if rc.startswith("selective"):
            assumed.append("Megatron's module recompute (" + r["recompute"][:40] + ") priced as none")
        elif not rc.startswith("none") and not rc.startswith("full"):
            assumed.append("recompute not stated: none")
        vpp = r["vpp"] if r["vpp"].isdigit() else "1"
        tp, cp, ep = int(r["tp"]), int(r["cp"] or 1), int(r["ep"])
        capacity = "1.0" if "token drop" in r["dispatcher"].lower() else ""
        overlap = "1" if "=true" in r["overlap"].lower() else "0"
        layout = r["pipeline_layout"] if r["pipeline_layout"][:1] == "E" else ""
        layout = layout.split(" ")[0]
        out.append({"id": r["id"], "source": r["source"], "model": model, "gpu": gpu, "gpus": r["gpus_total"],
                    "gpus_per_node": r["gpus_per_node"], "tp": tp, "pp": r["pp"], "cp": cp, "ep": ep, "vpp": vpp,
                    "mbs": r["mbs"], "gbs": r["gbs_seqs"], "seq_len": r["seq_len"], "fp8": fp8,
                    "recompute": recompute,
                    "data_parallel": "fsdp" if "fsdp on" in r["dp_sharding"].lower() else "zero1", "dispatcher": disp, "capacity_factor": capacity, "ep_overlap": overlap,
                    "pipeline_layout": layout, "group": r["same_model_group"], "step_s": step,
                    "assumed": "; ".join(assumed)})
    with open(DATA / "moe_validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        w.writeheader()
        w.writerows(out)
    print(len(out), "rows", file=sys.stderr)


if __name__ == "__main__":
    main()
