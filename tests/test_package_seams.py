"""Packages use each other through public names only.

A module whose name (or a package above it) starts with one underscore is
private to the package that holds it: ``softfloat._kernels.mx`` to
``softfloat``, ``softfloat.sweep_oracles._bits`` to ``softfloat.sweep_oracles``.
A name that starts with one underscore is private to the directory of the
module that defines it: sibling modules may share it, another package may not,
whether it is imported or read as an attribute of an imported module. Checked
over every module of softfloat, nn, validation and examples (tests and benchmarks may
reach inside: they compare fast paths with their slow twins)."""
from __future__ import annotations

import ast

from source_tree import ROOT, modules

TOPS = ("softfloat", "nn", "validation", "examples")


MODULES = modules(TOPS)


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _home(mod: str) -> str:
    """The package (directory) a module belongs to."""
    return mod if MODULES[mod].name == "__init__.py" else mod.rpartition(".")[0]


def _inside(mod: str, pkg: str) -> bool:
    return mod == pkg or mod.startswith(pkg + ".")


def _private_to(mod: str):
    """The package a private module is private to, or None for a public one."""
    parts = mod.split(".")
    for i, p in enumerate(parts):
        if _private(p):
            return ".".join(parts[:i])
    return None


def _imports(mod: str):
    """(line, module, name or None) for each import of the project's modules, and
    the local names bound to imported modules."""
    path = MODULES[mod]
    tree = ast.parse(path.read_text(), str(path))
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                t = ".".join(base + ([node.module] if node.module else []))
            else:
                t = node.module or ""
            if t.split(".")[0] not in TOPS:
                continue
            for a in node.names:
                if f"{t}.{a.name}" in MODULES:
                    found.append((node.lineno, f"{t}.{a.name}", None))
                    bound[a.asname or a.name] = f"{t}.{a.name}"
                else:
                    found.append((node.lineno, t, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in TOPS:
                    found.append((node.lineno, a.name, None))
                    if a.name in MODULES:
                        bound[a.asname or a.name.split(".")[0]] = \
                            a.name if a.asname else a.name.split(".")[0]
    return tree, found, bound


def _crossings() -> list:
    bad = []
    for mod, path in MODULES.items():
        rel = path.relative_to(ROOT) if ROOT in path.parents else path
        tree, found, bound = _imports(mod)
        home = _home(mod)

        def foreign(t):
            return t in MODULES and _home(t) != home and not (
                MODULES[t].name == "__init__.py" and _inside(mod, t))
        for line, t, name in found:
            scope = _private_to(t)
            if scope is not None and not _inside(mod, scope):
                bad.append(f"{rel}:{line} imports the private module {t}")
            if name and _private(name) and foreign(t):
                bad.append(f"{rel}:{line} imports the private name {t}.{name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in bound and _private(node.attr)
                    and foreign(bound[node.value.id])):
                bad.append(f"{rel}:{node.lineno} reads the private name "
                           f"{bound[node.value.id]}.{node.attr}")
    return list(dict.fromkeys(bad))


def test_no_private_module_or_name_crosses_a_package():
    bad = _crossings()
    assert not bad, "\n".join(bad)


def test_the_check_sees_each_kind_of_crossing(tmp_path, monkeypatch):
    # a module of nn that imports a private kernel module, a private name of
    # another package, and reads a private attribute of an imported module
    src = ("from softfloat._kernels import core\n"
           "from softfloat.sweep.backends import _x\n"
           "from softfloat.sweep import engine\n"
           "engine._y\n")
    p = tmp_path / "probe.py"
    p.write_text(src)
    monkeypatch.setitem(MODULES, "nn.probe_module", p)
    bad = [b for b in _crossings() if "probe.py" in b]
    assert len(bad) == 3 and "private module softfloat._kernels.core" in bad[0]
    assert "private name softfloat.sweep.backends._x" in bad[1]
    assert "reads the private name softfloat.sweep.engine._y" in bad[2]
    # siblings may share a private name; a package's own private module is its own
    p.write_text("from softfloat.arith import _x\nfrom softfloat._kernels import core\n")
    monkeypatch.setitem(MODULES, "softfloat.probe_module", p)
    monkeypatch.delitem(MODULES, "nn.probe_module")
    assert not [b for b in _crossings() if "probe.py" in b]


def test_the_shard_engine_is_public():
    from softfloat import sweep
    for name in ("run_shards", "check_run_args", "seal", "shard_path", "write_json",
                 "split_resumed", "Progress", "builtin_names"):
        assert name in sweep.__all__ and callable(getattr(sweep, name))
    from softfloat.testfloat import classify_mismatches
    assert callable(classify_mismatches)
