#!/usr/bin/env python3
"""docs/ci.md's recipe, run as a user's CI would run it (ctest cli_ci_recipe).

usage: test_ci_recipe.py BUILD_DIR SOURCE_DIR

1. cpack builds planck_*.deb (and planck-gpu_*.deb when the plugin was built) from BUILD_DIR;
   planck's Depends must name no CUDA library and its files must be the documented layout.
2. A scratch "user repository" gets a real torchtitan TOML and a real Megatron-LM launch script
   (copies of tests/data files, provenance in tests/data/import/PROVENANCE.md).
3. The lines between docs/ci.md's ci-recipe markers run there, in order, under bash -e, with
   PLANCK_DEB_URL a file:// URL of the package: apt-get really installs it (root only; the
   package is purged afterwards when it was not installed before), then the installed planck
   verifies the configs; SARIF must parse as JSON with one run per config, JUnit as XML.
4. With /usr/local/cuda hidden (unshare -m, an empty tmpfs over it) the installed planck still
   starts and verifies.
5. Every recipe line appears in both workflow examples of docs/ci.md.
6. cmake --install lays out bin/planck, lib/planck/libplanck_gpu.so (when built), share/planck.
Exit 0 pass, 1 fail, 77 skip (not root, or no dpkg-deb / cpack).
"""
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_checks import check, failures, run  # noqa: E402


def recipe_lines(doc):
    m = re.search(r"<!-- ci-recipe:begin -->\s*```sh\n(.*?)```\s*<!-- ci-recipe:end -->", doc, re.S)
    if not m:
        return None
    return [l for l in m.group(1).splitlines() if l.strip() and not l.strip().startswith("#")]


def fenced_block_after(doc, heading):
    i = doc.find(heading)
    if i < 0:
        return ""
    m = re.search(r"```yaml\n(.*?)```", doc[i:], re.S)
    return m.group(1) if m else ""


