#!/usr/bin/env python3
"""Fit and validate the GEMM efficiency ceilings of planck's GPU presets on the published runs of
tests/data/published/validation.csv (written by scripts/published_cases.py), leave-one-source-out.

The fitted constants: gemm_max per GPU generation ("a100": the a100 presets' rows, "h100": the
Hopper parts' BF16/FP16 rows) and fp8_gemm_max ("h100-fp8": rows with FP8 linears, the preset's
BF16 curve held). Each is the value minimising the mean over sources of each source's mean absolute
relative step-time error. Leave-one-source-out (--loso, the default): each source's rows are
predicted with the ceilings fitted on the other sources only; the score is the mean over runs, the
mean over sources and the worst source. --all: fit on every source (the values the presets hold).
The same computation runs in tests/sim/sim_published_loso.cc (sim_published_step_times).

Step time is simulated once per row on a grid of the ceiling and interpolated linearly in
1 / ceiling (compute time scales so), then the folds need no further simulation.

Run after building planck:  python3 scripts/fit_compute.py build/cli/planck [--all]"""
import csv
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "tests", "data", "published", "validation.csv")
GRID = [round(0.35 + 0.025 * i, 3) for i in range(25)]


def family(c):
    if c["fp8"] != "none":
        return "h100-fp8"
    return "a100" if c["gpu"].startswith("a100") else "h100"


def plan_of(c, ceiling):
    gpus = int(c["gpus"])
    gpn = min(int(c["gpus_per_node"]), gpus)
    vpp = int(c["vpp"])
    gpu = {"preset": c["gpu"]}
    if ceiling:
        gpu["compute"] = {"fp8_gemm_max" if family(c) == "h100-fp8" else "gemm_max": ceiling}
    dp = c["data_parallel"]
    return {
        "format": "planck/1", "name": c["id"],
        "cluster": {"nodes": gpus // gpn, "gpus_per_node": gpn, "gpu": gpu},
        "mesh": {"dims": ["pp", "dp", "cp", "tp"], "shape": [int(c["pp"]), int(c["dp"]), int(c["cp"]), int(c["tp"])]},
        "parallelism": {"data_parallel": "ddp" if dp == "none" else dp,
                        "sequence_parallel": c["sequence_parallel"] == "1",
                        "pipeline_schedule": "interleaved_1f1b" if vpp > 1 else "1f1b", "virtual_stages": vpp,
                        "async_tp": c["async_tp"] == "1", "overlap_param_gather": c["overlap_param_gather"] == "1",
                        **({"dp_bucket_params": int(c["dp_bucket_params"])} if int(c["dp_bucket_params"]) else {})},
        "model": {"layers": int(c["layers"]), "hidden": int(c["hidden"]), "ffn_hidden": int(c["ffn_hidden"]),
                  "heads": int(c["heads"]), "kv_heads": int(c["kv_heads"]), "vocab": int(c["vocab"]),
                  "gated_mlp": c["gated_mlp"] == "1", "biases": c["biases"] == "1",
                  "layer_norm": c["layer_norm"] == "1", "tied_embeddings": c["tied"] == "1",
                  "position_embeddings": int(c["position_embeddings"])},
        "training": {"global_batch": int(c["gbs"]), "micro_batch": int(c["mbs"]), "seq_len": int(c["seq_len"]),
                     "activation_checkpointing": c["recompute"], "attention": c["attention"],
                     "param_dtype": c["dtype"], "reduce_dtype": c["reduce_dtype"], "grad_sync": c["grad_sync"],
                     "stack": c["stack"], "attention_kernel": c["attention_kernel"], "fp8": c["fp8"]},
    }


def predict(planck, c, ceiling, tmp):
    plan = plan_of(c, ceiling)
    if int(c["recompute_every"]):
        plan["training"]["recompute_every"] = int(c["recompute_every"])
    path = os.path.join(tmp, f"{c['id']}-{ceiling}.json")
    with open(path, "w") as f:
        json.dump(plan, f)
    out = subprocess.run([planck, "simulate", path, "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{c['id']}: planck simulate failed: {out.stderr}")
    return json.loads(out.stdout)["step"]["step_time_s"]


def step_at(grid_s, x):
    x = min(max(x, GRID[0]), GRID[-1])
    i = 0
    while i + 2 < len(GRID) and GRID[i + 1] < x:
        i += 1
    u = (1 / x - 1 / GRID[i]) / (1 / GRID[i + 1] - 1 / GRID[i])
    return grid_s[i] + u * (grid_s[i + 1] - grid_s[i])


def fit(rows, held_out=None):
    best = (float("inf"), None)
    x = GRID[0]
    while x <= GRID[-1] + 1e-9:
        per = {}
        for c in rows:
            if c["source"] == held_out:
                continue
            per.setdefault(c["source"], []).append(abs(step_at(c["grid"], x) / float(c["step_s"]) - 1))
        if not per:
            return None
        err = sum(sum(v) / len(v) for v in per.values()) / len(per)
        best = min(best, (err, round(x, 3)))
        x += 0.001
    return best[1]


def main():
    planck = sys.argv[1]
    cases = list(csv.DictReader(open(CASES)))
    tmp = tempfile.mkdtemp()
    with ThreadPoolExecutor(4) as ex:
        for c in cases:
            c["grid"] = list(ex.map(lambda x, c=c: predict(planck, c, x, tmp), GRID))
    fams = {}
    for c in cases:
        fams.setdefault(family(c), []).append(c)
    if "--all" in sys.argv:
        for f, rows in sorted(fams.items()):
            print(f"{f}: ceiling {fit(rows)} over {len({c['source'] for c in rows})} sources, {len(rows)} rows")
        return
    per_source, total = {}, []
    for c in cases:
        x = fit(fams[family(c)], c["source"])
        p = step_at(c["grid"], x) if x else predict(planck, c, 0, tmp)
        e = p / float(c["step_s"]) - 1
        print(f"{c['source']:18} {c['id']:52} published {float(c['step_s']):9.3f}  predicted {p:9.3f}  {100*e:+6.1f}%  "
              f"({family(c)} ceiling {x})")
        per_source.setdefault(c["source"], []).append(abs(e))
        total.append(abs(e))
    means = {s: sum(v) / len(v) for s, v in per_source.items()}
    for s, m in sorted(means.items()):
        print(f"held-out {s:20} {100*m:5.1f}% ({len(per_source[s])} runs)")
    worst = max(means, key=means.get)
    print(f"LOSO: {len(total)} runs, {len(means)} sources; mean over runs {100*sum(total)/len(total):.1f}%, "
          f"over sources {100*sum(means.values())/len(means):.1f}%; worst {worst} {100*means[worst]:.1f}%")


if __name__ == "__main__":
    main()
