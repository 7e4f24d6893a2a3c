"""Reads a torchtitan config_registry.py without running it (for `planck import torchtitan`).

torchtitan (since 9810191, 2026-02-23) writes each training config as a Python function,
`def llama3_70b() -> Trainer.Config: return Trainer.Config(parallelism=ParallelismConfig(...), ...)`,
picked with `--module llama3 --config llama3_70b` (torchtitan/config/manager.py). This script
parses the file with Python's own parser (`ast`) and evaluates only the subset those functions
use: constructor calls with keyword arguments (`XConfig(...)`, `X.Config(...)`), constants and
integer arithmetic, local names (`model_spec = model_registry("70B")`), calls of other registry
functions (`config = llama3_8b()`) and field edits (`config.parallelism.x = v`). Nothing of the
user's code is executed: no import, exec or eval. What it cannot follow becomes a note with its
line. `model_registry("70B")` is looked up in the package's __init__.py beside the registry.

Usage: python3 planck_torchtitan_registry.py REGISTRY.py [FUNCTION]
Output (stdout, JSON): {"functions": [{"name", "line", "settings": {"a.b": {...}}, "notes"}],
"error": "..."}; a setting is {"value", "line"}, {"class", "line"}, {"unknown", "line"} or
{"flavor", "line", "options", "model_args", "flavor_line", "init"}.
"""

import ast
import copy
import json
import os
import sys


class Obj:  # a config object: its class as written and the fields set on it
    def __init__(self, cls, line):
        self.cls, self.line, self.fields = cls, line, {}


class Val:  # a constant and the line that wrote it
    def __init__(self, value, line):
        self.value, self.line = value, line


class Opaque:  # an expression this reader does not evaluate
    def __init__(self, text, line):
        self.text, self.line = text, line


class Spec:  # model_registry(flavor, **options)
    def __init__(self, flavor, options, line):
        self.flavor, self.options, self.line = flavor, options, line


def jsonable(value):
    """True for what json.dump writes as planck reads it: scalars, None, and lists of them."""
    if isinstance(value, list):
        return all(jsonable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and jsonable(v) for k, v in value.items())
    return value is None or isinstance(value, (str, int, float, bool))


def listed(item):
    """A list element as JSON: a constant, or a config object's class and its literal fields."""
    if isinstance(item, Val):
        return item.value if jsonable(item.value) else None
    return {"class": item.cls,
            "fields": {k: v.value for k, v in item.fields.items() if isinstance(v, Val) and jsonable(v.value)}}


def at_line(value, line):
    """A constant set from a local name is located where the setting is written, not where the name was bound."""
    return Val(value.value, line) if isinstance(value, Val) else value


ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b if abs(b) <= 64 else None,
}
NUMBER = (int, float)


class Registry:
    def __init__(self, tree):
        self.functions = {}
        self.constants = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if isinstance(node.value, ast.Constant):
                    self.constants[node.targets[0].id] = Val(node.value.value, node.lineno)
        self.cache = {}
        self.active = set()

    def optimizer_names(self, name):
        """The optimizer names a helper writes (`optimizer_name="DistMuon"`), without running it."""
        names = []
        for node in ast.walk(self.functions[name]):
            if isinstance(node, ast.keyword) and node.arg in ("optimizer_name", "name"):
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    names.append(node.value.value)
        return names

    def is_config_function(self, fn):
        a = fn.args
        required = len(a.posonlyargs) + len(a.args) - len(a.defaults) + sum(d is None for d in a.kw_defaults)
        if required > 0 or fn.name.startswith("_"):
            return False
        ret = ast.unparse(fn.returns) if fn.returns is not None else ""
        return "Config" in ret

    def run(self, name):
        if name in self.cache:
            return copy.deepcopy(self.cache[name])
        if name in self.active:
            return None, [f"line {self.functions[name].lineno}: {name} calls itself; not followed"]
        self.active.add(name)
        result, notes = Function(self).run(self.functions[name])
        self.active.discard(name)
        self.cache[name] = (result, notes)
        return copy.deepcopy((result, notes))


