"""The Python evaluator behind planck's readers of Python configs (python/planck_torchtitan_registry.py):
evaluates a config function with Python's `ast` without running any of it.

Evaluated: constructor calls with keyword arguments (`XConfig(...)`, `X.Config(...)`, `**` of a
config it followed), constants, integer arithmetic and comparisons, local names, `if` on values it
knows, `with` bodies, calls of functions (in the file, or imported: `from a.b import f` /
`import a.b as m` / `from . import f` are looked up as Python would, in the config's directory and
each parent, then in each extra path) with their arguments and defaults, and field edits
(`config.parallelism.x = v`), also made by a helper the config is passed to. Nothing of the user's
code is executed: no import, exec or eval. What it cannot follow is recorded with its file, line
and the config fields it may touch (Run.unfollowed); the caller decides which of those matter.
Embedded into planck before the registry reader (import/CMakeLists.txt), or imported from beside
it when that script runs from the source tree.
"""

import ast
import copy
import os
import sys

if "Loader" not in globals():  # run from the source tree, not embedded after the value module
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from planck_pyvalues import (  # noqa: E402
        ARITH, COMPARE, MAX_CALL_DEPTH, MAX_LOOP, MAX_STEPS, NUMBER, PURE_BUILTINS, READ_ONLY_BUILTINS, STR_METHODS,
        FuncRef, Loader, ModRef, Module, Obj, Opaque, Partial, Spec, Val, at, listed)

UNKNOWN = object()  # raw(): not a value this reader knows
MAX_SEQUENCE = 100000  # the longest list or string a `+` / `*` may build


def jumps(st):
    """Whether `st` holds a `break` / `continue` of a loop around it (not of a loop inside it)."""
    todo = list(ast.iter_child_nodes(st)) if not isinstance(st, (ast.For, ast.While)) else list(st.orelse)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if not isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def box(value, line, file):
    """A Python value as this reader holds it: a tuple as a tuple of values (so `a, b = divmod(x, y)`
    unpacks), anything else as one constant (a range as the list it stands for)."""
    if isinstance(value, tuple):
        return tuple(box(v, line, file) for v in value)
    return Val(list(value) if isinstance(value, range) else value, line, file)


def raw(value):
    """The Python value of an evaluated expression (a tuple of them for a tuple), else UNKNOWN."""
    if isinstance(value, Val):
        return value.value
    if isinstance(value, tuple):
        items = tuple(raw(v) for v in value)
        return UNKNOWN if any(i is UNKNOWN for i in items) else items
    return UNKNOWN


# Builtins that read their arguments and change nothing (a config passed to them stays as it was).
# The standard library's reads of the process environment, as configs write them.
ENV_READS = ("os.environ.get", "os.getenv", "environ.get", "getenv")