def main():
    build, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    doc = open(os.path.join(source, "docs", "ci.md"), encoding="utf-8").read()
    lines = recipe_lines(doc)
    check(lines is not None and len(lines) >= 4, "docs/ci.md has a ci-recipe block")
    if not lines:
        return 1

    # 5. Both workflows run exactly the recipe's lines.
    for heading in ("### GitHub Actions", "### GitLab CI"):
        block = fenced_block_after(doc, heading)
        for line in lines:
            check(line in block, f"{heading[4:]} runs: {line}")

    if os.geteuid() != 0 or not shutil.which("dpkg-deb") or not shutil.which("cpack"):
        print("skip: needs root (apt-get install), dpkg-deb and cpack")
        return 77 if not failures else 1

    gpu_built = os.path.exists(os.path.join(build, "lib", "planck", "libplanck_gpu.so"))
    with tempfile.TemporaryDirectory(prefix="planck-ci-") as tmp:
        # 1. The packages.
        pkgdir = os.path.join(tmp, "pkg")
        r = run(["cpack", "-G", "DEB", "-B", pkgdir, "--config", os.path.join(build, "CPackConfig.cmake")])
        check(r.returncode == 0, "cpack -G DEB succeeds" + ("" if r.returncode == 0 else ": " + r.stdout[-2000:] + r.stderr[-2000:]))
        debs = sorted(glob.glob(os.path.join(pkgdir, "planck_*.deb")))
        check(len(debs) == 1, "one planck_*.deb")
        if not debs:
            return 1
        deb = debs[0]
        depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
        check(depends.strip() != "", f"planck Depends is derived from the binary: {depends.strip()}")
        for lib in ("libnccl", "libcuda", "libcublas", "cuda-"):
            check(lib not in depends, f"planck does not depend on {lib}")
        check("libopenmpi" in depends and "libgvc" in depends and "libcgraph" in depends,
              "planck depends on Open MPI (what its MPI plugin links) and Graphviz (what it opens)")
        contents = run(["dpkg-deb", "-c", deb]).stdout
        for path in ("./usr/bin/planck", "./usr/share/planck/plans/hsdp-2x4.json",
                     "./usr/share/planck/python/planck_observe.py", "./usr/share/doc/planck/docs/ci.md"):
            check(path in contents, f"planck_*.deb holds {path}")
        check("libplanck_gpu" not in contents, "planck_*.deb holds no GPU plugin")
        if os.path.exists(os.path.join(build, "lib", "planck", "libplanck_mpi.so")):
            check("./usr/lib/planck/libplanck_mpi.so" in contents, "planck_*.deb holds the MPI plugin")
        gpu_debs = glob.glob(os.path.join(pkgdir, "planck-gpu_*.deb"))
        if gpu_built:
            check(len(gpu_debs) == 1, "planck-gpu_*.deb is built with the plugin")
            if gpu_debs:
                gc = run(["dpkg-deb", "-c", gpu_debs[0]]).stdout
                check("./usr/lib/planck/libplanck_gpu.so" in gc, "planck-gpu holds /usr/lib/planck/libplanck_gpu.so")
                gd = run(["dpkg-deb", "-f", gpu_debs[0], "Depends"]).stdout
                check("planck (=" in gd, f"planck-gpu depends on the same planck: {gd.strip()}")
        else:
            check(not gpu_debs, "no planck-gpu package without the plugin")

        # 2. The user's repository.
        repo = os.path.join(tmp, "user-repo")
        os.makedirs(os.path.join(repo, "configs", "torchtitan"))
        os.makedirs(os.path.join(repo, "configs", "megatron"))
        data = os.path.join(source, "tests", "data")
        shutil.copy(os.path.join(data, "import", "torchtitan", "llama3_8b.toml"), os.path.join(repo, "configs", "torchtitan"))
        shutil.copy(os.path.join(data, "corpus", "megatron", "train_llama3_8b_h100_fp8.sh"),
                    os.path.join(repo, "configs", "megatron"))

        # 3. The recipe, line by line, as a workflow runs it (each line its own step, -e).
        was_installed = run(["dpkg-query", "-W", "-f=${Status}", "planck"]).stdout.startswith("install ok")
        env = dict(os.environ, PLANCK_DEB_URL="file://" + deb, DEBIAN_FRONTEND="noninteractive")
        try:
            for line in lines:
                r = run(["bash", "-e", "-o", "pipefail", "-c", line], cwd=repo, env=env)
                check(r.returncode == 0, f"recipe step exits 0: {line}" +
                      ("" if r.returncode == 0 else f" (exit {r.returncode}): {r.stdout[-1500:]}{r.stderr[-1500:]}"))
                if r.returncode != 0:
                    break
            which = shutil.which("planck", path="/usr/bin")
            check(which == "/usr/bin/planck", "planck is installed at /usr/bin/planck")
            for name in ("planck-torchtitan.sarif", "planck-megatron.sarif"):
                p = os.path.join(repo, name)
                try:
                    sarif = json.load(open(p, encoding="utf-8"))
                    check(sarif.get("version") == "2.1.0" and len(sarif.get("runs", [])) == 1, f"{name} is SARIF 2.1.0, one run")
                except (OSError, ValueError) as e:
                    check(False, f"{name} parses as JSON: {e}")
            for name in ("planck-torchtitan.xml", "planck-megatron.xml"):
                try:
                    root = ET.parse(os.path.join(repo, name)).getroot()
                    check(root.tag in ("testsuites", "testsuite"), f"{name} is JUnit XML")
                except (OSError, ET.ParseError) as e:
                    check(False, f"{name} parses as XML: {e}")

            # 4. CUDA hidden: the installed binary starts and verifies.
            if os.path.isdir("/usr/local/cuda"):
                hidden = ("mount -t tmpfs none /usr/local/cuda && test -z \"$(ls /usr/local/cuda)\" && "
                          "/usr/bin/planck --version && "
                          "/usr/bin/planck verify /usr/share/planck/plans/torchtitan-hsdp-2x8.json")
                r = run(["unshare", "-m", "sh", "-c", hidden])
                check(r.returncode == 0 and "planck" in r.stdout,
                      "installed planck starts and verifies with /usr/local/cuda hidden" +
                      ("" if r.returncode == 0 else f" (exit {r.returncode}): {r.stderr[-800:]}"))
                ldd = run(["ldd", "/usr/bin/planck"]).stdout
                check(not re.search(r"libnccl|libcudart|libcublas", ldd), "the installed planck links no CUDA library")
        finally:
            if not was_installed:
                run(["apt-get", "purge", "-y", "-q", "planck"], env=env)
        check(was_installed or not os.path.exists("/usr/bin/planck"), "the package is removed again")

        # 6. cmake --install.
        prefix = os.path.join(tmp, "prefix")
        r = run(["cmake", "--install", build, "--prefix", prefix])
        check(r.returncode == 0, "cmake --install succeeds" + ("" if r.returncode == 0 else ": " + r.stderr[-1500:]))
        for rel in ("bin/planck", "share/planck/plans/hsdp-2x4.json", "share/doc/planck/README.md"):
            check(os.path.exists(os.path.join(prefix, rel)), f"cmake --install lays out {rel}")
        if gpu_built:
            check(os.path.exists(os.path.join(prefix, "lib/planck/libplanck_gpu.so")),
                  "cmake --install lays out lib/planck/libplanck_gpu.so")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
