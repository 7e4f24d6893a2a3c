#!/usr/bin/env python3
"""`planck verify` on the real configs of docs/corpus.md: for each row of its table, the exit
code must match the verdict and the rules that fire must be exactly the listed ones (for
checks-skipped, with the input each note names). The table says why each diagnostic is right,
so a rule that starts or stops firing on a real config fails here until the table is amended,
and a row whose reason says "not justified" (a known false alarm) fails too.
Usage: test_corpus.py PLANCK_BIN SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys

planck, src = sys.argv[1], sys.argv[2]
VERDICT = {"ok": 0, "fails": 1, "cannot run": 2}
rows = []
with open(os.path.join(src, "docs", "corpus.md"), encoding="utf-8") as f:
    for line in f:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0].startswith("`tests/"):
            continue
        rows.append(cells)

failures = []
if len(rows) < 30:
    failures.append(f"docs/corpus.md lists {len(rows)} configs, fewer than 30")
for config, framework, world, verdict, listed, why in rows:
    path = config.strip("`")
    args = [planck, "verify", os.path.join(src, path), "--format", "json"]
    if world != "script":
        nodes, gpus = (w.strip() for w in world.split("x"))
        args += ["--nodes", nodes, "--gpus-per-node", gpus]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=src)
    want_rules = set() if listed in ("", "–", "-") else {x.strip() for x in listed.split(",")}
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        failures.append(f"{path}: not JSON: {r.stdout[:200]!r} {r.stderr[:200]!r}")
        continue
    got = set()
    for d in doc["diagnostics"]:
        if d["rule"] == "checks-skipped":
            m = re.search(r"the plan has no (\S+?), so", d["message"])
            got.add(f"checks-skipped({m.group(1) if m else '?'})")
        else:
            got.add(d["rule"])
    if r.returncode != VERDICT[verdict]:
        failures.append(f"{path}: exit {r.returncode}, the table says {verdict} ({VERDICT[verdict]})")
    if got != want_rules:
        failures.append(f"{path}: rules {sorted(got)}, the table says {sorted(want_rules)}")
    if "not justified" in why.lower():
        failures.append(f"{path}: the table marks a diagnostic as not justified (a false alarm planck still gives)")
    if framework not in ("torchtitan", "megatron", "megatron-bridge", "lingua", "deepspeed", "accelerate"):
        failures.append(f"{path}: unknown framework {framework!r} in the table")

for f in failures:
    print("FAIL:", f)
print(f"{len(rows)} configs, {len(failures)} failures")
sys.exit(1 if failures else 0)
