"""The layer table of docs/design.md section 1, as data, and the import graph
checked against it: a module imports only from its own layer or the layers below
it, at the top of the file and inside functions alike, and no two modules import
each other (directly or around a longer cycle)."""
import ast
import pathlib

import pytest
from source_tree import ROOT, modules

# (layer, modules), lowest first. A name covers the module and, for a package,
# every module below it that no longer name covers.
LAYERS = [
    ("foundation", ["softfloat.config", "softfloat.formats", "softfloat.rounding",
                    "softfloat.flags", "softfloat._jitcache", "softfloat._startup",
                    "softfloat._cli", "softfloat._cli_start", "softfloat._extras"]),
    ("input checks", ["softfloat._validate"]),
    ("kernel codes", ["softfloat._kernels.codes"]),
    ("policies", ["softfloat.specialize", "softfloat.context"]),
    ("kernels", ["softfloat._kernels", "softfloat._parallel"]),
    ("array API", ["softfloat.conversions", "softfloat.arith", "softfloat.mma",
                   "softfloat.accumulate", "softfloat.lparray", "softfloat.stochastic",
                   "softfloat.encodings", "softfloat.p3109", "softfloat.p3109_compare",
                   "softfloat.updates"]),
    ("models", ["softfloat.model_hook", "softfloat.platforms", "softfloat.mx",
                "softfloat.mx_blocks", "softfloat.fp8_scaling", "softfloat.mx_gemm",
                "softfloat.cublas", "softfloat.torch_models", "softfloat.sr_vendor"]),
    ("torch programs", ["softfloat.emulation"]),
    ("verification", ["softfloat.sweep_oracles", "softfloat.sweep", "softfloat.testfloat",
                      "softfloat.strategies", "softfloat.verification"]),
    ("tools", ["softfloat.probe", "softfloat.budget", "softfloat.demo"]),
    ("package", ["softfloat"]),
    ("nn, validation", ["nn", "validation"]),
    ("command line", ["softfloat.warmup", "softfloat.__main__"]),
]


MODULES = modules()


def layer_of(mod: str):
    """(rank, layer name) of a module: its longest covering table entry."""
    best = None
    for rank, (name, entries) in enumerate(LAYERS):
        for e in entries:
            if (mod == e or mod.startswith(e + ".")) and (best is None or len(e) > best[0]):
                best = (len(e), rank, name)
    return None if best is None else best[1:]


def imports_of(mod: str, path: pathlib.Path) -> list:
    """(imported module, line, where) for every import of the project's own
    modules in ``path``; ``where`` is "top" or "function"."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    top_nodes = set()
    for node in tree.body:              # module level, also inside if/try blocks there
        for sub in ast.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                break
            top_nodes.add(id(sub))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target + "." + a.name if target + "." + a.name in MODULES else target
                     for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        where = "top" if id(node) in top_nodes else "function"
        for t in dict.fromkeys(names):
            while t and t not in MODULES:           # "softfloat.x.y" names: the module part
                t = t.rpartition(".")[0]
            if t and t != mod:
                out.append((t, node.lineno, where))
    return out


GRAPH = {m: imports_of(m, p) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if layer_of(m) is None]
    assert not missing, f"place these modules in the layer table (here and docs/design.md): {missing}"
    # the package's own modules are placed by name, not by falling under "softfloat"
    unplaced = [m for m in MODULES if m != "softfloat" and layer_of(m)[1] == "package"]
    assert not unplaced, f"place these modules in the layer table: {unplaced}"


def _design_table() -> list:
    """(layer, [entries]) of docs/design.md's layer table, paths made dotted;
    a parenthesised list after a package names files inside it, not entries."""
    import re
    rows = []
    for line in (ROOT / "docs" / "design.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("layer", "---") or not cells[1].startswith("`"):
            continue
        mods = re.sub(r"\([^()]*\)", "", cells[1])
        entries = []
        for path in re.findall(r"`([^`]+)`", mods):
            path = path.rstrip("/")
            path = path[:-len("/__init__.py")] if path.endswith("/__init__.py") else path
            entries.append(path.removesuffix(".py").replace("/", "."))
        rows.append((cells[0], entries))
    return rows


def test_the_design_documents_this_table():
    assert [(n, sorted(e)) for n, e in _design_table()] == \
        [(n, sorted(e)) for n, e in LAYERS]


def test_no_module_imports_upward():
    bad = []
    for mod, imps in GRAPH.items():
        lm = layer_of(mod)
        for t, line, where in imps:
            lt = layer_of(t)
            if lm is not None and lt is not None and lt[0] > lm[0]:
                bad.append(f"{MODULES[mod].relative_to(ROOT)}:{line} ({where}) {mod} "
                           f"[{lm[1]}] imports {t} [{lt[1]}]")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def _cycle():
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t, _, _ in GRAPH.get(m, ()):
            # a package's __init__ re-exporting its own submodules is not a cycle edge
            if m != t and t.startswith(m + "."):
                continue
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                c = visit(t)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(GRAPH):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def test_import_graph_has_no_cycle():
    c = _cycle()
    assert c is None, "import cycle: " + " -> ".join(c)


def test_the_checker_sees_both_kinds_of_import(tmp_path):
    # the checker itself: a function-level relative import and a top-level one
    # are both found, and an upward one is reported with its layer names
    p = tmp_path / "m.py"
    p.write_text("from .formats import Format\n\ndef f():\n    from .platforms import get_platform\n")
    got = imports_of("softfloat.specialize", p)
    assert ("softfloat.formats", 1, "top") in got
    assert ("softfloat.platforms", 4, "function") in got
    assert layer_of("softfloat.platforms")[0] > layer_of("softfloat.specialize")[0]


@pytest.mark.parametrize("doc", ["docs/design.md"])
def test_design_table_names_every_layer(doc):
    text = (ROOT / doc).read_text()
    section = text[text.index("## 1. Layers"):text.index("## 2.")]
    for _, entries in LAYERS:
        for e in entries:
            if e in ("softfloat", "nn", "validation"):
                continue
            shown = "`" + e.replace(".", "/") + ("/`" if (ROOT / e.replace(".", "/")).is_dir()
                                                 else ".py`")
            assert shown in section, f"{doc} section 1 should name {shown}"


def test_modules_stay_under_700_lines():
    # one job per module, kernels included: a module that grows past this is split
    # by job (docs/design.md, section 1)
    big = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 700}
    assert not big, f"split these modules by job: {big}"
