#!/usr/bin/env python3
"""Writes the synthesized NCCL_DEBUG=INFO logs in synth/ and torchtitan/ (deterministic).

Line formats per NCCL generation are those of docs/sources/ecosystem.md §4 (read from NCCL's
src/init.cc per release); the newest one (commId before parent) is NCCL's current master.
Each synth log is a run of 8 ranks on 2 hosts x 4 GPUs with mesh dp_replicate=2, dp_shard=2,
tp=2 (plan synth_plan.json): the world communicator plus every tp, dp_shard and dp_replicate
group, the processes' output interleaved, behind mixed launcher prefixes, with unrelated,
truncated and garbled lines. Run: python3 make_logs.py (from this folder).
"""
import random

GENS = ["2.8", "2.16", "2.18", "2.21", "2.23", "2.26", "2.30", "master"]


def mesh_groups(shape, dims_varied):
    """Groups of a row-major mesh varying `dims_varied` (indices), ordered by smallest member."""
    world = 1
    for s in shape:
        world *= s
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    groups = {}
    for r in range(world):
        coord = [(r // strides[i]) % shape[i] for i in range(len(shape))]
        key = tuple(c for i, c in enumerate(coord) if i not in dims_varied)
        groups.setdefault(key, []).append(r)
    return sorted(groups.values())


class Proc:
    def __init__(self, rank, host, pid, dev):
        self.rank, self.host, self.pid, self.dev = rank, host, pid, dev
        self.lines = []
        self.next_ptr = 0x5600_0000_0000 + rank * 0x100_0000

    def ptr(self):
        self.next_ptr += 0x4d0
        return self.next_ptr

    def info(self, tid, msg):
        self.lines.append(f"{self.host}:{self.pid}:{tid} [{self.dev}] NCCL INFO {msg}")


def init_lines(gen, p, comm, rank, nranks, comm_id, parent=None, color=0, key=0, split_count=1):
    bus = f"{(0x18 + 0x10 * p.dev):x}000"
    base = f"comm {hex(comm)} rank {rank} nranks {nranks} cudaDev {p.dev}"
    tid = p.pid + 60 + split_count
    if gen == "2.8":
        p.info(tid, f"{base} busId {bus} - Init COMPLETE")
        return
    if gen == "2.16":
        p.info(tid, f"{base} busId {bus} commId {hex(comm_id)} - Init COMPLETE")
        return
    full = f"{base} nvmlDev {p.dev} busId {bus}"
    if gen == "2.18":
        for phase in ("START", "COMPLETE"):
            p.info(tid, f"{full} commId {hex(comm_id)} - Init {phase}")
        return
    func = "ncclCommSplit" if parent else ("ncclCommInitRank" if gen == "2.21" else "ncclCommInitRankConfig")
    if parent:
        p.info(tid, f"bootstrapSplit: comm {hex(comm)} parent {hex(parent)} rank {rank} nranks {nranks} "
                    f"color {color} key {key} prev {(rank - 1) % nranks} next {(rank + 1) % nranks} - DONE")
        if gen == "2.21":
            for phase in ("START", "COMPLETE"):
                p.info(tid, f"{func} {full} parent {hex(parent)} color {color} key {key} commId {hex(comm_id)} - Init {phase}")
        elif gen == "master":
            for phase in ("START", "COMPLETE"):
                p.info(tid, f"{func} {full} commId {hex(comm_id)} parent {hex(parent)} childCount {split_count} "
                            f"color {color} key {key} - Init {phase}")
        else:
            count = "" if gen == "2.23" else (f"splitCount {split_count} " if gen == "2.26" else f"childCount {split_count} ")
            p.info(tid, f"{func} {full} parent {hex(parent)} {count}color {color} key {key}- Init START")
            p.info(tid, f"{func} {full} parent {hex(parent)} {count}color {color} key {key} - Init COMPLETE")
    else:
        start = f"[Rank {rank}] " if gen in ("2.30", "master") else ""
        p.info(tid, f"{start}{func} {full} commId {hex(comm_id)} - Init START")
        p.info(tid, f"{func} {full} commId {hex(comm_id)} - Init COMPLETE")
    if gen not in ("2.21",):
        p.info(tid, f"comm {hex(comm)} rank {rank} nRanks {nranks} nNodes 2 localRanks {min(nranks, 4)} localRank 0 MNNVL 0")
        p.info(tid, f"Init timings - {func}: rank {rank} nranks {nranks} total 0.51 (kernels 0.20, alloc 0.01, "
                    f"bootstrap 0.10, allgathers 0.01, topo 0.10, graphs 0.01, connections 0.08, rest 0.00)")


def run(gen, procs, shape, subgroups, rng):
    world_ptr = {}
    world_id = rng.getrandbits(64)
    for p in procs:
        p.info(p.pid, f"NCCL version {gen if gen != 'master' else '2.31.0'}+cuda12.4")
        world_ptr[p.rank] = p.ptr()
        init_lines(gen, p, world_ptr[p.rank], p.rank, len(procs), world_id)
    split = gen not in ("2.8", "2.16", "2.18")
    for count, dims in enumerate(subgroups, start=1):
        for members in mesh_groups(shape, dims):
            comm_id = rng.getrandbits(64)
            color = rng.getrandbits(31)
            for local, r in enumerate(members):
                p = procs[r]
                if split:
                    init_lines(gen, p, p.ptr(), local, len(members), comm_id, world_ptr[r], color, r, count)
                else:
                    init_lines(gen, p, p.ptr(), local, len(members), comm_id, split_count=count)


def decorate(procs, rng):
    """Launcher prefixes, interleaving that keeps each process's own order, noise."""
    styles = ["", "torchrun", "pdsh", "stamp"]
    streams = []
    for p in procs:
        style = styles[p.rank % len(styles)]
        out = []
        for line in p.lines:
            if style == "torchrun":
                line = f"[rank{p.rank % 4}]:{line}"
            elif style == "pdsh":
                line = f"{p.host}: {line}"
            elif style == "stamp":
                line = f"[2025-03-19 12:03:{10 + p.rank:02d}] {line}"
            out.append(line)
        out.insert(1, f"{p.host}:{p.pid}:{p.pid} [{p.dev}] NCCL INFO Bootstrap : Using eth0:10.0.0.{p.rank}<0>")
        out.insert(2, f"[rank{p.rank}]:[W319 12:03:46.6049 ProcessGroupNCCL.cpp:4721] [PG ID 0 PG GUID 0 Rank {p.rank}] warning")
        streams.append(out)
    merged = []
    while any(streams):
        s = rng.choice([s for s in streams if s])
        merged.append(s.pop(0))
    # A line cut by a crash, two processes' writes mixed on one line, and binary junk.
    merged.insert(5, "node-a:4100:4160 [0] NCCL INFO comm 0x56000000 rank 3 nranks 8 cudaDev 0 nvm")
    merged.insert(9, "node-b:4104:4164 [0] NCCL INFO comm 0x1 rank 9 nranknode-a:4101:4161 [1] NCCL INFO comm 0x2 rank 1 nranks 8 cudaDev 1 busId 28000 - Init COMPLETE")
    merged.insert(12, "\x00\x01garbage \xff line NCCL INFO")
    merged.insert(14, "node-a:4100:4160 [0] NCCL INFO comm 0x3 rank 99 nranks 8 cudaDev 0 busId 18000 - Init COMPLETE")
    return merged


def procs_for(nodes, gpus):
    hosts = [f"node-{chr(ord('a') + n)}" for n in range(nodes)]
    return [Proc(r, hosts[r // gpus], 4100 + r, r % gpus) for r in range(nodes * gpus)]


def write(path, lines):
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def main():
    for gen in GENS:
        rng = random.Random(gen)
        procs = procs_for(2, 4)
        # mesh [dp_replicate=2, dp_shard=2, tp=2]: tp, dp_shard, dp_replicate groups.
        run(gen, procs, [2, 2, 2], [[2], [1], [0]], rng)
        write(f"synth/nccl-{gen}.log", decorate(procs, rng))
    # torchtitan HSDP 2x8 on 2 nodes x 8 GPUs (torch 2.7 / NCCL 2.26, groups split from the world).
    for name, subgroups in (("hsdp_flattened", [[0, 1]]), ("hsdp_fixed", [[1], [0]])):
        rng = random.Random(name)
        procs = procs_for(2, 8)
        run("2.26", procs, [2, 8], subgroups, rng)
        lines = decorate(procs, rng)
        write(f"torchtitan/{name}.log", lines)
        node0 = [l for l in lines if "node-a" in l]
        write(f"torchtitan/{name}_node0.log", node0)


if __name__ == "__main__":
    main()
