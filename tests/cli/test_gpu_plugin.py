#!/usr/bin/env python3
"""The CPU-only planck binary and its GPU plugin (docs/exec.md, "The GPU plugin"); ctest cli_gpu_plugin.

usage: test_gpu_plugin.py PLANCK SOURCE_DIR

- `planck` links no CUDA library (ldd), so it starts where CUDA is absent; nor OpenMPI nor
  Graphviz, which it opens with dlopen when a world starts or a diagram is drawn (start-up).
- With /usr/local/cuda hidden (unshare -m, an empty tmpfs over it) `planck --version` and
  `planck verify` run; `exec --backend nccl` exits 2 with dlopen's message naming the missing
  library (when the plugin was built).
- A copy of planck with no plugin beside it: `exec --backend nccl` and `calibrate --compute`
  exit 2 saying the plugin is not installed and where it was looked for; `exec --backend mpi`
  the same of the MPI plugin.
- With the plugin and CUDA present but no GPU (these machines): exit 2, "no CUDA device".
Exit 0 pass, 1 fail, 77 skip.
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_checks import check, failures, run  # noqa: E402


def main():
    planck, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    plan = os.path.join(source, "plans", "hsdp-2x4.json")
    plugin = os.path.join(os.path.dirname(os.path.dirname(planck)), "lib", "planck", "libplanck_gpu.so")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("PLANCK_GPU_PLUGIN", None)

    ldd = run(["ldd", planck]).stdout
    check(not re.search(r"libnccl|libcudart|libcublas|libcuda\.so", ldd), "planck links no CUDA library (ldd)")
    check(not re.search(r"libmpi|libopen-pal|libgvc|libcgraph", ldd),
          f"planck links neither OpenMPI nor Graphviz (ldd): {ldd.strip()[:400]}")
    r = run([planck, "--version"], env=env)
    check(r.returncode == 0 and r.stdout.startswith("planck "), "planck --version")

    # A copy of the binary with nothing beside it: the plugin is not installed.
    with tempfile.TemporaryDirectory(prefix="planck-noplugin-") as tmp:
        os.makedirs(os.path.join(tmp, "bin"))
        lone = os.path.join(tmp, "bin", "planck")
        shutil.copy(planck, lone)
        r = run([lone, "exec", plan, "--backend", "nccl"], env=env)
        check(r.returncode == 2, f"exec --backend nccl without the plugin exits 2 (got {r.returncode})")
        check("libplanck_gpu.so is not installed" in r.stderr and os.path.join(tmp, "lib", "planck") in r.stderr
              and "planck-gpu" in r.stderr, "the message says the plugin is not installed, where it looked, what to install")
        r = run([lone, "calibrate", "--compute", plan, "-o", os.path.join(tmp, "topo.json")], env=env)
        check(r.returncode == 2 and "libplanck_gpu.so is not installed" in r.stderr,
              f"calibrate --compute without the plugin exits 2 naming it (got {r.returncode}: {r.stderr.strip()[:300]})")
        check(not os.path.exists(os.path.join(tmp, "topo.json")), "calibrate --compute wrote no profile")
        r = run([lone, "exec", plan, "--backend", "mpi"], env=env)
        check(r.returncode == 2 and "libplanck_mpi.so is not installed" in r.stderr
              and os.path.join(tmp, "lib", "planck") in r.stderr and "openmpi" in r.stderr,
              f"exec --backend mpi without the MPI plugin exits 2 naming it (got {r.returncode}: {r.stderr.strip()[:300]})")

    if not os.path.exists(plugin):
        print("plugin not built here (no CUDA/NCCL at configure time): the plugin cases skip")
        return 1 if failures else 0

    # The plugin and CUDA present, no GPU (a CPU host with CUDA installed).
    r = run([planck, "exec", plan, "--backend", "nccl"], env=env)
    check(r.returncode == 2, f"exec --backend nccl on a host without a GPU exits 2 (got {r.returncode})")
    check("no CUDA device" in r.stderr and "--backend mpi" in r.stderr,
          f"the message says no GPU is visible and what to do: {r.stderr.strip()[:300]}")

    # CUDA hidden: planck still runs; the plugin cannot load and says why.
    if os.geteuid() == 0 and shutil.which("unshare") and os.path.isdir("/usr/local/cuda"):
        script = ('mount -t tmpfs none /usr/local/cuda || exit 77; '
                  f'"{planck}" --version >/dev/null || exit 10; '
                  f'"{planck}" verify "{os.path.join(source, "plans", "torchtitan-hsdp-2x8.json")}" >/dev/null || exit 11; '
                  f'"{planck}" exec "{plan}" --backend nccl; echo "exit=$?" >&2')
        r = run(["unshare", "-m", "sh", "-c", script], env=env)
        if r.returncode == 77:
            print("skip: cannot mount over /usr/local/cuda here")
        else:
            check(r.returncode == 0, f"with CUDA hidden, --version and verify run (got {r.returncode})")
            check("exit=2" in r.stderr, "with CUDA hidden, exec --backend nccl exits 2")
            check("could not be loaded" in r.stderr and re.search(r"lib(nccl|cudart|cublas)[^ ]*\.so", r.stderr) is not None,
                  f"the message quotes dlopen naming the missing CUDA library: {r.stderr.strip()[:400]}")
    else:
        print("skip: hiding /usr/local/cuda needs root and unshare")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