class Function:
    def __init__(self, registry):
        self.reg, self.env, self.notes = registry, {}, []

    def note(self, line, text):
        self.notes.append(f"line {line}: {text}")

    def run(self, fn):
        result = self.block(fn.body)
        return result, self.notes

    def block(self, body):
        for st in body:
            if isinstance(st, ast.Return):
                return self.expr(st.value) if st.value is not None else None
            self.statement(st)
        return None

    def statement(self, st):
        if isinstance(st, ast.Assign):
            value = self.expr(st.value)
            for target in st.targets:
                self.assign(target, value, st.lineno)
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            self.assign(st.target, self.expr(st.value), st.lineno)
        elif isinstance(st, ast.AugAssign):
            current = self.expr(st.target)
            value = self.binop(st.op, current, self.expr(st.value), st.lineno, ast.unparse(st))
            self.assign(st.target, value, st.lineno)
        elif isinstance(st, (ast.Expr, ast.Assert, ast.Import, ast.ImportFrom, ast.Pass, ast.FunctionDef)):
            return  # docstrings, helper calls, asserts and nested helpers set no layout field we read
        else:
            kind = type(st).__name__.lower()
            self.note(st.lineno, f"`{kind}` statement not followed; settings it changes are not read")

    def assign(self, target, value, line):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            return
        if isinstance(target, ast.Attribute):
            owner = self.owner(target.value, line)
            if owner is not None:
                owner.fields[target.attr] = at_line(value, line)
                return
        self.note(line, f"assignment to `{ast.unparse(target)}` not followed")

    def owner(self, node, line):
        """The Obj that `node` (a name or a.b.c chain) denotes, creating unset sub-configs."""
        if isinstance(node, ast.Name):
            got = self.env.get(node.id)
            return got if isinstance(got, Obj) else None
        if isinstance(node, ast.Attribute):
            parent = self.owner(node.value, line)
            if parent is None:
                return None
            child = parent.fields.get(node.attr)
            if not isinstance(child, Obj):  # a field left at its default: an object of defaults
                child = Obj(node.attr, line)
                parent.fields[node.attr] = child
            return child
        return None

    def binop(self, op, a, b, line, text):
        f = ARITH.get(type(op))
        if f and isinstance(a, Val) and isinstance(b, Val):
            if isinstance(a.value, NUMBER) and isinstance(b.value, NUMBER) and not isinstance(a.value, bool):
                try:
                    out = f(a.value, b.value)
                except ZeroDivisionError:
                    out = None
                if out is not None:
                    return Val(out, line)
        return Opaque(text, line)

    def expr(self, node):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant):
            return Val(node.value, line)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.expr(node.operand)
            if isinstance(inner, Val) and isinstance(inner.value, NUMBER):
                return Val(-inner.value, line)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right), line, ast.unparse(node))
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            if node.id in self.reg.constants:
                return self.reg.constants[node.id]
        if isinstance(node, ast.Attribute):
            base = self.expr(node.value)
            if isinstance(base, Obj) and node.attr in base.fields:
                return base.fields[node.attr]
        if isinstance(node, ast.Call):
            return self.call(node, line)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.expr(e) for e in node.elts]
            if all(isinstance(i, (Val, Obj)) for i in items):  # converters=[Float8LinearConverter.Config(...)]
                return Val([listed(i) for i in items], line)
        return Opaque(ast.unparse(node), line)

    def call(self, node, line):
        name = ast.unparse(node.func)
        if name in self.reg.functions and not node.args and not node.keywords:
            result, notes = self.reg.run(name)
            self.notes.extend(notes)
            return result if result is not None else Opaque(name + "()", line)
        if name == "model_registry" and node.args:
            flavor = self.expr(node.args[0])
            options = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
            if isinstance(flavor, Val) and isinstance(flavor.value, str):
                return Spec(flavor.value, options, line)
            self.note(line, f"model flavour `{ast.unparse(node.args[0])}` is not a string literal")
            return Opaque(ast.unparse(node), line)
        if name in self.reg.functions:  # a helper of the registry (`_dist_muon_optimizer(...)`): not run
            got = Opaque(ast.unparse(node), line)
            got.optimizer_names = self.reg.optimizer_names(name)
            return got
        if name.endswith("Config"):
            obj = Obj(name, line)
            for k in node.keywords:
                if k.arg:
                    obj.fields[k.arg] = at_line(self.expr(k.value), k.value.lineno)
            return obj
        return Opaque(ast.unparse(node), line)


