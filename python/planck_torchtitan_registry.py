"""Reads a torchtitan config_registry.py without running it (for `planck import torchtitan`).

torchtitan (since 9810191, 2026-02-23) writes each training config as a Python function,
`def llama3_70b() -> Trainer.Config: return Trainer.Config(parallelism=ParallelismConfig(...), ...)`,
picked with `--module llama3 --config llama3_70b` (torchtitan/config/manager.py). This script
parses the file with Python's own parser (`ast`) and evaluates only the subset those functions
use: constructor calls with keyword arguments (`XConfig(...)`, `X.Config(...)`), constants,
integer arithmetic and comparisons, local names, `if` on values it knows, calls of functions
(in the file, or imported: `from a.b import f` / `import a.b as m` are looked up as Python would,
in the registry's directory and each parent, then in each --path DIR) with their arguments and
defaults, and field edits (`config.parallelism.x = v`), also made by a helper the config is passed
to. Nothing of the user's code is executed: no import, exec or eval.

What it cannot follow is reported with its file, line and the settings it may touch
("unfollowed"); planck decides which of those matter. `model_registry("70B")` is looked up in the
__init__.py of the package that calls it.

Usage: python3 planck_torchtitan_registry.py REGISTRY.py [FUNCTION] [--path DIR]... [--kwarg NAME=JSON]...
       [--returns NAME] [--env NAME=VALUE]...
(--returns: a config function's return annotation names NAME, default "Config"; Megatron-Bridge
recipes are `-> ConfigContainer`, so a helper returning an OptimizerConfig is not one.)
(--kwarg: a keyword argument the function is called with when it has that parameter, as
Megatron-Bridge's run_recipe.py passes peft_scheme. --env: an environment variable of the launch, which
`os.environ.get(NAME, DEFAULT)` / `os.getenv` return; without it they return DEFAULT, listed in "env".)
Output (stdout, JSON): {"functions": [{"name", "line", "settings": {"a.b": {...}}, "notes",
"unfollowed", "env"}], "error": "..."}; a setting is {"value"|"class"|"unknown"|"flavor", "line", "file"};
an unfollowed construct is {"file", "line", "construct", "why", "touches": ["a.b", ...]}
("" = the whole config).
"""

import ast
import json
import os
import sys

if "Function" not in globals():  # run from the source tree, not embedded after the evaluator
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from planck_pyeval import Function, Run, rel, resolve_touches  # noqa: E402
    from planck_pyvalues import FuncRef, Loader, Module, Obj, Opaque, Spec, Val, jsonable  # noqa: E402


def flatten(obj, prefix, out):
    for key, v in obj.fields.items():
        path = prefix + key
        if isinstance(v, Val):
            if jsonable(v.value):
                out[path] = {"value": v.value, "line": v.line, "file": v.file}
                if v.env:
                    out[path]["env"] = list(v.env)
            else:
                out[path] = {"unknown": repr(v.value), "line": v.line, "file": v.file}
        elif isinstance(v, Obj):
            out[path] = {"class": v.cls, "line": v.line, "file": v.file}
            flatten(v, path + ".", out)
        elif isinstance(v, Spec):
            options = {k: o.value for k, o in v.options.items() if isinstance(o, Val) and jsonable(o.value)}
            out[path] = {"flavor": v.flavor, "line": v.line, "file": v.file, "options": options, "init": v.init}
            flavor_line, sizes = model_args(v.init, v.flavor)
            if flavor_line is not None:
                out[path]["flavor_line"], out[path]["model_args"] = flavor_line, sizes
        elif isinstance(v, Opaque):
            out[path] = {"unknown": v.text, "why": v.why, "line": v.line, "file": v.file}
        else:
            out[path] = {"unknown": type(v).__name__, "line": obj.line, "file": obj.file}


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
                return key.lineno, literal_sizes(body, functions) if body is not None else {}
    return None, {}


