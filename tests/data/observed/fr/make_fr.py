#!/usr/bin/env python3
"""Writes the flight-recorder fixtures of this folder from the documented dump schema
(docs/sources/ecosystem.md §5; torch's FlightRecorder dump, version "2.10"): a 2-node x 4-GPU
job with mesh [dp_shard=4, tp=2] built by init_device_mesh (desc "mesh_<dim>"), one dump per rank
as torch writes them (<prefix><rank>), in the JSON form and the default pickle form, plus a dump
whose tp groups were built from the wrong dim order, and a pickle that would run a command.
Run: python3 make_fr.py (from this folder)."""
import json
import pickle


def pg(name, desc, ranks):
    return {"name": name, "desc": desc, "ranks": "[" + ", ".join(map(str, ranks)) + "]"}


def dump(rank, swap_tp=False):
    tp = [rank - rank % 2, rank - rank % 2 + 1]
    shard = [rank % 2 + 2 * i for i in range(4)]
    if swap_tp:  # groups of stride 4: what a [tp=2, dp_shard=4] mesh would give
        tp = [rank % 4, rank % 4 + 4]
    cfg = {"0": pg("0", "default_pg", range(8)), "1": pg("1", "mesh_dp_shard", shard), "2": pg("2", "mesh_tp", tp)}
    entry = {
        "record_id": 0, "pg_id": 2, "process_group": ["2", "mesh_tp"], "thread_name": "pt_main_thread",
        "thread_id": "140", "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1, "is_p2p": False,
        "profiling_name": "nccl:all_reduce", "time_created_ns": 1700000000000000000, "duration_ms": 0.5,
        "input_sizes": [[1024, 4096]], "input_dtypes": ["BFloat16"], "output_sizes": [[1024, 4096]],
        "output_dtypes": ["BFloat16"], "state": "completed", "time_discovered_started_ns": 1,
        "time_discovered_completed_ns": 2, "retired": True, "timeout_ms": 600000,
        "frames": [{"name": "forward", "filename": "model.py", "line": 42}],
    }
    return {"version": "2.10", "comm_lib_version": "2.26.2", "pg_config": cfg,
            "pg_status": {"2": {"last_enqueued_collective": 1, "last_started_collective": 1,
                                "last_completed_collective": 1}},
            "entries": [entry]}


for r in range(8):
    with open(f"json/rank_{r}", "w") as f:
        json.dump(dump(r), f, indent=1)
    with open(f"pickle/rank_{r}", "wb") as f:
        pickle.dump(dump(r), f, protocol=2)
with open("proto5_rank_3", "wb") as f:  # protocol 5: FRAME, SHORT_BINUNICODE, MEMOIZE
    pickle.dump(dump(3), f, protocol=5)
with open("wrong_tp_rank_0.json", "w") as f:
    json.dump(dump(0, swap_tp=True), f, indent=1)
with open("evil.pickle", "wb") as f:
    # cos\nsystem\n (GLOBAL) + ('echo pwned',) + REDUCE: os.system('echo pwned') when unpickled.
    f.write(b"\x80\x02cos\nsystem\nq\x00X\n\x00\x00\x00echo pwnedq\x01\x85q\x02Rq\x03.")
