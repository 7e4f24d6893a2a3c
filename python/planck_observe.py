"""planck_observe: write a running torch.distributed job's process groups as planck-observed/1.

Call it on every rank once the job has built its groups (it is collective over the default group):

    import planck_observe
    planck_observe.dump("observed.json")                      # any torch 1.13 / 2.x job
    planck_observe.dump("observed.json", mesh=world_mesh)     # torch 2.x DeviceMesh: "mesh_<dim>" names
    planck_observe.dump("observed.json", names={"mesh_tp": tp_group})   # label groups yourself

then check the run against its plan:  planck verify plan.json --observed observed.json

Every rank reports the groups it belongs to and its host name (torch keeps a group only on its
members); rank 0 merges them and writes the file atomically. The default group is named
"default_pg" (as torch's flight recorder names it), DeviceMesh groups "mesh_<dim>". Format:
docs/observed.md and docs/observed.md. Works with torch 1.13 (registry distributed_c10d._pg_group_ranks)
and 2.x (distributed_c10d._world.pg_group_ranks, group_desc, DeviceMesh).
"""
import json
import os
import socket
import tempfile

FORMAT = "planck-observed/1"


def _c10d(dist):
    return getattr(dist, "distributed_c10d", None) or __import__("torch.distributed.distributed_c10d", fromlist=["x"])


def _registry(dist):
    """{process group: {global rank: group rank}} for the groups this rank is in."""
    c10d = _c10d(dist)
    world = getattr(c10d, "_world", None)  # torch >= 2.0
    if world is not None and hasattr(world, "pg_group_ranks"):
        return dict(world.pg_group_ranks)
    return dict(getattr(c10d, "_pg_group_ranks"))  # torch 1.13


def _pg_name(dist, pg):
    c10d = _c10d(dist)
    world = getattr(c10d, "_world", None)
    names = getattr(world, "pg_names", None) if world is not None else getattr(c10d, "_pg_names", None)
    if names and pg in names:
        return str(names[pg])
    return str(getattr(pg, "group_name", "") or "")


def _local_groups(dist, mesh, names):
    """This rank's groups as dicts: ranks (global, sorted), id, name."""
    labels = {}
    for label, pg in (names or {}).items():
        labels[id(pg)] = label
    if mesh is not None:  # torch 2.x DeviceMesh
        for i, dim in enumerate(getattr(mesh, "mesh_dim_names", None) or []):
            labels.setdefault(id(mesh.get_group(i)), "mesh_" + dim)
    world = dist.group.WORLD
    out = []
    for pg, ranks in _registry(dist).items():
        if pg is None or pg is getattr(dist.GroupMember, "NON_GROUP_MEMBER", object()):
            continue
        if pg is world:
            name = "default_pg"
        else:
            name = labels.get(id(pg)) or str(getattr(pg, "group_desc", "") or "")
            if name in ("undefined", "default_pg"):
                name = ""
        out.append({"ranks": sorted(int(r) for r in ranks), "id": _pg_name(dist, pg), "name": name})
    return out


def observed(dist=None, mesh=None, names=None):
    """The planck-observed/1 document of this job (collective: call on every rank). Returns the
    dict on rank 0 and None elsewhere. `dist` is torch.distributed (a stand-in in tests)."""
    if dist is None:
        import torch.distributed as dist
    mine = {"rank": dist.get_rank(), "host": socket.gethostname(), "groups": _local_groups(dist, mesh, names)}
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    if dist.get_rank() != 0:
        return None
    seen = {}
    for report in everyone:
        for g in report["groups"]:
            key = (g["id"], tuple(g["ranks"]))
            if key not in seen or (g["name"] and not seen[key]["name"]):
                seen[key] = g
    groups = []
    for g in sorted(seen.values(), key=lambda g: (g["name"] != "default_pg", g["ranks"][0], len(g["ranks"]), g["id"])):
        entry = {"ranks": g["ranks"], "size": len(g["ranks"]), "complete": True}
        if g["id"]:
            entry["id"] = g["id"]
        if g["name"]:
            entry["name"] = g["name"]
        groups.append(entry)
    return {
        "format": FORMAT,
        "sources": ["planck_observe.py"],
        "world": dist.get_world_size(),
        "ranks_seen": sorted(r["rank"] for r in everyone),
        "hosts": {str(r["rank"]): r["host"] for r in sorted(everyone, key=lambda r: r["rank"])},
        "groups": groups,
    }


def dump(path, dist=None, mesh=None, names=None):
    """Writes observed(...) to `path` on rank 0 (temporary file + rename). Collective."""
    doc = observed(dist=dist, mesh=mesh, names=names)
    if doc is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".planck-observed-", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return doc
