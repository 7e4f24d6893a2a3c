"""Values, modules and module lookup of planck's Python config evaluator (python/planck_pyeval.py):
what an evaluated expression can be (a config object, a constant, a function, a module, an
expression not followed) and how `import a.b.c` is found as Python would, without importing it.
Embedded into planck before planck_pyeval.py (import/CMakeLists.txt).
"""

import ast
import os
import stat

READ_ONLY_BUILTINS = {"getattr", "hasattr", "isinstance", "len", "str", "int", "float", "bool", "print", "repr",
                      "type", "sorted", "list", "tuple", "dict", "set", "min", "max", "abs", "any", "all"}
# isinstance(x, T) of a constant against these is Python's answer; against any other class, False.
BUILTIN_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "tuple": tuple, "dict": dict}
STR_METHODS = {"lower", "upper", "strip"}
# Builtins computed when every argument is a known constant (Python's own answer).
PURE_BUILTINS = {"len": len, "str": str, "int": int, "float": float, "bool": bool, "min": min, "max": max,
                 "abs": abs, "divmod": divmod, "sum": sum, "round": round, "sorted": sorted, "list": list,
                 "tuple": tuple, "any": any, "all": all, "range": range}
MAX_LOOP = 10000  # the most iterations a `for` over known values is followed for
MAX_CALL_DEPTH = 24
MAX_STEPS = 200000


MAX_MODULE_BYTES = 4 * 1024 * 1024  # core::kMaxConfigBytes


def jsonable(value):
    """True for what json.dump writes as planck reads it: scalars, None, and lists/dicts of them."""
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


class Obj:  # a config object: its class as written and the fields set on it
    def __init__(self, cls, line, file):
        self.cls, self.line, self.file, self.fields = cls, line, file, {}


class Val:  # a constant and where it was written; `env`: the environment variables it came from
    def __init__(self, value, line, file, env=()):
        self.value, self.line, self.file, self.env = value, line, file, tuple(env)


class Opaque:  # an expression this reader does not evaluate, and why
    def __init__(self, text, line, file, why=""):
        self.text, self.line, self.file, self.why = text, line, file, why


class Spec:  # model_registry(flavor, **options), with the __init__.py that defines the flavours
    def __init__(self, flavor, options, line, file, init):
        self.flavor, self.options, self.line, self.file, self.init = flavor, options, line, file, init


class FuncRef:  # a function of a module
    def __init__(self, module, name):
        self.module, self.name = module, name


class Partial:  # functools.partial(f, *args, **kwargs): f with arguments bound
    def __init__(self, ref, args, kwargs):
        self.ref, self.args, self.kwargs = ref, args, kwargs


class ModRef:  # an imported module (`import a.b as m`)
    def __init__(self, module):
        self.module = module


def at(value, line, file):
    """A constant set from a local name is located where the setting is written."""
    return Val(value.value, line, file, value.env) if isinstance(value, Val) else value


ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b if abs(b) <= 64 else None,
}
COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
NUMBER = (int, float)


class Module:
    def __init__(self, loader, path, tree):
        self.loader, self.path = loader, path
        self.functions, self.constants, self.imports = {}, {}, {}
        # Module-level names bound once to an expression (`TP = int(os.environ.get("TP", "8"))`):
        # evaluated when a function reads them (planck_pyeval Function.name), never run here.
        self.lazy, assigned = {}, {}
        for node in ast.walk(tree):
            for t in node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]:
                if isinstance(t, ast.Name) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    assigned[t.id] = assigned.get(t.id, 0) + 1
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if isinstance(node.value, ast.Constant):
                    self.constants[node.targets[0].id] = Val(node.value.value, node.lineno, path)
                elif assigned.get(node.targets[0].id) == 1:
                    self.lazy[node.targets[0].id] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if isinstance(node.value, ast.Constant):  # `SEQUENCE_LENGTH_128K: int = 131072`
                    self.constants[node.target.id] = Val(node.value.value, node.lineno, path)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.add_import(node, self.imports)

    def add_import(self, node, table):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    table[a.asname] = ("module", a.name, 0, node.lineno)
            return
        for a in node.names:
            table[a.asname or a.name] = ("from", node.module or "", node.level, node.lineno, a.name)

    def resolve(self, name, table=None):
        """What an imported name stands for: a FuncRef, a ModRef, or an Opaque saying why not."""
        entry = (table or {}).get(name) or self.imports.get(name)
        if entry is None:
            return None
        if entry[0] == "module":
            mod = self.loader.module(entry[1], self.path, 0)
            return ModRef(mod) if isinstance(mod, Module) else mod
        _, dotted, level, line, attr = entry
        sub = self.loader.module((dotted + "." if dotted else "") + attr, self.path, level)
        if isinstance(sub, Module):
            return ModRef(sub)
        mod = self.loader.module(dotted, self.path, level)
        if not isinstance(mod, Module):
            return mod
        if attr in mod.functions:
            return FuncRef(mod, attr)
        if attr in mod.imports and self.loader.depth < 8:  # a re-export
            self.loader.depth += 1
            try:
                return mod.resolve(attr)
            finally:
                self.loader.depth -= 1
        return None


class Loader:
    """Finds `a.b.c` as a/b/c.py or a/b/c/__init__.py: in the registry's directory and each
    parent, then in each --path directory; the first of them holding the whole module wins (the
    parents stand in for an installed package, so a parent's unrelated `megatron/` folder -- a
    Megatron-LM checkout around a Bridge recipe -- does not hide the --path tree)."""

    def __init__(self, main, paths):
        self.modules, self.depth = {}, 0
        d = os.path.dirname(os.path.abspath(main))
        self.roots = []
        while True:
            self.roots.append(d)
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        self.roots += [os.path.abspath(p) for p in paths]

    def parse(self, path):
        path = os.path.abspath(path)
        if path not in self.modules:
            try:
                # planck's input gate for files read here: a regular file within the config cap
                # (a FIFO or /dev/zero named like a module is refused, never read).
                st = os.stat(path)
                if not stat.S_ISREG(st.st_mode):
                    raise OSError(f"not a regular file (mode {oct(st.st_mode)})")
                if st.st_size > MAX_MODULE_BYTES:
                    raise OSError(f"{st.st_size} bytes, more than the {MAX_MODULE_BYTES}-byte cap on config files")
                with open(path, "rb") as f:
                    text = f.read(MAX_MODULE_BYTES + 1).decode("utf-8")
                self.modules[path] = Module(self, path, ast.parse(text, path))
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as e:
                self.modules[path] = Opaque(path, 0, path, f"{path} cannot be parsed: {e}")
        return self.modules[path]

    def module(self, dotted, from_file, level):
        parts = [p for p in dotted.split(".") if p]
        if level > 0:
            base = os.path.dirname(os.path.abspath(from_file))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            if not parts:
                return None
            bases = [r for r in self.roots if os.path.exists(os.path.join(r, parts[0])) or
                     os.path.isfile(os.path.join(r, parts[0] + ".py"))]
        for base in bases:
            p = os.path.join(base, *parts)
            for candidate in (p + ".py", os.path.join(p, "__init__.py")):
                if parts and os.path.isfile(candidate):
                    return self.parse(candidate)
            if not parts and os.path.isfile(os.path.join(base, "__init__.py")):
                return self.parse(os.path.join(base, "__init__.py"))
        name = "." * level + dotted
        return Opaque(name, 0, from_file, f"module `{name}` not found beside the registry, in its parent "
                                          "directories or in --python-path")