SIZE_KEYS = {
    "dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "hidden_dim", "inter_dim", "moe_inter_dim",
    "n_routed_experts", "n_shared_experts", "n_activated_experts", "num_experts", "top_k", "n_dense_layers",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "head_dim",
    "enable_weight_tying", "num_shared_experts", "moe_hidden_dim", "n_expert_groups",
    # Qwen3.5 (models/qwen3_5/__init__.py @b5bcd76c): Gated DeltaNet heads, the full-attention
    # interval (a default of _build_qwen35_layers) and the shared expert's width.
    "n_key_heads", "n_value_heads", "key_head_dim", "value_head_dim", "full_attention_interval",
    "shared_expert_hidden_dim",
}
# A vision tower the flavour builds beside the text model: the keyword and its sizes.
VISION_KEYS = {"num_layers": "vision_layers", "dim": "vision_dim"}


def literal_sizes(body, functions=None):
    """Integer model sizes written as literals (`dim = 4096`, `n_layers=32`) in a flavour's builder,
    a size a called helper of the same file takes by default (`full_attention_interval: int = 4`)
    when the call does not pass it, and the sizes of a `vision_encoder=` tower."""
    sizes, names = {}, {}
    for node in ast.walk(body):
        if isinstance(node, ast.keyword) and node.arg == "vision_encoder" and isinstance(node.value, ast.Call):
            sizes["vision_encoder"] = True
            for kw in node.value.keywords:
                if kw.arg in VISION_KEYS and isinstance(kw.value, ast.Constant):
                    sizes[VISION_KEYS[kw.arg]] = kw.value.value
            break
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
    for node in ast.walk(body):
        helper = (functions or {}).get(node.func.id) if isinstance(node, ast.Call) and isinstance(
            node.func, ast.Name) else None
        if helper is None:
            continue
        passed = {kw.arg for kw in node.keywords}
        kw_args = list(zip(helper.args.kwonlyargs, helper.args.kw_defaults))
        plain = helper.args.args[len(helper.args.args) - len(helper.args.defaults):]
        positional = list(zip(plain, helper.args.defaults)) if not node.args else []
        for arg, default in kw_args + positional:
            if arg.arg in SIZE_KEYS and arg.arg not in passed and isinstance(default, ast.Constant):
                sizes.setdefault(arg.arg, default.value)
    return {k: v for k, v in sizes.items() if isinstance(v, (int, bool))}


def is_config_function(fn, returns):
    a = fn.args
    required = len(a.posonlyargs) + len(a.args) - len(a.defaults) + sum(d is None for d in a.kw_defaults)
    if required > 0 or fn.name.startswith("_"):
        return False
    ret = ast.unparse(fn.returns) if fn.returns is not None else ""
    return returns in ret


def config_functions(module, returns):
    """name -> (module, function name) of each config function of `module`; a module defining none
    that re-exports them (`from a.b import x_config as legacy_name`, Megatron-Bridge's compatibility
    aliases for renamed recipes) offers those under its own names."""
    own = {n: (module, n) for n, fn in module.functions.items() if is_config_function(fn, returns)}
    if own:
        return own
    out = {}
    for name, entry in module.imports.items():
        if entry[0] != "from" or name.startswith("_"):
            continue
        ref = module.resolve(name)
        if isinstance(ref, FuncRef) and is_config_function(ref.module.functions[ref.name], returns):
            out[name] = (ref.module, ref.name)
    return out


def bind_defaults(f, fn):
    """A config function run as its framework runs it: with its parameters' defaults
    (`def llama3_8b_peft_config(peft_scheme: str | PEFT = "lora")`); one without stays unknown."""
    a = fn.args
    positional = a.posonlyargs + a.args
    for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
        f.env[p.arg] = f.expr(d)
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is not None:
            f.env[p.arg] = f.expr(d)
    if a.kwarg is not None:
        f.env[a.kwarg.arg] = Obj("**" + a.kwarg.arg, fn.lineno, f.file)


