#!/usr/bin/env python3
"""Megatron-Core's RankGenerator on the mesh bench/bench_cli.sh gives planck groups, for the
comparison in docs/performance.md.

usage: megatron_rank_generator.py MEGATRON_LM_CHECKOUT OUT.json

Nothing of Megatron is copied into planck: this reads the checkout's own
megatron/core/parallel_state.py, takes its RankGenerator class and the
generate_masked_orthogonal_rank_groups function it calls (with Python's ast, so the rest of
megatron.core, which needs a current torch and its CUDA extensions, is not imported), and runs
them: tp 8, cp 2, dp 512, pp 16, order tp-cp-ep-dp-pp (Megatron's default), the groups of
tp, cp, dp, pp, tp-pp and dp-cp, written as JSON. Measured with Megatron-LM d98e8a64dd
(2026-08-22), the commit docs/performance.md names.
"""
import ast
import json
import os
import sys


def load(checkout):
    path = os.path.join(checkout, "megatron", "core", "parallel_state.py")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    wanted = {"generate_masked_orthogonal_rank_groups", "RankGenerator"}
    body = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in wanted]
    if len(body) != len(wanted):
        sys.exit(f"{path}: RankGenerator or generate_masked_orthogonal_rank_groups not found")
    ns = {"List": list, "Optional": None}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return ns["RankGenerator"]


def main():
    rank_generator = load(sys.argv[1])
    gen = rank_generator(tp=8, ep=1, dp=512, pp=16, cp=2, order="tp-cp-ep-dp-pp")
    out = {token: gen.get_ranks(token) for token in ("tp", "cp", "dp", "pp", "tp-pp", "dp-cp")}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
