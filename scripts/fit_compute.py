#!/usr/bin/env python3
"""Fit the GEMM efficiency curve of planck's GPU presets (gemm_max per GPU, gemm_half_dim shared)
to the FIT rows of tests/data/published/validation.csv, by grid search minimising the mean absolute
relative step-time error of `planck simulate` over those rows: gemm_max on the BF16/FP16 rows,
then, with that curve, fp8_gemm_max on the rows that train with FP8 linears (training.fp8). Held-back rows are never read here
(the split is made by scripts/published_cases.py before fitting). Prints the best parameters and
the per-row errors; the chosen values are copied into core/plan/presets.cc by hand with a comment.

Run after building planck:  python3 scripts/fit_compute.py build/cli/planck [--eval | --fp8-only]
--eval: no search, evaluate the presets as they are on every row (fit and held).
--fp8-only: keep the presets' BF16 curves, fit fp8_gemm_max only."""
import csv
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "tests", "data", "published", "validation.csv")


def plan_of(c, curve):
    gpus, gpn = int(c["gpus"]), min(8, int(c["gpus"]))
    vpp = int(c["vpp"])
    gpu = {"preset": c["gpu"]}
    if curve:
        gpu["compute"] = curve
    dims = ["pp", "dp", "cp", "tp"]
    shape = [int(c["pp"]), int(c["dp"]), int(c["cp"]), int(c["tp"])]
    dp = c["data_parallel"]
    return {
        "format": "planck/1", "name": c["id"],
        "cluster": {"nodes": gpus // gpn, "gpus_per_node": gpn, "gpu": gpu},
        "mesh": {"dims": dims, "shape": shape},
        "parallelism": {"data_parallel": "ddp" if dp == "none" else dp,
                        "sequence_parallel": c["sequence_parallel"] == "1",
                        "pipeline_schedule": "interleaved_1f1b" if vpp > 1 else "1f1b", "virtual_stages": vpp,
                        "async_tp": c["async_tp"] == "1", "overlap_param_gather": c["overlap_param_gather"] == "1",
                        **({"dp_bucket_params": int(c["dp_bucket_params"])} if int(c["dp_bucket_params"]) else {})},
        "model": {"layers": int(c["layers"]), "hidden": int(c["hidden"]), "ffn_hidden": int(c["ffn_hidden"]),
                  "heads": int(c["heads"]), "kv_heads": int(c["kv_heads"]), "vocab": int(c["vocab"]),
                  "gated_mlp": c["gated_mlp"] == "1", "biases": c["biases"] == "1", "tied_embeddings": c["tied"] == "1",
                  "position_embeddings": int(c["position_embeddings"])},
        "training": {"global_batch": int(c["gbs"]), "micro_batch": int(c["mbs"]), "seq_len": int(c["seq_len"]),
                     "activation_checkpointing": c["recompute"], "attention": c["attention"],
                     "param_dtype": c["dtype"], "reduce_dtype": c["reduce_dtype"], "fp8": c["fp8"]},
    }


def predict(planck, c, curve, tmp):
    path = os.path.join(tmp, c["id"] + ".json")
    with open(path, "w") as f:
        json.dump(plan_of(c, curve), f)
    out = subprocess.run([planck, "simulate", path, "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{c['id']}: planck simulate failed: {out.stderr}")
    return json.loads(out.stdout)["step"]["step_time_s"]


def errors(planck, cases, curves, tmp):
    def one(c):
        p = predict(planck, c, curves.get(c["gpu"]), tmp)
        return c, p, (p - float(c["step_s"])) / float(c["step_s"])
    with ThreadPoolExecutor(4) as ex:
        return list(ex.map(one, cases))


def mean_abs(rows):
    return sum(abs(e) for _, _, e in rows) / max(1, len(rows))


HALF_DIMS = tuple(int(x) for x in os.environ.get("HALF_DIMS", "32,64,128,256").split(","))


def main():
    planck = sys.argv[1]
    cases = list(csv.DictReader(open(CASES)))
    tmp = tempfile.mkdtemp()
    if "--eval" in sys.argv:
        rows = errors(planck, cases, {}, tmp)
        for c, p, e in rows:
            print(f"{c['set']:5} {c['id']:45} published {float(c['step_s']):9.3f}  predicted {p:9.3f}  {100*e:+6.1f}%")
        for s in ("fit", "held", "info"):
            print(s, f"{100 * mean_abs([r for r in rows if r[0]['set'] == s]):.1f}%")
        return
    if "--fp8-only" in sys.argv:
        fit_fp8(planck, cases, tmp, {})
        return
    fit = [c for c in cases if c["set"] == "fit" and c["fp8"] == "none"]
    best = None
    for half in HALF_DIMS:
        curves = {}
        for gpu in ("a100-80g", "h100-sxm"):
            rows_gpu = [c for c in fit if c["gpu"] == gpu]
            lo, hi = 0.3, 1.0
            # Mean |error| is unimodal in gemm_max here: golden-section search.
            g = 0.618
            a, b = lo + (1 - g) * (hi - lo), lo + g * (hi - lo)
            fa = mean_abs(errors(planck, rows_gpu, {gpu: {"gemm_max": a, "gemm_half_dim": half}}, tmp))
            fb = mean_abs(errors(planck, rows_gpu, {gpu: {"gemm_max": b, "gemm_half_dim": half}}, tmp))
            for _ in range(10):
                if fa < fb:
                    hi, b, fb = b, a, fa
                    a = lo + (1 - g) * (hi - lo)
                    fa = mean_abs(errors(planck, rows_gpu, {gpu: {"gemm_max": a, "gemm_half_dim": half}}, tmp))
                else:
                    lo, a, fa = a, b, fb
                    b = lo + g * (hi - lo)
                    fb = mean_abs(errors(planck, rows_gpu, {gpu: {"gemm_max": b, "gemm_half_dim": half}}, tmp))
            curves[gpu] = {"gemm_max": round((a + b) / 2, 3), "gemm_half_dim": half}
        err = mean_abs(errors(planck, fit, curves, tmp))
        print(f"gemm_half_dim {half}: {curves}  fit-set mean |error| {100 * err:.1f}%", flush=True)
        if best is None or err < best[0]:
            best = (err, curves)
    print("best:", json.dumps(best[1]), f"fit-set mean |error| {100 * best[0]:.1f}%")
    for c, p, e in errors(planck, fit, best[1], tmp):
        print(f"  {c['id']:45} published {float(c['step_s']):9.3f}  predicted {p:9.3f}  {100*e:+6.1f}%")
    fit_fp8(planck, cases, tmp, best[1])


def fit_fp8(planck, cases, tmp, curves):
    """fp8_gemm_max of h100-sxm on the FP8 fit rows, the BF16 curve held at `curves` (the presets'
    when empty): golden-section search of the mean |error|."""
    rows = [c for c in cases if c["set"] == "fit" and c["fp8"] != "none" and c["gpu"] == "h100-sxm"]
    base = dict(curves.get("h100-sxm", {}))

    def err(x):
        return mean_abs(errors(planck, rows, {"h100-sxm": {**base, "fp8_gemm_max": x}}, tmp))
    lo, hi, g = 0.3, 1.0, 0.618
    a, b = lo + (1 - g) * (hi - lo), lo + g * (hi - lo)
    fa, fb = err(a), err(b)
    for _ in range(12):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = lo + (1 - g) * (hi - lo)
            fa = err(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = err(b)
    x = round((a + b) / 2, 3)
    print(f"fp8_gemm_max (h100-sxm, {len(rows)} FP8 fit rows): {x}  fit-set mean |error| {100 * err(x):.1f}%")
    for c, p, e in errors(planck, rows, {"h100-sxm": {**base, "fp8_gemm_max": x}}, tmp):
        print(f"  {c['id']:45} published {float(c['step_s']):9.3f}  predicted {p:9.3f}  {100*e:+6.1f}%")


if __name__ == "__main__":
    main()