def main(argv):
    args, paths, kwargs, returns, env = [], [], {}, "Config", {}
    i = 1
    while i < len(argv):
        if argv[i] == "--path" and i + 1 < len(argv):
            paths.append(argv[i + 1])
            i += 2
            continue
        if argv[i] == "--returns" and i + 1 < len(argv):
            returns = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--env" and i + 1 < len(argv) and "=" in argv[i + 1]:
            name, value = argv[i + 1].split("=", 1)
            env[name] = value
            i += 2
            continue
        if argv[i] == "--kwarg" and i + 1 < len(argv) and "=" in argv[i + 1]:
            name, value = argv[i + 1].split("=", 1)
            kwargs[name] = json.loads(value)
            i += 2
            continue
        args.append(argv[i])
        i += 1
    if not args:
        return {"error": "usage: planck_torchtitan_registry.py REGISTRY.py [FUNCTION] [--path DIR]..."}
    path = args[0]
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except SyntaxError as e:
        return {"error": f"{path}:{e.lineno}: not valid Python: {e.msg}"}
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}
    loader = Loader(path, paths)
    loader.env = env
    module = Module(loader, os.path.abspath(path), tree)
    loader.modules[module.path] = module
    found = config_functions(module, returns)
    if len(args) > 1:
        if args[1] in module.functions:
            found = {args[1]: (module, args[1])}
        elif args[1] in found:
            found = {args[1]: found[args[1]]}
        else:
            ref = module.resolve(args[1])
            if not isinstance(ref, FuncRef):
                return {"error": f"{path}: no function {args[1]}; config functions: {', '.join(found)}"}
            found = {args[1]: (ref.module, ref.name)}
    out = []
    for name, (home, real) in found.items():
        run = Run(loader)
        fn = home.functions[real]
        if real != name or home is not module:
            run.notes.append({"file": module.path, "line": module.imports[name][3],
                              "text": f"{name} is {real} of {rel(home.path)} (imported under this name)"})
        run.stack.append((home.path, real))
        top = Function(run, home)
        bind_defaults(top, fn)
        params = {p.arg for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        for k, v in kwargs.items():  # as its launcher calls it: only the parameters it has
            if k in params:
                top.env[k] = Val(v, fn.lineno, home.path)
        done = top.block(fn.body)
        result = done[1] if done else None
        entry = {"name": name, "function": real, "line": fn.lineno, "file": home.path, "settings": {},
                 "notes": run.notes,
                 "unfollowed": run.unfollowed, "env": run.env_reads,
                 "env_tests": run.env_tests}
        resolve_touches(result, entry["unfollowed"])
        if isinstance(result, Obj):
            entry["class"] = result.cls
            flatten(result, "", entry["settings"])
        elif isinstance(result, Opaque):
            entry["unfollowed"].append({"file": result.file, "line": result.line, "construct": result.text,
                                        "why": result.why or "not a config this reader can evaluate",
                                        "touches": [""]})
        else:
            entry["unfollowed"].append({"file": home.path, "line": fn.lineno, "construct": f"def {real}()",
                                        "why": "it returns no config", "touches": [""]})
        out.append(entry)
    return {"functions": out}


def shown(doc, main_abs, main_given):
    """File names as the user gave the registry, and relative to the working directory below it."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("file", "init") and isinstance(v, str):
                r = rel(v)
                doc[k] = main_given if v == main_abs else (v if r.startswith("..") else r)
            else:
                shown(v, main_abs, main_given)
    elif isinstance(doc, list):
        for v in doc:
            shown(v, main_abs, main_given)
    return doc


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    given = next((a for a in sys.argv[1:] if not a.startswith("--")), "")
    json.dump(shown(main(sys.argv), os.path.abspath(given) if given else "", given), sys.stdout)
