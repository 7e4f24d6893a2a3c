#!/usr/bin/env python3
"""A framework's config classes at a commit, as data: for import/<framework>_keys.h.

Usage: scripts/config_keys.py [--argparse-root CLASS] NAME GIT_DIR COMMIT[,COMMIT...] [PATH_PREFIX...]
       > import/FRAMEWORK/keys.h (torchtitan TOML keys: import/torchtitan/toml_keys.h)

Without running the framework: every class with annotated fields (dataclasses, and the nested
`class Config(...)` of torchtitan's components) in the .py files under the prefixes (all files
when none), read with Python's ast. A nested class is named Outer.Inner ("Trainer.Config"), as
configs write it. Each class lists its fields (its bases' included, ClassVar left out) and, for a
field whose annotation names another config class, that class: so an importer can follow a
dotted setting (parallelism.tensor_parallel_degree) from the root class down and tell a field the
framework defines from one it does not. Classes defined more than once under one name (a
TrainArgs per app, or the same class at several commits) are merged, so a config of an older
generation (torchtitan's early-2026 training.local_batch_size) stays known. With --argparse-root,
add_argument("--section.key") calls (torchtitan's JobConfig before its dataclasses) count as field
`key` of a class "argparse.section" that CLASS holds as `section`.
"""

import ast
import re
import subprocess
import sys


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return inner + "." + node.attr if inner else ""
    return ""


def collect_argparse(tree, classes, root):
    """Before its dataclasses (2025), torchtitan's JobConfig was argparse: add_argument("--a.b")
    is field b of a class "argparse.a", held in field a of `root`."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        for a in node.args:
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--") and "." in a.value:
                section, _, key = a.value[2:].rpartition(".")
                if not section or "." in section:
                    continue
                cls = "argparse." + section
                classes.setdefault(cls, {"bases": set(), "fields": {}})["fields"].setdefault(key, set()).add("")
                classes.setdefault(root, {"bases": set(), "fields": {}})["fields"].setdefault(section, set()).add(cls)


def collect(tree, classes, prefix=""):
    for node in tree.body if hasattr(tree, "body") else []:
        if not isinstance(node, ast.ClassDef):
            continue
        name = prefix + node.name
        entry = classes.setdefault(name, {"bases": set(), "fields": {}})
        entry["bases"].update(b for b in (dotted(x) for x in node.bases) if b)
        for st in node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                note = ast.unparse(st.annotation)
                if "ClassVar" in note or st.target.id.startswith("_"):
                    continue
                entry["fields"].setdefault(st.target.id, set()).add(note)
        collect(node, classes, name + ".")


def resolve(classes):
    """Each class's own fields with their config class (or ""), and its bases in the table under
    the field name "" ("A|B"), which import/config_keys.cc follows: a subclass (FluxTrainer.Config)
    lists only what it adds."""
    def base_names(b):
        return [b] if b in classes else []

    done = {}

    def fields(name, seen=()):
        if name in done:
            return done[name]
        out = {}
        if name in seen:
            return out
        for b in sorted(classes[name]["bases"]):
            for bn in base_names(b):
                for f, notes in fields(bn, seen + (name,)).items():
                    out.setdefault(f, set()).update(notes)
        for f, notes in classes[name]["fields"].items():
            out.setdefault(f, set()).update(notes)
        done[name] = out
        return out

    result = {}
    for name in classes:
        typed = {}
        bases = sorted(b for b in classes[name]["bases"] if b in classes and fields(b))
        if bases:
            typed[""] = "|".join(bases)
        for field, notes in classes[name]["fields"].items():
            # A class defined twice (a TrainArgs per app) may type a field twice; one definition
            # typing it as no config class (dict, Any) leaves its keys unchecked.
            kinds, untyped = set(), False
            for note in notes:
                kind = next((i for i in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", note)
                             if i in classes and i != name and fields(i)), None)
                if kind is None:
                    untyped = True
                else:
                    kinds.add(kind)
            typed[field] = "" if untyped else "|".join(sorted(kinds))
        if typed:
            result[name] = typed
    return result


def sources(repo, commit, prefixes):
    """The text of each .py file under the prefixes at `commit`, read in one git cat-file batch."""
    listing = git(repo, "ls-tree", "-r", commit).decode().split("\n")
    def is_test(path):  # unit tests define stand-in dataclasses (_StubParallelDims, ...): not config
        parts = path.split("/")
        return "tests" in parts[:-1] or "test" in parts[:-1] or parts[-1].startswith("test_") or parts[-1] == "conftest.py"
    def wanted(path):  # a prefix "*name.py" matches that file name anywhere
        return not is_test(path) and (not prefixes or any(
            path.endswith(p[1:]) if p.startswith("*") else path.startswith(p) for p in prefixes))
    blobs = [line.split()[2] for line in listing if line.endswith(".py") and wanted(line.split("\t", 1)[1])]
    out = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input="\n".join(blobs).encode(),
                         check=True, capture_output=True).stdout
    pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        yield out[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        pos = header_end + 1 + size + 1


def main(name, repo, commits, prefixes, argparse_root=None):
    classes = {}
    for commit in commits.split(","):
        for text in sources(repo, commit, prefixes):
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            collect(tree, classes)
            if argparse_root:
                collect_argparse(tree, classes, argparse_root)
    table = resolve(classes)
    print("#pragma once")
    print(f"// Generated by scripts/config_keys.py {name} GIT_DIR COMMITS {' '.join(prefixes)}".rstrip())
    print("// from the framework's own config classes at these commits, merged (see the script):")
    for i in range(0, len(commits.split(",")), 6):
        print("//   " + ", ".join(c[:10] for c in commits.split(",")[i:i + 6]))
    print("// Each class's fields, and for a field holding another config class, that class's name.")
    print()
    print("#include \"import/config_keys.h\"")
    print()
    print("namespace planck::import {")
    print()
    print("// Built on first use: a run that reads no such config never builds it.")
    print(f"inline const ConfigClasses& {re.sub('[^A-Za-z0-9]', '_', name).lower()}_classes() {{")
    print("  static const ConfigClasses k = {")
    for cls in sorted(table):
        print(f'    {{"{cls}",')
        line = "     {"
        for f, k in sorted(table[cls].items()):
            item = f'{{"{f}", "{k}"}}, '
            if len(line) + len(item) > 110:
                print(line.rstrip())
                line = "      "
            line += item
        print(line.rstrip().rstrip(",") + "}},")
    print("};")
    print("  return k;")
    print("}")
    print()
    print("}  // namespace planck::import")


if __name__ == "__main__":
    argv = sys.argv[1:]
    root = None
    if argv[:1] == ["--argparse-root"] and len(argv) > 1:
        root, argv = argv[1], argv[2:]
    if len(argv) < 3:
        sys.exit(__doc__)
    main(argv[0], argv[1], argv[2], argv[3:], root)