def flatten(obj, prefix, out):
    for key, v in obj.fields.items():
        path = prefix + key
        if isinstance(v, Val):
            if jsonable(v.value):
                out[path] = {"value": v.value, "line": v.line}
        elif isinstance(v, Obj):
            out[path] = {"class": v.cls, "line": v.line}
            flatten(v, path + ".", out)
        elif isinstance(v, Spec):
            options = {k: o.value for k, o in v.options.items() if isinstance(o, Val) and jsonable(o.value)}
            out[path] = {"flavor": v.flavor, "line": v.line, "options": options}
        elif isinstance(v, Opaque):
            out[path] = {"unknown": v.text, "line": v.line}
            if getattr(v, "optimizer_names", None):
                out[path]["optimizer_names"] = v.optimizer_names


def model_args(init_path, flavor):
    """The flavour's key line in __init__.py and the model sizes its builder writes literally."""
    try:
        with open(init_path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), init_path)
    except (OSError, SyntaxError, ValueError):
        return None, {}
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)):
            continue
        for key, value in zip(node.value.keys, node.value.values):
            if isinstance(key, ast.Constant) and key.value == flavor:
                body = functions.get(value.id) if isinstance(value, ast.Name) else value
                return key.lineno, literal_sizes(body) if body is not None else {}
    return None, {}


SIZE_KEYS = {
    "dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "hidden_dim", "inter_dim", "moe_inter_dim",
    "n_routed_experts", "n_shared_experts", "n_activated_experts", "num_experts", "top_k", "n_dense_layers",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "head_dim",
    "enable_weight_tying", "num_shared_experts", "moe_hidden_dim", "n_expert_groups",
}


def literal_sizes(body):
    """Integer model sizes written as literals (`dim = 4096`, `n_layers=32`) in a flavour's builder."""
    sizes, names = {}, {}
    for node in ast.walk(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Constant):
                names[node.targets[0].id] = node.value.value
    for node in ast.walk(body):
        if isinstance(node, ast.keyword) and node.arg in SIZE_KEYS and node.arg not in sizes:
            v = node.value
            if isinstance(v, ast.Constant):
                sizes[node.arg] = v.value
            elif isinstance(v, ast.Name) and v.id in names:
                sizes[node.arg] = names[v.id]
    for k, v in names.items():
        sizes.setdefault(k, v) if k in SIZE_KEYS else None
    return {k: v for k, v in sizes.items() if isinstance(v, (int, bool))}


def main(argv):
    if len(argv) < 2:
        return {"error": "usage: planck_torchtitan_registry.py REGISTRY.py [FUNCTION]"}
    path = argv[1]
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except SyntaxError as e:
        return {"error": f"{path}:{e.lineno}: not valid Python: {e.msg}"}
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}
    reg = Registry(tree)
    names = [n for n, fn in reg.functions.items() if reg.is_config_function(fn)]
    if len(argv) > 2:
        if argv[2] not in reg.functions:
            return {"error": f"{path}: no function {argv[2]}; config functions: {', '.join(names)}"}
        names = [argv[2]]
    init_path = os.path.join(os.path.dirname(os.path.abspath(path)), "__init__.py")
    out = []
    for name in names:
        result, notes = reg.run(name)
        entry = {"name": name, "line": reg.functions[name].lineno, "settings": {}, "notes": list(notes)}
        if isinstance(result, Obj):
            flatten(result, "", entry["settings"])
            spec = result.fields.get("model_spec")
            if isinstance(spec, Spec):
                flavor_line, sizes = model_args(init_path, spec.flavor)
                s = entry["settings"]["model_spec"]
                s["init"] = init_path
                if flavor_line is not None:
                    s["flavor_line"], s["model_args"] = flavor_line, sizes
        else:
            entry["notes"].append(f"line {entry['line']}: {name} does not return a config this reader can follow")
        out.append(entry)
    return {"functions": out}


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    json.dump(main(sys.argv), sys.stdout)