class Function:
    """One call of a function: its local names, and what it reports."""

    def __init__(self, run, module):
        self.run_, self.module, self.env, self.local_imports = run, module, {}, {}

    @property
    def file(self):
        return self.module.path

    def note(self, line, text):
        self.run_.notes.append({"file": self.file, "line": line, "text": text})

    def unfollowed(self, line, construct, why, touches):
        """`touches`: (the config object a path starts from, or None when unknown; the path)."""
        self.run_.unfollowed.append({"file": self.file, "line": line, "construct": construct, "why": why,
                                     "touches": touches})

    def block(self, body):
        """Runs statements; returns ("return", value) when one returns, else None."""
        for st in body:
            self.run_.steps += 1
            if self.run_.steps > MAX_STEPS:
                self.unfollowed(st.lineno, "the registry", "too many statements to follow", [(None, "")])
                return ("return", Opaque("...", st.lineno, self.file, "too many statements"))
            if isinstance(st, ast.Return):
                return ("return", self.expr(st.value) if st.value is not None else Val(None, st.lineno, self.file))
            done = self.statement(st)
            if done is not None:
                return done
        return None

    def statement(self, st):
        if isinstance(st, ast.Assign):
            value = self.expr(st.value)
            for target in st.targets:
                self.assign(target, value, st.lineno)
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            self.assign(st.target, self.expr(st.value), st.lineno)
        elif isinstance(st, ast.AugAssign):
            value = self.binop(st.op, self.expr(st.target), self.expr(st.value), st.lineno, ast.unparse(st))
            self.assign(st.target, value, st.lineno)
        elif isinstance(st, ast.Expr):
            self.expr(st.value)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            self.module.add_import(st, self.local_imports)
        elif isinstance(st, ast.If):
            test = self.truth(st.test)
            if test is None:
                return self.unknown(st, f"`if {ast.unparse(st.test)}` depends on a value planck does not know")
            return self.block(st.body if test else st.orelse)
        elif isinstance(st, ast.For):
            return self.loop(st)
        elif isinstance(st, (ast.Break, ast.Continue)):
            return (type(st).__name__.lower(), None)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            return self.block(st.body)  # the body runs; a context manager sets no config field
        elif isinstance(st, ast.Try):  # the body as written (no exception); a handler is another path
            done = self.block(st.body)
            for handler in st.handlers:
                touches, returns = self.touched(handler)
                if touches or returns:
                    self.unknown(handler, "an `except` branch runs only if the `try` body fails")
            if done is None:
                done = self.block(st.orelse)
            return done if done is not None else self.block(st.finalbody)
        elif isinstance(st, (ast.Assert, ast.Pass, ast.FunctionDef, ast.Raise, ast.Global, ast.Nonlocal,
                             ast.ClassDef)):
            return None  # checks, nested helpers and errors set no field
        else:
            return self.unknown(st, f"`{type(st).__name__.lower()}` statement not followed")
        return None

    def loop(self, st):
        """`for x in ITER:` over a sequence of known constants (a list, tuple, string or range), run
        once per item as Python would; over anything else, not followed."""
        items = raw(self.expr(st.iter))
        if isinstance(items, range):
            items = list(items) if len(items) <= MAX_LOOP else UNKNOWN
        if not isinstance(items, (list, tuple, str)) or len(items) > MAX_LOOP:
            return self.unknown(st, "`for` over values planck does not know")
        for item in items:
            self.assign(st.target, box(item, st.lineno, self.file), st.lineno)
            done = self.block(st.body)
            if done is not None and done[0] == "break":
                return None
            if done is not None and done[0] == "return":
                return done
            if done is not None and done[0] == "jump":  # what the loop goes on to change is unknown
                self.forget_locals(st, done[1])
                return None
        return self.block(st.orelse)

    def unknown(self, st, why):
        """A statement not followed: reported with the config fields its body may set."""
        touches, returns = self.touched(st)
        head = ast.unparse(st).split("\n")[0]
        self.unfollowed(st.lineno, head, why, touches)
        # A local the statement may assign or edit (`layout.append(...)` in a loop) is unknown from
        # here on: a config field later set from it is not followed, never set from a stale value.
        self.forget_locals(st, Opaque(head, st.lineno, self.file, why))
        if returns:
            return ("return", Opaque(head, st.lineno, self.file, why))
        if jumps(st):  # a `break` / `continue` that may run: the enclosing loop's course is unknown
            return ("jump", Opaque(head, st.lineno, self.file, why))
        return None

    def forget_locals(self, st, unknown):
        """Every local `st` may assign or edit becomes `unknown` (a config object keeps its own
        reporting: its fields are `touched`)."""
        for name in self.locals_changed(st):
            if not isinstance(self.env.get(name), (Obj, Spec)):
                self.env[name] = unknown

    def locals_changed(self, st):
        """Names `st` may rebind or edit in place: assignment and loop targets, `x[i] = ...`,
        `x.attr = ...`, and the receiver of a method call (`x.append(v)`)."""
        names = set()

        def root(node):
            while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
                node = node.value
            return node.id if isinstance(node, ast.Name) else None

        for node in ast.walk(st):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                targets = [node.target]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
            elif isinstance(node, ast.NamedExpr):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                targets = [node.func.value]
            for t in targets:
                for leaf in ast.walk(t) if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                    name = root(leaf)
                    if name is not None:
                        names.add(name)
        return names

    def touched(self, st):
        """Config fields assigned inside `st` (the path after the name they start from; "" for a
        config rebound or passed to a call), and whether it returns."""
        touches, returns = [], False
        for node in ast.walk(st):
            if isinstance(node, ast.Return):
                returns = True
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Name):  # rebinding a name that holds a config
                    if isinstance(self.env.get(t.id), Obj):
                        touches.append((self.env[t.id], ""))
                elif self.may_be_config(t):
                    touches.append(self.root_and_path(t))
            if isinstance(node, ast.Call) and ast.unparse(node.func) not in READ_ONLY_BUILTINS:
                for a in list(node.args) + [k.value for k in node.keywords]:
                    if isinstance(a, (ast.Name, ast.Attribute)) and self.may_be_config(a, strict=True):
                        touches.append(self.root_and_path(a))
                if isinstance(node.func, ast.Attribute) and self.may_be_config(node.func.value, strict=True):
                    touches.append(self.root_and_path(node.func.value))
        return touches, returns

    def root_and_path(self, node):
        """(the object the chain's root name holds, or None; the chain's path after the name)."""
        path = chain_path(node)
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        root = self.env.get(node.id) if isinstance(node, ast.Name) else None
        return (root if isinstance(root, (Obj, Spec)) else None, path)

    def may_be_config(self, node, strict=False):
        """Whether `node` (a name, a.b chain or subscript) may denote a config object: its root name
        holds one, or (unless strict) is not a local name at all."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        if node.id not in self.env:
            return not strict and node.id not in self.module.constants
        return isinstance(self.env[node.id], (Obj, Spec))

    def lookup_chain(self, node):
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.lookup_chain(node.value)
            return base.fields.get(node.attr) if isinstance(base, Obj) else None
        return None

    def assign(self, target, value, line):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):  # a, b = f(): unpacked when f returned a tuple
            if isinstance(value, tuple) and len(value) == len(target.elts):
                for t, v in zip(target.elts, value):
                    self.assign(t, v, line)
                return
            for t in target.elts:
                self.assign(t, Opaque(ast.unparse(target), line, self.file, "not an unpackable value"), line)
            return
        if isinstance(target, ast.Attribute):
            owner = self.owner(target.value, line)
            if owner is not None:
                owner.fields[target.attr] = at(value, line, self.file)
                return
        if self.may_be_config(target, strict=True):
            self.unfollowed(line, ast.unparse(target) + " = ...", "assignment target not followed",
                            [self.root_and_path(target)])
        else:  # a local list or dict, or an object already not followed
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
            if child is None or isinstance(child, Val) and child.value is None:
                child = Obj(node.attr, line, self.file)  # a field left at its default: an object of defaults
                parent.fields[node.attr] = child
            return child if isinstance(child, Obj) else None
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
                    return Val(out, line, self.file)
            seq = (list, tuple, str)
            # Sequences joined and repeated (Megatron-Bridge builds pipeline layouts as
            # [["embedding"] + ["decoder"] * 8] + [["decoder"] * 8] * 6), within a size bound.
            if isinstance(op, ast.Add) and isinstance(a.value, seq) and type(a.value) is type(b.value):
                if len(a.value) + len(b.value) <= MAX_SEQUENCE:
                    return Val(a.value + b.value, line, self.file)
            if isinstance(op, ast.Mult):
                items, count = (a.value, b.value) if isinstance(a.value, seq) else (b.value, a.value)
                if isinstance(items, seq) and isinstance(count, int) and 0 <= len(items) * max(count, 0) <= MAX_SEQUENCE:
                    return Val(items * count, line, self.file)
        return Opaque(text, line, self.file)

    def truth(self, node):
        """True/False when the test is decided by values this reader knows, else None."""
        v = self.expr(node)
        if isinstance(v, Val):
            defaulted = [n for n in v.env if n not in self.run_.env]  # not given with --set
            test = {"file": self.file, "line": getattr(node, "lineno", 0), "test": ast.unparse(node),
                    "names": defaulted}
            if defaulted and test not in self.run_.env_tests:  # a branch the launch environment may turn
                self.run_.env_tests.append(test)
            return bool(v.value)
        if isinstance(v, (Obj, Spec)):
            return True
        return None

    def expr(self, node):
        """The value of `node`; a constant computed from an environment read carries its names
        (`int(os.environ.get("TP", "8"))`), so that a setting made from it can say so."""
        value = self.evaluate(node)
        if isinstance(value, Val) and not value.env and not isinstance(node, ast.Constant):
            names = self.env_names(node)
            if names:
                value = Val(value.value, value.line, value.file, names)
        return value

    def env_names(self, node):
        names = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and ast.unparse(sub.func) in ENV_READS and sub.args:
                first = sub.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.add(first.value)
            elif isinstance(sub, ast.Name):
                held = self.env.get(sub.id, self.module.constants.get(sub.id))
                names.update(held.env if isinstance(held, Val) else ())
        return tuple(sorted(names))

    def evaluate(self, node):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant):
            return Val(node.value, line, self.file)
        if isinstance(node, ast.UnaryOp):
            inner = self.expr(node.operand)
            if isinstance(inner, Val):
                if isinstance(node.op, ast.USub) and isinstance(inner.value, NUMBER):
                    return Val(-inner.value, line, self.file)
                if isinstance(node.op, ast.Not):
                    return Val(not inner.value, line, self.file)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left), self.expr(node.right), line, ast.unparse(node))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
            a, b = self.expr(node.left), self.expr(node.comparators[0])
            if type(node.ops[0]) in (ast.Is, ast.IsNot) and isinstance(b, Val) and b.value is None and isinstance(
                    a, (FuncRef, ModRef, Partial)):  # an imported function `is not None`: it is defined
                return Val(isinstance(node.ops[0], ast.IsNot), line, self.file)
            if isinstance(a, Val) and isinstance(b, Val):
                try:
                    return Val(COMPARE[type(node.ops[0])](a.value, b.value), line, self.file)
                except TypeError:
                    pass
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in (ast.In, ast.NotIn):
            item, where = raw(self.expr(node.left)), self.expr(node.comparators[0])
            if item is not UNKNOWN and isinstance(where, Val) and isinstance(where.value, (dict, list, tuple, str)):
                try:
                    found = item in where.value
                    return Val(found if isinstance(node.ops[0], ast.In) else not found, line, self.file)
                except TypeError:
                    pass
        if isinstance(node, ast.BoolOp):
            # Python's value: `a or b` is the first true operand, else the last (`x or 1`); an
            # operand planck cannot tell true or false leaves only a decided truth, or nothing.
            want = isinstance(node.op, ast.Or)
            unsure = False
            result = None
            for operand in node.values:
                result = self.expr(operand)
                truth = bool(result.value) if isinstance(result, Val) else True if isinstance(result, (Obj, Spec)) else None
                if truth is None:
                    unsure = True
                elif truth == want:
                    return Val(want, line, self.file) if unsure else result
            if not unsure:
                return result
        if isinstance(node, ast.IfExp):
            test = self.truth(node.test)
            if test is not None:
                return self.expr(node.body if test else node.orelse)
        if isinstance(node, ast.Dict) and None not in node.keys:
            table = {}
            for k, v in zip(node.keys, node.values):
                key, value = raw(self.expr(k)), self.expr(v)
                if key is UNKNOWN or not isinstance(value, Val):
                    break
                try:
                    table[key] = value.value
                except TypeError:  # an unhashable key
                    break
            else:
                return Val(table, line, self.file)
        if isinstance(node, ast.Subscript):
            base, index = self.expr(node.value), raw(self.expr(node.slice))
            if isinstance(base, Val) and isinstance(base.value, (dict, list, tuple, str)) and index is not UNKNOWN:
                try:
                    return Val(base.value[index], line, self.file)
                except (KeyError, IndexError, TypeError):
                    pass
        if isinstance(node, ast.Name):
            return self.name(node.id, line)
        if isinstance(node, ast.Attribute):
            base = self.expr(node.value)
            if isinstance(base, Obj) and node.attr in base.fields:
                return base.fields[node.attr]
            if isinstance(base, Spec) and node.attr == "flavor":
                return Val(base.flavor, line, self.file)
            if isinstance(base, ModRef) and node.attr in base.module.functions:
                return FuncRef(base.module, node.attr)
        if isinstance(node, ast.Call):
            return self.call(node, line)
        if isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return tuple(self.expr(e) for e in node.elts)
        if isinstance(node, ast.List) and not any(isinstance(e, ast.Starred) for e in node.elts):
            items = [self.expr(e) for e in node.elts]
            if all(isinstance(i, (Val, Obj)) for i in items):  # converters=[Float8LinearConverter.Config(...)]
                return Val([listed(i) for i in items], line, self.file)
        return Opaque(ast.unparse(node), line, self.file)

    def name(self, name, line):
        if name in self.env:
            return self.env[name]
        if name in self.module.functions:
            return FuncRef(self.module, name)
        if name in self.module.constants:
            return self.module.constants[name]
        if name in self.module.lazy:
            # Evaluated at each read, in this run (its environment reads are this run's); popped
            # meanwhile, so that `A = B; B = A` stays unknown.
            node = self.module.lazy.pop(name)
            try:
                return Function(self.run_, self.module).expr(node.value)
            finally:
                self.module.lazy[name] = node
        got = self.module.resolve(name, self.local_imports)
        return got if got is not None else Opaque(name, line, self.file)

    def call(self, node, line):
        text = ast.unparse(node.func)
        if text in ENV_READS:
            return self.environment(node, text, line)
        callee = self.expr(node.func) if not text.endswith("Config") else None
        if text.endswith("model_registry") or isinstance(callee, FuncRef) and callee.name == "model_registry":
            return self.model_registry(node, line, callee)
        if text.endswith("Config"):
            return self.construct(node, text, line)
        hf = self.hf_model(node, line)
        if hf is not None:
            return hf
        if text in PURE_BUILTINS and not node.keywords and not isinstance(callee, (FuncRef, ModRef)):
            args = [raw(self.expr(a)) for a in node.args]
            if UNKNOWN not in args and not any(isinstance(a, ast.Starred) for a in node.args):
                try:
                    if text != "range" or len(range(*args)) <= MAX_LOOP:
                        return box(PURE_BUILTINS[text](*args), line, self.file)
                except (TypeError, ValueError, ZeroDivisionError, OverflowError):
                    pass
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend") and len(node.args) == 1:
            edited = self.list_edit(node, line)
            if edited is not None:
                return edited
        if text in READ_ONLY_BUILTINS and callee is not None and not isinstance(callee, (FuncRef, ModRef)):
            return self.builtin(node, text, line)
        if isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS and not node.args:
            base = self.expr(node.func.value)  # "LoRA".lower(): a string method of a known string
            if isinstance(base, Val) and isinstance(base.value, str):
                return Val(getattr(base.value, node.func.attr)(), line, self.file)
        if not isinstance(callee, (FuncRef, ModRef)) and text.split(".")[-1][:1].isupper():
            return self.construct(node, text, line)  # a class (a config dataclass): its keyword fields
        if isinstance(callee, (FuncRef, Partial)) or text in ("partial", "functools.partial"):
            args = [self.expr(a) for a in node.args if not isinstance(a, ast.Starred)]
            kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
            if len(args) != len(node.args) or len(kwargs) != len(node.keywords):
                return self.opaque_call(node, line, "`*args` / `**kwargs` in a call are not followed")
            if not isinstance(callee, (FuncRef, Partial)):  # functools.partial(f, ...) of a function it follows
                if args and isinstance(args[0], FuncRef):
                    return Partial(args[0], args[1:], kwargs)
                return self.opaque_call(node, line, "`partial` of a function planck does not follow")
            if isinstance(callee, Partial):
                args, kwargs, callee = callee.args + args, {**callee.kwargs, **kwargs}, callee.ref
            return self.run_.call(callee, args, kwargs, node, self)
        why = callee.why if isinstance(callee, Opaque) and callee.why else f"`{text}` is not a function planck follows"
        return self.opaque_call(node, line, why)

    def environment(self, node, text, line):
        """`os.environ.get(NAME, DEFAULT)` / `os.getenv(...)`: the value --set NAME=VALUE gives, else
        the default, said (the launch environment may set it), else unknown."""
        args = [self.expr(a) for a in node.args]
        default = args[1] if len(args) > 1 else next(
            (self.expr(k.value) for k in node.keywords if k.arg == "default"), None)
        if not args or not isinstance(args[0], Val) or not isinstance(args[0].value, str):
            return Opaque(ast.unparse(node), line, self.file, "an environment variable whose name is not known")
        name = args[0].value
        read = {"file": self.file, "line": line, "name": name, "text": ast.unparse(node)}
        if name in self.run_.env:
            read["given"] = self.run_.env[name]
        elif isinstance(default, Val):
            read["default"] = default.value
        else:
            return Opaque(ast.unparse(node), line, self.file,
                          f"the environment variable {name}, which the launch sets (pass --set {name}=VALUE)")
        if read not in self.run_.env_reads:  # a module-level read is evaluated at each use
            self.run_.env_reads.append(read)
        return Val(read.get("given", read.get("default")), line, self.file)

    def list_edit(self, node, line):
        """`x.append(v)` / `x.extend(vs)` on a local list of known constants: the list grows."""
        target = node.func.value
        held = self.env.get(target.id) if isinstance(target, ast.Name) else None
        value = raw(self.expr(node.args[0]))
        if not (isinstance(held, Val) and isinstance(held.value, list)) or value is UNKNOWN:
            return None
        if node.func.attr == "extend" and not isinstance(value, (list, tuple, str, range)):
            return None
        grown = held.value + ([value] if node.func.attr == "append" else list(value))
        self.env[target.id] = Val(grown, held.line, held.file)
        return Val(None, line, self.file)

    def builtin(self, node, name, line):
        """Builtins that read a config without changing it: getattr of a field set, else unknown."""
        args = [self.expr(a) for a in node.args]
        if name == "isinstance" and len(args) == 2 and isinstance(args[0], (Obj, Spec, Val)):
            kind = BUILTIN_TYPES.get(ast.unparse(node.args[1]))
            if kind is not None:
                return Val(isinstance(args[0], Val) and isinstance(args[0].value, kind), line, self.file)
            if isinstance(args[0], Val):  # a constant is no instance of a config's own class
                return Val(False, line, self.file)
        if name == "getattr" and len(args) >= 2 and isinstance(args[0], Obj) and isinstance(args[1], Val):
            if args[1].value in args[0].fields:
                return args[0].fields[args[1].value]
        return Opaque(ast.unparse(node), line, self.file, f"`{name}` of a value planck does not know")

    def hf_model(self, node, line):
        """Megatron-Bridge's `AutoBridge.from_hf_pretrained("org/name").get_model_config()` (or
        `.to_megatron_provider()`): a model config named by its Hugging Face id, edited afterwards."""
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr in ("get_model_config", "to_megatron_provider")):
            return None
        inner = f.value
        if not (isinstance(inner, ast.Call) and ast.unparse(inner.func).endswith("from_hf_pretrained") and inner.args):
            return None
        model_id = self.expr(inner.args[0])
        if not (isinstance(model_id, Val) and isinstance(model_id.value, str)):
            return None
        obj = Obj(ast.unparse(node), line, self.file)
        obj.fields["hf_model_id"] = Val(model_id.value, line, self.file, model_id.env)
        return obj

    def opaque_call(self, node, line, why):
        """A call not followed: a config passed to it may be edited by it."""
        touches = []
        for a in list(node.args) + [k.value for k in node.keywords]:
            v = self.expr(a.value if isinstance(a, ast.Starred) else a)
            if isinstance(v, Obj):
                touches.append((v, ""))
        if isinstance(node.func, ast.Attribute) and isinstance(self.lookup_chain(node.func.value), Obj):
            touches.append((self.lookup_chain(node.func.value), ""))
        if touches:
            self.unfollowed(line, ast.unparse(node), why + "; a config is passed to it", touches)
        # A local list, dict or set it may edit in place (`layout.append(stage)`, `fill(layout)`) is
        # unknown from here on, never read afterwards as it was before the call.
        receivers = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        for a in receivers + list(node.args) + [k.value for k in node.keywords]:
            while isinstance(a, (ast.Attribute, ast.Subscript, ast.Starred)):
                a = a.value
            held = self.env.get(a.id) if isinstance(a, ast.Name) else None
            if isinstance(held, Val) and isinstance(held.value, (list, dict, set)):
                self.env[a.id] = Opaque(ast.unparse(node), line, self.file, why)
        return Opaque(ast.unparse(node), line, self.file, why)

    def construct(self, node, text, line):
        obj = Obj(text, line, self.file)
        if node.args:
            return Opaque(ast.unparse(node), line, self.file, f"positional arguments of `{text}` are not followed")
        for k in node.keywords:
            if k.arg:
                obj.fields[k.arg] = at(self.expr(k.value), k.value.lineno, self.file)
                continue
            spread = self.expr(k.value)
            if not isinstance(spread, Obj):
                return Opaque(ast.unparse(node), line, self.file,
                              f"`**{ast.unparse(k.value)}` is not a config planck can follow")
            obj.fields.update(copy.deepcopy(spread.fields))
        return obj

    def model_registry(self, node, line, callee):
        if not node.args:
            return Opaque(ast.unparse(node), line, self.file, "model_registry() without a flavour")
        flavor = self.expr(node.args[0])
        options = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
        module = callee.module if isinstance(callee, FuncRef) else self.module
        init = module.path if module.path.endswith("__init__.py") else \
            os.path.join(os.path.dirname(module.path), "__init__.py")
        if isinstance(flavor, Val) and isinstance(flavor.value, str):
            return Spec(flavor.value, options, line, self.file, init)
        return Opaque(ast.unparse(node), line, self.file, f"model flavour `{ast.unparse(node.args[0])}` is not known")


def chain_path(node):
    """`config.parallelism.tensor_parallel_degree` -> "parallelism.tensor_parallel_degree"."""
    parts = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts))


class Run:
    """One registry function, followed through every call it makes."""

    def __init__(self, loader):
        self.loader, self.notes, self.unfollowed, self.steps, self.stack = loader, [], [], 0, []
        self.env = getattr(loader, "env", {})  # --env NAME=VALUE: the launch's environment as given
        self.env_reads = []  # every os.environ.get the config made, and what it got
        self.env_tests = []  # tests decided by an environment variable's default

    def call(self, ref, args, kwargs, node, caller):
        fn = ref.module.functions[ref.name]
        line = node.lineno
        if len(self.stack) >= MAX_CALL_DEPTH or (ref.module.path, ref.name) in self.stack:
            return caller.opaque_call(node, line, f"`{ref.name}` calls itself or nests too deep")
        f = Function(self, ref.module)
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        if len(args) > len(positional) and a.vararg is None:
            return caller.opaque_call(node, line, f"too many arguments for `{ref.name}`")
        for i, p in enumerate(positional):
            if i < len(args):
                f.env[p.arg] = args[i]
            elif p.arg in kwargs:
                f.env[p.arg] = kwargs.pop(p.arg)
            elif defaults[i] is not None:
                f.env[p.arg] = f.expr(defaults[i])
            else:
                return caller.opaque_call(node, line, f"argument `{p.arg}` of `{ref.name}` is not given")
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if p.arg in kwargs:
                f.env[p.arg] = kwargs.pop(p.arg)
            elif d is not None:
                f.env[p.arg] = f.expr(d)
            else:
                return caller.opaque_call(node, line, f"argument `{p.arg}` of `{ref.name}` is not given")
        if kwargs and a.kwarg is None:
            return caller.opaque_call(node, line, f"`{ref.name}` takes no argument {', '.join(kwargs)}")
        if a.kwarg is not None:  # **kwargs: the keyword arguments left over, known (none is an empty dict)
            f.env[a.kwarg.arg] = Obj("**" + a.kwarg.arg, line, ref.module.path)
            f.env[a.kwarg.arg].fields.update(kwargs)
        self.stack.append((ref.module.path, ref.name))
        done = f.block(fn.body)
        self.stack.pop()
        result = done[1] if done else Val(None, line, ref.module.path)
        if isinstance(result, Opaque):  # said at the call, with where inside it went opaque
            why = result.why
            if not getattr(result, "located", False):
                why = f"{rel(result.file)}:{result.line}: `{result.text}`" + (f": {why}" if why else "")
            out = Opaque(ast.unparse(node), line, caller.file, why)
            out.located = True
            return out
        return result


def find(tree, target, prefix=""):
    """The dotted path of object `target` inside config `tree` ("" for the root), or None."""
    if tree is target:
        return prefix.rstrip(".")
    if isinstance(tree, Obj):
        for key, v in tree.fields.items():
            got = find(v, target, prefix + key + ".")
            if got is not None:
                return got
    return None


def resolve_touches(result, unfollowed):
    """Paths relative to the returned config; an object that is not part of it cannot matter."""
    for u in unfollowed:
        paths = set()
        for root, path in u["touches"]:
            if root is None:
                paths.add(path)
                continue
            base = find(result, root)
            if base is not None:
                paths.add(".".join(p for p in (base, path) if p))
        u["touches"] = sorted(paths)


def rel(path):
    try:
        return os.path.relpath(path)
    except ValueError:
        return path
