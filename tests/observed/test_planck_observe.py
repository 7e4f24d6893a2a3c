#!/usr/bin/env python3
"""Tests of python/planck_observe.py.

--mode standin: the torch 2.x code path (distributed_c10d._world registry, group_desc, DeviceMesh
  labels) against a small STAND-IN module that imitates torch.distributed: no torch needed.
--mode live: for real with Debian's python3-torch (1.13, CPU): 8 gloo processes started by hand
  (torchrun is broken on Python 3.11) build the groups of mesh [dp_replicate=2, dp_shard=2, tp=2]
  with new_group, dump them, and `planck verify` must find the dump clean against the plan.
  Exits 77 (ctest: skipped) with a message when torch cannot be imported.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import planck_observe  # noqa: E402

DIMS = ["dp_replicate", "dp_shard", "tp"]
SHAPE = [2, 2, 2]


def mesh_groups(varied):
    """Groups of the row-major mesh varying dim `varied` (written independently of planck)."""
    out = {}
    for r in range(8):
        coord = [(r // 4) % 2, (r // 2) % 2, r % 2]
        key = tuple(c for i, c in enumerate(coord) if i != varied)
        out.setdefault(key, []).append(r)
    return sorted(out.values())


def expected_sets():
    sets = {("default_pg", tuple(range(8)))}
    for i, d in enumerate(DIMS):
        for g in mesh_groups(i):
            sets.add(("mesh_" + d, tuple(g)))
    return sets


def check_doc(doc):
    got = {(g.get("name", ""), tuple(g["ranks"])) for g in doc["groups"]}
    assert got == expected_sets(), f"groups differ:\n got {sorted(got)}\nwant {sorted(expected_sets())}"
    assert doc["world"] == 8 and doc["ranks_seen"] == list(range(8)), doc
    assert all(g["complete"] and g["size"] == len(g["ranks"]) for g in doc["groups"])


# ---- stand-in for torch 2.x -------------------------------------------------------------------
class StandInPG:
    def __init__(self, name, desc):
        self.group_name, self.group_desc = name, desc


class StandInMesh:  # the two DeviceMesh members planck_observe uses
    def __init__(self, groups):
        self.mesh_dim_names = tuple(DIMS)
        self._groups = groups

    def get_group(self, i):
        return self._groups[i]


def standin_world():
    """One process-group object per group, shared by its members, as torch 2.x keeps them."""
    world = StandInPG("0", "default_pg")
    per_rank = {r: {world: {r2: r2 for r2 in range(8)}} for r in range(8)}
    meshes = {r: [None, None, None] for r in range(8)}
    n = 1
    for i in range(3):
        for g in mesh_groups(i):
            pg = StandInPG(str(n), "undefined")  # torch < 2.4 has no desc: labels come from the mesh
            n += 1
            for local, r in enumerate(g):
                per_rank[r][pg] = {r2: j for j, r2 in enumerate(g)}
                meshes[r][i] = pg
    return world, per_rank, meshes


def standin_dist(rank, world, per_rank, meshes, everyone):
    c10d = types.SimpleNamespace(_world=types.SimpleNamespace(pg_group_ranks=per_rank[rank],
                                                              pg_names={pg: pg.group_name for pg in per_rank[rank]}))

    def all_gather_object(out, mine):
        for r in range(8):
            out[r] = mine if r == rank else everyone[r]

    return types.SimpleNamespace(distributed_c10d=c10d, group=types.SimpleNamespace(WORLD=world),
                                 GroupMember=types.SimpleNamespace(NON_GROUP_MEMBER=object()),
                                 get_rank=lambda: rank, get_world_size=lambda: 8, all_gather_object=all_gather_object)


def run_standin(args):
    world, per_rank, meshes = standin_world()
    everyone = {}
    for r in range(1, 8):
        d = standin_dist(r, world, per_rank, meshes, {})
        everyone[r] = {"rank": r, "host": socket.gethostname(),
                       "groups": planck_observe._local_groups(d, StandInMesh(meshes[r]), None)}
    d0 = standin_dist(0, world, per_rank, meshes, everyone)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "observed.json")
        doc = planck_observe.dump(out, dist=d0, mesh=StandInMesh(meshes[0]))
        check_doc(doc)
        check_doc(json.load(open(out)))
        verify(args, out)
    print("stand-in torch 2.x path: OK (STAND-IN module, not real torch)")
    return 0


# ---- real torch 1.13, gloo ----------------------------------------------------------------------
def worker(out):
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    names = {}
    for i, d in enumerate(DIMS):
        for g in mesh_groups(i):
            pg = dist.new_group(g)  # collective: every rank creates every group, in one order
            if rank in g:
                names["mesh_" + d] = pg
    t = torch.ones(1)
    dist.all_reduce(t, group=names["mesh_tp"])
    assert t.item() == 2.0
    planck_observe.dump(out, names=names)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_live(args):
    try:
        import torch  # noqa: F401
        import torch.distributed  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"SKIP: torch is not importable by {sys.executable} ({e}); install python3-torch (scripts/setup.sh)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "observed.json")
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="8")
        procs = [subprocess.Popen([sys.executable, __file__, "--worker", out], env=dict(env, RANK=str(r)))
                 for r in range(8)]
        codes = [p.wait(timeout=240) for p in procs]
        assert codes == [0] * 8, f"worker exit codes {codes}"
        doc = json.load(open(out))
        check_doc(doc)
        assert set(doc["hosts"].values()) == {socket.gethostname()}
        verify(args, out)
    print("live torch", __import__("torch").__version__, "gloo 8 processes: OK")
    return 0


def verify(args, observed_path):
    plan = os.path.join(args.data, "plans", "mesh_2x2x2_one_node.json")
    r = subprocess.run([args.planck, "verify", plan, "--observed", observed_path, "--format", "json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"planck verify exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    report = json.loads(r.stdout)
    assert report["ok"] and report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["standin", "live"])
    ap.add_argument("--planck")
    ap.add_argument("--data")
    ap.add_argument("--worker")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    return run_standin(args) if args.mode == "standin" else run_live(args)


if __name__ == "__main__":
    sys.exit(main())
